// SPDX-License-Identifier: GPL-3.0-or-later
#include "runtime.h"

#include <thread>

#include "config_watcher.h"
#include "control_server.h"
#include "probe/format/dump_status.h"
#include "probe_config.h"

namespace probe::runtime {
namespace {
thread_local std::string tlsLastError;
}  // namespace

Runtime& Runtime::instance() {
    // Never destroyed: ops on other threads may still run during static destruction.
    static Runtime* runtime = new Runtime();
    return *runtime;
}

Runtime::Runtime() : config_(*this), status_(*this), ops_(*this), capture_(*this), models_(*this) {}

const char* Runtime::lastError() {
    return tlsLastError.c_str();
}

void Runtime::setLastError(std::string message) {
    tlsLastError = std::move(message);
}

format::control::Hello Runtime::describe() const {
    format::control::Hello hello;
    hello.probeVersion = PROBE_VERSION_STRING;
    hello.pid = ownerPid_;
    hello.device = device_.load();
    hello.command = status_.command();
    hello.outputDir = outputDir_;
    hello.dumpRoot = root_;
    hello.configPath = configPath_;
    hello.state = probeState();
    hello.started = status_.startedAt();
    return hello;
}

std::string Runtime::controlSocketPath() const {
    return controlling_ ? control_->socketPath() : std::string();
}

std::string Runtime::devicePid() const {
    return format::processFolderName(device_.load(std::memory_order_relaxed), ownerPid_);
}

std::string Runtime::infoDirectory(const char* kind) const {
    return root_ + "/info/" + kind + "/" + devicePid();
}

void Runtime::syncConfigFile(std::chrono::steady_clock::time_point& lastCheck, bool roundBegins) {
    const InFlight inFlight(inFlight_);
    if (watching_.load()) watcher_->syncAtBoundary(lastCheck, roundBegins);
}

uint64_t Runtime::countingOnly() const {
    if (!started_.load(std::memory_order_acquire) || awake_.load(std::memory_order_acquire))
        return 0;
    if (ops_.layers().explicitRounds()) return 0;
    if (watching_.load(std::memory_order_acquire) && !watcher_->boundaryMayBeCounted()) return 0;
    return epoch_.load(std::memory_order_relaxed);
}

void Runtime::reportOwnConfigWrites(bool reported) {
    const std::lock_guard<std::mutex> lock(lifecycleMutex_);
    ownConfigWritesReported_ = reported;
    if (watcher_) watcher_->askEveryRound(!reported);
}

void Runtime::noteFileWritten(const char* path) {
    const InFlight inFlight(inFlight_);
    if (watching_.load()) watcher_->noteWrite(path);
}

void Runtime::quiesce() {
    while (inFlight_.load() != 0) std::this_thread::yield();
}

int Runtime::setDevice(int device) {
    device_.store(device < 0 ? -1 : device);
    recomputeAwake();
    return 0;
}

}  // namespace probe::runtime
