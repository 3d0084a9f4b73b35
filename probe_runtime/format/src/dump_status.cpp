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
#include "probe/format/json_input.h"

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
    j["interrupted_by"] = interruptedBy;
    j["messages"] = messages;
    return j;
}

namespace {

// A field of the expected type, or the fallback: a status file from another version (or a
// damaged one) must not stop a reader.
template <typename T>
T field(const nlohmann::json& j, const char* key, T fallback) {
    auto it = j.find(key);
    if (it == j.end()) return fallback;
    try {
        return it->get<T>();
    } catch (const nlohmann::json::exception&) {
        return fallback;
    }
}

}  // namespace

ProcessDumpStatus ProcessDumpStatus::fromJson(const nlohmann::json& j) {
    ProcessDumpStatus s;
    s.pid = field<int64_t>(j, "pid", 0);
    s.device = field<int>(j, "device", -1);
    s.state = field<std::string>(j, "state", "running");
    s.command = field<std::string>(j, "command", "");
    s.started = field<std::string>(j, "started", "");
    s.updated = field<std::string>(j, "updated", "");
    s.files = field<uint64_t>(j, "files", 0);
    s.bytes = field<uint64_t>(j, "bytes", 0);
    s.rows = field<uint64_t>(j, "rows", 0);
    s.errors = field<uint64_t>(j, "errors", 0);
    s.droppedRows = field<uint64_t>(j, "dropped_rows", 0);
    s.dumpStopped = field<std::string>(j, "dump_stopped", "");
    s.interruptedBy = field<std::string>(j, "interrupted_by", "");
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
    auto parsed = readJsonFile(joinPath(root, kStatusFileName), kSmallJsonLimits);
    if (!parsed.ok()) {
        if (error) *error = parsed.error.placeAndProblem();
        return std::nullopt;
    }
    return DumpStatus::fromJson(*parsed.value, error);
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
    const std::string text = dumpJson(aggregateStatus(std::move(processes)).toJson(), 2) + "\n";
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
