// The main window's part in comparing two runs: File › Compare…, Jump to first divergence (menu,
// toolbar, F8), Stop comparing; the comparison's progress and Cancel in the status bar; the op
// tree coloured by verdict with its verdict column; the Comparison tab. Kept apart from
// main_window.cpp, which only calls setUpComparison().
// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <memory>

#include <QAction>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QTreeView>

#include "compare_dialog.h"
#include "compare_panel.h"
#include "compare_runs.h"
#include "context/app_context.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "main_window.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "view_columns.h"

namespace probe::widgets {

void MainWindow::setUpComparison(QMenu* file, QAction* at, QToolBar* toolbar) {
    data::RunComparison* comparison = context_->comparison();
    auto* compare = new QAction(tr("&Compare…"), this);
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    compare->setToolTip(tr(
        "Compare the dump shown (or another) against a reference run: where do they part ways?"));
    connect(compare, &QAction::triggered, this, &MainWindow::chooseComparison);
    jumpAction_ = new QAction(tr("Jump to first &divergence"), this);
    jumpAction_->setShortcut(QKeySequence(Qt::Key_F8));
    jumpAction_->setToolTip(tr(
        "Select the first op where the runs part ways (born here), else the first that inherits a "
        "divergence, in its round (F8)"));
    jumpAction_->setEnabled(false);
    connect(jumpAction_, &QAction::triggered, this, [this] {
        if (!context_->goToFirstDivergence()) return;
        revealCursorOpInTree();
        showView(View::Compare);
    });
    auto* stop = new QAction(tr("Stop comparing"), this);
    stop->setEnabled(comparison->enabled());
    connect(stop, &QAction::triggered, context_, &context::AppContext::closeReference);
    file->insertAction(at, compare);
    file->insertAction(at, jumpAction_);
    file->insertAction(at, stop);
    addAction(jumpAction_);  // F8 works wherever the focus is
    toolbar->addAction(compare);
    toolbar->addAction(jumpAction_);

    // Status bar: progress and Cancel while a comparison runs.
    compareProgress_ = new QProgressBar(this);
    compareProgress_->setMaximumWidth(180);
    compareProgress_->setRange(0, 1000);
    compareProgress_->setFormat(tr("comparing %p%"));
    compareProgress_->setVisible(false);
    cancelCompare_ = new QPushButton(tr("Cancel"), this);
    cancelCompare_->setFlat(true);
    cancelCompare_->setVisible(false);
    statusBar()->addPermanentWidget(compareProgress_);
    statusBar()->addPermanentWidget(cancelCompare_);
    connect(cancelCompare_, &QPushButton::clicked, comparison, &data::RunComparison::cancel);
    // The last verdict shown, whole, taken down with its comparison (it stayed up to 15 s over
    // a window that no longer compares). By its whole text: the text as fitted to the bar changes
    // as the bar's buttons do, and a live run's verdict kept its first counts then.
    auto shownVerdict = std::make_shared<QString>();
    connect(comparison, &data::RunComparison::started, this, [this, stop, comparison] {
        stop->setEnabled(comparison->enabled());
        compareProgress_->setValue(0);
        // Only until there is an answer: a live run compared again as it grows showed
        // "comparing 91%" and Cancel for as long as it ran, as if the comparison never ended.
        compareProgress_->setVisible(!comparison->result());
        cancelCompare_->setVisible(!comparison->result());
    });
    connect(comparison, &data::RunComparison::progress, this, [this](qint64 done, qint64 total) {
        compareProgress_->setValue(static_cast<int>(done * 1000 / std::max<qint64>(total, 1)));
    });
    // What it said, without its counts: a live run compared again as its rounds arrive put the
    // same verdict up again every few seconds, over the session's "dumping … rows" for good.
    // While it is still up, its counts follow the runs (it kept the first run's), for the time
    // it has left.
    auto shownGist = std::make_shared<QString>();
    constexpr int kVerdictMs = 15000;
    connect(comparison, &data::RunComparison::finished, this, [=](bool ok, const QString& message) {
        compareProgress_->setVisible(comparison->running());
        cancelCompare_->setVisible(comparison->running());
        const QString gist = comparison->verdictGist();
        if (ok && gist == *shownGist) {
            if (passingMessageSays(*shownVerdict)) {
                replacePassingMessage(message);
                *shownVerdict = message;
            }
            return;
        }
        showPassingMessage(message, kVerdictMs);
        *shownVerdict = message;
        *shownGist = ok ? gist : QString();
    });

    // The op tree: coloured by verdict, the verdict column while there is a comparison.
    tree_->model()->setComparison(comparison);
    tree_->view()->setColumnHidden(data::OpTreeModel::VerdictColumn, true);
    // Beside the name, where it is seen without scrolling.
    QHeaderView* header = tree_->view()->header();
    header->moveSection(header->visualIndex(data::OpTreeModel::VerdictColumn), 1);
    tree_->view()->setColumnWidth(
        data::OpTreeModel::VerdictColumn,
        columnWidthFor(tree_->view(), data::RunComparison::verdictText(
                                          data::RunComparison::Verdict::OnlyInOneRun)));
    auto firstResult = std::make_shared<bool>(true);
    connect(comparison, &data::RunComparison::changed, this, [=] {
        const analysis::CompareResult* r = comparison->result();
        tree_->view()->setColumnHidden(data::OpTreeModel::VerdictColumn, !r);
        jumpAction_->setEnabled(r && (r->firstBornHere || r->firstInherited));
        stop->setEnabled(comparison->enabled());
        if (!r) {
            *firstResult = true;
            shownGist->clear();
            if (!comparison->running() && !shownVerdict->isEmpty() &&
                passingMessageSays(*shownVerdict))
                statusBar()->clearMessage();
            return;
        }
        // A rank compared with a rank: the tree shows the candidate's.
        const std::string& process = comparison->options().candidateScope.process;
        if (!process.empty()) tree_->setProcessKey(QString::fromStdString(process));
        if (*firstResult && process.empty() && !r->processPairs.empty()) {
            // Processes paired by the ops they share: the tree showed the candidate's first
            // process, a helper compared with nothing, where the model was.
            const auto& idx = context_->store()->index();
            const uint32_t op = context_->cursor()->op();
            const bool paired =
                op < idx.opCount() &&
                std::any_of(r->processPairs.begin(), r->processPairs.end(),
                            [&](const auto& pair) { return pair.second == idx.op(op).process; });
            const uint32_t shown = r->processPairs[0].second;
            const auto& topOps = idx.process(shown).topOps;  // the tree's first rows
            if (!paired && !topOps.empty() &&
                tree_->setProcessKey(QString::fromStdString(r->candidate->process(shown).key)))
                context_->cursor()->setOp(topOps.front());
        }
        if (*firstResult) {  // the first answer of a comparison asked for: show it
            *firstResult = false;
            // At the next turn of the event loop: laying out and drawing the panel for the
            // first time is work of its own, not added to the result's (the GUI thread is not
            // held for both at once). Unless another view was chosen meanwhile.
            QTimer::singleShot(
                0, this, [this, comparison, tab = tabs_->currentIndex(), asked = viewsShown_] {
                    if (comparison->result() && tabs_->currentIndex() == tab &&
                        viewsShown_ == asked)
                        showView(View::Compare);
                });
        }
    });
    connect(compare_, &ComparePanel::rowActivated, context_, &context::AppContext::pickRow);
    connect(compare_, &ComparePanel::jumpRequested, jumpAction_, &QAction::trigger);
}

void MainWindow::chooseComparison() {
    const data::DumpStore* store = context_->store();
    CompareDialog dialog(store->isOpen() ? store->requestedPath() : QString(), this);
    if (const QString reference = context_->suggestedReference(); !reference.isEmpty())
        dialog.setReference(reference);
    const bool accepted = dialog.exec() == QDialog::Accepted;
    // The keyboard back to the window: without a window manager handing it back, F8 (Jump to
    // first divergence) did nothing after the dialog closed.
    activateWindow();
    if (!accepted) return;
    compareRuns(dialog.referencePath(), dialog.candidatePath());
}

void MainWindow::compareRuns(const QString& reference, const QString& candidate) {
    if (!context_->isShownDump(candidate) && !mayReplaceSession()) return;
    QString error;
    if (!context_->compare(reference, candidate, &error))
        QMessageBox::warning(this, tr("Cannot compare"), error);
}

}  // namespace probe::widgets
