// Reading the gradient monitor's CSV files (probe_studio.grad_monitor, or msprobe monitor's
// grad_reduced_<a>-<b>.csv) and finding the gradients that misbehave: spikes against a running
// median, vanishing and exploding norms, NaN. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace probe::analysis {

// One row: one parameter's gradient at one optimizer step.
struct GradSample {
    int64_t step = 0;
    double norm = std::numeric_limits<double>::quiet_NaN();
    double max = std::numeric_limits<double>::quiet_NaN();
    double min = std::numeric_limits<double>::quiet_NaN();
    double mean = std::numeric_limits<double>::quiet_NaN();
    double nans = 0;  // NaN elements (0 when the file has no nans column)
    bool hasNorm = false;
};

struct GradSeries {
    std::string rank;                 // "rank0"
    std::string name;                 // the parameter's name ("layers.0.mlp.weight")
    std::vector<GradSample> samples;  // by step
};

struct GradMonitorData {
    std::vector<std::string> files;  // the CSV files read
    std::vector<GradSeries> series;  // by rank, then in order of first appearance
    std::vector<std::string> problems;
};

// Every grad_reduced_*.csv below `dir` (at most a few levels deep). The rank is taken from a
// directory name holding rank<R> ("rank0", msprobe's "<time>-rank0-<id>"), else "rank0".
// nullopt with a message when `dir` holds none.
std::optional<GradMonitorData> readGradMonitor(const std::string& dir, std::string* error);

struct GradThresholds {
    double spike = 10;              // a norm beyond this many times its running median
    double vanish = 1e-8;           // a norm below this
    std::optional<double> explode;  // a norm above this (off unless set)
    int window = 20;                // steps in the running median
    int minHistory = 3;             // steps before spikes are judged
};

struct GradFinding {
    enum class Kind { Nan, Inf, Spike, Exploding, Vanishing };
    Kind kind = Kind::Nan;
    std::string rank, parameter;
    int64_t step = 0;      // the first step it happened at
    int64_t lastStep = 0;  // vanishing over a run of steps: the last one (else = step)
    int64_t steps = 1;     // how many steps of that run
    double norm = 0;
    double reference = 0;  // spike: the running median; exploding/vanishing: the threshold
    double nans = 0;
};
const char* gradFindingKindName(
    GradFinding::Kind kind);  // "nan", "inf", "spike", "exploding", "vanishing"

// Findings sorted by step, rank, parameter. A vanishing parameter is one finding per run of
// consecutive steps.
std::vector<GradFinding> analyzeGradients(const GradMonitorData& data,
                                          const GradThresholds& thresholds);

std::string formatGradFinding(const GradFinding& finding);
std::string gradFindingsJson(const GradMonitorData& data, const std::vector<GradFinding>& findings);

}  // namespace probe::analysis
