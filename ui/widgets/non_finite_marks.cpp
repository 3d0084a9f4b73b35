// SPDX-License-Identifier: GPL-3.0-or-later
#include "non_finite_marks.h"

#include <algorithm>
#include <cmath>

#include <qcustomplot.h>

namespace probe::widgets {

double nonFiniteMarkY(const QCustomPlot* plot, double value, int lane) {
    const QRect rect = plot->axisRect()->rect();
    const int inset =
        kNonFiniteMarkInset + std::clamp(lane, 0, kNonFiniteMarkLanes - 1) * kNonFiniteMarkLaneStep;
    return plot->yAxis->pixelToCoord(std::isinf(value) && value < 0 ? rect.bottom() - inset
                                                                    : rect.top() + inset);
}

double nonFiniteMarkY(const QCustomPlot* plot, data::PlotSeries::Mark mark, int lane) {
    return nonFiniteMarkY(plot, mark == data::PlotSeries::Mark::NegInf ? -INFINITY : NAN, lane);
}

QCPGraph* addNonFiniteMarkGraph(QCustomPlot* plot, data::PlotSeries::Mark mark,
                                const QColor& color) {
    const QCPScatterStyle::ScatterShape shapes[] = {
        QCPScatterStyle::ssCross, QCPScatterStyle::ssTriangle, QCPScatterStyle::ssTriangleInverted};
    const int m = static_cast<int>(mark);
    QCPGraph* g = plot->addGraph();
    // Over what the plot says on itself (a note along its top, on a ground of its own, hid them)
    // and over its lines; still clipped to the axis rect, under the legend.
    g->setLayer(QStringLiteral("axes"));
    g->setLineStyle(QCPGraph::lsNone);
    // In the series' colour: with several series overlaid, whose NaN it is shows.
    g->setScatterStyle(
        QCPScatterStyle(shapes[m], QPen(color, 2), m == 0 ? Qt::NoBrush : QBrush(color), 11));
    g->removeFromLegend();
    return g;
}

QString nonFiniteMarkName(data::PlotSeries::Mark mark) {
    switch (mark) {
        case data::PlotSeries::Mark::Nan:
            return QStringLiteral("NaN (at the edge)");
        case data::PlotSeries::Mark::PosInf:
            return QStringLiteral("+Inf (at the edge)");
        case data::PlotSeries::Mark::NegInf:
            return QStringLiteral("-Inf (at the edge)");
    }
    return {};
}

QCPGraph* addNonFiniteMarkKey(QCustomPlot* plot, data::PlotSeries::Mark mark) {
    QCPGraph* key = addNonFiniteMarkGraph(plot, mark, kNonFiniteMarkKeyColor);
    key->setName(nonFiniteMarkName(mark));
    return key;
}

void listNonFiniteMarkKeysLast(QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    QList<QCPAbstractLegendItem*> keys;
    for (int m = 0; m < 3; ++m) {
        const QString name = nonFiniteMarkName(static_cast<data::PlotSeries::Mark>(m));
        for (int i = 0; i < legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
                item && item->plottable()->name() == name)
                keys << item;
    }
    if (keys.isEmpty()) return;
    for (QCPAbstractLegendItem* key : keys) legend->take(key);
    legend->simplify();
    for (QCPAbstractLegendItem* key : keys) legend->addItem(key);
}

void NonFiniteMarks::add(QCustomPlot* plot, const data::PlotSeries& series, const QColor& color,
                         int lane) {
    lane_ = lane;
    for (int m = 0; m < 3; ++m) {
        bool any = false;
        for (const auto& marker : series.markers) any = any || static_cast<int>(marker.mark) == m;
        if (!any) continue;
        const auto mark = static_cast<data::PlotSeries::Mark>(m);
        graphs_[m] = addNonFiniteMarkGraph(plot, mark, color);
        // In the legend once per kind shown (a triangle on the top edge read as a value there),
        // by a key of its own, without data, in no series' colour: the first series' marks named
        // there read as that series' alone.
        const QString name = nonFiniteMarkName(mark);
        bool listed = false;
        for (int i = 0; i < plot->legend->itemCount() && !listed; ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
                listed = item->plottable()->name() == name;
        if (!listed) addNonFiniteMarkKey(plot, mark)->addToLegend();
    }
}

void NonFiniteMarks::place(const QCustomPlot* plot, const data::PlotSeries& series) const {
    for (int m = 0; m < 3; ++m) {
        if (!graphs_[m]) continue;
        const auto mark = static_cast<data::PlotSeries::Mark>(m);
        const double edge = nonFiniteMarkY(plot, mark, lane_);
        QVector<double> x, y;
        for (const auto& marker : series.markers) {
            if (marker.mark != mark) continue;
            x.push_back(marker.x);
            y.push_back(edge);
        }
        graphs_[m]->setData(x, y, true);
    }
}

}  // namespace probe::widgets
