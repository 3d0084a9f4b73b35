// The live control socket between a running probe and the application: where the sockets
// are, and the protocol's version. The messages are described in docs/control-protocol.md.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probe::format {

// Bumped whenever a message changes incompatibly. A client refuses a hello of another major.
constexpr int kControlProtocolVersion = 1;

// The per-user directory holding one socket per running probe: $PROBE_CONTROL_DIR, else
// $XDG_RUNTIME_DIR/probe-studio, else /tmp/probe-studio-<uid>. Created with mode 0700 when
// `create`; nullopt (with the reason in `error`) when it is missing, or not the user's own
// private directory (then nobody may trust the sockets in it).
std::optional<std::string> controlSocketDirectory(bool create, std::string* error);

// "probe-<pid>.sock"
std::string controlSocketName(int64_t pid);

// One line a client sent to the probe, judged: what it asks, or why it is refused. Never throws,
// whatever the line holds (json_input.h limits: kControlLineLimits).
struct ControlRequest {
    enum class Kind { Ping, SetConfig, Ignored, Invalid };
    Kind kind = Kind::Invalid;
    nlohmann::json id;                     // ping: echoed whatever it is (null when absent)
    int64_t request = -1;                  // set_config: its integer id, -1 when it has none
    std::optional<nlohmann::json> config;  // set_config: the config object, nullopt when missing
    std::string problem;                   // Invalid: why, for an error message back
};
ControlRequest parseControlRequest(std::string_view line);

struct LiveProbe {
    int64_t pid = 0;
    std::string socketPath;
};

// The probes whose processes are alive, with their sockets: those in $PROBE_CONTROL_DIR when
// it is set, else those in both default directories (a probe started without XDG_RUNTIME_DIR,
// from a terminal or a batch job, is listed by an application that has it). Sockets of
// processes that are gone are removed.
std::vector<LiveProbe> listLiveProbes();

}  // namespace probe::format
