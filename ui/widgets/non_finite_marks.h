// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The marks of a series' values that are not finite (PlotSeries::markers), shared by the plots
// that draw statistics: a cross for NaN and a triangle for +Inf at the plot's top edge, one
// pointing down for -Inf at its bottom edge, in the series' colour, where its line breaks off.

#include <QColor>
#include <QString>

#include "statistics_series.h"

class QCPGraph;
class QCustomPlot;

namespace probe::widgets {

// Distance of the marks from the plot's edge (pixels).
constexpr int kNonFiniteMarkInset = 9;
// Several series with marks each keep theirs in a lane of its own, this far apart (pixels), so
// that the NaN of Max does not hide under the NaN of Norm in the same round; at most this many
// lanes (the later series share the last).
constexpr int kNonFiniteMarkLaneStep = 14;
constexpr int kNonFiniteMarkLanes = 5;

// The colour of a kind of mark in the legend: any series' marks.
inline const QColor kNonFiniteMarkKeyColor{70, 70, 70};

// Where a value that is not finite is drawn: the y (in plot coordinates) of the edge it goes to,
// in lane `lane` (0: nearest the edge).
double nonFiniteMarkY(const QCustomPlot* plot, double value, int lane = 0);
// The same for a marker's kind: the bottom edge for -Inf, the top for NaN and +Inf.
double nonFiniteMarkY(const QCustomPlot* plot, data::PlotSeries::Mark mark, int lane = 0);

// A graph of marks of one kind (cross, triangle up or down) in `color`, out of the legend.
QCPGraph* addNonFiniteMarkGraph(QCustomPlot* plot, data::PlotSeries::Mark mark,
                                const QColor& color);

// The legend's name of a kind of mark: "NaN (at the edge)", "+Inf (…)", "-Inf (…)".
QString nonFiniteMarkName(data::PlotSeries::Mark mark);
// The legend's key of a kind of mark: a graph without data, named so, in kNonFiniteMarkKeyColor,
// out of the legend until added to it.
QCPGraph* addNonFiniteMarkKey(QCustomPlot* plot, data::PlotSeries::Mark mark);

// Moves the legend's keys of the marks (NaN, +Inf, -Inf) after the series, which a plot adds
// in turn, each series' marks with it.
void listNonFiniteMarkKeysLast(QCustomPlot* plot);

class NonFiniteMarks {
public:
    // Makes the marks' graphs of `series` on `plot` (none for a kind the series has none of), in
    // `lane` (see kNonFiniteMarkLaneStep), each kind named once in the legend (by a key without
    // data, in kNonFiniteMarkKeyColor). Their places come with place(), once the axes are laid
    // out.
    void add(QCustomPlot* plot, const data::PlotSeries& series, const QColor& color, int lane = 0);
    // Puts the marks of `series` (the one given to add()) at the edges as the axes now are.
    void place(const QCustomPlot* plot, const data::PlotSeries& series) const;
    int lane() const { return lane_; }

private:
    QCPGraph* graphs_[3] = {nullptr, nullptr, nullptr};  // by PlotSeries::Mark
    int lane_ = 0;
};

}  // namespace probe::widgets
