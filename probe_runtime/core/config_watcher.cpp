// SPDX-License-Identifier: GPL-3.0-or-later
#include "config_watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "after_fork.h"
#include "probe/format/file_util.h"
#include "probe/format/thread_name.h"

namespace probe::runtime {
namespace {
constexpr int kPollIntervalMs = 100;  // polling fallback only
}

ConfigWatcher::ConfigWatcher(std::string path, std::function<void(Change)> onChange)
    : onChange_(std::move(onChange)) {
    setPath(std::move(path));
}

void ConfigWatcher::setPath(std::string path) {
    if (thread_.joinable()) return;
    path_ = std::move(path);
    const size_t slash = path_.rfind('/');
    directory_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash));
    fileName_ = slash == std::string::npos ? path_ : path_.substr(slash + 1);
    lastStamp_ = {};
    lastExists_ = false;
}

ConfigWatcher::~ConfigWatcher() {
    stop();
}

void ConfigWatcher::start() {
    if (thread_.joinable()) return;
    if (::pipe2(wakePipe_, O_CLOEXEC | O_NONBLOCK) != 0) wakePipe_[0] = wakePipe_[1] = -1;
    // PROBE_CONFIG_WATCH=poll forces the fallback (for file systems inotify does not see, e.g.
    // a config edited on another host of a network file system).
    const char* mode = std::getenv("PROBE_CONFIG_WATCH");
    const bool forcePolling = mode && std::strcmp(mode, "poll") == 0;
    inotifyFd_ = forcePolling ? -1 : ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotifyFd_ >= 0) {
        // Written in place (close after write) or replaced (rename onto it, the atomic way);
        // creating a regular file alone is ignored (the content arrives with the close), but a
        // directory, FIFO, device or link created in its place is reported at once.
        watchDescriptor_ = ::inotify_add_watch(
            inotifyFd_, directory_.c_str(),
            IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_CREATE);
        if (watchDescriptor_ < 0) {
            ::close(inotifyFd_);
            inotifyFd_ = -1;
        }
    }
    pollFileChanged();  // remember the current state for the polling fallback
    char resolved[PATH_MAX];
    realDirectory_ = ::realpath(directory_.c_str(), resolved) ? resolved : "";
    writeNoted_.store(false);
    stop_ = false;
    thread_ = std::thread([this] {
        format::nameThisThread("probe-config");
        run();
    });
}

void ConfigWatcher::stop() {
    if (!thread_.joinable()) return;
    stop_ = true;
    if (wakePipe_[1] >= 0) {
        char c = 1;
        if (::write(wakePipe_[1], &c, 1) < 0) {
        }
    }
    thread_.join();
    for (int* fd : {&inotifyFd_, &wakePipe_[0], &wakePipe_[1]}) {
        if (*fd >= 0) ::close(*fd);
        *fd = -1;
    }
}

void ConfigWatcher::abandonAfterFork() {
    forgetThreadAfterFork(thread_);
    for (int* fd : {&inotifyFd_, &wakePipe_[0], &wakePipe_[1]}) {
        if (*fd >= 0) ::close(*fd);
        *fd = -1;
    }
}

bool ConfigWatcher::changeWaiting() {
    // Order matters: the watcher raises busy_ before it reads the queue, so an event that is
    // no longer queued is either being handled (busy_) or already applied.
    int queued = 0;
    queueChecks_.fetch_add(1, std::memory_order_relaxed);
    if (::ioctl(inotifyFd_, FIONREAD, &queued) != 0) queued = 0;
    return queued != 0 || busy_.load(std::memory_order_seq_cst) != 0;
}

void ConfigWatcher::syncPending(int maxWaitMs) {
    if (inotifyFd_ < 0) return;
    if (!changeWaiting()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(maxWaitMs);
    idle_.wait_until(lock, deadline, [&] {
        int pending = 0;
        if (::ioctl(inotifyFd_, FIONREAD, &pending) != 0) pending = 0;
        return pending == 0 && busy_.load() == 0;
    });
}

void ConfigWatcher::syncAtBoundary(Clock::time_point& lastCheck, bool roundBegins,
                                   Clock::time_point now) {
    if (inotifyFd_ < 0) return;
    const bool noted = writeNoted_.load(std::memory_order_acquire);
    const bool roundAsks = roundBegins && (noted || askEveryRound_.load(std::memory_order_relaxed));
    // A write that ended before lastCheck was queued (or handled) when that check asked.
    if (!roundAsks && now - lastCheck < kBoundaryCheckInterval &&
        busy_.load(std::memory_order_seq_cst) == 0)
        return;
    lastCheck = now;
    lastAsked_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
    syncPending();
    if (noted) settleNotedWrite(now);
}

bool ConfigWatcher::boundaryMayBeCounted(Clock::time_point now) {
    if (askEveryRound_.load(std::memory_order_relaxed) || writeNoted()) return false;
    if (inotifyFd_ < 0) return true;  // polling: boundaries never ask
    if (busy_.load(std::memory_order_seq_cst) != 0) return false;
    const Clock::rep ticks = now.time_since_epoch().count();
    if (ticks - lastAsked_.load(std::memory_order_relaxed) <
        std::chrono::duration_cast<Clock::duration>(kBoundaryCheckInterval).count())
        return true;
    if (changeWaiting()) return false;
    lastAsked_.store(ticks, std::memory_order_relaxed);
    return true;
}

bool ConfigWatcher::noteWrite(const char* path, Clock::time_point now) {
    if (!path || inotifyFd_ < 0) return false;  // polling: no queue to ask
    const char* slash = std::strrchr(path, '/');
    if (fileName_ != (slash ? slash + 1 : path)) return false;
    // The same name in another folder (a model's own config.json) is not the config.
    if (!realDirectory_.empty()) {
        const std::string directory =
            slash ? (slash == path ? std::string("/") : std::string(path, slash)) : ".";
        char resolved[PATH_MAX];
        if (::realpath(directory.c_str(), resolved) && realDirectory_ != resolved) return false;
    }
    std::lock_guard<std::mutex> lock(notedMutex_);
    handledAtNote_ = handled_.load();
    notedAt_ = now;
    writeNoted_.store(true, std::memory_order_release);
    return true;
}

void ConfigWatcher::settleNotedWrite(Clock::time_point now) {
    // Called after syncPending(): a change handled since the note was the noted write's (it was
    // noted before it was made). A note whose change never came (the write failed) lapses.
    std::lock_guard<std::mutex> lock(notedMutex_);
    if (handled_.load() != handledAtNote_ || now - notedAt_ >= kSuspicionLifetime)
        writeNoted_.store(false, std::memory_order_release);
}

void ConfigWatcher::run() {
    while (!stop_) {
        pollfd fds[2];
        int count = 0;
        if (inotifyFd_ >= 0) fds[count++] = {inotifyFd_, POLLIN, 0};
        if (wakePipe_[0] >= 0) fds[count++] = {wakePipe_[0], POLLIN, 0};
        const int timeout = inotifyFd_ >= 0 ? -1 : kPollIntervalMs;
        int ready = ::poll(fds, static_cast<nfds_t>(count), timeout);
        if (stop_) break;
        if (ready < 0 && errno != EINTR) {
            ::usleep(kPollIntervalMs * 1000);
            continue;
        }
        if (inotifyFd_ >= 0) {
            busy_.store(1, std::memory_order_seq_cst);
            handleInotifyEvents();
            busy_.store(0, std::memory_order_seq_cst);
            { std::lock_guard<std::mutex> lock(mutex_); }
            idle_.notify_all();
        } else if (pollFileChanged()) {
            notify(lastExists_ ? Change::Written : Change::Removed);
        }
    }
}

bool ConfigWatcher::handleInotifyEvents() {
    alignas(inotify_event) char buffer[16384];
    bool written = false, removed = false;
    while (true) {
        ssize_t n = ::read(inotifyFd_, buffer, sizeof buffer);
        if (n <= 0) break;
        for (char* p = buffer; p < buffer + n;) {
            auto* event = reinterpret_cast<inotify_event*>(p);
            p += sizeof(inotify_event) + event->len;
            if (event->len == 0 || fileName_ != event->name) continue;
            if (event->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) {
                written = true;
                removed = false;
            } else if (event->mask & IN_CREATE) {
                if (somethingElseInPlace()) {
                    written = true;
                    removed = false;
                }
            } else if (event->mask & (IN_DELETE | IN_MOVED_FROM)) {
                removed = true;
            }
        }
    }
    // Removed, then something else made in its place (rm; mkdir): that is what is there now.
    if (removed && somethingElseInPlace()) {
        removed = false;
        written = true;
    }
    if (written)
        notify(Change::Written);
    else if (removed)
        notify(Change::Removed);
    if (written || removed) handled_.fetch_add(1);
    return written || removed;
}

void ConfigWatcher::notify(Change change) {
    // The handler reports its own errors; nothing it throws may end the model's process.
    try {
        onChange_(change);
    } catch (...) {
    }
}

bool ConfigWatcher::somethingElseInPlace() const {
    // A link counts even when it leads to a regular file: its content is there already.
    struct stat st;
    return ::lstat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

bool ConfigWatcher::pollFileChanged() {
    const auto stamp = format::fileStamp(path_);
    const bool exists = stamp.has_value();
    const bool changed = exists != lastExists_ || (exists && *stamp != lastStamp_);
    lastExists_ = exists;
    if (stamp) lastStamp_ = *stamp;
    return changed;
}

}  // namespace probe::runtime
