// Every message of the live control socket (docs/control-protocol.md), defined once for both
// ends: the probe's server (probe_runtime/core/control_server.cpp) and the application's client
// (ui/session/control_client.cpp). A struct per message; toLine writes one, parse*Message reads
// one through the guarded JSON entry point (json_input.h) and never throws.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "probe/format/states.h"

namespace probe::format::control {

// Bumped whenever a message changes incompatibly; each end refuses a peer of another version.
// 2: the probe rings `rows_written` instead of sending every row; the client says `hello`.
constexpr int kProtocolVersion = 2;

// Where a config came from.
enum class ConfigSource { File, Client };
const char* toString(ConfigSource source);
std::optional<ConfigSource> configSourceFromString(std::string_view text);

// --- probe to client -----------------------------------------------------------------------------

// The first message after connecting: who the probe is and what it does now.
struct Hello {
    int protocol = kProtocolVersion;
    std::string probeVersion;
    int64_t pid = 0;
    int64_t device = -1;  // -1: not known
    std::string command, outputDir, dumpRoot, configPath;
    nlohmann::json config = nlohmann::json::object();  // the op config in force, as in the file
    ProbeState state = ProbeState::Sleeping;
    std::string started;  // ISO 8601 UTC
};

// A layer-level op (all known ones right after the hello, then each as it is discovered).
struct Layer {
    std::string id, name, opType;
};

// A doorbell: rows were appended to statistic.csv files of round `round` since the last one
// (the file is the single source of truth; read it).
struct RowsWritten {
    int64_t round = 0;
    uint64_t rows = 0, bytes = 0;
};

struct StateChanged {
    ProbeState state = ProbeState::Sleeping;
    std::string reason;
};

// A config took effect; `request` is the client's set_config id when it asked (whatever JSON
// value it was), else null.
struct ConfigApplied {
    nlohmann::json config = nlohmann::json::object();
    ConfigSource source = ConfigSource::File;
    nlohmann::json request;
};

// A config was refused (every problem, one per line); the previous one stays.
struct ConfigRejected {
    std::string reason;
    ConfigSource source = ConfigSource::File;
    nlohmann::json request;  // as ConfigApplied's
};

// Something the runtime reported for people.
struct Notice {
    MessageLevel level = MessageLevel::Info;
    std::string text;
};

struct Pong {
    nlohmann::json id;  // the ping's id, whatever it was
};

// The probe will not serve this client (another protocol version); it closes the connection.
struct Refused {
    int protocol = kProtocolVersion;  // the probe's
    std::string reason;
};

using ProbeMessage = std::variant<Hello, Layer, RowsWritten, StateChanged, ConfigApplied,
                                  ConfigRejected, Notice, Pong, Refused>;

// --- client to probe -----------------------------------------------------------------------------

// The client's first message: the protocol it speaks.
struct ClientHello {
    int protocol = kProtocolVersion;
};

// Apply this op-level config; `config` is not an object when the client sent none or another
// kind of value (the probe rejects it with a reason). `id` is echoed as `request`, whatever it
// is (null: none).
struct SetConfig {
    nlohmann::json config;
    nlohmann::json id;
};

struct Ping {
    nlohmann::json id;  // echoed in the pong, whatever it is (null when absent)
};

using ClientMessage = std::variant<ClientHello, SetConfig, Ping>;

// --- reading and writing
// ---------------------------------------------------------------------------

// The message's "type": "hello", "rows_written", "set_config", ...
const char* typeName(const ProbeMessage& message);
const char* typeName(const ClientMessage& message);

nlohmann::json toJson(const ProbeMessage& message);
nlohmann::json toJson(const ClientMessage& message);
// One line of the protocol (JSON and "\n"); never throws (text that is not UTF-8 gets U+FFFD).
std::string toLine(const ProbeMessage& message);
std::string toLine(const ClientMessage& message);

// A line read and judged: the message; or none and no problem for a type this end does not
// know (a newer peer's: ignored, as the protocol says); or why the line is not a message, in
// words for people. Unknown keys are ignored; a known key holding the wrong kind of value is a
// problem; a missing one keeps its default.
template <typename Message>
struct Received {
    std::optional<Message> message;
    std::string problem;
    bool ignored() const { return !message && problem.empty(); }
};

// What the probe reads from a client (limits: kControlLineLimits; errors name "control socket").
Received<ClientMessage> parseClientMessage(std::string_view line);
// What the application reads from a probe (limits: kControlClientLineLimits).
Received<ProbeMessage> parseProbeMessage(std::string_view line);

}  // namespace probe::format::control
