// The states and message levels the runtime reports, typed once for the writer and every
// reader: probe_status.json, the control socket and the application use these names.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace probe::format {

// A dump's state in probe_status.json: being written, finished whole, or finished with
// something missing (dumping stopped early, write errors, a process that died without
// stopping its probe).
enum class DumpState { Running, Complete, Incomplete };

// The probe's own state inside a process (control socket "state" messages, the hello).
enum class ProbeState {
    Sleeping,  // started; nothing dumped now (dump_enable false, or not this device)
    Dumping,   // started and dumping
    Stopped,   // dumping stopped early (the disk), the program goes on
    Exiting,   // the probe is stopping (said once, before the socket closes)
};

enum class MessageLevel { Error, Warning, Info };

const char* toString(DumpState state);
const char* toString(ProbeState state);
const char* toString(MessageLevel level);
std::optional<DumpState> dumpStateFromString(std::string_view text);
std::optional<ProbeState> probeStateFromString(std::string_view text);
std::optional<MessageLevel> messageLevelFromString(std::string_view text);

// A message for people, kept with its level (never recovered from its wording).
struct StatusMessage {
    MessageLevel level = MessageLevel::Error;
    std::string text;
    bool operator==(const StatusMessage& o) const { return level == o.level && text == o.text; }
};

}  // namespace probe::format
