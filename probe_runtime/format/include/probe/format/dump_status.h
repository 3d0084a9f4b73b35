// probe_status.json at the dump root: whether writing has finished, and what was written.
// Several processes of one process tree may share a dump root; each owns its entry under
// "processes" and the file is updated under a lock, atomically.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace probe::format {

extern const char* const kStatusFileName;  // "probe_status.json"

struct ProcessDumpStatus {
    int64_t pid = 0;
    int device = -1;
    std::string state = "running";  // "running" | "complete"
    std::string command;            // the process's command line, for people
    std::string started, updated;   // ISO 8601 UTC
    uint64_t files = 0, bytes = 0, rows = 0, errors = 0;
    uint64_t droppedRows = 0;         // rows not written because dumping had stopped
    std::string dumpStopped;          // why dumping stopped early ("" when it did not)
    std::string interruptedBy;        // "SIGTERM" / "SIGINT" when the program was stopped by it:
                                      // the dump is whole but ends where the program was stopped
    std::vector<std::string> messages;  // the latest error messages, newest last

    nlohmann::ordered_json toJson() const;
    static ProcessDumpStatus fromJson(const nlohmann::json& j);
};

struct DumpStatus {
    // "running" while any process is, "complete" when all finished and nothing stopped early,
    // "incomplete" when all finished but some dump stopped early or had errors.
    std::string state;
    uint64_t files = 0, bytes = 0, rows = 0, errors = 0;
    std::vector<ProcessDumpStatus> processes;

    nlohmann::ordered_json toJson() const;
    static std::optional<DumpStatus> fromJson(const nlohmann::json& j, std::string* error);
};

DumpStatus aggregateStatus(std::vector<ProcessDumpStatus> processes);

// Merges `mine` into <root>/probe_status.json under an flock, and writes it atomically.
// Returns 0 or an errno value.
int updateStatusFile(const std::string& root, const ProcessDumpStatus& mine);

std::optional<DumpStatus> readStatusFile(const std::string& root, std::string* error);

// "2026-11-29T14:46:15Z"
std::string isoTimestampNow();

}  // namespace probe::format
