// SPDX-License-Identifier: GPL-3.0-or-later
#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <memory>

#include "attach_dialog.h"
#include "config_document.h"
#include "config_editor.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "launch_form.h"
#include "op_selection.h"
#include "op_tensors_panel.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "session/live_session.h"
#include "session_panel.h"
#include "start_page.h"
#include "statistics_plot.h"
#include "tensor_preview.h"

namespace probe::widgets {

using analysis::kNone;

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), firstNanRow_(kNone), autoSelectedOp_(kNone) {
    store_ = new data::DumpStore(this);
    selection_ = new data::OpSelection(this);
    config_ = new data::ConfigDocument(this);
    config_->followSelection(selection_);  // ticking ops and the config editor edit one config
    cursor_ = new data::DumpCursor(store_, this);
    recent_ = new session::RecentSessions(this);

    tree_ = new OpTreePanel(store_, selection_, config_, cursor_, this);
    tensors_ = new OpTensorsPanel(store_, cursor_, this);
    plot_ = new StatisticsPlot(store_, cursor_, this);
    preview_ = new TensorPreview(store_, this);
    configEditor_ = new ConfigEditor(config_, this);
    tabs_ = new QTabWidget(this);
    tabs_->addTab(tensors_, tr("Tensors"));
    tabs_->addTab(plot_, tr("Statistics"));
    tabs_->addTab(preview_, tr("Tensor preview"));
    tabs_->addTab(configEditor_, tr("Config"));

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(tree_);
    splitter->addWidget(tabs_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    workspace_ = splitter;

    // Pages: what to do first, the launch form, the open dump.
    startPage_ = new StartPage(recent_, this);
    launchForm_ = new LaunchForm(this);
    pages_ = new QStackedWidget(this);
    pages_->addWidget(startPage_);
    pages_->addWidget(launchForm_);
    pages_->addWidget(workspace_);
    setCentralWidget(pages_);
    connect(startPage_, &StartPage::launchDemoRequested, this, &MainWindow::launchDemoInteractively);
    connect(startPage_, &StartPage::launchRequested, this, [this] { showLaunchForm(); });
    connect(startPage_, &StartPage::attachRequested, this, &MainWindow::chooseProbeToAttach);
    connect(startPage_, &StartPage::openRequested, this, &MainWindow::chooseDump);
    connect(startPage_, &StartPage::editConfigRequested, this, &MainWindow::editConfig);
    connect(startPage_, &StartPage::recentActivated, this, &MainWindow::takeUpRecent);
    connect(launchForm_, &LaunchForm::launchRequested, this, [this](const session::LaunchSpec& spec) {
        if (endLiveSession(true)) launch(spec);
    });
    connect(launchForm_, &LaunchForm::cancelled, this, [this] {
        showPage(store_->requestedPath().isEmpty() && !session_ ? Page::Start : Page::Workspace);
    });

    // Menus.
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("Start &page"), this, [this] { showPage(Page::Start); });
    file->addAction(tr("&Launch a model…"), QKeySequence(Qt::CTRL | Qt::Key_L), this, [this] { showLaunchForm(); });
    file->addAction(tr("Launch the &demo"), this, &MainWindow::launchDemoInteractively);
    file->addAction(tr("&Attach to a running probe…"), this, &MainWindow::chooseProbeToAttach);
    file->addAction(tr("&Open dump folder…"), QKeySequence::Open, this, &MainWindow::chooseDump);
    file->addAction(tr("Open &tensor file…"), this, &MainWindow::chooseTensorFile);
    file->addSeparator();
    file->addAction(tr("&Edit config"), QKeySequence(Qt::CTRL | Qt::Key_E), this, &MainWindow::editConfig);
    file->addAction(tr("Load &config…"), this, &MainWindow::loadConfig);
    file->addAction(tr("&Save config as…"), QKeySequence::Save, this, &MainWindow::saveConfig);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    auto* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Tensors of the op"), QKeySequence(Qt::CTRL | Qt::Key_1), this, [this] { showView(View::Tree); });
    view->addAction(tr("&Statistics"), QKeySequence(Qt::CTRL | Qt::Key_2), this, [this] { showView(View::Plot); });
    view->addAction(tr("Tensor &preview"), QKeySequence(Qt::CTRL | Qt::Key_3), this, [this] { showView(View::Tensor); });
    view->addAction(tr("&Config"), QKeySequence(Qt::CTRL | Qt::Key_4), this, [this] { showView(View::Config); });

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
    workspaceActions_ << toolbar->addWidget(roundLabel_);
    round_ = new QSpinBox(toolbar);
    round_->setMinimum(-1);
    round_->setMaximum(-1);
    round_->setSpecialValueText(tr("latest"));
    workspaceActions_ << toolbar->addWidget(round_);
    connect(round_, &QSpinBox::valueChanged, this, [this](int v) { cursor_->setRound(v); });
    connect(cursor_, &data::DumpCursor::roundChanged, this, [this](int32_t round) {
        const QSignalBlocker blocker(round_);
        round_->setValue(round);
    });

    // Status bar: the live session's state, the dump's, progress, problems.
    state_ = new QLabel(this);
    state_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // long text must not widen the window
    sessionState_ = new QLabel(this);
    sessionState_->setVisible(false);
    progress_ = new QProgressBar(this);
    progress_->setMaximumWidth(220);
    progress_->setVisible(false);
    problemsButton_ = new QPushButton(this);
    problemsButton_->setFlat(true);
    problemsButton_->setVisible(false);
    firstNanButton_ = new QPushButton(this);
    firstNanButton_->setFlat(true);
    firstNanButton_->setVisible(false);
    firstNanButton_->setStyleSheet(QStringLiteral("color: #c81e1e; font-weight: bold"));
    firstNanButton_->setToolTip(tr("Where the numbers first went wrong, in execution order: select that op and round"));
    connect(firstNanButton_, &QPushButton::clicked, this, [this] {
        if (firstNanRow_ != kNone) cursor_->setRow(firstNanRow_);
    });
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
    connect(problemsButton_, &QPushButton::clicked, this, [this] { problemsDock_->setVisible(!problemsDock_->isVisible()); });

    // Wiring.
    connect(store_, &data::DumpStore::opened, this, [this](const QString& root) {
        setWindowTitle(tr("%1 — Probe Studio").arg(root));
        if (!openingRecent_.isEmpty()) {
            session::RecentSession recent;
            recent.kind = session::RecentSession::Kind::Open;
            recent.path = openingRecent_;
            recent_->add(recent);
            openingRecent_.clear();
        }
        updateRounds();
        updateStatus();
    });
    connect(store_, &data::DumpStore::openFailed, this, [this](const QString& message) {
        openingRecent_.clear();
        addProblems({message});
        state_->setText(tr("Could not open: %1").arg(message));
        emit sessionLoaded(false);
    });
    connect(store_, &data::DumpStore::loadProgress, this, [this](qint64 done, qint64 total) {
        const bool loading = !store_->initialLoadDone() && total > 0;
        progress_->setVisible(loading);
        if (loading) {
            // Bytes can exceed int: show per mille.
            progress_->setMaximum(1000);
            progress_->setValue(static_cast<int>(done * 1000 / std::max<qint64>(total, 1)));
            progress_->setFormat(tr("reading %p%"));
        }
        updateStatus();
    });
    connect(store_, &data::DumpStore::changed, this, [this](const analysis::IndexChange& change) {
        if (change.newRounds) updateRounds();
        // A dump opened before it held any op (a model just launched): show its first op as
        // soon as there is one, so the tables and plots fill while it runs.
        if (store_->initialLoadDone() && cursor_->op() == kNone && change.newOps > 0 && store_->index().processCount() > 0 &&
            !store_->index().process(0).topOps.empty()) {
            autoSelectedOp_ = store_->index().process(0).topOps.front();
            cursor_->setOp(autoSelectedOp_);
        }
        lookForFirstNan(change);
    });
    connect(store_, &data::DumpStore::dumpStateChanged, this, &MainWindow::updateStatus);
    connect(store_, &data::DumpStore::dumpStateChanged, this, &MainWindow::goToFirstNanUnlessMovedAway);
    connect(store_, &data::DumpStore::problemsAdded, this, &MainWindow::addProblems);
    connect(store_, &data::DumpStore::wasReset, this, [this] {
        firstNanRow_ = autoSelectedOp_ = kNone;
        firstNanButton_->setVisible(false);
        problems_.clear();
        problemsText_->clear();
        problemsButton_->setVisible(false);
        problemsDock_->hide();
        updateRounds();
    });
    connect(store_, &data::DumpStore::initialLoadFinished, this, [this] {
        progress_->setVisible(false);
        updateStatus();
        // Start where the numbers first go wrong: the first NaN in execution order (its op and
        // round), else the first op.
        const auto& idx = store_->index();
        if (cursor_->op() == kNone && idx.processCount() > 0) {
            const uint32_t firstNan = idx.firstAnomalousRow(0, analysis::kHasNan);
            if (firstNan != kNone) {
                showFirstNan(firstNan);  // everything read: this is the first in execution order
                cursor_->setRow(firstNan);
            } else if (!idx.process(0).topOps.empty()) {
                cursor_->setOp(idx.process(0).topOps.front());
            }
        }
        emit sessionLoaded(true);
    });
    connect(tensors_, &OpTensorsPanel::previewRequested, this, [this](uint32_t row) {
        preview_->openRow(row);
        showView(View::Tensor);
    });
    connect(plot_, &StatisticsPlot::rowActivated, this, [this](uint32_t row) { cursor_->setRow(row); });
    // While the preview is shown it follows the selection: click a point, see its tensor.
    auto followInPreview = [this] {
        if (tabs_->currentWidget() != preview_) return;
        const uint32_t row = cursor_->row();
        if (row != kNone && row != preview_->row() && store_->index().row(row).hasTensorFile) preview_->openRow(row);
    };
    connect(cursor_, &data::DumpCursor::changed, this, followInPreview);
    connect(tabs_, &QTabWidget::currentChanged, this, followInPreview);
    connect(tree_, &OpTreePanel::editConfigRequested, this, &MainWindow::editConfig);
    connect(tree_, &OpTreePanel::applyConfigRequested, this, [this] {
        if (!configEditor_->apply()) showView(View::Config);  // the editor says why
    });

    setWindowTitle(tr("Probe Studio"));
    resize(1500, 900);
    // Relocatable: what is shipped is found from the executable, <prefix>/bin/probe-studio
    // (the build tree has the same layout).
    setDataDirectory(QDir(QCoreApplication::applicationDirPath() + QStringLiteral("/../share/probe-studio")).absolutePath());
    showPage(Page::Start);
    updateStatus();
}

MainWindow::~MainWindow() {
    // Panels hold the session weakly; end it (stopping a launched model) while they exist.
    delete session_;
}

session::LiveSession* MainWindow::liveSession() const { return session_; }

void MainWindow::setDataDirectory(const QString& dir) {
    dataDirectory_ = dir;
    const QString configs = dir + QStringLiteral("/configs");
    configEditor_->setConfigDirectory(configs);
    launchForm_->setConfigDirectory(configs);
    const QString demo = dir + QStringLiteral("/demo/llama_demo.py");
    startPage_->setDemoAvailable(QFileInfo::exists(demo), tr("The demo is not installed (%1 is missing)").arg(demo));
}

void MainWindow::showPage(Page page) {
    pages_->setCurrentIndex(page == Page::Start ? 0 : page == Page::Launch ? 1 : 2);
    for (QAction* action : workspaceActions_) action->setVisible(page == Page::Workspace);  // the round is the workspace's
    if (page == Page::Start) startPage_->refresh();
}

MainWindow::Page MainWindow::page() const {
    const int i = pages_->currentIndex();
    return i == 0 ? Page::Start : i == 1 ? Page::Launch : Page::Workspace;
}

void MainWindow::showLaunchForm(const session::LaunchSpec& spec) {
    launchForm_->setSpec(spec);
    showPage(Page::Launch);
    launchForm_->programEdit()->setFocus();
}

void MainWindow::openDump(const QString& path) {
    openDumpFolder(path);
    openingRecent_ = QFileInfo(path).absoluteFilePath();  // recent once it opened
}

void MainWindow::openDumpFolder(const QString& path) {
    openingRecent_.clear();
    showPage(Page::Workspace);
    state_->setText(tr("Opening %1…").arg(path));
    store_->open(path);
}

bool MainWindow::launch(const session::LaunchSpec& given) {
    endLiveSession(false);
    session::LaunchSpec spec = given;
    if (spec.probeExecutable.isEmpty()) spec.probeExecutable = probeExecutable_;
    // Where it runs is part of what was launched (relative paths in it are that folder's): kept
    // so that the recent session launches the same again from anywhere.
    if (spec.workingDirectory.isEmpty()) spec.workingDirectory = QDir::currentPath();
    auto* live = new session::LiveSession(this);
    startLiveSession(live);
    if (!live->launch(spec)) {
        state_->setText(tr("Could not launch: %1").arg(live->stateDetail()));
        return false;
    }
    setWindowTitle(tr("%1 — Probe Studio").arg(live->command()));
    // A recent session once the model runs under the probe (it said hello, or its dump
    // appeared): a command that cannot start is not one to take up again.
    session::RecentSession recent;
    recent.kind = session::RecentSession::Kind::Launch;
    recent.launch = spec;
    recent.launch.probeExecutable.clear();
    auto added = std::make_shared<bool>(false);
    auto addRecent = [this, live, recent, added]() mutable {
        if (session_ != live || *added) return;
        *added = true;
        recent.path = live->dumpRoot();
        recent_->add(recent);
    };
    connect(live, &session::LiveSession::helloReceived, this, addRecent);
    connect(live, &session::LiveSession::dumpFolderReady, this, addRecent);
    return true;
}

bool MainWindow::launchDemo(QString* error) {
    session::LaunchSpec spec;
    QString problem;
    if (!session::prepareDemoLaunch(dataDirectory_, &spec, &problem)) {
        if (error) *error = problem;
        state_->setText(problem);
        return false;
    }
    if (!launch(spec)) {
        if (error) *error = liveSession()->stateDetail();
        return false;
    }
    // Follow the overflow as it happens: the layer whose norm blows up.
    showView(View::Plot);
    return true;
}

void MainWindow::attach(const session::LiveProbeInfo& probe) {
    endLiveSession(false);
    auto* live = new session::LiveSession(this);
    startLiveSession(live);
    connect(live, &session::LiveSession::helloReceived, this, [this, live](const QJsonObject& hello) {
        session::RecentSession recent;
        recent.kind = session::RecentSession::Kind::Attach;
        recent.pid = hello.value(QStringLiteral("pid")).toInteger();
        recent.command = hello.value(QStringLiteral("command")).toString();
        recent.path = live->dumpRoot();
        recent_->add(recent);
        setWindowTitle(tr("%1 — Probe Studio").arg(recent.command));
    });
    live->attach(probe);
}

void MainWindow::startLiveSession(session::LiveSession* live) {
    session_ = live;
    sessionPanel_->setSession(live);
    configEditor_->setSession(live);
    if (!sessionDock_->isVisible()) {
        sessionDock_->show();
        // The log is for glancing at: the tree and plots keep most of the height.
        resizeDocks({sessionDock_}, {std::max(150, height() / 5)}, Qt::Vertical);
    }
    sessionDock_->raise();
    showPage(Page::Workspace);
    // The dump of a new session replaces what was shown.
    store_->close();
    connect(live, &session::LiveSession::dumpFolderReady, this, &MainWindow::openDumpFolder);
    connect(live, &session::LiveSession::stateChanged, this, &MainWindow::updateSessionStatus);
    // The socket says when the probe wrote: read the folder then, not at the next (backed-off)
    // poll, so rows show within a fraction of a second however long the model was quiet.
    connect(live, &session::LiveSession::dumpGrew, store_, &data::DumpStore::pollNow);
    connect(live, &session::LiveSession::helloReceived, this, [this](const QJsonObject& hello) {
        // The editor shows the config the probe has in force, as its file holds it.
        const QString path = hello.value(QStringLiteral("config_path")).toString();
        const QJsonObject inForce = hello.value(QStringLiteral("config")).toObject();
        const auto parsed = format::parseOpConfig(QJsonDocument(inForce).toJson(QJsonDocument::Compact).toStdString(), "probe");
        QString text;
        if (!path.isEmpty()) {
            QFile file(path);
            if (file.open(QIODevice::ReadOnly)) {
                const QByteArray content = file.readAll();
                const auto fromFile = format::parseOpConfig(content.toStdString(), path.toStdString());
                if (!parsed.config || (fromFile.config && *fromFile.config == *parsed.config)) text = QString::fromUtf8(content);
            }
        }
        if (text.isEmpty() && parsed.config) text = QString::fromStdString(parsed.config->toFileText());
        if (!text.isEmpty()) config_->setFileContent(data::ConfigDocument::Kind::Op, path, text);
    });
    updateSessionStatus();
    emit liveSessionStarted();
}

bool MainWindow::endLiveSession(bool ask) {
    if (!session_) return true;
    const bool running = session_->origin() == session::LiveSession::Origin::Launched && !session_->hasEnded();
    if (ask && running &&
        QMessageBox::question(this, tr("A model is running"),
                              tr("%1 is still running. Stop it?").arg(session_->command())) != QMessageBox::Yes)
        return false;
    session::LiveSession* old = session_;
    session_ = nullptr;
    sessionPanel_->setSession(nullptr);
    configEditor_->setSession(nullptr);
    disconnect(old, nullptr, this, nullptr);
    disconnect(old, nullptr, store_, nullptr);
    // A launched model is asked to stop (SIGTERM, SIGKILL after a grace period), an attached
    // probe let go; the session goes once that is done, without the window waiting for it.
    if (old->hasEnded()) {
        old->deleteLater();
    } else {
        connect(old, &session::LiveSession::stateChanged, old, [old] {
            if (old->hasEnded()) old->deleteLater();
        });
        old->stop();
    }
    updateSessionStatus();
    return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (session_ && session_->origin() == session::LiveSession::Origin::Launched && !session_->hasEnded() &&
        QMessageBox::question(this, tr("Quit Probe Studio"), tr("%1 is still running. Stop it and quit?").arg(session_->command())) !=
            QMessageBox::Yes) {
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
    if (endLiveSession(true)) attach(probe);
}

void MainWindow::launchDemoInteractively() {
    if (!endLiveSession(true)) return;
    QString error;
    if (!launchDemo(&error)) QMessageBox::warning(this, tr("The demo could not be launched"), error);
}

void MainWindow::takeUpRecent(const session::RecentSession& recent) {
    using Kind = session::RecentSession::Kind;
    if (recent.kind == Kind::Launch) {
        showLaunchForm(recent.launch);
    } else if (recent.kind == Kind::Open) {
        openDump(recent.path);
    } else {
        for (const auto& probe : session::liveProbes()) {
            if (probe.pid == recent.pid) {
                if (endLiveSession(true)) attach(probe);
                return;
            }
        }
        if (QFileInfo(recent.path).isDir()) {
            openDump(recent.path);
            state_->setText(tr("The probe of pid %1 is no longer running; its dump is opened.").arg(recent.pid));
        } else {
            QMessageBox::information(this, tr("Not running"),
                                     tr("The probe of pid %1 is no longer running, and its dump folder %2 is gone.").arg(recent.pid).arg(recent.path));
        }
    }
}

void MainWindow::editConfig() {
    showPage(Page::Workspace);
    showView(View::Config);
}

void MainWindow::showView(View view) {
    tabs_->setCurrentIndex(view == View::Tree ? 0 : view == View::Plot ? 1 : view == View::Tensor ? 2 : 3);
}

bool MainWindow::selectProcess(const QString& key) { return tree_->setProcessKey(key); }

bool MainWindow::selectOp(const QString& id) {
    const auto& idx = store_->index();
    const uint32_t process = tree_->model()->process();
    const uint32_t op = idx.findOp(process == kNone ? 0 : process, id.toStdString());
    if (op == kNone) return false;
    cursor_->setOp(op);
    return true;
}

void MainWindow::setRound(int round) { cursor_->setRound(round); }

bool MainWindow::previewCurrentTensor() {
    const uint32_t row = cursor_->row();
    if (row == kNone || !store_->index().row(row).hasTensorFile) return false;
    preview_->openRow(row);
    return true;
}

void MainWindow::previewTensorFile(const QString& path) {
    showView(View::Tensor);
    const uint32_t row = store_->isOpen() ? store_->index().rowOfTensorFile(path.toStdString()) : kNone;
    if (row == kNone) {
        preview_->openFile(path);
        return;
    }
    cursor_->setRow(row);
    preview_->openRow(row);
}

void MainWindow::chooseDump() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a dump folder (atb_dump_data, its parent, or an msprobe dump_path)"));
    if (!dir.isEmpty()) openDump(dir);
}

void MainWindow::chooseTensorFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a tensor file"), store_->root(), tr("Tensor files (*.bin);;All files (*)"));
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

void MainWindow::addProblems(const QStringList& problems) {
    problems_ += problems;
    for (const auto& p : problems) problemsText_->appendPlainText(p);
    problemsButton_->setText(tr("⚠ %n problem(s)", nullptr, static_cast<int>(problems_.size())));
    problemsButton_->setVisible(true);
    problemsDock_->show();
}

QString MainWindow::statusText() const { return state_->text(); }

void MainWindow::updateSessionStatus() {
    sessionState_->setVisible(session_);
    if (!session_) return;
    sessionState_->setText(QStringLiteral("<span style='color:%1'>●</span> %2")
                               .arg(SessionPanel::stateColor(session_->state()).name(), SessionPanel::describeState(*session_)));
    sessionState_->setToolTip(session_->stateDetail());
    if (!store_->isOpen() && store_->requestedPath().isEmpty()) {
        if (session_->state() == session::SessionState::FailedToStart || session_->state() == session::SessionState::Detached)
            state_->setText(session_->stateDetail());
        else if (session_->hasEnded())
            state_->setText(tr("The program ended (%1) before the probe dumped anything.").arg(session_->stateDetail()));
        else
            state_->setText(tr("Waiting for the probe to start dumping…"));
    }
}

void MainWindow::updateStatus() {
    const auto& idx = store_->index();
    if (!store_->isOpen()) {
        if (store_->requestedPath().isEmpty() && !session_)
            state_->setText(tr("Launch a model, attach to a probe or open a dump folder (File menu, or the start page)."));
        return;
    }
    const QLocale locale;
    QString state = store_->dumpState();
    if (!idx.statusError().empty())  // the Problems pane has the details
        state = state.isEmpty() ? tr("status file unreadable (%1)").arg(QString::fromStdString(idx.statusError()))
                                : tr("%1 (the status file is unreadable now)").arg(state);
    else if (state.isEmpty())
        state = idx.layout() == analysis::DumpLayout::Msprobe ? tr("no status file (msprobe layout)") : tr("no status file");
    if (state == QLatin1String("running")) state = tr("running — following it as it grows");
    if (const auto status = idx.status(); status && status->state != format::DumpState::Running)
        for (const auto& process : status->processes)
            if (process.endedBy && process.endedBy->how == format::ProgramEnd::How::Signaled) {
                state += tr(", the program stopped by %1 before its end")
                             .arg(QString::fromStdString(format::signalName(process.endedBy->code)));
                break;
            }
    QString text = tr("%1 · %2 layout · %3 · %4 ops · %5 rows")
                       .arg(store_->root(), QString::fromLatin1(analysis::layoutName(idx.layout())), state,
                            locale.toString(static_cast<qulonglong>(idx.opCount())), locale.toString(static_cast<qulonglong>(idx.rowCount())));
    if (idx.processCount() > 1) text += tr(" · %1 processes").arg(idx.processCount());
    if (!store_->initialLoadDone()) text += tr(" · reading…");
    state_->setText(text);
}

void MainWindow::lookForFirstNan(const analysis::IndexChange& change) {
    if (firstNanRow_ != kNone || change.newRows == 0) return;
    const auto& idx = store_->index();
    // Only the new rows are looked at until a NaN turns up; then where it first appears in
    // execution order (an earlier round may have been read later).
    for (uint32_t r = change.firstNewRow; r < change.firstNewRow + change.newRows; ++r) {
        if (!(idx.row(r).anomalies & analysis::kHasNan)) continue;
        const uint32_t process = idx.op(idx.slot(idx.row(r).slot).op).process;
        const uint32_t first = idx.firstAnomalousRow(process, analysis::kHasNan);
        showFirstNan(first == kNone ? r : first);
        // The status may have said "complete" before the last rows were read.
        goToFirstNanUnlessMovedAway();
        return;
    }
}

void MainWindow::goToFirstNanUnlessMovedAway() {
    if (firstNanRow_ == kNone || autoSelectedOp_ == kNone || cursor_->op() != autoSelectedOp_) return;
    if (!store_->initialLoadDone() || store_->dumpState() == QLatin1String("running") || store_->dumpState().isEmpty()) return;
    cursor_->setRow(firstNanRow_);
}

void MainWindow::showFirstNan(uint32_t row) {
    const auto& idx = store_->index();
    firstNanRow_ = row;
    const auto& record = idx.row(row);
    firstNanButton_->setText(
        tr("⚠ First NaN: %1 %2, %3").arg(store_->roundName()).arg(record.round).arg(QString::fromStdString(idx.describeOp(idx.slot(record.slot).op))));
    firstNanButton_->setVisible(true);
}

QString MainWindow::firstNanText() const { return firstNanButton_->isVisible() ? firstNanButton_->text() : QString(); }

void MainWindow::updateRounds() {
    const auto& idx = store_->index();
    int32_t last = -1;
    for (size_t p = 0; p < idx.processCount(); ++p) {
        const auto rounds = idx.rounds(static_cast<uint32_t>(p));
        if (!rounds.empty()) last = std::max(last, rounds.back());
    }
    round_->setMaximum(std::max(-1, last));
    const QString name = store_->roundName();
    roundLabel_->setText(QStringLiteral(" %1 ").arg(name.left(1).toUpper() + name.mid(1)));
    round_->setToolTip(store_->layout() == analysis::DumpLayout::Msprobe
                           ? tr("The step the tables and the op profile show")
                           : tr("The round (execution count) the tables and the op profile show"));
}

}  // namespace probe::widgets
