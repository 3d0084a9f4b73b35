// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/control_protocol.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace probe::format {

std::optional<std::string> controlSocketDirectory(bool create, std::string* error) {
    std::string dir;
    if (const char* explicitDir = std::getenv("PROBE_CONTROL_DIR"); explicitDir && *explicitDir) {
        dir = explicitDir;
    } else if (const char* runtimeDir = std::getenv("XDG_RUNTIME_DIR");
               runtimeDir && *runtimeDir && ::access(runtimeDir, W_OK) == 0) {
        dir = std::string(runtimeDir) + "/probe-studio";
    } else {
        dir = "/tmp/probe-studio-" + std::to_string(::getuid());
    }
    if (create && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        if (error) *error = "cannot create " + dir + ": " + std::strerror(errno);
        return std::nullopt;
    }
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0) {
        if (error) *error = dir + ": " + std::strerror(errno);
        return std::nullopt;
    }
    // Another user's directory (or a link planted in /tmp) must not carry our sockets.
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0) {
        if (error) *error = dir + " is not a private directory of this user (it must be mode 0700 and owned by uid " +
                            std::to_string(::getuid()) + ")";
        return std::nullopt;
    }
    return dir;
}

std::string controlSocketName(int64_t pid) { return "probe-" + std::to_string(pid) + ".sock"; }

std::vector<LiveProbe> listLiveProbes() {
    std::vector<LiveProbe> probes;
    auto dir = controlSocketDirectory(false, nullptr);
    if (!dir) return probes;
    DIR* d = ::opendir(dir->c_str());
    if (!d) return probes;
    while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("probe-", 0) != 0 || name.size() < 12 || name.substr(name.size() - 5) != ".sock") continue;
        char* end = nullptr;
        const long long pid = std::strtoll(name.c_str() + 6, &end, 10);
        if (pid <= 0 || std::string(end) != ".sock") continue;
        const std::string path = *dir + "/" + name;
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
            ::unlink(path.c_str());  // its process is gone
            continue;
        }
        probes.push_back({pid, path});
    }
    ::closedir(d);
    return probes;
}

}  // namespace probe::format
