// The data behind the comparison plots, taken from a CompareResult: a statistic of one tensor of
// the shown dump and of its counterpart in the reference, against rounds; and an error measure
// of every compared op in execution order (the reference's), with where the first divergence
// is. Points carry the shown dump's row, so that a click selects that op and round.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>

#include <QVector>

#include "compare_runs.h"
#include "statistics_series.h"

namespace probe::data {

struct StatisticPair {
    PlotSeries candidate, reference;  // x = round; rows are the shown dump's
};
// `stat` of the shown dump's tensor `candidateSlot` in each of its rounds, and in the compared
// ones, of the reference's tensor it was compared with (rows: the shown dump's).
StatisticPair statisticPair(const RunComparison& comparison, uint32_t candidateSlot,
                            analysis::Stat stat);

struct ErrorProfile {
    PlotSeries series;  // x = position of the compared op in execution order; y = the measure
    QVector<uint32_t> comparedOps;  // into result.ops, one per point
    // RunComparison::Verdict each point is drawn with: NotCompared (no disc) for an op whose
    // divergence is born inside it, its child being the birth.
    QVector<int> verdicts;
    double firstDivergenceX = -1;  // where the first divergence is, -1 when none
};
// The measure of every compared op of `round` (-1: every round) in execution order; points
// where it cannot be had (cosine without data) are gaps.
ErrorProfile errorProfile(const analysis::CompareResult& result, RunComparison::Measure measure,
                          int32_t round);
// The profiles of every round for each measure (indexed by RunComparison::Measure). What does
// not depend on the measure (x, rows, compared ops, verdicts) is shared between them.
std::array<ErrorProfile, RunComparison::kMeasureCount> errorProfiles(
    const analysis::CompareResult& result);

}  // namespace probe::data
