// The main window's parts of the precision-debugging suite: where an overflow is born (the
// status-bar item, and "overflow born here" on the op), "Replay this op" in the op tree's
// context menu, and the Gradients tab when the dump has gradient monitor files.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <QAbstractProxyModel>
#include <QFileDialog>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeView>

#include "context/app_context.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "elided_label.h"
#include "gradient_series_model.h"
#include "gradients_panel.h"
#include "main_window.h"
#include "op_tensors_panel.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "overflow_births.h"

namespace probe::widgets {

using analysis::kNone;

void MainWindow::setUpSuite() {
    auto* store = context_->store();
    births_ = new data::OverflowBirths(store, this);
    tensors_->setOverflowBirths(births_);
    overflowButton_ = new ElidedButton(this);
    overflowButton_->setVisible(false);
    overflowButton_->setStyleSheet(QStringLiteral("color: #c81e1e; font-weight: bold"));
    // Permanent widgets are numbered after the two others (the session's state, the dump's):
    // 2 puts it first among them, before the first NaN.
    statusBar()->insertPermanentWidget(2, overflowButton_);
    connect(overflowButton_, &QPushButton::clicked, this, &MainWindow::goToOverflowBirth);
    connect(births_, &data::OverflowBirths::changed, this, &MainWindow::updateOverflowButton);

    gradients_ = new GradientsPanel(this);
    gradients_->hide();  // a tab once there is something to show
    connect(store, &data::DumpStore::initialLoadFinished, this, &MainWindow::findDumpGradients);
    connect(context_, &context::AppContext::sessionReplaced, this, [this] {
        if (const int tab = tabs_->indexOf(gradients_); tab >= 0) tabs_->removeTab(tab);
        gradients_->model()->load(QString());
    });

    // Right click on an op: replay it.
    QTreeView* treeView = tree_->view();
    treeView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(
        treeView, &QWidget::customContextMenuRequested, this, [this, treeView](const QPoint& pos) {
            const QModelIndex at = treeView->indexAt(pos);
            auto* proxy = qobject_cast<QAbstractProxyModel*>(treeView->model());
            const uint32_t op =
                at.isValid() ? tree_->model()->opAt(proxy ? proxy->mapToSource(at) : at) : kNone;
            if (op == kNone) return;
            QMenu menu(this);
            QAction* replay = menu.addAction(tr("Replay this op"), this, [this, op] {
                context_->cursor()->setOp(op);
                showView(View::Tree);
                tensors_->replayCurrentOp();
            });
            replay->setEnabled(context_->store()->layout() == analysis::DumpLayout::Atb);
            menu.exec(treeView->viewport()->mapToGlobal(pos));
        });

    QMenu* view = menuBar()->actions().value(1)->menu();
    view->addSeparator();
    view->addAction(tr("&Gradients"), QKeySequence(Qt::CTRL | Qt::Key_6), this,
                    [this] { showWorkspaceView(View::Gradients); });
    view->addAction(tr("Where the &overflow is born"),
                    QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this,
                    &MainWindow::goToOverflowBirth);
    view->addAction(tr("&Replay the selected op"), QKeySequence(Qt::CTRL | Qt::Key_R), this,
                    [this] {
                        showView(View::Tree);
                        tensors_->replayCurrentOp();
                    });
    view->addAction(tr("Open gradient &monitor folder…"), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("The gradient monitor's folder (probe run --grads DIR)"));
        if (!dir.isEmpty()) showGradients(dir);
    });
}

void MainWindow::findDumpGradients() {
    const QString dir = data::GradientSeriesModel::dumpGradientDirectory(context_->store()->root());
    if (!dir.isEmpty() && dir != gradients_->model()->directory()) {
        if (tabs_->indexOf(gradients_) < 0) tabs_->addTab(gradients_, tr("Gradients"));
        gradients_->model()->load(dir);
    }
}

void MainWindow::showGradients(const QString& dir) {
    gradients_->model()->load(dir);
    showView(View::Gradients);
}

void MainWindow::updateOverflowButton() {
    const auto* store = context_->store();
    const auto& idx = store->index();
    const data::BornOverflow* born = births_->first();
    overflowButton_->setVisible(born && born->op < idx.opCount());
    if (overflowButton_->isHidden()) return;
    overflowButton_->setFullText(
        tr("⚠ Overflow born: %1 %2, %3")
            .arg(store->roundName())
            .arg(born->round)
            .arg(QString::fromStdString(idx.describeOp(born->op, born->round))) +
        ofWhatWasRead());
    overflowButton_->setExplanation(
        tr("Where the first Inf/NaN is born: its inputs are finite, an output is not (%1). "
           "Click to select that op and round.")
            .arg(born->why));
}

QString MainWindow::overflowText() const {
    return overflowButton_->isHidden() ? QString() : overflowButton_->fullText();
}

void MainWindow::goToOverflowBirth() {
    const data::BornOverflow* born = births_->first();
    if (born && born->row != kNone && born->row < context_->store()->index().rowCount()) {
        context_->cursor()->setRow(born->row);
        revealCursorOpInTree();
        return;
    }
    // Said rather than nothing done (the shortcut seemed broken on a dump without overflow).
    // A dump still being written is searched again as it grows, never done: what the last search
    // found is said (it said "still looking" for as long as the model ran).
    const data::DumpStore* store = context_->store();
    QString text;
    if (!store->isOpen())
        text = tr("No dump is open: nothing to look for an overflow in.");
    else if (births_->rowsSearched() == 0)
        text = tr("Still looking for where an overflow is born; try again in a moment.");
    else if (births_->busy() || store->dumpState() == QLatin1String("running"))
        text = tr("No overflow is born in the %L1 rows read so far: no op has finite inputs and "
                  "an output with Inf or NaN. The dump is still being written; it is looked at "
                  "again as it grows.")
                   .arg(births_->rowsSearched());
    else
        text =
            tr("No overflow is born in this dump: no op has finite inputs and an output with "
               "Inf or NaN.");
    showPassingMessage(text, 6000);
}

}  // namespace probe::widgets
