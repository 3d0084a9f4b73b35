// probe summary DIR: what a dump holds, and the first NaN/Inf.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>

#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "commands.h"
#include "exit_codes.h"

namespace probe::cli {

int runSummaryCommand(const Args& args) {
    if (args.size() != 1 || args[0] == "--help" || args[0] == "-h") {
        std::fputs("Usage: probe summary DIR\n\n"
                   "Summarises a dump of either layout: an op-level dump (the --output directory, its\n"
                   "atb_dump_data, or a directory inside it) or an msprobe dump (the dump_path, a step<N>\n"
                   "or a rank<R>/proc<pid> directory). Exit code 0, 66 when there is no dump there.\n",
                   args.size() == 1 ? stdout : stderr);
        return args.size() == 1 ? kExitOk : kExitUsage;
    }
    std::string error;
    auto index = analysis::readDump(args[0], &error);
    if (!index) {
        std::fprintf(stderr, "probe summary: %s\n", error.c_str());
        return kExitConfigUnreadable;
    }
    std::fputs(analysis::formatSummary(analysis::summarizeDump(*index)).c_str(), stdout);
    return kExitOk;
}

}  // namespace probe::cli
