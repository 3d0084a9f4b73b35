// SPDX-License-Identifier: GPL-3.0-or-later
#include "main_window.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTimer>
#include <QToolBar>
#include <QUrl>
#include <QVBoxLayout>

#include "analysis/dump_summary.h"
#include "attach_dialog.h"
#include "compare_panel.h"
#include "config_document.h"
#include "config_editor.h"
#include "context/app_context.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "elided_label.h"
#include "gradients_panel.h"
#include "launch_form.h"
#include "op_selection.h"
#include "op_tensors_panel.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "page_style.h"
#include "round_spin_box.h"
#include "session/live_session.h"
#include "session_panel.h"
#include "start_page.h"
#include "statistics_plot.h"
#include "tensor_preview.h"

namespace probe::widgets {

using analysis::kNone;
using context::AppContext;

namespace {

// How long a passing message (an export written) stays in the status bar.
constexpr int kStatusMessageMs = 15000;

}  // namespace

MainWindow::MainWindow(AppContext* context, QWidget* parent)
    : QMainWindow(parent), context_(context) {
    setMinimumSize(kMinimumWidth, kMinimumHeight);
    auto* store = context_->store();
    auto* cursor = context_->cursor();
    tree_ = new OpTreePanel(store, context_->selection(), context_->configDocument(), cursor, this);
    connect(tree_, &OpTreePanel::opPicked, context_, &AppContext::keepTheUsersChoice);
    tensors_ = new OpTensorsPanel(store, cursor, this);
    plot_ = new StatisticsPlot(store, cursor, this);
    preview_ = new TensorPreview(store, this);
    configEditor_ = new ConfigEditor(context_->configDocument(), this);
    tabs_ = new QTabWidget(this);
    tabs_->addTab(tensors_, tr("Tensors"));
    tabs_->addTab(plot_, tr("Statistics"));
    tabs_->addTab(preview_, tr("Tensor preview"));
    tabs_->addTab(configEditor_, tr("Config"));
    compare_ = new ComparePanel(context_->comparison(), store, cursor, this);
    tabs_->addTab(compare_, tr("Comparison"));

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(tree_);
    splitter->addWidget(tabs_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    workspace_ = splitter;

    // Pages: what to do first, the launch form, the open dump.
    startPage_ = new StartPage(context_->recentSessions(), this);
    launchForm_ = new LaunchForm(this);
    pages_ = new QStackedWidget(this);
    pages_->addWidget(scrollable(startPage_));
    pages_->addWidget(scrollable(launchForm_));
    pages_->addWidget(workspace_);
    setCentralWidget(pages_);
    connect(startPage_, &StartPage::launchDemoRequested, this,
            &MainWindow::launchDemoInteractively);
    connect(startPage_, &StartPage::launchRequested, this, [this] { showLaunchForm(); });
    connect(startPage_, &StartPage::attachRequested, this, &MainWindow::chooseProbeToAttach);
    connect(startPage_, &StartPage::openRequested, this, &MainWindow::chooseDump);
    connect(startPage_, &StartPage::editConfigRequested, this, &MainWindow::editConfig);
    connect(startPage_, &StartPage::recentActivated, this, &MainWindow::takeUpRecent);
    connect(launchForm_, &LaunchForm::launchRequested, this,
            [this](const session::LaunchSpec& spec) {
                if (mayReplaceSession()) context_->launch(spec);
            });
    connect(launchForm_, &LaunchForm::cancelled, this, [this] {
        showPage(context_->sessionKind() == AppContext::SessionKind::None ? Page::Start
                                                                          : Page::Workspace);
    });

    // Menus.
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("Start &page"), this, [this] { showPage(Page::Start); });
    file->addAction(tr("&Launch a model…"), QKeySequence(Qt::CTRL | Qt::Key_L), this,
                    [this] { showLaunchForm(); });
    file->addAction(tr("Launch the &demo"), this, &MainWindow::launchDemoInteractively);
    file->addAction(tr("&Attach to a running probe…"), this, &MainWindow::chooseProbeToAttach);
    file->addAction(tr("&Open dump folder…"), QKeySequence::Open, this, &MainWindow::chooseDump);
    file->addAction(tr("Open &tensor file…"), this, &MainWindow::chooseTensorFile);
    QAction* compareAt = file->addSeparator();  // File › Compare… goes above it
    file->addAction(tr("&Edit config"), QKeySequence(Qt::CTRL | Qt::Key_E), this,
                    &MainWindow::editConfig);
    file->addAction(tr("Load &config…"), this, &MainWindow::loadConfig);
    file->addAction(tr("&Save config as…"), QKeySequence::Save, this, &MainWindow::saveConfig);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    auto* view = menuBar()->addMenu(tr("&View"));
    auto* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Documentation"), QKeySequence::HelpContents, this,
                    &MainWindow::showDocumentation);
    help->addAction(tr("&About Probe Studio"), this, [this] {
        QMessageBox::about(
            this, tr("About Probe Studio"),
            tr("<b>Probe Studio %1</b><p>Finds where a neural network's numbers go wrong: dumps "
               "every op's statistics and tensors in msprobe's formats, follows a model live and "
               "compares two runs.</p><p>Licence: GPL-3.0-or-later. Built with Qt %2, QCustomPlot "
               "and nlohmann/json.</p>")
                .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion())));
    });
    // Asked for from the start page or the launch form too: the workspace is shown with it
    // (they did nothing there).
    view->addAction(tr("&Tensors of the op"), QKeySequence(Qt::CTRL | Qt::Key_1), this,
                    [this] { showWorkspaceView(View::Tree); });
    view->addAction(tr("&Statistics"), QKeySequence(Qt::CTRL | Qt::Key_2), this,
                    [this] { showWorkspaceView(View::Plot); });
    view->addAction(tr("Tensor &preview"), QKeySequence(Qt::CTRL | Qt::Key_3), this,
                    [this] { showWorkspaceView(View::Tensor); });
    view->addAction(tr("&Config"), QKeySequence(Qt::CTRL | Qt::Key_4), this,
                    &MainWindow::editConfig);
    view->addAction(tr("Co&mparison"), QKeySequence(Qt::CTRL | Qt::Key_5), this,
                    [this] { showWorkspaceView(View::Compare); });
    view->addSeparator();
    // Ctrl+F went to the tree's type-ahead, which jumped to an op by its first letters.
    view->addAction(tr("&Find op"), QKeySequence::Find, this, [this] {
        showPage(Page::Workspace);
        tree_->focusSearch();
    });

    // Toolbar: open, and the round everything looks at.
    auto* toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("main toolbar"));
    toolbar->setMovable(false);
    toolbar->addAction(tr("Start"), this, [this] { showPage(Page::Start); });
    toolbar->addAction(tr("Launch…"), this, [this] { showLaunchForm(); });
    toolbar->addAction(tr("Attach…"), this, &MainWindow::chooseProbeToAttach);
    toolbar->addAction(tr("Open…"), this, &MainWindow::chooseDump);
    toolbar->addAction(tr("Config"), this, &MainWindow::editConfig);
    workspaceActions_ << toolbar->addSeparator();
    roundLabel_ = new QLabel(toolbar);
    roundLabel_->setObjectName(QStringLiteral("roundLabel"));
    workspaceActions_ << toolbar->addWidget(roundLabel_);
    round_ = new RoundSpinBox(toolbar);
    workspaceActions_ << toolbar->addWidget(round_);
    connect(round_, &QSpinBox::valueChanged, this, [this](int v) {
        context_->keepTheUsersChoice();  // (the cursor's own changes come blocked)
        context_->cursor()->setRound(v);
    });
    connect(cursor, &data::DumpCursor::roundChanged, this, [this](int32_t round) {
        const QSignalBlocker blocker(round_);
        // The cursor may reach a round before this window heard of it (whoever listens to the
        // dump first): the box must not clamp it to the rounds it knew.
        round_->setMaximum(std::max(round_->maximum(), static_cast<int>(round)));
        round_->setValue(round);
    });
    updateRounds();  // the box's name beside it before a dump is open (it was a bare "latest")

    // Status bar: the live session's state, the dump's, progress, problems.
    state_ = new ElidedLabel(this);
    sessionState_ = new QLabel(this);
    sessionState_->setObjectName(QStringLiteral("sessionState"));
    sessionState_->setVisible(false);
    progress_ = new QProgressBar(this);
    progress_->setMaximumWidth(220);
    progress_->setVisible(false);
    problemsButton_ = new QPushButton(this);
    problemsButton_->setFlat(true);
    problemsButton_->setVisible(false);
    firstNanButton_ = new ElidedButton(this);
    firstNanButton_->setVisible(false);
    firstNanButton_->setStyleSheet(QStringLiteral("color: #c81e1e; font-weight: bold"));
    firstNanButton_->setExplanation(
        tr("Where the numbers first went wrong, in execution order: select that op and round"));
    connect(firstNanButton_, &QPushButton::clicked, this, [this] {
        context_->goToFirstNan();
        revealCursorOpInTree();
    });
    // A passing message's tooltip (its whole text) goes with it.
    connect(statusBar(), &QStatusBar::messageChanged, this, [this](const QString& message) {
        if (message.isEmpty()) statusBar()->setToolTip(QString());
    });
    // Its buttons coming and going move where a passing message ends (refitPassingMessage).
    statusBar()->installEventFilter(this);
    statusBar()->addWidget(sessionState_);
    statusBar()->addWidget(state_, 1);
    statusBar()->addPermanentWidget(firstNanButton_);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(problemsButton_);
    problemsText_ = new QPlainTextEdit(this);
    problemsText_->setReadOnly(true);
    problemsText_->setLineWrapMode(QPlainTextEdit::NoWrap);
    problemsDock_ = new QDockWidget(tr("Problems"), this);
    problemsDock_->setObjectName(QStringLiteral("problems"));
    problemsDock_->setWidget(problemsText_);
    addDockWidget(Qt::BottomDockWidgetArea, problemsDock_);
    problemsDock_->hide();
    sessionPanel_ = new SessionPanel(this);
    sessionDock_ = new QDockWidget(tr("Session"), this);
    sessionDock_->setObjectName(QStringLiteral("session"));
    sessionDock_->setWidget(sessionPanel_);
    addDockWidget(Qt::BottomDockWidgetArea, sessionDock_);
    tabifyDockWidget(sessionDock_, problemsDock_);
    sessionDock_->hide();
    view->addSeparator();
    view->addAction(sessionDock_->toggleViewAction());
    view->addAction(problemsDock_->toggleViewAction());
    connect(problemsButton_, &QPushButton::clicked, this,
            [this] { problemsDock_->setVisible(!problemsDock_->isVisible()); });

    // What the context says.
    connect(context_, &AppContext::sessionReplaced, this, &MainWindow::onSessionReplaced);
    // Said in the status bar, the session panel being the new session's at once; until the new
    // session's dump opens (it hid that dump's state line for its 15 s; found by a user walk).
    connect(context_, &AppContext::probeLetGo, this, [this](const QString& what) {
        showPassingMessage(
            tr("Let go of %1: it runs on, no longer followed (Attach… follows it again).")
                .arg(what),
            kStatusMessageMs);
        passingAboutLastSession_ = true;
    });
    connect(context_, &AppContext::problemsAdded, this, &MainWindow::onProblemsAdded);
    connect(context_, &AppContext::problemsCleared, this, &MainWindow::onProblemsCleared);
    connect(context_, &AppContext::firstNanChanged, this, &MainWindow::onFirstNanChanged);
    connect(context_, &AppContext::notice, state_, &ElidedLabel::setFullText);
    // A problem may change what the line says (the folder deleted while shown).
    connect(context_, &AppContext::problemsAdded, this, &MainWindow::updateStatus);
    connect(context_, &AppContext::dataDirectoryChanged, this, &MainWindow::onDataDirectoryChanged);
    // The dump shown.
    connect(store, &data::DumpStore::opened, this, [this] {
        // A config written for the next run goes beside this one's dump by default: the folder
        // that holds atb_dump_data, or an msprobe dump's own.
        const QFileInfo root(context_->store()->root());
        configEditor_->setSaveDirectory(root.fileName() == QLatin1String("atb_dump_data")
                                            ? root.absolutePath()
                                            : root.absoluteFilePath());
        updateTitle();
        updateRounds();
        updateStatus();
        if (passingAboutLastSession_ && passingMessageUp()) statusBar()->clearMessage();
        passingAboutLastSession_ = false;
    });
    connect(store, &data::DumpStore::loadProgress, this, [this](qint64 done, qint64 total) {
        const bool loading = !context_->store()->initialLoadDone() && total > 0;
        progress_->setVisible(loading);
        if (loading) {
            // Bytes can exceed int: show per mille.
            progress_->setMaximum(1000);
            progress_->setValue(static_cast<int>(done * 1000 / std::max<qint64>(total, 1)));
            progress_->setFormat(tr("reading %p%"));
        }
        updateStatus();
    });
    connect(store, &data::DumpStore::changed, this, [this](const analysis::IndexChange& change) {
        if (change.newRounds) updateRounds();
        updateStatus();  // the rows, and statistics computed from tensor files
    });
    connect(store, &data::DumpStore::dumpStateChanged, this, &MainWindow::updateStatus);
    connect(store, &data::DumpStore::wasReset, this, [this] {
        progress_->setVisible(false);
        updateRounds();
    });
    connect(store, &data::DumpStore::initialLoadFinished, this, [this] {
        progress_->setVisible(false);
        updateStatus();
    });
    connect(tensors_, &OpTensorsPanel::previewRequested, this, [this](uint32_t row) {
        preview_->openRow(row);
        showView(View::Tensor);
    });
    // A point picked on a plot, a row in the table: the user's choice (keepTheUsersChoice).
    connect(plot_, &StatisticsPlot::rowActivated, context_, &AppContext::pickRow);
    connect(tensors_, &OpTensorsPanel::rowPicked, context_, &AppContext::keepTheUsersChoice);
    // While the preview is shown it follows the selection: click a point, see its tensor.
    auto followInPreview = [this] {
        if (tabs_->currentWidget() != preview_) return;
        const uint32_t row = context_->cursor()->row();
        if (row != kNone && row != preview_->row() &&
            context_->store()->index().row(row).hasTensorFile)
            preview_->openRow(row);
    };
    connect(cursor, &data::DumpCursor::changed, this, followInPreview);
    connect(tabs_, &QTabWidget::currentChanged, this, followInPreview);
    connect(preview_, &TensorPreview::exported, this, [this](const QString& path) {
        showPassingMessage(tr("Exported the tensor to %1").arg(path), kStatusMessageMs);
    });
    connect(tree_, &OpTreePanel::editConfigRequested, this, &MainWindow::editConfig);
    connect(tree_, &OpTreePanel::applyConfigRequested, this, [this] {
        if (!configEditor_->apply()) showView(View::Config);  // the editor says why
    });
    // Applied from under the tree, what became of it is said where it is seen (written to a
    // file no probe watches any more, after the run ended, said nothing).
    connect(configEditor_, &ConfigEditor::statusChanged, this, [this](const QString& text) {
        if (!text.isEmpty() && !configEditor_->isVisible())
            showPassingMessage(
                tr("Config: %1")
                    .arg(QString(text).replace(QLatin1Char('\n'), QStringLiteral(" — "))),
                kStatusMessageMs);
    });

    setUpSuite();
    setUpComparison(file, compareAt, toolbar);
    resize(1500, 900);
    onDataDirectoryChanged();
    onSessionReplaced();
    if (context_->sessionKind() == AppContext::SessionKind::None) showPage(Page::Start);
}

MainWindow::~MainWindow() = default;

void MainWindow::onDataDirectoryChanged() {
    configEditor_->setConfigDirectory(context_->configsDirectory());
    launchForm_->setConfigDirectory(context_->configsDirectory());
    const QString demo = context_->demoScript();
    startPage_->setDemoAvailable(QFileInfo::exists(demo),
                                 tr("The demo is not installed (%1 is missing)").arg(demo));
}

void MainWindow::onSessionReplaced() {
    session::LiveSession* live = context_->liveSession();
    if (shownSession_) disconnect(shownSession_, nullptr, this, nullptr);
    shownSession_ = live;
    sessionPanel_->setSession(live);
    configEditor_->setSession(live);
    // A passing message about the last session (its comparison's verdict, an export) would be
    // read as one about this one.
    statusBar()->clearMessage();
    if (live) {
        connect(live, &session::LiveSession::stateChanged, this, &MainWindow::updateSessionStatus);
        connect(live, &session::LiveSession::helloReceived, this, &MainWindow::updateTitle);
        if (!sessionDock_->isVisible()) {
            sessionDock_->show();
            // The log is for glancing at: the tree and plots keep most of the height.
            resizeDocks({sessionDock_}, {std::max(150, height() / 5)}, Qt::Vertical);
        }
        sessionDock_->raise();
    }
    if (context_->sessionKind() != AppContext::SessionKind::None) showPage(Page::Workspace);
    updateTitle();
    updateSessionStatus();
    updateStatus();
}

void MainWindow::updateTitle() {
    const session::LiveSession* live = context_->liveSession();
    QString what;
    if (live)
        what = live->command();
    else if (context_->store()->isOpen())
        what = context_->store()->root();
    setWindowTitle(what.isEmpty() ? tr("Probe Studio") : tr("%1 — Probe Studio").arg(what));
}

void MainWindow::showPage(Page page) {
    pages_->setCurrentIndex(page == Page::Start ? 0 : page == Page::Launch ? 1 : 2);
    for (QAction* action : workspaceActions_)
        action->setVisible(page == Page::Workspace);  // the round is the workspace's
    if (page == Page::Start) startPage_->refresh();
}

MainWindow::Page MainWindow::page() const {
    const int i = pages_->currentIndex();
    return i == 0 ? Page::Start : i == 1 ? Page::Launch : Page::Workspace;
}

void MainWindow::showLaunchForm(const session::LaunchSpec& spec) {
    if (spec.program.isEmpty()) {
        // The last launch again, into a folder of its own (a second run into the same folder
        // would add its process beside the first), beside the last one's.
        session::LaunchSpec last = context_->lastLaunch();
        if (!last.outputDirectory.isEmpty())
            launchForm_->suggestOutputsIn(QFileInfo(last.outputDirectory).absolutePath());
        last.outputDirectory.clear();
        launchForm_->setSpec(last);
    } else {
        launchForm_->setSpec(spec);
    }
    showPage(Page::Launch);
    launchForm_->programEdit()->setFocus();
}

bool MainWindow::mayStopTheModel(const QString& title, const QString& question,
                                 const QString& stopText, const QString& keepText) {
    if (!context_->modelRunning()) return true;
    // Buttons that say what they do ("No" read as "open it, and do not stop the model", and
    // cancelled the opening without a word).
    QMessageBox box(QMessageBox::Question, title, question.arg(context_->liveSession()->command()),
                    QMessageBox::NoButton, this);
    QPushButton* stop = box.addButton(stopText, QMessageBox::AcceptRole);
    QPushButton* keep = box.addButton(keepText, QMessageBox::RejectRole);
    box.setDefaultButton(stop);
    box.setEscapeButton(keep);
    // The model may end while the question is asked: then there is nothing left to stop, and
    // the question goes (it stayed up, asking to stop a model that had finished).
    bool ended = false;
    const auto endedConnection = connect(
        context_->liveSession(), &session::LiveSession::stateChanged, &box, [this, &box, &ended] {
            if (context_->modelRunning()) return;
            ended = true;
            box.done(0);
        });
    box.exec();
    disconnect(endedConnection);
    return ended || box.clickedButton() == stop;
}

bool MainWindow::mayReplaceSession() {
    return mayStopTheModel(tr("A model is running"),
                           tr("%1 is still running. The window shows one session at a time: stop "
                              "the model to go on? What it dumped so far stays on disk."),
                           tr("Stop it and go on"), tr("Keep it running, go back"));
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    // Laid out anew (a button shown or hidden, a new width): the message is fitted once that is
    // done.
    if (watched == statusBar() &&
        (event->type() == QEvent::LayoutRequest || event->type() == QEvent::Resize))
        QTimer::singleShot(0, this, &MainWindow::refitPassingMessage);
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::resizeEvent(QResizeEvent* event) {
    QMainWindow::resizeEvent(event);
    // The status bar's notices take at most a third of it each: the rest is the
    // dump's state line and the passing messages' (a comparison's verdict).
    const int most = std::max(160, width() / 3);
    firstNanButton_->setMaximumWidth(most);
    if (overflowButton_) overflowButton_->setMaximumWidth(most);
}

void MainWindow::revealCursorOpInTree() {
    if (context_->cursor()->op() != analysis::kNone) tree_->revealOp(context_->cursor()->op());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!mayStopTheModel(tr("Quit Probe Studio"), tr("%1 is still running. Stop it and quit?"),
                         tr("Stop it and quit"), tr("Keep it running, don't quit"))) {
        event->ignore();
        return;
    }
    event->accept();
}

void MainWindow::chooseProbeToAttach() {
    AttachDialog dialog(this);
    if (dialog.exec() != QDialog::Accepted) return;
    const session::LiveProbeInfo probe = dialog.selectedProbe();
    if (probe.pid <= 0) return;
    attachTo(probe);
}

void MainWindow::attachTo(const session::LiveProbeInfo& probe) {
    // The probe this window follows already: replacing the session would stop the model it
    // launched (the user was asked "Stop it?" about the very program they meant to follow).
    const session::LiveSession* live = context_->liveSession();
    if (live && !live->hasEnded() && live->probePid() == probe.pid) {
        showPassingMessage(
            live->origin() == session::LiveSession::Origin::Launched
                ? tr("Pid %1 is the model this window launched: it is followed already.")
                      .arg(probe.pid)
                : tr("Pid %1 is attached already.").arg(probe.pid),
            10000);
        return;
    }
    if (mayReplaceSession()) context_->attach(probe);
}

void MainWindow::launchDemoInteractively() {
    if (!mayReplaceSession()) return;
    QString error;
    if (!context_->launchDemo(&error)) {
        QMessageBox::warning(this, tr("The demo could not be launched"), error);
        return;
    }
    // Follow the overflow as it happens: the layer whose norm blows up.
    showView(View::Plot);
}

void MainWindow::takeUpRecent(const session::RecentSession& recent) {
    using Kind = session::RecentSession::Kind;
    if (recent.kind == Kind::Launch) {
        showLaunchForm(recent.launch);
        return;
    }
    if (recent.kind == Kind::Open) {
        openDumpAsked(recent.path);
        return;
    }
    if (recent.kind == Kind::Compare) {
        compareRuns(recent.reference, recent.path);
        return;
    }
    for (const auto& probe : session::liveProbes()) {
        if (probe.pid == recent.pid) {
            attachTo(probe);
            return;
        }
    }
    if (!mayReplaceSession()) return;
    if (QFileInfo(recent.path).isDir()) {
        context_->openDump(recent.path);
        state_->setFullText(
            tr("The probe of pid %1 is no longer running; its dump is opened.").arg(recent.pid));
    } else {
        QMessageBox::information(
            this, tr("Not running"),
            tr("The probe of pid %1 is no longer running, and its dump folder %2 is gone.")
                .arg(recent.pid)
                .arg(recent.path));
    }
}

void MainWindow::editConfig() {
    showWorkspaceView(View::Config);
}

void MainWindow::showWorkspaceView(View view) {
    showPage(Page::Workspace);
    showView(view);
}

void MainWindow::showView(View view) {
    ++viewsShown_;
    if (view == View::Gradients) {
        if (tabs_->indexOf(gradients_) < 0) tabs_->addTab(gradients_, tr("Gradients"));
        tabs_->setCurrentWidget(gradients_);
        return;
    }
    tabs_->setCurrentIndex(view == View::Tree     ? 0
                           : view == View::Plot   ? 1
                           : view == View::Tensor ? 2
                           : view == View::Config ? 3
                                                  : 4);
}

bool MainWindow::selectProcess(const QString& key) {
    return tree_->setProcessKey(key);
}

bool MainWindow::selectOp(const QString& id) {
    const auto& idx = context_->store()->index();
    const uint32_t shown = tree_->model()->process();
    const uint32_t process = shown == kNone ? 0 : shown;
    const std::string wanted = id.toStdString();
    // With a round chosen, the op the tree shows under that id there (one that ran under another
    // id in the round, or a second op of that own id) before the first op whose own id it is.
    const int32_t round = context_->cursor()->round();
    uint32_t op = round >= 0 ? idx.opShownIn(process, round, wanted) : kNone;
    if (op == kNone) op = idx.findOp(process, wanted);
    if (op == kNone) return false;
    context_->cursor()->setOp(op);
    return true;
}

void MainWindow::setRound(int round) {
    context_->cursor()->setRound(round);
}

bool MainWindow::previewCurrentTensor() {
    const uint32_t row = context_->cursor()->row();
    if (row == kNone || !context_->store()->index().row(row).hasTensorFile) return false;
    preview_->openRow(row);
    return true;
}

void MainWindow::previewTensorFile(const QString& path) {
    showView(View::Tensor);
    const auto* store = context_->store();
    const uint32_t row =
        store->isOpen() ? store->index().rowOfTensorFile(path.toStdString()) : kNone;
    if (row == kNone) {
        preview_->openFile(path);
        return;
    }
    context_->cursor()->setRow(row);
    preview_->openRow(row);
}

// As much of `text` as fits the status bar up to the leftmost button that stays beside it.
QString MainWindow::fitPassingMessage(const QString& text) const {
    int room = statusBar()->contentsRect().width();
    for (QWidget* w : statusBar()->findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
        if (w->isVisible() && w != sessionState_ && w != state_ && w->x() > 0)
            room = std::min(room, w->x());
    const int margins =
        2 * statusBar()->style()->pixelMetric(QStyle::PM_LayoutHorizontalSpacing) + 8;
    return statusBar()->fontMetrics().elidedText(text, Qt::ElideRight,
                                                 std::max(room - margins, 40));
}

QString MainWindow::showPassingMessage(const QString& text, int ms) {
    passingText_ = text;
    passingAboutLastSession_ = false;
    passingUntil_.setRemainingTime(ms);
    const QString shown = displayPassingMessage();
    // Fitted again once the bar is laid out: a button hidden by what the message says (the
    // comparison's progress bar, gone at its first answer) left a verdict four words long
    // beside 200 empty pixels.
    QTimer::singleShot(0, this, &MainWindow::refitPassingMessage);
    return shown;
}

QString MainWindow::replacePassingMessage(const QString& text) {
    if (!passingMessageUp()) return {};
    passingText_ = text;
    return displayPassingMessage();
}

bool MainWindow::passingMessageSays(const QString& text) const {
    return passingMessageUp() && passingText_ == text;
}

bool MainWindow::passingMessageUp() const {
    return !passingText_.isEmpty() && statusBar()->currentMessage() == passingShown_ &&
           !passingUntil_.hasExpired();
}

QString MainWindow::displayPassingMessage() {
    passingShown_ = fitPassingMessage(passingText_);
    statusBar()->setToolTip(passingShown_ == passingText_ ? QString() : passingText_);
    statusBar()->showMessage(passingShown_,
                             static_cast<int>(std::max<qint64>(passingUntil_.remainingTime(), 1)));
    return passingShown_;
}

void MainWindow::refitPassingMessage() {
    if (passingMessageUp() && fitPassingMessage(passingText_) != passingShown_)
        displayPassingMessage();
}

QString MainWindow::dumpDialogStart() const {
    const data::DumpStore* store = context_->store();
    if (!store->isOpen() || store->requestedPath().isEmpty()) return {};
    // The folder the user chose, not atb_dump_data inside it: its parent holds the other runs.
    const QDir parent = QFileInfo(store->requestedPath()).absoluteDir();
    return parent.exists() ? parent.absolutePath() : QString();
}

void MainWindow::chooseDump() {
    // It always started in the working directory, however far the dump shown was from it.
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Open a dump folder (atb_dump_data, its parent, or an msprobe dump_path)"),
        dumpDialogStart());
    if (!dir.isEmpty()) openDumpAsked(dir);
}

bool MainWindow::openDumpAsked(const QString& dir) {
    // Refused before anything else: the dump shown stays, a running model is not stopped.
    QString error;
    if (!context::AppContext::canOpenDump(dir, &error)) {
        QMessageBox::warning(this, tr("Cannot open"), error);
        return false;
    }
    return mayReplaceSession() && context_->openDump(dir);
}

namespace {
// The documentation's pictures at most half the page wide: the README's screenshots stand two
// to a table row, and at their own size (1400 pixels) each was cut at its cell's edge, a piece
// of a window inside the window (found by a GUI walk).
class DocumentationBrowser : public QTextBrowser {
public:
    using QTextBrowser::QTextBrowser;
    QVariant loadResource(int type, const QUrl& name) override {
        QVariant resource = QTextBrowser::loadResource(type, name);
        if (type != QTextDocument::ImageResource) return resource;
        QImage image = resource.typeId() == QMetaType::QImage
                           ? resource.value<QImage>()
                           : QImage::fromData(resource.toByteArray());
        const int most = std::max(kNarrowest, (viewport()->width() - kMargins) / 2);
        if (image.isNull() || image.width() <= most) return resource;
        return image.scaledToWidth(most, Qt::SmoothTransformation);
    }

protected:
    void doSetSource(const QUrl& name, QTextDocument::ResourceType type) override {
        QTextBrowser::doSetSource(name, type);
        wrapCodeBlocks();
    }

private:
    // Code blocks wrap at the page's edge as the text does (at a space, else anywhere): Markdown
    // makes their lines unbreakable, and a long command line made the whole page scroll sideways
    // (found by a GUI walk).
    void wrapCodeBlocks() {
        QTextCursor cursor(document());
        for (QTextBlock block = document()->begin(); block.isValid(); block = block.next()) {
            QTextBlockFormat format = block.blockFormat();
            if (!format.nonBreakableLines()) continue;
            format.setNonBreakableLines(false);
            cursor.setPosition(block.position());
            cursor.setBlockFormat(format);
        }
    }

    static constexpr int kNarrowest = 240, kMargins = 60;
};
}  // namespace

bool MainWindow::showDocumentation() {
    const QString readme =
        QDir(context_->dataDirectory()).absoluteFilePath(QStringLiteral("doc/README.md"));
    if (!QFileInfo(readme).isFile()) {
        QMessageBox::warning(this, tr("Documentation"),
                             tr("The documentation is not installed beside this Probe Studio (%1 "
                                "is missing).")
                                 .arg(readme));
        return false;
    }
    if (!documentation_) {
        // A window of its own, beside the main one: read while using the app.
        auto* window = new QDialog(this, Qt::Window);
        window->setWindowTitle(tr("Probe Studio documentation"));
        documentation_ = new DocumentationBrowser(window);
        documentation_->setOpenExternalLinks(true);  // web links go to the browser
        // A word longer than the page (a path, a command line) wraps rather than widening it.
        documentation_->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
        auto* back = new QPushButton(tr("Back"), window);
        auto* home = new QPushButton(tr("Contents"), window);
        back->setEnabled(false);
        connect(back, &QPushButton::clicked, documentation_, &QTextBrowser::backward);
        connect(home, &QPushButton::clicked, documentation_, &QTextBrowser::home);
        connect(documentation_, &QTextBrowser::backwardAvailable, back, &QWidget::setEnabled);
        auto* buttons = new QHBoxLayout;
        buttons->addWidget(back);
        buttons->addWidget(home);
        buttons->addStretch(1);
        auto* layout = new QVBoxLayout(window);
        layout->addLayout(buttons);
        layout->addWidget(documentation_, 1);
        window->resize(900, 800);
        window->ensurePolished();
        layout->activate();  // the page's width known before its pictures are sized
        // The README and docs/*.md are Markdown; their relative links and pictures resolve
        // against the file shown.
        documentation_->setSource(QUrl::fromLocalFile(readme), QTextDocument::MarkdownResource);
    }
    auto* window = documentation_->window();
    window->show();
    window->raise();
    window->activateWindow();
    return true;
}

void MainWindow::chooseTensorFile() {
    const QString path = TensorPreview::chooseTensorFile(this, context_->store()->root());
    if (path.isEmpty()) return;
    previewTensorFile(path);
}

void MainWindow::loadConfig() {
    editConfig();
    configEditor_->chooseAndLoad();
}

void MainWindow::saveConfig() {
    editConfig();
    configEditor_->chooseAndSave();
}

void MainWindow::onProblemsAdded(const QStringList& problems) {
    for (const auto& p : problems) problemsText_->appendPlainText(p);
    problemsButton_->setText(
        tr("⚠ %1").arg(countOf(context_->problems().size(), tr("problem"), tr("problems"))));
    problemsButton_->setVisible(true);
    problemsDock_->show();
    refreshFindingsOfWhatWasRead();
}

void MainWindow::onProblemsCleared() {
    problemsText_->clear();
    problemsButton_->setVisible(false);
    problemsDock_->hide();
    refreshFindingsOfWhatWasRead();
}

QString MainWindow::ofWhatWasRead() const {
    // A round that could not be read may hold an earlier one: the headline says what it rests on
    // (a first NaN in round 3 was said as surely with round 2 unread as with all of it read).
    return context_->problems().isEmpty() ? QString() : tr(" (of what could be read)");
}

void MainWindow::refreshFindingsOfWhatWasRead() {
    onFirstNanChanged(context_->firstNanRow());
    updateOverflowButton();
}

QString MainWindow::problemsText() const {
    return problemsText_->toPlainText();
}

QString MainWindow::statusText() const {
    return state_->fullText();
}

QString MainWindow::statusMessage() const {
    return statusBar()->currentMessage();
}

void MainWindow::updateSessionStatus() {
    const session::LiveSession* live = context_->liveSession();
    if (!live) {
        sessionState_->setVisible(false);
        return;
    }
    // Not over a passing message (the detach drew it over the last comparison's verdict): the
    // status bar hides its widgets while one shows, and shows again those not hidden by hand.
    if (statusBar()->currentMessage().isEmpty())
        sessionState_->setVisible(true);
    else
        sessionState_->setAttribute(Qt::WA_WState_ExplicitShowHide, false);
    sessionState_->setText(QStringLiteral("<span style='color:%1'>●</span> %2")
                               .arg(SessionPanel::stateColor(live->state()).name(),
                                    SessionPanel::describeState(*live)));
    sessionState_->setToolTip(live->stateDetail());
    const auto* store = context_->store();
    if (!store->isOpen() && store->requestedPath().isEmpty()) {
        if (live->state() == session::SessionState::FailedToStart ||
            live->state() == session::SessionState::Detached)
            state_->setFullText(live->stateDetail());
        else if (live->hasEnded())
            state_->setFullText(tr("The program ended (%1) before the probe dumped anything.")
                                    .arg(live->stateDetail()));
        else
            state_->setFullText(tr("Waiting for the probe to start dumping…"));
    }
}

void MainWindow::updateStatus() {
    const auto* store = context_->store();
    const auto& idx = store->index();
    if (!store->isOpen()) {
        if (context_->sessionKind() == AppContext::SessionKind::None)
            state_->setFullText(
                tr("Launch a model, attach to a probe or open a dump folder (File menu, or the "
                   "start page)."));
        return;
    }
    const QLocale locale;
    QString state = store->dumpState();
    if (!idx.statusError().empty())  // the Problems pane has the details
        state =
            state.isEmpty()
                ? tr("status file unreadable (%1)").arg(QString::fromStdString(idx.statusError()))
                : tr("%1 (the status file is unreadable now)").arg(state);
    else if (state.isEmpty() && !store->initialLoadDone() && idx.opCount() == 0)
        state = tr("status not read yet");  // the first poll of a big dump takes seconds
    else if (state.isEmpty())
        state = idx.layout() == analysis::DumpLayout::Msprobe
                    ? tr("no status file (msprobe layout)")
                    : tr("no status file");
    if (state == QLatin1String("running")) state = tr("running — following it as it grows");
    // Not "complete" over a folder that is gone: what was read stays, nothing more will come.
    if (!QFileInfo(store->root()).isDir())
        state = tr("the folder was deleted; what was read stays shown");
    if (const auto status = idx.status(); status && status->state != format::DumpState::Running) {
        for (const auto& process : status->processes)
            if (process.endedBy && process.endedBy->how == format::ProgramEnd::How::Signaled) {
                state +=
                    tr(", whole up to where %1 stopped the program")
                        .arg(QString::fromStdString(format::signalName(process.endedBy->code)));
                break;
            }
        // A launcher (torchrun) that failed or was killed, while its ranks' dumps are whole.
        const auto launcherEnd = analysis::launcherEndOf(*status);
        if (launcherEnd && !launcherEnd->normal())
            state += QStringLiteral(", ") +
                     QString::fromStdString(analysis::describeLauncherEnd(*launcherEnd));
    }
    // What matters first, the folder last: it is the window's title too, and the end of a line
    // too long for the status bar is what goes.
    QString text = tr("%1 · %2 ops · %3 rows")
                       .arg(state, locale.toString(static_cast<qulonglong>(idx.opCount())),
                            locale.toString(static_cast<qulonglong>(idx.rowCount())));
    if (idx.processCount() > 1) text += tr(" · %1 processes").arg(idx.processCount());
    if (!store->initialLoadDone()) text += tr(" · reading…");
    // A task tensor dump prints no statistics: they come from its tensor files.
    const qulonglong fromData = idx.rowsWithStatisticsFromData(),
                     awaiting = idx.rowsAwaitingStatistics();
    if (awaiting > 0)
        text += tr(" · statistics from the tensor files: %1 of %2")
                    .arg(locale.toString(fromData), locale.toString(fromData + awaiting));
    else if (fromData > 0)
        text += tr(" · statistics computed from the tensor files");
    text += tr(" · %1 layout · %2")
                .arg(QString::fromLatin1(analysis::layoutName(idx.layout())), store->root());
    state_->setFullText(text);
}

void MainWindow::onFirstNanChanged(uint32_t row) {
    const auto* store = context_->store();
    const auto& idx = store->index();
    // Not a row of the index shown (refreshFindingsOfWhatWasRead as a session is replaced).
    if (row != kNone && row >= idx.rowCount()) row = kNone;
    firstNanButton_->setVisible(row != kNone);
    if (row == kNone) return;
    const auto& record = idx.row(row);
    firstNanButton_->setFullText(
        tr("⚠ First NaN: %1 %2, %3")
            .arg(store->roundName())
            .arg(record.round)
            .arg(QString::fromStdString(idx.describeOp(idx.slot(record.slot).op, record.round))) +
        ofWhatWasRead());
}

QString MainWindow::firstNanText() const {
    return firstNanButton_->isHidden() ? QString() : firstNanButton_->fullText();
}

void MainWindow::updateRounds() {
    const auto* store = context_->store();
    const auto& idx = store->index();
    std::vector<int> rounds;  // of every process
    for (size_t p = 0; p < idx.processCount(); ++p) {
        const auto more = idx.rounds(static_cast<uint32_t>(p));
        rounds.insert(rounds.end(), more.begin(), more.end());
    }
    std::sort(rounds.begin(), rounds.end());
    rounds.erase(std::unique(rounds.begin(), rounds.end()), rounds.end());
    round_->setRounds(std::move(rounds));
    const QString name = store->roundName();
    roundLabel_->setText(QStringLiteral(" %1 ").arg(name.left(1).toUpper() + name.mid(1)));
    round_->setToolTip(store->layout() == analysis::DumpLayout::Msprobe
                           ? tr("The step the tables and the op profile show")
                           : tr("The round (execution count) the tables and the op profile show"));
}

}  // namespace probe::widgets
