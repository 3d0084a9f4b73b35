// Column widths of the item views: fitted to the header and the rows on screen only. Qt's own
// resizeColumnsToContents asks up to a thousand rows of every column (all of them when the view
// is hidden), which a big model cannot afford on the GUI thread.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

class QAbstractItemView;
class QString;

namespace probe::widgets {

// Sets each column to what its header and the rows on screen need (at most `maxRows` rows from
// the top of the viewport), never narrower than its width for `sample` text when one is given
// (sample(column) returns "" for no minimum). Hidden columns are left alone.
void fitColumnsToVisibleRows(QAbstractItemView* view, QString (*sample)(int column) = nullptr,
                             int maxRows = 80);

// The width a column needs to show `text` in the view's font, with the cell's margins.
int columnWidthFor(const QAbstractItemView* view, const QString& text);

}  // namespace probe::widgets
