// SPDX-License-Identifier: GPL-3.0-or-later
#include "statistics_series.h"

#include <cmath>
#include <limits>
#include <unordered_map>

namespace probe::data {
namespace {

void addPoint(PlotSeries& s, double x, const analysis::StatRecord& record, uint32_t row,
              analysis::Stat stat) {
    double y = std::numeric_limits<double>::quiet_NaN();
    if (record.has(stat)) {
        const double v = record.get(stat);
        if (std::isfinite(v)) {
            y = plottedValue(v);
            s.beyondPlot += y != v;
        } else {
            s.markers.push_back({x,
                                 std::isnan(v) ? PlotSeries::Mark::Nan
                                 : v > 0       ? PlotSeries::Mark::PosInf
                                               : PlotSeries::Mark::NegInf,
                                 row});
        }
    }
    s.x.push_back(x);
    s.y.push_back(y);
    s.rows.push_back(row);
}

QString profileLabel(int32_t round, analysis::Stat stat,
                     const analysis::DumpIndex::ProfileOptions& options) {
    return QStringLiteral("round %1 %2 of each op's %3")
        .arg(round)
        .arg(QString::fromLatin1(analysis::statName(stat)),
             options.outputs ? QStringLiteral("output") : QStringLiteral("input"));
}

}  // namespace

PlotSeries roundSeries(const analysis::DumpIndex& index, uint32_t slot, analysis::Stat stat) {
    PlotSeries s;
    if (slot >= index.slotCount()) return s;
    s.label = QStringLiteral("%1 %2 %3")
                  .arg(QString::fromStdString(index.describeOp(index.slot(slot).op)),
                       QString::fromStdString(index.describeSlot(slot)),
                       QString::fromLatin1(analysis::statName(stat)));
    const auto& rows = index.slot(slot).rows;
    s.x.reserve(static_cast<qsizetype>(rows.size()));
    s.y.reserve(static_cast<qsizetype>(rows.size()));
    for (uint32_t row : rows) addPoint(s, index.row(row).round, index.row(row), row, stat);
    return s;
}

ProfileSeries profileSeries(const analysis::DumpIndex& index, uint32_t process, int32_t round,
                            analysis::Stat stat,
                            const analysis::DumpIndex::ProfileOptions& options) {
    ProfileSeries p;
    const auto points = index.roundProfile(process, round, options);
    p.series.label = profileLabel(round, stat, options);
    p.series.x.reserve(static_cast<qsizetype>(points.size()));
    p.series.y.reserve(static_cast<qsizetype>(points.size()));
    uint32_t currentLayer = analysis::kNone;
    for (size_t i = 0; i < points.size(); ++i) {
        addPoint(p.series, static_cast<double>(i), index.row(points[i].row), points[i].row, stat);
        uint32_t layer = points[i].op;
        while (index.op(layer).parent != analysis::kNone) layer = index.op(layer).parent;
        if (layer != currentLayer) {
            currentLayer = layer;
            p.layerStarts.push_back(static_cast<double>(i));
            p.layerNames.push_back(QString::fromStdString(index.op(layer).name));
        }
    }
    return p;
}

PlotSeries alignedProfileSeries(const analysis::DumpIndex& index, uint32_t process, int32_t round,
                                analysis::Stat stat,
                                const analysis::DumpIndex::ProfileOptions& options,
                                const PlotSeries& reference) {
    PlotSeries s;
    s.label = profileLabel(round, stat, options);
    std::unordered_map<uint32_t, uint32_t> rowOfOp;  // op -> its row in `round`
    for (const auto& point : index.roundProfile(process, round, options))
        rowOfOp.emplace(point.op, point.row);
    s.x.reserve(reference.x.size());
    s.y.reserve(reference.x.size());
    for (qsizetype i = 0; i < reference.x.size(); ++i) {
        const uint32_t referenceRow = reference.rows[i];
        auto found = referenceRow == analysis::kNone
                         ? rowOfOp.end()
                         : rowOfOp.find(index.slot(index.row(referenceRow).slot).op);
        if (found != rowOfOp.end()) {
            addPoint(s, reference.x[i], index.row(found->second), found->second, stat);
        } else {  // the op did not run in this round
            s.x.push_back(reference.x[i]);
            s.y.push_back(std::numeric_limits<double>::quiet_NaN());
            s.rows.push_back(analysis::kNone);
        }
    }
    return s;
}

}  // namespace probe::data
