// Commands implemented in the probe_studio Python package (replay, bisect): run in an
// interpreter that has torch, with the package found where `probe run` finds it.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

#include "commands.h"

namespace probe::cli {

// Replaces this process by `<python> -m probe_studio.<module> ARGS...`, the package's directory
// (installLayout().pythonDir) first on PYTHONPATH. The interpreter: `--python PATH` among the
// arguments before "--" (taken out), else $PROBE_PYTHON, else /usr/bin/python3 (Debian's torch),
// else python3 on PATH. Returns only when it cannot start it (69 with a message).
int execPythonTool(const char* command, const std::string& module, const Args& args);

}  // namespace probe::cli
