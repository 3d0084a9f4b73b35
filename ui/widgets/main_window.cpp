// SPDX-License-Identifier: GPL-3.0-or-later
#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include "dump_cursor.h"
#include "dump_store.h"
#include "op_selection.h"
#include "op_tensors_panel.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "statistics_plot.h"
#include "tensor_preview.h"

namespace probe::widgets {

using analysis::kNone;

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    store_ = new data::DumpStore(this);
    selection_ = new data::OpSelection(this);
    cursor_ = new data::DumpCursor(store_, this);

    tree_ = new OpTreePanel(store_, selection_, cursor_, this);
    tensors_ = new OpTensorsPanel(store_, cursor_, this);
    plot_ = new StatisticsPlot(store_, cursor_, this);
    preview_ = new TensorPreview(store_, this);
    tabs_ = new QTabWidget(this);
    tabs_->addTab(tensors_, tr("Tensors"));
    tabs_->addTab(plot_, tr("Statistics"));
    tabs_->addTab(preview_, tr("Tensor preview"));

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(tree_);
    splitter->addWidget(tabs_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    setCentralWidget(splitter);

    // Menus.
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open dump folder…"), QKeySequence::Open, this, &MainWindow::chooseDump);
    file->addAction(tr("Open &tensor file…"), this, &MainWindow::chooseTensorFile);
    file->addSeparator();
    file->addAction(tr("&Load config…"), this, &MainWindow::loadConfig);
    file->addAction(tr("&Save config as…"), QKeySequence::Save, this, &MainWindow::saveConfig);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);
    auto* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Tensors of the op"), QKeySequence(Qt::CTRL | Qt::Key_1), this, [this] { showView(View::Tree); });
    view->addAction(tr("&Statistics"), QKeySequence(Qt::CTRL | Qt::Key_2), this, [this] { showView(View::Plot); });
    view->addAction(tr("Tensor &preview"), QKeySequence(Qt::CTRL | Qt::Key_3), this, [this] { showView(View::Tensor); });

    // Toolbar: open, and the round everything looks at.
    auto* toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("main toolbar"));
    toolbar->setMovable(false);
    toolbar->addAction(tr("Open…"), this, &MainWindow::chooseDump);
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Round "), toolbar));
    round_ = new QSpinBox(toolbar);
    round_->setMinimum(-1);
    round_->setMaximum(-1);
    round_->setSpecialValueText(tr("latest"));
    round_->setToolTip(tr("The round (execution count, or step) the tables and the op profile show"));
    toolbar->addWidget(round_);
    connect(round_, &QSpinBox::valueChanged, this, [this](int v) { cursor_->setRound(v); });
    connect(cursor_, &data::DumpCursor::roundChanged, this, [this](int32_t round) {
        const QSignalBlocker blocker(round_);
        round_->setValue(round);
    });

    // Status bar: state, progress, problems.
    state_ = new QLabel(this);
    state_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // long text must not widen the window
    progress_ = new QProgressBar(this);
    progress_->setMaximumWidth(220);
    progress_->setVisible(false);
    problemsButton_ = new QPushButton(this);
    problemsButton_->setFlat(true);
    problemsButton_->setVisible(false);
    statusBar()->addWidget(state_, 1);
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
    connect(problemsButton_, &QPushButton::clicked, this, [this] { problemsDock_->setVisible(!problemsDock_->isVisible()); });

    // Wiring.
    connect(store_, &data::DumpStore::opened, this, [this](const QString& root) {
        setWindowTitle(tr("%1 — Probe Studio").arg(root));
        updateStatus();
    });
    connect(store_, &data::DumpStore::openFailed, this, [this](const QString& message) {
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
    });
    connect(store_, &data::DumpStore::dumpStateChanged, this, &MainWindow::updateStatus);
    connect(store_, &data::DumpStore::problemsAdded, this, &MainWindow::addProblems);
    connect(store_, &data::DumpStore::wasReset, this, [this] {
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
            if (firstNan != kNone)
                cursor_->setRow(firstNan);
            else if (!idx.process(0).topOps.empty())
                cursor_->setOp(idx.process(0).topOps.front());
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
    connect(tree_, &OpTreePanel::loadConfigRequested, this, &MainWindow::loadConfig);
    connect(tree_, &OpTreePanel::saveConfigRequested, this, &MainWindow::saveConfig);

    setWindowTitle(tr("Probe Studio"));
    resize(1500, 900);
    updateStatus();
}

void MainWindow::openDump(const QString& path) {
    state_->setText(tr("Opening %1…").arg(path));
    store_->open(path);
}

void MainWindow::showView(View view) {
    tabs_->setCurrentIndex(view == View::Tree ? 0 : view == View::Plot ? 1 : 2);
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

void MainWindow::chooseDump() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a dump folder (atb_dump_data, its parent, or an msprobe dump_path)"));
    if (!dir.isEmpty()) openDump(dir);
}

void MainWindow::chooseTensorFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a tensor file"), store_->root(), tr("Tensor files (*.bin);;All files (*)"));
    if (path.isEmpty()) return;
    preview_->openFile(path);
    showView(View::Tensor);
}

void MainWindow::loadConfig() {
    const QString start = dataDirectory_.isEmpty() ? QString() : dataDirectory_ + QStringLiteral("/configs");
    const QString path = QFileDialog::getOpenFileName(this, tr("Load an op-level config"), start, tr("Config files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    QString error;
    if (!selection_->load(path, &error)) QMessageBox::warning(this, tr("Config not loaded"), error);
}

void MainWindow::saveConfig() {
    const QString start = selection_->filePath().isEmpty() ? QStringLiteral("config.json") : selection_->filePath();
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the op-level config"), start, tr("Config files (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!selection_->save(path, &error)) QMessageBox::warning(this, tr("Config not saved"), error);
}

void MainWindow::addProblems(const QStringList& problems) {
    problems_ += problems;
    for (const auto& p : problems) problemsText_->appendPlainText(p);
    problemsButton_->setText(tr("⚠ %n problem(s)", nullptr, static_cast<int>(problems_.size())));
    problemsButton_->setVisible(true);
    problemsDock_->show();
}

QString MainWindow::statusText() const { return state_->text(); }

void MainWindow::updateStatus() {
    const auto& idx = store_->index();
    if (!store_->isOpen()) {
        if (store_->requestedPath().isEmpty()) state_->setText(tr("Open a dump folder (File › Open, or probe-studio DIR)."));
        return;
    }
    const QLocale locale;
    QString state = store_->dumpState();
    if (state.isEmpty()) state = idx.layout() == analysis::DumpLayout::Msprobe ? tr("no status file (msprobe layout)") : tr("no status file");
    if (state == QLatin1String("running")) state = tr("running — following it as it grows");
    QString text = tr("%1 · %2 layout · %3 · %4 ops · %5 rows")
                       .arg(store_->root(), QString::fromLatin1(analysis::layoutName(idx.layout())), state,
                            locale.toString(static_cast<qulonglong>(idx.opCount())), locale.toString(static_cast<qulonglong>(idx.rowCount())));
    if (idx.processCount() > 1) text += tr(" · %1 processes").arg(idx.processCount());
    if (!store_->initialLoadDone()) text += tr(" · reading…");
    state_->setText(text);
}

void MainWindow::updateRounds() {
    const auto& idx = store_->index();
    int32_t last = -1;
    for (size_t p = 0; p < idx.processCount(); ++p) {
        const auto rounds = idx.rounds(static_cast<uint32_t>(p));
        if (!rounds.empty()) last = std::max(last, rounds.back());
    }
    round_->setMaximum(std::max(-1, last));
}

}  // namespace probe::widgets
