// probe summary DIR: what a dump holds, and the first NaN/Inf.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>

#include "analysis/compare.h"
#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "command_line.h"
#include "commands.h"
#include "exit_codes.h"
#include "probe/format/json_input.h"

namespace probe::cli {
namespace {

const char* kSummaryUsage =
    "Usage: probe summary DIR\n\n"
    "Summarises a dump of either layout: an op-level dump (the --output directory, its\n"
    "atb_dump_data, or a directory inside it) or an msprobe dump (the dump_path, a step<N>\n"
    "or a rank<R>/proc<pid> directory). A process, round, step or rank folder is summarised\n"
    "alone (its counts, first NaN/Inf and files; its process's state; problems with other\n"
    "parts' files are counted, not listed); any other directory, the whole dump that holds\n"
    "it. Exit code 0, 1 when some of it could not be read (the problems say what), 66 when\n"
    "there is no dump there, nothing in it could be read, or the part named holds nothing.\n";

}  // namespace

int runSummaryCommand(const Args& args) {
    std::vector<std::string> dirs;
    CLI::App app{"", "probe summary"};
    prepareCommandLine(app);
    app.add_option("DIR", dirs);
    if (auto exit = parseCommandLine(app, args, kSummaryUsage)) return *exit;
    if (dirs.size() > 1) {  // as probe overflow says it (the usage alone did not say why)
        std::fprintf(stderr, "probe summary: one dump at a time ('%s' and '%s')\n", dirs[0].c_str(),
                     dirs[1].c_str());
        return kExitUsage;
    }
    if (dirs.empty()) {
        std::fputs(kSummaryUsage, stderr);
        return kExitUsage;
    }
    keepFreedMemoryForReuse();
    std::string error;
    auto index = analysis::readDump(dirs[0], &error);
    if (!index) {
        std::fprintf(stderr, "probe summary: %s\n", error.c_str());
        return kExitConfigUnreadable;
    }
    const auto& kept = keepUntilExit(std::move(*index));  // not freed row by row at exit
    // A rank or step folder named: that part alone, as compare and overflow take it.
    const auto location = partNamed(kept, dirs[0], "probe summary", "summarised");
    const bool whole = location.scope.whole();
    auto summary = analysis::summarizeDumpPart(kept, location.scope, location.folder);
    std::fputs(analysis::formatSummary(summary).c_str(), stdout);
    // Its problems include the tensor files the rows name that are gone: read, not found.
    const analysis::PartReading reading{std::move(summary.problems), summary.problemsElsewhere,
                                        summary.rows, summary.ops};
    // Nothing read of it: dumped so, or out of reach (a folder the user may not read).
    if (!whole && reading.rows == 0 && reading.ops == 0)
        std::fprintf(
            stderr, "probe summary: nothing of %s %s\n",
            format::printableText(summary.part, 200).c_str(),
            reading.problems.empty() ? "was dumped" : "could be read (its problems above)");
    // A script reading the exit code learns that the summary is of part of the dump (it was 0
    // for a statistic.csv of garbage: "ops: 0").
    return exitCodeOfRead(reading, whole);
}

}  // namespace probe::cli
