// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_series.h"

#include <cmath>
#include <map>

namespace probe::data {

using analysis::kNone;

namespace {

void addPoint(PlotSeries& series, double x, std::optional<double> value, uint32_t row) {
    series.x.push_back(x);
    series.rows.push_back(row);
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
    series.y.push_back(*value);
}

std::optional<double> statOf(const analysis::StatValues& values, analysis::Stat stat) {
    const int i = static_cast<int>(stat);
    return values.has(i) ? std::optional<double>(values.value[i]) : std::nullopt;
}

}  // namespace

StatisticPair statisticPair(const analysis::CompareResult& result, uint32_t candidateSlot,
                            analysis::Stat stat) {
    StatisticPair pair;
    pair.candidate.label = QObject::tr("this run");
    pair.reference.label = QObject::tr("reference");
    if (!result.candidate || candidateSlot >= result.candidate->slotCount()) return pair;
    const auto& candidate = *result.candidate;
    // Rounds in order: the compared tensors are in the reference's execution order.
    std::map<int32_t, uint32_t> byRound;
    for (uint32_t t = 0; t < result.tensors.size(); ++t) {
        const auto& tensor = result.tensors[t];
        if (candidate.row(tensor.candidateRow).slot != candidateSlot) continue;
        byRound.emplace(candidate.row(tensor.candidateRow).round, t);
    }
    for (const auto& [round, t] : byRound) {
        const auto& tensor = result.tensors[t];
        addPoint(pair.candidate, round, statOf(tensor.candidateStats, stat), tensor.candidateRow);
        addPoint(pair.reference, round, statOf(tensor.referenceStats, stat), tensor.candidateRow);
    }
    return pair;
}

ErrorProfile errorProfile(const analysis::CompareResult& result, RunComparison::Measure measure,
                          int32_t round) {
    ErrorProfile profile;
    profile.series.label = RunComparison::measureName(measure);
    const auto first = result.firstBornHere ? result.firstBornHere : result.firstInherited;
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
        profile.verdicts.push_back(static_cast<int>(
            op.verdict == analysis::OpVerdict::BornHere    ? RunComparison::Verdict::BornHere
            : op.verdict == analysis::OpVerdict::Inherited ? RunComparison::Verdict::Inherited
                                                           : RunComparison::Verdict::Matches));
    }
    return profile;
}

}  // namespace probe::data
