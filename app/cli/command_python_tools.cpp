// probe replay and probe bisect: implemented in Python (they re-run torch ops and programs),
// started from here so that they find the package the way probe run does. SPDX-License-Identifier:
// GPL-3.0-or-later
#include "commands.h"
#include "python_tool.h"

namespace probe::cli {

int runReplayCommand(const Args& args) {
    return execPythonTool("replay", "replay", args);
}

int runBisectCommand(const Args& args) {
    return execPythonTool("bisect", "bisect", args);
}

}  // namespace probe::cli
