// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/dump_index.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "analysis/atb_dump.h"
#include "probe/format/file_util.h"
#include "probe/format/statistic_csv.h"

namespace probe::analysis {
namespace {

// Where `round` is, or goes, in an op's ids of other rounds (sorted by round).
template <typename Ids>
auto roundEntry(Ids& ids, int32_t round) {
    return std::lower_bound(ids.begin(), ids.end(), round,
                            [](const auto& e, int32_t r) { return e.first < r; });
}

// Past this many, problems are counted rather than kept (a badly broken dump must not eat memory).
constexpr size_t kMaxProblems = 500;
// The first capacity of an op's or a tensor's list of rounds or rows: six 4-byte numbers take the
// 24 bytes of the smallest block malloc hands out, so the first five rounds cost one allocation
// instead of four (1, 2, 4, 8), a million rows' worth of them.
constexpr size_t kFirstCapacity = 6;

// Execution order of atb op ids: "_"-joined numbers ("2_9" before "2_10"); parts that are not
// numbers compare as text.
bool atbIdBefore(const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const size_t ia = std::min(a.find('_', i), a.size()),
                     jb = std::min(b.find('_', j), b.size());
        const std::string_view pa(a.data() + i, ia - i), pb(b.data() + j, jb - j);
        auto digits = [](std::string_view part) {
            return !part.empty() && std::all_of(part.begin(), part.end(),
                                                [](unsigned char c) { return std::isdigit(c); });
        };
        const bool numbers = digits(pa) && digits(pb);
        if (numbers && pa.size() != pb.size())
            return pa.size() < pb.size();  // no leading zeros in ids
        if (pa != pb) return pa < pb;
        i = ia + 1;
        j = jb + 1;
    }
    return a.size() - std::min(a.size(), i) < b.size() - std::min(b.size(), j);
}

}  // namespace

const char* layoutName(DumpLayout layout) {
    return layout == DumpLayout::Atb ? "atb" : "msprobe";
}

const char* statName(Stat stat) {
    switch (stat) {
        case Stat::Max:
            return "Max";
        case Stat::Min:
            return "Min";
        case Stat::Mean:
            return "Mean";
        case Stat::Norm:
            return "Norm";
    }
    return "?";
}

std::vector<DumpDelta> splitDelta(DumpDelta&& delta, size_t maxItems) {
    std::vector<DumpDelta> pieces;
    maxItems = std::max<size_t>(maxItems, 1);
    if (delta.ops.size() <= std::max<size_t>(maxItems / 4, 1) &&
        delta.tensorSlots.size() <= maxItems && delta.rows.size() <= maxItems) {
        pieces.push_back(std::move(delta));
        return pieces;
    }
    const size_t maxOps = std::max<size_t>(maxItems / 4, 1);
    auto count = [&](size_t n, size_t most) { return (n + most - 1) / most; };
    // Reserved: the references below must survive the pieces added after them.
    pieces.reserve(1 + count(delta.ops.size(), maxOps) + count(delta.tensorSlots.size(), maxItems) +
                   count(delta.rows.size(), maxItems));
    auto piece = [&]() -> DumpDelta& {
        DumpDelta& p = pieces.emplace_back();
        p.bytesDone = delta.bytesDone;
        p.bytesTotal = delta.bytesTotal;
        p.more = true;
        return p;
    };
    DumpDelta& first = piece();
    first.processes = std::move(delta.processes);
    first.strings = std::move(delta.strings);
    first.sources = std::move(delta.sources);
    // Moves `from` into pieces of at most `most`, the first of them `into` when given.
    auto cut = [&](auto& from, auto member, size_t most, DumpDelta* into) {
        for (size_t start = 0; start < from.size(); start += most) {
            DumpDelta& p = into ? *into : piece();
            into = nullptr;
            auto& to = p.*member;
            const size_t end = std::min(from.size(), start + most);
            to.assign(std::make_move_iterator(from.begin() + static_cast<std::ptrdiff_t>(start)),
                      std::make_move_iterator(from.begin() + static_cast<std::ptrdiff_t>(end)));
        }
    };
    cut(delta.ops, &DumpDelta::ops, maxOps, &first);
    pieces.back().opUpdates = std::move(delta.opUpdates);
    pieces.back().roundIds = std::move(delta.roundIds);
    cut(delta.tensorSlots, &DumpDelta::tensorSlots, maxItems, nullptr);
    cut(delta.rows, &DumpDelta::rows, maxItems, nullptr);
    DumpDelta& last = pieces.back();
    last.status = std::move(delta.status);
    last.statusError = std::move(delta.statusError);
    last.problems = std::move(delta.problems);
    last.rowOrder = std::move(delta.rowOrder);
    last.rowStatistics = std::move(delta.rowStatistics);
    last.statisticsPending = delta.statisticsPending;
    last.more = delta.more;
    return pieces;
}

IndexChange DumpIndex::apply(DumpDelta&& delta) {
    IndexChange change;
    ++applyCount_;

    change.firstNewProcess = static_cast<uint32_t>(processes_.size());
    for (auto& p : delta.processes) {
        Process process;
        process.key = std::move(p.key);
        processes_.push_back(std::move(process));
    }
    change.newProcesses = static_cast<uint32_t>(delta.processes.size());
    for (auto& s : delta.strings) strings_.push_back(std::move(s));
    for (auto& s : delta.sources) sources_.push_back(std::move(s));

    change.firstNewOp = static_cast<uint32_t>(ops_.size());
    touchStamp_.resize(ops_.size() + delta.ops.size(), 0);
    std::vector<uint32_t> touched;
    auto touch = [&](uint32_t op) {
        if (op >= change.firstNewOp || touchStamp_[op] == applyCount_) return;
        touchStamp_[op] = applyCount_;
        touched.push_back(op);
    };

    // A delta that does not fit this index (a reader bug) is dropped item by item, never
    // allowed to index out of range.
    auto rejected = [&](const char* what) {
        if (problems_.size() < kMaxProblems)
            problems_.push_back(std::string("internal: a ") + what +
                                " referring to an unknown index was ignored");
    };
    for (auto& d : delta.ops) {
        if (d.process >= processes_.size() || (d.parent != kNone && d.parent >= ops_.size())) {
            rejected("new op");
            continue;
        }
        const auto index = static_cast<uint32_t>(ops_.size());
        Op op;
        op.process = d.process;
        op.parent = d.parent;
        Process& process = processes_[d.process];
        if (d.parent == kNone) {
            op.depth = 0;
            op.namePath = d.name;
        } else {
            op.depth = ops_[d.parent].depth + 1;
            op.namePath = ops_[d.parent].namePath + "/" + d.name;
        }
        std::vector<uint32_t>& siblings =
            d.parent == kNone ? process.topOps : ops_[d.parent].children;
        const size_t position = placeAmongSiblings(siblings, d);
        op.id = std::move(d.id);
        op.name = std::move(d.name);
        op.type = std::move(d.type);
        op.param = std::move(d.param);
        const uint64_t idHash = hashText(op.id);
        if (process.opById.find(idHash, [&](uint32_t o) { return ops_[o].id == op.id; }) ==
            KeyTable::kAbsent)
            process.opById.insert(idHash, index);
        ops_.push_back(std::move(op));
        siblings.insert(siblings.begin() + static_cast<std::ptrdiff_t>(position), index);
        for (size_t i = position; i < siblings.size(); ++i)
            ops_[siblings[i]].row = static_cast<uint32_t>(i);
    }
    change.newOps = static_cast<uint32_t>(ops_.size()) - change.firstNewOp;

    for (auto& u : delta.opUpdates) {
        if (u.op >= ops_.size()) continue;
        Op& op = ops_[u.op];
        if (!u.type.empty()) op.type = std::move(u.type);
        if (!u.param.empty()) op.param = std::move(u.param);
        touch(u.op);
    }

    for (auto& d : delta.roundIds) {
        if (d.op >= ops_.size()) {
            rejected("round's id");
            continue;
        }
        auto& ids = otherIds_[d.op];
        const auto at = roundEntry(ids, d.round);
        if (at != ids.end() && at->first == d.round) continue;
        ids.insert(at, {d.round, std::move(d.id)});
        touch(d.op);
    }

    for (auto& d : delta.tensorSlots) {
        if (d.op >= ops_.size()) {
            rejected("tensor");
            continue;
        }
        const auto index = static_cast<uint32_t>(slots_.size());
        Slot slot;
        slot.op = d.op;
        slot.isOutput = d.isOutput;
        slot.index = std::move(d.index);
        slots_.push_back(std::move(slot));
        // Room for an input and an output at once (most ops have both).
        auto& tensorSlots = ops_[d.op].tensorSlots;
        if (tensorSlots.empty()) tensorSlots.reserve(2);
        tensorSlots.push_back(index);
    }

    change.firstNewRow = static_cast<uint32_t>(rows_.size());
    const Process* lastProcess = nullptr;
    int32_t lastRound = 0;
    std::vector<uint32_t>* lastRoundRows = nullptr;
    for (const auto& record : delta.rows) {
        if (record.slot >= slots_.size()) {
            rejected("row");
            continue;
        }
        const auto index = static_cast<uint32_t>(rows_.size());
        rows_.push_back(record);
        Slot& slot = slots_[record.slot];
        // Room for a few rounds from the start: the smallest block malloc hands out holds six.
        if (slot.rows.empty()) slot.rows.reserve(kFirstCapacity);
        if (slot.rows.empty() || rows_[slot.rows.back()].round <= record.round) {
            slot.rows.push_back(index);
        } else {  // a row of an earlier round written late (another thread's batch)
            auto at = std::upper_bound(
                slot.rows.begin(), slot.rows.end(), record.round,
                [this](int32_t round, uint32_t row) { return round < rows_[row].round; });
            slot.rows.insert(at, index);
        }
        Op& op = ops_[slot.op];
        ++op.rowCount;
        if (op.rounds.empty()) op.rounds.reserve(kFirstCapacity);
        if (op.rounds.empty() || op.rounds.back() < record.round) {
            op.rounds.push_back(record.round);
        } else {
            auto at = std::lower_bound(op.rounds.begin(), op.rounds.end(), record.round);
            if (at == op.rounds.end() || *at != record.round) op.rounds.insert(at, record.round);
        }
        Process& process = processes_[op.process];
        ++process.rows;
        // Rows come round by round: the map is looked up when the round changes.
        if (&process != lastProcess || record.round != lastRound) {
            auto [round, inserted] = process.rounds.try_emplace(record.round);
            if (inserted) change.newRounds = true;
            lastProcess = &process;
            lastRound = record.round;
            lastRoundRows = &round->second;
        }
        lastRoundRows->push_back(index);
        touch(slot.op);
        addAnomalies(slot.op, record.anomalies, touch);
    }
    change.newRows = static_cast<uint32_t>(rows_.size()) - change.firstNewRow;

    for (const auto& computed : delta.rowStatistics) {
        if (computed.row >= rows_.size()) {
            rejected("row's statistics");
            continue;
        }
        StatRecord& record = rows_[computed.row];
        if (record.present) continue;  // the dump's own statistics stand
        for (int i = 0; i < kStatCount; ++i) record.value[i] = computed.value[i];
        record.present = (1u << kStatCount) - 1;
        record.anomalies = rowAnomalies(record.value, record.present);
        record.statsFromData = true;
        ++statisticsFromData_;
        change.statisticsRows.push_back(computed.row);
        const uint32_t op = slots_[record.slot].op;
        touch(op);
        addAnomalies(op, record.anomalies, touch);
    }
    if (delta.statisticsPending) statisticsPending_ = *delta.statisticsPending;

    if (delta.status) {
        status_ = std::move(delta.status);
        statusError_.clear();
        change.statusChanged = true;
    }
    if (delta.statusError) {
        statusError_ = std::move(*delta.statusError);
        change.statusChanged = true;
    }
    for (auto& p : delta.problems) {
        if (problems_.size() < kMaxProblems)
            problems_.push_back(std::move(p));
        else
            ++droppedProblems_;
    }
    for (const auto& [process, run] : delta.rowOrder) {
        if (process >= processes_.size()) {
            rejected("row order run");
            continue;
        }
        auto& runs = processes_[process].rowOrder;
        if (!runs.empty() && runs.back().round == run.round)  // a run the last poll began
            runs.back().rows += run.rows;
        else
            runs.push_back(run);
    }
    // Rows mostly touch ops in the order they were made: often sorted already.
    if (!std::is_sorted(touched.begin(), touched.end())) std::sort(touched.begin(), touched.end());
    change.touchedOps = std::move(touched);
    return change;
}

template <typename Touch>
void DumpIndex::addAnomalies(uint32_t op, uint8_t bits, const Touch& touch) {
    if (!(bits & ~ops_[op].anomalies)) return;
    ops_[op].anomalies |= bits;
    // The badge of every ancestor says "something below is NaN/Inf".
    for (uint32_t cur = op; cur != kNone; cur = ops_[cur].parent) {
        Op& o = ops_[cur];
        if ((o.subtreeAnomalies & bits) == bits) break;
        o.subtreeAnomalies |= bits;
        touch(cur);
    }
}

size_t DumpIndex::placeAmongSiblings(const std::vector<uint32_t>& siblings,
                                     const DumpDelta::Op& op) const {
    if (layout_ == DumpLayout::Atb) {
        // Mostly found in order: look from the end.
        if (siblings.empty() || !atbIdBefore(op.id, ops_[siblings.back()].id))
            return siblings.size();
        return static_cast<size_t>(
            std::upper_bound(siblings.begin(), siblings.end(), op.id,
                             [this](const std::string& id, uint32_t sibling) {
                                 return atbIdBefore(id, ops_[sibling].id);
                             }) -
            siblings.begin());
    }
    if (!op.after) return siblings.size();
    if (*op.after == kNone) return 0;
    if (*op.after < ops_.size() && ops_[*op.after].parent == op.parent &&
        ops_[*op.after].process == op.process)
        return ops_[*op.after].row + 1;
    return siblings.size();  // not a sibling (the module tree changed between steps)
}

const std::string& DumpIndex::text(uint32_t stringIndex) const {
    static const std::string empty;
    return stringIndex < strings_.size() ? strings_[stringIndex] : empty;
}

namespace {
bool allDigits(std::string_view text) {
    return !text.empty() && text.size() < 16 &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}
}  // namespace

std::string describeScope(DumpLayout layout, const DumpScope& scope) {
    std::string part = scope.process;
    if (scope.round)
        part += (part.empty() ? "" : ", ") +
                std::string(layout == DumpLayout::Atb ? "round " : "step ") +
                std::to_string(*scope.round);
    return part;
}

ProcessKeyParts readProcessKey(DumpLayout layout, const std::string& key) {
    ProcessKeyParts parts;
    const std::string_view text(key);
    if (layout == DumpLayout::Msprobe) {
        if (text.substr(0, 4) == "rank" && allDigits(text.substr(4)))
            parts.rank = std::stoll(key.substr(4));
        if (text.substr(0, 4) == "proc" && allDigits(text.substr(4)))
            parts.pid = std::stoll(key.substr(4));
        return parts;
    }
    const size_t underscore = key.find('_');
    const std::string pid = underscore == std::string::npos ? key : key.substr(underscore + 1);
    if (allDigits(pid)) parts.pid = std::stoll(pid);
    if (underscore != std::string::npos && allDigits(text.substr(0, underscore)))
        parts.rank = std::stoll(key.substr(0, underscore));
    return parts;
}

uint32_t DumpIndex::findProcessOfPid(int64_t pid) const {
    for (size_t i = 0; i < processes_.size(); ++i)
        if (readProcessKey(layout_, processes_[i].key).pid == pid) return static_cast<uint32_t>(i);
    return kNone;
}

uint32_t DumpIndex::findProcess(const std::string& key) const {
    for (size_t i = 0; i < processes_.size(); ++i)
        if (processes_[i].key == key) return static_cast<uint32_t>(i);
    return kNone;
}

uint32_t DumpIndex::findOp(uint32_t process, const std::string& id) const {
    if (process >= processes_.size()) return kNone;
    return processes_[process].opById.find(hashText(id),
                                           [&](uint32_t op) { return ops_[op].id == id; });
}

uint32_t DumpIndex::opShownIn(uint32_t process, int32_t round, const std::string& id) const {
    if (process >= processes_.size()) return kNone;
    const auto& rounds = processes_[process].rounds;
    const auto found = rounds.find(round);
    if (found == rounds.end()) return kNone;
    for (uint32_t r : found->second) {
        const uint32_t op = slots_[rows_[r].slot].op;
        if (idIn(op, round) == id) return op;
    }
    return kNone;
}

format::OpLocation DumpIndex::location(uint32_t op) const {
    const Op& o = ops_[op];
    return format::OpLocation{o.id, o.namePath, o.depth};
}

uint32_t DumpIndex::representativeSlot(uint32_t op) const {
    uint32_t firstInput = kNone;
    for (uint32_t s : ops_[op].tensorSlots) {
        if (slots_[s].rows.empty()) continue;
        if (slots_[s].isOutput) return s;
        if (firstInput == kNone) firstInput = s;
    }
    return firstInput;
}

uint32_t DumpIndex::slotRow(uint32_t slot, int32_t round) const {
    if (slot >= slots_.size()) return kNone;
    const auto& rows = slots_[slot].rows;
    if (rows.empty()) return kNone;
    if (round < 0) return rows.back();
    auto it = std::lower_bound(rows.begin(), rows.end(), round,
                               [this](uint32_t row, int32_t r) { return rows_[row].round < r; });
    if (it == rows.end() || rows_[*it].round != round) return kNone;
    return *it;
}

std::vector<int32_t> DumpIndex::rounds(uint32_t process) const {
    std::vector<int32_t> out;
    if (process >= processes_.size()) return out;
    out.reserve(processes_[process].rounds.size());
    for (const auto& entry : processes_[process].rounds) out.push_back(entry.first);
    return out;
}

uint32_t DumpIndex::rowOfTensorFile(const std::string& path) const {
    const std::string file = format::resolvedPath(path),
                      data = format::resolvedPath(root_ + "/data");
    if (layout_ != DumpLayout::Atb || file.empty() || data.empty() ||
        file.rfind(data + "/", 0) != 0)
        return kNone;
    // <dev_pid>/<round>/...
    const std::string rest = file.substr(data.size() + 1);
    const size_t slash = rest.find('/'),
                 next = slash == std::string::npos ? slash : rest.find('/', slash + 1);
    if (next == std::string::npos) return kNone;
    const uint32_t process = findProcess(rest.substr(0, slash));
    const std::string round = rest.substr(slash + 1, next - slash - 1);
    if (process == kNone || round.empty() ||
        round.find_first_not_of("0123456789") != std::string::npos)
        return kNone;
    const auto& rounds = processes_[process].rounds;
    int32_t roundNumber = 0;
    if (std::from_chars(round.data(), round.data() + round.size(), roundNumber).ec != std::errc())
        return kNone;
    const auto it = rounds.find(roundNumber);
    if (it == rounds.end()) return kNone;
    for (uint32_t row : it->second)
        if (rows_[row].hasTensorFile && format::resolvedPath(tensorPath(row)) == file) return row;
    return kNone;
}

std::string DumpIndex::tensorPath(uint32_t row, std::string* error) const {
    if (row >= rows_.size()) return {};
    const StatRecord& r = rows_[row];
    if (!r.hasTensorFile || r.source >= sources_.size()) return {};
    if (layout_ == DumpLayout::Msprobe) return sources_[r.source];
    // atb: the path is the row's last column; read the line back instead of keeping a
    // million paths in memory.
    const std::string& csv = sources_[r.source];
    std::string why;
    const int fd = format::openRegularFile(csv, UINT64_MAX, nullptr, &why);
    if (fd < 0) {
        if (error) *error = "cannot open " + csv + ": " + why;
        return {};
    }
    // The file may have been replaced since it was read: the read is bounded as the reader's rows.
    std::string line;
    for (size_t want = 4096; want <= (1u << 20); want *= 4) {
        line.resize(want);
        const ssize_t n = ::pread(fd, line.data(), want, static_cast<off_t>(r.lineOffset));
        line.resize(n > 0 ? static_cast<size_t>(n) : 0);
        // LF, CRLF or CR alone (see AtbDumpReader::CsvFile::lineEnd).
        if (const size_t end = line.find_first_of("\r\n");
            end != std::string::npos || line.size() < want) {
            line.resize(std::min(end, line.size()));
            break;
        }
    }
    ::close(fd);
    if (line.empty()) {
        if (error)
            *error = "cannot read the row at byte " + std::to_string(r.lineOffset) + " of " + csv;
        return {};
    }
    std::string parseError;
    auto parsed = format::parseStatRow(line, &parseError);
    if (!parsed) {
        if (error) *error = csv + " changed since it was read: " + parseError;
        return {};
    }
    return parsed->tensorPath.empty() ? std::string() : tensorPathInDump(csv, parsed->tensorPath);
}

std::string DumpIndex::resolveTensorAlias(uint32_t row, const std::string& alias) const {
    if (layout_ != DumpLayout::Atb) return {};
    const std::string path = tensorPath(row);
    return path.empty() ? std::string() : findFirstCopy(path, alias);
}

uint32_t DumpIndex::firstAnomalousRow(uint32_t process, uint8_t bits,
                                      std::optional<int32_t> onlyRound) const {
    if (process >= processes_.size()) return kNone;
    // Every op lies below a layer-level one, whose badge says whether a row below it has the
    // bits: most dumps have none, and their million rows need no look.
    const auto& topOps = processes_[process].topOps;
    if (std::none_of(topOps.begin(), topOps.end(),
                     [&](uint32_t op) { return ops_[op].subtreeAnomalies & bits; }))
        return kNone;
    const Process& p = processes_[process];
    if (onlyRound) {  // the rows of one round are in execution order
        const auto it = p.rounds.find(*onlyRound);
        if (it == p.rounds.end()) return kNone;
        for (const uint32_t row : it->second)
            if (rows_[row].anomalies & bits) return row;
        return kNone;
    }
    // Each round's first such row; of those, the one written first.
    const RowTimes times(p);
    uint32_t first = kNone;
    uint64_t firstTime = 0;
    for (const auto& [round, rows] : p.rounds) {
        for (uint32_t i = 0; i < rows.size(); ++i) {
            if (!(rows_[rows[i]].anomalies & bits)) continue;
            if (times.roundsInOrder()) return rows[i];
            const uint64_t time = times.of(round, i);
            if (first == kNone || time < firstTime) {
                first = rows[i];
                firstTime = time;
            }
            break;
        }
    }
    return first;
}

RowTimes::RowTimes(const DumpIndex::Process& process) {
    const auto& rounds = process.rounds;
    uint64_t time = 0;
    int32_t latest = INT32_MIN;
    for (const format::RowOrderRun& run : process.rowOrder) {
        const auto round = rounds.find(static_cast<int32_t>(run.round));
        if (round == rounds.end()) continue;  // rows the reader did not find
        uint32_t& covered = covered_[round->first];
        const uint64_t take = std::min<uint64_t>(run.rows, round->second.size() - covered);
        if (take == 0) continue;
        roundsInOrder_ = roundsInOrder_ && round->first >= latest;
        latest = round->first;
        segments_[round->first].push_back({covered, time});
        covered += static_cast<uint32_t>(take);
        time += take;
    }
    for (const auto& [round, rows] : rounds) {
        uncoveredFrom_[round] = time;
        // Rounds after the last covered one, uncovered, still come round after round.
        if (rows.size() > covered_[round]) roundsInOrder_ = roundsInOrder_ && round >= latest;
        time += rows.size() - covered_[round];
    }
}

uint64_t RowTimes::of(int32_t round, uint32_t position) const {
    const auto covered = covered_.find(round);
    if (covered != covered_.end() && position < covered->second) {
        const auto& segments = segments_.at(round);
        const auto after =
            std::upper_bound(segments.begin(), segments.end(), position,
                             [](uint32_t p, const Segment& s) { return p < s.position; });
        const Segment& in = *std::prev(after);
        return in.time + (position - in.position);
    }
    const auto from = uncoveredFrom_.find(round);
    const uint32_t skipped = covered != covered_.end() ? covered->second : 0;
    return (from != uncoveredFrom_.end() ? from->second : 0) + (position - skipped);
}

const std::string& DumpIndex::idIn(uint32_t op, int32_t round) const {
    if (const auto* ids = otherIds(op)) {
        const auto at = roundEntry(*ids, round);
        if (at != ids->end() && at->first == round) return at->second;
    }
    return ops_[op].id;
}

std::string DumpIndex::idsText(uint32_t op) const {
    const Op& o = ops_[op];
    const auto* ids = otherIds(op);
    if (!ids) return o.id;
    // Each other id with its rounds: "2_9 in round 2", "2_9 in rounds 2 and 5", "2_9 in 12
    // rounds"; up to three ids ("2_4 in round 1, 2_9 in rounds 2 and 3"), else "other ids in
    // 12 rounds".
    std::vector<std::pair<std::string_view, std::vector<int32_t>>> byId;
    for (const auto& [round, id] : *ids) {
        auto it = std::find_if(byId.begin(), byId.end(),
                               [&, &id = id](const auto& e) { return e.first == id; });
        if (it == byId.end()) {
            if (byId.size() == 3)
                return o.id + "; other ids in " + std::to_string(ids->size()) + " rounds";
            it = byId.insert(byId.end(), {id, {}});
        }
        it->second.push_back(round);
    }
    std::string text = o.id;
    for (const auto& [id, rounds] : byId) {
        text += text.size() == o.id.size() ? "; " : ", ";
        text += id;
        if (rounds.size() == 1)
            text += " in round " + std::to_string(rounds.front());
        else if (rounds.size() == 2)
            text += " in rounds " + std::to_string(rounds.front()) + " and " +
                    std::to_string(rounds.back());
        else
            text += " in " + std::to_string(rounds.size()) + " rounds";
    }
    return text;
}

std::string DumpIndex::describeOp(uint32_t op) const {
    if (op >= ops_.size()) return "?";
    const Op& o = ops_[op];
    if (layout_ == DumpLayout::Msprobe) return o.id;
    return o.namePath + " (" + idsText(op) + ")";
}

std::string DumpIndex::describeOp(uint32_t op, int32_t round) const {
    if (op >= ops_.size()) return "?";
    if (layout_ == DumpLayout::Msprobe) return ops_[op].id;
    return ops_[op].namePath + " (" + idIn(op, round) + ")";
}

std::string DumpIndex::describeSlot(uint32_t slot) const {
    if (slot >= slots_.size()) return "?";
    return std::string(slots_[slot].isOutput ? "output " : "input ") + slots_[slot].index;
}

std::vector<DumpIndex::ProfilePoint> DumpIndex::roundProfile(uint32_t process, int32_t round,
                                                             const ProfileOptions& options) const {
    std::vector<ProfilePoint> points;
    if (process >= processes_.size()) return points;
    auto it = processes_[process].rounds.find(round);
    if (it == processes_[process].rounds.end()) return points;
    std::unordered_map<uint32_t, size_t> pointOfOp;
    pointOfOp.reserve(it->second.size());
    for (uint32_t row : it->second) {
        const Slot& slot = slots_[rows_[row].slot];
        const Op& op = ops_[slot.op];
        if (options.maxDepth >= 0 && op.depth > options.maxDepth) continue;
        auto [at, inserted] = pointOfOp.try_emplace(slot.op, points.size());
        if (inserted) points.push_back({slot.op, kNone});
        if (slot.isOutput == options.outputs && points[at->second].row == kNone)
            points[at->second].row = row;
    }
    points.erase(std::remove_if(points.begin(), points.end(),
                                [](const ProfilePoint& p) { return p.row == kNone; }),
                 points.end());
    return points;
}

}  // namespace probe::analysis
