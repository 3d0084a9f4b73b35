// Watches the config file from its own thread (inotify on the file's directory, polling when
// inotify is unavailable) so that ops never touch the file system. A change is picked up at
// the next layer-level op boundary: syncAtBoundary() lets that boundary wait the few
// microseconds the watcher needs when an event is already queued.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "probe/format/file_util.h"

namespace probe::runtime {

class ConfigWatcher {
public:
    enum class Change { Written, Removed };
    // `onChange` runs on the watcher thread whenever the file was written, replaced or removed.
    // Something other than a regular file put in its place (a directory, a FIFO) counts as
    // Written: reading it is what says what it is (format::readRegularFile never blocks).
    ConfigWatcher(std::string path, std::function<void(Change)> onChange);
    ~ConfigWatcher();
    ConfigWatcher(const ConfigWatcher&) = delete;
    ConfigWatcher& operator=(const ConfigWatcher&) = delete;

    // Watches another file from the next start() on (only while stopped).
    void setPath(std::string path);
    void start();
    void stop();
    bool usesInotify() const { return inotifyFd_ >= 0; }

    // If a change of the file is queued or being handled, wait (at most `maxWaitMs`) until
    // the watcher has applied it. One ioctl and an atomic load when nothing is pending.
    void syncPending(int maxWaitMs = 500);

    // syncPending() at a layer-level op boundary. The kernel's queue is asked at a round's first
    // boundary (`roundBegins`) and otherwise at most once per kBoundaryCheckInterval for each
    // `lastCheck` (one per thread): that ioctl is a system call, about 0.2 us on bare metal but
    // 3-4 us on a virtual machine, and a small model begins a layer-level op every few
    // microseconds. So a change written before a round's first layer-level op, or at least that
    // interval before any other, is always applied there; one written since the last check is
    // applied as soon as the watcher has handled it (microseconds, while the model runs on). A
    // change being handled is waited for.
    static constexpr std::chrono::microseconds kBoundaryCheckInterval{1000};
    using Clock = std::chrono::steady_clock;
    void syncAtBoundary(Clock::time_point& lastCheck, bool roundBegins,
                        Clock::time_point now = Clock::now());
    // How many times the kernel's queue was asked (for tests).
    uint64_t queueChecks() const { return queueChecks_.load(std::memory_order_relaxed); }

    void abandonAfterFork();

private:
    void run();
    bool handleInotifyEvents();  // true when an event concerned our file
    bool pollFileChanged();
    void notify(Change change);
    bool somethingElseInPlace() const;  // not a regular file where the config should be

    std::string path_, directory_, fileName_;
    std::function<void(Change)> onChange_;
    int inotifyFd_ = -1;
    int watchDescriptor_ = -1;
    int wakePipe_[2] = {-1, -1};
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> busy_{0};
    std::atomic<uint64_t> handled_{0};
    std::atomic<uint64_t> queueChecks_{0};
    std::mutex mutex_;
    std::condition_variable idle_;

    // Polling fallback state.
    format::FileStamp lastStamp_;
    bool lastExists_ = false;
};

}  // namespace probe::runtime
