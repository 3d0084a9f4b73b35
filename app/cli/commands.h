// Subcommands of the probe command line tool.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>
#include <vector>

namespace probe::cli {

using Args = std::vector<std::string>;

int runConfigCommand(const Args& args);
int runRunCommand(const Args& args);
int runSummaryCommand(const Args& args);
int runCompareCommand(const Args& args);
int runOverflowCommand(const Args& args);
int runGradsCommand(const Args& args);
int runReplayCommand(const Args& args);
int runBisectCommand(const Args& args);

}  // namespace probe::cli
