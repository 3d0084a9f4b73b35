// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/dump_status.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "probe/format/config_issue.h"
#include "probe/format/file_util.h"

namespace probe::format {

const char* const kStatusFileName = "probe_status.json";

nlohmann::ordered_json ProcessDumpStatus::toJson() const {
    nlohmann::ordered_json j;
    j["pid"] = pid;
    j["device"] = device;
    j["state"] = state;
    j["command"] = command;
    j["started"] = started;
    j["updated"] = updated;
    j["files"] = files;
    j["bytes"] = bytes;
    j["rows"] = rows;
    j["errors"] = errors;
    j["dropped_rows"] = droppedRows;
    j["dump_stopped"] = dumpStopped;
    j["messages"] = messages;
    return j;
}

ProcessDumpStatus ProcessDumpStatus::fromJson(const nlohmann::json& j) {
    ProcessDumpStatus s;
    s.pid = j.value("pid", int64_t{0});
    s.device = j.value("device", -1);
    s.state = j.value("state", std::string("running"));
    s.command = j.value("command", std::string());
    s.started = j.value("started", std::string());
    s.updated = j.value("updated", std::string());
    s.files = j.value("files", uint64_t{0});
    s.bytes = j.value("bytes", uint64_t{0});
    s.rows = j.value("rows", uint64_t{0});
    s.errors = j.value("errors", uint64_t{0});
    s.droppedRows = j.value("dropped_rows", uint64_t{0});
    s.dumpStopped = j.value("dump_stopped", std::string());
    if (auto it = j.find("messages"); it != j.end() && it->is_array())
        for (const auto& m : *it)
            if (m.is_string()) s.messages.push_back(m.get<std::string>());
    return s;
}

DumpStatus aggregateStatus(std::vector<ProcessDumpStatus> processes) {
    DumpStatus status;
    bool running = false, clean = true;
    for (const auto& p : processes) {
        status.files += p.files;
        status.bytes += p.bytes;
        status.rows += p.rows;
        status.errors += p.errors;
        running = running || p.state == "running";
        clean = clean && p.dumpStopped.empty() && p.errors == 0;
    }
    status.state = running ? "running" : (clean ? "complete" : "incomplete");
    std::sort(processes.begin(), processes.end(),
              [](const auto& a, const auto& b) { return a.pid < b.pid; });
    status.processes = std::move(processes);
    return status;
}

nlohmann::ordered_json DumpStatus::toJson() const {
    nlohmann::ordered_json j;
    j["state"] = state;
    j["files"] = files;
    j["bytes"] = bytes;
    j["rows"] = rows;
    j["errors"] = errors;
    auto list = nlohmann::ordered_json::array();
    for (const auto& p : processes) list.push_back(p.toJson());
    j["processes"] = std::move(list);
    return j;
}

std::optional<DumpStatus> DumpStatus::fromJson(const nlohmann::json& j, std::string* error) {
    if (!j.is_object()) {
        if (error) *error = "status is not a JSON object";
        return std::nullopt;
    }
    std::vector<ProcessDumpStatus> processes;
    if (auto it = j.find("processes"); it != j.end() && it->is_array())
        for (const auto& p : *it)
            if (p.is_object()) processes.push_back(ProcessDumpStatus::fromJson(p));
    return aggregateStatus(std::move(processes));
}

std::optional<DumpStatus> readStatusFile(const std::string& root, std::string* error) {
    auto text = readTextFile(joinPath(root, kStatusFileName), error);
    if (!text) return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded()) {
        if (error) *error = "probe_status.json is not valid JSON";
        return std::nullopt;
    }
    return DumpStatus::fromJson(j, error);
}

int updateStatusFile(const std::string& root, const ProcessDumpStatus& mine) {
    const std::string lockPath = joinPath(root, ".probe_status.lock");
    int lockFd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lockFd < 0) return errno;
    while (::flock(lockFd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            int error = errno;
            ::close(lockFd);
            return error;
        }
    }
    std::vector<ProcessDumpStatus> processes;
    if (auto existing = readStatusFile(root, nullptr))
        for (auto& p : existing->processes)
            if (p.pid != mine.pid) processes.push_back(std::move(p));
    processes.push_back(mine);
    const std::string text = aggregateStatus(std::move(processes)).toJson().dump(2) + "\n";
    int error = writeFileAtomically(joinPath(root, kStatusFileName), text);
    ::flock(lockFd, LOCK_UN);
    ::close(lockFd);
    return error;
}

std::string isoTimestampNow() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

}  // namespace probe::format
