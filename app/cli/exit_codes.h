// Exit codes of the probe command. A launched model's own exit code is passed through as is;
// these are the probe's own, chosen from sysexits.h so they do not collide with common ones.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace probe::cli {

enum ExitCode : int {
    kExitOk = 0,
    kExitFailure = 1,            // the check ran and found problems (config validate, compare)
    kExitUsage = 64,             // bad command line, e.g. no command to run
    kExitConfigInvalid = 65,     // the config file is not valid
    kExitConfigUnreadable = 66,  // the config file (or input) cannot be read
    kExitNoTorch = 69,           // the interpreter has no torch
    kExitInternal = 70,          // a bug: please report it
    kExitCannotCreate = 73,      // the output directory cannot be created or written
    kExitTorchMismatch = 76,     // the torch version differs from the one the adapter was built for
    kExitCommandNotFound = 127   // the command to run does not exist or is not executable
};

}  // namespace probe::cli
