// What a dump holds, for a person at a terminal: counts, rounds, where the first NaN and the
// first infinity are. Built on the same index the application reads dumps into. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/dump_index.h"
#include "probe/format/dump_status.h"

namespace probe::analysis {

// A row whose statistics hold a NaN or an infinity.
struct Anomaly {
    std::string process;  // "0_39943", "proc1234"
    int64_t round = 0;    // the round (atb) or the step (msprobe)
    std::string op;       // DumpIndex::describeOp: name path and id
    std::string opType;
    std::string tensor;  // DumpIndex::describeSlot: "output 0"
    std::string what;    // "max=nan min=-inf"
};

// One process of a dump: a rank of a distributed job, or one process of a program.
struct ProcessSummary {
    std::string key;  // "0_39943", "39943" (atb), "rank0", "proc1234" (msprobe)
    std::optional<int64_t>
        rank;         // msprobe rank<R>; atb the device id (a torch.distributed job's rank)
    int64_t pid = 0;  // atb; 0 when unknown
    uint64_t ops = 0, rows = 0;
    int64_t firstRound = -1, lastRound = -1;
    uint64_t rounds = 0;
    std::optional<format::DumpState> state;  // atb: its entry in probe_status.json
};

struct DumpSummary {
    std::string root;
    DumpLayout layout = DumpLayout::Atb;
    // The part summarised (describeScope: "proc7, step 1"), "" for the whole dump. Of a part, the
    // counts, anomalies and files are its own, the state and messages its process's.
    std::string part;
    std::optional<format::DumpState> state;  // from probe_status.json; none without one
    bool statusUnreadable = false;           // probe_status.json is there but cannot be read
    // Every process (rank) with data, in the index's order, then those that the status file
    // lists and that dumped nothing.
    std::vector<ProcessSummary> processes;
    // Every op of the tree (the structure files name ops that write no rows: views counted
    // inside a kernel, ops of rounds not dumped), of them the layer-level ones and those with rows.
    uint64_t ops = 0, layerOps = 0, opsWithRows = 0;
    int64_t firstRound = -1, lastRound = -1;
    uint64_t rounds = 0;
    uint64_t rows = 0;
    uint64_t rowsWithoutStatistics = 0;              // every value N/A (task "tensor": data only)
    uint64_t files = 0, bytes = 0, tensorFiles = 0;  // on disk (status file and lock excepted)
    // The first row with a NaN, and the first with an infinity (an -inf from masking is often
    // intended; a NaN rarely is), in execution order.
    std::optional<Anomaly> firstNan, firstInf;
    // Where the first overflow is born (findOverflowBirths: finite inputs, an output not; the
    // Inf of masks and fills not counted), when there is a NaN or an Inf: the first Inf is often
    // an attention mask's, named in every run, the overflow elsewhere.
    std::optional<Anomaly> overflowBorn;
    // Else why none is: the NaN/Inf came in with the inputs of the first ops dumped
    // (OverflowReport::unexplained), or "" (they are masks' and fills').
    std::string noOverflowBorn;
    std::vector<format::StatusMessage>
        runtimeMessages;      // what the runtime recorded in probe_status.json
    std::string dumpStopped;  // why dumping stopped early, if it did
    // How the program ended, when someone saw it end: of the processes that did not end well
    // (cut off first: a crash, a kill), else of the program probe run started.
    std::optional<format::ProgramEnd> endedBy;
    int64_t endedByPid = 0;           // whose end that is
    std::vector<int64_t> endedAlike;  // the pids of the processes that ended so, that one first
    bool endedByCutOff = false;       // that process never drained: its last rows may be missing
    bool endedByCrashed = false;      // it died of a signal after its probe drained (incomplete)
    // How the program probe run started ended, when it has no entry of its own (a launcher,
    // torchrun, that runs no model): of several (--append), the one that ended worst.
    std::optional<format::ProgramEnd> launcherEnd;
    std::vector<std::string> problems;  // files that could not be read (of the part's, for a part)
    uint64_t problemsElsewhere = 0;     // of a part: problems with files of other parts
};

// The problems reading a dump met that concern one part of it (DumpScope, its files in
// `folder`): those with its files and with the files the whole dump shares. Those with another
// rank's or step's files are only counted, in `elsewhere`.
std::vector<std::string> problemsOfPart(const DumpIndex& index, const DumpScope& scope,
                                        const std::string& folder, uint64_t* elsewhere);
// What reading the part came to: its problems, and whether anything of it was read.
struct PartReading {
    std::vector<std::string> problems;
    uint64_t problemsElsewhere = 0;
    uint64_t rows = 0, ops = 0;
};
PartReading readingOfPart(const DumpIndex& index, const DumpScope& scope,
                          const std::string& folder);

DumpSummary summarizeDump(const DumpIndex& index);
// Of one part (a rank, a step): `folder` is where its files are (the rank or step folder).
DumpSummary summarizeDumpPart(const DumpIndex& index, const DumpScope& scope,
                              const std::string& folder);
// Its status alone (state, how the program ended, messages): cheap, without the rows.
// DumpSummary::launcherEnd of `status`: how the program probe run started ended, when it has no
// process entry (a launcher); of several, the worst. And for people: "the program (not probed
// itself) exited with code 1".
std::optional<format::ProgramEnd> launcherEndOf(const format::DumpStatus& status);
std::string describeLauncherEnd(const format::ProgramEnd& end);
DumpSummary summarizeStatus(const DumpIndex& index, const DumpScope& scope = {});
// How the processes of DumpSummary::endedBy ended: "the program was killed by SIGKILL before its
// probe could write out what was queued: rows of its last 100 ms or so may be missing, ...",
// "process 41 exited with code 1".
std::string describeEnd(const DumpSummary& summary);
// "complete", "incomplete; the program was killed by SIGKILL before its probe could write out
// what was queued: ...": "" without a status file.
std::string describeState(const DumpSummary& summary);
std::string formatSummary(const DumpSummary& summary);
std::string humanBytes(uint64_t bytes);

}  // namespace probe::analysis
