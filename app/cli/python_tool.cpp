// SPDX-License-Identifier: GPL-3.0-or-later
#include "python_tool.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "exit_codes.h"
#include "install_layout.h"

namespace probe::cli {

int execPythonTool(const char* command, const std::string& module, const Args& args) {
    std::string python;
    Args rest;
    bool passThrough = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (!passThrough && args[i] == "--") passThrough = true;
        if (!passThrough && args[i] == "--python") {
            if (i + 1 >= args.size()) {
                std::fprintf(stderr, "probe %s: --python needs an interpreter\n", command);
                return kExitUsage;
            }
            python = args[++i];
            continue;
        }
        rest.push_back(args[i]);
    }
    if (python.empty()) {
        const char* fromEnv = std::getenv("PROBE_PYTHON");
        if (fromEnv && *fromEnv)
            python = fromEnv;
        else
            python = ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    }
    const std::string packageDir = installLayout().pythonDir;
    const char* existing = std::getenv("PYTHONPATH");
    ::setenv("PYTHONPATH",
             (existing && *existing ? packageDir + ":" + existing : packageDir).c_str(), 1);
    ::setenv("PROBE_COMMAND_NAME", (std::string("probe ") + command).c_str(), 1);
    std::vector<std::string> argv = {python, "-m", "probe_studio." + module};
    argv.insert(argv.end(), rest.begin(), rest.end());
    std::vector<char*> pointers;
    for (auto& a : argv) pointers.push_back(a.data());
    pointers.push_back(nullptr);
    std::fflush(nullptr);
    ::execvp(pointers[0], pointers.data());
    std::fprintf(stderr,
                 "probe %s: cannot run the Python interpreter %s: %s\n"
                 "  It needs Python with torch (Debian: /usr/bin/python3 with python3-torch); name "
                 "another with\n"
                 "  --python PATH or PROBE_PYTHON.\n",
                 command, python.c_str(), std::strerror(errno));
    return kExitNoTorch;
}

}  // namespace probe::cli
