// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "analysis/tensor_view.h"
#include "probe/format/dtype.h"
#include "probe/format/tensor_bin.h"
#include "probe/format/tensor_stats.h"

namespace probe::analysis {
namespace {

// Round, op name path, output, index, and which occurrence of those in the run: sibling ops of
// the same name (a loop calling `select` twelve times) pair up in execution order.
using Key = std::tuple<int64_t, std::string, bool, std::string, int>;

// One run's rows in execution order (process by process, round by round, as written).
struct Side {
    const DumpIndex& index;
    std::vector<uint32_t> rows;
    std::vector<format::StatRow> stats;
    std::vector<Key> keys;
};

format::StatRow rowOf(const DumpIndex& index, uint32_t row) {
    const StatRecord& r = index.row(row);
    const auto& slot = index.slot(r.slot);
    const auto& op = index.op(slot.op);
    format::StatRow out;
    out.devicePid = index.process(op.process).key;
    out.round = r.round;
    out.opName = index.layout() == DumpLayout::Msprobe ? op.id : op.namePath;
    out.opType = op.type;
    out.opId = op.id;
    out.isOutput = slot.isOutput;
    out.index = slot.index;
    out.dtype = index.text(r.dtype);
    out.format = index.text(r.format);
    out.shape = index.text(r.shape);
    std::optional<double>* values[] = {&out.max, &out.min, &out.mean, &out.norm};
    for (int i = 0; i < kStatCount; ++i)
        if (r.has(static_cast<Stat>(i))) *values[i] = r.get(static_cast<Stat>(i));
    return out;
}

Side sideOf(const DumpIndex& index) {
    Side side{index, {}, {}, {}};
    std::map<std::tuple<int64_t, std::string, bool, std::string>, int> seen;
    for (uint32_t p = 0; p < index.processCount(); ++p) {
        for (const auto& [round, rows] : index.process(p).rounds) {
            for (uint32_t row : rows) {
                format::StatRow stats = rowOf(index, row);
                const int occurrence = seen[{stats.round, stats.opName, stats.isOutput, stats.index}]++;
                side.keys.emplace_back(stats.round, stats.opName, stats.isOutput, stats.index, occurrence);
                side.rows.push_back(row);
                side.stats.push_back(std::move(stats));
            }
        }
    }
    return side;
}

// The decoded data of a row's .bin, following a header-only alias to the first copy. nullopt
// when the run kept no data for it (task statistics, filter_level 2, an msprobe .pt file).
std::optional<TensorData> tensorOf(const DumpIndex& index, uint32_t row, std::string* error) {
    if (!index.row(row).hasTensorFile) return std::nullopt;
    const std::string path = index.tensorPath(row, error);
    if (path.size() < 4 || path.compare(path.size() - 4, 4, ".bin") != 0) return std::nullopt;
    auto tensor = loadTensorFile(path, error);
    if (!tensor) return std::nullopt;
    if (tensor->header.headerOnly()) {
        const std::string first = index.resolveTensorAlias(row, tensor->header.alias);
        if (first.empty() || first == path || !loadAliasedData(*tensor, first, error)) return std::nullopt;
    }
    if (!tensor->hasValues() || format::dtypeIsComplex(*tensor->dtype)) return std::nullopt;
    return tensor;
}

void compareStatistics(TensorComparison& c, const CompareOptions& options) {
    const char* names[] = {"max", "min", "mean", "norm"};
    const std::optional<double> a[] = {c.reference.max, c.reference.min, c.reference.mean, c.reference.norm};
    const std::optional<double> b[] = {c.candidate.max, c.candidate.min, c.candidate.mean, c.candidate.norm};
    double rms = 0;  // norm / sqrt(count) of the reference
    if (c.reference.norm && std::isfinite(*c.reference.norm))
        if (const auto dims = format::parseShapeString(c.reference.shape))
            if (const auto count = format::elementCount(*dims); count && *count > 0)
                rms = *c.reference.norm / std::sqrt(static_cast<double>(*count));
    for (int i = 0; i < 4; ++i) {
        if (!a[i] || !b[i]) continue;
        const double x = *a[i], y = *b[i];
        if (!std::isfinite(x) || !std::isfinite(y)) {
            const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
            if (!same) {
                c.worstStatisticError = INFINITY;
                c.worstStatistic = std::string(names[i]) + " " + format::formatStatValue(x) + " vs " + format::formatStatValue(y);
            }
            continue;
        }
        // A statistic near zero (a mean of terms that cancel, the min of squares) is measured
        // against the size of the tensor's elements, their root mean square, rather than against
        // itself: a rounding difference there is no divergence.
        const double error = std::fabs(x - y) / (options.atol + options.rtol * std::max(std::fabs(x), rms));
        if (error > c.worstStatisticError) {
            c.worstStatisticError = error;
            c.worstStatistic = std::string(names[i]) + " " + format::formatStatValue(x) + " vs " + format::formatStatValue(y);
        }
    }
}

// Element by element. Elements that are NaN in both, or the same infinity in both, agree and
// are left out of the measures; a NaN or infinity in one run only is a divergence of its own.
void compareData(TensorComparison& c, const TensorData& a, const TensorData& b) {
    if (a.count != b.count) return;
    double dot = 0, na = 0, nb = 0, maxAbs = 0, maxRel = 0;
    uint64_t& nonFiniteDisagreements = c.nonFiniteDisagreements;
    for (uint64_t i = 0; i < a.count; ++i) {
        const double x = a.at(i), y = b.at(i);
        if (!std::isfinite(x) || !std::isfinite(y)) {
            const bool agree = (std::isnan(x) && std::isnan(y)) || x == y;
            nonFiniteDisagreements += agree ? 0 : 1;
            continue;
        }
        dot += x * y;
        na += x * x;
        nb += y * y;
        const double diff = std::fabs(x - y);
        maxAbs = std::max(maxAbs, diff);
        maxRel = std::max(maxRel, diff / std::max(std::fabs(x), 1e-12));
    }
    c.cosine = (na == 0 || nb == 0) ? (na == nb ? 1.0 : 0.0) : dot / std::sqrt(na * nb);
    c.maxAbsError = maxAbs;
    c.maxRelativeError = maxRel;
    if (nonFiniteDisagreements) {
        c.diverges = true;
        const std::string text = std::to_string(nonFiniteDisagreements) + " element(s) NaN/Inf in one run only";
        c.why = c.why.empty() ? text : c.why + ", " + text;
    }
}

}  // namespace

CompareResult compareDumps(const DumpIndex& referenceIndex, const DumpIndex& candidateIndex,
                           const CompareOptions& options) {
    CompareResult result;
    const Side reference = sideOf(referenceIndex), candidate = sideOf(candidateIndex);
    std::map<Key, size_t> candidateByKey;
    for (size_t i = 0; i < candidate.keys.size(); ++i) candidateByKey.emplace(candidate.keys[i], i);
    size_t matched = 0;
    for (size_t r = 0; r < reference.keys.size(); ++r) {
        auto it = candidateByKey.find(reference.keys[r]);
        if (it == candidateByKey.end()) {
            ++result.onlyInReference;
            continue;
        }
        ++matched;
        TensorComparison c;
        c.reference = reference.stats[r];
        c.candidate = candidate.stats[it->second];
        compareStatistics(c, options);
        if (c.reference.shape != c.candidate.shape) {
            c.diverges = true;
            c.why = "shape " + c.reference.shape + " vs " + c.candidate.shape;
        }
        if (options.useTensorData && c.reference.shape == c.candidate.shape) {
            std::string error;
            auto a = tensorOf(referenceIndex, reference.rows[r], &error);
            auto b = a ? tensorOf(candidateIndex, candidate.rows[it->second], &error) : std::nullopt;
            if (a && b) {
                c.reference.tensorPath = a->path;
                c.candidate.tensorPath = b->path;
                compareData(c, *a, *b);
            } else if (!error.empty() && result.problems.size() < 20) {
                result.problems.push_back(error);
            }
        }
        if (c.worstStatisticError > 1) {
            c.diverges = true;
            if (c.why.empty()) c.why = c.worstStatistic;
        }
        if (c.cosine && (std::isnan(*c.cosine) || *c.cosine < options.minCosine)) {
            c.diverges = true;
            char text[64];
            std::snprintf(text, sizeof text, "cosine %.6f", *c.cosine);
            c.why = c.why.empty() ? text : c.why + ", " + text;
        }
        if (c.diverges && !result.firstDivergence) result.firstDivergence = result.tensors.size();
        result.tensors.push_back(std::move(c));
    }
    result.onlyInCandidate = candidate.keys.size() - matched;
    return result;
}

namespace {

std::string describe(const TensorComparison& c) {
    char cosine[48] = "";
    if (c.cosine)
        std::snprintf(cosine, sizeof cosine, c.nonFiniteDisagreements ? "  cos=%.6f of the other elements" : "  cos=%.6f",
                      *c.cosine);
    const std::string dtypes =
        c.reference.dtype == c.candidate.dtype ? c.reference.dtype : c.reference.dtype + " vs " + c.candidate.dtype;
    return "round " + std::to_string(c.reference.round) + "  " + c.reference.opName + " (" + c.reference.opType + ") " +
           (c.reference.isOutput ? "output " : "input ") + c.reference.index + " [" + dtypes + "]: " +
           (c.why.empty() ? "matches" : c.why) + cosine;
}

}  // namespace

std::string formatCompareReport(const CompareResult& result, size_t context) {
    std::string out;
    size_t diverging = 0;
    for (const auto& t : result.tensors) diverging += t.diverges ? 1 : 0;
    out += "compared " + std::to_string(result.tensors.size()) + " tensors: " + std::to_string(diverging) + " diverge";
    if (result.onlyInReference || result.onlyInCandidate)
        out += "; " + std::to_string(result.onlyInReference) + " only in the reference, " +
               std::to_string(result.onlyInCandidate) + " only in the candidate";
    out += "\n";
    if (!result.firstDivergence) {
        out += "no tensor diverges\n";
    } else {
        const size_t first = *result.firstDivergence;
        out += "first divergence: " + describe(result.tensors[first]) + "\n";
        out += "around it, in execution order:\n";
        const size_t from = first >= context ? first - context : 0;
        const size_t to = std::min(result.tensors.size(), first + context + 1);
        for (size_t i = from; i < to; ++i)
            out += std::string(i == first ? "  > " : "    ") + describe(result.tensors[i]) + "\n";
    }
    for (const auto& p : result.problems) out += "note: " + p + "\n";
    return out;
}

std::string compareResultCsv(const CompareResult& result) {
    std::string out = "Execution Count,Op Name,Op Type,Input/Output,Index,Shape,Reference Max,Candidate Max,"
                      "Reference Mean,Candidate Mean,Reference Norm,Candidate Norm,Cosine,Max Abs Error,"
                      "Max Relative Error,Diverges,Why\n";
    auto number = [](std::optional<double> v) { return format::formatStatValue(v); };
    for (const auto& t : result.tensors) {
        out += std::to_string(t.reference.round) + "," + format::csvField(t.reference.opName) + "," +
               format::csvField(t.reference.opType) + "," +
               (t.reference.isOutput ? "output," : "input,") + t.reference.index + "," + t.reference.shape + "," +
               number(t.reference.max) + "," + number(t.candidate.max) + "," + number(t.reference.mean) + "," +
               number(t.candidate.mean) + "," + number(t.reference.norm) + "," + number(t.candidate.norm) + "," +
               number(t.cosine) + "," + number(t.maxAbsError) + "," + number(t.maxRelativeError) + "," +
               (t.diverges ? "yes" : "no") + "," + format::csvField(t.why) + "\n";
    }
    return out;
}

}  // namespace probe::analysis
