// What a command line runs when it starts a Python interpreter: the script, the module (-m), code
// (-c) or standard input, as the interpreter takes them from its arguments. Read by `probe run`
// (does the script exist?) and the app's launch form alike (the run's folder is named after it).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace probe::format {

// python, python3, python3.11: a name that runs a Python script given after it.
bool isPythonName(std::string_view name);

struct PythonTarget {
    enum class Kind { None, Script, Module, Code, StandardInput };
    Kind kind = Kind::None;
    std::string name;  // the script's path as given, or the module's name
};
// What the Python command line `command` (command[0] the interpreter) runs.
PythonTarget pythonTarget(const std::vector<std::string>& command);

// The name a run of `command` goes by, for a folder named after it: the script's file name
// without its extension (python3 -u train.py: "train"), the module of `python -m` (-m
// torch.utils.collect_env: "torch.utils.collect_env"), else the program's file name without its
// extension; "" for an empty command.
std::string runName(const std::vector<std::string>& command);

}  // namespace probe::format
