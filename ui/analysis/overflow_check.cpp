// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/overflow_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "analysis/msprobe_dump.h"
#include "analysis/tensor_view.h"
#include "probe/format/config_issue.h"
#include "probe/format/dtype.h"
#include "probe/format/overflow_rule.h"
#include "probe/format/statistic_csv.h"

namespace probe::analysis {
namespace {

using ordered_json = nlohmann::ordered_json;

bool isFloatingDtype(std::string_view name) {
    if (name.rfind("torch.", 0) == 0) name.remove_prefix(6);
    static const char* const kFloating[] = {"float", "float32",  "float16", "half",
                                            "bf16",  "bfloat16", "double",  "float64"};
    for (const char* f : kFloating)
        if (name == f) return true;
    return false;
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return text;
}

std::string formatValue(double v) {
    return format::formatStatValue(v);
}

// Short, for sentences: "1e+07", "65504", "inf".
std::string compact(double v) {
    if (!std::isfinite(v)) return format::formatStatValue(v);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    return buffer;
}

// Max and min of a row: from its statistics, or (task "tensor" writes none) from its tensor file.
struct Extremes {
    bool known = false;
    double max = 0, min = 0;
    bool nan = false;
};

// A 0-d tensor of an op-level row.
bool isZeroDim(const DumpIndex& index, const StatRecord& row) {
    return index.layout() == DumpLayout::Atb && index.text(row.shape).empty();
}
// A Python number an aten op was given (h * 5e5) is a 0-d double in op-level rows: a constant,
// which a float16 run keeps as it is. Out of float16's range it is no overflow: it made the op
// that overflows look as if its input already had. (A 0-d double an op made, a float64 sum, is
// told apart by birthsInRound: it was an output first.)
bool isWrappedNumber(const DumpIndex& index, const StatRecord& row) {
    return isZeroDim(index, row) && index.text(row.dtype) == "double";
}

// The forward entry of an msprobe backward entry: "Tensor.__pow__.0.forward" for
// "Tensor.__pow__.0.backward", "Module.fc.Linear.forward.0" for "Module.fc.Linear.backward.0";
// "" for any other entry.
std::string msprobeForwardOf(std::string_view id) {
    const size_t at = format::backwardMarkAt(id, '.');
    if (at == std::string_view::npos) return {};
    return std::string(id.substr(0, at)) + ".forward" +
           std::string(id.substr(at + std::string_view(".backward").size()));
}

class Checker {
public:
    Checker(const DumpIndex& index, const OverflowOptions& options)
        : index_(index), options_(options) {}

    // `constant`: a value the program gave as a number (isWrappedNumber), or that number made a
    // tensor of the op's dtype (the 0-d float that mul's to/copy_ makes of 5e5, an op given
    // numbers alone): not checked against the range limit, only for Inf and NaN.
    TensorVerdict verdict(uint32_t rowIndex, bool constant = false) {
        TensorVerdict v;
        v.row = rowIndex;
        const StatRecord& row = index_.row(rowIndex);
        const Extremes e = extremes(rowIndex);
        if (!e.known) return v;
        auto say = [&](const std::string& what) { v.why += (v.why.empty() ? "" : " ") + what; };
        v.why = format::overflowReason(e.max, e.min, e.nan);
        v.nan = e.nan || std::isnan(e.max) || std::isnan(e.min);
        const double limit = rangeLimitMax(options_.range);
        if (v.why.empty() && options_.range != RangeLimit::None &&
            isFloatingDtype(index_.text(row.dtype)) && !constant) {
            const char* name = rangeLimitName(options_.range);
            if (std::fabs(e.max) > limit) say("max=" + compact(e.max));
            if (std::fabs(e.min) > limit) say("min=" + compact(e.min));
            if (!v.why.empty()) v.why += std::string(" beyond ") + name + "'s " + compact(limit);
        }
        v.overflowed = !v.why.empty();
        return v;
    }

    // What tells an overflowed tensor apart from another (none for one that is not): its dtype,
    // shape and statistics (or, read from its file, extremes), bit for bit. An input with the
    // fingerprint of an output before it in the round may be that output; one without came in.
    std::optional<format::OverflowFingerprint> fingerprint(const TensorVerdict& v) {
        if (!v.overflowed) return std::nullopt;
        const StatRecord& row = index_.row(v.row);
        const Extremes e = extremes(v.row);
        return format::overflowFingerprint(
            index_.text(row.dtype), index_.text(row.shape), e.max, e.min,
            row.has(Stat::Mean) ? std::optional<double>(row.get(Stat::Mean)) : std::nullopt,
            row.has(Stat::Norm) ? std::optional<double>(row.get(Stat::Norm)) : std::nullopt);
    }

    bool ignored(uint32_t op) const {
        return format::isOverflowIgnoredType(index_.op(op).type, options_.ignore);
    }

    uint64_t unreadable() const { return unreadable_; }

    bool isWrappedNumber(const StatRecord& row) const {
        return probe::analysis::isWrappedNumber(index_, row);
    }
    bool isZeroDim(const StatRecord& row) const { return probe::analysis::isZeroDim(index_, row); }

private:
    Extremes extremes(uint32_t rowIndex) {
        const StatRecord& row = index_.row(rowIndex);
        if (row.has(Stat::Max) && row.has(Stat::Min)) {
            const double max = row.get(Stat::Max), min = row.get(Stat::Min);
            const double mean = row.has(Stat::Mean) ? row.get(Stat::Mean) : 0;
            return Extremes{true, max, min, format::statisticsShowNan(max, min, mean)};
        }
        if (!row.hasTensorFile || index_.layout() != DumpLayout::Atb || !options_.readTensorFiles)
            return {};
        auto cached = fromFiles_.find(rowIndex);
        if (cached != fromFiles_.end()) return cached->second;
        Extremes e;
        std::string error;
        const std::string path = index_.tensorPath(rowIndex, &error);
        // A piece at a time: a tensor of gigabytes costs a few MiB (it cost its size).
        if (const auto stats =
                path.empty() ? std::nullopt : statisticsOfTensorFile(path, true, &error))
            e = Extremes{true, stats->max, stats->min, stats->hasNan()};
        if (!e.known) ++unreadable_;
        fromFiles_.emplace(rowIndex, e);
        return e;
    }

    const DumpIndex& index_;
    const OverflowOptions& options_;
    std::unordered_map<uint32_t, Extremes> fromFiles_;
    uint64_t unreadable_ = 0;
};

struct OpInRound {
    std::vector<TensorVerdict> inputs, outputs;
    bool inputBad = false, outputBad = false;
    bool inputNan = false, outputNan = false;
    // An overflowed input or output descends from an overflow born of finite inputs this round.
    bool inputTainted = false, outputTainted = false;
    std::vector<format::OverflowFingerprint> inputPrints;  // of its overflowed inputs
    // Every input it has is a number the program gave (5e5): it makes a tensor of a constant.
    bool onlyNumbers = false;
    size_t firstBadOutput = 0;  // position of its first overflowed output among the round's rows
};

// A birth and the position, among its round's rows, of the op's first overflowed output.
struct BirthInRound {
    size_t position = 0;
    OverflowBirth birth;
};

// The births of one round of one process, in execution order, and the first input whose
// overflowed values came in from outside the dumped ops, with its position (see cameIn below).
struct RoundBirths {
    std::vector<BirthInRound> births;
    std::optional<std::pair<size_t, TensorVerdict>> firstCameIn;
};

RoundBirths birthsInRound(const DumpIndex& index, Checker& checker, uint32_t process, int32_t round,
                          const std::vector<uint32_t>& rows) {
    RoundBirths out;
    std::unordered_map<uint32_t, OpInRound> ops;
    // The overflowed outputs of the round so far (Checker::fingerprint): an overflowed input
    // that is none of them came in from outside the dumped ops (a parameter or buffer, the
    // model's input, an op not dumped); one that is may come from it (a mask's -inf into a
    // softmax). By kind of overflow alone, a mask's +Inf explained a weight's +Inf read after it.
    std::set<format::OverflowFingerprint> made;
    // Those descending from an overflow born of finite inputs (by an op not ignored): a NaN made
    // of such an Inf follows from that birth, one made of any other Inf (a mask's) is news.
    std::set<format::OverflowFingerprint> tainted;
    std::unordered_map<uint32_t, std::vector<format::OverflowFingerprint>>
        cameIn;  // ops with such an input, and those inputs
    // The values of the 0-d doubles ops output so far: an input of one of these values was made
    // by the program (x.double().sum()), not given as a number.
    std::unordered_set<double> madeDoubles;
    const auto maxOf = [](const StatRecord& row) {
        return row.has(Stat::Max) ? row.get(Stat::Max) : 0;
    };
    for (size_t position = 0; position < rows.size(); ++position) {
        const uint32_t rowIndex = rows[position];
        const StatRecord& row = index.row(rowIndex);
        const auto& slot = index.slot(row.slot);
        OpInRound& op = ops[slot.op];
        bool constant = false;
        if (!slot.isOutput) {  // an op's inputs are written before its outputs
            constant = checker.isWrappedNumber(row) && !madeDoubles.count(maxOf(row));
            op.onlyNumbers = constant && (op.inputs.empty() || op.onlyNumbers);
        } else {
            constant = op.onlyNumbers && checker.isZeroDim(row);
            if (!constant && checker.isWrappedNumber(row)) madeDoubles.insert(maxOf(row));
        }
        TensorVerdict v = checker.verdict(rowIndex, constant);
        const auto fingerprint = checker.fingerprint(v);
        if (slot.isOutput) {
            if (fingerprint) made.insert(*fingerprint);
            if (fingerprint && format::overflowOutputTainted(op.inputTainted, op.inputBad,
                                                             checker.ignored(slot.op))) {
                tainted.insert(*fingerprint);
                op.outputTainted = true;
            }
            if (v.overflowed && !op.outputBad) {
                op.outputBad = true;
                op.firstBadOutput = position;
            }
            op.outputNan = op.outputNan || v.nan;
            op.outputs.push_back(std::move(v));
        } else {
            if (fingerprint && !made.count(*fingerprint)) {
                cameIn[slot.op].push_back(*fingerprint);
                if (!out.firstCameIn) out.firstCameIn.emplace(position, v);
            }
            if (fingerprint) {
                op.inputPrints.push_back(*fingerprint);
                op.inputTainted = op.inputTainted || tainted.count(*fingerprint) != 0;
            }
            op.inputBad = op.inputBad || v.overflowed;
            op.inputNan = op.inputNan || v.nan;
            op.inputs.push_back(std::move(v));
        }
    }
    // A module whose op inside reads overflowed values that came in from outside, not through
    // the module's own inputs (a parameter, a buffer: msprobe counts a module's parameters among
    // its inputs), is not where they are born: they came in there (a NaN weight was blamed on the
    // Linear using it). Values made inside it (a mask's -inf into a softmax's NaN) leave it one.
    // An enclosing op that had those values as its own input is not fed inside (a Python number
    // -inf given to mul, which its child to_copy reads): they came in with its input.
    std::unordered_set<uint32_t> fedInside;
    for (const auto& [op, prints] : cameIn)
        for (uint32_t parent = index.op(op).parent; parent != kNone;
             parent = index.op(parent).parent) {
            const auto own = ops.find(parent);
            if (own != ops.end() &&
                std::any_of(prints.begin(), prints.end(), [&](const auto& print) {
                    return std::find(own->second.inputPrints.begin(), own->second.inputPrints.end(),
                                     print) != own->second.inputPrints.end();
                }))
                continue;
            fedInside.insert(parent);
        }
    // A backward op computes from the tensors its forward saved: overflowed values its forward
    // read or made in the round (its own inputs or outputs: a mask's -inf inside an attention
    // layer is none of them) are inherited there, not born (the backward of a pow that read a
    // NaN weight made NaN from finite gradients).
    const bool atb = index.layout() == DumpLayout::Atb;
    std::unordered_set<std::string> overflowedForward;
    // (An Inf that came in untainted, a mask's -inf, is none: its backward may make one of its
    // own, as sqrt's of the softmax's zeros.)
    for (const auto& [op, state] : ops)
        if ((state.inputNan || state.outputNan || state.inputTainted || state.outputTainted) &&
            (!atb || index.op(op).parent == kNone))
            overflowedForward.insert(atb ? index.op(op).namePath : index.op(op).id);
    const auto forwardOverflowed = [&](uint32_t op) {
        if (overflowedForward.empty()) return false;
        if (atb) {  // under "<layer>.backward", forward "<layer>"
            while (index.op(op).parent != kNone) op = index.op(op).parent;
            const std::string_view forward =
                format::forwardOfBackwardLayerOp(index.op(op).namePath);
            return !forward.empty() && overflowedForward.count(std::string(forward)) != 0;
        }
        const std::string forward = msprobeForwardOf(index.op(op).id);
        return !forward.empty() && overflowedForward.count(forward) != 0;
    };
    std::unordered_set<uint32_t> candidates;
    for (const auto& [op, state] : ops)
        if (format::overflowBornOf(state.inputBad, state.inputNan, state.inputTainted,
                                   state.outputBad, state.outputNan) &&
            !checker.ignored(op) && !fedInside.count(op) && !forwardOverflowed(op))
            candidates.insert(op);
    // The innermost op is where it is born: a module whose child is a birth is not one.
    std::unordered_set<uint32_t> enclosing;
    for (uint32_t op : candidates)
        for (uint32_t parent = index.op(op).parent; parent != kNone;
             parent = index.op(parent).parent)
            if (candidates.count(parent)) enclosing.insert(parent);
    std::vector<std::pair<size_t, uint32_t>> ordered;
    for (uint32_t op : candidates)
        if (!enclosing.count(op)) ordered.emplace_back(ops[op].firstBadOutput, op);
    std::sort(ordered.begin(), ordered.end());
    std::vector<BirthInRound>& births = out.births;
    for (const auto& [position, op] : ordered) {
        OverflowBirth birth;
        birth.process = process;
        birth.op = op;
        birth.round = round;
        OpInRound& state = ops[op];
        birth.nanOfInfinities = state.inputBad;
        for (const auto& v : state.outputs) {
            if (!v.overflowed || (birth.nanOfInfinities && !v.nan)) continue;
            birth.why = index.describeSlot(index.row(v.row).slot) + ": " + v.why;
            break;
        }
        birth.inputs = std::move(state.inputs);
        birth.outputs = std::move(state.outputs);
        births.push_back({position, std::move(birth)});
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// JSON as Python's json.dump(indent=2) writes it, NaN and infinities included.

void writePythonJson(const ordered_json& value, int indent, int depth, std::string& out) {
    const std::string pad(static_cast<size_t>(indent * (depth + 1)), ' '),
        close(static_cast<size_t>(indent * depth), ' ');
    if (value.is_object() || value.is_array()) {
        const bool object = value.is_object();
        if (value.empty()) {
            out += object ? "{}" : "[]";
            return;
        }
        out += object ? "{\n" : "[\n";
        bool first = true;
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (!first) out += ",\n";
            first = false;
            out += pad;
            if (object) out += ordered_json(it.key()).dump() + ": ";
            writePythonJson(*it, indent, depth + 1, out);
        }
        out += "\n" + close + (object ? "}" : "]");
        return;
    }
    if (value.is_number_float()) {
        const double v = value.get<double>();
        if (std::isnan(v)) {
            out += "NaN";
            return;
        }
        if (std::isinf(v)) {
            out += v > 0 ? "Infinity" : "-Infinity";
            return;
        }
    }
    out += value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

// dump.json read through quoteNonFiniteJsonTokens holds "NaN" strings where numbers were.
void restoreNonFinite(ordered_json& value) {
    if (value.is_structured()) {
        for (auto& item : value) restoreNonFinite(item);
        return;
    }
    if (value.is_string()) {
        const auto& s = value.get_ref<const std::string&>();
        if (s == "NaN" || s == "Infinity" || s == "-Infinity") value = *msprobeStatValue(value);
    }
}

ordered_json statValue(const StatRecord& row, Stat stat) {
    return row.has(stat) ? ordered_json(row.get(stat)) : ordered_json(nullptr);
}

ordered_json shapeJson(const std::string& text) {
    ordered_json dims = ordered_json::array();
    if (auto parsed = format::parseShapeString(text))
        for (int64_t d : *parsed) dims.push_back(d);
    return dims;
}

ordered_json atbTensorItem(const DumpIndex& index, const TensorVerdict& v) {
    const StatRecord& row = index.row(v.row);
    ordered_json item = ordered_json::object();
    item["type"] = "tensor";
    item["index"] = index.slot(row.slot).index;
    item["dtype"] = index.text(row.dtype);
    item["shape"] = shapeJson(index.text(row.shape));
    for (Stat s : {Stat::Max, Stat::Min, Stat::Mean, Stat::Norm})
        item[statName(s)] = statValue(row, s);
    if (row.hasTensorFile) item["tensor_path"] = index.tensorPath(v.row);
    if (v.overflowed) item["overflow"] = v.why;
    return item;
}

std::string rankDirectory(const DumpIndex& index, uint32_t process, int32_t step) {
    return index.root() + "/step" + std::to_string(step) + "/" + index.process(process).key;
}

class MsprobeFiles {
public:
    const ordered_json& dump(const std::string& dir) { return load(dir + "/dump.json", true); }
    const ordered_json& stack(const std::string& dir) { return load(dir + "/stack.json", false); }

private:
    const ordered_json& load(const std::string& path, bool quoted) {
        auto it = files_.find(path);
        if (it != files_.end()) return it->second;
        ordered_json parsed;
        if (auto text = format::readTextFile(path, nullptr)) {
            parsed = ordered_json::parse(quoted ? quoteNonFiniteJsonTokens(*text) : *text, nullptr,
                                         false);
            if (parsed.is_discarded()) parsed = nullptr;
        }
        return files_.emplace(path, std::move(parsed)).first->second;
    }
    std::map<std::string, ordered_json> files_;
};

ordered_json msprobeStack(const ordered_json& stack, const std::string& entry) {
    if (!stack.is_object()) return ordered_json::object();
    for (const auto& [key, group] : stack.items()) {
        if (!group.is_array() || group.size() < 2 || !group[0].is_array()) continue;
        for (const auto& name : group[0])
            if (name.is_string() && name.get_ref<const std::string&>() == entry) return group[1];
    }
    return ordered_json::object();
}

}  // namespace

std::optional<RangeLimit> parseRangeLimit(std::string_view name) {
    if (name == "float16" || name == "fp16" || name == "half") return RangeLimit::Float16;
    if (name == "bfloat16" || name == "bf16") return RangeLimit::BFloat16;
    if (name == "none") return RangeLimit::None;
    return std::nullopt;
}

const char* rangeLimitName(RangeLimit limit) {
    switch (limit) {
        case RangeLimit::Float16:
            return "float16";
        case RangeLimit::BFloat16:
            return "bfloat16";
        case RangeLimit::None:
            break;
    }
    return "none";
}

double rangeLimitMax(RangeLimit limit) {
    switch (limit) {
        case RangeLimit::Float16:
            return 65504.0;
        case RangeLimit::BFloat16:
            return 3.3895313892515355e38;  // (2 - 2^-7) * 2^127
        case RangeLimit::None:
            break;
    }
    return std::numeric_limits<double>::infinity();
}

OverflowReport findOverflowBirths(const DumpIndex& index, const OverflowOptions& options) {
    OverflowReport report;
    report.range = options.range;
    Checker checker(index, options);
    report.checked.assign(index.processCount(), false);
    report.problems = index.problems().size();
    for (uint32_t p = 0; p < index.processCount(); ++p) {
        if (!options.scope.holdsProcess(index.process(p).key)) continue;
        // A step is checked in the ranks that ran it.
        if (options.scope.round && !index.process(p).rounds.count(*options.scope.round)) continue;
        report.checked[p] = true;
        // Rounds counted per op interleave when a block runs twice a step: then every round is
        // looked at and the first birth is the one whose overflowed output was written first.
        const RowTimes times(index.process(p));
        const bool interleaved = !times.roundsInOrder();
        std::vector<std::pair<uint64_t, OverflowBirth>> births;  // with when it was written
        std::optional<std::pair<uint64_t, TensorVerdict>> firstBad;
        for (const auto& [round, rows] : index.process(p).rounds) {
            if (!options.scope.holdsRound(round)) continue;
            auto found = birthsInRound(index, checker, p, round, rows);
            for (auto& [position, birth] : found.births)
                births.emplace_back(times.of(round, position), std::move(birth));
            if (found.firstCameIn) {
                const uint64_t time = times.of(round, found.firstCameIn->first);
                if (!firstBad || time < firstBad->first)
                    firstBad.emplace(time, std::move(found.firstCameIn->second));
            }
            if (!interleaved && !births.empty() && !options.allBirths) break;
        }
        std::stable_sort(births.begin(), births.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        if (!options.allBirths && births.size() > 1) births.resize(1);
        // Values that came in before the first birth are said too (a NaN weight steps before
        // an op that makes its own).
        const bool cameInFirst = firstBad && (births.empty() || firstBad->first < births[0].first);
        for (auto& [time, birth] : births) report.births.push_back(std::move(birth));
        if (cameInFirst) {
            const TensorVerdict& bad = firstBad->second;
            const StatRecord& row = index.row(bad.row);
            const auto& slot = index.slot(row.slot);
            report.unexplained.push_back(
                index.process(p).key + ": overflowed values (" + bad.why + ") first appear in " +
                index.describeSlot(row.slot) + " of " + index.describeOp(slot.op, row.round) +
                " (" + (index.layout() == DumpLayout::Atb ? "round " : "step ") +
                std::to_string(row.round) + "), but no dumped op turns finite inputs into them" +
                (births.empty() ? "" : " before the birth above") +
                ": they came in from outside the dumped ops: a parameter or buffer the program "
                "changed (an optimizer step, an assignment), the model's input, a number the "
                "program passed, or an op that was not dumped (dump its children: save_child, or "
                "level L1/mix)");
        }
    }
    report.unreadableTensors = checker.unreadable();
    return report;
}

std::string formatOverflowReport(const DumpIndex& index, const OverflowReport& report) {
    const bool atb = index.layout() == DumpLayout::Atb;
    const auto checked = std::count(report.checked.begin(), report.checked.end(), true);
    std::string out = std::string("overflow check: ") + index.root() + " (" +
                      layoutName(index.layout()) + " layout; " + std::to_string(checked) +
                      (atb ? " process(es)" : " rank(s)") + "; counted: Inf, NaN" +
                      (report.range == RangeLimit::None
                           ? std::string()
                           : std::string(", values beyond ") + rangeLimitName(report.range) +
                                 "'s " + compact(rangeLimitMax(report.range))) +
                      ")\n";
    auto tensorLine = [&](const TensorVerdict& v) {
        const StatRecord& row = index.row(v.row);
        std::string line = "    " + index.describeSlot(row.slot) + ": " + index.text(row.dtype) +
                           " [" + index.text(row.shape) + "]";
        for (Stat s : {Stat::Max, Stat::Min, Stat::Mean, Stat::Norm}) {
            if (!row.has(s)) continue;
            line += " " + lower(statName(s)) + "=" + formatValue(row.get(s));
        }
        if (v.overflowed) line += "  <- " + v.why;
        return line + "\n";
    };
    MsprobeFiles files;
    for (const auto& birth : report.births) {
        const auto& op = index.op(birth.op);
        out += index.process(birth.process).key + ": born in " + (atb ? "round " : "step ") +
               std::to_string(birth.round) + ", op " + index.describeOp(birth.op, birth.round) +
               " [" + op.type + "]\n";
        if (!atb && op.parent != kNone) {
            std::string chain;
            for (uint32_t p = op.parent; p != kNone; p = index.op(p).parent)
                chain = index.op(p).id + (chain.empty() ? "" : " > ") + chain;
            out += "  in: " + chain + "\n";
        }
        const std::string within = report.range == RangeLimit::None
                                       ? std::string("finite")
                                       : std::string("finite, the floating tensors within ") +
                                             rangeLimitName(report.range) + "'s range";
        out += "  why: " + birth.why +
               (birth.inputs.empty()    ? " (no inputs dumped)"
                : birth.nanOfInfinities ? ", no input NaN (made of an input's Inf)"
                                        : ", every input " + within) +
               "\n";
        for (const auto& v : birth.inputs) {
            std::string line = tensorLine(v);
            // A number the program gave (5e5) beyond the range: kept as it is by a float16 run.
            const StatRecord& row = index.row(v.row);
            if (report.range != RangeLimit::None && isWrappedNumber(index, row) &&
                row.has(Stat::Max) && std::fabs(row.get(Stat::Max)) > rangeLimitMax(report.range))
                line.insert(line.size() - 1,
                            "  (a number the program gave: checked for Inf and NaN only)");
            out += line;
        }
        for (const auto& v : birth.outputs) out += tensorLine(v);
        if (!atb) {
            const auto stack =
                msprobeStack(files.stack(rankDirectory(index, birth.process, birth.round)), op.id);
            if (stack.is_array() && !stack.empty()) {
                out += "  stack:\n";
                size_t shown = 0;
                for (const auto& frame : stack) {
                    if (!frame.is_string() || shown++ >= 6) break;
                    std::string text = frame.get<std::string>();
                    for (auto& c : text)
                        if (c == '\n') c = ' ';
                    out += "    " + text + "\n";
                }
            }
        }
    }
    for (const auto& line : report.unexplained) out += line + "\n";
    std::vector<bool> reported(index.processCount(), false);
    for (const auto& b : report.births) reported[b.process] = true;
    for (uint32_t p = 0; p < index.processCount(); ++p)
        if (!reported[p] && p < report.checked.size() && report.checked[p] &&
            std::none_of(
                report.unexplained.begin(), report.unexplained.end(),
                [&](const std::string& s) { return s.rfind(index.process(p).key + ":", 0) == 0; }))
            out += index.process(p).key + (report.problems == 0
                                               ? ": no overflow\n"
                                               : ": no overflow in what could be read (see the "
                                                 "problems)\n");
    if (index.processCount() == 0 && report.problems > 0)
        out += "nothing in the dump could be read (see the problems)\n";
    if (report.unreadableTensors)
        out += "note: " + std::to_string(report.unreadableTensors) +
               " tensors have neither statistics nor a readable tensor file and were not checked\n";
    return out;
}

std::string anomalyRankKey(const DumpIndex& index, uint32_t process) {
    const std::string& key = index.process(process).key;
    if (key.size() > 4 && key.rfind("rank", 0) == 0 &&
        key.find_first_not_of("0123456789", 4) == std::string::npos)
        return "rank_" + key.substr(4);
    if (index.layout() == DumpLayout::Msprobe && index.processCount() == 1 &&
        key.rfind("proc", 0) == 0)
        return "rank_0";
    return "rank_" + key;
}

std::string anomalyAnalyzeJson(const DumpIndex& index, const OverflowReport& report) {
    const bool atb = index.layout() == DumpLayout::Atb;
    MsprobeFiles files;
    ordered_json result = ordered_json::object();
    for (const auto& birth : report.births) {
        const auto& op = index.op(birth.op);
        ordered_json node = ordered_json::object();
        node["op_name"] = atb ? op.namePath : op.id;
        ordered_json data = ordered_json::object();
        ordered_json stack = ordered_json::object();
        const bool backward = !atb && op.id.find(".backward") != std::string::npos;
        if (atb) {
            data["input_args"] = ordered_json::array();
            for (const auto& v : birth.inputs)
                data["input_args"].push_back(atbTensorItem(index, v));
            data["input_kwargs"] = ordered_json::object();
            data["output"] = ordered_json::array();
            for (const auto& v : birth.outputs) data["output"].push_back(atbTensorItem(index, v));
        } else {
            const std::string dir = rankDirectory(index, birth.process, birth.round);
            const ordered_json& dump = files.dump(dir);
            ordered_json entry;
            if (dump.is_object() && dump.contains("data") && dump["data"].is_object() &&
                dump["data"].contains(op.id))
                entry = dump["data"][op.id];
            // msprobe's keys: input_args/input_kwargs/output forward, input/output backward.
            const std::vector<std::string> keys =
                backward ? std::vector<std::string>{"input", "output"}
                         : std::vector<std::string>{"input_args", "input_kwargs", "output"};
            for (const auto& key : keys) {
                ordered_json value =
                    entry.is_object() && entry.contains(key)
                        ? entry[key]
                        : (key == "input_kwargs" ? ordered_json::object() : ordered_json::array());
                restoreNonFinite(value);
                data[key] = std::move(value);
            }
            stack = msprobeStack(files.stack(dir), op.id);
        }
        node["data_info"] = std::move(data);
        ordered_json construct = ordered_json::array();
        std::vector<std::string> chain;
        for (uint32_t p = birth.op; p != kNone; p = index.op(p).parent)
            chain.push_back(atb ? index.op(p).namePath : index.op(p).id);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) construct.push_back(*it);
        node["construct_info"] = std::move(construct);
        node["stack_info"] = std::move(stack);
        // Beyond msprobe's keys: where and why, for people and for the application.
        node[atb ? "round" : "step"] = birth.round;
        node["op_id"] = index.idIn(birth.op, birth.round);
        node["op_type"] = op.type;
        node["reason"] = birth.why;
        const std::string rank = anomalyRankKey(index, birth.process);
        if (!result.contains(rank)) result[rank] = ordered_json::array();
        result[rank].push_back(std::move(node));
    }
    std::string out;
    writePythonJson(result, 2, 0, out);
    return out;
}

}  // namespace probe::analysis
