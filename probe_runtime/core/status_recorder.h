// What the runtime says to people: messages on stderr, to a live client, and kept in
// probe_status.json with the counters of what was written and how the program ended.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "probe/format/dump_status.h"
#include "probe/format/states.h"

namespace probe::runtime {

class Runtime;

class StatusRecorder {
public:
    explicit StatusRecorder(Runtime& runtime) : runtime_(runtime) {}

    // A new session: no messages yet; who this process is, for the status file.
    void begin(bool quiet);
    const std::string& startedAt() const { return startedAt_; }
    const std::string& command() const { return command_; }

    // Said on stderr (unless quiet) and to a live client; not kept.
    void info(const std::string& text);
    // Said so, and kept in the status's messages.
    void note(const std::string& text) { record(format::MessageLevel::Info, text); }
    // Errors are the dump's own (files not written: the status counts them, and a dump with
    // errors is incomplete); warnings are said and kept in the status's messages without making
    // the dump incomplete (a config refused while the previous one dumped on).
    void error(const std::string& text) { record(format::MessageLevel::Error, text); }
    void warning(const std::string& text) { record(format::MessageLevel::Warning, text); }

    // How the program ended, as the probe saw it (a signal it handled).
    void setEndedBy(const format::ProgramEnd& end);
    uint64_t errorCount() const;

    // Merges this process's entry into <root>/probe_status.json. Once a final state is written
    // (complete, incomplete), a late "running" from the housekeeping thread is not, unless it
    // was written as not `final` (before an exec, which may fail).
    void write(format::DumpState state, bool final = true);

    // At most kMessageBurst messages of a kind (their first line's words before a colon) are
    // said (on stderr and to live clients) in any kMessageWindow, and kMessagesOfAllKinds in
    // all; beyond them a program rewriting its config in a loop flooded its own stderr (2000
    // bad rewrites, 1200 warnings), and a flood of one kind no longer hides another (the good
    // config's "config applied" after the bad ones). Those held back are counted and said in
    // one line with the next message after the window, or at the end. Errors are counted all
    // the same.
    static constexpr int kMessageBurst = 20;
    static constexpr int kMessagesOfAllKinds = 100;
    static constexpr std::chrono::seconds kMessageWindow{10};
    // The count of messages held back, said now if any (the dump's end).
    void sayHeldBack();

private:
    void record(format::MessageLevel level, const std::string& text);
    // Whether a message may be said now (counts it held back if not), under mutex_; `held` is
    // set to the count to say first, from a window that ended.
    bool maySay(const std::string& text, uint64_t* held);
    // Says `text` (stderr, live clients) and, when `keep`, keeps it in the status's messages;
    // within the limit unless `always`.
    void say(format::MessageLevel level, const std::string& text, bool keep, bool always = false);

    Runtime& runtime_;
    mutable std::mutex mutex_;
    std::vector<format::StatusMessage> messages_;
    uint64_t errors_ = 0;
    std::optional<format::ProgramEnd> endedBy_;
    std::string startedAt_, command_, host_, pidNamespace_;
    bool quiet_ = false;
    std::chrono::steady_clock::time_point windowStart_{};
    int saidInWindow_ = 0;
    std::map<std::string, int> saidOfKind_;  // in this window
    uint64_t heldBack_ = 0;
    std::mutex writeMutex_;  // one status write at a time, in order
    bool finalWritten_ = false;
};

}  // namespace probe::runtime
