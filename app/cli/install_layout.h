// Where the installed pieces are, found from the running executable (relocatable prefix).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

namespace probe::cli {

struct InstallLayout {
    std::string prefix;     // <prefix>
    std::string libDir;     // <prefix>/lib
    std::string dataDir;    // <prefix>/share/probe-studio
    std::string pythonDir;  // <prefix>/lib/python3/dist-packages
    std::string injectDir;  // <pythonDir>/probe_studio/_inject
};

InstallLayout installLayout();

}  // namespace probe::cli
