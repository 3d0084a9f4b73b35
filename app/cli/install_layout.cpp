// SPDX-License-Identifier: GPL-3.0-or-later
#include "install_layout.h"

#include <unistd.h>

#include <climits>

namespace probe::cli {

InstallLayout installLayout() {
    char buffer[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
    std::string exe =
        n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string("/usr/bin/probe");
    // <prefix>/bin/probe
    std::string bin = exe.substr(0, exe.rfind('/'));
    InstallLayout layout;
    layout.prefix = bin.substr(0, bin.rfind('/'));
    layout.libDir = layout.prefix + "/lib";
    layout.dataDir = layout.prefix + "/share/probe-studio";
    layout.pythonDir = layout.libDir + "/python3/dist-packages";
    layout.injectDir = layout.pythonDir + "/probe_studio/_inject";
    return layout;
}

}  // namespace probe::cli
