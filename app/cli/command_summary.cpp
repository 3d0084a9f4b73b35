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
    "or a rank<R>/proc<pid> directory): the whole dump that holds DIR. Exit code 0, 1 when\n"
    "some of it could not be read (the problems say what), 66 when there is no dump there or\n"
    "nothing in it could be read.\n";

// Named a rank, process or step folder inside the dump, says on standard error that all of the
// dump at `root` is summarised, so that nobody takes the summary as of that part alone.
void sayWholeDumpIsRead(const std::string& path, const std::string& root) {
    const auto location = analysis::locateDump(path, nullptr);
    if (!location || (location->scope.process.empty() && !location->scope.round)) return;
    std::fprintf(stderr,
                 "probe summary: %s is part of the dump %s: all of it is read (probe compare and "
                 "probe overflow take a rank or step folder alone)\n",
                 format::printableText(path, 2000).c_str(),
                 format::printableText(root, 2000).c_str());
}

}  // namespace

int runSummaryCommand(const Args& args) {
    std::vector<std::string> dirs;
    CLI::App app{"", "probe summary"};
    prepareCommandLine(app);
    app.add_option("DIR", dirs);
    if (auto exit = parseCommandLine(app, args, kSummaryUsage)) return *exit;
    if (dirs.size() != 1) {
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
    sayWholeDumpIsRead(dirs[0], kept.root());
    std::fputs(analysis::formatSummary(analysis::summarizeDump(kept)).c_str(), stdout);
    // A script reading the exit code learns that the summary is of part of the dump (it was 0
    // for a statistic.csv of garbage: "ops: 0").
    return exitCodeOfRead(kept);
}

}  // namespace probe::cli
