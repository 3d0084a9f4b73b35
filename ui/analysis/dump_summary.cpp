// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/dump_summary.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "analysis/overflow_check.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"
#include "probe/format/statistic_csv.h"

namespace probe::analysis {
namespace {

void walkFiles(const std::string& dir, DumpSummary& s) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        const std::string path = dir + "/" + name;
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            walkFiles(path, s);
        } else if (S_ISREG(st.st_mode)) {
            if (name == format::kStatusFileName || name == ".probe_status.lock" ||
                name == format::kInjectionLogName)
                continue;
            if (name[0] == '.' && name.size() > 4 && name.substr(name.size() - 4) == ".tmp")
                continue;  // being written
            ++s.files;
            s.bytes += static_cast<uint64_t>(st.st_size);
            const bool tensor = (name.size() > 4 && name.substr(name.size() - 4) == ".bin") ||
                                (name.size() > 3 && name.substr(name.size() - 3) == ".pt");
            s.tensorFiles += tensor ? 1 : 0;
        }
    }
    ::closedir(d);
}

bool inScope(const DumpIndex& index, uint32_t process, const DumpScope& scope) {
    return scope.holdsProcess(index.process(process).key);
}

// The rows of a part of the dump: of the whole, every row in the index's order.
struct RowsOfPart {
    const DumpIndex& index;
    const DumpScope& scope;
    template <typename Visit>
    void forEach(Visit visit) const {
        if (scope.whole()) {
            for (uint32_t r = 0; r < index.rowCount(); ++r) visit(r);
            return;
        }
        for (uint32_t p = 0; p < index.processCount(); ++p) {
            if (!inScope(index, p, scope)) continue;
            for (const auto& [round, rows] : index.process(p).rounds)
                if (scope.holdsRound(round))
                    for (const uint32_t r : rows) visit(r);
        }
    }
};

// An op-level dump's rows name a tensor file each. Fewer tensor files on disk than rows naming
// one (files deleted, a copy cut short): the rows' files are looked for, and those gone said with
// the first of them (a summary of such a dump said nothing, only its file count fell). A file
// there through a link is no problem, though the count of regular files leaves it out.
void sayMissingTensorFiles(const DumpIndex& index, const RowsOfPart& rowsOfPart, DumpSummary& s) {
    if (index.layout() != DumpLayout::Atb) return;
    uint64_t named = 0;
    rowsOfPart.forEach([&](uint32_t r) { named += index.row(r).hasTensorFile ? 1 : 0; });
    if (named <= s.tensorFiles) return;
    // Each row's path is read back from its CSV line: so many are looked at, no more.
    constexpr uint64_t kLookedAt = 100000;
    std::string first;
    uint64_t lookedAt = 0, missing = 0;
    rowsOfPart.forEach([&](uint32_t r) {
        if (lookedAt >= kLookedAt || !index.row(r).hasTensorFile) return;
        ++lookedAt;
        const std::string path = index.tensorPath(r);
        if (path.empty() || format::fileExists(path)) return;
        if (first.empty()) first = path;
        ++missing;
    });
    if (missing == 0) return;
    const bool all = lookedAt == named;
    s.problems.push_back((all ? "" : "at least ") + std::to_string(missing) + " tensor file" +
                         (missing == 1 ? "" : "s") + " that the rows name " +
                         (missing == 1 ? "is" : "are") + " not in the dump (the first: " + first +
                         ")");
}

std::optional<Anomaly> anomalyAt(const DumpIndex& index, uint32_t row) {
    if (row == kNone) return std::nullopt;
    const StatRecord& r = index.row(row);
    const auto& slot = index.slot(r.slot);
    const auto& op = index.op(slot.op);
    Anomaly a{index.process(op.process).key, r.round, index.describeOp(slot.op, r.round), op.type,
              index.describeSlot(r.slot),    {}};
    for (int i = 0; i < kStatCount; ++i) {
        const auto stat = static_cast<Stat>(i);
        if (!r.has(stat) || std::isfinite(r.get(stat))) continue;
        std::string name = statName(stat);
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        a.what += (a.what.empty() ? "" : " ") + name + "=" + format::formatStatValue(r.get(stat));
    }
    return a;
}

// Whether a process entry of probe_status.json is the process whose key is `key`: by pid and
// device both (ranks of several machines or containers share pids), by the rank alone for an
// msprobe rank<R>; none for a key that names neither (a renamed folder).
bool isEntryOf(DumpLayout layout, const format::ProcessDumpStatus& entry, const std::string& key) {
    const ProcessKeyParts named = readProcessKey(layout, key);
    if (named.pid >= 0)
        return entry.pid == named.pid && (named.rank < 0 || entry.device == named.rank);
    return layout == DumpLayout::Msprobe && named.rank >= 0 && entry.device == named.rank;
}

// Whether a process entry of probe_status.json is of the process `scope` names (any, when none).
bool inScope(DumpLayout layout, const format::ProcessDumpStatus& entry, const DumpScope& scope) {
    return scope.process.empty() || isEntryOf(layout, entry, scope.process);
}

// The earliest (by round: processes share no clock) of each process's first anomalous row.
std::optional<Anomaly> firstAnomaly(const DumpIndex& index, uint8_t bits, const DumpScope& scope) {
    uint32_t best = kNone;
    for (uint32_t p = 0; p < index.processCount(); ++p) {
        if (!inScope(index, p, scope)) continue;
        const uint32_t row = index.firstAnomalousRow(p, bits, scope.round);
        if (row != kNone && (best == kNone || index.row(row).round < index.row(best).round))
            best = row;
    }
    return anomalyAt(index, best);
}

// Whether op `o` is of the part: its process's, and with rows in its round (an op of the
// structure files alone belongs to no round).
bool opInScope(const DumpIndex& index, uint32_t o, const DumpScope& scope) {
    const auto& op = index.op(o);
    if (!inScope(index, op.process, scope)) return false;
    return !scope.round || std::binary_search(op.rounds.begin(), op.rounds.end(), *scope.round);
}

// The processes of the part, each with its counts in it.
std::vector<ProcessSummary> summarizeProcesses(const DumpIndex& index, const DumpScope& scope) {
    std::vector<ProcessSummary> out;
    std::vector<size_t> outOf(index.processCount(), SIZE_MAX);  // index's process -> out
    for (uint32_t p = 0; p < index.processCount(); ++p) {
        if (!inScope(index, p, scope)) continue;
        const auto& process = index.process(p);
        outOf[p] = out.size();
        ProcessSummary& s = out.emplace_back();
        s.key = process.key;
        const ProcessKeyParts parts = readProcessKey(index.layout(), process.key);
        if (parts.pid >= 0) s.pid = parts.pid;
        if (parts.rank >= 0) s.rank = parts.rank;
        for (const auto& [round, rows] : process.rounds) {
            if (!scope.holdsRound(round)) continue;
            if (s.firstRound < 0) s.firstRound = round;
            s.lastRound = round;
            ++s.rounds;
            s.rows += rows.size();
        }
    }
    for (uint32_t o = 0; o < index.opCount(); ++o)
        if (opInScope(index, o, scope)) ++out[outOf[index.op(o).process]].ops;
    if (scope.round) {
        // A step's ranks are those that ran it: not every rank of the dump.
        out.erase(
            std::remove_if(out.begin(), out.end(),
                           [](const ProcessSummary& p) { return p.rounds == 0 && p.ops == 0; }),
            out.end());
        return out;  // the status file says nothing of rounds
    }
    if (auto status = index.status()) {
        // By device and pid, not a search per entry: a status file of 300,000 processes took
        // two minutes. Ranks of several machines share pids.
        std::unordered_map<std::string, size_t> byProcess;
        for (size_t i = 0; i < out.size(); ++i)
            if (out[i].pid > 0)
                byProcess.emplace(format::processFolderName(out[i].rank.value_or(-1), out[i].pid),
                                  i);
        for (const auto& entry : status->processes) {
            if (!inScope(index.layout(), entry, scope)) continue;
            const std::string key = format::processFolderName(entry.device, entry.pid);
            auto [at, added] = byProcess.emplace(key, out.size());
            if (added) {  // it dumped nothing (not selected, or it ran no model)
                ProcessSummary s;
                s.pid = entry.pid;
                s.key = key;
                if (entry.device >= 0) s.rank = entry.device;
                out.push_back(std::move(s));
            }
            out[at->second].state = entry.state;
        }
    }
    return out;
}

}  // namespace

std::string describeEnd(const DumpSummary& s) {
    const format::ProgramEnd& end = *s.endedBy;
    // Several processes that ended alike are said together, not as one of them.
    const size_t alike = s.endedAlike.size();
    const bool several = alike > 1;
    std::string who = "the program";
    if (several && alike == s.processes.size()) {
        who = "all " + std::to_string(alike) + " processes";
    } else if (several) {
        constexpr size_t kNamed = 4;
        who = "processes";
        for (size_t i = 0; i < std::min(alike, kNamed); ++i)
            who += (i ? ", " : " ") + std::to_string(s.endedAlike[i]);
        if (alike > kNamed) who += " and " + std::to_string(alike - kNamed) + " more";
    } else if (s.processes.size() > 1 || s.launcherEnd) {  // "the program" is the launcher then
        who = "process " + std::to_string(s.endedByPid);
    }
    const std::string was = several ? "were" : "was";
    const std::string its = several ? "their" : "its";
    std::string how;
    switch (end.how) {
        case format::ProgramEnd::How::Exited:
            how = "exited with code " + std::to_string(end.code);
            break;
        case format::ProgramEnd::How::Signaled:
            how = was + " killed by " + format::signalName(end.code);
            break;
        case format::ProgramEnd::How::Vanished:
            how = "ended without stopping " + its + " probe (killed or crashed)";
            break;
    }
    if (s.endedByCutOff)
        return who + " " + how + " before " + its +
               " probe could write out what was queued: rows of " + its +
               " last 100 ms or so may be missing, more if " + its +
               " disk was slower than the program";
    if (s.endedByCrashed)
        return who + " " + how + "; " + its +
               " probe wrote out what was queued (the op running then is cut short)";
    if (end.how == format::ProgramEnd::How::Signaled)
        // "complete" is the dump's: whole up to the signal ("complete ... before its end" read
        // as a contradiction).
        return who + " " + was + " stopped by " + format::signalName(end.code) + "; " + its +
               " probe wrote out all it had seen until then";
    return who + " " + how;
}

DumpSummary summarizeStatus(const DumpIndex& index, const DumpScope& scope) {
    DumpSummary s;
    s.root = index.root();
    s.layout = index.layout();
    s.part = describeScope(index.layout(), scope);
    s.statusUnreadable = !index.statusError().empty();
    if (auto status = index.status()) {
        s.state = status->state;
        int worst = -1;
        for (const auto& p : status->processes) {
            if (!inScope(s.layout, p, scope)) continue;
            if (!scope.process.empty()) s.state = p.state;  // the named process's own
            for (const auto& m : p.messages) s.runtimeMessages.push_back(m);
            if (!p.dumpStopped.empty()) s.dumpStopped = p.dumpStopped;
            if (!p.endedBy) continue;
            const bool cutOff = p.cutOff;
            // Incomplete for a dump stopped early (a full disk) or a write refused, too: only a
            // signal after its probe drained is a crash.
            const bool crashed = p.state == format::DumpState::Incomplete &&
                                 p.endedBy->how == format::ProgramEnd::How::Signaled;
            const int rank = cutOff ? 4 : crashed ? 3 : !p.endedBy->normal() ? 2 : 1;
            if (rank > worst) {
                worst = rank;
                s.endedBy = p.endedBy;
                s.endedByPid = p.pid;
                s.endedByCutOff = cutOff;
                s.endedByCrashed = crashed && !cutOff;
                s.endedAlike = {p.pid};
            } else if (rank == worst && p.endedBy->how == s.endedBy->how &&
                       p.endedBy->code == s.endedBy->code) {
                s.endedAlike.push_back(p.pid);
            }
        }
        s.launcherEnd = launcherEndOf(*status);
    }
    return s;
}

std::optional<format::ProgramEnd> launcherEndOf(const format::DumpStatus& status) {
    if (status.programs.empty()) return std::nullopt;
    // By pid on its machine and in its pid namespace: a folder shared by several machines.
    const auto where = [](int64_t pid, const std::string& host, const std::string& pids) {
        return std::to_string(pid) + "\n" + host + "\n" + pids;
    };
    std::unordered_set<std::string> entries;
    for (const auto& p : status.processes) entries.insert(where(p.pid, p.host, p.pidNamespace));
    // Its own end outranks a normal exit, as a process's does.
    const auto badness = [](const format::ProgramEnd& end) {
        return end.normal() ? 0 : end.how == format::ProgramEnd::How::Exited ? 1 : 2;
    };
    std::optional<format::ProgramEnd> worst;
    for (const auto& program : status.programs)
        if (!entries.count(where(program.pid, program.host, program.pidNamespace)) &&
            (!worst || badness(program.endedBy) >= badness(*worst)))
            worst = program.endedBy;
    return worst;
}

std::string describeState(const DumpSummary& s) {
    if (!s.state) return {};
    std::string text = format::toString(*s.state);
    if (s.endedBy) text += "; " + describeEnd(s);
    if (s.launcherEnd)  // the processes' ends say the ranks', this the job's
        text += "; " + describeLauncherEnd(*s.launcherEnd);
    return text;
}

std::string describeLauncherEnd(const format::ProgramEnd& end) {
    return std::string("the program (not probed itself) ") +
           (end.how == format::ProgramEnd::How::Signaled ? "was " : "") +
           format::describeProgramEnd(end);
}

DumpSummary summarizeDump(const DumpIndex& index) {
    return summarizeDumpPart(index, {}, index.root());
}

DumpSummary summarizeDumpPart(const DumpIndex& index, const DumpScope& scope,
                              const std::string& folder) {
    DumpSummary s = summarizeStatus(index, scope);
    s.processes = summarizeProcesses(index, scope);
    for (uint32_t o = 0; o < index.opCount(); ++o) {
        if (!opInScope(index, o, scope)) continue;
        ++s.ops;
        s.layerOps += index.op(o).depth == 0 ? 1 : 0;
        s.opsWithRows += index.op(o).rowCount > 0 ? 1 : 0;
    }
    std::set<int32_t> rounds;
    for (uint32_t p = 0; p < index.processCount(); ++p) {
        if (!inScope(index, p, scope)) continue;
        for (const auto& [round, rows] : index.process(p).rounds)
            if (scope.holdsRound(round)) rounds.insert(round);
    }
    if (!rounds.empty()) {
        s.firstRound = *rounds.begin();
        s.lastRound = *rounds.rbegin();
    }
    s.rounds = rounds.size();
    const RowsOfPart rowsOfPart{index, scope};
    rowsOfPart.forEach([&](uint32_t r) {
        ++s.rows;
        s.rowsWithoutStatistics += index.row(r).present == 0 ? 1 : 0;
    });
    s.firstNan = firstAnomaly(index, kHasNan, scope);
    s.firstInf = firstAnomaly(index, kHasInf, scope);
    if (s.firstNan || s.firstInf) {
        OverflowOptions options;
        options.scope = scope;
        options.readTensorFiles = false;  // a summary reads what the rows say
        const OverflowReport report = findOverflowBirths(index, options);
        const OverflowBirth* first = nullptr;  // the earliest round (processes share no clock)
        for (const auto& birth : report.births)
            if (!first || birth.round < first->round) first = &birth;
        for (const auto& why : report.unexplained)
            if (!why.empty() && s.noOverflowBorn.empty()) s.noOverflowBorn = why;
        if (first)
            // Its first overflowed output: the tensor and why, as the birth's reason says them.
            for (const auto& output : first->outputs)
                if (output.overflowed) {
                    s.overflowBorn = Anomaly{index.process(first->process).key,
                                             first->round,
                                             index.describeOp(first->op, first->round),
                                             index.op(first->op).type,
                                             index.describeSlot(index.row(output.row).slot),
                                             output.why};
                    break;
                }
    }
    s.problems = problemsOfPart(index, scope, folder, &s.problemsElsewhere);
    walkFiles(folder, s);
    if (index.layout() == DumpLayout::Atb && !scope.process.empty() && !scope.round) {
        // A process's files outside its data folder: its structure and its row order.
        const std::string& root = index.root();
        walkFiles(root + "/info/layer/" + scope.process, s);
        walkFiles(root + "/info/model/" + scope.process, s);
        struct stat st;
        const std::string order = root + "/probe_row_order/" + scope.process + ".csv";
        if (::lstat(order.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
            ++s.files;
            s.bytes += static_cast<uint64_t>(st.st_size);
        }
    }
    sayMissingTensorFiles(index, rowsOfPart, s);
    return s;
}

std::vector<std::string> problemsOfPart(const DumpIndex& index, const DumpScope& scope,
                                        const std::string& folder, uint64_t* elsewhere) {
    const std::string& root = index.root();
    // Whether `text` begins with the path `dir`, as a whole (then "/", ":" or " " follow).
    const auto startsWithPath = [](const std::string& text, const std::string& dir) {
        return text.compare(0, dir.size(), dir) == 0 &&
               (text.size() == dir.size() || text[dir.size()] == '/' || text[dir.size()] == ':' ||
                text[dir.size()] == ' ');
    };
    // A problem names the file first: of this part, of another, or of the whole dump.
    const auto ofPart = [&](const std::string& problem) {
        if (scope.whole() || startsWithPath(problem, folder)) return true;
        if (index.layout() == DumpLayout::Msprobe)
            return problem.compare(0, root.size() + 5, root + "/step") != 0;
        for (const char* area : {"/info/layer/", "/info/model/", "/probe_row_order/"}) {
            const std::string dir = root + area;
            if (problem.compare(0, dir.size(), dir) != 0) continue;
            const size_t end = problem.find_first_of("/: ", dir.size());
            const std::string name = problem.substr(dir.size(), end - dir.size());
            return !scope.process.empty() &&
                   (name == scope.process || name == scope.process + ".csv");
        }
        return !startsWithPath(problem, root + "/data");
    };
    std::vector<std::string> problems;
    for (const auto& problem : index.problems()) {
        if (ofPart(problem))
            problems.push_back(problem);
        else if (elsewhere)
            ++*elsewhere;
    }
    return problems;
}

PartReading readingOfPart(const DumpIndex& index, const DumpScope& scope,
                          const std::string& folder) {
    PartReading reading;
    reading.problems = problemsOfPart(index, scope, folder, &reading.problemsElsewhere);
    RowsOfPart{index, scope}.forEach([&](uint32_t) { ++reading.rows; });
    for (uint32_t o = 0; o < index.opCount(); ++o)
        reading.ops += opInScope(index, o, scope) ? 1 : 0;
    return reading;
}

std::string humanBytes(uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    return buffer;
}

std::string formatSummary(const DumpSummary& s) {
    const bool atb = s.layout == DumpLayout::Atb;
    // Names from the disk are input like any other: printed as printable text (a rank folder
    // named with a terminal escape wrote it to the terminal).
    const auto shown = [](const std::string& text) { return format::printableText(text, 2000); };
    std::string out = std::string(atb ? "dump: " : "msprobe dump: ") + shown(s.root);
    if (!s.state) {
        // Not "no probe_status.json" for one that is there and cannot be read (a device, a
        // FIFO, garbage): the problem lines below say why.
        out += !atb                 ? "\n"
               : s.statusUnreadable ? " (probe_status.json unreadable; see the problems below)\n"
                                    : " (no probe_status.json)\n";
    } else {
        out += " (" + describeState(s) + ")\n";
    }
    if (!s.part.empty()) out += "  only " + shown(s.part) + " of it:\n";
    const bool ranks =
        !s.processes.empty() && std::all_of(s.processes.begin(), s.processes.end(),
                                            [](const ProcessSummary& p) { return p.rank; });
    char line[512];
    std::snprintf(line, sizeof line, "  %s: %zu   ops: %llu (%llu %s, %llu with rows)   %s: ",
                  ranks || !atb ? "ranks" : "processes", s.processes.size(),
                  static_cast<unsigned long long>(s.ops),
                  static_cast<unsigned long long>(s.layerOps), atb ? "layer-level" : "top-level",
                  static_cast<unsigned long long>(s.opsWithRows), atb ? "rounds" : "steps");
    out += line;
    if (s.firstRound < 0)
        out += "none";
    else
        out += std::to_string(s.firstRound) + ".." + std::to_string(s.lastRound) + " (" +
               std::to_string(s.rounds) + ")";
    out += "\n";
    std::snprintf(line, sizeof line, "  rows: %llu   files: %llu (%llu tensors)   size: %s\n",
                  static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.files),
                  static_cast<unsigned long long>(s.tensorFiles), humanBytes(s.bytes).c_str());
    out += line;
    // Process by process, when there is more than one or they are ranks.
    if (s.processes.size() > 1 || ranks) {
        for (const auto& p : s.processes) {
            std::string name = p.rank ? "rank " + std::to_string(*p.rank) : "process";
            if (!p.rank || atb) name += " (" + shown(p.key) + ")";
            if (p.rows == 0 && p.ops == 0) {
                out += "    " + name + ": nothing dumped";  // not selected, or it ran no model
            } else {
                std::snprintf(line, sizeof line, "    %s: %llu rows, %llu ops, %s ", name.c_str(),
                              static_cast<unsigned long long>(p.rows),
                              static_cast<unsigned long long>(p.ops), atb ? "rounds" : "steps");
                out += line;
                out += p.firstRound < 0
                           ? std::string("none")
                           : std::to_string(p.firstRound) + ".." + std::to_string(p.lastRound) +
                                 " (" + std::to_string(p.rounds) + ")";
            }
            if (p.state) out += std::string(", ") + format::toString(*p.state);
            out += "\n";
        }
    }
    // Rounds of two processes do not say which ran first: the process is named.
    const bool severalProcesses = s.processes.size() > 1;
    auto describe = [&](const Anomaly& a) {
        return (severalProcesses ? std::string(atb ? "process " : "") + shown(a.process) + ", "
                                 : std::string()) +
               (atb ? "round " : "step ") + std::to_string(a.round) + ", op " + shown(a.op) + " [" +
               shown(a.opType) + "], " + shown(a.tensor) + ": " + a.what + "\n";
    };
    if (s.firstNan) out += "  first NaN: " + describe(*s.firstNan);
    if (s.firstInf) out += "  first Inf: " + describe(*s.firstInf);
    if (s.overflowBorn)
        out += "  overflow born: " + describe(*s.overflowBorn);
    else if (!s.noOverflowBorn.empty())
        out += "  overflow born: none found among the ops dumped: " + s.noOverflowBorn + "\n";
    else if (s.firstNan || s.firstInf)
        out +=
            "  overflow born: none found (an Inf from a mask or a fill is asked for, not an "
            "overflow; probe overflow says more)\n";
    // No statistic is no verdict: a dump of tensor data alone (task "tensor") has none, and its
    // NaN are in the data (said "no NaN or Inf" of a run whose output was NaN).
    const uint64_t withStatistics = s.rows - s.rowsWithoutStatistics;
    if (!s.firstNan && !s.firstInf && withStatistics > 0) {
        // Rows that could not be read may hold one: the claim is of those read.
        out += s.problems.empty() ? "  no NaN or Inf in any statistic"
                                  : "  no NaN or Inf in the statistics that could be read";
        if (s.rowsWithoutStatistics > 0)
            out += " (" + std::to_string(s.rowsWithoutStatistics) + " of the " +
                   std::to_string(s.rows) + " rows have none)";
        out += "\n";
    } else if (s.rows > 0 && withStatistics == 0) {
        out +=
            "  no statistics in any row (tensor data only): NaN and Inf are not known here; "
            "`probe overflow` looks for them in the tensors\n";
    }
    if (!s.dumpStopped.empty()) out += "  dumping stopped early: " + s.dumpStopped + "\n";
    // The newest messages, each one line of printable text: a status file is input like any
    // other (one of 200,000 messages holding terminal escapes was printed whole).
    constexpr size_t kShownMessages = 20;
    const size_t firstShown =
        s.runtimeMessages.size() > kShownMessages ? s.runtimeMessages.size() - kShownMessages : 0;
    if (firstShown > 0)
        out += "  (" + std::to_string(firstShown) + " earlier messages of the probe not shown)\n";
    for (size_t i = firstShown; i < s.runtimeMessages.size(); ++i) {
        const auto& message = s.runtimeMessages[i];
        // One line each: "config rejected, ...:\n<file>: key ...\n..." reads as "...: <file>: key
        // ...; ...".
        std::string m = message.text;
        for (size_t at = m.find('\n'); at != std::string::npos; at = m.find('\n', at))
            m.replace(at, 1, at > 0 && m[at - 1] == ':' ? " " : "; ");
        m = format::printableText(m, 2000);
        switch (message.level) {
            case format::MessageLevel::Error:
                out += "  runtime error: " + m + "\n";
                break;
            case format::MessageLevel::Warning:
                out += "  warning: " + m + "\n";
                break;
            case format::MessageLevel::Info:
                out += "  " + m + "\n";
                break;
        }
    }
    for (size_t i = 0; i < s.problems.size() && i < 5; ++i)
        out += "  problem: " + shown(s.problems[i]) + "\n";
    if (s.problems.size() > 5)
        out += "  (" + std::to_string(s.problems.size() - 5) + " more problems)\n";
    if (s.problemsElsewhere > 0)
        out += "  (" + std::to_string(s.problemsElsewhere) + " problem" +
               (s.problemsElsewhere == 1 ? "" : "s") +
               " with files of other parts of the dump, left out here)\n";
    return out;
}

}  // namespace probe::analysis
