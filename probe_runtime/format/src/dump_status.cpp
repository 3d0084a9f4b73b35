// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/dump_status.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <limits>
#include <type_traits>

#include "probe/format/config_issue.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::format {

const char* const kStatusFileName = "probe_status.json";
const char* const kInjectionLogName = "probe_injection.jsonl";

namespace {

const std::pair<int, const char*> kSignalNames[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};

const std::pair<ProgramEnd::How, const char*> kHowNames[] = {
    {ProgramEnd::How::Exited, "exited"},
    {ProgramEnd::How::Signaled, "signal"},
    {ProgramEnd::How::Vanished, "vanished"}};

int signalNumber(const std::string& name) {
    for (const auto& [number, n] : kSignalNames)
        if (name == n) return number;
    return 0;
}

// Whether `v` holds a T: a string, true or false, or a whole number within T's range (1e300 is
// no int: converting it was undefined).
template <typename T>
bool holds(const nlohmann::json& v) {
    if constexpr (std::is_same_v<T, std::string>) {
        return v.is_string();
    } else if constexpr (std::is_same_v<T, bool>) {
        return v.is_boolean();
    } else {
        static_assert(std::is_integral_v<T>);
        if (v.is_number_unsigned()) return v.get<uint64_t>() <= std::numeric_limits<T>::max();
        if (!v.is_number_integer()) return false;
        const int64_t n = v.get<int64_t>();
        return n >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
               (n < 0 || static_cast<uint64_t>(n) <= std::numeric_limits<T>::max());
    }
}

template <typename T>
const char* typeWanted() {
    if constexpr (std::is_same_v<T, std::string>)
        return "a string";
    else if constexpr (std::is_same_v<T, bool>)
        return "true or false";
    else if constexpr (std::is_unsigned_v<T>)
        return "a whole number from 0";
    else
        return "a whole number";
}

// A field of the expected type, or the fallback: a status file from another version (or a
// damaged one) must not stop a reader. A value of another type is said in `issues`.
template <typename T>
T field(const nlohmann::json& j, const char* key, T fallback,
        std::vector<std::string>* issues = nullptr, const std::string& where = "") {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (holds<T>(*it)) return it->get<T>();
    if (issues)
        issues->push_back(where + "." + key + ": " + jsonSnippet(*it) + " is not " +
                          typeWanted<T>() + "; read as none");
    return fallback;
}

// Messages were once bare strings, a warning's starting "warning: ".
std::optional<StatusMessage> messageFromJson(const nlohmann::json& m,
                                             std::vector<std::string>* issues,
                                             const std::string& where) {
    if (m.is_string()) {
        const std::string text = m.get<std::string>();
        if (text.rfind("warning: ", 0) == 0)
            return StatusMessage{MessageLevel::Warning, text.substr(9)};
        return StatusMessage{MessageLevel::Error, text};
    }
    if (!m.is_object()) {
        if (issues)
            issues->push_back(where + ": " + jsonSnippet(m) +
                              " is neither a string nor an object; skipped");
        return std::nullopt;
    }
    const auto level = messageLevelFromString(field<std::string>(m, "level", "", issues, where));
    return StatusMessage{level.value_or(MessageLevel::Error),
                         field<std::string>(m, "text", "", issues, where)};
}

// The descriptor of an open file, closed (and its lock released) however the scope is left.
struct Descriptor {
    int fd = -1;
    explicit Descriptor(int f) : fd(f) {}
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
};

int writeAll(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        done += static_cast<size_t>(n);
    }
    return 0;
}

// Writes `text` to <dir>/probe_status.json through a temporary created there, never following
// a link planted under either name.
int replaceStatusFile(int dirFd, const std::string& text) {
    static std::atomic<uint64_t> counter{0};
    const std::string temporary = std::string(".") + kStatusFileName + "." +
                                  std::to_string(::getpid()) + "." +
                                  std::to_string(counter.fetch_add(1)) + ".tmp";
    int error = 0;
    {
        Descriptor file(::openat(dirFd, temporary.c_str(),
                                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
        if (file.fd < 0) return errno;
        error = writeAll(file.fd, text);
        if (::close(file.fd) != 0 && !error) error = errno;
        file.fd = -1;
    }
    if (!error && ::renameat(dirFd, temporary.c_str(), dirFd, kStatusFileName) != 0) error = errno;
    if (error) ::unlinkat(dirFd, temporary.c_str(), 0);
    return error;
}

// The disk is full: no new file can be made, but the status file's own blocks can be written
// again (a status saying "running" for ever is worse than a torn read, which readers retry). The
// text goes in place, compact, padded with spaces to the old size (JSON allows trailing white
// space); the oldest messages are left out until it fits.
int overwriteInPlace(int dirFd, DumpStatus status) {
    Descriptor file(::openat(dirFd, kStatusFileName, O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
    if (file.fd < 0) return errno;
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) return errno;
    if (!S_ISREG(st.st_mode) || st.st_nlink != 1) return EPERM;
    const size_t size = static_cast<size_t>(st.st_size);
    const size_t room = std::max(size, static_cast<size_t>(st.st_blocks) * 512);
    while (true) {
        std::string text = dumpJson(status.toJson()) + "\n";
        if (text.size() <= room) {
            if (text.size() < size) text.append(size - text.size(), ' ');
            for (size_t done = 0; done < text.size();) {
                const ssize_t n = ::pwrite(file.fd, text.data() + done, text.size() - done,
                                           static_cast<off_t>(done));
                if (n < 0 && errno != EINTR) return errno;
                if (n > 0) done += static_cast<size_t>(n);
            }
            return 0;
        }
        auto most = std::max_element(
            status.processes.begin(), status.processes.end(),
            [](const auto& a, const auto& b) { return a.messages.size() < b.messages.size(); });
        if (most != status.processes.end() && !most->messages.empty()) {
            most->messages.erase(most->messages.begin());
            continue;
        }
        // Then the programs' command lines, which are for people: how they ended must fit.
        bool trimmed = false;
        for (auto& program : status.programs)
            if (!program.command.empty()) {
                program.command.clear();
                trimmed = true;
            }
        if (!trimmed) return ENOSPC;
    }
}

// Runs `change` on the processes and programs of <root>/probe_status.json under its lock and
// writes the result. Never throws; the lock goes with the descriptor whatever happens.
template <typename Change>
int changeStatusFile(const std::string& root, Change change) {
    Descriptor dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.fd < 0) return errno;
    Descriptor lock(
        ::openat(dir.fd, ".probe_status.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (lock.fd < 0) return errno;
    while (::flock(lock.fd, LOCK_EX) != 0)
        if (errno != EINTR) return errno;
    try {
        std::vector<ProcessDumpStatus> processes;
        std::vector<ProgramRecord> programs;
        if (auto existing = readStatusFile(root, nullptr)) {
            processes = std::move(existing->processes);
            programs = std::move(existing->programs);
        }
        if (int error = change(processes, programs)) return error;
        // Text that is not UTF-8 (a command line's bytes) is replaced, never a reason to fail.
        DumpStatus status = aggregateStatus(std::move(processes));
        status.programs = std::move(programs);
        const std::string text = dumpJson(status.toJson(), 2) + "\n";
        const int error = replaceStatusFile(dir.fd, text);
        if (error == ENOSPC || error == EDQUOT) return overwriteInPlace(dir.fd, std::move(status));
        return error;
    } catch (const std::bad_alloc&) {
        return ENOMEM;
    } catch (const std::exception&) {
        return EINVAL;
    }
}

bool processGone(int64_t pid) {
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string signalName(int signal) {
    for (const auto& [number, name] : kSignalNames)
        if (number == signal) return name;
    return "signal " + std::to_string(signal);
}

std::string describeProgramEnd(const ProgramEnd& end) {
    switch (end.how) {
        case ProgramEnd::How::Exited:
            return "exited with code " + std::to_string(end.code);
        case ProgramEnd::How::Signaled:
            return "killed by " + signalName(end.code);
        case ProgramEnd::How::Vanished:
            return "gone without stopping its probe (killed or crashed)";
    }
    return "";
}

nlohmann::ordered_json ProgramEnd::toJson() const {
    nlohmann::ordered_json j;
    for (const auto& [value, name] : kHowNames)
        if (value == how) j["how"] = name;
    j["code"] = code;
    if (how == How::Signaled) j["signal"] = signalName(code);
    j["seen_by"] = seenBy;
    return j;
}

std::optional<ProgramEnd> ProgramEnd::fromJson(const nlohmann::json& j,
                                               std::vector<std::string>* issues,
                                               const std::string& where) {
    if (j.is_null()) return std::nullopt;
    if (!j.is_object()) {
        if (issues) issues->push_back(where + ": " + jsonSnippet(j) + " is not an object");
        return std::nullopt;
    }
    const std::string how = field<std::string>(j, "how", "", issues, where);
    ProgramEnd end;
    bool known = false;
    for (const auto& [value, name] : kHowNames)
        if (how == name) {
            end.how = value;
            known = true;
        }
    if (!known) {
        if (issues && !how.empty())
            issues->push_back(where + ".how: \"" + how +
                              "\" is not one of \"exited\", \"signal\", \"vanished\"");
        return std::nullopt;
    }
    end.code = field<int>(j, "code", 0, issues, where);
    end.seenBy = field<std::string>(j, "seen_by", "", issues, where);
    return end;
}

nlohmann::ordered_json ProcessDumpStatus::toJson() const {
    nlohmann::ordered_json j;
    j["pid"] = pid;
    j["device"] = device;
    j["state"] = toString(state);
    j["command"] = command;
    if (!host.empty()) j["host"] = host;
    if (!pidNamespace.empty()) j["pid_namespace"] = pidNamespace;
    j["started"] = started;
    j["updated"] = updated;
    j["files"] = files;
    j["bytes"] = bytes;
    j["rows"] = rows;
    j["errors"] = errors;
    j["dropped_rows"] = droppedRows;
    j["dump_stopped"] = dumpStopped;
    j["ended_by"] = endedBy ? nlohmann::ordered_json(endedBy->toJson()) : nlohmann::ordered_json();
    j["cut_off"] = cutOff;
    auto list = nlohmann::ordered_json::array();
    for (const auto& m : messages) list.push_back({{"level", toString(m.level)}, {"text", m.text}});
    j["messages"] = std::move(list);
    return j;
}

ProcessDumpStatus ProcessDumpStatus::fromJson(const nlohmann::json& j,
                                              std::vector<std::string>* issues,
                                              const std::string& where) {
    ProcessDumpStatus s;
    s.pid = field<int64_t>(j, "pid", 0, issues, where);
    s.device = field<int>(j, "device", -1, issues, where);
    // A state not known is no "running" (a process gone long ago was shown running for ever):
    // incomplete, what can be said of a dump whose end is not recorded.
    const std::string state = field<std::string>(j, "state", "", issues, where);
    s.state = dumpStateFromString(state).value_or(DumpState::Incomplete);
    const auto given = j.find("state");
    if (issues && (given == j.end() || given->is_null()))
        issues->push_back(where + ".state: missing; read as incomplete");
    else if (issues && !state.empty() && !dumpStateFromString(state))
        issues->push_back(where + ".state: \"" + state +
                          "\" is not one of \"running\", \"complete\", \"incomplete\"; read as "
                          "incomplete");
    s.command = field<std::string>(j, "command", "", issues, where);
    s.host = field<std::string>(j, "host", "", issues, where);
    s.pidNamespace = field<std::string>(j, "pid_namespace", "", issues, where);
    s.started = field<std::string>(j, "started", "", issues, where);
    s.updated = field<std::string>(j, "updated", "", issues, where);
    s.files = field<uint64_t>(j, "files", 0, issues, where);
    s.bytes = field<uint64_t>(j, "bytes", 0, issues, where);
    s.rows = field<uint64_t>(j, "rows", 0, issues, where);
    s.errors = field<uint64_t>(j, "errors", 0, issues, where);
    s.droppedRows = field<uint64_t>(j, "dropped_rows", 0, issues, where);
    s.dumpStopped = field<std::string>(j, "dump_stopped", "", issues, where);
    if (auto it = j.find("ended_by"); it != j.end())
        s.endedBy = ProgramEnd::fromJson(*it, issues, where + ".ended_by");
    s.cutOff = field<bool>(j, "cut_off", false, issues, where);
    // Before ended_by: the signal that stopped the program, its probe having drained the dump.
    const std::string interruptedBy = field<std::string>(j, "interrupted_by", "");
    if (!s.endedBy && signalNumber(interruptedBy))
        s.endedBy = ProgramEnd{ProgramEnd::How::Signaled, signalNumber(interruptedBy), "the probe"};
    if (auto it = j.find("messages"); it != j.end() && it->is_array()) {
        for (size_t i = 0; i < it->size(); ++i) {
            const std::string at = where + ".messages[" + std::to_string(i) + "]";
            if (auto message = messageFromJson((*it)[i], issues, at);
                message && !message->text.empty())
                s.messages.push_back(std::move(*message));
        }
    } else if (issues && it != j.end() && !it->is_null()) {
        issues->push_back(where + ".messages: " + jsonSnippet(*it) + " is not a list");
    }
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
        running = running || p.state == DumpState::Running;
        clean = clean && p.state != DumpState::Incomplete && !p.lostSome();
    }
    status.state =
        running ? DumpState::Running : (clean ? DumpState::Complete : DumpState::Incomplete);
    std::sort(processes.begin(), processes.end(),
              [](const auto& a, const auto& b) { return a.pid < b.pid; });
    status.processes = std::move(processes);
    return status;
}

nlohmann::ordered_json DumpStatus::toJson() const {
    nlohmann::ordered_json j;
    j["state"] = toString(state);
    j["files"] = files;
    j["bytes"] = bytes;
    j["rows"] = rows;
    j["errors"] = errors;
    auto list = nlohmann::ordered_json::array();
    for (const auto& p : processes) list.push_back(p.toJson());
    j["processes"] = std::move(list);
    if (!programs.empty()) {
        auto ended = nlohmann::ordered_json::array();
        for (const auto& p : programs) ended.push_back(p.toJson());
        j["programs"] = std::move(ended);
    }
    return j;
}

nlohmann::ordered_json ProgramRecord::toJson() const {
    nlohmann::ordered_json j;
    j["pid"] = pid;
    j["command"] = command;
    if (!host.empty()) j["host"] = host;
    if (!pidNamespace.empty()) j["pid_namespace"] = pidNamespace;
    j["ended_by"] = endedBy.toJson();
    return j;
}

std::optional<ProgramRecord> ProgramRecord::fromJson(const nlohmann::json& j,
                                                     std::vector<std::string>* issues,
                                                     const std::string& where) {
    if (!j.is_object()) {
        if (issues) issues->push_back(where + ": " + jsonSnippet(j) + " is not an object; skipped");
        return std::nullopt;
    }
    ProgramRecord record;
    record.pid = field<int64_t>(j, "pid", 0, issues, where);
    record.command = field<std::string>(j, "command", "", issues, where);
    record.host = field<std::string>(j, "host", "", issues, where);
    record.pidNamespace = field<std::string>(j, "pid_namespace", "", issues, where);
    const auto ended = j.find("ended_by");
    auto end =
        ended == j.end() ? std::nullopt : ProgramEnd::fromJson(*ended, issues, where + ".ended_by");
    if (!end) {
        if (issues) issues->push_back(where + ": no ended_by; skipped");
        return std::nullopt;
    }
    record.endedBy = *end;
    return record;
}

std::optional<DumpStatus> DumpStatus::fromJson(const nlohmann::json& j, std::string* error) {
    if (!j.is_object()) {
        if (error) *error = "status is not a JSON object";
        return std::nullopt;
    }
    std::vector<ProcessDumpStatus> processes;
    std::vector<std::string> issues;
    if (auto it = j.find("processes"); it != j.end() && it->is_array()) {
        for (size_t i = 0; i < it->size(); ++i) {
            const std::string where = "processes[" + std::to_string(i) + "]";
            if ((*it)[i].is_object()) {
                auto process = ProcessDumpStatus::fromJson((*it)[i], &issues, where);
                if (process.pid > 0)
                    processes.push_back(std::move(process));
                else  // no process of the dump to tell of ("process (0): running")
                    issues.push_back(where + ": no pid; skipped");
            } else
                issues.push_back(where + ": " + jsonSnippet((*it)[i]) +
                                 " is not an object; skipped");
        }
    } else if (it != j.end()) {
        issues.push_back("processes: " + jsonSnippet(*it) + " is not a list");
    }
    std::vector<ProgramRecord> programs;
    if (auto it = j.find("programs"); it != j.end() && it->is_array()) {
        for (size_t i = 0; i < it->size(); ++i)
            if (auto program = ProgramRecord::fromJson((*it)[i], &issues,
                                                       "programs[" + std::to_string(i) + "]"))
                programs.push_back(std::move(*program));
    } else if (it != j.end() && !it->is_null()) {
        issues.push_back("programs: " + jsonSnippet(*it) + " is not a list");
    }
    // The totals and the state are made again from the processes: what the file says of them
    // is not read, but a value of the wrong type there is damage to say.
    if (auto it = j.find("state"); it != j.end() && !it->is_string())
        issues.push_back("state: " + jsonSnippet(*it) + " is not a string");
    for (const char* key : {"files", "bytes", "rows", "errors"})
        if (auto it = j.find(key); it != j.end() && !it->is_number_unsigned())
            issues.push_back(std::string(key) + ": " + jsonSnippet(*it) +
                             " is not a whole number from 0");
    // The first ten, and how many more: a file of thousands of bad values is said in a few lines.
    constexpr size_t kIssuesKept = 10;
    if (issues.size() > kIssuesKept) {
        const size_t more = issues.size() - kIssuesKept;
        issues.resize(kIssuesKept);
        issues.push_back("(" + std::to_string(more) + " more)");
    }
    if (processes.empty() && !issues.empty()) {  // no state to tell (it read as complete)
        // Every issue on a line of its own (one was said, "and 8 more" hidden).
        if (error) {
            *error = "no process in it can be read";
            for (const auto& issue : issues) *error += "\n" + issue;
        }
        return std::nullopt;
    }
    DumpStatus status = aggregateStatus(std::move(processes));
    status.programs = std::move(programs);
    status.issues = std::move(issues);
    return status;
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
    return changeStatusFile(
        root, [&](std::vector<ProcessDumpStatus>& processes, std::vector<ProgramRecord>&) {
            processes.erase(
                std::remove_if(processes.begin(), processes.end(),
                               [&](const ProcessDumpStatus& p) { return p.pid == mine.pid; }),
                processes.end());
            processes.push_back(mine);
            return 0;
        });
}

std::string processFolderName(int64_t device, int64_t pid) {
    return device >= 0 ? std::to_string(device) + "_" + std::to_string(pid) : std::to_string(pid);
}

std::string localHostName() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return {};
    return name;
}

std::string localPidNamespace() {
    char link[64] = {};
    const ssize_t n = ::readlink("/proc/self/ns/pid", link, sizeof link - 1);
    return n > 0 ? std::string(link, static_cast<size_t>(n)) : std::string();
}

namespace {

// Whether a process's pid means a process here: it ran on this machine, in this pid namespace
// (both asked once, when first needed). An entry naming neither (a status written before they
// were) counts as `unnamed` says.
class ThisPidSpace {
public:
    bool holds(const ProcessDumpStatus& p, bool unnamed) {
        if (p.host.empty() && p.pidNamespace.empty()) return unnamed;
        if (!asked_) {
            host_ = localHostName();
            pidNamespace_ = localPidNamespace();
            asked_ = true;
        }
        return p.host == host_ && p.pidNamespace == pidNamespace_;
    }

private:
    bool asked_ = false;
    std::string host_, pidNamespace_;
};

}  // namespace

bool settleVanishedProcesses(DumpStatus& status, const std::string& seenBy) {
    bool changed = false;
    ThisPidSpace here;
    for (auto& p : status.processes) {
        if (p.state != DumpState::Running || !here.holds(p, false) || !processGone(p.pid)) continue;
        p.state = DumpState::Incomplete;
        p.cutOff = true;
        if (!p.endedBy) p.endedBy = ProgramEnd{ProgramEnd::How::Vanished, 0, seenBy};
        changed = true;
    }
    if (changed) {  // the state and totals made again; what else was read is kept
        DumpStatus settled = aggregateStatus(std::move(status.processes));
        settled.programs = std::move(status.programs);
        settled.issues = std::move(status.issues);
        status = std::move(settled);
    }
    return changed;
}

int recordProgramEnd(const std::string& root, int64_t pid, const std::string& command,
                     const ProgramEnd& end) {
    if (!fileExists(joinPath(root, kStatusFileName))) return ENOENT;
    const std::string now = isoTimestampNow();
    return changeStatusFile(
        root, [&](std::vector<ProcessDumpStatus>& processes, std::vector<ProgramRecord>& programs) {
            programs.push_back({pid, command, localHostName(), localPidNamespace(), end});
            // A folder shared by several machines holds their processes too: a pid is ours only
            // if the entry is of this machine and pid namespace (or, written before they were
            // named, says nothing of them).
            ThisPidSpace here;
            for (auto& p : processes) {
                if (!here.holds(p, true)) continue;
                const bool theProgram = p.pid == pid;
                if (!theProgram && (p.state != DumpState::Running || !processGone(p.pid))) continue;
                p.endedBy = theProgram ? end : ProgramEnd{ProgramEnd::How::Vanished, 0, end.seenBy};
                if (p.state == DumpState::Running) {
                    // Its probe never drained: what was queued in its last moments is missing.
                    p.state = DumpState::Incomplete;
                    p.cutOff = true;
                    p.updated = now;
                }
            }
            return 0;
        });
}

std::string isoTimestampNow() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

std::vector<InjectionRecord> readInjectionLog(const std::string& root) {
    std::vector<InjectionRecord> records;
    const std::string path = root + "/" + kInjectionLogName;
    auto text = readTextFile(path, nullptr);
    if (!text) return records;
    size_t start = 0;
    while (start < text->size()) {
        size_t end = text->find('\n', start);
        if (end == std::string::npos) end = text->size();
        const std::string_view line(text->data() + start, end - start);
        start = end + 1;
        auto parsed = parseJson(line, path, kSmallJsonLimits);
        if (!parsed.ok() || !parsed.value->is_object()) continue;
        const auto& j = *parsed.value;
        InjectionRecord record;
        const auto pid = j.find("pid");
        const auto status = j.find("status");
        const auto message = j.find("message");
        if (pid == j.end() || !pid->is_number_integer() || status == j.end() ||
            !status->is_string())
            continue;
        record.pid = pid->get<int64_t>();
        record.status = status->get<std::string>();
        if (message != j.end() && message->is_string())
            record.message = message->get<std::string>();
        records.push_back(std::move(record));
    }
    return records;
}

}  // namespace probe::format
