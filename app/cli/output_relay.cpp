// SPDX-License-Identifier: GPL-3.0-or-later
#include "output_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace probe::cli {
namespace {

// How long what a grandchild holding the pipes writes is still relayed after the child ended.
constexpr int kDrainAfterExitMs = 300;

int64_t monotonicMs() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// Writes what it can of it: how many bytes, all of them unless the reader is gone (EPIPE).
size_t writeAll(int fd, const char* data, size_t size) {
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<size_t>(n);
    }
    return done;
}

}  // namespace

OutputRelay::OutputRelay(std::string logPath) : logPath_(std::move(logPath)) {}

OutputRelay::~OutputRelay() {
    for (auto& pipe : pipes_)
        for (int& fd : pipe)
            if (fd >= 0) ::close(fd);
    if (logFd_ >= 0) ::close(logFd_);
}

bool OutputRelay::open(std::string* error) {
    for (auto& pipe : pipes_) {
        if (::pipe2(pipe, O_CLOEXEC) != 0) {
            if (error) *error = std::strerror(errno);
            return false;
        }
    }
    return true;
}

void OutputRelay::becomeChildOutput() {
    // dup2 clears close-on-exec on the copies: the program keeps them, not the originals.
    ::dup2(pipes_[0][1], 1);
    ::dup2(pipes_[1][1], 2);
}

void OutputRelay::pass(int stream, const char* data, size_t size) {
    // Each stream on its own: standard error goes on to its reader while only standard output's
    // is gone. What a failed write left unwritten goes to the log, not what it wrote too.
    bool& failed = failed_[stream - 1];
    if (!failed) {
        const int saved = errno;
        const size_t written = writeAll(stream, data, size);
        const int why = errno;
        errno = saved;
        if (written == size) return;
        failed = true;
        data += written;
        size -= written;
        if (!openLog()) return;
        char when[64] = "";
        const std::time_t now = std::time(nullptr);
        std::tm local{};
        if (::localtime_r(&now, &local)) std::strftime(when, sizeof when, "%F %T", &local);
        char line[256];
        const int n = std::snprintf(line, sizeof line,
                                    "[probe run] %s: the program's standard %s could not be "
                                    "passed on (%s); what it writes there from then on follows\n",
                                    when, stream == 1 ? "output" : "error", std::strerror(why));
        writeAll(logFd_, line, static_cast<size_t>(n));
    }
    if (logFd_ >= 0) writeAll(logFd_, data, size);
}

bool OutputRelay::openLog() {
    if (logFd_ < 0)
        logFd_ = ::open(logPath_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return logFd_ >= 0;  // else dropped: nowhere to put it, the program goes on all the same
}

OutputRelay::Read OutputRelay::readOnce(int i) {
    char buffer[65536];
    const ssize_t n = ::read(pipes_[i][0], buffer, sizeof buffer);
    if (n > 0) {
        pass(i + 1, buffer, static_cast<size_t>(n));
        return Read::Data;
    }
    if (n < 0 && errno == EINTR) return Read::Data;  // (try again)
    if (n < 0 && errno == EAGAIN) return Read::Nothing;
    return Read::Closed;
}

void OutputRelay::pump(int timeoutMs) {
    pollfd fds[2];
    nfds_t count = 0;
    int which[2];
    for (int i = 0; i < 2; ++i)
        if (open_[i]) {
            fds[count] = {pipes_[i][0], POLLIN, 0};
            which[count++] = i;
        }
    if (count == 0 || ::poll(fds, count, timeoutMs) <= 0) return;
    // A few reads a stream, then the other and the child's end again: a program writing without
    // a pause would hold the loop.
    for (nfds_t k = 0; k < count; ++k) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        for (int reads = 0; reads < 16; ++reads) {
            const Read got = readOnce(which[k]);
            if (got == Read::Closed) open_[which[k]] = false;
            if (got != Read::Data) break;
        }
    }
}

void OutputRelay::relayUntilExit(pid_t pid, int* status) {
    // Our ends of the pipes' writing sides go: the child's copies alone keep them open.
    for (auto& pipe : pipes_) {
        ::close(pipe[1]);
        pipe[1] = -1;
        ::fcntl(pipe[0], F_SETFL, ::fcntl(pipe[0], F_GETFL) | O_NONBLOCK);
    }
    open_[0] = open_[1] = true;
    bool ended = false;
    int64_t deadline = 0;
    while (open_[0] || open_[1]) {
        if (!ended) {
            const pid_t done = ::waitpid(pid, status, WNOHANG);
            if (done == pid || (done < 0 && errno != EINTR)) {
                ended = true;
                deadline = monotonicMs() + kDrainAfterExitMs;
            }
        }
        if (ended && monotonicMs() >= deadline) break;
        // A short wait: the child's end is looked for between reads.
        pump(ended ? 50 : 200);
    }
    if (!ended)
        while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
        }
    if (open_[0] || open_[1]) handOverToDrainer();
}

void OutputRelay::handOverToDrainer() {
    // Something the program started still holds the pipes (`cmd &` in a wrapper script, a
    // daemon): closed now, its next write would end it (SIGPIPE). A process of our own relays on
    // until the last writer lets go, while probe run ends with the program.
    const pid_t drainer = ::fork();
    if (drainer != 0) return;  // (a failed fork: the pipes close with us, as before)
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(signal, SIG_DFL);
    while (open_[0] || open_[1]) pump(-1);
    ::_exit(0);
}

}  // namespace probe::cli
