// The main window. Pages: the start page, the launch form, and the workspace: the op tree on
// the left; on the right the selected op's tensors, the statistics plots, the tensor preview
// and the config editor; the live session (state, Stop, the model's output) and problems
// below; load progress and dump state in the status bar.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QMainWindow>
#include <QPointer>

#include "analysis/dump_index.h"

#include "session/launch_session.h"
#include "session/live_probes.h"
#include "session/live_session.h"
#include "session/recent_sessions.h"

class QAction;
class QDockWidget;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTabWidget;

namespace probe::data {
class ConfigDocument;
class DumpCursor;
class DumpStore;
class OpSelection;
}  // namespace probe::data

namespace probe::widgets {

class ConfigEditor;
class LaunchForm;
class OpTensorsPanel;
class OpTreePanel;
class SessionPanel;
class StartPage;
class StatisticsPlot;
class TensorPreview;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum class View { Tree, Plot, Tensor, Config };
    enum class Page { Start, Launch, Workspace };

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a dump folder of either layout and follows it while it grows.
    void openDump(const QString& path);
    // Launches a model as `probe run` does, opens its dump as it appears and follows it; the
    // session before (a running model is stopped) is replaced. False when the spec is refused
    // before anything runs (the reason is in the session panel).
    bool launch(const session::LaunchSpec& spec);
    // Launches the bundled demo (from the data directory); false with the reason in `error`.
    bool launchDemo(QString* error = nullptr);
    // Attaches to a running probe; its dump opens once it said hello.
    void attach(const session::LiveProbeInfo& probe);
    session::LiveSession* liveSession() const;

    void showPage(Page page);
    Page page() const;
    // The launch form, filled with `spec`.
    void showLaunchForm(const session::LaunchSpec& spec = {});
    void showView(View view);
    // Selects an op of the shown process by id (atb "2_1", msprobe entry name); false if unknown.
    bool selectOp(const QString& id);
    bool selectProcess(const QString& key);
    void setRound(int round);  // -1: the latest
    // Where the installed data lives (<prefix>/share/probe-studio): the demo, and the configs
    // folder file dialogs start in.
    void setDataDirectory(const QString& dir);
    QString dataDirectory() const { return dataDirectory_; }
    // The probe command line tool launches run (by default `probe` beside this executable).
    void setProbeExecutable(const QString& path) { probeExecutable_ = path; }
    // Opens the current tensor (op, slot, round) in the preview; false when it has no file.
    bool previewCurrentTensor();
    // Previews a .bin file; when it belongs to the open dump, its op and round are selected and
    // the preview compares it with its statistic.csv row.
    void previewTensorFile(const QString& path);

    data::DumpStore* store() const { return store_; }
    data::OpSelection* selection() const { return selection_; }
    data::ConfigDocument* configDocument() const { return config_; }
    data::DumpCursor* cursor() const { return cursor_; }
    OpTreePanel* treePanel() const { return tree_; }
    OpTensorsPanel* tensorsPanel() const { return tensors_; }
    StatisticsPlot* statisticsPlot() const { return plot_; }
    TensorPreview* tensorPreview() const { return preview_; }
    ConfigEditor* configEditor() const { return configEditor_; }
    StartPage* startPage() const { return startPage_; }
    LaunchForm* launchForm() const { return launchForm_; }
    SessionPanel* sessionPanel() const { return sessionPanel_; }
    session::RecentSessions* recentSessions() const { return recent_; }
    QString statusText() const;
    // "⚠ First NaN: round 6, layers.2/input_layernorm/mul (3_0_6)" once the dump has a NaN.
    QString firstNanText() const;
    QStringList problems() const { return problems_; }

signals:
    // Everything the folder held when it was opened is read and shown (or opening failed).
    void sessionLoaded(bool ok);
    // A launch or attach began (the new session is liveSession()).
    void liveSessionStarted();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void chooseDump();
    void chooseTensorFile();
    void chooseProbeToAttach();
    void launchDemoInteractively();
    void takeUpRecent(const session::RecentSession& recent);
    void editConfig();
    void loadConfig();
    void saveConfig();
    // Ends the current live session (a launched model is stopped); asks first when `ask` and
    // a model is running. False when the user said no.
    bool endLiveSession(bool ask);
    void startLiveSession(session::LiveSession* session);
    void openDumpFolder(const QString& path);
    void addProblems(const QStringList& problems);
    void updateStatus();
    void updateSessionStatus();
    void updateRounds();
    void lookForFirstNan(const analysis::IndexChange& change);
    void showFirstNan(uint32_t row);
    // Selects the first NaN when the window chose what is shown (not the user) and the dump
    // is read whole: opened complete, or followed until it completed.
    void goToFirstNanUnlessMovedAway();

    data::DumpStore* store_;
    data::OpSelection* selection_;
    data::ConfigDocument* config_;
    data::DumpCursor* cursor_;
    session::RecentSessions* recent_;
    QPointer<session::LiveSession> session_;
    QStackedWidget* pages_;
    StartPage* startPage_;
    LaunchForm* launchForm_;
    QWidget* workspace_;
    OpTreePanel* tree_;
    QTabWidget* tabs_;
    OpTensorsPanel* tensors_;
    StatisticsPlot* plot_;
    TensorPreview* preview_;
    ConfigEditor* configEditor_;
    SessionPanel* sessionPanel_;
    QDockWidget* sessionDock_;
    QLabel* roundLabel_;
    QSpinBox* round_;
    QList<QAction*> workspaceActions_;
    QLabel* state_;
    QLabel* sessionState_;
    QProgressBar* progress_;
    QPushButton* problemsButton_;
    QPushButton* firstNanButton_;
    uint32_t firstNanRow_;
    // The op the window chose by itself when a growing dump got its first ops: still shown
    // when the dump completes, the window moves on to the first NaN, as for a dump opened whole.
    uint32_t autoSelectedOp_;
    QDockWidget* problemsDock_;
    QPlainTextEdit* problemsText_;
    QStringList problems_;
    // The folder openDump() was asked for: a recent session once it opened.
    QString openingRecent_;
    QString dataDirectory_;
    QString probeExecutable_;
};

}  // namespace probe::widgets
