// Watches the config file from its own thread (inotify on the file's directory, polling when
// inotify is unavailable) so that ops never touch the file system. A change is picked up at
// a layer-level op boundary: syncAtBoundary() lets that boundary wait the few microseconds the
// watcher needs when an event is already queued.
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

    // syncPending() at a layer-level op boundary. Asking the kernel's queue is a system call:
    // about 0.2 us on bare metal, but 3-4 us on a virtual machine, where it also leaves the
    // model's thread about 20 us slower after it, and a small model begins a round every hundred
    // microseconds. So a boundary asks only:
    // - at a round's first boundary (`roundBegins`), unless the program reports its own writes of
    //   the file (askEveryRound(false), noteWrite()): then only while such a write is noted and
    //   its change not yet handled;
    // - at any boundary kBoundaryCheckInterval or more after this thread's `lastCheck`;
    // - while the watcher is handling a change.
    // So a change written before a round begins (by this program, or by any other when every
    // round asks) is always applied at its first layer-level op, and any change at the latest at
    // a layer-level op beginning an interval after the write; in between it is applied as soon as
    // the watcher has handled it (microseconds, while the model runs on).
    static constexpr std::chrono::microseconds kBoundaryCheckInterval{5000};
    using Clock = std::chrono::steady_clock;
    void syncAtBoundary(Clock::time_point& lastCheck, bool roundBegins,
                        Clock::time_point now = Clock::now());
    // Whether every round's first boundary asks (the default), or only rounds that begin while a
    // write of the file by this program is noted.
    void askEveryRound(bool every) { askEveryRound_.store(every, std::memory_order_relaxed); }
    // Whether a layer-level op boundary beginning `now` may be counted rather than begun
    // (Runtime::countingOnly): no change of the file can be waiting for it. Not while rounds ask
    // (every one, or while the program's own write of it is noted) or the watcher is handling a
    // change. When no boundary of any thread has asked for kBoundaryCheckInterval, it asks the
    // kernel's queue itself, as syncAtBoundary would: with nothing queued the interval starts
    // again and counting will do; with a change queued the boundary must be begun, and its
    // syncAtBoundary applies the change there (its thread's last check is at least as old).
    // Beginning the rest of the model's call to ask instead cost a sleeping probe 5,300
    // instructions a small MLP's step under callgrind (where every step outlasts the interval).
    bool boundaryMayBeCounted(Clock::time_point now = Clock::now());
    // The program is about to write, replace or remove `path`: when that is the watched file
    // (its name, in the watched directory), rounds ask the kernel until the watcher has handled
    // a change of it, or for kSuspicionLifetime when none comes (the write failed). Returns
    // whether it was the watched file.
    bool noteWrite(const char* path, Clock::time_point now = Clock::now());
    static constexpr std::chrono::seconds kSuspicionLifetime{1};
    bool writeNoted() const { return writeNoted_.load(std::memory_order_acquire); }
    // How many times the kernel's queue was asked (for tests).
    uint64_t queueChecks() const { return queueChecks_.load(std::memory_order_relaxed); }

    void abandonAfterFork();

private:
    void run();
    bool handleInotifyEvents();  // true when an event concerned our file
    // Whether a change is queued in the kernel or being handled: asks the kernel (inotify only).
    bool changeWaiting();
    bool pollFileChanged();
    void notify(Change change);
    bool somethingElseInPlace() const;  // not a regular file where the config should be
    void settleNotedWrite(Clock::time_point now);

    std::string path_, directory_, fileName_;
    std::string realDirectory_;  // directory_ with links resolved ("" when it cannot be)
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

    // Writes the program reported (noteWrite): the fast path reads writeNoted_ alone.
    std::atomic<bool> askEveryRound_{true};
    std::atomic<bool> writeNoted_{false};
    // When a boundary last asked the kernel (syncAtBoundary), any thread's: Clock ticks.
    std::atomic<Clock::rep> lastAsked_{0};
    std::mutex notedMutex_;
    uint64_t handledAtNote_ = 0;  // handled_ when the last write was noted
    Clock::time_point notedAt_{};

    // Polling fallback state.
    format::FileStamp lastStamp_;
    bool lastExists_ = false;
};

}  // namespace probe::runtime
