// Comparing two dumps of the same model (fp32 and bf16, two devices, before and after a change,
// two data-parallel ranks) op by op and tensor by tensor, to find where a divergence is *born*:
// the op whose inputs match and whose output (or parameter) differs. Every op after it that
// receives a differing tensor merely inherits it. Either layout; tensor data is compared where
// both runs kept it (.bin, or msprobe's .pt), statistics elsewhere. The rule is in
// compare_measures.h and docs/compare.md. No Qt; the comparison runs on a pool of threads.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/compare_measures.h"
#include "analysis/dump_index.h"

namespace probe::analysis {

// What a path names: the dump that holds it (DumpReader's root) and the part of it below the
// path: <msprobe dump>/step0/rank1 is process "rank1", round 0; <atb_dump_data>/data/0_4242 is
// process "0_4242". nullopt with a message when the path holds no dump.
struct DumpLocation {
    std::string root;
    DumpScope scope;
    std::string folder;  // the part's own folder (its rank or step folder); the root for the whole
};
std::optional<DumpLocation> locateDump(const std::string& path, std::string* error);
// The same of a dump read already (its root and layout), without opening it again.
DumpLocation locationIn(const std::string& root, DumpLayout layout, const std::string& path);

struct CompareOptions {
    NoiseFloorUlps ulps;
    bool useTensorData = true;  // read the tensor files (.bin, .pt) where both runs have them
    // A tensor diverges when its bytes differ at all (statistics: when any differs), for two
    // runs on the same machine that should be bit-identical.
    bool exact = false;
    // Data-parallel replicas (two ranks of one job): their inputs differ by design, so only the
    // tensors that replicas must agree on decide (msprobe: module parameters, and tensors that
    // collectives return; op-level: inputs named weight or bias); the rest are measured but
    // never called divergent.
    bool replicas = false;
    DumpScope referenceScope, candidateScope;
    unsigned threads = 0;  // 0: one per core
    // Called on the calling thread now and then with (tensors compared, tensors to compare).
    std::function<void(uint64_t done, uint64_t total)> progress;
    // Set by another thread to stop early (the application replaced a dump): the result is
    // then marked cancelled and holds nothing to go by.
    const std::atomic<bool>* cancel = nullptr;
};

enum class DivergenceRule : uint8_t {
    None,
    Shape,      // the shapes differ
    NonFinite,  // NaN or Inf in one run only (or Inf of the other sign)
    Elements,   // an element differs by more than the noise floor (data)
    Statistic,  // a statistic differs by more than the noise floor (no data on one side)
    Bytes,      // --exact: the bytes (statistics) differ
};
const char* ruleName(DivergenceRule rule);  // "shape", "nan/inf", "elements", "statistic", "bytes"

// One tensor seen in both runs: the same slot (input/output and index) of a paired op. Kept
// small (64 bytes: a million of them are written for the first time in one comparison, and the
// kernel zeroes each new page): the statistics are the rows' own (CompareResult::referenceStats).
struct TensorComparison {
    double ulps = 0;           // allowance for judgedDType
    double ownRms = 0;         // the reference tensor's root mean square
    double scale = 0;          // what the floor is measured against (see compare_measures.h)
    double requiredScale = 0;  // the smallest scale at which its differences would be noise
    uint32_t op = 0;           // into CompareResult::ops
    uint32_t referenceRow = kNone, candidateRow = kNone;  // rows of the two DumpIndexes
    uint32_t dataIndex = kNone;  // its measures in CompareResult::measures (CompareResult::data)
    // An input that is the same data as an earlier op's output (or an enclosing op's input):
    // that tensor's index; kNone when no compared op produced it (a parameter, a buffer, the
    // model's input, or an op that was not dumped).
    uint32_t producer = kNone;
    bool isOutput = false;
    bool hasData = false;  // both runs' data were read and measured
    bool diverges = false;
    DivergenceRule rule = DivergenceRule::None;
    bool differs = false;  // not bit-identical (without data: a statistic or the dtype differs)
    // Carries a divergence on: it diverges itself, or it differs at all and comes from an op
    // that is born here or inherited (a difference below the floor, downstream of a divergence,
    // is part of it).
    bool carriesDivergence = false;
    // A diverging input that no tensor carrying a divergence explains: the divergence enters here.
    bool source = false;
    bool replicaInvariant = false;  // replicas mode: a tensor the ranks must agree on
    bool reducedGradient = false;   // of those, a gradient DDP averaged (op-level dumps)
    int8_t worstStatistic = -1;     // statistics rule: 0 max, 1 min, 2 mean, 3 norm

    std::optional<format::DType> referenceDType() const { return decode(referenceDType_); }
    std::optional<format::DType> candidateDType() const { return decode(candidateDType_); }
    // The reference's, whose epsilon judges (judgingDType).
    std::optional<format::DType> judgedDType() const {
        return judgingDType(referenceDType(), candidateDType());
    }
    void setDTypes(std::optional<format::DType> reference, std::optional<format::DType> candidate) {
        referenceDType_ = encode(reference);
        candidateDType_ = encode(candidate);
    }

private:
    // A dtype's code (format::DType, all below 128), or -1 for none.
    static int8_t encode(std::optional<format::DType> dtype) {
        return dtype ? static_cast<int8_t>(*dtype) : int8_t{-1};
    }
    static std::optional<format::DType> decode(int8_t code) {
        if (code < 0) return std::nullopt;
        return static_cast<format::DType>(code);
    }
    int8_t referenceDType_ = -1, candidateDType_ = -1;
};
static_assert(sizeof(TensorComparison) <= 64, "a million of them: keep it to a cache line");

enum class OpVerdict : uint8_t { Matches, BornHere, Inherited };
const char* verdictName(OpVerdict verdict);  // "matches", "born here", "inherited"

enum class Reception : uint8_t { Direct, FedBack, InOwnState };  // OpComparison::reception

// One execution of an op (one round) seen in both runs.
struct OpComparison {
    uint32_t referenceOp = kNone, candidateOp = kNone;            // ops of the DumpIndexes
    uint32_t referenceProcess = kNone, candidateProcess = kNone;  // processes of the DumpIndexes
    int32_t referenceRound = 0, candidateRound = 0;
    // The enclosing compared op, kNone at the top; an op its dump gives no parent, that ran
    // while another was open (msprobe's Tensor.__mul__ run by a custom backward), is that one's.
    uint32_t parent = kNone;
    uint32_t firstTensor = 0, tensorCount = 0;  // its tensors in CompareResult::tensors
    // The tensor that decided the verdict: born here, the first diverging output or source
    // input; inherited, the first diverging input explained by an earlier divergence.
    uint32_t cause = kNone;
    uint32_t inheritedFrom = kNone;  // inherited: the op whose diverging tensor it received
    OpVerdict verdict = OpVerdict::Matches;
    // Some tensor of it had something to judge it by: false when every one had neither data
    // in both runs nor a statistic in both (CompareResult::tensorsUnmeasured). Its "matches" then
    // says nothing (a whole tree of task-tensor ops was green against a dump of statistics).
    bool judged = true;
    // Born here at an output, and so is an op inside it: its divergence surfaces here but starts
    // deeper (an op born at an input had it before its children ran).
    bool bornInChild = false;
    // How an inherited op received its divergence, where no compared op's output brought it:
    // FedBack, through an input from outside the model, new in its pass (step), after an earlier
    // pass's op (inheritedFrom) handed out a divergence: the program fed it back (a generated
    // token, a weight updated by an optimizer step); or a layer whose diverging output such an op
    // inside it passed up. InOwnState, at its output, its inputs matching, after an execution of
    // the same layer-level op or of its backward op in an earlier pass (inheritedFrom) carried a
    // divergence: taken as carried in the op's own state (its parameters updated from gradients
    // that diverged, a cache; op-level dumps, layer-level module ops).
    Reception reception = Reception::Direct;
    bool fedBack() const { return reception == Reception::FedBack; }
    bool carriedInState() const { return reception == Reception::InOwnState; }
    // When it began and finished in the reference's execution (one clock for all ops): children
    // begin after and finish before their parent.
    uint64_t began = 0, finished = 0;
};
static_assert(sizeof(OpComparison) <= 64, "one per op execution: keep it to a cache line");

// An op execution found in one run only.
struct UnpairedOp {
    bool inReference = true;
    uint32_t process = kNone;
    int32_t round = 0;
    uint32_t op = kNone;
};

// An op execution's verdict for people: its verdictName, or "not judged" when nothing of it was.
const char* verdictName(const OpComparison& op);

struct CompareResult {
    // The compared dumps: the result refers to their rows and ops, and is valid while they live.
    const DumpIndex* reference = nullptr;
    const DumpIndex* candidate = nullptr;
    bool exact = false, replicas = false;
    // Name the processes in descriptions: several were compared, or chosen (ranks), or they
    // are ranks of another name. Two single-process op-level runs differ only by pid.
    bool nameProcesses = false;
    std::vector<OpComparison> ops;  // paired op executions in the reference's execution order
    std::vector<TensorComparison> tensors;  // grouped by op: inputs, then outputs
    std::vector<DataMeasures> measures;     // of the tensors whose data both runs kept (data())
    // By measures' index: the two runs' statistics of a tensor measured by its data (hasData),
    // the data's where the dump left them out.
    std::vector<std::pair<StatValues, StatValues>> measuredStats;
    std::vector<UnpairedOp> unpaired;  // op executions in one run only (the first few thousand)
    uint64_t unpairedOps = 0;          // all of them
    uint64_t unpairedInReference = 0;  // of those, the reference's
    // `unpaired` lacks some of a round both runs have (not only of rounds one run alone has,
    // listed last): the ops just before an op cannot be told from it.
    bool unpairedCutInPairedRound = false;
    uint64_t tensorsOnlyInReference = 0, tensorsOnlyInCandidate = 0;
    std::vector<std::pair<uint32_t, uint32_t>>
        processPairs;  // (reference, candidate) processes compared
    // Replicas mode: the tensors the replicas must agree on, compared and diverging: parameters
    // (and what msprobe's Distributed APIs return), and the reduced gradients.
    struct ReplicaCounts {
        uint64_t compared = 0, diverging = 0;
    };
    ReplicaCounts replicaParameters, reducedGradients;
    // Replicas compared, with none of what they must agree on among the tensors (an msprobe L1
    // dump records no parameters): no verdict either way, never "no tensor diverges".
    bool replicasJudgedNothing() const {
        return replicas && replicaParameters.compared == 0 && reducedGradients.compared == 0;
    }
    // bornHereOps counts the innermost ones (not bornInChild).
    uint64_t divergingTensors = 0, bornHereOps = 0, inheritedOps = 0, tensorsWithData = 0;
    // Of the inherited: those whose input came from outside the model, new in its pass, after
    // an earlier pass diverged (OpComparison::fedBack at an input).
    uint64_t fedBackOps = 0;
    // Of the inherited: those carried in their own state (OpComparison::carriedInState).
    uint64_t carriedInStateOps = 0;
    // Tensors judged whose bytes (without data: statistics or dtype) differ at all, diverging or
    // not (with `replicas`, those the replicas must agree on).
    uint64_t differingTensors = 0;
    // Tensors paired up with nothing to judge them by: no data in both runs, no statistic in
    // both (a dump of task "tensor", whose statistics are N/A, against one of statistics).
    uint64_t tensorsUnmeasured = 0;
    // The op where the first divergence is born: among the born-here ops, the first whose
    // divergence shows (at its beginning when born at an input, else when it finishes: an op
    // whose divergence is born in a child finishes after it). Then the first op to inherit it
    // (its inheritedFrom chain leads back to it): the first after it finished, else a child of
    // an op born at its input; else the first op after it that inherited any divergence.
    std::optional<uint32_t> firstBornHere, firstInherited;  // into ops
    std::optional<uint32_t> firstDivergingTensor;           // into tensors, in execution order
    std::vector<std::string> problems;                      // unreadable files and the like
    // How the runs were paired, where it matters to the verdict (processes compared in order, a
    // rank in one run only): not problems, nothing went unread.
    std::vector<std::string> notes;
    bool cancelled = false;  // CompareOptions::cancel was set: stopped early, incomplete

    // No tensor pairs up, or none that does has anything to judge it by (tensorsUnmeasured):
    // never "no tensor diverges".
    bool nothingCompared() const { return tensors.size() == tensorsUnmeasured; }
    // Why nothing pairs up when a dump holds no row at all ("the reference holds no rows: ..."),
    // "" when both hold some (compared against an empty dump, "different models" misled).
    std::string emptyDumpSaid() const {
        const bool noReference = reference && reference->rowCount() == 0,
                   noCandidate = candidate && candidate->rowCount() == 0;
        if (!noReference && !noCandidate) return {};
        return std::string(noReference && noCandidate ? "neither dump holds rows"
                           : noReference              ? "the reference holds no rows"
                                                      : "the candidate holds no rows") +
               " (nothing was dumped there, or not yet)";
    }
    // A tensor's measures from both runs' data (meaningful when hasData; zeros otherwise).
    const DataMeasures& data(uint32_t tensor) const;
    // A tensor's statistics in each run: its rows' (when the dump left them out and both runs'
    // data were measured, the data's).
    StatValues referenceStats(uint32_t tensor) const;
    StatValues candidateStats(uint32_t tensor) const;
    // msprobe's statistics columns of a tensor (diffStatistics of its two runs' statistics).
    StatisticDiffs statisticDiffs(uint32_t tensor) const;
    bool diverges() const { return divergingTensors > 0; }
    // Every op execution and tensor of either run has its counterpart in the other.
    bool pairsEverything() const {
        return unpairedOps == 0 && tensorsOnlyInReference == 0 && tensorsOnlyInCandidate == 0;
    }

    // For people: "round 2  layers.1/mlp/down_proj (Linear)"; msprobe: the entry name.
    std::string describeOp(uint32_t op) const;
    // Whether op `o` is fed back (OpComparison::fedBack) at an input of its own: where the data
    // came in, counted in fedBackOps and listed by the report.
    bool fedBackAtInput(uint32_t o) const;
    // Op `o`'s id in its round, in each run: an op shifted in some rounds (an op more before it)
    // ran under another id there (op-level dumps).
    const std::string& referenceIdOf(uint32_t o) const;
    const std::string& candidateIdOf(uint32_t o) const;
    std::string describeUnpaired(const UnpairedOp& op) const;
    // The name alone of an op of one run only: its path (msprobe: the entry name), after its
    // process's key when its dump has several.
    std::string unpairedOpName(const UnpairedOp& op) const;
    // "input 1 [float32 64x172]"
    std::string describeTensor(uint32_t tensor) const;
    // msprobe's name of the tensor ("Functional.linear.0.forward.input.0"); atb: "<name
    // path>.<round>.<input|output>.<index>"
    std::string tensorName(uint32_t tensor) const;
    // The worst element of a tensor as an index into its shape: "[3, 5]".
    std::string elementIndex(uint32_t tensor, uint64_t flat) const;
    // Why it diverges, with the numbers: "element [3, 5]: 0.0731 vs 0.0768 (...)"
    std::string explain(uint32_t tensor) const;
    // The op's ancestors whose divergence is born inside them (bornInChild).
    std::vector<uint32_t> bornHereAncestors(uint32_t op) const;
    // A difference below the floor that an op born here was given (statistics alone cannot
    // tell a small change from noise: a weight changed by 1% amplified by a square downstream):
    // {the op's first input that differs, where that difference starts upstream (followed from
    // input to the output that made it, and into the child that passed it up: a parameter, the
    // model's input, or the innermost op whose inputs are identical and whose output is not)}.
    // nullopt when its inputs are identical, and for an op whose divergence is born at an input.
    // For an op born at an input that no compared op explains: the ops of one run only (indices
    // into `unpaired`) that began before it in its round and process, beside it or one of its
    // enclosing ops, outermost, the `most` nearest in the order they ran: what that input may have
    // come from (a gelu in place of a relu, a layer skipped). Empty otherwise, and when `unpaired`
    // lacks some of a round both runs have (unpairedCutInPairedRound).
    std::vector<size_t> unpairedBefore(uint32_t op, size_t most) const;
    struct UpstreamDifference {
        uint32_t input = kNone, start = kNone;  // into tensors
    };
    std::optional<UpstreamDifference> differenceGiven(uint32_t op) const;
    // What the start of such a difference is, for people: "its inputs are the same in both runs:
    // the op itself computes differently", or what an input no compared op produced may be.
    std::string describeStart(const UpstreamDifference& difference) const;
};

// Compares `candidate` against `reference`. Ops pair up by round (step), process, name path
// (msprobe: entry name) and occurrence; tensors by input/output and index.
CompareResult compareDumps(const DumpIndex& reference, const DumpIndex& candidate,
                           const CompareOptions& options);
// The result refers to the dumps: they must outlive it, so temporaries are refused.
CompareResult compareDumps(DumpIndex&&, const DumpIndex&, const CompareOptions&) = delete;
CompareResult compareDumps(const DumpIndex&, DumpIndex&&, const CompareOptions&) = delete;
CompareResult compareDumps(DumpIndex&&, DumpIndex&&, const CompareOptions&) = delete;

}  // namespace probe::analysis
