// SPDX-License-Identifier: GPL-3.0-or-later
#include "status_recorder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "dump_writer.h"
#include "probe/format/json_input.h"
#include "runtime.h"

namespace probe::runtime {
namespace {

std::string processCommandLine() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (auto& c : raw)
        if (c == '\0') c = ' ';
    while (!raw.empty() && raw.back() == ' ') raw.pop_back();
    return format::printableText(raw, std::string::npos);
}

// A message's kind: its first line up to a colon ("config rejected, the previous one stays in
// force"), at most 64 bytes.
std::string kindOf(const std::string& text) {
    return text.substr(0, std::min<size_t>({text.find_first_of(":\n"), text.size(), 64}));
}

std::string heldBackText(uint64_t held) {
    return std::to_string(held) + (held == 1 ? " message was" : " messages were") +
           " not said: more than " + std::to_string(StatusRecorder::kMessageBurst) +
           " of a kind came within " + std::to_string(StatusRecorder::kMessageWindow.count()) +
           " s";
}

}  // namespace

void StatusRecorder::begin(bool quiet) {
    startedAt_ = format::isoTimestampNow();
    command_ = processCommandLine();
    host_ = format::localHostName();
    pidNamespace_ = format::localPidNamespace();
    {
        std::lock_guard<std::mutex> lock(writeMutex_);
        finalWritten_ = false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    quiet_ = quiet;
    messages_.clear();
    errors_ = 0;
    windowStart_ = {};
    saidInWindow_ = 0;
    heldBack_ = 0;
    endedBy_.reset();
}

void StatusRecorder::info(const std::string& text) {
    say(format::MessageLevel::Info, text, false);
}

void StatusRecorder::record(format::MessageLevel level, const std::string& text) {
    say(level, text, true);
}

bool StatusRecorder::maySay(const std::string& text, uint64_t* held) {
    const auto now = std::chrono::steady_clock::now();
    *held = 0;
    if (now - windowStart_ >= kMessageWindow) {
        windowStart_ = now;
        saidInWindow_ = 0;
        saidOfKind_.clear();
        *held = heldBack_;
        heldBack_ = 0;
    }
    int& ofKind = saidOfKind_[kindOf(text)];
    if (saidInWindow_ >= kMessagesOfAllKinds || ofKind >= kMessageBurst) {
        ++heldBack_;
        return false;
    }
    ++saidInWindow_;
    ++ofKind;
    return true;
}

void StatusRecorder::say(format::MessageLevel level, const std::string& text, bool keep,
                         bool always) {
    uint64_t held = 0;
    bool mayBeSaid = always;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (level == format::MessageLevel::Error) ++errors_;
        if (!always) mayBeSaid = maySay(text, &held);
    }
    if (held > 0) say(format::MessageLevel::Warning, heldBackText(held), true, true);
    if (!mayBeSaid) return;
    if (level != format::MessageLevel::Info || !quiet_) {
        if (keep)
            std::fprintf(stderr, "[probe] %s: %s\n", format::toString(level), text.c_str());
        else
            std::fprintf(stderr, "[probe] %s\n", text.c_str());
    }
    if (keep) {
        std::lock_guard<std::mutex> lock(mutex_);
        messages_.push_back({level, text});
        if (messages_.size() > 20) messages_.erase(messages_.begin());
    }
    runtime_.notify([&](RuntimeListener& l) { l.message(level, text); });
}

void StatusRecorder::sayHeldBack() {
    uint64_t held = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        std::swap(held, heldBack_);
    }
    if (held > 0) say(format::MessageLevel::Warning, heldBackText(held), true, true);
}

void StatusRecorder::setEndedBy(const format::ProgramEnd& end) {
    std::lock_guard<std::mutex> lock(mutex_);
    endedBy_ = end;
}

uint64_t StatusRecorder::errorCount() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return errors_;
}

void StatusRecorder::write(format::DumpState state, bool final) {
    if (!runtime_.hasWriter()) return;
    std::lock_guard<std::mutex> order(writeMutex_);
    if (finalWritten_ && state == format::DumpState::Running) return;
    finalWritten_ = final && state != format::DumpState::Running;
    DumpWriter& writer = runtime_.writer();
    format::ProcessDumpStatus status;
    status.pid = runtime_.ownerPid();
    status.device = runtime_.device();
    status.state = state;
    status.command = command_;
    status.host = host_;
    status.pidNamespace = pidNamespace_;
    status.started = startedAt_;
    status.updated = format::isoTimestampNow();
    const auto counters = writer.counters();
    status.files = counters.files;
    status.bytes = counters.bytes;
    status.rows = counters.rows;
    status.droppedRows = counters.droppedJobs;
    status.dumpStopped = writer.diskStopped() ? writer.diskStoppedReason() : "";
    {
        std::lock_guard<std::mutex> lock(mutex_);
        status.errors = errors_ + counters.unreported;
        status.messages = messages_;
        status.endedBy = endedBy_;
    }
    // Drained to its end, but what it holds stopped early or lost writes: not complete.
    if (status.state == format::DumpState::Complete && status.lostSome())
        status.state = format::DumpState::Incomplete;
    const std::string& root = runtime_.root();
    if (int err = format::updateStatusFile(root, status))
        std::fprintf(stderr, "[probe] cannot write %s/probe_status.json: %s\n", root.c_str(),
                     std::strerror(err));
}

}  // namespace probe::runtime
