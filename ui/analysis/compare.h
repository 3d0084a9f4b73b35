// Comparing two dumps of the same model (fp32 and bf16, two devices, before and after a change)
// tensor by tensor, to find the first op whose numbers diverge. Either layout; tensor data is
// compared where both runs kept it in .bin files.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/dump_index.h"
#include "probe/format/statistic_csv.h"

namespace probe::analysis {

struct CompareOptions {
    // A tensor diverges when a statistic differs by more than atol + rtol * max(|reference|,
    // the reference elements' root mean square), or, when both runs dumped its data, when the
    // cosine similarity falls below minCosine.
    double rtol = 1e-3;
    double atol = 1e-6;
    double minCosine = 0.999;
    bool useTensorData = true;  // read the .bin files when both runs have them
};

// One tensor seen in both runs (matched by round, op name path (msprobe: entry name),
// input/output and index: op ids may differ between runs, the names do not).
struct TensorComparison {
    format::StatRow reference, candidate;
    double worstStatisticError = 0;  // the largest |difference| / (atol + rtol * scale), see CompareOptions
    std::string worstStatistic;      // "max", "min", "mean", "norm" or "nan/inf"
    // From the .bin data, when both have it.
    std::optional<double> cosine, maxAbsError, maxRelativeError;
    // Elements NaN or infinite in one run only: a divergence of their own, left out of the
    // measures above (which then describe the other elements).
    uint64_t nonFiniteDisagreements = 0;
    bool diverges = false;
    std::string why;
};

struct CompareResult {
    std::vector<TensorComparison> tensors;  // in the reference's execution order
    uint64_t onlyInReference = 0, onlyInCandidate = 0;
    std::optional<size_t> firstDivergence;  // index into `tensors`
    std::vector<std::string> problems;      // unreadable files and the like
};

CompareResult compareDumps(const DumpIndex& reference, const DumpIndex& candidate, const CompareOptions& options);

// A short report for a terminal: the counts, the first divergence and its neighbourhood.
std::string formatCompareReport(const CompareResult& result, size_t context = 5);
// Every compared tensor as CSV (one line each, with a header).
std::string compareResultCsv(const CompareResult& result);

}  // namespace probe::analysis
