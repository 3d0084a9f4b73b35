// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The few looks the application's pages and panes share, so they are set in one place.

#include <QString>

class QLabel;
class QLayout;
class QScrollArea;
class QWidget;

namespace probe::widgets {

// Bold, and `scale` times the widget's current point size.
void setHeadingFont(QWidget* widget, double scale);

// A pane's title (the op or tensor shown): bold, selectable, and never widening the window
// however long the text is.
QLabel* makePaneTitle(const QString& text, QWidget* parent);

// "1 problem", "3 problems": a count with its noun in the right number (Qt's %n needs a
// translation to say more than "problem(s)").
QString countOf(qsizetype count, const QString& one, const QString& many);

// Lays `column` out on `page` centred, at most a readable line length wide on a wide window.
void setReadableColumn(QWidget* page, QLayout* column);
// `page` in a frameless scroll area that gives it the window's width and scrolls it up and down
// when the window is lower than it: its texts keep the lines they wrap to (a small window cut
// the start page's descriptions to their first line).
QScrollArea* scrollable(QWidget* page);

}  // namespace probe::widgets
