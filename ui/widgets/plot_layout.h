// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How the app's plots are made and lay out what is around their data, in one place: the legend
// beside the axes rather than over the points, and axis labels that fit their axis.

#include <QString>

class QCPAxis;
class QCustomPlot;
class QWidget;

namespace probe::widgets {

// A plot that is not drawn while it has no size: a plot in a tab never shown, resized to nothing
// as the window is grabbed, drew into an empty buffer (two Qt warnings each, on every start).
QCustomPlot* newPlot(QWidget* parent);

// Puts the legend right of the axes, at the top of a column of its own, without a frame: it
// never covers a point (inside the axes, at the app's smallest size, it hid a comparison's
// diverging ops).
void placeLegendBesideAxes(QCustomPlot* plot);

// Sets the axis' label, shortened with "…" to the axis' length whenever the plot is laid out
// (a short plot's vertical label was cut off at both ends): a plot made smaller by the window or
// a splitter keeps a readable start of it.
void setAxisLabelFitting(QCPAxis* axis, const QString& label);

// Ticks on whole numbers only (rounds, positions): 2.5 and 7.5 read as rounds that do not exist.
void setWholeNumberTicks(QCPAxis* axis);

}  // namespace probe::widgets
