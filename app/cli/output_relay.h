// The program's standard output and error, relayed by `probe run --relay-output`: the program
// writes into pipes of probe run's, which passes what comes to its own standard output and
// error. The application launches models so: when it goes away (closed, killed, crashed) the
// program meets no closed pipe (Python's print raised BrokenPipeError and a training run of
// hours ended with code 1); what it writes from then on goes into a log file instead. A process
// the program started that outlives it keeps a relay of its own.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <sys/types.h>

#include <string>

namespace probe::cli {

class OutputRelay {
public:
    // `logPath`: where the output goes once our own standard output or error fails.
    explicit OutputRelay(std::string logPath);
    ~OutputRelay();
    OutputRelay(const OutputRelay&) = delete;
    OutputRelay& operator=(const OutputRelay&) = delete;

    // Makes the pipes; false (with errno's text in `error`) when it cannot.
    bool open(std::string* error);
    // In the child, before exec: its standard output and error are the pipes.
    void becomeChildOutput();
    // Relays until the child `pid` has ended and what it wrote is passed on (a grandchild that
    // still holds the pipes is not waited for past a moment); its wait status in `status`.
    void relayUntilExit(pid_t pid, int* status);
    // Whether some output went into the log file (a reader went away), and where that is.
    bool loggedToFile() const { return logFd_ >= 0; }
    const std::string& logPath() const { return logPath_; }

private:
    // Passes `size` bytes read from the child's stream `stream` (1 or 2) on.
    void pass(int stream, const char* data, size_t size);
    // One read of the pipe of stream `i` (0 output, 1 error), passed on.
    enum class Read { Data, Nothing, Closed };
    Read readOnce(int i);
    // Waits up to `timeoutMs` (-1: without end) for output, and passes on what came.
    void pump(int timeoutMs);
    bool openLog();
    void handOverToDrainer();

    std::string logPath_;
    int pipes_[2][2] = {{-1, -1}, {-1, -1}};  // [stdout, stderr][read, write]
    bool open_[2] = {false, false};
    bool failed_[2] = {false, false};  // our standard output / error could not be written
    int logFd_ = -1;
};

}  // namespace probe::cli
