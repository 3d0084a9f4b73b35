// The data behind the statistics plots, taken from the DumpIndex: one statistic of one tensor
// against rounds, or of every op of a round in execution order. Non-finite values are gaps in
// the line and listed separately, so the plot can mark them where the line breaks.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>

#include <QString>
#include <QVector>

#include "analysis/dump_index.h"

namespace probe::data {

// The largest magnitude a plot can draw: QCustomPlot refuses an axis range beyond 1e250
// (QCPRange::maxRange), and kept its old one (values of 1e300 were drawn as a wedge over 0..1,
// those of 1e308 not at all). A finite value beyond is drawn at this size, its sign kept.
constexpr double kLargestPlotted = 1e249;
inline double plottedValue(double v) {
    return std::clamp(v, -kLargestPlotted, kLargestPlotted);
}

struct PlotSeries {
    enum class Mark { Nan, PosInf, NegInf };
    struct Marker {
        double x;
        Mark mark;
        uint32_t row;
    };
    QString label;
    QVector<double> x, y;     // y is NaN where the value is not finite or N/A (a gap)
    QVector<uint32_t> rows;   // the statistic row behind each point (kNone at a gap with no row)
    QVector<Marker> markers;  // non-finite values, in x order
    int beyondPlot = 0;       // finite values beyond kLargestPlotted, drawn at it
    bool empty() const { return x.isEmpty(); }
    // The marker at `x`: nullptr where the value is finite or not known.
    const Marker* markerAt(double at) const {
        const auto it = std::lower_bound(markers.begin(), markers.end(), at,
                                         [](const Marker& m, double v) { return m.x < v; });
        return it != markers.end() && it->x == at ? &*it : nullptr;
    }
};

// One statistic of a tensor (slot) in every round it has.
PlotSeries roundSeries(const analysis::DumpIndex& index, uint32_t slot, analysis::Stat stat);

struct ProfileSeries {
    PlotSeries series;
    // Where each layer-level op starts on the x axis, with its name (to shade and label).
    QVector<double> layerStarts;
    QVector<QString> layerNames;
};

// One statistic of each op's first output (or input) across a round, x = execution position.
ProfileSeries profileSeries(const analysis::DumpIndex& index, uint32_t process, int32_t round,
                            analysis::Stat stat,
                            const analysis::DumpIndex::ProfileOptions& options);

// The same statistic of another round, to overlay on `reference` (a profile of the same process):
// each op's value at the x the same op has in the reference, so that an op that ran in only one
// of the rounds does not shift the others. Where the op has no row in `round` the line has a gap
// (y NaN, row kNone); ops the reference lacks are left out.
PlotSeries alignedProfileSeries(const analysis::DumpIndex& index, uint32_t process, int32_t round,
                                analysis::Stat stat,
                                const analysis::DumpIndex::ProfileOptions& options,
                                const PlotSeries& reference);

}  // namespace probe::data
