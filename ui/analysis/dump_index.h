// An in-memory index of a dump of either layout (op-level "atb" or framework-level "msprobe"):
// processes, the op tree, each op's tensors ("slots") and every statistic row, kept compact so
// that a dump with a million rows fits comfortably. Readers (atb_dump_reader.h,
// msprobe_dump.h) produce DumpDelta batches on a worker thread; the owner applies them here in
// order, so a dump that is still being written grows by appending. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/key_table.h"
#include "probe/format/dump_status.h"
#include "probe/format/op_config.h"
#include "probe/format/row_order.h"

namespace probe::analysis {

constexpr uint32_t kNone = UINT32_MAX;

enum class DumpLayout { Atb, Msprobe };
const char* layoutName(DumpLayout layout);
// The pid and the rank (or device) a process key names, -1 for what it does not: msprobe
// "rank<R>" / "proc<pid>", atb "<device>_<pid>" / "<pid>".
struct ProcessKeyParts {
    int64_t pid = -1, rank = -1;
};
ProcessKeyParts readProcessKey(DumpLayout layout, const std::string& key);

// A part of a dump: every process and round, one process (a rank), one round (a step), or one
// round of one process. What a comparison, an overflow check or a summary covers.
struct DumpScope {
    std::string process;           // a process key: "rank1", "proc4242", "0_39943"; "" = all
    std::optional<int32_t> round;  // nullopt = all
    bool whole() const { return process.empty() && !round; }
    bool holdsProcess(const std::string& key) const { return process.empty() || key == process; }
    bool holdsRound(int32_t r) const { return !round || *round == r; }
};
// "proc7, step 1", "round 3", "0_4242": the part as people read it ("" for the whole dump).
std::string describeScope(DumpLayout layout, const DumpScope& scope);

enum class Stat : uint8_t { Max = 0, Min = 1, Mean = 2, Norm = 3 };
constexpr int kStatCount = 4;
const char* statName(Stat stat);  // "Max", "Min", "Mean", "Norm"

// Anomaly bits of a row, an op or a subtree.
enum AnomalyFlag : uint8_t { kHasNan = 1, kHasInf = 2 };

// One statistic row, compact: strings live in the index's tables. 64 bytes, a cache line (a
// million rows are 64 MB written for the first time, twice: in a delta, then in the index): the
// line's offset (56 bits: files below 64 PiB) and the flags share a word.
struct StatRecord {
    StatRecord()
        : lineOffset(0), present(0), anomalies(0), hasTensorFile(false), statsFromData(false) {}

    double value[kStatCount] = {0, 0, 0, 0};
    uint32_t slot = kNone;   // which tensor of which op
    int32_t round = 0;       // execution count (atb) or step (msprobe)
    uint32_t dtype = kNone;  // index into DumpIndex::strings
    uint32_t format = kNone;
    uint32_t shape = kNone;
    uint32_t source =
        kNone;  // atb: the statistic.csv (DumpIndex::sources); msprobe: the tensor file
    uint64_t lineOffset : 56;  // atb: byte offset of the row's line in its statistic.csv
    uint64_t present : 4;      // bit i set when value[i] is not N/A
    uint64_t anomalies : 2;    // kHasNan | kHasInf over the present values
    uint64_t hasTensorFile : 1;
    // The values were not in the dump (task tensor prints N/A): computed from the tensor file.
    uint64_t statsFromData : 1;

    bool has(Stat s) const { return present & (1u << static_cast<int>(s)); }
    double get(Stat s) const { return value[static_cast<int>(s)]; }
};
static_assert(sizeof(StatRecord) == 64, "a million rows: keep a row to a cache line");

// What a reader found since its previous poll. Indices continue those of earlier deltas of
// the same reader: the first op of a delta is op number DumpIndex::opCount() at apply time.
struct DumpDelta {
    struct Process {
        std::string key;  // "0_39943" (atb), "rank0" or "proc1234" (msprobe)
    };
    struct Op {
        uint32_t process = 0;
        uint32_t parent = kNone;  // kNone for a top-level (layer-level) op
        std::string id;           // "2_1" (atb), the entry name (msprobe)
        std::string name;         // the op's own name ("Attention", "Functional.linear.0.forward")
        std::string type;         // "Prefill_layer", "aten::mm", "Functional.linear"
        std::string param;        // compact JSON of its parameters, "" when none
        // Where it goes among its siblings (which are kept in execution order). msprobe: the
        // sibling it ran right after in the round it first ran in (kNone: it ran before them
        // all). Without it, and always for atb ops (placed by id: "2_9" before "2_10"), the
        // index places it.
        std::optional<uint32_t> after;
    };
    // Facts learned later about an op created earlier (type or parameters from a structure file).
    struct OpUpdate {
        uint32_t op = kNone;
        std::string type, param;
    };
    struct Slot {
        uint32_t op = 0;
        bool isOutput = false;
        std::string index;  // "0", "2_value", "input_args.0", "weight"
    };
    // An op that ran under another id than its own in one round (atb: a layer's control flow
    // changed, shifting it; AtbDumpReader::opRunElsewhere).
    struct RoundId {
        uint32_t op = kNone;
        int32_t round = 0;
        std::string id;
    };

    std::vector<Process> processes;
    std::vector<Op> ops;
    std::vector<OpUpdate> opUpdates;
    std::vector<RoundId> roundIds;
    std::vector<Slot> tensorSlots;
    std::vector<std::string> strings;  // appended to DumpIndex::strings
    std::vector<std::string> sources;  // appended to DumpIndex::sources
    std::vector<StatRecord> rows;
    // Statistics of rows read earlier, computed from their tensor files (the reader's
    // setStatisticsFromTensorFiles): applied after this delta's rows.
    struct RowStatistics {
        uint32_t row = kNone;  // the index's row number
        double value[kStatCount] = {0, 0, 0, 0};
    };
    std::vector<RowStatistics> rowStatistics;
    // Rows whose statistics are still to be computed from their files, as of this delta.
    std::optional<uint64_t> statisticsPending;
    std::optional<format::DumpStatus> status;  // when probe_status.json changed
    std::optional<std::string> statusError;    // when it changed and could not be read: why
    std::vector<std::string> problems;         // malformed or unreadable files, for people
    // atb: new runs of the processes' row order files (probe_row_order), by process index.
    std::vector<std::pair<uint32_t, format::RowOrderRun>> rowOrder;
    uint64_t bytesDone = 0, bytesTotal = 0;  // progress of reading the row files
    bool more = false;                       // the reader stopped early: poll again at once

    bool empty() const {
        return processes.empty() && ops.empty() && opUpdates.empty() && roundIds.empty() &&
               tensorSlots.empty() && rows.empty() && rowStatistics.empty() && !statisticsPending &&
               !status && !statusError && problems.empty() && rowOrder.empty();
    }
};

// What applying a delta changed, so that models can notify their views precisely.
struct IndexChange {
    // New ops are numbered on from the old ones, but need not come after them among their
    // siblings (Op::row says where each went).
    uint32_t firstNewOp = 0, newOps = 0;
    uint32_t firstNewRow = 0, newRows = 0;
    uint32_t firstNewProcess = 0, newProcesses = 0;
    // Ops that existed before this delta and whose columns changed (rounds, last statistics,
    // anomaly badges of themselves or of a descendant), sorted, unique.
    std::vector<uint32_t> touchedOps;
    // Rows read before whose statistics arrived (computed from their tensor files), in order.
    std::vector<uint32_t> statisticsRows;
    bool newRounds = false;
    bool statusChanged = false;
    bool empty() const {
        return newOps == 0 && newRows == 0 && newProcesses == 0 && touchedOps.empty() &&
               statisticsRows.empty() && !newRounds && !statusChanged;
    }
};

// A growing array in fixed chunks: appending never moves what is there (a million rows are
// never copied to grow), and indexing stays a shift and a mask.
template <typename T, unsigned kChunkBits = 15>
class ChunkedVector {
public:
    ChunkedVector() = default;
    // A copy keeps each chunk's room (a plain vector copy would not): appending to the copy
    // must not move its elements either, which code holding a reference to one relies on.
    ChunkedVector(const ChunkedVector& other) : size_(other.size_) {
        chunks_.reserve(other.chunks_.size());
        for (const auto& chunk : other.chunks_) {
            chunks_.emplace_back();
            chunks_.back().reserve(kChunk);
            chunks_.back().insert(chunks_.back().end(), chunk.begin(), chunk.end());
        }
    }
    ChunkedVector& operator=(const ChunkedVector& other) {
        if (this != &other) *this = ChunkedVector(other);
        return *this;
    }
    ChunkedVector(ChunkedVector&&) noexcept = default;
    ChunkedVector& operator=(ChunkedVector&&) noexcept = default;

    size_t size() const { return size_; }
    const T& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & kMask]; }
    T& operator[](size_t i) { return chunks_[i >> kChunkBits][i & kMask]; }
    template <typename Value>
    void push_back(Value&& value) {
        if ((size_ & kMask) == 0) {
            chunks_.emplace_back();
            chunks_.back().reserve(kChunk);
        }
        chunks_.back().push_back(std::forward<Value>(value));
        ++size_;
    }

private:
    static constexpr size_t kChunk = size_t{1} << kChunkBits, kMask = kChunk - 1;
    std::vector<std::vector<T>> chunks_;
    size_t size_ = 0;
};

class DumpIndex {
public:
    struct Process {
        std::string key;
        std::vector<uint32_t> topOps;                     // layer-level ops in execution order
        std::map<int32_t, std::vector<uint32_t>> rounds;  // round -> its rows in file order
        // atb: in which order rows went into the round files, as far as its row order file
        // says (RowTimes); empty without one.
        std::vector<format::RowOrderRun> rowOrder;
        KeyTable opById;  // the first op of each id (DumpIndex::findOp)
        uint64_t rows = 0;
    };
    struct Op {
        uint32_t process = 0;
        uint32_t parent = kNone;
        // Position among its siblings (or among the process's top-level ops), in execution
        // order: an op found later may be placed before ones found earlier.
        uint32_t row = 0;
        int depth = 0;  // 0 for layer-level
        std::string id, name, type, namePath, param;
        std::vector<uint32_t> children;
        std::vector<uint32_t> tensorSlots;
        std::vector<int32_t> rounds;   // distinct rounds it has rows in, sorted
        uint8_t anomalies = 0;         // of its own rows
        uint8_t subtreeAnomalies = 0;  // of its rows and its descendants' rows
        uint64_t rowCount = 0;
    };
    struct Slot {
        uint32_t op = 0;
        bool isOutput = false;
        std::string index;
        std::vector<uint32_t> rows;  // sorted by round
    };

    DumpIndex() = default;
    explicit DumpIndex(DumpLayout layout, std::string root)
        : layout_(layout), root_(std::move(root)) {}

    DumpLayout layout() const { return layout_; }
    const std::string& root() const { return root_; }

    // Appends the delta. Indices in it must continue this index's (see DumpDelta).
    IndexChange apply(DumpDelta&& delta);

    size_t processCount() const { return processes_.size(); }
    size_t opCount() const { return ops_.size(); }
    size_t slotCount() const { return slots_.size(); }
    size_t rowCount() const { return rows_.size(); }
    const Process& process(uint32_t i) const { return processes_[i]; }
    const Op& op(uint32_t i) const { return ops_[i]; }
    const Slot& slot(uint32_t i) const { return slots_[i]; }
    const StatRecord& row(uint32_t i) const { return rows_[i]; }
    const std::string& text(uint32_t stringIndex) const;  // "" for kNone
    size_t stringCount() const { return strings_.size(); }
    const std::vector<std::string>& sources() const { return sources_; }

    uint32_t findProcess(const std::string& key) const;
    // The process whose key names `pid` (readProcessKey), kNone when none.
    uint32_t findProcessOfPid(int64_t pid) const;
    uint32_t findOp(uint32_t process, const std::string& id) const;
    // The op that ran under `id` in `round` of `process` (idIn): one shifted there from its own id,
    // or one whose own id it is, though an earlier op has it too (findOp finds that one); kNone
    // when no op of the round's rows did.
    uint32_t opShownIn(uint32_t process, int32_t round, const std::string& id) const;
    // Where the op sits, for OpConfig::selects. The views point into this index.
    format::OpLocation location(uint32_t op) const;

    // The tensor that stands for the op in the tree's columns: its first output, else its
    // first input; kNone when it has no rows.
    uint32_t representativeSlot(uint32_t op) const;
    // The slot's row of `round`, or of its last round when round < 0; kNone if none.
    uint32_t slotRow(uint32_t slot, int32_t round = -1) const;
    // Every round of a process (sorted), and all rounds of all processes.
    std::vector<int32_t> rounds(uint32_t process) const;

    // Absolute path of the row's tensor file ("" when the row has none), inside this dump even
    // when it was copied or moved since it was written (tensorPathInDump); atb rows re-read
    // their statistic.csv line. `error` says why it could not.
    std::string tensorPath(uint32_t row, std::string* error = nullptr) const;
    // The row whose tensor file is `path` (the same file, however the path is spelled), or
    // kNone. atb: only the rows of the round the path lies in (data/<dev_pid>/<round>/...) are
    // read back, not the whole dump.
    uint32_t rowOfTensorFile(const std::string& path) const;
    // A header-only .bin names the first copy of the same data ("2_1_outtensor0.bin"): the
    // path of that copy in the same round and process (findFirstCopy), or "" when it is not found.
    std::string resolveTensorAlias(uint32_t row, const std::string& alias) const;

    // The id `op` ran under in `round`: its own, or another where the layer's control flow
    // changed that round (DumpDelta::RoundId). What a config or `probe replay` names it by there.
    const std::string& idIn(uint32_t op, int32_t round) const;
    // The rounds it ran under another id in, with that id, sorted by round (null: none).
    const std::vector<std::pair<int32_t, std::string>>* otherIds(uint32_t op) const {
        const auto it = otherIds_.find(op);
        return it != otherIds_.end() ? &it->second : nullptr;
    }
    // Every op that ran under another id in some round, with those (otherIds of each).
    const std::unordered_map<uint32_t, std::vector<std::pair<int32_t, std::string>>>&
    opsWithOtherIds() const {
        return otherIds_;
    }
    // Its id, and where it ran under others: "2_5; 2_9 in round 2".
    std::string idsText(uint32_t op) const;
    // "Prefill_layer/Attention (2_1)", for messages and titles; one that ran under other ids too
    // says where: "layers.1/add (2_5; 2_9 in round 2)".
    std::string describeOp(uint32_t op) const;
    // The same in one round: "layers.1/add (2_9)" in round 2.
    std::string describeOp(uint32_t op, int32_t round) const;
    // "output 0" / "input 2_value"
    std::string describeSlot(uint32_t slot) const;

    // One statistic of one tensor per op, across the ops of a round in execution order (the
    // order their first row of that round was written in).
    struct ProfilePoint {
        uint32_t op;
        uint32_t row;
    };
    struct ProfileOptions {
        bool outputs = true;  // the op's first output (else its first input)
        int maxDepth = -1;    // -1: every depth; 0: layer-level ops only
    };
    std::vector<ProfilePoint> roundProfile(uint32_t process, int32_t round,
                                           const ProfileOptions& options) const;

    // The first row (in execution order, RowTimes) whose statistics have any of `bits`, in one
    // process (of one round of it, when given); kNone if none. Where a NaN first appears is
    // where to start looking.
    uint32_t firstAnomalousRow(uint32_t process, uint8_t bits,
                               std::optional<int32_t> round = std::nullopt) const;

    std::optional<format::DumpStatus> status() const { return status_; }
    // Why the status file present now cannot be read (invalid JSON...); "" when it can or is
    // absent.
    const std::string& statusError() const { return statusError_; }
    const std::vector<std::string>& problems() const { return problems_; }
    uint64_t droppedProblems() const { return droppedProblems_; }
    // Rows whose statistics were computed from their tensor files, and those still waiting for
    // it (a task tensor dump prints none).
    uint64_t rowsWithStatisticsFromData() const { return statisticsFromData_; }
    uint64_t rowsAwaitingStatistics() const { return statisticsPending_; }

private:
    // A row's NaN/Inf bits on its op and, as a badge, on the op's ancestors; `touch` is told of
    // each op whose columns change.
    template <typename Touch>
    void addAnomalies(uint32_t op, uint8_t bits, const Touch& touch);
    // Where a new op goes among `siblings` (execution order).
    size_t placeAmongSiblings(const std::vector<uint32_t>& siblings, const DumpDelta::Op& op) const;

    DumpLayout layout_ = DumpLayout::Atb;
    std::string root_;
    std::vector<Process> processes_;
    ChunkedVector<Op, 12> ops_;      // an op is ~300 bytes: never moved to grow
    ChunkedVector<Slot, 14> slots_;  // never moved to grow either
    ChunkedVector<StatRecord> rows_;
    std::vector<std::string> strings_;
    std::vector<std::string> sources_;
    std::optional<format::DumpStatus> status_;
    std::string statusError_;
    std::vector<std::string> problems_;
    uint64_t droppedProblems_ = 0;
    uint64_t statisticsFromData_ = 0, statisticsPending_ = 0;
    // Which apply() last reported an op as touched (so each is reported once per delta).
    std::vector<uint32_t> touchStamp_;
    std::unordered_map<uint32_t, std::vector<std::pair<int32_t, std::string>>> otherIds_;
    uint32_t applyCount_ = 0;
};

// When each row of an op-level process was written, across its round files. A layer-level op's
// round counts its own executions, so a block called twice per step, or a branch taken in some
// steps only, spreads a step over several rounds: round after round is not the order they ran in.
// The probe's row order file says which rows came when (Process::rowOrder); rows it does not
// cover (a dump of another tool, a file cut short) come after the rest, round by round.
class RowTimes {
public:
    explicit RowTimes(const DumpIndex::Process& process);
    // Rounds follow each other: round after round, then file order, is execution order.
    bool roundsInOrder() const { return roundsInOrder_; }
    // When the row at `position` of the round's file was written (an order, not a clock).
    uint64_t of(int32_t round, uint32_t position) const;

private:
    struct Segment {
        uint32_t position;  // in the round's file
        uint64_t time;      // of that row
    };
    std::map<int32_t, std::vector<Segment>> segments_;  // by round, by position
    std::map<int32_t, uint32_t> covered_;        // by round: its first rows the file puts in order
    std::map<int32_t, uint64_t> uncoveredFrom_;  // by round: the time of its first uncovered row
    bool roundsInOrder_ = true;
};

// `delta` cut into pieces of at most `maxItems` tensor slots or rows, or a quarter as many ops
// (a new op costs more to apply than a row), ordered so that
// every reference points backwards (processes and strings, ops, op updates, slots, rows; status
// and problems last): applying the pieces in order gives the index applying `delta` gives, and
// no piece holds the thread that applies it for long. Each piece carries the progress; all but
// the last say more.
std::vector<DumpDelta> splitDelta(DumpDelta&& delta, size_t maxItems);

// The parts of an op id ("2_1_9"): its parent's ("2_1", "" at the top) and its own position
// among its siblings, as text ("9") and as a number (-1 when it is none).
inline std::string_view parentIdOf(std::string_view id) {
    const size_t split = id.rfind('_');
    return split == std::string_view::npos ? std::string_view() : id.substr(0, split);
}
inline std::string_view localIdOf(std::string_view id) {
    const size_t split = id.rfind('_');
    return split == std::string_view::npos ? id : id.substr(split + 1);
}
inline int64_t positionOfId(std::string_view id) {
    const std::string_view local = localIdOf(id);
    int64_t position = -1;
    const auto [end, ec] = std::from_chars(local.data(), local.data() + local.size(), position);
    return ec == std::errc() && end == local.data() + local.size() ? position : -1;
}

// kHasNan, kHasInf or 0 for one statistic value.
inline uint8_t anomalyBits(double value) {
    if (std::isnan(value)) return kHasNan;
    if (std::isinf(value)) return kHasInf;
    return 0;
}

// kHasNan | kHasInf of a row's statistics (`present`: bit i, value[i] is there). A NaN mean
// beside an infinite statistic and no other NaN is +Inf and -Inf summed, not a NaN in the tensor
// (a NaN element makes max, min and norm NaN too): counted as Inf. "first NaN" named a tensor
// holding only +Inf and -Inf.
inline uint8_t rowAnomalies(const double (&value)[kStatCount], unsigned present) {
    constexpr int kMean = static_cast<int>(Stat::Mean);
    uint8_t others = 0;
    for (int i = 0; i < kStatCount; ++i)
        if (i != kMean && (present & (1u << i))) others |= anomalyBits(value[i]);
    if (!(present & (1u << kMean))) return others;
    const uint8_t mean = anomalyBits(value[kMean]);
    if (mean == kHasNan && others == kHasInf) return kHasInf;
    return others | mean;
}

}  // namespace probe::analysis
