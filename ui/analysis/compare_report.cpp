// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare_report.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>
#include <xlsxwriter.h>

#include "probe/format/file_util.h"
#include "probe/format/json_input.h"
#include "probe/format/statistic_csv.h"

namespace probe::analysis {
namespace {

const char* kStatNames[] = {"max", "min", "mean", "norm"};

// Shortest text that reads back as the same double ("0.1", "1e-08"); nan, inf, -inf.
std::string shortest(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, v).ptr;
    return std::string(text, end);
}

std::string optionalNumber(const std::optional<double>& v, const char* missing = "N/A") {
    return v ? shortest(*v) : missing;
}

std::string plural(uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "10x8" -> "[10, 8]" (msprobe's shape column), "" -> "[]".
std::string msprobeShape(const std::string& shape) {
    std::string out = "[";
    for (char c : shape) out += c == 'x' ? std::string(", ") : std::string(1, c);
    return out + "]";
}

std::string rowText(const DumpIndex& index, uint32_t row, bool shape) {
    const auto& r = index.row(row);
    return index.text(shape ? r.shape : r.dtype);
}

// The module an op ran in ("" at the top): its parent's id (msprobe: the module's entry).
std::string parentOf(const DumpIndex& index, uint32_t op) {
    const uint32_t parent = index.op(op).parent;
    return parent == kNone ? std::string() : index.op(parent).id;
}

// The in-place calls made inside a module's msprobe entry, at any depth ("Tensor.add_.0.forward",
// "Tensor.__iadd__.0.forward", "Tensor.__setitem__.0.forward", a collective), for the run
// named: msprobe records a module's inputs as it returns, so one of these may have changed them
// after the call began. (As the code-level API tells them apart, by their names.)
bool isInPlaceCall(const std::string& id) {  // Kind.api.N.forward
    if (id.rfind("Distributed.", 0) == 0) return true;
    const size_t first = id.find('.');
    if (first == std::string::npos) return false;
    const size_t count = id.rfind('.', id.rfind('.') - 1);
    if (count == std::string::npos || count <= first) return false;
    const std::string api = id.substr(first + 1, count - first - 1);
    if (api == "__setitem__") return true;
    const bool dunder = api.size() > 4 && api.rfind("__", 0) == 0;
    if (dunder)
        return api[2] == 'i' && api != "__init__" && api != "__index__" && api != "__int__" &&
               api != "__invert__";
    return api.size() > 1 && api.back() == '_';
}

void addInPlaceCallsInside(const DumpIndex& index, uint32_t module, const std::string& run,
                           std::vector<std::string>& calls) {
    if (module == kNone || index.op(module).id.rfind("Module.", 0) != 0) return;
    std::vector<uint32_t> toVisit(index.op(module).children);
    for (size_t next = 0; next < toVisit.size(); ++next) {
        const auto& op = index.op(toVisit[next]);
        if (isInPlaceCall(op.id)) calls.push_back(run + " " + op.id);
        toVisit.insert(toVisit.end(), op.children.begin(), op.children.end());
    }
}

// msprobe names an API call by its count (Tensor.__mul__.0), not by where it ran: when the runs
// took different paths, a pair may be two different calls. Where each was made ("the reference
// made it in Module.blk.Block.forward.0, the candidate outside any module"), "" for the same
// place or an op-level dump.
std::string differentCalls(const CompareResult& result, uint32_t o) {
    if (result.reference->layout() != DumpLayout::Msprobe) return {};
    const OpComparison& op = result.ops[o];
    const std::string referenceParent = parentOf(*result.reference, op.referenceOp),
                      candidateParent = parentOf(*result.candidate, op.candidateOp);
    if (referenceParent == candidateParent) return {};
    const auto where = [](const std::string& parent) {
        return parent.empty() ? std::string("outside any module") : "in " + parent;
    };
    return "the reference made it " + where(referenceParent) + ", the candidate " +
           where(candidateParent);
}

void describeFirst(std::string& out, const CompareResult& result, uint32_t o, const char* title) {
    const OpComparison& op = result.ops[o];
    out += std::string(title) + result.describeOp(o) + "\n";
    if (op.cause != kNone)
        out += "  " + result.describeTensor(op.cause) + ": " + result.explain(op.cause) + "\n";
    // Two different calls (differentCalls): no explanation of the difference below holds.
    const bool byCount = result.reference->layout() == DumpLayout::Msprobe;
    if (const std::string where = differentCalls(result, o); !where.empty()) {
        out += "  (these are two different calls: " + where +
               ": the runs took different paths here, and the entries after it may pair up calls "
               "that do not correspond)\n";
        return;
    }
    if (op.cause != kNone) {
        const TensorComparison& t = result.tensors[op.cause];
        const auto& slot = result.reference->slot(result.reference->row(t.referenceRow).slot);
        // Ops that ran in one run only, just before: the likelier cause (a gelu in place of a
        // relu, a layer skipped) than an op that was not dumped, and named so above them (it
        // blamed "an op that was not dumped" above a list of the ops that were).
        const auto before = result.unpairedBefore(o, 3);
        if (op.fedBack()) {
            out += std::string(t.isOutput ? "  (an op inside it had an input from outside the "
                                            "model, new in this step"
                                          : "  (it came from outside the model, new in this step") +
                   ": taken as made by the program from what ran after " +
                   result.describeOp(op.inheritedFrom) +
                   " diverged, as a generated token or an optimizer step is; data changed there "
                   "for another reason would look the same)\n";
        } else if (op.carriedInState()) {
            out += "  (its inputs match: taken as carried in its own state since " +
                   result.describeOp(op.inheritedFrom) +
                   " diverged, its parameters updated from gradients that diverged or a cache it "
                   "keeps; its parameters changed for another reason would look the same)\n";
        } else if (op.verdict == OpVerdict::Inherited && t.source && op.inheritedFrom != kNone) {
            // Inherited though its input came from no compared op: a backward op, from what its
            // forward saved (it said "no compared op produced it", then "received from").
            out += "  (a backward op computes from what its forward saved, and " +
                   result.describeOp(op.inheritedFrom) + " diverged)\n";
        } else if (!t.isOutput && t.source && slot.index.rfind("parameters", 0) == 0) {
            out += "  (a parameter of the module: it differs where the module uses it)\n";
        } else if (!t.isOutput && t.source && t.producer != kNone) {
            out += "  (this input differs from the tensor it came from, " +
                   result.describeOp(result.tensors[t.producer].op) + " " +
                   result.describeTensor(t.producer) + ", which matches: ";
            std::vector<std::string> inPlace;
            if (byCount) {
                addInPlaceCallsInside(*result.candidate, op.candidateOp, "candidate", inPlace);
                addInPlaceCallsInside(*result.reference, op.referenceOp, "reference", inPlace);
            }
            if (!inPlace.empty()) {
                out +=
                    "msprobe records a module's inputs as it returns, and an in-place call "
                    "inside it may have changed this one:";
                for (const auto& call : inPlace) out += " " + call;
                out += ")\n";
            } else {
                out += before.empty()
                           ? "an op that was not dumped changed it, a cast for example)\n"
                           : "an op in between changed it: one that ran in one run only "
                             "(below), or one that was not dumped)\n";
            }
        } else if (!t.isOutput && t.source) {
            out += std::string("  (this input differs and no compared op produced it: ") +
                   (before.empty() ? "" : "an op that ran in one run only (below), ") +
                   "a parameter, a buffer, the model's input, or the output of an op that was not "
                   "dumped)\n";
        }
        if (!before.empty()) {
            out += "  ops that ran in one run only, just before it:\n";
            for (size_t i : before)
                out += "    " + result.describeUnpaired(result.unpaired[i]) + "\n";
        }
        if (t.isOutput)
            if (const auto given = result.differenceGiven(o)) {
                const TensorComparison& start = result.tensors[given->start];
                out += "  but its " + result.describeTensor(given->input) +
                       " already differs, below the floor; followed upstream, that difference "
                       "starts at\n    " +
                       result.describeOp(start.op) + "  " + result.describeTensor(given->start) +
                       "\n" + "  (" + result.describeStart(*given) + ")\n" +
                       (start.hasData ? ""
                                      : "  (statistics alone cannot tell a small change from "
                                        "rounding there: look at it too)\n");
            }
    }
}

// What the replicas agree on: "  replicas: all 48 parameter tensors agree, all 16 reduced
// gradients agree".
std::string replicaSummary(const CompareResult& result) {
    auto line = [](const CompareResult::ReplicaCounts& c, const char* one, const char* many) {
        if (c.diverging == 0)
            return (c.compared == 1 ? std::string("the ")
                                    : "all " + std::to_string(c.compared) + " ") +
                   (c.compared == 1 ? one : many) + (c.compared == 1 ? " agrees" : " agree");
        return std::to_string(c.diverging) + " of " + plural(c.compared, one, many) + " disagree";
    };
    const auto& parameters = result.replicaParameters;
    const auto& gradients = result.reducedGradients;
    if (result.replicasJudgedNothing())
        return result.reference && result.reference->layout() == DumpLayout::Msprobe
                   ? "  replicas: no tensor they must agree on was compared (an msprobe dump "
                     "records parameters at levels L0 and mix only: dump at one of them)\n"
                   : "  replicas: no tensor they must agree on was compared (op-level dumps: dump "
                     "the layers' children, save_child, to see the weights and the gradients DDP "
                     "reduces)\n";
    std::string out = "  replicas: ";
    out += parameters.compared ? line(parameters, "parameter tensor", "parameter tensors")
                               : std::string("no parameters compared");
    out += ", ";
    out += gradients.compared ? line(gradients, "reduced gradient", "reduced gradients")
           : result.reference && result.reference->layout() == DumpLayout::Msprobe
               ? "no reduced gradients (msprobe dumps record gradients before DDP "
                 "averages them: averaged gradients that disagree show as parameters "
                 "that disagree in the next step)"
               : "no reduced gradients compared";
    return out + "\n";
}

// The report's last lines: what could not be read, then how the runs were paired.
std::string notesOf(const CompareResult& result) {
    std::string out;
    for (const auto& p : result.problems) out += "note: " + p + "\n";
    for (const auto& n : result.notes) out += "note: " + n + "\n";
    return out;
}

}  // namespace

namespace {

// Each line of `text` as printableText makes it: names from a dump are input like any other (an
// op name holding terminal escapes, or a megabyte of it, was printed as it was).
std::string printableLines(std::string_view text) {
    constexpr size_t kMaxLineBytes = 4096;
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const size_t end = text.find('\n');
        out += format::printableText(text.substr(0, end), kMaxLineBytes);
        out += '\n';
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    }
    return out;
}

std::string reportText(const CompareResult& result, size_t context);

}  // namespace

std::string formatCompareReport(const CompareResult& result, size_t context) {
    return printableLines(reportText(result, context));
}

namespace {

std::string reportText(const CompareResult& result, size_t context) {
    std::string out;
    if (result.nothingCompared() && !result.tensors.empty()) {
        out += "nothing to compare: the " + plural(result.tensors.size(), "tensor", "tensors") +
               " that pair up have no statistic in both runs and no data in both (a dump of "
               "task \"tensor\" has no statistics: compare it with one that kept tensors too)\n";
        return out + notesOf(result);
    }
    if (result.nothingCompared()) {
        out += "nothing to compare: no tensor of the reference pairs up with one of the candidate";
        const std::string empty = result.emptyDumpSaid();
        out += !empty.empty()       ? ": " + empty + "\n"
               : result.unpairedOps ? " (different models, layouts, rounds or ranks?)\n"
                                    : "\n";
        size_t listed = 0;
        for (bool inReference : {true, false}) {
            const uint64_t n = inReference ? result.unpairedInReference
                                           : result.unpairedOps - result.unpairedInReference;
            if (!n) continue;
            out += std::string("  ops only in the ") + (inReference ? "reference" : "candidate") +
                   " (" + std::to_string(n) + "), the first:\n";
            listed = 0;
            for (const auto& u : result.unpaired)
                if (u.inReference == inReference && listed++ < 8)
                    out += "    " + result.describeUnpaired(u) + "\n";
            if (listed == 0)
                out += "    (none among the first " + std::to_string(result.unpaired.size()) +
                       " listed)\n";
        }
        return out + notesOf(result);
    }
    out += "compared " + plural(result.tensors.size(), "tensor", "tensors") + " of " +
           plural(result.ops.size(), "op execution", "op executions") + " (" +
           std::to_string(result.tensorsWithData) + " by their data, " +
           (result.tensorsUnmeasured
                ? std::to_string(result.tensors.size() - result.tensorsWithData -
                                 result.tensorsUnmeasured) +
                      " by statistics, " + std::to_string(result.tensorsUnmeasured) +
                      " with nothing to judge them by: no statistic in both runs, no data in both)"
                : std::string("the rest by statistics)"));
    if (result.exact) out += ", exactly";
    if (result.replicas)
        out +=
            ", as data-parallel replicas (only what they must share decides: parameters, reduced "
            "gradients, what collectives return)";
    out += ": " + plural(result.divergingTensors, "tensor diverges", "tensors diverge") + "\n";
    if (result.replicas) out += replicaSummary(result);
    if (result.unpairedOps || result.tensorsOnlyInReference || result.tensorsOnlyInCandidate) {
        const uint64_t inRef = result.unpairedInReference;
        out += "  not paired: " + plural(result.unpairedOps, "op execution", "op executions") +
               " (" + std::to_string(inRef) + " only in the reference, " +
               std::to_string(result.unpairedOps - inRef) + " only in the candidate)";
        out += ", " + plural(result.tensorsOnlyInReference, "tensor", "tensors") +
               " only in the reference, " + std::to_string(result.tensorsOnlyInCandidate) +
               " only in the candidate\n";
    }
    // A divergence in what could not be read (or compared) is not seen: said before any verdict.
    if (!result.problems.empty())
        out += "  " + plural(result.problems.size(), "problem", "problems") +
               " reading or pairing the runs (the notes at the end), the first: " +
               result.problems.front() + "\n";
    if (result.replicasJudgedNothing()) {
        out += "no verdict: nothing the replicas must agree on was compared\n";
    } else if (!result.firstBornHere) {
        out += "no tensor diverges";
        if (!result.problems.empty()) out += " of those that could be read (see the notes below)";
        // Not "the same": a run that stopped early, or took another path, ran other ops.
        if (!result.pairsEverything() && result.unpairedOps == 0) {
            // Every op pairs, some tensor does not: an item one dump could not give (a damaged
            // dump.json item read as "the runs did not run the same ops").
            out += ", but some tensors are in one run only" +
                   std::string(result.problems.empty() ? "" : " (some could not be read)");
        } else if (!result.pairsEverything()) {
            out += ", but the runs did not run the same ops";
            constexpr size_t kListed = 8;
            for (size_t i = 0; i < std::min(kListed, result.unpaired.size()); ++i)
                out += std::string(i == 0 ? ":" : "") + "\n    " +
                       result.describeUnpaired(result.unpaired[i]);
            if (result.unpairedOps > kListed)
                out += "\n    ... and " + std::to_string(result.unpairedOps - kListed) + " more";
        }
        out += "\n";
        // Below the floor is not the same: a nudged weight read as "no tensor diverges" alone.
        if (!result.exact && result.differingTensors > 0)
            out += "  " + plural(result.differingTensors, "tensor differs", "tensors differ") +
                   " below the floor: rounding by the rule (another summation order, another "
                   "library), or a change too small for it; --exact names the first\n";
    } else {
        out += "  " +
               plural(result.bornHereOps, "op where a divergence is born",
                      "ops where a divergence is born") +
               ", " + plural(result.inheritedOps, "op that inherits one", "ops that inherit one") +
               "\n";
        const uint32_t first = *result.firstBornHere;
        describeFirst(out, result, first, "first divergence, born here: ");
        const auto ancestors = result.bornHereAncestors(first);
        if (!ancestors.empty()) {
            out += "  it surfaces in the enclosing ops too:";
            for (uint32_t a : ancestors) {
                const auto& op = result.reference->op(result.ops[a].referenceOp);
                out +=
                    " " + (result.reference->layout() == DumpLayout::Msprobe ? op.id : op.namePath);
            }
            out += "\n";
        }
        if (result.firstInherited) {
            const uint32_t inherited = *result.firstInherited;
            describeFirst(out, result, inherited, "first op that inherits it: ");
            if (result.ops[inherited].inheritedFrom != kNone)
                out += "  received from " + result.describeOp(result.ops[inherited].inheritedFrom) +
                       "\n";
        }
        size_t more = 0;
        for (uint32_t o = 0; o < result.ops.size(); ++o) {
            if (result.ops[o].verdict != OpVerdict::BornHere || result.ops[o].bornInChild ||
                o == first)
                continue;
            if (more == 0) out += "other ops where a divergence is born:\n";
            if (more++ < 10) {
                const std::string where = differentCalls(result, o);
                out += "    " + result.describeOp(o) + ": " +
                       result.describeTensor(result.ops[o].cause) +
                       (where.empty() ? "" : " (two different calls: " + where + ")") + "\n";
            }
        }
        if (more > 10) out += "    ... " + std::to_string(more - 10) + " more\n";
        // Not births, by the rule, but where a change made outside the model (other data in
        // a later step, a weight changed) would show: listed, so that none goes unseen.
        const auto listInherited = [&](const auto& listed, const char* heading) {
            size_t count = 0;
            for (uint32_t o = 0; o < result.ops.size(); ++o) {
                if (!listed(o)) continue;
                if (count == 0) out += heading;
                if (count++ < 10)
                    out += "    " + result.describeOp(o) + ": " +
                           result.describeTensor(result.ops[o].cause) + ", after " +
                           result.describeOp(result.ops[o].inheritedFrom) + "\n";
            }
            if (count > 10) out += "    ... " + std::to_string(count - 10) + " more\n";
        };
        listInherited([&](uint32_t o) { return result.fedBackAtInput(o); },
                      "inputs from outside the model that differ after an earlier divergence, "
                      "taken as fed back by the program (inherited):\n");
        listInherited([&](uint32_t o) { return result.ops[o].carriedInState(); },
                      "ops whose output differs while their inputs match, after an earlier "
                      "step's divergence went through them, taken as carried in their own state "
                      "(parameters, a cache) (inherited):\n");
        out += "around the first divergence, in execution order:\n";
        // Its own process only (the ops before rank 1's first were rank 0's last); the ops
        // before it may be of another round (a block called twice per step: the step's layers
        // before its second call are a round behind it).
        const auto together = [&](size_t o) {
            return result.ops[o].referenceProcess == result.ops[first].referenceProcess;
        };
        size_t from = first, to = size_t(first) + 1;
        while (from > 0 && first - (from - 1) <= context && together(from - 1)) --from;
        while (to < result.ops.size() && to - first <= context && together(to)) ++to;
        for (size_t o = from; o < to; ++o)
            out += std::string(o == first ? "  > " : "    ") +
                   result.describeOp(static_cast<uint32_t>(o)) + ": " + verdictName(result.ops[o]) +
                   "\n";
    }
    if (result.exact && result.firstDivergingTensor) {
        const uint32_t t = *result.firstDivergingTensor;
        out += "first tensor whose bytes differ: " + result.describeOp(result.tensors[t].op) +
               ", " + result.describeTensor(t) + ": " + result.explain(t) + "\n";
    }
    return out + notesOf(result);
}

}  // namespace

std::string compareResultCsv(const CompareResult& result) {
    std::string out =
        "Execution Count,Op Name,Op Type,Input/Output,Index,Shape,Reference Max,Candidate Max,"
        "Reference Mean,Candidate Mean,Reference Norm,Candidate "
        "Norm,Cosine,Max Abs Error,"
        "Max Relative Error,Diverges,Why,Op Verdict,Rule,Worst Element,EucDist,One Thousandth Err "
        "Ratio,"
        "Five Thousandths Err Ratio,Max ULP Error,Scale,Reference Min,Candidate Min,Op Id,"
        "Process\n";
    const DumpIndex* ref = result.reference;
    auto stat = [](const StatValues& s, int k) {
        return s.has(k) ? format::formatStatValue(s.value[k])
                        : format::formatStatValue(std::nullopt);
    };
    for (uint32_t i = 0; i < result.tensors.size(); ++i) {
        const TensorComparison& t = result.tensors[i];
        const auto& slot = ref->slot(ref->row(t.referenceRow).slot);
        const auto& op = ref->op(slot.op);
        const bool data = t.hasData;
        const DataMeasures& m = result.data(i);
        const StatValues referenceStats = result.referenceStats(i),
                         candidateStats = result.candidateStats(i);
        out += std::to_string(result.ops[t.op].referenceRound) + "," +
               format::csvField(ref->layout() == DumpLayout::Msprobe ? op.id : op.namePath) + "," +
               format::csvField(op.type) + "," + (t.isOutput ? "output," : "input,") +
               format::csvField(slot.index) + "," + rowText(*ref, t.referenceRow, true) + "," +
               stat(referenceStats, 0) + "," + stat(candidateStats, 0) + "," +
               stat(referenceStats, 2) + "," + stat(candidateStats, 2) + "," +
               stat(referenceStats, 3) + "," + stat(candidateStats, 3) + "," +
               (data ? optionalNumber(m.cosine) : "N/A") + "," +
               (data ? shortest(m.maxAbsError) : "N/A") + "," +
               (data ? shortest(m.maxRelativeError) : "N/A") + "," + (t.diverges ? "yes" : "no") +
               "," + format::csvField(t.diverges ? result.explain(i) : "") + "," +
               verdictName(result.ops[t.op]) + "," + ruleName(t.rule) + "," +
               (data && t.rule != DivergenceRule::None
                    ? format::csvField(result.elementIndex(i, m.worstElement))
                    : "") +
               "," + (data ? optionalNumber(m.euclideanDistance) : "N/A") + "," +
               (data ? optionalNumber(m.oneThousandthErrRatio) : "N/A") + "," +
               (data ? optionalNumber(m.fiveThousandthsErrRatio) : "N/A") + "," +
               (data ? shortest(m.maxUlpError) : "N/A") + "," + shortest(t.scale) + "," +
               // Added after the columns of earlier versions, for readers that count them.
               stat(referenceStats, 1) + "," + stat(candidateStats, 1) + "," +
               format::csvField(result.referenceIdOf(t.op)) + "," +
               format::csvField(ref->process(result.ops[t.op].referenceProcess).key) + "\n";
    }
    return out;
}

namespace {

using Json = nlohmann::ordered_json;

Json numberJson(double v) {
    if (std::isfinite(v)) return v;
    return shortest(v);  // JSON has no NaN or Infinity: "nan", "inf", "-inf"
}
Json optionalJson(const std::optional<double>& v) {
    return v ? numberJson(*v) : Json(nullptr);
}

Json tensorJson(const CompareResult& result, uint32_t i) {
    const TensorComparison& t = result.tensors[i];
    const DumpIndex& ref = *result.reference;
    const DumpIndex& cand = *result.candidate;
    const auto& slot = ref.slot(ref.row(t.referenceRow).slot);
    Json j;
    j["name"] = result.tensorName(i);
    j["io"] = t.isOutput ? "output" : "input";
    j["index"] = slot.index;
    j["dtype"] = {rowText(ref, t.referenceRow, false), rowText(cand, t.candidateRow, false)};
    j["shape"] = {rowText(ref, t.referenceRow, true), rowText(cand, t.candidateRow, true)};
    j["diverges"] = t.diverges;
    j["rule"] = ruleName(t.rule);
    if (t.diverges) j["why"] = result.explain(i);
    if (t.producer != kNone) j["sameDataAs"] = result.tensorName(t.producer);
    if (t.source) j["source"] = true;
    j["scale"] = numberJson(t.scale);
    j["requiredScale"] = numberJson(t.requiredScale);
    Json stats;
    const StatisticDiffs diffs = result.statisticDiffs(i);
    const StatValues referenceStats = result.referenceStats(i),
                     candidateStats = result.candidateStats(i);
    for (int k = 0; k < 4; ++k) {
        stats[kStatNames[k]] = {
            referenceStats.has(k) ? numberJson(referenceStats.value[k]) : Json(nullptr),
            candidateStats.has(k) ? numberJson(candidateStats.value[k]) : Json(nullptr)};
        stats[std::string(kStatNames[k]) + "Diff"] = optionalJson(diffs.diff[k]);
        stats[std::string(kStatNames[k]) + "RelativeErrPercent"] =
            optionalJson(diffs.relativePercent[k]);
    }
    j["statistics"] = std::move(stats);
    if (t.hasData) {
        const DataMeasures& m = result.data(i);
        j["data"] = {{"cosine", optionalJson(m.cosine)},
                     {"eucDist", optionalJson(m.euclideanDistance)},
                     {"maxAbsErr", numberJson(m.maxAbsError)},
                     {"maxRelativeErr", numberJson(m.maxRelativeError)},
                     {"oneThousandthErrRatio", optionalJson(m.oneThousandthErrRatio)},
                     {"fiveThousandthsErrRatio", optionalJson(m.fiveThousandthsErrRatio)},
                     {"maxUlpErr", numberJson(m.maxUlpError)},
                     {"bytesEqual", m.bytesEqual},
                     {"nonFiniteMismatches", m.nonFiniteMismatches},
                     {"worstElement", result.elementIndex(i, m.worstElement)},
                     {"worstValues", {numberJson(m.worstReference), numberJson(m.worstCandidate)}}};
    }
    return j;
}

Json opJson(const CompareResult& result, uint32_t o, bool withTensors) {
    const OpComparison& op = result.ops[o];
    const auto& r = result.reference->op(op.referenceOp);
    Json j;
    j["round"] = op.referenceRound;
    if (op.candidateRound != op.referenceRound) j["candidateRound"] = op.candidateRound;
    j["process"] = result.reference->process(op.referenceProcess).key;
    j["candidateProcess"] = result.candidate->process(op.candidateProcess).key;
    j["name"] = result.reference->layout() == DumpLayout::Msprobe ? r.id : r.namePath;
    j["type"] = r.type;
    // Ops of one name in one module (three adds) are told apart by it.
    j["id"] = result.referenceIdOf(o);
    if (const std::string& id = result.candidateIdOf(o); id != result.referenceIdOf(o))
        j["candidateId"] = id;
    j["verdict"] = verdictName(op);
    if (op.cause != kNone) j["cause"] = result.tensorName(op.cause);
    if (op.inheritedFrom != kNone) j["inheritedFrom"] = result.describeOp(op.inheritedFrom);
    if (op.fedBack()) j["fedBack"] = true;
    if (op.carriedInState()) j["carriedInState"] = true;
    if (withTensors) {
        Json tensors = Json::array();
        for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i)
            tensors.push_back(tensorJson(result, i));
        j["tensors"] = std::move(tensors);
    }
    return j;
}

}  // namespace

std::string compareResultJson(const CompareResult& result) {
    Json j;
    j["reference"] = result.reference ? result.reference->root() : "";
    j["candidate"] = result.candidate ? result.candidate->root() : "";
    j["exact"] = result.exact;
    j["replicas"] = result.replicas;
    j["summary"] = {{"nothingCompared", result.nothingCompared()},
                    {"diverges", result.diverges()},
                    {"tensors", result.tensors.size()},
                    {"tensorsWithData", result.tensorsWithData},
                    {"tensorsUnmeasured", result.tensorsUnmeasured},
                    {"divergingTensors", result.divergingTensors},
                    {"differingTensors", result.differingTensors},
                    {"ops", result.ops.size()},
                    {"bornHereOps", result.bornHereOps},
                    {"fedBackOps", result.fedBackOps},
                    {"carriedInStateOps", result.carriedInStateOps},
                    {"inheritedOps", result.inheritedOps},
                    {"unpairedOps", result.unpairedOps},
                    {"unpairedInReference", result.unpairedInReference},
                    {"tensorsOnlyInReference", result.tensorsOnlyInReference},
                    {"tensorsOnlyInCandidate", result.tensorsOnlyInCandidate}};
    if (result.replicas) {
        auto counts = [](const CompareResult::ReplicaCounts& c) {
            return Json{{"compared", c.compared}, {"diverging", c.diverging}};
        };
        j["summary"]["replicaParameters"] = counts(result.replicaParameters);
        j["summary"]["reducedGradients"] = counts(result.reducedGradients);
    }
    if (result.firstBornHere) {
        Json first = opJson(result, *result.firstBornHere, false);
        if (result.ops[*result.firstBornHere].cause != kNone)
            first["tensor"] = tensorJson(result, result.ops[*result.firstBornHere].cause);
        if (const auto given = result.differenceGiven(*result.firstBornHere))
            first["differenceGiven"] = {
                {"input", result.tensorName(given->input)},
                {"startsAt", result.describeOp(result.tensors[given->start].op)},
                {"startTensor", result.tensorName(given->start)}};
        Json ancestors = Json::array();
        for (uint32_t a : result.bornHereAncestors(*result.firstBornHere))
            ancestors.push_back(result.describeOp(a));
        first["enclosingOpsBornHereToo"] = std::move(ancestors);
        // Ops of one run only that began just before it (see the text report).
        if (const auto before = result.unpairedBefore(*result.firstBornHere, 3); !before.empty()) {
            Json names = Json::array();
            for (size_t i : before) names.push_back(result.describeUnpaired(result.unpaired[i]));
            first["unpairedJustBefore"] = std::move(names);
        }
        j["firstBornHere"] = std::move(first);
    }
    if (result.firstInherited) {
        Json first = opJson(result, *result.firstInherited, false);
        if (result.ops[*result.firstInherited].cause != kNone)
            first["tensor"] = tensorJson(result, result.ops[*result.firstInherited].cause);
        j["firstInherited"] = std::move(first);
    }
    if (result.firstDivergingTensor) {
        Json first = tensorJson(result, *result.firstDivergingTensor);
        first["op"] = result.describeOp(result.tensors[*result.firstDivergingTensor].op);
        j["firstDivergingTensor"] = std::move(first);
    }
    Json ops = Json::array();
    if (result.reference)
        for (uint32_t o = 0; o < result.ops.size(); ++o) ops.push_back(opJson(result, o, true));
    j["ops"] = std::move(ops);
    Json unpaired = Json::array();
    for (const auto& u : result.unpaired) unpaired.push_back(result.describeUnpaired(u));
    j["unpaired"] = std::move(unpaired);
    j["problems"] = result.problems;
    j["notes"] = result.notes;
    return j.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::vector<std::string> msprobeCompareHeader(bool tensorMode) {
    std::vector<std::string> header = {
        "NPU Name",         "Bench Name",         "NPU Dtype",         "Bench Dtype",
        "NPU Tensor Shape", "Bench Tensor Shape", "NPU Requires_grad", "Bench Requires_grad"};
    if (tensorMode) {
        for (const char* c : {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                              "One Thousandth Err Ratio", "Five Thousandths Err Ratio"})
            header.push_back(c);
    } else {
        for (const char* c : {"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr",
                              "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"})
            header.push_back(c);
    }
    for (const char* c :
         {"NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max", "Bench min", "Bench mean",
          "Bench l2norm", "Requires_grad Consistent", "Result", "Err_message"})
        header.push_back(c);
    return header;
}

namespace {

// One cell: a number, or msprobe's words for what is not one.
struct Cell {
    bool isNumber = false;
    double number = 0;
    std::string text;
};
Cell textCell(std::string s) {
    return Cell{false, 0, std::move(s)};
}
Cell numberCell(double v) {
    if (std::isnan(v)) return textCell("Nan");
    if (std::isinf(v)) return textCell(v > 0 ? "inf" : "-inf");
    return Cell{true, v, {}};
}
Cell optionalCell(const std::optional<double>& v, const char* missing) {
    return v ? numberCell(*v) : textCell(missing);
}
Cell percentCell(const std::optional<double>& v) {
    if (!v) return textCell("N/A");
    if (*v == 0) return textCell("0");
    if (std::isnan(*v)) return textCell("Nan");
    if (std::isinf(*v)) return textCell(*v > 0 ? "inf" : "-inf");
    return textCell(shortest(*v) + "%");
}

std::vector<Cell> msprobeRow(const CompareResult& result, uint32_t i, bool tensorMode) {
    const TensorComparison& t = result.tensors[i];
    const DumpIndex& ref = *result.reference;
    const DumpIndex& cand = *result.candidate;
    // NPU is the run under test (the candidate), Bench the reference.
    std::vector<Cell> row = {textCell(result.tensorName(i)),
                             textCell(result.tensorName(i)),
                             textCell(rowText(cand, t.candidateRow, false)),
                             textCell(rowText(ref, t.referenceRow, false)),
                             textCell(msprobeShape(rowText(cand, t.candidateRow, true))),
                             textCell(msprobeShape(rowText(ref, t.referenceRow, true))),
                             textCell("N/A"),
                             textCell("N/A")};
    if (tensorMode) {
        if (t.hasData) {
            const DataMeasures& m = result.data(i);
            row.push_back(optionalCell(m.cosine, "unsupported"));
            row.push_back(optionalCell(m.euclideanDistance, "unsupported"));
            row.push_back(numberCell(m.maxAbsError));
            row.push_back(numberCell(m.maxRelativeError));
            row.push_back(optionalCell(m.oneThousandthErrRatio, "unsupported"));
            row.push_back(optionalCell(m.fiveThousandthsErrRatio, "unsupported"));
        } else {
            for (int k = 0; k < 6; ++k) row.push_back(textCell("N/A"));
        }
    } else {
        const StatisticDiffs diffs = result.statisticDiffs(i);
        for (int k = 0; k < 4; ++k) row.push_back(optionalCell(diffs.diff[k], "N/A"));
        for (int k = 0; k < 4; ++k) row.push_back(percentCell(diffs.relativePercent[k]));
    }
    const StatValues candidateStats = result.candidateStats(i),
                     referenceStats = result.referenceStats(i);
    for (const StatValues* s : {&candidateStats, &referenceStats})
        for (int k = 0; k < 4; ++k)
            row.push_back(s->has(k) ? numberCell(s->value[k]) : textCell("N/A"));
    row.push_back(textCell("N/A"));
    row.push_back(textCell(t.diverges ? "error" : "pass"));
    std::string message = t.diverges ? result.explain(i) : "";
    if (tensorMode && !t.hasData)
        message = (message.empty() ? "" : message + ". ") + "No real data: compared by statistics.";
    row.push_back(textCell(message));
    return row;
}

constexpr uint32_t kMaxExcelRows = 1048500;  // msprobe's MAX_EXCEL_LENGTH

bool writeSheet(lxw_workbook* book, const std::string& name, const std::vector<std::string>& header,
                const std::function<std::vector<Cell>(uint32_t)>& rowOf, uint32_t from,
                uint32_t to) {
    lxw_worksheet* sheet = workbook_add_worksheet(book, name.c_str());
    if (!sheet) return false;
    for (size_t c = 0; c < header.size(); ++c)
        worksheet_write_string(sheet, 0, static_cast<lxw_col_t>(c), header[c].c_str(), nullptr);
    for (uint32_t r = from; r < to; ++r) {
        const auto cells = rowOf(r);
        const lxw_row_t row = r - from + 1;
        for (size_t c = 0; c < cells.size(); ++c) {
            const auto col = static_cast<lxw_col_t>(c);
            if (cells[c].isNumber)
                worksheet_write_number(sheet, row, col, cells[c].number, nullptr);
            else if (!cells[c].text.empty())
                worksheet_write_string(sheet, row, col, cells[c].text.c_str(), nullptr);
        }
    }
    return true;
}

}  // namespace

bool writeCompareXlsx(const CompareResult& result, const std::string& path, std::string* error) {
    if (!result.reference || !result.candidate) {
        if (error) *error = "nothing was compared";
        return false;
    }
    const bool tensorMode = result.tensorsWithData > 0;
    const std::string temporary = format::userFileTemporary(path);
    // libxlsxwriter reports its own errors on stderr: find out first whether the file can be made.
    if (FILE* probe = std::fopen(temporary.c_str(), "wb")) {
        std::fclose(probe);
    } else {
        if (error) *error = "cannot write " + path + ": " + std::strerror(errno);
        return false;
    }
    lxw_workbook_options options = {};
    options.constant_memory = LXW_TRUE;  // rows go to disk as they are written
    lxw_workbook* book = workbook_new_opt(temporary.c_str(), &options);
    if (!book) {
        if (error) *error = "cannot create " + temporary;
        return false;
    }
    const auto header = msprobeCompareHeader(tensorMode);
    const uint32_t n = static_cast<uint32_t>(result.tensors.size());
    auto tensorRow = [&](uint32_t i) { return msprobeRow(result, i, tensorMode); };
    if (n < kMaxExcelRows) {
        writeSheet(book, "Sheet1", header, tensorRow, 0, n);
    } else {
        const uint32_t parts = (n + kMaxExcelRows - 1) / kMaxExcelRows,
                       size = (n + parts - 1) / parts;
        for (uint32_t p = 0; p < parts; ++p)
            writeSheet(book, "part_" + std::to_string(p), header, tensorRow, p * size,
                       std::min(n, (p + 1) * size));
    }
    const std::vector<std::string> opHeader = {"Round",   "Process", "Op",  "Type",
                                               "Verdict", "Cause",   "Why", "Inherited From"};
    auto opRow = [&](uint32_t o) {
        const OpComparison& op = result.ops[o];
        const auto& r = result.reference->op(op.referenceOp);
        return std::vector<Cell>{
            numberCell(op.referenceRound),
            textCell(result.reference->process(op.referenceProcess).key),
            textCell(result.reference->layout() == DumpLayout::Msprobe ? r.id : r.namePath),
            textCell(r.type),
            textCell(verdictName(op)),
            textCell(op.cause != kNone ? result.tensorName(op.cause) : ""),
            textCell(op.cause != kNone ? result.explain(op.cause) : ""),
            textCell(op.inheritedFrom != kNone ? result.describeOp(op.inheritedFrom) : "")};
    };
    writeSheet(book, "ops", opHeader, opRow, 0,
               std::min<uint32_t>(static_cast<uint32_t>(result.ops.size()), kMaxExcelRows));
    const lxw_error status = workbook_close(book);
    if (status != LXW_NO_ERROR) {
        ::unlink(temporary.c_str());
        if (error) *error = "cannot write " + path + ": " + lxw_strerror(status);
        return false;
    }
    if (const int err = format::moveIntoUserFile(temporary, path)) {
        if (error) *error = "cannot write " + path + ": " + std::strerror(err);
        return false;
    }
    return true;
}

}  // namespace probe::analysis
