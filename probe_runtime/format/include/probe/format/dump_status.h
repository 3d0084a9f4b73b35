// probe_status.json at the dump root: whether writing has finished, what was written, and how
// each program ended. Several processes of one process tree may share a dump root; each owns
// its entry under "processes" and the file is updated under a lock, atomically.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "probe/format/states.h"

namespace probe::format {

extern const char* const kStatusFileName;  // "probe_status.json"

// How a program ended, as far as someone saw it.
struct ProgramEnd {
    enum class How {
        Exited,    // exit() with `code`
        Signaled,  // killed by signal `code`
        Vanished,  // gone without stopping its probe, and nobody saw how (killed or crashed)
    };
    How how = How::Exited;
    int code = 0;        // the exit code, or the signal's number
    std::string seenBy;  // "probe run", "the probe" (the process itself, at a signal), ...

    bool operator==(const ProgramEnd& o) const {
        return how == o.how && code == o.code && seenBy == o.seenBy;
    }
    bool normal() const { return how == How::Exited && code == 0; }  // exited with code 0
    nlohmann::ordered_json toJson() const;
    // `issues` (when given) gets a line for each value of the wrong type, read as its default;
    // `where` names the object in them ("processes[0].ended_by").
    static std::optional<ProgramEnd> fromJson(const nlohmann::json& j,
                                              std::vector<std::string>* issues = nullptr,
                                              const std::string& where = "ended_by");
};

// "SIGKILL", or "signal 42" for one without a name.
std::string signalName(int signal);
// For people: "exited with code 3", "killed by SIGKILL", "gone without stopping its probe".
std::string describeProgramEnd(const ProgramEnd& end);

struct ProcessDumpStatus {
    int64_t pid = 0;
    int device = -1;
    // Running while its probe writes; Complete once it stopped and drained; Incomplete when it
    // ended without draining (a crash, kill -9: rows of about the last 100 ms may be missing).
    DumpState state = DumpState::Running;
    std::string command;           // the process's command line, for people
    std::string host;              // the machine it runs on ("" in files of older probes)
    std::string pidNamespace;      // its pids' namespace there ("pid:[4026531836]"), or ""
    std::string started, updated;  // ISO 8601 UTC
    uint64_t files = 0, bytes = 0, rows = 0, errors = 0;
    uint64_t droppedRows = 0;           // rows not written because dumping had stopped
    std::string dumpStopped;            // why dumping stopped early ("" when it did not)
    std::optional<ProgramEnd> endedBy;  // how the program ended, when someone saw it end
    // It died with its probe running (kill -9, or a crash the probe could not drain): rows of
    // about its last 100 ms may be missing. Said by whoever saw it end.
    bool cutOff = false;
    std::vector<StatusMessage> messages;  // the latest errors and warnings, newest last

    // Its dump stopped early or lost writes: not whole, however its program ended.
    bool lostSome() const { return !dumpStopped.empty() || errors > 0; }

    nlohmann::ordered_json toJson() const;
    static ProcessDumpStatus fromJson(const nlohmann::json& j,
                                      std::vector<std::string>* issues = nullptr,
                                      const std::string& where = "process");
};

// A program `probe run` started, and how it saw it end. A launcher (torchrun) runs no model and
// has no process entry: without this, its exit code or the signal that killed it was said
// nowhere. One per `probe run` (--append adds another), oldest first.
struct ProgramRecord {
    int64_t pid = 0;
    std::string command;  // for people
    std::string host, pidNamespace;
    ProgramEnd endedBy;

    nlohmann::ordered_json toJson() const;
    static std::optional<ProgramRecord> fromJson(const nlohmann::json& j,
                                                 std::vector<std::string>* issues,
                                                 const std::string& where);
};

struct DumpStatus {
    // Running while any process is, Complete when all finished and nothing stopped early,
    // Incomplete when all finished but some dump stopped early, had errors or was cut off.
    DumpState state = DumpState::Running;
    uint64_t files = 0, bytes = 0, rows = 0, errors = 0;
    std::vector<ProcessDumpStatus> processes;
    std::vector<ProgramRecord> programs;
    // What fromJson read as a default, each naming its key: a value of the wrong type ("state":
    // [], "pid": "x"), an entry that is no object; the first ten, then "(N more)". Not written
    // (toJson); readers say them.
    std::vector<std::string> issues;

    nlohmann::ordered_json toJson() const;
    // nullopt when no process in it can be read: `error` says so on its first line, then
    // what is wrong, a line each.
    static std::optional<DumpStatus> fromJson(const nlohmann::json& j, std::string* error);
};

DumpStatus aggregateStatus(std::vector<ProcessDumpStatus> processes);

// The name of a process's folders in an op-level dump (data/, info/, probe_row_order/):
// "<device>_<pid>", or "<pid>" without a device (device < 0).
std::string processFolderName(int64_t device, int64_t pid);

// This machine's name and this process's pid namespace, as ProcessDumpStatus says them.
std::string localHostName();
std::string localPidNamespace();

// A process of this machine (and of this pid namespace: a container sharing the host's name
// has pids of its own) the status says is running, and which is gone, was killed with
// whoever would have said so (probe run killed too, a job's time limit): its entry is settled as
// recordProgramEnd would have, seen by `seenBy`, and the status's state with it. Returns whether
// any entry changed.
bool settleVanishedProcesses(DumpStatus& status, const std::string& seenBy);

// Merges `mine` into <root>/probe_status.json under an flock, and writes it atomically.
// Returns 0 or an errno value.
int updateStatusFile(const std::string& root, const ProcessDumpStatus& mine);

// Said by whoever saw the program `pid` end (its parent): `programs` records it, with `command`;
// its entry records `end`, and becomes
// Incomplete if its probe was still running (it never drained). Entries of other processes
// still running whose process is gone are settled the same way, as Vanished. Only entries of
// this machine and pid namespace (or naming neither) are touched: a pid of another machine
// sharing the folder is another process. Returns 0, or an errno value (ENOENT when there is no
// status file: the program never started a probe).
int recordProgramEnd(const std::string& root, int64_t pid, const std::string& command,
                     const ProgramEnd& end);

std::optional<DumpStatus> readStatusFile(const std::string& root, std::string* error);

// probe_injection.jsonl at the dump root: one line per process that `probe run`'s Python
// bootstrap tried to arm (written by probe_studio/torch_hooks.py), read back by `probe run` to
// say why a process was not probed.
extern const char* const kInjectionLogName;  // "probe_injection.jsonl"
struct InjectionRecord {
    int64_t pid = 0;
    std::string status;   // "attached", "no_adapter", "torch_mismatch", "start_failed", ...
    std::string message;  // for people; empty when attached
};
// The lines of <root>/probe_injection.jsonl that parse; a missing file is no lines. A line that
// is not a JSON object, or whose fields have other types, is skipped (the file is ours, but a
// program killed mid-write leaves half a line).
std::vector<InjectionRecord> readInjectionLog(const std::string& root);

// "2026-11-29T14:46:15Z"
std::string isoTimestampNow();

}  // namespace probe::format
