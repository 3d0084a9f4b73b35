// The main window: a view over the application context (context/app_context.h), which holds
// the session, the dumps, the cursor, the selection and the config. Pages: the start page, the
// launch form, and the workspace: the op tree on the left; on the right the selected op's
// tensors, the statistics plots, the tensor preview and the config editor; the live session
// (state, Stop, the model's output) and problems below; load progress and dump state in the
// status bar. It asks the user (a running model to stop, files to open) and tells the context.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDeadlineTimer>
#include <QMainWindow>
#include <QPointer>

#include "session/launch_session.h"
#include "session/live_session.h"
#include "session/recent_sessions.h"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTabWidget;
class QTextBrowser;
class QToolBar;

namespace probe::context {
class AppContext;
}
namespace probe::data {
class OverflowBirths;
}

namespace probe::widgets {

class ComparePanel;
class ConfigEditor;
class ElidedButton;
class ElidedLabel;
class RoundSpinBox;
class GradientsPanel;
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
    enum class View { Tree, Plot, Tensor, Config, Compare, Gradients };
    enum class Page { Start, Launch, Workspace };

    // The smallest the window can be made: below it the op tree lost its rows and buttons read
    // "ear tick".
    static constexpr int kMinimumWidth = 880;
    static constexpr int kMinimumHeight = 560;

    // Shows `context`, which must outlive the window.
    explicit MainWindow(context::AppContext* context, QWidget* parent = nullptr);
    ~MainWindow() override;

    context::AppContext* context() const { return context_; }

    void showPage(Page page);
    Page page() const;
    // The launch form, filled with `spec`; without one, with the last launch (this session's,
    // else the most recent one) in a fresh output folder.
    void showLaunchForm(const session::LaunchSpec& spec = {});
    void showView(View view);
    // Selects an op of the shown process by id (atb "2_1", msprobe entry name); false if unknown.
    bool selectOp(const QString& id);
    bool selectProcess(const QString& key);
    void setRound(int round);  // -1: the latest
    // Opens the current tensor (op, slot, round) in the preview; false when it has no file.
    bool previewCurrentTensor();
    // Previews a .bin file; when it belongs to the open dump, its op and round are selected and
    // the preview compares it with its statistic.csv row.
    void previewTensorFile(const QString& path);

    OpTreePanel* treePanel() const { return tree_; }
    OpTensorsPanel* tensorsPanel() const { return tensors_; }
    StatisticsPlot* statisticsPlot() const { return plot_; }
    TensorPreview* tensorPreview() const { return preview_; }
    ConfigEditor* configEditor() const { return configEditor_; }
    ComparePanel* comparePanel() const { return compare_; }
    QAction* jumpToDivergenceAction() const { return jumpAction_; }
    // File › Compare: asks for the reference and the candidate (default: the dump shown).
    void chooseComparison();
    // Compares `candidate` ("": the dump shown) with `reference`, asking first when that replaces
    // a running model; what cannot be compared is said in a message box.
    void compareRuns(const QString& reference, const QString& candidate);
    // Shows `text` in the status bar for `ms` as QStatusBar::showMessage does, ending in "…" where
    // it does not fit beside the buttons (QStatusBar clips it mid-word), the whole text as the
    // bar's tooltip meanwhile. Returns the text as shown.
    QString showPassingMessage(const QString& text, int ms);
    // The passing message still shown (and only then) says `text` instead, for the time it has
    // left; what it shows, or an empty string when none is up.
    QString replacePassingMessage(const QString& text);
    // Whether the passing message up says `text` (whole, however it is fitted to the bar).
    bool passingMessageSays(const QString& text) const;
    // Opens the dump folder the user chose, once it is known to hold a dump (else says why,
    // changing nothing) and a running model may be stopped. False when it was not opened.
    bool openDumpAsked(const QString& dir);
    // Where File › Open's folder dialog starts: beside the dump shown (its sibling runs), else
    // the working directory ("").
    QString dumpDialogStart() const;
    StartPage* startPage() const { return startPage_; }
    LaunchForm* launchForm() const { return launchForm_; }
    SessionPanel* sessionPanel() const { return sessionPanel_; }
    GradientsPanel* gradientsPanel() const { return gradients_; }
    data::OverflowBirths* overflowBirths() const { return births_; }
    // Shows the gradient monitor's files below `dir` in the Gradients tab (added when needed).
    void showGradients(const QString& dir);
    QString statusText() const;
    // Follows `probe`, replacing the session (asking first when a launched model runs), unless
    // this window follows it already: then says so.
    void attachTo(const session::LiveProbeInfo& probe);
    // A message shown for a while in the status bar (an export written...), "" when none.
    QString statusMessage() const;
    // "⚠ First NaN: round 6, layers.2/input_layernorm/mul (3_0_6)" once the dump has a NaN.
    QString firstNanText() const;
    // Beside it, "⚠ Overflow born: round 2, layers.1/mul (1_3)" once `probe overflow`'s rule
    // finds where an Inf/NaN is born (inputs finite, an output not); a click selects that op.
    QString overflowText() const;
    // The Problems pane's text.
    QString problemsText() const;
    // Help › Documentation: the README and docs/ installed beside the application, in a window
    // of their own (made on first use). False, with a message box, when they are not there.
    bool showDocumentation();
    QTextBrowser* documentationBrowser() const { return documentation_; }

protected:
    void closeEvent(QCloseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void chooseDump();
    void chooseTensorFile();
    void chooseProbeToAttach();
    void launchDemoInteractively();
    void takeUpRecent(const session::RecentSession& recent);
    void editConfig();
    // The workspace page at `view`, from whichever page is shown.
    void showWorkspaceView(View view);
    void loadConfig();
    void saveConfig();
    // Asks whether to stop the running model (`question`'s %1: its command), `stopText` on the
    // button that does; true when it may be stopped, or there is none (any more: a model ending
    // meanwhile answers it).
    bool mayStopTheModel(const QString& title, const QString& question, const QString& stopText,
                         const QString& keepText);
    // Whether the session may be replaced: true unless a model runs and the user, asked, wants
    // it to go on.
    bool mayReplaceSession();
    void onSessionReplaced();
    void onDataDirectoryChanged();
    void onProblemsAdded(const QStringList& problems);
    void onProblemsCleared();
    // " (of what could be read)" while the session has problems, for its findings' headlines.
    QString ofWhatWasRead() const;
    void refreshFindingsOfWhatWasRead();
    // After a jump (the first NaN, the first divergence, where the overflow is born): the
    // cursor's op shown in the tree, also when the cursor was on it already (nothing changed for
    // the tree to follow) while a search hid it.
    void revealCursorOpInTree();
    QString fitPassingMessage(const QString& text) const;
    bool passingMessageUp() const;
    QString displayPassingMessage();  // passingText_, fitted, until passingUntil_
    void refitPassingMessage();
    void onFirstNanChanged(uint32_t row);
    void updateTitle();
    void updateStatus();
    void updateSessionStatus();
    void updateRounds();
    // The precision suite's parts (main_window_suite.cpp): overflow births, replay, gradients.
    void setUpSuite();
    void updateOverflowButton();
    void goToOverflowBirth();
    void findDumpGradients();
    // The comparison's menu entries (in `file`, before `at`), toolbar actions and status (in
    // compare_actions.cpp).
    void setUpComparison(QMenu* file, QAction* at, QToolBar* toolbar);

    context::AppContext* context_;
    QPointer<session::LiveSession> shownSession_;  // the live session the window listens to
    QStackedWidget* pages_;
    StartPage* startPage_;
    LaunchForm* launchForm_;
    QWidget* workspace_;
    OpTreePanel* tree_;
    QTabWidget* tabs_;
    QTextBrowser* documentation_ = nullptr;  // Help › Documentation, once shown
    int viewsShown_ = 0;  // showView() calls: a view shown later yields to one asked for since
    OpTensorsPanel* tensors_;
    StatisticsPlot* plot_;
    TensorPreview* preview_;
    ConfigEditor* configEditor_;
    ComparePanel* compare_;
    QAction* jumpAction_ = nullptr;
    QProgressBar* compareProgress_ = nullptr;
    QPushButton* cancelCompare_ = nullptr;
    SessionPanel* sessionPanel_;
    QDockWidget* sessionDock_;
    QLabel* roundLabel_;
    RoundSpinBox* round_;
    QList<QAction*> workspaceActions_;
    ElidedLabel* state_;  // the dump's state and counts
    // The passing message shown (showPassingMessage): whole, as shown, and until when; fitted
    // again as the bar's buttons change (refitPassingMessage).
    QString passingText_, passingShown_;
    QDeadlineTimer passingUntil_;
    // The passing message is about the session replaced (its probe let go): it gives way to the
    // new session's dump as soon as that opens, rather than hiding its state line.
    bool passingAboutLastSession_ = false;
    QLabel* sessionState_;
    QProgressBar* progress_;
    QPushButton* problemsButton_;
    ElidedButton* firstNanButton_;
    QDockWidget* problemsDock_;
    QPlainTextEdit* problemsText_;
    data::OverflowBirths* births_ = nullptr;
    ElidedButton* overflowButton_ = nullptr;
    GradientsPanel* gradients_ = nullptr;
};

}  // namespace probe::widgets
