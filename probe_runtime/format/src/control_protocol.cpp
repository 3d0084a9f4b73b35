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

namespace {

std::string defaultDirectory(bool inRuntimeDir) {
    if (inRuntimeDir) {
        const char* runtimeDir = std::getenv("XDG_RUNTIME_DIR");
        if (!runtimeDir || !*runtimeDir || ::access(runtimeDir, W_OK) != 0) return {};
        return std::string(runtimeDir) + "/probe-studio";
    }
    return "/tmp/probe-studio-" + std::to_string(::getuid());
}

std::optional<std::string> privateDirectory(const std::string& dir, bool create,
                                            std::string* error) {
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
        if (error)
            *error =
                dir +
                " is not a private directory of this user (it must be mode 0700 and owned by uid " +
                std::to_string(::getuid()) + ")";
        return std::nullopt;
    }
    return dir;
}

// Adds the probes with a socket in `dir` whose processes are alive; removes the sockets of
// processes that are gone.
void addLiveProbes(const std::string& dir, std::vector<LiveProbe>& probes) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("probe-", 0) != 0 || name.size() < 12 ||
            name.substr(name.size() - 5) != ".sock")
            continue;
        char* end = nullptr;
        const long long pid = std::strtoll(name.c_str() + 6, &end, 10);
        if (pid <= 0 || std::string(end) != ".sock") continue;
        const std::string path = dir + "/" + name;
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
            ::unlink(path.c_str());  // its process is gone
            continue;
        }
        probes.push_back({pid, path});
    }
    ::closedir(d);
}

}  // namespace

std::optional<std::string> controlSocketDirectory(bool create, std::string* error) {
    std::string dir;
    if (const char* explicitDir = std::getenv("PROBE_CONTROL_DIR"); explicitDir && *explicitDir)
        dir = explicitDir;
    else
        dir = defaultDirectory(true);
    if (dir.empty()) dir = defaultDirectory(false);
    return privateDirectory(dir, create, error);
}

std::string controlSocketName(int64_t pid) {
    return "probe-" + std::to_string(pid) + ".sock";
}

std::vector<LiveProbe> listLiveProbes() {
    std::vector<LiveProbe> probes;
    // A probe started where XDG_RUNTIME_DIR was unset (a terminal, ssh, a batch job) has its
    // socket in /tmp, one started in a desktop session in the runtime directory: look in both,
    // unless a directory was named explicitly.
    std::vector<std::string> dirs;
    if (const char* explicitDir = std::getenv("PROBE_CONTROL_DIR"); explicitDir && *explicitDir) {
        dirs = {explicitDir};
    } else {
        for (bool inRuntimeDir : {true, false})
            if (std::string dir = defaultDirectory(inRuntimeDir); !dir.empty()) dirs.push_back(dir);
    }
    for (const std::string& dir : dirs)
        if (privateDirectory(dir, false, nullptr)) addLiveProbes(dir, probes);
    return probes;
}

}  // namespace probe::format
