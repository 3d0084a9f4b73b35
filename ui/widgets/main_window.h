// The main window: the op tree on the left; on the right the selected op's tensors, the
// statistics plots and the tensor preview; load progress, dump state and problems below.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QMainWindow>

class QDockWidget;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace probe::data {
class DumpCursor;
class DumpStore;
class OpSelection;
}  // namespace probe::data

namespace probe::widgets {

class OpTensorsPanel;
class OpTreePanel;
class StatisticsPlot;
class TensorPreview;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum class View { Tree, Plot, Tensor };

    explicit MainWindow(QWidget* parent = nullptr);

    // Opens a dump folder of either layout and follows it while it grows.
    void openDump(const QString& path);
    void showView(View view);
    // Selects an op of the shown process by id (atb "2_1", msprobe entry name); false if unknown.
    bool selectOp(const QString& id);
    bool selectProcess(const QString& key);
    void setRound(int round);  // -1: the latest
    // Where the installed data lives (<prefix>/share/probe-studio): config dialogs start in its
    // configs folder.
    void setDataDirectory(const QString& dir) { dataDirectory_ = dir; }
    // Opens the current tensor (op, slot, round) in the preview; false when it has no file.
    bool previewCurrentTensor();

    data::DumpStore* store() const { return store_; }
    data::OpSelection* selection() const { return selection_; }
    data::DumpCursor* cursor() const { return cursor_; }
    OpTreePanel* treePanel() const { return tree_; }
    OpTensorsPanel* tensorsPanel() const { return tensors_; }
    StatisticsPlot* statisticsPlot() const { return plot_; }
    TensorPreview* tensorPreview() const { return preview_; }
    QString statusText() const;
    QStringList problems() const { return problems_; }

signals:
    // Everything the folder held when it was opened is read and shown (or opening failed).
    void sessionLoaded(bool ok);

private:
    void chooseDump();
    void chooseTensorFile();
    void loadConfig();
    void saveConfig();
    void addProblems(const QStringList& problems);
    void updateStatus();
    void updateRounds();

    data::DumpStore* store_;
    data::OpSelection* selection_;
    data::DumpCursor* cursor_;
    OpTreePanel* tree_;
    QTabWidget* tabs_;
    OpTensorsPanel* tensors_;
    StatisticsPlot* plot_;
    TensorPreview* preview_;
    QSpinBox* round_;
    QLabel* state_;
    QProgressBar* progress_;
    QPushButton* problemsButton_;
    QDockWidget* problemsDock_;
    QPlainTextEdit* problemsText_;
    QStringList problems_;
    QString dataDirectory_;
};

}  // namespace probe::widgets
