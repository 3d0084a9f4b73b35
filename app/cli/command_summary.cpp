// probe summary DIR: what a dump holds, and the first NaN/Inf.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>

#include "analysis/atb_dump.h"
#include "commands.h"
#include "exit_codes.h"

namespace probe::cli {

int runSummaryCommand(const Args& args) {
    if (args.size() != 1 || args[0] == "--help" || args[0] == "-h") {
        std::fputs("Usage: probe summary DIR\n\n"
                   "Summarises an op-level dump: DIR is the --output directory, its atb_dump_data, or a\n"
                   "directory inside it. Exit code 0, 66 when there is no dump there.\n",
                   args.size() == 1 ? stdout : stderr);
        return args.size() == 1 ? kExitOk : kExitUsage;
    }
    auto root = analysis::findAtbDumpRoot(args[0]);
    if (!root) {
        std::fprintf(stderr, "probe summary: no atb_dump_data directory at or above %s\n", args[0].c_str());
        return kExitConfigUnreadable;
    }
    std::fputs(analysis::formatSummary(analysis::summarizeAtbDump(*root)).c_str(), stdout);
    return kExitOk;
}

}  // namespace probe::cli
