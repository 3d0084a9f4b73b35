// Reading an op-level dump (atb_dump_data layout) back: its rows in execution order and a
// summary of what it holds. No Qt: shared by the probe CLI and the application.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "probe/format/statistic_csv.h"

namespace probe::analysis {

// Finds the atb_dump_data directory given it, its parent (the --output directory), or a
// directory inside it. nullopt when there is none.
std::optional<std::string> findAtbDumpRoot(const std::string& path);

// One statistic.csv of data/<dev_pid>/<round>/.
struct RoundFile {
    std::string devicePid;
    int64_t round = 0;
    std::string path;
};

// Every statistic.csv below <root>/data, ordered by process, then round (numerically).
std::vector<RoundFile> listRoundFiles(const std::string& root);

// Calls `onRow` for every row of every statistic.csv, in the order of listRoundFiles and of
// the rows in each file. Malformed lines are counted in `malformed` (a file being written may
// end in a partial line) and skipped. Returns false when `onRow` asked to stop.
bool forEachRow(const std::string& root, const std::function<bool(const RoundFile&, const format::StatRow&)>& onRow,
                uint64_t* malformed = nullptr);

// A row whose statistics hold a NaN or an infinity.
struct Anomaly {
    std::string devicePid;
    int64_t round = 0;
    std::string opId, opName, opType;
    bool isOutput = false;
    std::string index;
    std::string what;  // "max=nan min=-inf"
};

struct AtbDumpSummary {
    std::string root;
    std::string state;  // from probe_status.json: running | complete | incomplete, or "unknown"
    std::vector<std::string> processes;   // dev_pid directories
    uint64_t ops = 0;                     // distinct (process, op id)
    uint64_t layerOps = 0;                // of which layer-level
    int64_t firstRound = -1, lastRound = -1;
    uint64_t roundDirectories = 0;
    uint64_t rows = 0, malformedRows = 0;
    uint64_t files = 0, bytes = 0;        // every file under root (status and lock excepted)
    uint64_t tensorFiles = 0;
    // The first row with a NaN, and the first with an infinity (an -inf from masking is often
    // intended; a NaN rarely is), in execution order.
    std::optional<Anomaly> firstNan, firstInf;
    std::vector<std::string> messages;    // errors the runtime recorded
    std::string dumpStopped;              // why dumping stopped early, if it did
};

AtbDumpSummary summarizeAtbDump(const std::string& root);

// The summary as a few lines for a terminal.
std::string formatSummary(const AtbDumpSummary& summary);

// "12.3 MiB"
std::string humanBytes(uint64_t bytes);

}  // namespace probe::analysis
