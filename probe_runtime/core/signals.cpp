// SPDX-License-Identifier: GPL-3.0-or-later
#include "signals.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace probe::runtime::signals {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM};
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

std::atomic<int> gWakeFd{-1};
int gDonePipe[2] = {-1, -1};  // created once; readable once a fatal drain is done
std::atomic<pid_t> gHousekeepingTid{0}, gWriterTid{0};
int gFatalWaitMs = 3000;
struct sigaction gPrevious[NSIG];
std::atomic<bool> gInstalled[NSIG];
// The program's one-shot (SA_RESETHAND) handler of a stop signal has run: its default action
// stands behind it now.
std::atomic<bool> gOneShotUsed[NSIG];

int64_t monotonicMs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void wake(int signal) {
    const int fd = gWakeFd.load(std::memory_order_acquire);
    if (fd < 0) return;
    const unsigned char byte = static_cast<unsigned char>(signal);
    while (::write(fd, &byte, 1) < 0 && errno == EINTR) {
    }
}

// Whether a disposition is a handler of the program's own (not the default, not ignored).
bool hasOwnHandler(const struct sigaction& action) {
    return (action.sa_flags & SA_SIGINFO) ||
           (action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN);
}

// A handler the program had before the probe's (Python's for SIGINT: KeyboardInterrupt) runs at
// once, as without the probe: the program decides what the signal means, and the probe goes on
// while it lives. It ran only after the probe had drained and stopped: the KeyboardInterrupt came
// tens of steps late, the results changed, and a program that went on was dumped no more. Only a
// signal that would end the program by default is the probe's to drain first.
void onStopSignal(int signal, siginfo_t* info, void* context) {
    const int saved = errno;
    const struct sigaction& previous = gPrevious[signal];
    // A one-shot handler (SA_RESETHAND: "press Ctrl-C again to force quit") runs once; the
    // next signal finds the default action behind it, as it would have (drained first).
    if (hasOwnHandler(previous) && !gOneShotUsed[signal].load(std::memory_order_acquire)) {
        if (previous.sa_flags & SA_RESETHAND)
            gOneShotUsed[signal].store(true, std::memory_order_release);
        if (previous.sa_flags & SA_SIGINFO)
            previous.sa_sigaction(signal, info, context);
        else
            previous.sa_handler(signal);
    } else {
        wake(signal);
    }
    errno = saved;
}

// Async-signal-safe throughout: no allocation, no lock, only system calls.
void onFatalSignal(int signal, siginfo_t* info, void*) {
    const int saved = errno;
    const pid_t self = currentThreadId();
    const bool canWait = gWakeFd.load(std::memory_order_acquire) >= 0 && gDonePipe[0] >= 0 &&
                         self != gHousekeepingTid.load(std::memory_order_acquire) &&
                         self != gWriterTid.load(std::memory_order_acquire);
    if (canWait) {
        wake(signal);
        const int64_t deadline = monotonicMs() + gFatalWaitMs;
        for (int64_t left = gFatalWaitMs; left > 0; left = deadline - monotonicMs()) {
            pollfd done{gDonePipe[0], POLLIN, 0};
            if (::poll(&done, 1, static_cast<int>(left)) > 0) break;
        }
    }
    // Die of it as the program would have: with the disposition it had before us. A fault
    // (si_code > 0) happens again when the handler returns; a signal sent is sent again.
    restore(signal);
    if (!info || info->si_code <= 0) ::raise(signal);
    errno = saved;
}

bool install(int signal, bool fatal) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) != 0) return false;
    const bool ignored = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN;
    const bool byDefault = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    // Ignored: the program asked for it (nohup, trap '' INT) and must not be stopped. A fatal
    // signal with a handler of the program's own is the program's business.
    if (ignored || (fatal && !byDefault)) return false;
    struct sigaction action {};
    sigemptyset(&action.sa_mask);
    if (fatal) {
        action.sa_sigaction = onFatalSignal;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    } else if (hasOwnHandler(current)) {
        // Chained to the program's handler: as that handler was installed, its system calls
        // interrupted or restarted alike (Python's has no SA_RESTART: a Ctrl-C during os.read()
        // or input() raises KeyboardInterrupt; restarted, it never came) and the same signals
        // held off while it runs.
        action.sa_sigaction = onStopSignal;
        action.sa_mask = current.sa_mask;
        action.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_NODEFER | SA_ONSTACK));
    } else {
        action.sa_sigaction = onStopSignal;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
    }
    gOneShotUsed[signal].store(false, std::memory_order_release);
    if (::sigaction(signal, &action, &gPrevious[signal]) != 0) return false;
    gInstalled[signal].store(true, std::memory_order_release);
    return true;
}

}  // namespace

pid_t currentThreadId() {
    return static_cast<pid_t>(::syscall(SYS_gettid));
}

bool isFatal(int signal) {
    for (int s : kFatalSignals)
        if (s == signal) return true;
    return false;
}

void install(int wakeFd, int fatalWaitMs) {
    if (gDonePipe[0] < 0 && ::pipe2(gDonePipe, O_CLOEXEC | O_NONBLOCK) != 0)
        gDonePipe[0] = gDonePipe[1] = -1;
    // A done byte left from an earlier session would let the next fatal signal go unwaited.
    unsigned char drained[16];
    while (gDonePipe[0] >= 0 && ::read(gDonePipe[0], drained, sizeof drained) > 0) {
    }
    gFatalWaitMs = fatalWaitMs;
    gWakeFd.store(wakeFd, std::memory_order_release);
    for (int s : kStopSignals)
        if (!gInstalled[s].load()) install(s, false);
    for (int s : kFatalSignals)
        if (!gInstalled[s].load()) install(s, true);
}

void restore(int signal) {
    if (signal <= 0 || signal >= NSIG || !gInstalled[signal].exchange(false)) return;
    if (gOneShotUsed[signal].load(std::memory_order_acquire)) {
        struct sigaction byDefault {};
        byDefault.sa_handler = SIG_DFL;
        sigemptyset(&byDefault.sa_mask);
        ::sigaction(signal, &byDefault, nullptr);
        return;
    }
    ::sigaction(signal, &gPrevious[signal], nullptr);
}

void uninstall() {
    gWakeFd.store(-1, std::memory_order_release);
    for (int s : kStopSignals) restore(s);
    for (int s : kFatalSignals) restore(s);
}

void setHousekeepingThread(pid_t tid) {
    gHousekeepingTid.store(tid, std::memory_order_release);
}

void setWriterThread(pid_t tid) {
    gWriterTid.store(tid, std::memory_order_release);
}

void fatalDrainDone() {
    const unsigned char byte = 1;
    if (gDonePipe[1] >= 0 && ::write(gDonePipe[1], &byte, 1) < 0) {
    }
}

}  // namespace probe::runtime::signals
