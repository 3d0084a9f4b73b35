// SPDX-License-Identifier: GPL-3.0-or-later
#include "view_columns.h"

#include <algorithm>
#include <vector>

#include <QHeaderView>
#include <QTableView>
#include <QTreeView>

namespace probe::widgets {
namespace {

// The rows on screen, from the top of the viewport down (the first rows when it has no size yet).
std::vector<QModelIndex> visibleRows(const QAbstractItemView* view, int maxRows) {
    std::vector<QModelIndex> rows;
    const QAbstractItemModel* model = view->model();
    if (!model) return rows;
    const int height = view->viewport()->height();
    if (const auto* tree = qobject_cast<const QTreeView*>(view)) {
        QModelIndex index = tree->indexAt(QPoint(1, 1));
        if (!index.isValid()) index = model->index(0, 0);
        for (; index.isValid() && static_cast<int>(rows.size()) < maxRows;
             index = tree->indexBelow(index)) {
            const QRect rect = tree->visualRect(index);
            if (!rows.empty() && rect.top() > height) break;
            rows.push_back(index.siblingAtColumn(0));
        }
        return rows;
    }
    const int first = std::max(0, view->indexAt(QPoint(1, 1)).row());
    for (int row = first; row < model->rowCount() && static_cast<int>(rows.size()) < maxRows;
         ++row) {
        const QModelIndex index = model->index(row, 0);
        if (!rows.empty() && view->visualRect(index).top() > height) break;
        rows.push_back(index);
    }
    return rows;
}

QHeaderView* horizontalHeaderOf(QAbstractItemView* view) {
    if (auto* tree = qobject_cast<QTreeView*>(view)) return tree->header();
    if (auto* table = qobject_cast<QTableView*>(view)) return table->horizontalHeader();
    return nullptr;
}

}  // namespace

int columnWidthFor(const QAbstractItemView* view, const QString& text) {
    return view->fontMetrics().horizontalAdvance(text) +
           2 * view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view) + 8;
}

void fitColumnsToVisibleRows(QAbstractItemView* view, QString (*sample)(int column), int maxRows) {
    QHeaderView* header = horizontalHeaderOf(view);
    if (!header || !view->model()) return;
    const std::vector<QModelIndex> rows = visibleRows(view, maxRows);
    const auto* tree = qobject_cast<const QTreeView*>(view);
    const auto* table = qobject_cast<const QTableView*>(view);
    // A table's grid line takes a pixel of each cell: a width exactly the size hint elided
    // every text to fit it ("out…" for output), as QTableView::sizeHintForColumn knows.
    const int grid = table && table->showGrid() ? 1 : 0;
    for (int column = 0; column < header->count(); ++column) {
        if (header->isSectionHidden(column)) continue;
        int width = header->sectionSizeHint(column);
        if (sample) {
            const QString text = sample(column);
            if (!text.isEmpty()) width = std::max(width, columnWidthFor(view, text));
        }
        for (const QModelIndex& row : rows) {
            const QModelIndex cell = row.siblingAtColumn(column);
            int cellWidth = view->sizeHintForIndex(cell).width() + grid;
            // The first column of a tree is indented by the item's depth.
            if (tree && column == 0)
                for (QModelIndex parent = cell.parent(); parent.isValid(); parent = parent.parent())
                    cellWidth += tree->indentation();
            if (tree && column == 0 && tree->rootIsDecorated()) cellWidth += tree->indentation();
            width = std::max(width, cellWidth);
        }
        header->resizeSection(column, width);
    }
}

}  // namespace probe::widgets
