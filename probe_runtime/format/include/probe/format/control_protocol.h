// The live control socket between a running probe and the application: where the sockets
// are. The messages are typed in control_messages.h and described in docs/control-protocol.md.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace probe::format {

// The per-user directory holding one socket per running probe: $PROBE_CONTROL_DIR, else
// $XDG_RUNTIME_DIR/probe-studio, else /tmp/probe-studio-<uid>. Created with mode 0700 when
// `create`; nullopt (with the reason in `error`) when it is missing, or not the user's own
// private directory (then nobody may trust the sockets in it).
std::optional<std::string> controlSocketDirectory(bool create, std::string* error);

// "probe-<pid>.sock"
std::string controlSocketName(int64_t pid);

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
