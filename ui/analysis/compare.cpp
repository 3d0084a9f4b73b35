// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "analysis/atb_dump.h"
#include "probe/format/dtype.h"
#include "probe/format/tensor_bin.h"
#include "probe/format/tensor_stats.h"

namespace probe::analysis {
namespace {

// Round, op name path, output, index, and which occurrence of those in the run: sibling ops of
// the same name (a loop calling `select` twelve times) pair up in execution order.
using Key = std::tuple<int64_t, std::string, bool, std::string, int>;

std::vector<Key> keysOf(const std::vector<format::StatRow>& rows) {
    std::map<std::tuple<int64_t, std::string, bool, std::string>, int> seen;
    std::vector<Key> keys;
    keys.reserve(rows.size());
    for (const auto& row : rows) {
        const int occurrence = seen[{row.round, row.opName, row.isOutput, row.index}]++;
        keys.emplace_back(row.round, row.opName, row.isOutput, row.index, occurrence);
    }
    return keys;
}

// Elements of a .bin as doubles (nullopt when the dtype has no numeric reading).
std::optional<std::vector<double>> valuesOf(const format::BinFile& file) {
    auto dtype = format::dtypeFromCode(file.header.dtypeCode);
    if (!dtype || format::dtypeIsComplex(*dtype)) return std::nullopt;
    const size_t size = format::dtypeSize(*dtype);
    const size_t count = file.data.size() / size;
    std::vector<double> out(count);
    const uint8_t* p = file.data.data();
    for (size_t i = 0; i < count; ++i, p += size) {
        switch (*dtype) {
            case format::DType::Float: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
            case format::DType::Double: { double v; std::memcpy(&v, p, 8); out[i] = v; break; }
            case format::DType::Float16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = format::halfToFloat(v); break; }
            case format::DType::BF16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = format::bf16ToFloat(v); break; }
            case format::DType::Int8: out[i] = static_cast<int8_t>(*p); break;
            case format::DType::UInt8: case format::DType::Bool: out[i] = *p; break;
            case format::DType::Int16: { int16_t v; std::memcpy(&v, p, 2); out[i] = v; break; }
            case format::DType::UInt16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = v; break; }
            case format::DType::Int32: { int32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
            case format::DType::UInt32: { uint32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
            case format::DType::Int64: { int64_t v; std::memcpy(&v, p, 8); out[i] = static_cast<double>(v); break; }
            case format::DType::UInt64: { uint64_t v; std::memcpy(&v, p, 8); out[i] = static_cast<double>(v); break; }
            default: return std::nullopt;
        }
    }
    return out;
}

struct Side {
    std::vector<format::StatRow> rows;                  // execution order
    std::vector<std::string> csvOfRow;                  // the statistic.csv each row is in
    std::map<std::string, std::string> aliasTargets;    // "<statistic.csv>|<op id>_<file>" -> path
};

std::string fileNameOf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

Side readSide(const std::string& root) {
    Side side;
    forEachRow(root, [&](const RoundFile& file, const format::StatRow& row) {
        side.rows.push_back(row);
        side.csvOfRow.push_back(file.path);
        if (!row.tensorPath.empty())
            side.aliasTargets[file.path + "|" + row.opId + "_" + fileNameOf(row.tensorPath)] = row.tensorPath;
        return true;
    });
    return side;
}

// The data of a row's .bin, following a header-only alias ("<op id>_<file>") to the first copy
// in the same round. nullopt when the data was not kept (filter_level 2) or cannot be read.
std::optional<std::vector<double>> tensorValues(const Side& side, size_t index, std::string* error) {
    const format::StatRow& row = side.rows[index];
    auto file = format::readBinFile(row.tensorPath, error);
    if (!file) return std::nullopt;
    if (file->header.headerOnly()) {
        auto it = side.aliasTargets.find(side.csvOfRow[index] + "|" + file->header.alias);
        if (it == side.aliasTargets.end() || it->second == row.tensorPath) return std::nullopt;
        file = format::readBinFile(it->second, error);
        if (!file || file->header.headerOnly()) return std::nullopt;
    }
    return valuesOf(*file);
}

void compareStatistics(TensorComparison& c, const CompareOptions& options) {
    const char* names[] = {"max", "min", "mean", "norm"};
    const std::optional<double> a[] = {c.reference.max, c.reference.min, c.reference.mean, c.reference.norm};
    const std::optional<double> b[] = {c.candidate.max, c.candidate.min, c.candidate.mean, c.candidate.norm};
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
        const double error = std::fabs(x - y) / (options.atol + options.rtol * std::fabs(x));
        if (error > c.worstStatisticError) {
            c.worstStatisticError = error;
            c.worstStatistic = std::string(names[i]) + " " + format::formatStatValue(x) + " vs " + format::formatStatValue(y);
        }
    }
}

// Element by element. Elements that are NaN in both, or the same infinity in both, agree and
// are left out of the measures; a NaN or infinity in one run only is a divergence of its own.
void compareData(TensorComparison& c, const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return;
    double dot = 0, na = 0, nb = 0, maxAbs = 0, maxRel = 0;
    uint64_t nonFiniteDisagreements = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double x = a[i], y = b[i];
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

CompareResult compareAtbDumps(const std::string& referenceRoot, const std::string& candidateRoot,
                              const CompareOptions& options) {
    CompareResult result;
    const Side reference = readSide(referenceRoot), candidate = readSide(candidateRoot);
    const std::vector<Key> referenceKeys = keysOf(reference.rows), candidateKeys = keysOf(candidate.rows);
    std::map<Key, size_t> candidateByKey;
    for (size_t i = 0; i < candidate.rows.size(); ++i) candidateByKey.emplace(candidateKeys[i], i);
    size_t matched = 0;
    for (size_t r = 0; r < reference.rows.size(); ++r) {
        const format::StatRow& row = reference.rows[r];
        auto it = candidateByKey.find(referenceKeys[r]);
        if (it == candidateByKey.end()) {
            ++result.onlyInReference;
            continue;
        }
        ++matched;
        TensorComparison c;
        c.reference = row;
        c.candidate = candidate.rows[it->second];
        compareStatistics(c, options);
        if (c.reference.shape != c.candidate.shape) {
            c.diverges = true;
            c.why = "shape " + c.reference.shape + " vs " + c.candidate.shape;
        }
        if (options.useTensorData && !row.tensorPath.empty() && !c.candidate.tensorPath.empty() &&
            c.reference.shape == c.candidate.shape) {
            std::string error;
            auto a = tensorValues(reference, r, &error);
            auto b = a ? tensorValues(candidate, it->second, &error) : std::nullopt;
            if (a && b) compareData(c, *a, *b);
            else if (!error.empty() && result.problems.size() < 20) result.problems.push_back(error);
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
    result.onlyInCandidate = candidate.rows.size() - matched;
    return result;
}

namespace {

std::string describe(const TensorComparison& c) {
    char cosine[48] = "";
    if (c.cosine) std::snprintf(cosine, sizeof cosine, "  cos=%.6f", *c.cosine);
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
