// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "analysis/atb_dump.h"
#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "analysis/msprobe_dump.h"
#include "analysis/parallel_for.h"
#include "analysis/prefault.h"
#include "analysis/tensor_view.h"
#include "probe/format/dtype.h"
#include "probe/format/file_util.h"
#include "probe/format/overflow_rule.h"
#include "probe/format/statistic_csv.h"

namespace probe::analysis {
namespace {

constexpr size_t kMaxProblems = 20;
constexpr size_t kMaxUnpairedListed = 5000;
// atb statistics are printed with six decimals: two printed values of the same number differ
// by at most this much.
constexpr double kAtbStatisticQuantum = 1e-6;

bool startsWith(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

bool allDigits(const std::string& s) {
    return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

// What identifies an op across runs: its name path (atb: ids are positions and shift when the
// control flow changes), or the msprobe entry name (which carries the call number).
class NameTable {
public:
    // `name` must outlive the table (the dumps' own strings: no copy of each).
    uint32_t id(std::string_view name) {
        return ids_.try_emplace(name, static_cast<uint32_t>(ids_.size())).first->second;
    }
    size_t size() const { return ids_.size(); }
    std::vector<uint32_t> ofOps(const DumpIndex& index) {
        std::vector<uint32_t> out(index.opCount());
        for (uint32_t op = 0; op < index.opCount(); ++op)
            out[op] =
                id(index.layout() == DumpLayout::Msprobe ? index.op(op).id : index.op(op).namePath);
        return out;
    }

private:
    std::unordered_map<std::string_view, uint32_t> ids_;
};

// One op's rows of one round.
struct Instance {
    uint32_t op;
    uint32_t firstRow, rowCount;  // into RoundInstances::rows
    uint32_t placedAt;            // where in the round's file it began: its first row's, or a
                                  // descendant's when that came first (file order index)
    uint64_t key;                 // name id and occurrence in the round
};
struct RoundInstances {
    std::vector<uint32_t> rows;
    std::vector<Instance> instances;  // in the order they began
};

// Scratch of one worker for instancesOf: sized to the index's ops, all kNone on entry and on
// return; and the name table's occurrence counters, all zero on entry and on return.
struct RoundScratch {
    std::vector<uint32_t> position, occurrences, placed, chain;
};

// A round's ops in the order they began, with their rows: each op at its first row in file order,
// after its enclosing ops not placed yet (an msprobe entry is written as it ends, after the
// entries inside it; an op-level dump writes an op's inputs as it begins). An op outside the
// tree of the one it ran in thus comes where it ran: msprobe gives a Tensor.__mul__ that a custom
// backward ran no parent, and in the tree's order it came after the whole backward pass.
RoundInstances instancesOf(const DumpIndex& index, const std::vector<uint32_t>& roundRows,
                           const std::vector<uint32_t>& nameIds, RoundScratch& scratch) {
    RoundInstances out;
    constexpr uint32_t kInChain = kNone - 1;  // being placed: a damaged tree's cycle stops there
    auto& position = scratch.position;
    if (position.size() < index.opCount()) position.resize(index.opCount(), kNone);
    uint32_t next = 0;
    std::vector<uint32_t> placedAtOf;  // by position
    const auto place = [&](uint32_t op, uint32_t fileRow) {
        auto& chain = scratch.chain;
        chain.clear();
        for (uint32_t o = op; o != kNone && o < position.size() && position[o] == kNone;
             o = index.op(o).parent) {
            position[o] = kInChain;
            chain.push_back(o);
        }
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            position[*it] = next++;
            placedAtOf.push_back(fileRow);
            scratch.placed.push_back(*it);
        }
    };
    // Within an op, inputs before outputs, each in file order: sorted by the bucket (position,
    // input or output), stably.
    const size_t n = roundRows.size();
    std::vector<uint32_t> bucketOf(n);
    for (size_t i = 0; i < n; ++i) {
        const auto& slot = index.slot(index.row(roundRows[i]).slot);
        if (position[slot.op] == kNone) place(slot.op, static_cast<uint32_t>(i));
        bucketOf[i] = position[slot.op] * 2 + (slot.isOutput ? 1 : 0);
    }
    const uint32_t buckets = 2 * next;
    out.rows.resize(n);
    std::vector<uint32_t> positionOf(n);  // of out.rows[i]'s op
    if (buckets <= 4 * n + 1024) {
        // Counting sort: a round's rows lie in a few buckets each, in file order already.
        std::vector<uint32_t> start(buckets + 1, 0);
        for (size_t i = 0; i < n; ++i) ++start[bucketOf[i] + 1];
        for (size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
        for (size_t i = 0; i < n; ++i) {
            const uint32_t at = start[bucketOf[i]]++;
            out.rows[at] = roundRows[i];
            positionOf[at] = bucketOf[i] / 2;
        }
    } else {  // deep trees of few rows
        std::vector<std::pair<uint64_t, uint32_t>> keyed(n);
        for (size_t i = 0; i < n; ++i) keyed[i] = {(uint64_t(bucketOf[i]) << 32) | i, roundRows[i]};
        std::sort(keyed.begin(), keyed.end());
        for (size_t i = 0; i < n; ++i) {
            out.rows[i] = keyed[i].second;
            positionOf[i] = static_cast<uint32_t>(keyed[i].first >> 33);
        }
    }
    for (uint32_t op : scratch.placed) position[op] = kNone;
    scratch.placed.clear();
    auto& occurrences = scratch.occurrences;
    for (uint32_t i = 0; i < out.rows.size();) {
        const uint32_t at = positionOf[i];
        uint32_t j = i + 1;
        while (j < out.rows.size() && positionOf[j] == at) ++j;
        const uint32_t op = index.slot(index.row(out.rows[i]).slot).op;
        const uint32_t occurrence = occurrences[nameIds[op]]++;
        out.instances.push_back(
            {op, i, j - i, placedAtOf[at], (uint64_t(nameIds[op]) << 24) ^ occurrence});
        i = j;
    }
    for (const Instance& instance : out.instances) occurrences[nameIds[instance.op]] = 0;
    return out;
}

// Ops of a name one run ran more often than the other in a round (an op skipped, a branch taken
// in one run): their keys are made again from the nearest op before them of a name both ran
// equally often, and their order after it. By the order in the round alone, an op missing from
// the candidate paired each later op of its name with the one before it in the reference, and
// their different numbers read as a divergence born there. `counts` is sized to the names, all
// zero on entry and on return.
void keyUnevenNamesByTheirNeighbours(RoundInstances& reference,
                                     const std::vector<uint32_t>& referenceNames,
                                     RoundInstances& candidate,
                                     const std::vector<uint32_t>& candidateNames,
                                     std::vector<int64_t>& counts) {
    // The reference's count less the candidate's, per name.
    for (const Instance& i : reference.instances) ++counts[referenceNames[i.op]];
    for (const Instance& i : candidate.instances) --counts[candidateNames[i.op]];
    bool uneven = false;
    for (const Instance& i : reference.instances) uneven = uneven || counts[referenceNames[i.op]];
    for (const Instance& i : candidate.instances) uneven = uneven || counts[candidateNames[i.op]];
    const auto mix = [](uint64_t a, uint64_t b) {
        return (a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2))) * 0xff51afd7ed558ccdull;
    };
    const auto rekey = [&](RoundInstances& round, const std::vector<uint32_t>& names) {
        uint64_t anchor = 0;  // the key of the last op of an evenly run name
        std::unordered_map<uint64_t, uint32_t> order;  // per (anchor, name): ops seen
        for (Instance& i : round.instances) {
            const uint32_t name = names[i.op];
            if (!counts[name]) {
                anchor = i.key;
                continue;
            }
            const uint64_t group = mix(anchor, name);
            // The top bit apart from the keys of names and occurrences (< 2^56).
            i.key = mix(group, order[group]++) | (uint64_t{1} << 63);
        }
    };
    if (uneven) {
        rekey(reference, referenceNames);
        rekey(candidate, candidateNames);
    }
    for (const Instance& i : reference.instances) counts[referenceNames[i.op]] = 0;
    for (const Instance& i : candidate.instances) counts[candidateNames[i.op]] = 0;
}

// Fingerprint -> tensor, open addressing (0 is no fingerprint): a million outputs go in and
// out of it while the walk runs, without a node allocation each. A key and its tensor share an
// entry: a lookup of a map far bigger than the caches costs one miss, not two.
class PrintMap {
public:
    // Empty, with room for `expected` keys before it grows.
    void clear(uint64_t expected = 0) {
        size_t size = 16;
        while (size < 2 * expected) size *= 2;
        entries_.assign(size, Entry{});
        size_ = 0;
    }
    void set(uint64_t key, uint32_t value) {
        if (Entry* entry = entryFor(key)) {
            if (!entry->key) ++size_;
            *entry = {key, value};
        }
    }
    // Sets `key` to `value` unless it has a value already; whether it did.
    bool add(uint64_t key, uint32_t value) {
        Entry* entry = entryFor(key);
        if (!entry || entry->key) return false;
        ++size_;
        *entry = {key, value};
        return true;
    }
    uint32_t find(uint64_t key) const {
        if (!key || entries_.empty()) return kNone;
        const Entry& entry = entries_[slot(key)];
        return entry.key == key ? entry.value : kNone;
    }

private:
    struct Entry {
        uint64_t key = 0;
        uint32_t value = kNone;
    };
    // The entry `key` has or goes in (empty when it is new), with room made for one more;
    // nullptr for key 0, no fingerprint.
    Entry* entryFor(uint64_t key) {
        if (!key) return nullptr;
        if ((size_ + 1) * 2 > entries_.size()) grow();
        return &entries_[slot(key)];
    }
    size_t slot(uint64_t key) const {
        const size_t mask = entries_.size() - 1;
        size_t at = static_cast<size_t>(key * 0x9e3779b97f4a7c15ull >> 20) & mask;
        while (entries_[at].key && entries_[at].key != key) at = (at + 1) & mask;
        return at;
    }
    void grow() {
        std::vector<Entry> old = std::move(entries_);
        entries_.assign(std::max<size_t>(16, old.size() * 2), Entry{});
        for (const Entry& entry : old)
            if (entry.key) entries_[slot(entry.key)] = entry;
    }
    std::vector<Entry> entries_;
    size_t size_ = 0;
};

StatValues statValuesOf(const StatRecord& r) {
    StatValues v;
    // Statistics the app computed from the tensor file are not the dump's: the comparison
    // judges the data itself, and fills in statistics from it as `probe compare` does.
    if (r.statsFromData) return v;
    for (int i = 0; i < kStatCount; ++i) {
        v.value[i] = r.value[i];
        if (r.has(static_cast<Stat>(i))) v.present |= static_cast<uint8_t>(1u << i);
    }
    return v;
}

// A row's tensor file open for reading its values, following a header-only alias to the first
// copy. nullptr when the run kept no data for it; `error` set when a file could not be read.
std::unique_ptr<TensorFileReader> tensorOf(const DumpIndex& index, uint32_t row,
                                           std::string* error) {
    if (!index.row(row).hasTensorFile) return nullptr;
    const std::string path = index.tensorPath(row, error);
    if (path.empty()) return nullptr;
    return TensorFileReader::open(path, index.layout() == DumpLayout::Atb, error);
}

// Two tensors of one shape measured (measureData), read from their files a piece at a time in
// step: a worker holds two pieces of kTensorPieceBytes at most, whatever the tensors' size (read
// whole, a pair of 256 MiB tensors took 1 GiB with two workers). With the reference's fingerprint
// and the statistics of both, which a dump of task "tensor" leaves out.
struct MeasuredPair {
    DataMeasures measures;
    uint64_t fingerprint = 0;
    format::TensorStats referenceStats, candidateStats;
};
std::optional<MeasuredPair> measurePair(const TensorFileReader& reference,
                                        const TensorFileReader& candidate, format::DType judged,
                                        double ulps, std::string* error) {
    const uint64_t count = reference.count();
    const uint64_t perPiece =
        std::max<uint64_t>(kTensorPieceBytes / std::max(format::dtypeSize(reference.dtype()),
                                                        format::dtypeSize(candidate.dtype())),
                           1);
    DataMeasurer measurer(reference.whole(), candidate.whole(), judged, ulps);
    DataFingerprint fingerprint(reference.whole());
    format::TensorStatsAccumulator referenceStats(reference.dtype()),
        candidateStats(candidate.dtype());
    TensorData a, b;
    for (uint64_t first = 0; first < count; first += perPiece) {
        const uint64_t n = std::min(perPiece, count - first);
        if (!reference.read(first, n, a, error) || !candidate.read(first, n, b, error))
            return std::nullopt;
        measurer.add(a, b);
        fingerprint.add(a);
        referenceStats.add(a.bytes.data(), n);
        candidateStats.add(b.bytes.data(), n);
    }
    return MeasuredPair{measurer.finish(), fingerprint.value(), referenceStats.result(),
                        candidateStats.result()};
}

// msprobe: a module's parameters are sources wherever they differ.
bool isParameterSlot(const DumpIndex& index, uint32_t row) {
    const auto& slot = index.slot(index.row(row).slot);
    return index.layout() == DumpLayout::Msprobe && !slot.isOutput &&
           startsWith(slot.index, "parameters");
}
// The op DDP's reducer runs for each parameter once its gradients are averaged: it copies the
// parameter's share of the reduced bucket into its .grad (op-level dumps; gloo and NCCL alike).
constexpr const char* kDdpCopyBucketToGrad = "torch.distributed.ddp.reducer::copy_bucket_to_grad";

// Op-level: a tensor of an op inside copy_bucket_to_grad (the copy into .grad, from the reduced
// bucket): the reduced gradient every replica must hold.
bool isReducedGradient(const DumpIndex& index, uint32_t row) {
    if (index.layout() != DumpLayout::Atb) return false;
    const auto& slot = index.slot(index.row(row).slot);
    for (uint32_t op = index.op(slot.op).parent; op != kNone; op = index.op(op).parent)
        if (index.op(op).type == kDdpCopyBucketToGrad) return true;
    return false;
}

// What data-parallel replicas must agree on: module parameters, what collectives return, and
// the reduced gradients DDP copies into .grad (op-level dumps). (Not msprobe's parameters_grad:
// those are recorded where autograd computes them, before DDP averages them; averaged gradients
// that disagree show as parameters that disagree at the next step.) Op-level dumps list no
// parameters: inputs named weight or bias (aten's argument names, "1_weight") stand for them,
// and so does the parameter copy_bucket_to_grad is given. Op-level collectives are not judged:
// an asynchronous one (gloo, NCCL) returns before its result is there.
bool isReplicaInvariant(const DumpIndex& index, uint32_t row) {
    if (isParameterSlot(index, row) || isReducedGradient(index, row)) return true;
    const auto& slot = index.slot(index.row(row).slot);
    if (index.layout() == DumpLayout::Msprobe)
        return slot.isOutput && startsWith(index.op(slot.op).type, "Distributed.");
    if (index.op(slot.op).type == kDdpCopyBucketToGrad) return !slot.isOutput;
    const size_t underscore = slot.index.find('_');
    const std::string name =
        underscore == std::string::npos ? "" : slot.index.substr(underscore + 1);
    return !slot.isOutput && (name == "weight" || name == "bias");
}

class Comparer {
public:
    Comparer(const DumpIndex& reference, const DumpIndex& candidate, const CompareOptions& options)
        : ref_(reference), cand_(candidate), options_(options) {
        result_.reference = &reference;
        result_.candidate = &candidate;
        result_.exact = options.exact;
        result_.replicas = options.replicas;
        // What could not be read of either dump: a verdict on the rest must say so (a dump
        // whose statistic.csv was a FIFO compared as "no tensor diverges", without a word).
        const auto noteProblems = [this](const DumpIndex& index, const char* side) {
            for (const std::string& text : index.problems())
                problem(std::string(side) + ": " + text);
        };
        if (&candidate == &reference) {  // a dump against itself (one of its ranks against another)
            noteProblems(reference, "the dump");
        } else {
            noteProblems(reference, "the reference");
            noteProblems(candidate, "the candidate");
        }
        threads_ = std::min(
            options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency()),
            64u);
    }

    CompareResult run() {
        // Nothing of one layout pairs with the other: said as such, not left to the guess
        // "different models, layouts, rounds or ranks?".
        if (ref_.layout() != cand_.layout()) {
            const auto kind = [](const DumpIndex& index) {
                return index.layout() == DumpLayout::Atb
                           ? std::string("an op-level dump (atb_dump_data, probe run)")
                           : std::string("an msprobe dump (step<N>/rank<R>, PrecisionDebugger)");
            };
            problem("the reference is " + kind(ref_) + ", the candidate " + kind(cand_) +
                    ": dumps of different layouts name their ops differently and cannot be "
                    "compared; dump both runs the same way");
        }
        if (!pairProcesses()) return std::move(result_);
        NameTable names;
        refNames_ = names.ofOps(ref_);
        candNames_ = names.ofOps(cand_);
        nameCount_ = names.size();
        result_.tensors.reserve(ref_.rowCount());
        {
            // A million compared tensors are 64 MB written for the first time: their pages are
            // faulted in on another core while this one pairs the ops (at 160 bytes a tensor,
            // their zeroing was a fifth of the pairing).
            PrefaultAhead prefault(result_.tensors.data(),
                                   result_.tensors.capacity() * sizeof(TensorComparison),
                                   kPrefaultAhead);
            tensorsPrefault_ = &prefault;
            noteUnfinished();  // first: why rounds may be missing, before which are
            for (const auto& [rp, cp] : result_.processPairs) pairOps(rp, cp);
            // After every process's paired rounds: their unpaired ops are listed first (of a run
            // of 17 rounds against one of 5, rank 0's extra rounds filled the list before rank
            // 1's paired rounds came).
            for (const auto& [rp, cp] : result_.processPairs) unpairedRounds(rp, cp);
            for (const auto& [inReference, p] : onlyInOneRun_)
                for (const auto& [round, rows] : (inReference ? ref_ : cand_).process(p).rounds)
                    unpairedRound(inReference ? ref_ : cand_, inReference, p, round, rows);
            noteCallCounts();
            noteLayerOrder();
            tensorsPrefault_ = nullptr;
        }
        if (cancelled()) return cancelledResult();
        prepareStrings();
        measureAndWalk();
        if (cancelled()) return cancelledResult();
        summarise();
        return std::move(result_);
    }

private:
    bool cancelled() const {
        return options_.cancel && options_.cancel->load(std::memory_order_relaxed);
    }
    CompareResult cancelledResult() {
        CompareResult out;
        out.reference = result_.reference;
        out.candidate = result_.candidate;
        out.cancelled = true;
        return out;
    }

    void problem(std::string text) {
        if (result_.problems.size() < kMaxProblems) result_.problems.push_back(std::move(text));
    }
    void note(std::string text) {
        if (result_.notes.size() < kMaxProblems) result_.notes.push_back(std::move(text));
    }

    // A process of `index` named by a scope: its key, or a rank number ("1" -> "rank1", an atb
    // device id). kNone when there is none.
    static uint32_t findProcess(const DumpIndex& index, const std::string& name) {
        if (uint32_t p = index.findProcess(name); p != kNone) return p;
        if (allDigits(name)) {
            if (uint32_t p = index.findProcess("rank" + name); p != kNone) return p;
            for (uint32_t p = 0; p < index.processCount(); ++p)
                if (startsWith(index.process(p).key, (name + "_").c_str())) return p;
        }
        return kNone;
    }
    static std::string processList(const DumpIndex& index) {
        std::string out;
        for (uint32_t p = 0; p < index.processCount(); ++p)
            out += (p ? ", " : "") + index.process(p).key;
        return out.empty() ? "none" : out;
    }

    bool pairProcesses() {
        const bool paired = pairProcessesOnly();
        result_.nameProcesses = result_.processPairs.size() > 1 ||
                                !options_.referenceScope.process.empty() ||
                                !options_.candidateScope.process.empty();
        for (const auto& [rp, cp] : result_.processPairs)
            if (ref_.layout() == DumpLayout::Msprobe &&
                ref_.process(rp).key != cand_.process(cp).key)
                result_.nameProcesses = true;
        return paired;
    }

    bool pairProcessesOnly() {
        const std::string& rs = options_.referenceScope.process;
        const std::string& cs = options_.candidateScope.process;
        uint32_t rp = kNone, cp = kNone;
        if (!rs.empty() && (rp = findProcess(ref_, rs)) == kNone) {
            problem("the reference has no process (rank) " + rs + "; it has " + processList(ref_));
            return false;
        }
        if (!cs.empty() && (cp = findProcess(cand_, cs)) == kNone) {
            problem("the candidate has no process (rank) " + cs + "; it has " + processList(cand_));
            return false;
        }
        if (rp != kNone || cp != kNone) {
            if (rp == kNone)
                rp = ref_.processCount() == 1 ? 0 : ref_.findProcess(cand_.process(cp).key);
            if (cp == kNone)
                cp = cand_.processCount() == 1 ? 0 : cand_.findProcess(ref_.process(rp).key);
            if (rp == kNone || cp == kNone) {
                problem("choose the other side's process too: the reference has " +
                        processList(ref_) + ", the candidate " + processList(cand_));
                return false;
            }
            result_.processPairs.emplace_back(rp, cp);
            return true;
        }
        // Every process: by its rank when both runs name every process's rank (msprobe: rank0,
        // op-level: <device>_<pid>, the pid differing between runs), a rank in one run only
        // being ops of one run only; else in order. (Paired in order, a run dumped on rank 1
        // alone was compared with the other's rank 0: a false divergence, and a missing rank
        // gave "no tensor diverges".)
        const auto refRanks = ranksOf(ref_), candRanks = ranksOf(cand_);
        if (!refRanks.empty() && !candRanks.empty()) {
            for (const auto& [rank, refProcess] : refRanks) {
                const auto other = candRanks.find(rank);
                if (other != candRanks.end())
                    result_.processPairs.emplace_back(refProcess, other->second);
            }
            for (const bool inReference : {true, false}) {
                const DumpIndex& index = inReference ? ref_ : cand_;
                const auto& others = inReference ? candRanks : refRanks;
                for (const auto& [rank, p] : inReference ? refRanks : candRanks) {
                    if (others.count(rank)) continue;
                    onlyInOneRun_.emplace_back(inReference, p);
                    note(std::string(inReference ? "the reference" : "the candidate") +
                         " has rank " + std::to_string(rank) + " (" + index.process(p).key +
                         ") and the other run has none: its ops are ops of one run only");
                }
            }
            // No rank in common (rank 0 dumped in one run, rank 1 in the other): nothing pairs
            // up, rather than rank 0 against rank 1 unsaid.
            if (result_.processPairs.empty())
                note("the runs have no rank in common (the reference: " + processList(ref_) +
                     "; the candidate: " + processList(cand_) +
                     "): to compare one rank with another, name both (--rank R --against-rank S)");
            return true;
        }
        if (ref_.processCount() == cand_.processCount()) {
            for (uint32_t p = 0; p < ref_.processCount(); ++p)
                result_.processPairs.emplace_back(p, p);
            return true;
        }
        pairProcessesBySharedOps();
        std::string pairs, alone;
        for (const auto& [r, c] : result_.processPairs)
            pairs +=
                (pairs.empty() ? "" : ", ") + ref_.process(r).key + " with " + cand_.process(c).key;
        for (const auto& [inReference, p] : onlyInOneRun_)
            alone += (alone.empty() ? "" : ", ") + (inReference ? ref_ : cand_).process(p).key;
        note("the reference has " + std::to_string(ref_.processCount()) + " process(es) (" +
             processList(ref_) + "), the candidate " + std::to_string(cand_.processCount()) + " (" +
             processList(cand_) + "): paired by the layer-level ops they share: " +
             (pairs.empty() ? std::string("none") : pairs) +
             (alone.empty()
                  ? std::string()
                  : "; " + alone + " with none: " + (onlyInOneRun_.size() == 1 ? "its" : "their") +
                        " ops are ops of one run only") +
             " (to choose: --rank R --against-rank S)");
        return true;
    }

    // Processes of two runs that name no ranks, as many as the smaller run has: each process of
    // that run, in order, with the other run's left that shares the most layer-level op names
    // with it (the first such on a tie; in order when none shares any). In order alone, a short
    // helper process the candidate ran first (a check of torch) was compared with the model:
    // "nothing to compare".
    void pairProcessesBySharedOps() {
        const auto layerNames = [](const DumpIndex& index) {
            std::vector<std::unordered_set<std::string_view>> names(index.processCount());
            for (uint32_t o = 0; o < index.opCount(); ++o) {
                const auto& op = index.op(o);
                if (op.depth == 0)
                    names[op.process].insert(index.layout() == DumpLayout::Msprobe
                                                 ? std::string_view(op.id)
                                                 : std::string_view(op.namePath));
            }
            return names;
        };
        const bool fewerInReference = ref_.processCount() <= cand_.processCount();
        const auto few = layerNames(fewerInReference ? ref_ : cand_),
                   many = layerNames(fewerInReference ? cand_ : ref_);
        std::vector<char> taken(many.size(), 0);
        for (uint32_t p = 0; p < few.size(); ++p) {
            uint32_t best = kNone;
            size_t bestShared = 0;
            for (uint32_t q = 0; q < many.size(); ++q) {
                if (taken[q]) continue;
                size_t shared = 0;
                for (const auto& name : few[p]) shared += many[q].count(name);
                if (best == kNone || shared > bestShared) {
                    best = q;
                    bestShared = shared;
                }
            }
            taken[best] = 1;
            result_.processPairs.emplace_back(fewerInReference ? p : best,
                                              fewerInReference ? best : p);
        }
        std::sort(result_.processPairs.begin(), result_.processPairs.end());
        // The larger run's processes left over ran in one run only, as a rank of one run does
        // (left out unsaid, the helper's ops were in neither the report nor the exit code).
        for (uint32_t q = 0; q < many.size(); ++q)
            if (!taken[q]) onlyInOneRun_.emplace_back(!fewerInReference, q);
    }

    // Each process's rank, when every process of the dump names a rank of its own; else empty.
    static std::map<int64_t, uint32_t> ranksOf(const DumpIndex& index) {
        std::map<int64_t, uint32_t> ranks;
        for (uint32_t p = 0; p < index.processCount(); ++p) {
            const int64_t rank = readProcessKey(index.layout(), index.process(p).key).rank;
            if (rank < 0 || !ranks.emplace(rank, p).second) return {};
        }
        return ranks;
    }

    // `inPairedRound`: the other run has the round (a round of one run only, or a rank, holds
    // ops of one run only by its nature).
    void addUnpaired(bool inReference, uint32_t process, int32_t round, uint32_t op,
                     bool inPairedRound = false) {
        ++result_.unpairedOps;
        if (inReference) ++result_.unpairedInReference;
        if (result_.unpaired.size() < kMaxUnpairedListed)
            result_.unpaired.push_back({inReference, process, round, op});
        else if (inPairedRound)
            result_.unpairedCutInPairedRound = true;
        // Op-level dumps: a layer-level op's rounds number its own calls; a call of one run only
        // is counted, to say when the runs called the op a different number of times.
        if (ref_.layout() == DumpLayout::Atb &&
            (inReference ? ref_ : cand_).op(op).parent == kNone) {
            const DumpIndex& index = inReference ? ref_ : cand_;
            ExtraLayerCalls& calls = extraLayerCalls_[(inReference ? refNames_ : candNames_)[op]];
            if (calls.name.empty()) calls.name = index.op(op).namePath;
            ++(inReference ? calls.inReference : calls.inCandidate);
        }
        // msprobe numbers an API's calls in order (Functional.linear.5), each step from 0:
        // counted per API, to say when the runs called one a different number of times.
        if (inPairedRound && ref_.layout() == DumpLayout::Msprobe) {
            const std::string& id = (inReference ? ref_ : cand_).op(op).id;
            if (const std::string api = apiOfEntry(id); !api.empty())
                ++(inReference ? unpairedCalls_[api].first : unpairedCalls_[api].second);
        }
    }
    // "Functional.linear" of "Functional.linear.5.forward"; "" for a module's entry and others.
    static std::string apiOfEntry(const std::string& id) {
        if (startsWith(id, "Module.")) return {};
        const size_t direction = id.rfind('.');
        if (direction == std::string::npos || direction == 0) return {};
        const size_t count = id.rfind('.', direction - 1);
        if (count == std::string::npos || !allDigits(id.substr(count + 1, direction - count - 1)))
            return {};
        return id.substr(0, count);
    }
    // A dump whose program did not end well, or is still running: what it lacks is missing,
    // not different (a killed run read as "the runs did not run the same ops").
    void noteUnfinished() {
        for (const bool inReference : {true, false}) {
            const DumpSummary status = summarizeStatus(inReference ? ref_ : cand_);
            if (!status.state) continue;
            if (*status.state == format::DumpState::Complete) {
                // Dumped whole, by a program that failed (an exception at step 1): its last
                // rounds are missing for that reason, not a different model (it was unsaid).
                std::string ended;
                if (status.endedBy && !status.endedBy->normal())
                    ended = describeEnd(status);
                else if (status.launcherEnd && !status.launcherEnd->normal())
                    ended = describeLauncherEnd(*status.launcherEnd);
                if (!ended.empty())
                    note(std::string("in the ") + (inReference ? "reference" : "candidate") + ", " +
                         ended + ": what it did not run is missing, not different");
                continue;
            }
            note(std::string(inReference ? "the reference" : "the candidate") + " is " +
                 (*status.state == format::DumpState::Running
                      ? "still being written (running): its last rounds may be missing or partial"
                      : "not a whole run (" + describeState(status) +
                            "): what it lacks is missing, not different"));
        }
    }
    // msprobe: the APIs the runs called a different number of times, in a note. Their calls
    // after the first that differs pair up calls made in different places (a layer skipped was
    // reported as a changed weight: the next layer's linear paired with it).
    void noteCallCounts() {
        noteLayerCallCounts();
        std::vector<std::string> apis;
        for (const auto& [api, counts] : unpairedCalls_)
            if (counts.first != counts.second) apis.push_back(api);
        if (apis.empty()) return;
        std::string listed;
        for (size_t i = 0; i < apis.size() && i < 3; ++i) {
            const auto& [inReference, inCandidate] = unpairedCalls_[apis[i]];
            const uint64_t more =
                inReference > inCandidate ? inReference - inCandidate : inCandidate - inReference;
            listed += (i ? ", " : "") + apis[i] + " (" + std::to_string(more) +
                      " more calls in the " +
                      (inReference > inCandidate ? "reference" : "candidate") +
                      ", over the steps compared)";
        }
        if (apis.size() > 3)
            listed += " and " + std::to_string(apis.size() - 3) +
                      (apis.size() == 4 ? " more API" : " more APIs");
        note("the runs called " + listed +
             " a different number of times: msprobe numbers an API's calls in order, so from the "
             "first call that differs on, calls of the same number may have been made in "
             "different places (a different path, not different numbers; a dump at level mix "
             "says where each call ran)");
    }

    // Op-level dumps: the layer-level ops both runs called, a different number of times (a block
    // applied once more in one step: its later calls were each compared with another call, and
    // the comparison named births where nothing changed). Counted from the calls of one run only
    // (addUnpaired).
    void noteLayerCallCounts() {
        if (extraLayerCalls_.empty()) return;
        std::unordered_set<uint32_t> inReference, inCandidate;
        for (uint32_t o = 0; o < ref_.opCount(); ++o)
            if (ref_.op(o).parent == kNone) inReference.insert(refNames_[o]);
        for (uint32_t o = 0; o < cand_.opCount(); ++o)
            if (cand_.op(o).parent == kNone) inCandidate.insert(candNames_[o]);
        // Only beside a layer-level op both ran equally often (a run of more steps calls every
        // op more often: its rounds of one run only are said already).
        bool anyEqual = false;
        for (const uint32_t name : inReference) {
            const auto it = extraLayerCalls_.find(name);
            if (inCandidate.count(name) &&
                (it == extraLayerCalls_.end() || it->second.inReference == it->second.inCandidate))
                anyEqual = true;
        }
        if (!anyEqual) return;
        std::string listed;
        size_t count = 0;
        for (const auto& [name, calls] : extraLayerCalls_) {
            if (calls.inReference == calls.inCandidate || !inReference.count(name) ||
                !inCandidate.count(name))
                continue;
            if (++count > 3) continue;
            const bool moreInReference = calls.inReference > calls.inCandidate;
            const uint64_t more = moreInReference ? calls.inReference - calls.inCandidate
                                                  : calls.inCandidate - calls.inReference;
            listed += std::string(count > 1 ? ", " : "") + calls.name + " (" +
                      std::to_string(more) + (more == 1 ? " more call" : " more calls") +
                      " in the " + (moreInReference ? "reference" : "candidate") + ")";
        }
        if (!count) return;
        if (count > 3) listed += " and " + std::to_string(count - 3) + " more";
        note("the runs called " + listed +
             " a different number of times: an op's rounds number its own calls, so from the "
             "first call one run made and the other did not, each call is compared with another "
             "one (a loop run more times, a branch taken in one run: a different path, not "
             "different numbers)");
    }

    // Op-level dumps: the first round whose layer-level ops ran in another order in the
    // candidate, in a note. Ops pair by name, so an op's input may differ by the order alone:
    // it was said to come from "no compared op" (modules of a ModuleDict called in another order).
    void noteLayerOrder() {
        if (ref_.layout() != DumpLayout::Atb) return;
        const auto firstCandidateRow = [&](const OpComparison& op) {
            uint32_t first = kNone;
            for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i)
                first = std::min(first, result_.tensors[i].candidateRow);
            return first;
        };
        size_t o = 0;
        while (o < result_.ops.size()) {
            const OpComparison& start = result_.ops[o];
            // The layer-level ops of this round, in the reference's order, with where each began
            // in the candidate's.
            std::vector<std::pair<uint32_t, uint32_t>> layers;  // (candidate row, op)
            size_t end = o;
            for (; end < result_.ops.size() &&
                   result_.ops[end].referenceProcess == start.referenceProcess &&
                   result_.ops[end].referenceRound == start.referenceRound;
                 ++end) {
                const OpComparison& op = result_.ops[end];
                if (ref_.op(op.referenceOp).parent != kNone) continue;
                if (const uint32_t row = firstCandidateRow(op); row != kNone)
                    layers.emplace_back(row, static_cast<uint32_t>(end));
            }
            std::vector<std::pair<uint32_t, uint32_t>> inCandidate = layers;
            std::stable_sort(inCandidate.begin(), inCandidate.end());
            if (inCandidate != layers) {
                size_t first = 0;
                while (layers[first] == inCandidate[first]) ++first;
                const auto list = [&](const std::vector<std::pair<uint32_t, uint32_t>>& order) {
                    std::string text;
                    const size_t last = std::min(order.size(), first + 4);
                    if (first > 0) text += "..., ";
                    for (size_t k = first; k < last; ++k)
                        text += (k > first ? ", " : "") +
                                ref_.op(result_.ops[order[k].second].referenceOp).namePath;
                    return text + (last < order.size() ? ", ..." : "");
                };
                note("the runs ran the layer-level ops in another order in round " +
                     std::to_string(start.referenceRound) + " (the reference " + list(layers) +
                     "; the candidate " + list(inCandidate) +
                     "): ops are paired by name, so an input may differ by the order alone");
                return;
            }
            o = end;
        }
    }

    // The rounds compared: the scopes' rounds against each other, else equal numbers.
    std::vector<std::pair<int32_t, int32_t>> pairRounds(uint32_t rp, uint32_t cp) {
        const auto& rr = ref_.process(rp).rounds;
        const auto& cr = cand_.process(cp).rounds;
        const auto& rs = options_.referenceScope.round;
        const auto& cs = options_.candidateScope.round;
        std::vector<std::pair<int32_t, int32_t>> pairs;
        if (rs || cs) {
            const int32_t a = rs ? *rs : *cs, b = cs ? *cs : *rs;
            if (!rr.count(a))
                problem("the reference's process " + ref_.process(rp).key + " has no " +
                        describeScope(ref_.layout(), {{}, a}));
            if (!cr.count(b))
                problem("the candidate's process " + cand_.process(cp).key + " has no " +
                        describeScope(cand_.layout(), {{}, b}));
            if (rr.count(a) && cr.count(b)) pairs.emplace_back(a, b);
            // One side's round folder narrows the other to that round: said, with what it left
            // out (the reference's other eight rounds went unmentioned, "no tensor diverges").
            if (rs.has_value() != cs.has_value()) {
                const bool byReference = rs.has_value();
                const DumpIndex& other = byReference ? cand_ : ref_;
                std::vector<int32_t> left = other.rounds(byReference ? cp : rp);
                left.erase(std::remove(left.begin(), left.end(), byReference ? b : a), left.end());
                // msprobe's rounds are steps; said once, not for each rank of the step.
                const std::string leftOut =
                    roundsText(left, other.layout() == DumpLayout::Msprobe ? "step" : "round");
                const std::string text =
                    describeScope(other.layout(), {{}, byReference ? b : a}) + " only, as the " +
                    (byReference ? "reference" : "candidate") + "'s folder names: the " +
                    (byReference ? "candidate" : "reference") + "'s " + leftOut + " left out";
                if (!left.empty() && std::find(result_.notes.begin(), result_.notes.end(), text) ==
                                         result_.notes.end())
                    note(text);
            }
            return pairs;
        }
        for (const auto& [round, rows] : rr)
            if (cr.count(round)) pairs.emplace_back(round, round);
        return pairs;
    }
    // Rounds of one side that the other does not have: all their ops are unpaired, and the
    // rounds are named (a run of 17 rounds against one of 5 said only "6668 op executions").
    void unpairedRounds(uint32_t rp, uint32_t cp) {
        if (options_.referenceScope.round || options_.candidateScope.round) return;
        const auto& rr = ref_.process(rp).rounds;
        const auto& cr = cand_.process(cp).rounds;
        std::vector<int32_t> alone[2];  // the reference's, the candidate's
        for (const auto& [round, rows] : rr)
            if (!cr.count(round)) {
                alone[0].push_back(round);
                unpairedRound(ref_, true, rp, round, rows);
            }
        for (const auto& [round, rows] : cr)
            if (!rr.count(round)) {
                alone[1].push_back(round);
                unpairedRound(cand_, false, cp, round, rows);
            }
        for (int side = 0; side < 2; ++side) {
            if (alone[side].empty()) continue;
            const DumpIndex& index = side == 0 ? ref_ : cand_;
            const uint32_t process = side == 0 ? rp : cp;
            const bool several = index.processCount() > 1;
            note(std::string(alone[side].size() == 1 ? "round " : "rounds ") +
                 roundList(alone[side]) + (alone[side].size() == 1 ? " is" : " are") + " in the " +
                 (side == 0 ? "reference" : "candidate") + " only" +
                 (several ? " (process " + index.process(process).key + ")" : std::string()) +
                 ": the " + (side == 0 ? "candidate" : "reference") + " has " +
                 roundsText(side == 0 ? cand_.rounds(cp) : ref_.rounds(rp)) +
                 "; their ops are not paired");
        }
    }
    // "no rounds", "round 0", "rounds 0..4".
    // `noun` "step": "steps 0..4" (msprobe's rounds).
    static std::string roundsText(const std::vector<int32_t>& rounds,
                                  const std::string& noun = "round") {
        if (rounds.empty()) return "no " + noun + "s";
        return noun + (rounds.size() == 1 ? " " : "s ") + roundList(rounds);
    }
    // Sorted rounds as ranges: "5..16", "0, 2, 4..6", "none"; past eight ranges, how many in all
    // (a live run's rounds, read with gaps, filled the app's summary with a hundred ranges).
    static std::string roundList(const std::vector<int32_t>& rounds) {
        if (rounds.empty()) return "none";
        constexpr int kShownRanges = 8;
        std::string out;
        int ranges = 0;
        for (size_t i = 0; i < rounds.size();) {
            if (++ranges > kShownRanges) {
                out += ", ... (" + std::to_string(rounds.size()) + " rounds in all, the last " +
                       std::to_string(rounds.back()) + ")";
                break;
            }
            size_t j = i;
            while (j + 1 < rounds.size() && rounds[j + 1] == rounds[j] + 1) ++j;
            if (!out.empty()) out += ", ";
            out += std::to_string(rounds[i]);
            if (j > i) out += (j == i + 1 ? ", " : "..") + std::to_string(rounds[j]);
            i = j + 1;
        }
        return out;
    }
    void unpairedRound(const DumpIndex& index, bool inReference, uint32_t process, int32_t round,
                       const std::vector<uint32_t>& rows) {
        std::unordered_map<uint32_t, bool> seen;
        for (uint32_t row : rows) {
            const uint32_t op = index.slot(index.row(row).slot).op;
            if (seen.emplace(op, true).second) addUnpaired(inReference, process, round, op);
        }
    }

    // A layer-level op and the ops inside it, in one round of the reference: instances
    // [first, end) of refRounds[round].
    struct ExecutionUnit {
        size_t round;
        uint32_t first, end;
    };
    // The paired rounds' layer-level ops in the order the reference ran them. A layer-level
    // op's round counts its own calls: a block called twice per step has rounds 0 and 1 in step
    // 0, and a branch taken in odd steps only has round 0 in step 1, so round after round is not
    // the order they ran in (a divergence born in step 2 was named at a branch of step 3). The
    // probe's row order file says which rows came when: the reference's, or the candidate's when
    // the reference has none (a reference dumped by another tool); without either, round after
    // round. `matchOf`: each reference instance's candidate instance (kNone: unpaired).
    std::vector<ExecutionUnit> executionOrder(
        uint32_t rp, uint32_t cp, const std::vector<std::pair<int32_t, int32_t>>& rounds,
        const std::vector<RoundInstances>& refRounds, const std::vector<RoundInstances>& candRounds,
        const std::vector<std::vector<uint32_t>>& matchOf) {
        std::vector<ExecutionUnit> units;
        for (size_t k = 0; k < rounds.size(); ++k) {
            const auto& instances = refRounds[k].instances;
            for (uint32_t i = 0; i < instances.size(); ++i)
                if (i == 0 || ref_.op(instances[i].op).parent == kNone)
                    units.push_back({k, i, i + 1});
                else
                    units.back().end = i + 1;
        }
        if (rounds.size() < 2) return units;
        // (What a row order file does not place, the reader said.)
        const bool byCandidate =
            ref_.process(rp).rowOrder.empty() && !cand_.process(cp).rowOrder.empty();
        const RowTimes times(byCandidate ? cand_.process(cp) : ref_.process(rp));
        if (times.roundsInOrder()) return units;
        // (When it began, unit): a unit of the reference alone, timed by the candidate's file,
        // keeps its place after the unit before it.
        std::vector<std::pair<uint64_t, size_t>> timed(units.size());
        uint64_t previous = 0;
        for (size_t u = 0; u < units.size(); ++u) {
            const ExecutionUnit& unit = units[u];
            const auto& instances = refRounds[unit.round].instances;
            uint64_t when = previous;
            if (!byCandidate) {
                when = times.of(rounds[unit.round].first, instances[unit.first].placedAt);
            } else {
                for (uint32_t i = unit.first; i < unit.end; ++i) {
                    const uint32_t match = matchOf[unit.round][i];
                    if (match == kNone) continue;
                    when = times.of(rounds[unit.round].second,
                                    candRounds[unit.round].instances[match].placedAt);
                    break;
                }
            }
            timed[u] = {when, u};
            previous = when;
        }
        std::sort(timed.begin(), timed.end());
        std::vector<ExecutionUnit> ordered;
        ordered.reserve(units.size());
        for (const auto& [when, u] : timed) ordered.push_back(units[u]);
        return ordered;
    }

    void pairOps(uint32_t rp, uint32_t cp) {
        // Every round's ops of both runs, sorted into execution order on the pool.
        const auto rounds = pairRounds(rp, cp);
        std::vector<RoundInstances> refRounds(rounds.size()), candRounds(rounds.size());
        std::vector<RoundScratch> scratch(threads_);
        parallelFor(2 * rounds.size(), threads_, [&](size_t k, unsigned worker) {
            RoundScratch& mine = scratch[worker];
            if (mine.occurrences.size() != nameCount_) mine.occurrences.assign(nameCount_, 0);
            const size_t r = k / 2;
            if (k % 2 == 0)
                refRounds[r] =
                    instancesOf(ref_, ref_.process(rp).rounds.at(rounds[r].first), refNames_, mine);
            else
                candRounds[r] = instancesOf(cand_, cand_.process(cp).rounds.at(rounds[r].second),
                                            candNames_, mine);
        });
        // Room for every op execution of the reference at once: grown round by round, a million
        // tensors' worth of ops were copied over and over.
        size_t executions = 0;
        for (const auto& round : refRounds) executions += round.instances.size();
        result_.ops.reserve(result_.ops.size() + executions);
        // Each round's reference instances paired with the candidate's (kNone: in one run only).
        std::vector<std::vector<uint32_t>> matchOf(rounds.size());
        std::vector<int64_t> nameCounts(nameCount_, 0);
        for (size_t k = 0; k < rounds.size(); ++k) {
            keyUnevenNamesByTheirNeighbours(refRounds[k], refNames_, candRounds[k], candNames_,
                                            nameCounts);
            const RoundInstances& r = refRounds[k];
            const RoundInstances& c = candRounds[k];
            // Runs of one model mostly list the same ops in the same order: walk both, and look
            // an op up only where they part.
            std::unordered_map<uint64_t, uint32_t> candByKey;
            std::vector<bool> candPaired(c.instances.size(), false);
            matchOf[k].assign(r.instances.size(), kNone);
            size_t next = 0;
            for (size_t i = 0; i < r.instances.size(); ++i) {
                const Instance& ri = r.instances[i];
                uint32_t match = kNone;
                if (next < c.instances.size() && c.instances[next].key == ri.key &&
                    !candPaired[next]) {
                    match = static_cast<uint32_t>(next++);
                } else {
                    if (candByKey.empty())
                        for (uint32_t j = 0; j < c.instances.size(); ++j)
                            candByKey.emplace(c.instances[j].key, j);
                    if (auto it = candByKey.find(ri.key);
                        it != candByKey.end() && !candPaired[it->second]) {
                        match = it->second;
                        next = match + 1;
                    }
                }
                // Keys made again (keyUnevenNamesByTheirNeighbours) are hashes: of one name only.
                if (match != kNone && refNames_[ri.op] != candNames_[c.instances[match].op])
                    match = kNone;
                if (match == kNone) {
                    addUnpaired(true, rp, rounds[k].first, ri.op, true);
                    continue;
                }
                candPaired[match] = true;
                matchOf[k][i] = match;
            }
            for (uint32_t j = 0; j < c.instances.size(); ++j)
                if (!candPaired[j])
                    addUnpaired(false, cp, rounds[k].second, c.instances[j].op, true);
        }
        // Reference op -> its OpComparison in the round being paired (stamped with the round).
        std::vector<std::pair<uint32_t, uint32_t>> compared(ref_.opCount(), {kNone, kNone});
        for (const ExecutionUnit& unit :
             executionOrder(rp, cp, rounds, refRounds, candRounds, matchOf)) {
            const size_t k = unit.round;
            const uint32_t stamp = static_cast<uint32_t>(k) + 1;
            const auto [rRound, cRound] = rounds[k];
            const RoundInstances& r = refRounds[k];
            const RoundInstances& c = candRounds[k];
            for (uint32_t i = unit.first; i < unit.end; ++i) {
                if (matchOf[k][i] == kNone) continue;
                const Instance& ri = r.instances[i];
                const Instance& ci = c.instances[matchOf[k][i]];
                OpComparison op;
                op.referenceOp = ri.op;
                op.candidateOp = ci.op;
                op.referenceProcess = rp;
                op.candidateProcess = cp;
                op.referenceRound = rRound;
                op.candidateRound = cRound;
                for (uint32_t up = ref_.op(ri.op).parent; up != kNone && up < compared.size();
                     up = ref_.op(up).parent) {
                    if (compared[up].first == stamp) {
                        op.parent = compared[up].second;
                        break;
                    }
                }
                op.firstTensor = static_cast<uint32_t>(result_.tensors.size());
                const uint32_t opIndex = static_cast<uint32_t>(result_.ops.size());
                pairTensors(opIndex, &r.rows[ri.firstRow], ri.rowCount, &c.rows[ci.firstRow],
                            ci.rowCount);
                op.tensorCount = static_cast<uint32_t>(result_.tensors.size()) - op.firstTensor;
                compared[ri.op] = {stamp, opIndex};
                result_.ops.push_back(op);
            }
        }
    }

    void pairTensors(uint32_t op, const uint32_t* refRows, uint32_t refCount,
                     const uint32_t* candRows, uint32_t candCount) {
        // Which candidate tensors are taken: kept between calls (an op has a few tensors, and
        // there is a call per op execution, a million of them).
        std::vector<uint8_t>& used = usedScratch_;
        used.assign(candCount, 0);
        for (uint32_t i = 0; i < refCount; ++i) {
            const auto& rs = ref_.slot(ref_.row(refRows[i]).slot);
            uint32_t match = kNone;
            for (uint32_t j = 0; j < candCount && match == kNone; ++j) {
                const auto& cs = cand_.slot(cand_.row(candRows[j]).slot);
                if (!used[j] && cs.isOutput == rs.isOutput && cs.index == rs.index) match = j;
            }
            if (match == kNone) {
                ++result_.tensorsOnlyInReference;
                continue;
            }
            used[match] = 1;
            TensorComparison t;
            t.op = op;
            t.referenceRow = refRows[i];
            t.candidateRow = candRows[match];
            t.isOutput = rs.isOutput;
            outputs_ += t.isOutput ? 1 : 0;
            result_.tensors.push_back(std::move(t));
            if (tensorsPrefault_ && result_.tensors.size() % kPrefaultEvery == 0)
                tensorsPrefault_->reached(result_.tensors.size() * sizeof(TensorComparison));
        }
        for (uint32_t j = 0; j < candCount; ++j) result_.tensorsOnlyInCandidate += used[j] ? 0 : 1;
    }

    // Phase 1, on the pool: every tensor's measures, independent of the others. Phase 2, the
    // walk, on this thread beside it: it goes as far as the tensors are measured (batches are
    // taken in order), and measures the next batch itself when it has to wait, so that neither
    // the walk waits for the last tensor to be measured nor a core for the walk.
    void measureAndWalk() {
        const size_t n = result_.tensors.size();
        dataPrint_.assign(result_.measures.size(), 0);
        statsPrint_.assign(n, 0);
        statsNonFinite_.assign(n, false);
        shapeDiffers_.assign(n, false);
        unmeasured_.assign(n, false);
        judgedExactly_.assign(n, false);
        passOf_.assign(result_.ops.size(), 0);
        // Statistics alone are cheap: hand them out in batches.
        const size_t batch = options_.useTensorData ? 1 : 256;
        const size_t batches = (n + batch - 1) / batch;
        // Tensors that could not be read, noted in tensor order whichever thread met them first
        // (a report must not change from run to run): only the first kMaxProblems are kept.
        std::mutex problemsMutex;
        std::vector<std::pair<size_t, std::string>> unreadable;
        auto measureBatch = [&](size_t b) {
            if (cancelled()) return;  // the rest of the batches are skipped quickly
            for (size_t i = b * batch; i < std::min(n, (b + 1) * batch); ++i) {
                std::string error;
                measureTensor(i, &error);
                if (!error.empty()) {
                    std::lock_guard<std::mutex> lock(problemsMutex);
                    unreadable.emplace_back(i, std::move(error));
                    if (unreadable.size() >= 2 * kMaxProblems) keepFirst(unreadable);
                }
            }
        };
        OrderedPieces pieces(batches);
        size_t frontier = 0;  // the batches before it are measured
        // Whether tensors [0, end) are measured, once they are; false when cancelled.
        auto measuredUpTo = [&](size_t end) {
            for (; frontier < batches && frontier * batch < end; ++frontier) {
                pieces.waitFor(frontier, measureBatch, [] { return false; });
                if (options_.progress) options_.progress(std::min((frontier + 1) * batch, n), n);
            }
            return !cancelled();
        };
        std::vector<std::thread> pool;
        auto joinPool = [&] {
            pieces.stop();
            for (auto& t : pool) t.join();
        };
        try {
            for (unsigned t = 1; t < threads_ && t < batches; ++t)
                pool.emplace_back([&] { pieces.doAll(measureBatch); });
            walk(measuredUpTo);
            measuredUpTo(n);
        } catch (...) {  // out of memory: the pool's batches refer to this frame
            joinPool();
            throw;
        }
        joinPool();
        if (options_.progress) options_.progress(n, n);
        keepFirst(unreadable);
        for (auto& [tensor, text] : unreadable) problem(std::move(text));
    }
    // The first kMaxProblems notes in tensor order, each once: tensors de-duplicated into one
    // file all meet that file, and one that could not be read was noted for each of them (16
    // times the same line; found by a hostile-input pass), pushing other files out of the notes.
    static void keepFirst(std::vector<std::pair<size_t, std::string>>& notes) {
        std::sort(notes.begin(), notes.end());
        std::set<std::string> seen;
        std::vector<std::pair<size_t, std::string>> kept;
        for (auto& note : notes) {
            if (kept.size() == kMaxProblems) break;
            if (seen.insert(note.second).second) kept.push_back(std::move(note));
        }
        notes = std::move(kept);
    }

    // What a row's string says, worked out once per string of each index rather than per row: the
    // dtype it names (and that dtype's allowance, epsilon and smallest normal), the hash of its
    // text, which texts the two indexes share (one number for one text), and (reference) the
    // element count of the shape it spells. A string number past the table (none) stands for
    // the empty text, as DumpIndex::text has it, naming no dtype.
    struct StringFacts {
        std::optional<format::DType> dtype;
        double ulps = 0, epsilon = 0, tiny = 0;
        uint64_t hash = 0;      // dtypeHash of the text
        uint64_t count = 0;     // reference: elements of the shape it spells (0: none)
        uint32_t sameText = 0;  // equal for equal texts, across both indexes
    };
    void prepareStrings() {
        std::unordered_map<std::string_view, uint32_t> textNumbers;
        auto facts = [&](const DumpIndex& index, bool counts) {
            std::vector<StringFacts> out(index.stringCount() + 1);
            for (uint32_t s = 0; s < out.size(); ++s) {
                const bool none = s == index.stringCount();
                const std::string_view text = none ? std::string_view() : index.text(s);
                StringFacts& f = out[s];
                f.dtype = none ? std::nullopt : dtypeFromAnyName(text);
                if (f.dtype) {
                    f.ulps = allowedUlps(options_.ulps, *f.dtype);
                    f.epsilon = machineEpsilon(*f.dtype);
                    f.tiny = smallestNormal(*f.dtype);
                }
                f.hash = dtypeHash(text);
                f.sameText =
                    textNumbers.try_emplace(text, static_cast<uint32_t>(textNumbers.size()))
                        .first->second;
                if (counts && !none)
                    if (const auto dims = format::parseShapeString(text))
                        f.count = format::elementCount(*dims).value_or(0);
            }
            return out;
        };
        refFacts_ = facts(ref_, true);
        candFacts_ = facts(cand_, false);
        // Where both runs kept the data, a slot for its measures. Where one run kept the data
        // and left its statistics out (task "tensor") and the other kept statistics only, a slot
        // for the statistics the data gives (measureTensor): without them, nothing in common.
        for (auto& t : result_.tensors) {
            if (!options_.useTensorData) continue;
            const StatRecord &rr = ref_.row(t.referenceRow), &cr = cand_.row(t.candidateRow);
            const bool both = rr.hasTensorFile && cr.hasTensorFile;
            // The dumps' own statistics (statValuesOf), not those the app computed from files.
            const bool refStats = statValuesOf(rr).present, candStats = statValuesOf(cr).present;
            const bool oneSided =
                rr.hasTensorFile != cr.hasTensorFile &&
                (rr.hasTensorFile ? !refStats && candStats : !candStats && refStats);
            if (!both && !oneSided) continue;
            t.dataIndex = static_cast<uint32_t>(result_.measures.size());
            result_.measures.emplace_back();
            outputsWithData_ += both && t.isOutput ? 1 : 0;
        }
        result_.measuredStats.resize(result_.measures.size());
    }
    static const StringFacts& factsOf(const std::vector<StringFacts>& table, uint32_t s) {
        return s < table.size() ? table[s] : table.back();
    }

    void measureTensor(size_t i, std::string* error) {
        TensorComparison& t = result_.tensors[i];
        const StatRecord& rr = ref_.row(t.referenceRow);
        const StatRecord& cr = cand_.row(t.candidateRow);
        StatValues referenceStats = statValuesOf(rr), candidateStats = statValuesOf(cr);
        const StringFacts& refDType = factsOf(refFacts_, rr.dtype);
        const StringFacts& candDType = factsOf(candFacts_, cr.dtype);
        t.setDTypes(refDType.dtype, candDType.dtype);
        const std::optional<format::DType> judgedDType = t.judgedDType();
        // The facts of the judging dtype (judgingDType's choice): none when neither names one.
        const StringFacts& judged = refDType.dtype ? refDType : candDType;
        judgedExactly_[i] = judged.epsilon == 0;
        t.ulps = judged.ulps;
        t.replicaInvariant = options_.replicas && isReplicaInvariant(ref_, t.referenceRow);
        t.reducedGradient = t.replicaInvariant && isReducedGradient(ref_, t.referenceRow);
        const StringFacts& refShape = factsOf(refFacts_, rr.shape);
        shapeDiffers_[i] = refShape.sameText != factsOf(candFacts_, cr.shape).sameText;
        uint64_t count = refShape.count;
        if (referenceStats.present)
            statsPrint_[i] = statsFingerprint(refDType.hash, count, referenceStats);

        if (t.dataIndex != kNone && !shapeDiffers_[i] && rr.hasTensorFile && cr.hasTensorFile) {
            const auto a = tensorOf(ref_, t.referenceRow, error);
            const auto b = a ? tensorOf(cand_, t.candidateRow, error) : nullptr;
            if (a && b && a->whole().header.dims != b->whole().header.dims) {
                shapeDiffers_[i] = true;
            } else if (a && b && judgedDType) {
                if (auto pair = measurePair(*a, *b, *judgedDType, t.ulps, error)) {
                    result_.measures[t.dataIndex] = pair->measures;
                    t.hasData = true;
                    dataPrint_[t.dataIndex] = pair->fingerprint;
                    count = a->count();
                    // Statistics the dump left out (task tensor) come from the data.
                    fillStats(referenceStats, pair->referenceStats);
                    fillStats(candidateStats, pair->candidateStats);
                    result_.measuredStats[t.dataIndex] = {referenceStats, candidateStats};
                }
            }
        }
        if (t.dataIndex != kNone && !t.hasData && !shapeDiffers_[i] &&
            !referenceStats.present != !candidateStats.present) {
            // One run's data, the other's statistics: the data's statistics stand for those its
            // run left out, and the tensor is judged by statistics.
            const bool fromReference = !referenceStats.present;
            const DumpIndex& index = fromReference ? ref_ : cand_;
            const uint32_t row = fromReference ? t.referenceRow : t.candidateRow;
            const std::string path =
                index.row(row).hasTensorFile ? index.tensorPath(row, error) : std::string();
            if (const auto one =
                    path.empty()
                        ? std::nullopt
                        : statisticsOfTensorFile(path, index.layout() == DumpLayout::Atb, error)) {
                StatValues& filled = fromReference ? referenceStats : candidateStats;
                fillStats(filled, *one);
                // Against statistics an op-level dump printed (six decimals), as it would have
                // printed these: the same tensor then has the same statistics to the bit, and
                // nothing downstream "differs" by the printing alone.
                if ((fromReference ? cand_ : ref_).layout() == DumpLayout::Atb)
                    for (double& v : filled.value)
                        v = format::parseStatValue(format::formatStatValue(v), nullptr).value_or(v);
                result_.measuredStats[t.dataIndex] = {referenceStats, candidateStats};
                if (fromReference && referenceStats.present)
                    statsPrint_[i] = statsFingerprint(refDType.hash, count, referenceStats);
            }
        }
        const DataMeasures& m = result_.data(static_cast<uint32_t>(i));
        if (!t.hasData && !shapeDiffers_[i] && !(referenceStats.present & candidateStats.present)) {
            unmeasured_[i] =
                true;  // counted as compared and matching, it made "no tensor diverges"
            return;
        }
        t.differs = shapeDiffers_[i] ||
                    (t.hasData ? !m.bytesEqual
                               : statisticsDiffer(referenceStats, candidateStats,
                                                  refDType.sameText != candDType.sameText));
        if (options_.replicas && !t.replicaInvariant)
            t.differs = false;  // replicas' activations differ by design
        if (t.hasData) {
            t.ownRms = m.referenceRms;
            t.requiredScale = m.requiredScale;
        } else {
            if (referenceStats.has(3) && std::isfinite(referenceStats.value[3]) && count > 0)
                t.ownRms = referenceStats.value[3] / std::sqrt(static_cast<double>(count));
            // An unknown dtype is judged exactly (epsilon and smallest normal 0, as Int64's).
            bool nonFinite = false;
            int worstStatistic = -1;
            t.requiredScale = statisticsRequiredScale(
                referenceStats, candidateStats, count, t.ulps, judged.epsilon, judged.tiny,
                ref_.layout() == DumpLayout::Atb || cand_.layout() == DumpLayout::Atb
                    ? kAtbStatisticQuantum
                    : 0,
                &nonFinite, &worstStatistic);
            t.worstStatistic = static_cast<int8_t>(worstStatistic);
            statsNonFinite_[i] = nonFinite;
        }
    }

    // Without data: whether the dtype or any statistic differs at all (NaN equals NaN).
    static bool statisticsDiffer(const StatValues& reference, const StatValues& candidate,
                                 bool dtypesDiffer) {
        if (dtypesDiffer || reference.present != candidate.present) return true;
        for (int k = 0; k < 4; ++k) {
            const double a = reference.value[k], b = candidate.value[k];
            if (reference.has(k) && !(a == b || (std::isnan(a) && std::isnan(b)))) return true;
        }
        return false;
    }

    static void fillStats(StatValues& stats, const format::TensorStats& from) {
        if (stats.present || !from.valid) return;
        const double values[4] = {from.max, from.min, from.mean, from.norm};
        for (int k = 0; k < 4; ++k) stats.value[k] = values[k];
        stats.present = 0xf;
    }

    // The verdict of one tensor against the floor at `scale`.
    void judge(uint32_t i, double scale) {
        TensorComparison& t = result_.tensors[i];
        t.scale = scale;
        DivergenceRule rule = DivergenceRule::None;
        if (unmeasured_[i]) {
            // Nothing known either way.
        } else if (shapeDiffers_[i]) {
            rule = DivergenceRule::Shape;
        } else if (options_.exact) {
            if (t.hasData) {
                if (!result_.data(i).bytesEqual) rule = DivergenceRule::Bytes;
            } else if (t.differs) {
                rule = DivergenceRule::Bytes;
            }
        } else if (t.hasData ? result_.data(i).nonFiniteMismatches > 0 : statsNonFinite_[i]) {
            rule = DivergenceRule::NonFinite;
        } else if (t.requiredScale > scale) {
            rule = t.hasData ? DivergenceRule::Elements : DivergenceRule::Statistic;
        }
        if (options_.replicas && !t.replicaInvariant) rule = DivergenceRule::None;
        t.rule = rule;
        t.diverges = rule != DivergenceRule::None;
        if (t.diverges && !firstDiverging_) firstDiverging_ = i;
    }

    uint64_t dataPrintOf(uint32_t i) const {
        const uint32_t d = result_.tensors[i].dataIndex;
        return d < dataPrint_.size() ? dataPrint_[d] : 0;
    }

    bool samePrint(uint32_t a, uint32_t b) const {
        const uint64_t dataA = dataPrintOf(a), dataB = dataPrintOf(b);
        if (dataA && dataB) return dataA == dataB;
        return statsPrint_[a] && statsPrint_[a] == statsPrint_[b];
    }

    // The tensor `i` is the same data as: an input of an open enclosing op, else the latest
    // output with its fingerprint.
    uint32_t producerOf(uint32_t i, const std::vector<uint32_t>& open) const {
        for (auto it = open.rbegin(); it != open.rend(); ++it) {
            const OpComparison& a = result_.ops[*it];
            for (uint32_t u = a.firstTensor; u < a.firstTensor + a.tensorCount; ++u)
                if (!result_.tensors[u].isOutput && u != i && samePrint(i, u)) return u;
        }
        if (const uint32_t found = producedData_.find(dataPrintOf(i)); found != kNone) return found;
        return producedStats_.find(statsPrint_[i]);
    }

    // Whether tensor `i`, of op `o`, is data seen as a diverging input from outside the model in
    // an earlier pass, before any pass carried a divergence (a weight, a fixed input): not one
    // the program may have made from a divergence (a token, which may come again).
    bool outsideInputOfAnEarlierPass(uint32_t i, uint32_t o) const {
        const uint32_t seen =
            dataPrintOf(i) ? outsideData_.find(dataPrintOf(i)) : outsideStats_.find(statsPrint_[i]);
        return seen != kNone && passOf_[result_.tensors[seen].op] < passOf_[o] &&
               !sightedAfterADivergence_.count(seen);
    }

    // The latest op whose output carried a divergence, and the latest of a pass before its.
    struct Carrying {
        uint32_t latest = kNone, before = kNone;
    };

    // The latest layer-level op of a pass before op `o`'s whose output carried a divergence,
    // kNone when none did.
    uint32_t carryingBefore(uint32_t o) const { return carryingBefore(carrying_, o); }
    uint32_t carryingBefore(const Carrying& carrying, uint32_t o) const {
        for (const uint32_t c : {carrying.latest, carrying.before})
            if (c != kNone && passOf_[c] < passOf_[o]) return c;
        return kNone;
    }
    void noteCarrying(Carrying& carrying, uint32_t o) const {
        if (carrying.latest != kNone && passOf_[carrying.latest] < passOf_[o])
            carrying.before = carrying.latest;
        carrying.latest = o;
    }

    void openOp(uint32_t o, const std::vector<uint32_t>& open) {
        OpComparison& op = result_.ops[o];
        op.began = clock_++;
        if (ref_.layout() == DumpLayout::Msprobe || op.parent == kNone) {  // forwardDivergenceOf
            if (latestComparisonOf_.empty()) latestComparisonOf_.assign(ref_.opCount(), kNone);
            latestComparisonOf_[op.referenceOp] = o;
        }
        for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i) {
            TensorComparison& t = result_.tensors[i];
            if (t.isOutput) continue;
            // A parameter differs where it is used: it is never "received" from elsewhere.
            t.producer = isParameterSlot(ref_, t.referenceRow) ? kNone : producerOf(i, open);
            // The same data as an input from outside in an earlier pass, and as an output of an
            // earlier pass too: it is that input again (a bias used again, last step copied into
            // an output by addmm's copy_, was said to come from that copy_).
            if (t.producer != kNone && passOf_[result_.tensors[t.producer].op] < passOf_[o] &&
                outsideInputOfAnEarlierPass(i, o))
                t.producer = kNone;
            const double inherited = t.producer != kNone ? result_.tensors[t.producer].scale : 0;
            judge(i, std::max(t.ownRms, inherited));
            if (t.producer == kNone && t.diverges) {
                // From outside the model, diverging: its first sighting (divergenceFedBackTo).
                // (`|`, not `||`: both maps are given it.)
                const bool first =
                    outsideData_.add(dataPrintOf(i), i) | outsideStats_.add(statsPrint_[i], i);
                if (first && carryingBefore(o) != kNone) sightedAfterADivergence_.insert(i);
            }
            const bool carried =
                t.producer != kNone && result_.tensors[t.producer].carriesDivergence;
            t.source = t.diverges && !carried;
            t.carriesDivergence = t.diverges || (t.differs && carried);
        }
    }

    // Whether an aten op of type `type` draws random numbers (dropout's bernoulli_ mask).
    static bool makesRandomNumbers(std::string_view type) {
        for (const std::string_view random :
             {"bernoulli", "uniform", "normal", "exponential", "geometric", "cauchy", "rand",
              "multinomial", "poisson", "dropout"})
            if (type.find(random) != std::string_view::npos) return true;
        return false;
    }

    // An op inside an aten op's kernel with no input compared (the fill_ with which min() writes
    // its result: its value is no tensor) computes from its parent's inputs: when one of those
    // carries a divergence, a diverging output of it is that divergence, not born here (every
    // full min and max was called a birth, 75 of 84 in one comparison). Not so inside a module,
    // whose children may make values of their own (randn), nor for an op drawing random numbers
    // (dropout's bernoulli_ mask).
    bool computesFromItsAtenParent(const OpComparison& op) const {
        if (op.parent == kNone) return false;
        for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i)
            if (!result_.tensors[i].isOutput && (statsPrint_[i] || dataPrintOf(i))) return false;
        const OpComparison& parent = result_.ops[op.parent];
        if (!startsWith(ref_.op(parent.referenceOp).type, "aten::")) return false;
        if (makesRandomNumbers(ref_.op(op.referenceOp).type)) return false;
        for (uint32_t i = parent.firstTensor; i < parent.firstTensor + parent.tensorCount; ++i)
            if (!result_.tensors[i].isOutput && result_.tensors[i].carriesDivergence) return true;
        return false;
    }

    void closeOp(uint32_t o) {
        OpComparison& op = result_.ops[o];
        op.finished = clock_++;
        // The size of the numbers the op worked with: its floating-point inputs'. Integer and
        // bool inputs are ids, indices and masks (an embedding's token ids in the hundreds set
        // its output's floor a hundred times too wide); they are judged exactly themselves.
        double inputScale = 0;
        for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i)
            if (!result_.tensors[i].isOutput && !judgedExactly_[i])
                inputScale = std::max(inputScale, result_.tensors[i].ownRms);
        uint32_t inheritedInput = kNone, sourceInput = kNone, divergingOutput = kNone;
        for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i) {
            TensorComparison& t = result_.tensors[i];
            if (!t.isOutput) {
                if (t.carriesDivergence && !t.source && inheritedInput == kNone) inheritedInput = i;
                if (t.source && sourceInput == kNone) sourceInput = i;
                continue;
            }
            // An output that is a child's output passed up is judged as the child judged it.
            const uint32_t inner = producerOf(i, {});
            const bool fromChild =
                inner != kNone && result_.ops[result_.tensors[inner].op].began > op.began;
            if (fromChild) t.producer = inner;
            judge(i,
                  std::max({t.ownRms, inputScale, fromChild ? result_.tensors[inner].scale : 0.0}));
            if (t.diverges && divergingOutput == kNone) divergingOutput = i;
        }
        if (inheritedInput != kNone) {
            op.verdict = OpVerdict::Inherited;
            op.cause = inheritedInput;
            op.inheritedFrom = result_.tensors[result_.tensors[inheritedInput].producer].op;
        } else if (sourceInput != kNone || divergingOutput != kNone) {
            op.cause = sourceInput != kNone ? sourceInput : divergingOutput;
            const auto [from, reception] = receivedOtherwise(o, sourceInput, divergingOutput);
            op.verdict = from != kNone ? OpVerdict::Inherited : OpVerdict::BornHere;
            op.inheritedFrom = from;
            op.reception = from != kNone ? reception : Reception::Direct;
        }
        // msprobe: the round's first divergence, born here or inherited from an earlier round (a
        // weight updated by a step that diverged), in the forward or in a backward entry (a
        // wrong custom backward): the gradients after it differ.
        if (op.verdict != OpVerdict::Matches && ref_.layout() == DumpLayout::Msprobe) {
            // The one that began first (a child closes before its parent, which began before it).
            auto [first, added] = firstDivergence_.try_emplace(roundOf(op), o);
            if (!added && op.began < result_.ops[first->second].began) first->second = o;
        }
        bool carries = false, differs = false;
        for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i) {
            TensorComparison& t = result_.tensors[i];
            if (!t.isOutput) continue;
            // A child's output passed up carries what the child's carried: a module whose
            // output differs below the floor, from an inherited op inside it, matches itself
            // but hands the divergence on (the next layer was called born here, by statistics).
            const bool passedUp =
                t.producer != kNone && result_.tensors[t.producer].carriesDivergence;
            t.carriesDivergence =
                t.diverges || (t.differs && (op.verdict != OpVerdict::Matches || passedUp));
            producedData_.set(dataPrintOf(i), i);
            producedStats_.set(statsPrint_[i], i);
            carries = carries || t.carriesDivergence;
            differs = differs || t.differs;
        }
        if (op.parent != kNone) return;
        if (carries) noteCarrying(carrying_, o);
        if (ref_.layout() != DumpLayout::Msprobe) noteStateOf(o, carries, differs);
    }

    // Op-level dumps, a layer-level op closed: what it says of its module's state
    // (divergenceCarriedInStateTo). A backward op carrying a divergence, at an output or at an
    // input (the first layer's backward has no output: its module's input needs no gradient, yet
    // the gradient coming in updates its weights), may have changed its forward op's
    // parameters; a forward op, its cache. A forward execution none of whose outputs differs at
    // all shows its state as the reference's: what carried before is forgotten (an eval loop's
    // overflow at batch 4, after batch 0 alone differed, was taken as carried from batch 0).
    void noteStateOf(uint32_t o, bool outputCarries, bool outputDiffers) {
        const OpComparison& op = result_.ops[o];
        const uint32_t forward = forwardLayerOpOf(op);
        if (forward == kNone) return;
        const bool backward = forward != op.referenceOp;
        bool carries = outputCarries;
        for (uint32_t i = op.firstTensor;
             backward && !carries && i < op.firstTensor + op.tensorCount; ++i)
            carries = result_.tensors[i].carriesDivergence;
        if (carries) {
            noteCarrying(carryingThrough_[forward], o);
        } else if (!backward && !outputDiffers && op.verdict == OpVerdict::Matches) {
            carryingThrough_.erase(forward);
        }
    }

    // Op-level dumps: the reference's forward layer-level op of layer-level op `op`: its own, or
    // for a backward op ("fc.backward", "fc.backward_1") the op it is the backward of (kNone when
    // the dump has none of that name).
    uint32_t forwardLayerOpOf(const OpComparison& op) const {
        const std::string_view forward =
            format::forwardOfBackwardLayerOp(ref_.op(op.referenceOp).namePath);
        return forward.empty() ? op.referenceOp : layerOpNamed(op.referenceProcess, forward);
    }

    // A layer-level module op (no aten op: those keep no state) whose output diverges while its
    // inputs match, not passed up from an op inside it, after an execution of it or of its
    // backward op in an earlier pass carried a divergence: the latest such execution, kNone
    // otherwise. The divergence is taken as carried in the module's own state, its parameters
    // updated by an optimizer from gradients that diverged, or a cache it keeps: a training run
    // compared at layer level (probe run's default) had its last layer born again at every step
    // after the first divergence. A module's weight changed at a later step for another reason
    // would look the same (listed, as fed-back inputs are).
    uint32_t divergenceCarriedInStateTo(uint32_t o, uint32_t sourceInput,
                                        uint32_t divergingOutput) const {
        const OpComparison& op = result_.ops[o];
        if (sourceInput != kNone || divergingOutput == kNone || op.parent != kNone ||
            carryingThrough_.empty() || ref_.layout() == DumpLayout::Msprobe)
            return kNone;
        if (result_.tensors[divergingOutput].producer != kNone) return kNone;  // from inside it
        if (startsWith(ref_.op(op.referenceOp).type, "aten::")) return kNone;
        const auto carried = carryingThrough_.find(forwardLayerOpOf(op));
        if (carried == carryingThrough_.end()) return kNone;
        const uint32_t from = carryingBefore(carried->second, o);
        // The op that begins each pass: its calls are passes by definition, so its own forward
        // call before is no step before (a module called twice in one forward, first of all); only
        // its backward op, whose gradients an optimizer applies, changed its state.
        if (from != kNone && op.referenceOp == passOp_ &&
            result_.ops[from].referenceOp == op.referenceOp)
            return kNone;
        return from;
    }

    // An op whose divergence no compared op's output brought to an input: the op it is taken to
    // have received it from all the same, and how (kNone: born here).
    std::pair<uint32_t, Reception> receivedOtherwise(uint32_t o, uint32_t sourceInput,
                                                     uint32_t divergingOutput) const {
        if (const uint32_t forward = forwardDivergenceOf(o); forward != kNone)
            return {forward, Reception::Direct};
        if (sourceInput == kNone && computesFromItsAtenParent(result_.ops[o]))
            return {result_.ops[o].parent, Reception::Direct};
        // NaN or Inf in one run only, where what an earlier step carried had none: a new
        // overflow, born here (a NaN set at step 5 was taken as fed back, or carried in its op's
        // state, from step 0's small change).
        const uint32_t cause = sourceInput != kNone ? sourceInput : divergingOutput;
        const bool nonFinite = result_.tensors[cause].rule == DivergenceRule::NonFinite;
        const auto ifItCarriedThat = [&](uint32_t from) {
            return from == kNone || !nonFinite || hasNonFiniteInOneRun(from) ? from : kNone;
        };
        if (const uint32_t earlier =
                ifItCarriedThat(divergenceFedBackTo(o, sourceInput, divergingOutput));
            earlier != kNone)
            return {earlier, Reception::FedBack};
        return {ifItCarriedThat(divergenceCarriedInStateTo(o, sourceInput, divergingOutput)),
                Reception::InOwnState};
    }

    bool hasNonFiniteInOneRun(uint32_t o) const {
        const OpComparison& op = result_.ops[o];
        for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i)
            if (result_.tensors[i].rule == DivergenceRule::NonFinite) return true;
        return false;
    }

    // An op whose diverging inputs all came from outside the model, new in this pass, after an
    // op of an earlier pass handed a divergence out: the latest such op, kNone otherwise. The
    // program passed that divergence on (a token generated from the last round's output, a
    // weight the optimizer updated after a step that diverged): every round of a generation
    // loop was a birth. Data seen in an earlier pass too, where it was no such input (a fixed
    // input, a changed weight used again), differs for its own reason: born here. A layer
    // whose diverging output a child passed up, the child fed back, is fed back too.
    uint32_t divergenceFedBackTo(uint32_t o, uint32_t sourceInput, uint32_t divergingOutput) const {
        const OpComparison& op = result_.ops[o];
        if (sourceInput == kNone) {
            const uint32_t inner =
                divergingOutput != kNone ? result_.tensors[divergingOutput].producer : kNone;
            if (inner == kNone) return kNone;
            const OpComparison& child = result_.ops[result_.tensors[inner].op];
            return child.fedBack() && child.began > op.began ? child.inheritedFrom : kNone;
        }
        const uint32_t earlier = carryingBefore(o);
        if (earlier == kNone) return kNone;
        for (uint32_t i = op.firstTensor; i < op.firstTensor + op.tensorCount; ++i) {
            const TensorComparison& t = result_.tensors[i];
            if (t.isOutput || !t.source) continue;
            // Changed by an op not dumped, in this pass. A producer of an earlier pass that
            // matched is data of the same numbers only (a generated token 8 and the position 8
            // an op made steps before: the token was born there): the program's, as any other.
            if (t.producer != kNone && passOf_[result_.tensors[t.producer].op] == passOf_[o])
                return kNone;
            if (outsideInputOfAnEarlierPass(i, o)) return kNone;
        }
        return earlier;
    }

    // msprobe: the forward entry of a backward one ("Functional.linear.0.backward",
    // "Module.fc.Linear.backward.0", and a module's "parameters_grad.0": the gradients of its
    // parameters), "" for any other entry.
    std::string forwardEntryOf(const OpComparison& op) const {
        if (ref_.layout() != DumpLayout::Msprobe) return {};
        const std::string& id = ref_.op(op.referenceOp).id;
        static constexpr std::string_view kBackward = ".backward";
        if (id.size() > kBackward.size() &&
            id.compare(id.size() - kBackward.size(), kBackward.size(), kBackward) == 0)
            return id.substr(0, id.size() - kBackward.size()) + ".forward";
        for (const std::string_view kind : {".backward.", ".parameters_grad."}) {
            const size_t at = id.rfind(kind);
            if (startsWith(id, "Module.") && at != std::string::npos)
                return id.substr(0, at) + ".forward." + id.substr(at + kind.size());
        }
        return {};
    }
    static std::pair<uint32_t, int32_t> roundOf(const OpComparison& op) {
        return {op.referenceProcess, op.referenceRound};
    }
    // msprobe, a backward entry that would be born here: the forward divergence it follows from,
    // kNone when none. A backward computes from the tensors its forward call saved, none of its
    // inputs, and from gradients that pass through ops msprobe does not record: once the forward
    // diverged, its gradients differ (a training run listed every backward after a divergence
    // as born there). Its own forward call when that diverged, else the round's first
    // divergence (born there or inherited from an earlier round; in the forward, or in a backward
    // entry before it).
    // Op-level dumps: a layer-level backward op ("mul_0.backward", "fc.backward_1") and any op
    // inside it likewise follow from its forward layer op ("mul_0") of the round, when that
    // diverged (the gradient mul_0.backward passes to one input is the other input's forward
    // value times the gradient flowing in: born there, it was a second birth of every divergence
    // before it).
    uint32_t forwardDivergenceOf(uint32_t o) const {
        const OpComparison& op = result_.ops[o];
        uint32_t forwardOp = kNone;
        if (ref_.layout() == DumpLayout::Msprobe) {
            const std::string forwardEntry = forwardEntryOf(op);
            if (forwardEntry.empty()) return kNone;
            forwardOp = ref_.findOp(op.referenceProcess, forwardEntry);
        } else {
            // The layer-level op it is in: an op inside a backward layer op computes from what
            // the layer's forward saved too (b.backward/AddmmBackward0/t reads b's weight).
            uint32_t top = o;
            while (result_.ops[top].parent != kNone) top = result_.ops[top].parent;
            forwardOp = forwardLayerOpOf(result_.ops[top]);
            if (forwardOp == result_.ops[top].referenceOp) return kNone;  // no backward op
        }
        const uint32_t found =
            forwardOp < latestComparisonOf_.size() ? latestComparisonOf_[forwardOp] : kNone;
        if (found != kNone) {
            const OpComparison& forward = result_.ops[found];
            bool diverged = forward.verdict != OpVerdict::Matches;
            for (uint32_t t = forward.firstTensor;
                 !diverged && t < forward.firstTensor + forward.tensorCount; ++t)
                diverged = result_.tensors[t].carriesDivergence;
            if (diverged && roundOf(forward) == roundOf(op)) return found;
        }
        // Only one that began before it: a backward entry's own child, inheriting the entry's
        // input, closed first, and the entry was said to inherit from it (a cycle).
        const auto first = firstDivergence_.find(roundOf(op));
        return first == firstDivergence_.end() || result_.ops[first->second].began >= op.began
                   ? kNone
                   : first->second;
    }

    // Phase 2, in the reference's execution order: inputs are judged when an op begins,
    // outputs when it ends; where each differing tensor came from decides born here/inherited.
    // measuredUpTo(end) returns once tensors [0, end) are measured (false: cancelled, stop).
    template <typename MeasuredUpTo>
    void walk(const MeasuredUpTo& measuredUpTo) {
        size_t o = 0;
        std::vector<size_t> lastInside;  // by op of the round: the last op inside it, or itself
        while (o < result_.ops.size()) {
            const uint32_t process = result_.ops[o].referenceProcess;
            // Room for every output at once: grown by doubling, the tables left behind were
            // as much memory again, written for the first time.
            producedData_.clear(outputsWithData_);
            producedStats_.clear(outputs_);
            outsideData_.clear();
            outsideStats_.clear();
            sightedAfterADivergence_.clear();
            carrying_ = {};
            carryingThrough_.clear();
            // msprobe's rounds are the process's steps. Op-level rounds count each layer-level
            // op's own calls (a block called twice per step is two rounds further on at each
            // step): a pass begins with each call of the first layer-level op called again.
            const bool passIsRound = ref_.layout() == DumpLayout::Msprobe;
            passOp_ = passIsRound ? kNone : firstRepeatedLayerOp(o);
            int32_t pass = 0;
            for (; o < result_.ops.size() && result_.ops[o].referenceProcess == process;) {
                const int32_t round = result_.ops[o].referenceRound;
                size_t end = o;
                while (end < result_.ops.size() && result_.ops[end].referenceProcess == process &&
                       result_.ops[end].referenceRound == round)
                    ++end;
                // An op stays open until the last op inside it: an op outside the tree of the
                // one it ran in (msprobe gives a Tensor.__mul__ run by a custom backward no
                // parent) closed the module around it, before the module's own children.
                const size_t first = o;
                lastInside.assign(end - first, 0);
                for (size_t k = end; k-- > first;) {
                    lastInside[k - first] = std::max<size_t>(lastInside[k - first], k);
                    const uint32_t parent = result_.ops[k].parent;
                    if (parent != kNone && parent >= first && parent < k)
                        lastInside[parent - first] =
                            std::max(lastInside[parent - first], lastInside[k - first]);
                }
                std::vector<uint32_t> open;
                for (; o < end; ++o) {
                    OpComparison& op = result_.ops[o];
                    if (!measuredUpTo(size_t{op.firstTensor} + op.tensorCount)) return;
                    while (!open.empty() && lastInside[open.back() - first] < o) {
                        closeOp(open.back());
                        open.pop_back();
                    }
                    if (op.parent == kNone && op.referenceOp == passOp_) ++pass;
                    passOf_[o] = passIsRound ? op.referenceRound : pass;
                    // Such an op is enclosed by the one it ran in: a divergence born in it
                    // surfaces there.
                    if (op.parent == kNone && !open.empty()) op.parent = open.back();
                    openOp(static_cast<uint32_t>(o), open);
                    open.push_back(static_cast<uint32_t>(o));
                }
                while (!open.empty()) {
                    closeOp(open.back());
                    open.pop_back();
                }
            }
        }
    }

    // The first layer-level op (one with no parent) of the process whose ops begin at `o`
    // that is called more than once, kNone when none is.
    uint32_t firstRepeatedLayerOp(size_t o) const {
        const uint32_t process = result_.ops[o].referenceProcess;
        std::vector<uint8_t> calls(ref_.opCount(), 0);  // by reference op: none, one, more
        size_t end = o;
        for (; end < result_.ops.size() && result_.ops[end].referenceProcess == process; ++end)
            if (result_.ops[end].parent == kNone) {
                uint8_t& n = calls[result_.ops[end].referenceOp];
                n = static_cast<uint8_t>(std::min(n + 1, 2));
            }
        for (size_t k = o; k < end; ++k)
            if (result_.ops[k].parent == kNone && calls[result_.ops[k].referenceOp] > 1)
                return result_.ops[k].referenceOp;
        return kNone;
    }

    void summarise() {
        for (const uint8_t nothing : unmeasured_) result_.tensorsUnmeasured += nothing;
        if (result_.tensorsUnmeasured)
            for (OpComparison& op : result_.ops)
                op.judged = op.tensorCount == 0 ||
                            !std::all_of(unmeasured_.begin() + op.firstTensor,
                                         unmeasured_.begin() + op.firstTensor + op.tensorCount,
                                         [](uint8_t nothing) { return nothing != 0; });
        for (const auto& t : result_.tensors) {
            result_.divergingTensors += t.diverges ? 1 : 0;
            // Only what is judged: data-parallel replicas' own activations may differ at will.
            result_.differingTensors += t.differs && (!options_.replicas || t.replicaInvariant);
            result_.tensorsWithData += t.hasData ? 1 : 0;
            if (!t.replicaInvariant) continue;
            auto& counts = t.reducedGradient ? result_.reducedGradients : result_.replicaParameters;
            ++counts.compared;
            counts.diverging += t.diverges ? 1 : 0;
        }
        result_.firstDivergingTensor = firstDiverging_;
        // An op born at an input had it when it began, before any child ran: its divergence is
        // not its children's (a module fed by an op the dump left out, at msprobe L0, was passed
        // over for a child born later, which was said to surface in it).
        const auto bornAtInput = [&](const OpComparison& op) {
            return op.cause < result_.tensors.size() && !result_.tensors[op.cause].isOutput;
        };
        // How far its process had got when an op ran: the highest round begun by then (its own
        // round when the rounds follow each other; a block called twice per step is two rounds
        // further on at each step, while the layers after it are one).
        std::vector<int32_t> progress(result_.ops.size());
        for (size_t o = 0; o < result_.ops.size(); ++o) {
            const OpComparison& op = result_.ops[o];
            const bool sameProcess =
                o > 0 && result_.ops[o - 1].referenceProcess == op.referenceProcess;
            progress[o] =
                sameProcess ? std::max(progress[o - 1], op.referenceRound) : op.referenceRound;
        }
        // That first, then how far into it: the processes are walked one after another, so the
        // clock alone put rank 0's round 1 before rank 1's round 0 (a weight nudged on rank 1
        // came fifth), and rank 0's backward, which DDP's allreduce gave rank 1's difference,
        // before rank 1's forward that made it.
        std::map<std::pair<uint32_t, int32_t>, uint64_t> progressBegan;
        for (size_t o = 0; o < result_.ops.size(); ++o) {
            const OpComparison& op = result_.ops[o];
            auto [at, added] =
                progressBegan.try_emplace({op.referenceProcess, progress[o]}, op.began);
            if (!added) at->second = std::min(at->second, op.began);
        }
        const auto bornWhen = [&](uint32_t o) {
            const OpComparison& op = result_.ops[o];
            return std::make_pair(progress[o],
                                  (bornAtInput(op) ? op.began : op.finished) -
                                      progressBegan[{op.referenceProcess, progress[o]}]);
        };
        for (const OpComparison& op : result_.ops) {
            if (op.verdict != OpVerdict::BornHere) continue;
            for (uint32_t p = op.parent; p != kNone; p = result_.ops[p].parent)
                if (result_.ops[p].verdict == OpVerdict::BornHere && !bornAtInput(result_.ops[p]))
                    result_.ops[p].bornInChild = true;
        }
        for (uint32_t o = 0; o < result_.ops.size(); ++o) {
            const OpComparison& op = result_.ops[o];
            if (op.verdict == OpVerdict::BornHere) {
                result_.bornHereOps += op.bornInChild ? 0 : 1;
                if (!result_.firstBornHere || bornWhen(o) < bornWhen(*result_.firstBornHere))
                    result_.firstBornHere = o;
            } else if (op.verdict == OpVerdict::Inherited) {
                ++result_.inheritedOps;
                result_.fedBackOps += result_.fedBackAtInput(o);
                result_.carriedInStateOps += op.carriedInState();
            }
        }
        // The first op to receive the first divergence, of those whose received divergence leads
        // back to it (or to an op it surfaces in): the first to begin after it finished (where
        // it flows on), else the first at all (a child of an op born at its input). Else the
        // first op after it to receive any divergence (else the first to finish). The first
        // after it alone named a later round's op, received from another birth, while the born
        // op's own child inherited it (a new user's walk).
        std::vector<char> ofFirstBirth(result_.ops.size(), 0);
        if (result_.firstBornHere) {
            ofFirstBirth[*result_.firstBornHere] = 1;
            for (uint32_t a : result_.bornHereAncestors(*result_.firstBornHere))
                ofFirstBirth[a] = 1;
        }
        const auto receivedFromFirstBirth = [&](uint32_t o) {
            // The chain of inheritedFrom ends at a born-here op; bounded against a cycle.
            for (size_t hops = 0; hops <= result_.ops.size(); ++hops) {
                o = result_.ops[o].inheritedFrom;
                if (o == kNone) return false;
                if (result_.ops[o].verdict != OpVerdict::Inherited) return ofFirstBirth[o] != 0;
            }
            return false;
        };
        const uint64_t after =
            result_.firstBornHere ? result_.ops[*result_.firstBornHere].finished : 0;
        std::optional<uint32_t> afterOfBirth, ofBirth, firstAfter, firstAny;
        const auto beganBefore = [&](uint32_t o, const std::optional<uint32_t>& than) {
            return !than || result_.ops[o].began < result_.ops[*than].began;
        };
        for (uint32_t o = 0; o < result_.ops.size(); ++o) {
            const OpComparison& op = result_.ops[o];
            if (op.verdict != OpVerdict::Inherited) continue;
            const bool isAfter = op.began > after;
            if ((beganBefore(o, ofBirth) || (isAfter && beganBefore(o, afterOfBirth))) &&
                receivedFromFirstBirth(o)) {
                if (beganBefore(o, ofBirth)) ofBirth = o;
                if (isAfter && beganBefore(o, afterOfBirth)) afterOfBirth = o;
            }
            if (isAfter && beganBefore(o, firstAfter)) firstAfter = o;
            if (!firstAny || op.finished < result_.ops[*firstAny].finished) firstAny = o;
        }
        result_.firstInherited = afterOfBirth ? afterOfBirth
                                 : ofBirth    ? ofBirth
                                 : firstAfter ? firstAfter
                                              : firstAny;
    }

    const DumpIndex& ref_;
    const DumpIndex& cand_;
    const CompareOptions& options_;
    CompareResult result_;
    unsigned threads_ = 1;
    std::vector<uint32_t> refNames_, candNames_;
    size_t nameCount_ = 0;
    // The reference's fingerprints (0: none): of the data by CompareResult::measures' index, of
    // the statistics by tensor.
    std::vector<uint64_t> dataPrint_, statsPrint_;
    uint64_t outputs_ = 0, outputsWithData_ = 0;  // compared output tensors, of them with data
    // Written by the pool, one element per tensor: bytes, not bits (vector<bool> packs them).
    // judgedExactly_: its dtype has no rounding (integers, bool, unknown): judged for equality,
    // and no measure of the size of the numbers an op worked with.
    std::vector<uint8_t> statsNonFinite_, shapeDiffers_, judgedExactly_;
    // Neither data in both runs nor a statistic in both (a dump of task "tensor", whose
    // statistics are N/A, against one of statistics): nothing to judge it by.
    std::vector<uint8_t> unmeasured_;
    std::vector<StringFacts> refFacts_, candFacts_;  // prepareStrings
    PrintMap producedData_, producedStats_;
    // Of the process walked: the first diverging input from outside the model with each
    // fingerprint; the layer-level ops (ones with no parent) whose output carried a divergence.
    PrintMap outsideData_, outsideStats_;
    std::unordered_set<uint32_t> sightedAfterADivergence_;  // of those first sightings
    Carrying carrying_;                                     // of every layer-level op
    // By the reference's forward layer-level op: its executions, and its backward op's, that
    // carried a divergence since its state last showed as the reference's (noteStateOf).
    std::unordered_map<uint32_t, Carrying> carryingThrough_;
    // Op-level dumps: the process's layer-level op that begins each pass (firstRepeatedLayerOp).
    uint32_t passOp_ = kNone;
    // By op: the pass of its process's model it ran in (divergenceFedBackTo).
    std::vector<int32_t> passOf_;
    std::vector<uint8_t> usedScratch_;  // pairTensors'
    // Processes whose rank the other run does not have: (in the reference, process).
    std::vector<std::pair<bool, uint32_t>> onlyInOneRun_;
    // The latest comparison of each reference op (the walk's: its forward call, for a backward).
    // (msprobe: every op; op-level dumps: layer-level ops.)
    std::vector<uint32_t> latestComparisonOf_;
    // Op-level dumps: the reference's layer-level op of `name` in `process` (kNone: none), by a
    // table made the first time a backward op looks for its forward.
    uint32_t layerOpNamed(uint32_t process, std::string_view name) const {
        if (!layerOpsByName_) {
            layerOpsByName_.emplace();
            for (uint32_t o = 0; o < ref_.opCount(); ++o)
                if (ref_.op(o).parent == kNone)
                    layerOpsByName_->emplace(
                        std::to_string(ref_.op(o).process) + '\0' + ref_.op(o).namePath, o);
        }
        const auto it = layerOpsByName_->find(std::to_string(process) + '\0' + std::string(name));
        return it == layerOpsByName_->end() ? kNone : it->second;
    }
    mutable std::optional<std::unordered_map<std::string, uint32_t>> layerOpsByName_;
    // msprobe: the first op of each (process, round) that diverged.
    std::map<std::pair<uint32_t, int32_t>, uint32_t> firstDivergence_;
    // msprobe: an API's calls in one run only, (in the reference, in the candidate).
    std::map<std::string, std::pair<uint64_t, uint64_t>> unpairedCalls_;
    // Op-level dumps: by name (its NameTable id), the layer-level op's calls of the reference
    // only and of the candidate only.
    struct ExtraLayerCalls {
        std::string name;
        uint64_t inReference = 0, inCandidate = 0;
    };
    std::map<uint32_t, ExtraLayerCalls> extraLayerCalls_;
    // While the ops are paired: told how far the tensors are written, every kPrefaultEvery.
    PrefaultAhead* tensorsPrefault_ = nullptr;
    static constexpr size_t kPrefaultEvery = 16384;
    static constexpr size_t kPrefaultAhead = 64u << 20;
    uint64_t clock_ = 0;
    std::optional<uint32_t> firstDiverging_;
};

}  // namespace

const char* ruleName(DivergenceRule rule) {
    switch (rule) {
        case DivergenceRule::None:
            return "";
        case DivergenceRule::Shape:
            return "shape";
        case DivergenceRule::NonFinite:
            return "nan/inf";
        case DivergenceRule::Elements:
            return "elements";
        case DivergenceRule::Statistic:
            return "statistic";
        case DivergenceRule::Bytes:
            return "bytes";
    }
    return "";
}

const char* verdictName(const OpComparison& op) {
    return op.judged ? verdictName(op.verdict) : "not judged";
}

const char* verdictName(OpVerdict verdict) {
    switch (verdict) {
        case OpVerdict::Matches:
            return "matches";
        case OpVerdict::BornHere:
            return "born here";
        case OpVerdict::Inherited:
            return "inherited";
    }
    return "";
}

std::optional<DumpLocation> locateDump(const std::string& path, std::string* error) {
    auto reader = openDumpReader(path, error);
    if (!reader) return std::nullopt;
    return locationIn(reader->root(), reader->layout(), path);
}

DumpLocation locationIn(const std::string& root, DumpLayout layout, const std::string& path) {
    DumpLocation location;
    location.root = root;
    location.folder = root;
    const std::string p = dumpLookupPath(path);  // the path the reader found the root from
    if (layout == DumpLayout::Atb) {
        // <root>/data/<dev_pid>[/<round>[/...]]
        const std::string data = location.root + "/data/";
        if (p.rfind(data, 0) == 0) {
            const std::string rest = p.substr(data.size());
            const size_t slash = rest.find('/');
            location.scope.process = rest.substr(0, slash);
            location.folder = data + location.scope.process;
            if (slash != std::string::npos) {
                const std::string round =
                    rest.substr(slash + 1, rest.find('/', slash + 1) - slash - 1);
                if (const auto number = roundNumber(round)) {
                    location.scope.round = number;
                    location.folder += "/" + round;
                }
            }
        }
        return location;
    }
    // <root>/step<N>[/rank<R>|proc<pid>]
    const std::string base = format::fileNameOf(p);
    if (const int64_t step = stepNumber(base); step >= 0) {
        location.scope.round = static_cast<int32_t>(step);
        location.folder = p;
    } else if (p != location.root && p.size() > location.root.size()) {
        const std::string parent = p.substr(0, p.rfind('/'));
        if (const int64_t parentStep = stepNumber(format::fileNameOf(parent)); parentStep >= 0) {
            location.scope.round = static_cast<int32_t>(parentStep);
            location.scope.process = base;
            location.folder = p;
        }
    }
    return location;
}

CompareResult compareDumps(const DumpIndex& reference, const DumpIndex& candidate,
                           const CompareOptions& options) {
    return Comparer(reference, candidate, options).run();
}

// ---- descriptions for people ----------------------------------------------------------------

namespace {

std::string number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

// Element values as they are (shortest text that reads back the same), so two that differ in
// the last bit do not print alike.
std::string exactNumber(double v, std::optional<format::DType> dtype) {
    if (!std::isfinite(v)) return number(v);
    char text[32];
    const bool single =
        dtype && (*dtype == format::DType::Float || *dtype == format::DType::Float16 ||
                  *dtype == format::DType::BF16 || *dtype == format::DType::Complex64);
    const auto end = single ? std::to_chars(text, text + sizeof text, static_cast<float>(v)).ptr
                            : std::to_chars(text, text + sizeof text, v).ptr;
    return std::string(text, end);
}

// Which part of a complex element the values are of ("" for a real tensor).
std::string partOf(const DataMeasures& d, bool imaginary) {
    return !d.complex ? "" : imaginary ? " (imaginary part)" : " (real part)";
}

}  // namespace

bool CompareResult::fedBackAtInput(uint32_t o) const {
    const OpComparison& op = ops[o];
    return op.fedBack() && op.cause != kNone && !tensors[op.cause].isOutput;
}

const std::string& CompareResult::referenceIdOf(uint32_t o) const {
    return reference->idIn(ops[o].referenceOp, ops[o].referenceRound);
}

const std::string& CompareResult::candidateIdOf(uint32_t o) const {
    return candidate->idIn(ops[o].candidateOp, ops[o].candidateRound);
}

std::string CompareResult::describeOp(uint32_t o) const {
    if (o >= ops.size() || !reference) return "?";
    const OpComparison& op = ops[o];
    const auto& r = reference->op(op.referenceOp);
    std::string out = "round " + std::to_string(op.referenceRound);
    if (op.candidateRound != op.referenceRound)
        out += " (candidate " + std::to_string(op.candidateRound) + ")";
    const std::string& refKey = reference->process(op.referenceProcess).key;
    const std::string& candKey = candidate->process(op.candidateProcess).key;
    if (nameProcesses) out += "  " + (refKey == candKey ? refKey : refKey + " vs " + candKey);
    out += "  " + (reference->layout() == DumpLayout::Msprobe ? r.id : r.namePath);
    if (reference->layout() == DumpLayout::Msprobe) return out;  // the id is the name
    // Ops of one name in one module (three adds of a block), and the ops inside them, are told
    // apart by their ids.
    bool nameShared = false;
    for (uint32_t at = op.referenceOp; at != kNone && !nameShared; at = reference->op(at).parent) {
        const auto& self = reference->op(at);
        if (self.parent == kNone) break;
        for (uint32_t sibling : reference->op(self.parent).children)
            nameShared =
                nameShared || (sibling != at && reference->op(sibling).namePath == self.namePath);
    }
    // The candidate's id too where it differs (an op more before it): the app shows the
    // candidate's tree, where the reference's id is another op.
    std::string ids;
    if (nameShared) {
        const std::string &referenceId = referenceIdOf(o), &candidateId = candidateIdOf(o);
        ids = "id " + referenceId +
              (candidateId == referenceId ? "" : ", " + candidateId + " in the candidate");
    }
    if (!r.type.empty() || nameShared)
        out += " (" + r.type + (r.type.empty() || !nameShared ? "" : ", ") + ids + ")";
    return out;
}

std::string CompareResult::unpairedOpName(const UnpairedOp& u) const {
    const DumpIndex* index = u.inReference ? reference : candidate;
    if (!index || u.op >= index->opCount()) return "?";
    const auto& op = index->op(u.op);
    std::string out;
    if (index->processCount() > 1) out += index->process(u.process).key + "  ";
    out += index->layout() == DumpLayout::Msprobe || op.namePath.empty() ? op.id : op.namePath;
    return out;
}

std::string CompareResult::describeUnpaired(const UnpairedOp& u) const {
    const DumpIndex* index = u.inReference ? reference : candidate;
    if (!index || u.op >= index->opCount()) return "?";
    std::string out = std::string(u.inReference ? "reference" : "candidate") + " round " +
                      std::to_string(u.round) + "  " + unpairedOpName(u);
    if (index->layout() != DumpLayout::Msprobe) out += " (" + index->op(u.op).type + ")";
    return out;
}

std::string CompareResult::describeTensor(uint32_t i) const {
    if (i >= tensors.size() || !reference) return "?";
    const TensorComparison& t = tensors[i];
    const auto& rr = reference->row(t.referenceRow);
    const auto& cr = candidate->row(t.candidateRow);
    std::string dtype = reference->text(rr.dtype);
    if (candidate->text(cr.dtype) != dtype) dtype += " vs " + candidate->text(cr.dtype);
    std::string shape = reference->text(rr.shape);
    if (candidate->text(cr.shape) != shape) shape += " vs " + candidate->text(cr.shape);
    return reference->describeSlot(rr.slot) + " [" + dtype + (shape.empty() ? "" : " " + shape) +
           "]";
}

std::string CompareResult::tensorName(uint32_t i) const {
    if (i >= tensors.size() || !reference) return "?";
    const TensorComparison& t = tensors[i];
    const auto& slot = reference->slot(reference->row(t.referenceRow).slot);
    const auto& op = reference->op(slot.op);
    if (reference->layout() == DumpLayout::Msprobe) {
        // msprobe names parameters "<entry>.parameters.<name>" and gradients "<entry>.<name>"
        if (startsWith(slot.index, "parameters")) return op.id + "." + slot.index;
        if (op.type.size() > 16 &&
            op.type.compare(op.type.size() - 16, 16, ".parameters_grad") == 0)
            return op.id + "." + slot.index;
        return op.id + (slot.isOutput ? ".output." : ".input.") + slot.index;
    }
    return op.namePath + "." + std::to_string(ops[t.op].referenceRound) +
           (slot.isOutput ? ".output." : ".input.") + slot.index;
}

std::string CompareResult::elementIndex(uint32_t i, uint64_t flat) const {
    if (i >= tensors.size() || !reference) return "?";
    const auto dims =
        format::parseShapeString(reference->text(reference->row(tensors[i].referenceRow).shape));
    if (!dims || dims->empty()) return "[]";
    std::vector<uint64_t> at(dims->size());
    for (size_t d = dims->size(); d-- > 0;) {
        const uint64_t size = static_cast<uint64_t>(std::max<int64_t>((*dims)[d], 1));
        at[d] = flat % size;
        flat /= size;
    }
    std::string out = "[";
    for (size_t d = 0; d < at.size(); ++d) out += (d ? ", " : "") + std::to_string(at[d]);
    return out + "]";
}

std::string CompareResult::explain(uint32_t i) const {
    if (i >= tensors.size() || !reference) return "?";
    const TensorComparison& t = tensors[i];
    const DataMeasures& d = data(i);
    const char* statNames[] = {"max", "min", "mean", "norm"};
    const std::optional<format::DType> judged = t.judgedDType();
    const double epsilon = judged ? machineEpsilon(*judged) : 0;
    const std::string dtype = judged ? format::dtypeName(*judged) : "unknown dtype";
    const std::string floor =
        epsilon > 0 ? "floor " + number(t.ulps) + " ulp x " + number(epsilon) + " (" + dtype +
                          ") x max(|reference|, scale " + number(t.scale) + ")"
                    : dtype + " must be equal";
    // "beyond the floor …", or for integers, which have none, that they must be equal (it read
    // "beyond the int64 must be equal").
    const std::string beyondFloor =
        epsilon > 0 ? " beyond the " + floor : ", and " + dtype + " values must be equal";
    switch (t.rule) {
        case DivergenceRule::None:
            if (!t.differs) return "matches";
            if (t.hasData)
                return "differs by at most " + number(d.maxAbsError) + ", below the " + floor +
                       ", downstream of a divergence";
            return "its statistics differ, below the " + floor + ", downstream of a divergence";
        case DivergenceRule::Shape: {
            const std::string& a = reference->text(reference->row(t.referenceRow).shape);
            const std::string& b = candidate->text(candidate->row(t.candidateRow).shape);
            const auto shown = [](const std::string& shape) {
                return shape.empty() ? std::string("[] (0-d)") : shape;
            };
            if (a != b) return "shape differs: " + shown(a) + " vs " + shown(b);
            // The rows agree: a tensor file's own header disagrees with its row.
            return "the tensor files' shapes differ, though both rows say " + shown(a) +
                   ": a file does not hold what its row describes";
        }
        case DivergenceRule::NonFinite: {
            if (t.hasData)
                return std::to_string(d.nonFiniteMismatches) +
                       " element(s) NaN/Inf in one run only";
            const StatValues ref = referenceStats(i), cand = candidateStats(i);
            for (int k = 0; k < 4; ++k) {
                const double a = ref.value[k], b = cand.value[k];
                if (ref.has(k) && cand.has(k) && (!std::isfinite(a) || !std::isfinite(b)) &&
                    !(a == b || (std::isnan(a) && std::isnan(b))))
                    return std::string(statNames[k]) + " " + number(a) + " vs " + number(b) +
                           ": NaN/Inf in one run only";
            }
            return "a statistic is NaN/Inf in one run only";
        }
        case DivergenceRule::Bytes:
            if (!t.hasData) return "statistics differ";
            if (d.largestErrorReference == d.largestErrorCandidate)
                return "bytes differ";  // -0 vs 0, NaN payloads
            {
                // The element's own ulps: the tensor's most may be at a smaller number elsewhere.
                const double ulps =
                    judged ? std::fabs(d.largestErrorCandidate - d.largestErrorReference) /
                                 ulpOf(*judged, d.largestErrorReference)
                           : d.maxUlpError;
                const std::string shown =
                    "bytes differ, the most at element " + elementIndex(i, d.largestErrorElement) +
                    partOf(d, d.largestErrorImaginary) + ": " +
                    exactNumber(d.largestErrorReference, t.referenceDType()) + " vs " +
                    exactNumber(d.largestErrorCandidate, t.candidateDType());
                if (!std::isfinite(ulps)) return shown;  // none between a number and a NaN
                return shown + " (" + number(ulps) + " ulp" +
                       (d.maxUlpError > ulps
                            ? "; up to " + number(d.maxUlpError) + " ulp at another element)"
                            : ")");
            }
        case DivergenceRule::Elements: {
            const double error = std::fabs(d.worstCandidate - d.worstReference);
            std::string out =
                "element " + elementIndex(i, d.worstElement) + partOf(d, d.worstImaginary) + ": " +
                exactNumber(d.worstReference, t.referenceDType()) + " vs " +
                exactNumber(d.worstCandidate, t.candidateDType()) + ", error " + number(error);
            if (d.worstReference != 0)
                out += " (" + number(100 * error / std::fabs(d.worstReference)) + "%)";
            return out + beyondFloor;
        }
        case DivergenceRule::Statistic: {
            const int k = std::max<int>(t.worstStatistic, 0);
            return std::string(statNames[k]) + " " + number(referenceStats(i).value[k]) + " vs " +
                   number(candidateStats(i).value[k]) + beyondFloor + " (statistics only)";
        }
    }
    return "";
}

const DataMeasures& CompareResult::data(uint32_t tensor) const {
    static const DataMeasures kNoMeasures;
    if (tensor >= tensors.size() || tensors[tensor].dataIndex >= measures.size())
        return kNoMeasures;
    return measures[tensors[tensor].dataIndex];
}

StatisticDiffs CompareResult::statisticDiffs(uint32_t tensor) const {
    if (tensor >= tensors.size()) return {};
    return diffStatistics(referenceStats(tensor), candidateStats(tensor));
}

// The statistics measured for a tensor (both runs' data, or one run's data beside the other's
// statistics), or null when its rows' own stand.
namespace {
const std::pair<StatValues, StatValues>* measuredStatsOf(const CompareResult& r, uint32_t tensor) {
    const TensorComparison& t = r.tensors[tensor];
    if (t.dataIndex >= r.measuredStats.size()) return nullptr;
    const auto& measured = r.measuredStats[t.dataIndex];
    return t.hasData || (measured.first.present && measured.second.present) ? &measured : nullptr;
}
}  // namespace

StatValues CompareResult::referenceStats(uint32_t tensor) const {
    if (tensor >= tensors.size() || !reference) return {};
    if (const auto* measured = measuredStatsOf(*this, tensor)) return measured->first;
    return statValuesOf(reference->row(tensors[tensor].referenceRow));
}

StatValues CompareResult::candidateStats(uint32_t tensor) const {
    if (tensor >= tensors.size() || !candidate) return {};
    if (const auto* measured = measuredStatsOf(*this, tensor)) return measured->second;
    return statValuesOf(candidate->row(tensors[tensor].candidateRow));
}

std::vector<uint32_t> CompareResult::bornHereAncestors(uint32_t o) const {
    std::vector<uint32_t> out;
    if (o >= ops.size()) return out;
    for (uint32_t p = ops[o].parent; p != kNone; p = ops[p].parent)
        if (ops[p].verdict == OpVerdict::BornHere && ops[p].bornInChild) out.push_back(p);
    return out;
}

namespace {

// Where each op's first row comes among the round's rows (file order: the order the ops began
// in), by op; one pass over the round.
std::unordered_map<uint32_t, size_t> beginnings(const DumpIndex& index, uint32_t process,
                                                int32_t round) {
    std::unordered_map<uint32_t, size_t> at;
    const auto& rounds = index.process(process).rounds;
    const auto found = rounds.find(round);
    if (found == rounds.end()) return at;
    for (size_t i = 0; i < found->second.size(); ++i)
        at.emplace(index.slot(index.row(found->second[i]).slot).op, i);
    return at;
}

}  // namespace

std::vector<size_t> CompareResult::unpairedBefore(uint32_t o, size_t most) const {
    if (o >= ops.size() || !reference || !candidate) return {};
    const OpComparison& op = ops[o];
    // Only for an input that differs and that no compared op explains; and only from the whole
    // list (a list cut short could name ops far from the ones that ran just before).
    if (op.cause >= tensors.size() || tensors[op.cause].isOutput || !tensors[op.cause].source ||
        unpairedCutInPairedRound)
        return {};
    // An op of one run only inside another is told by the outer one (a layer skipped, not its
    // last add); one is named only beside the op or one of its enclosing ops (an extra op in
    // another layer is no cause).
    std::set<std::pair<bool, uint32_t>> unpairedOps;
    for (const UnpairedOp& u : unpaired) unpairedOps.emplace(u.inReference, u.op);
    const auto ancestorsOf = [](const DumpIndex& index, uint32_t of) {
        std::set<uint32_t> out;
        for (uint32_t p = index.op(of).parent; p != kNone; p = index.op(p).parent) out.insert(p);
        return out;
    };
    const std::set<uint32_t> referenceAncestors = ancestorsOf(*reference, op.referenceOp),
                             candidateAncestors = ancestorsOf(*candidate, op.candidateOp);
    std::optional<std::unordered_map<uint32_t, size_t>> referenceAt, candidateAt;
    std::vector<std::pair<size_t, size_t>> found;  // (how far before, index into unpaired)
    for (size_t i = 0; i < unpaired.size(); ++i) {
        const UnpairedOp& u = unpaired[i];
        const DumpIndex& index = u.inReference ? *reference : *candidate;
        const uint32_t process = u.inReference ? op.referenceProcess : op.candidateProcess;
        const int32_t round = u.inReference ? op.referenceRound : op.candidateRound;
        if (u.process != process || u.round != round) continue;
        const uint32_t parent = index.op(u.op).parent;
        if (parent != kNone &&
            !(u.inReference ? referenceAncestors : candidateAncestors).count(parent))
            continue;
        if (parent != kNone && unpairedOps.count({u.inReference, parent})) continue;
        auto& at = u.inReference ? referenceAt : candidateAt;
        if (!at) at = beginnings(index, process, round);
        const auto mine = at->find(u.inReference ? op.referenceOp : op.candidateOp);
        const auto its = at->find(u.op);
        if (mine != at->end() && its != at->end() && its->second < mine->second)
            found.emplace_back(mine->second - its->second, i);
    }
    // The nearest, listed in the order they ran (nearest first read as the reverse of it).
    std::sort(found.begin(), found.end());
    if (found.size() > most) found.resize(most);
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<size_t> out;
    for (const auto& [distance, i] : found) out.push_back(i);
    return out;
}

std::optional<CompareResult::UpstreamDifference> CompareResult::differenceGiven(uint32_t o) const {
    if (o >= ops.size()) return std::nullopt;
    // Only an op whose divergence is born at an output: one born at an input beyond the floor
    // was given that, not a smaller difference (the app said the input both diverged and
    // differed below the floor, starting at the op itself).
    const uint32_t cause = ops[o].cause;
    if (cause >= tensors.size() || !tensors[cause].isOutput) return std::nullopt;
    // The first input of `op` that differs, or kNone.
    const auto differingInput = [&](const OpComparison& op) {
        for (uint32_t t = op.firstTensor; t < op.firstTensor + op.tensorCount; ++t)
            if (!tensors[t].isOutput && tensors[t].differs) return t;
        return kNone;
    };
    UpstreamDifference found;
    found.input = differingInput(ops[o]);
    if (found.input == kNone) return std::nullopt;
    uint32_t at = found.input;
    // Each step goes to an earlier tensor: at most one visit each.
    for (size_t steps = 0; steps < tensors.size(); ++steps) {
        const uint32_t producer = tensors[at].producer;
        if (producer == kNone) break;       // a parameter, the model's input, an op not dumped
        if (!tensors[producer].isOutput) {  // an enclosing op's input
            at = producer;
            continue;
        }
        // The op that made it, then the child that passed it up, level by level: the
        // difference starts in the innermost whose inputs are the same (a module's op computing
        // differently), or enters with an input of one of them (a weight its child reads).
        uint32_t made = producer, next;
        while ((next = differingInput(ops[tensors[made].op])) == kNone) {
            const uint32_t inner = tensors[made].producer;
            // Only into a child whose output differs too (one matched by statistics alone may
            // be the same in both runs).
            if (inner == kNone || !tensors[inner].isOutput || !tensors[inner].differs) break;
            made = inner;
        }
        if (next == kNone) {  // identical inputs, a differing output: it starts there
            at = made;
            break;
        }
        at = next;
    }
    found.start = at;
    return found;
}

std::string CompareResult::describeStart(const UpstreamDifference& difference) const {
    if (difference.start >= tensors.size()) return {};
    return tensors[difference.start].isOutput
               ? "its inputs are the same in both runs: the op itself computes differently"
               : "no compared op produced it: a parameter, a buffer, the model's input, or the "
                 "output of an op that was not dumped";
}

}  // namespace probe::analysis
