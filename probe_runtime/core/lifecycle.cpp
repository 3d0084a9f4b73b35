// The runtime's lifecycle: start and stop, the housekeeping thread (status file, signals), the
// probe's state (sleeping, dumping, stopped), and what happens at exit, at a signal and in a
// forked child.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "after_fork.h"
#include "config_watcher.h"
#include "control_server.h"
#include "dump_writer.h"
#include "op_names.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"
#include "probe/format/thread_name.h"
#include "runtime.h"
#include "signals.h"

namespace probe::runtime {
namespace {

// A whole number from the environment, digits only, at most `max`; anything else is said
// (appended to `problem`) and the default used, so that every setting is read by one rule: "-5"
// megabytes was read as 2^64 - 5 MB, and the dump stopped at once for want of 18 EB free.
uint64_t envNumber(const char* name, uint64_t fallback, uint64_t max, const char* unit,
                   std::string& problem) {
    const char* value = std::getenv(name);
    if (!value || !*value) return fallback;
    uint64_t number = 0;
    bool ok = true;
    for (const char* c = value; *c && ok; ++c) {
        ok = *c >= '0' && *c <= '9' && number <= max;
        number = number * 10 + static_cast<uint64_t>(*c - '0');
    }
    if (ok && number <= max) return number;
    problem += std::string(problem.empty() ? "" : "; ") + name + "=" +
               format::printableText(value, 40) + " is not a number of " + unit + " (0 to " +
               std::to_string(max) + "): the default " + std::to_string(fallback) + " is used";
    return fallback;
}

uint64_t envMegabytes(const char* name, uint64_t fallbackMb, std::string& problem) {
    constexpr uint64_t kMaxMb = (uint64_t{1} << 44) - 1;  // in bytes, short of 2^64
    return envNumber(name, fallbackMb, kMaxMb, "megabytes", problem) << 20;
}

std::string processName() {
    std::ifstream in("/proc/self/comm");
    std::string name;
    std::getline(in, name);
    return name.empty() ? "model" : sanitizeName(name.c_str());
}

// Rows pending in the op threads are handed to the writer this often, and the writer writes
// what it holds at least every 20 ms: a row reaches its file within about 70 ms, so a program
// killed outright (kill -9) loses about its last 100 ms of rows (more when the disk is slower
// than the program: what is queued, up to the memory cap).
constexpr int kRowFlushPeriodMs = 50;
constexpr int kStatusPeriodMs = 1000;

void childAfterFork() {
    Runtime::instance().afterForkInChild();
}

void stopAtExit() {
    try {
        Runtime::instance().stop();
    } catch (...) {
    }
}

// When this process started, in seconds since the epoch (0 when /proc does not say).
std::time_t processStartTime() {
    std::ifstream self("/proc/self/stat");
    std::string line;
    std::getline(self, line);
    const size_t commandEnd = line.rfind(')');  // the command may hold spaces and parentheses
    if (commandEnd == std::string::npos) return 0;
    std::istringstream fields(line.substr(commandEnd + 1));
    std::string field;
    for (int i = 3; i < 22; ++i) fields >> field;  // up to field 22, its start in clock ticks
    unsigned long long ticks = 0;
    if (!(fields >> ticks)) return 0;
    std::ifstream system("/proc/stat");
    for (std::string name; system >> name;) {
        if (name != "btime") {
            std::getline(system, line);
            continue;
        }
        long long bootTime = 0;
        const long ticksPerSecond = ::sysconf(_SC_CLK_TCK);
        if (!(system >> bootTime) || ticksPerSecond <= 0) return 0;
        return static_cast<std::time_t>(bootTime + static_cast<long long>(ticks / ticksPerSecond));
    }
    return 0;
}

// An entry of probe_status.json with this process's pid that an earlier process wrote: its pid
// was used again (a container's pids start over at each run), and with `probe run --append` both
// processes' rows go to the same folder and read as one process. Said, so that it is not silent.
std::string earlierProcessWithMyPid(const std::string& root, int64_t pid) {
    std::string error;
    const auto status = format::readStatusFile(root, &error);
    if (!status) return {};
    const std::time_t started = processStartTime();
    for (const auto& p : status->processes) {
        std::tm tm{};
        if (p.pid != pid || !::strptime(p.started.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) continue;
        // (Whole seconds on both sides: an entry of the second this process began is its own.)
        if (started == 0 || ::timegm(&tm) >= started) continue;
        return "this dump already holds a process " + std::to_string(pid) + " (\"" +
               format::printableText(p.command) + "\", started " +
               format::printableText(p.started) +
               "): an earlier program whose pid was used again (as in a container). Its rows and "
               "this one's go to the same folder and read as one process; give each run its own "
               "output folder to keep them apart";
    }
    return {};
}

}  // namespace

int Runtime::start(const char* outputDir, const char* configPath) {
    std::lock_guard<std::mutex> lifecycle(lifecycleMutex_);
    if (started_.load()) return 0;

    std::string out = outputDir && *outputDir ? outputDir : "";
    if (out.empty()) {
        const char* env = std::getenv("PROBE_OUTPUT_DIR");
        out = env && *env ? env : ".";
    }
    std::string cfg = configPath && *configPath ? configPath : "";
    if (cfg.empty()) {
        const char* env = std::getenv("PROBE_CONFIG");
        cfg = env && *env ? env : "";
    }
    outputDir_ = format::absolutePath(out);
    root_ = format::joinPath(outputDir_, "atb_dump_data");
    configPath_ = cfg.empty() ? std::string() : format::absolutePath(cfg);
    const char* record = std::getenv("PROBE_CONFIG_RECORD");
    configRecordPath_ = record && *record ? format::absolutePath(record) : std::string();
    if (configRecordPath_ == configPath_) configRecordPath_.clear();
    const char* quiet = std::getenv("PROBE_QUIET");

    ownerPid_ = ::getpid();
    status_.begin(quiet && *quiet && std::strcmp(quiet, "0") != 0);
    ops_.layers().reset();
    overflow_.reset();
    models_.reset(processName());

    WriterOptions options;
    options.root = root_;
    std::string environmentProblems;
    options.memoryCapBytes = envMegabytes("PROBE_MEMORY_CAP_MB", 512, environmentProblems);
    options.minFreeBytes = envMegabytes("PROBE_MIN_FREE_MB", 256, environmentProblems);
    options.rowsWritten = [this](int64_t round, uint64_t rows, uint64_t bytes) {
        notify([&](RuntimeListener& l) { l.rowsWritten(round, rows, bytes); });
    };
    // One writer, watcher and control server for the process, reused by every start: an op
    // racing a stop on another thread may still hold a pointer to them.
    if (!writer_) {
        writer_ = new DumpWriter(options, [this](const std::string& text) {
            status_.error(text);
            recomputeAwake();
        });
    } else {
        writer_->reset(options);
    }
    if (int err = writer_->start()) {
        setLastError(
            err == ELOOP
                ? root_ +
                      " is a symbolic link: the probe writes only into a folder of its own "
                      "(give the link's target as the output directory instead)"
                : "cannot create the output directory " + root_ + ": " + std::strerror(err));
        return -4;
    }

    config_.startWith(configPath_);
    if (!configPath_.empty()) {
        if (!watcher_) {
            watcher_ = new ConfigWatcher(configPath_, [this](ConfigWatcher::Change change) {
                config_.onFileChanged(configPath_, change == ConfigWatcher::Change::Removed);
            });
            watcher_->askEveryRound(!ownConfigWritesReported_.load());
        } else {
            watcher_->setPath(configPath_);
        }
        watcher_->start();
        watching_ = true;
    } else {
        watching_ = false;
    }

    // Housekeeping: status file once a second, and signals.
    if (::pipe2(housekeepingPipe_, O_CLOEXEC | O_NONBLOCK) != 0)
        housekeepingPipe_[0] = housekeepingPipe_[1] = -1;
    housekeepingStop_ = false;
    housekeepingThread_ = new std::thread([this] {
        format::nameThisThread("probe-status");
        housekeepingLoop();
    });

    const char* handleSignals = std::getenv("PROBE_SIGNALS");
    if (!(handleSignals && std::strcmp(handleSignals, "0") == 0) && housekeepingPipe_[1] >= 0)
        signals::install(housekeepingPipe_[1],
                         static_cast<int>(envNumber("PROBE_FATAL_DRAIN_MS", 3000, 60000,
                                                    "milliseconds", environmentProblems)));
    if (!environmentProblems.empty()) status_.warning(environmentProblems);
    static std::once_flag processHooks;
    std::call_once(processHooks, [] {
        pthread_atfork(nullptr, nullptr, childAfterFork);
        std::atexit(stopAtExit);
    });

    // The live control socket, for the application to attach to.
    controlling_ = false;
    const char* control = std::getenv("PROBE_CONTROL");
    if (!(control && std::strcmp(control, "0") == 0)) {
        if (!control_) control_ = new ControlServer(*this);
        const std::string problem = control_->start();
        if (problem.empty()) {
            controlling_ = true;
            setListener(control_);
        } else {
            status_.info("no live control socket (" + problem + "); the dump is written as usual");
        }
    }

    const std::string reused = earlierProcessWithMyPid(root_, ownerPid_);
    if (!reused.empty()) status_.warning(reused);

    epoch_.fetch_add(1);
    started_.store(true, std::memory_order_release);
    recomputeAwake();
    status_.write(format::DumpState::Running);
    return 0;
}

int Runtime::stop() {
    return stopRuntime(/*fromHousekeeping=*/false);
}

int Runtime::beforeExec(const char* program) {
    // A forked child (os.fork, then exec: a common pattern) has no writer thread, and the lock
    // may have been held by a parent's thread at the fork: it looks at nothing. (ownerPid_ is
    // set before started_, and never changes while started.)
    if (!started_.load(std::memory_order_acquire) || ::getpid() != ownerPid_) return 0;
    std::lock_guard<std::mutex> lifecycle(lifecycleMutex_);
    if (!started_.load()) return 0;  // stopped meanwhile
    capture_.flushAllRows();
    writer_->drain();
    status_.note("the program called exec(" + format::printableText(program ? program : "") +
                 "): what its probe had queued was written out first");
    // What it wrote is whole. Not final: if the exec fails and more rows come, the housekeeping
    // thread writes "running" again.
    status_.write(format::DumpState::Complete, /*final=*/false);
    return 0;
}

int Runtime::stopRuntime(bool fromHousekeeping) {
    std::thread* housekeeping = nullptr;
    {
        std::lock_guard<std::mutex> lifecycle(lifecycleMutex_);
        if (!started_.load()) return 0;
        if (::getpid() != ownerPid_) return 0;  // a forked child never owns the parent's dump
        started_.store(false, std::memory_order_release);
        signals::uninstall();
        recomputeAwake();
        // Ops still running may be inside the watcher (at a layer boundary): it is switched off
        // first, and stopped once none is.
        if (watching_.exchange(false)) {
            quiesce();
            watcher_->stop();
        }
        capture_.flushAllRows();
        // Drains what is queued; ops still running get their enqueue refused from here on, and
        // no write is left half done (a temporary file) when the process ends right after.
        writer_->stop();
        status_.sayHeldBack();
        status_.write(format::DumpState::Complete);
        if (controlling_) {
            setListener(nullptr);
            quiesce();
            control_->stop();
        }
        housekeepingStop_ = true;
        housekeeping = static_cast<std::thread*>(housekeepingThread_);
        housekeepingThread_ = nullptr;
    }
    // Outside the lock: the housekeeping thread may itself be waiting for it (a signal arrived
    // while this thread was stopping).
    if (housekeeping && housekeeping->joinable()) {
        if (fromHousekeeping) {
            housekeeping->detach();  // this very thread: it ends when the signal is handled
        } else {
            if (housekeepingPipe_[1] >= 0) {
                unsigned char zero = 0;
                if (::write(housekeepingPipe_[1], &zero, 1) < 0) {
                }
            }
            housekeeping->join();
        }
    }
    delete housekeeping;
    return 0;
}

void Runtime::afterForkInChild() {
    // Only this thread exists in the child. The parent's dump belongs to the parent: the child
    // runs unprobed (its threads are gone), and never joins or drains anything.
    started_.store(false);
    awake_.store(false);
    stateGeneration_.fetch_add(1);
    if (writer_) writer_->abandonAfterFork();
    if (watcher_) watcher_->abandonAfterFork();
    if (control_) {
        listener_.store(nullptr);
        control_->abandonAfterFork();
    }
    auto* housekeeping = static_cast<std::thread*>(housekeepingThread_);
    forgetThreadAfterFork(housekeeping);  // that thread is the parent's
    housekeepingThread_ = nullptr;
    signals::uninstall();
}

void Runtime::housekeepingLoop() {
    signals::setHousekeepingThread(signals::currentThreadId());
    uint64_t lastWritten = ~0ull;
    auto lastStatus = std::chrono::steady_clock::now();
    while (!housekeepingStop_.load()) {
        pollfd fd{housekeepingPipe_[0], POLLIN, 0};
        int ready = ::poll(&fd, housekeepingPipe_[0] >= 0 ? 1 : 0, kRowFlushPeriodMs);
        if (ready > 0) {
            unsigned char byte = 0;
            while (::read(housekeepingPipe_[0], &byte, 1) == 1)
                if (byte != 0 && !housekeepingStop_.load()) handleSignal(byte);
        }
        if (housekeepingStop_.load()) break;
        capture_.flushAllRows();
        const auto now = std::chrono::steady_clock::now();
        if (now - lastStatus < std::chrono::milliseconds(kStatusPeriodMs)) continue;
        lastStatus = now;
        const auto c = writer_->counters();
        const uint64_t fingerprint =
            c.files * 1000003 + c.rows * 31 + c.errors + status_.errorCount();
        if (fingerprint != lastWritten) {
            lastWritten = fingerprint;
            status_.write(format::DumpState::Running);
        }
    }
}

void Runtime::handleSignal(int signal) {
    if (signals::isFatal(signal)) {
        drainForFatalSignal(signal);
        return;
    }
    const std::string name = format::signalName(signal);
    status_.info("received " + name + ": writing out what is queued, then stopping the probe");
    // The dump is whole, but the program did not run to its end: the status says so.
    status_.setEndedBy({format::ProgramEnd::How::Signaled, signal, "the probe"});
    stopRuntime(/*fromHousekeeping=*/true);
    // Hand the signal on: stopping gave it back the disposition it had before us (never
    // ignored: a signal the program ignores is not handled by the probe at all).
    ::kill(::getpid(), signal);
}

void Runtime::drainForFatalSignal(int signal) {
    // The program dies as soon as this is done (or the handler's wait runs out): what is
    // queued goes to disk, and the status says the program did not end well. The thread that
    // crashed may hold a row batch's lock: its rows are skipped rather than waited for.
    std::fprintf(stderr,
                 "[probe] the program received %s: writing out what is queued before it ends\n",
                 format::signalName(signal).c_str());
    capture_.flushAllRows(/*skipBusy=*/true);
    writer_->drain();
    status_.setEndedBy({format::ProgramEnd::How::Signaled, signal, "the probe"});
    status_.write(format::DumpState::Incomplete);
    signals::fatalDrainDone();
}

void Runtime::recomputeAwake() {
    bool awake = false;
    if (started_.load() && writer_ && !writer_->diskStopped()) {
        auto snapshot = currentConfig();
        awake = snapshot && snapshot->config.dumpEnable &&
                snapshot->config.acceptsDevice(device_.load());
    }
    if (awake_.exchange(awake) != awake) {
        stateGeneration_.fetch_add(1, std::memory_order_acq_rel);
        notify([&](RuntimeListener& l) {
            std::string reason;
            if (awake)
                reason = "dump_enable is true";
            else if (writer_ && writer_->diskStopped())
                reason = writer_->diskStoppedReason();
            else if (!started_.load())
                reason = "the probe stopped";
            else
                reason = "dump_enable is false, or this device is not selected";
            l.stateChanged(probeState(), reason);
        });
    }
}

format::ProbeState Runtime::probeState() const {
    if (awake_.load()) return format::ProbeState::Dumping;
    if (writer_ && writer_->diskStopped()) return format::ProbeState::Stopped;
    return format::ProbeState::Sleeping;
}

}  // namespace probe::runtime
