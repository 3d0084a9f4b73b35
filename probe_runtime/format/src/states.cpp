// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/states.h"

namespace probe::format {
namespace {

template <typename Enum, size_t N>
std::optional<Enum> fromName(std::string_view text,
                             const std::pair<Enum, const char*> (&names)[N]) {
    for (const auto& [value, name] : names)
        if (text == name) return value;
    return std::nullopt;
}

template <typename Enum, size_t N>
const char* toName(Enum value, const std::pair<Enum, const char*> (&names)[N]) {
    for (const auto& [v, name] : names)
        if (v == value) return name;
    return "?";
}

const std::pair<DumpState, const char*> kDumpStates[] = {{DumpState::Running, "running"},
                                                         {DumpState::Complete, "complete"},
                                                         {DumpState::Incomplete, "incomplete"}};
const std::pair<ProbeState, const char*> kProbeStates[] = {{ProbeState::Sleeping, "sleeping"},
                                                           {ProbeState::Dumping, "dumping"},
                                                           {ProbeState::Stopped, "stopped"},
                                                           {ProbeState::Exiting, "exiting"}};
const std::pair<MessageLevel, const char*> kLevels[] = {{MessageLevel::Error, "error"},
                                                        {MessageLevel::Warning, "warning"},
                                                        {MessageLevel::Info, "info"}};

}  // namespace

const char* toString(DumpState state) {
    return toName(state, kDumpStates);
}
const char* toString(ProbeState state) {
    return toName(state, kProbeStates);
}
const char* toString(MessageLevel level) {
    return toName(level, kLevels);
}
std::optional<DumpState> dumpStateFromString(std::string_view text) {
    return fromName(text, kDumpStates);
}
std::optional<ProbeState> probeStateFromString(std::string_view text) {
    return fromName(text, kProbeStates);
}
std::optional<MessageLevel> messageLevelFromString(std::string_view text) {
    return fromName(text, kLevels);
}

}  // namespace probe::format
