// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_series.h"

#include <cmath>

namespace probe::data {

using analysis::kNone;

namespace {

// The value of a point whose x and row the series already has: a gap where it is not finite or
// cannot be had, marked where it is NaN or infinite.
void addValue(PlotSeries& series, double x, std::optional<double> value, uint32_t row) {
    if (!value || !std::isfinite(*value)) {
        series.y.push_back(std::nan(""));
        if (value) {
            const auto mark = std::isnan(*value) ? PlotSeries::Mark::Nan
                              : *value > 0       ? PlotSeries::Mark::PosInf
                                                 : PlotSeries::Mark::NegInf;
            series.markers.push_back({x, mark, row});
        }
        return;
    }
    series.y.push_back(plottedValue(*value));
    series.beyondPlot += series.y.back() != *value;
}

void addPoint(PlotSeries& series, double x, std::optional<double> value, uint32_t row) {
    series.x.push_back(x);
    series.rows.push_back(row);
    addValue(series, x, value, row);
}

std::optional<double> statOf(const analysis::StatValues& values, analysis::Stat stat) {
    const int i = static_cast<int>(stat);
    return values.has(i) ? std::optional<double>(values.value[i]) : std::nullopt;
}

}  // namespace

StatisticPair statisticPair(const RunComparison& comparison, uint32_t candidateSlot,
                            analysis::Stat stat) {
    StatisticPair pair;
    pair.candidate.label = QObject::tr("this run");
    pair.reference.label = QObject::tr("reference");
    const analysis::CompareResult* result = comparison.result();
    if (!result || !result->candidate || candidateSlot >= result->candidate->slotCount())
        return pair;
    const auto& candidate = *result->candidate;
    // The slot's rows are in round order; a round's first compared row stands for it, else its
    // first row: the rounds of this run the reference has not (a run that went on to NaN) are
    // drawn too, without a reference point (the plot stopped at the reference's last round).
    const auto& rows = candidate.slot(candidateSlot).rows;
    for (size_t i = 0; i < rows.size();) {
        const int32_t round = candidate.row(rows[i]).round;
        size_t end = i;
        uint32_t compared = kNone;
        for (; end < rows.size() && candidate.row(rows[end]).round == round; ++end)
            if (compared == kNone && comparison.comparedTensor(rows[end]) != kNone)
                compared = rows[end];
        if (compared != kNone) {
            const uint32_t t = comparison.comparedTensor(compared);
            addPoint(pair.candidate, round, statOf(result->candidateStats(t), stat), compared);
            addPoint(pair.reference, round, statOf(result->referenceStats(t), stat), compared);
        } else {
            const auto& record = candidate.row(rows[i]);
            addPoint(pair.candidate, round,
                     record.has(stat) ? std::optional<double>(record.get(stat)) : std::nullopt,
                     rows[i]);
        }
        i = end;
    }
    return pair;
}

ErrorProfile errorProfile(const analysis::CompareResult& result, RunComparison::Measure measure,
                          int32_t round) {
    ErrorProfile profile;
    profile.series.label = RunComparison::measureName(measure);
    const auto first = result.firstBornHere ? result.firstBornHere : result.firstInherited;
    if (round < 0) {  // every op: no room to spare (hundreds of thousands of points)
        const auto n = static_cast<qsizetype>(result.ops.size());
        profile.series.x.reserve(n);
        profile.series.y.reserve(n);
        profile.series.rows.reserve(n);
        profile.comparedOps.reserve(n);
        profile.verdicts.reserve(n);
    }
    for (uint32_t i = 0; i < result.ops.size(); ++i) {
        const auto& op = result.ops[i];
        if (round >= 0 && op.candidateRound != round) continue;
        const double x = profile.series.x.size();
        if (first && *first == i) profile.firstDivergenceX = x;
        const uint32_t decider = op.cause != kNone ? op.cause
                                 : op.tensorCount  ? op.firstTensor
                                                   : kNone;
        addPoint(profile.series, x, RunComparison::opMeasure(result, i, measure),
                 decider == kNone ? kNone : result.tensors[decider].candidateRow);
        profile.comparedOps.push_back(i);
        // An op whose divergence is born inside it (a layer) is no birth of its own: drawn as
        // one, at the layer's start, it read as a divergence born before the first.
        profile.verdicts.push_back(static_cast<int>(RunComparison::drawnVerdictFor(op)));
    }
    return profile;
}

std::array<ErrorProfile, RunComparison::kMeasureCount> errorProfiles(
    const analysis::CompareResult& result) {
    std::array<ErrorProfile, RunComparison::kMeasureCount> profiles;
    profiles[0] = errorProfile(result, static_cast<RunComparison::Measure>(0), -1);
    const ErrorProfile& first = profiles[0];
    for (int m = 1; m < RunComparison::kMeasureCount; ++m) {
        const auto measure = static_cast<RunComparison::Measure>(m);
        ErrorProfile& profile = profiles[m];
        profile = first;  // x, rows, compared ops and verdicts shared (implicitly)
        profile.series.label = RunComparison::measureName(measure);
        profile.series.y = QVector<double>();
        profile.series.y.reserve(first.series.x.size());
        profile.series.markers = {};
        for (int i = 0; i < first.comparedOps.size(); ++i)
            addValue(profile.series, first.series.x[i],
                     RunComparison::opMeasure(result, first.comparedOps[i], measure),
                     first.series.rows[i]);
    }
    return profiles;
}

}  // namespace probe::data
