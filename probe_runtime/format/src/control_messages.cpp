// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/control_messages.h"

#include "probe/format/config_issue.h"
#include "probe/format/json_input.h"

namespace probe::format::control {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
    using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

using Json = nlohmann::json;

// The known keys of one received message, each read into a field of its struct; the first key
// holding the wrong kind of value is the problem.
class Fields {
public:
    Fields(const Json& message, const std::string& type) : message_(message), type_(type) {}

    void read(const char* key, std::string& out) {
        readAs(key, "a string", &Json::is_string,
               [&](const Json& v) { out = v.get<std::string>(); });
    }
    void read(const char* key, int64_t& out) {
        readAs(key, "an integer", &Json::is_number_integer, [&](const Json& v) {
            if (const auto n = signedInteger(v))
                out = *n;
            else
                fail(key, "an integer below 2^63", v);
        });
    }
    void read(const char* key, int& out) {
        int64_t wide = out;
        read(key, wide);
        if (wide < INT32_MIN || wide > INT32_MAX)
            fail(key, "a small integer", message_.at(key));
        else
            out = static_cast<int>(wide);
    }
    void read(const char* key, uint64_t& out) {
        readAs(key, "an integer >= 0", &Json::is_number_unsigned,
               [&](const Json& v) { out = v.get<uint64_t>(); });
    }
    void readObject(const char* key, Json& out) {
        readAs(key, "an object", &Json::is_object, [&](const Json& v) { out = v; });
    }
    void readAny(const char* key, Json& out) {
        if (const auto it = message_.find(key); it != message_.end()) out = *it;
    }
    template <typename Enum>
    void read(const char* key, Enum& out, std::optional<Enum> (*fromString)(std::string_view),
              const char* accepted) {
        readAs(key, accepted, &Json::is_string, [&](const Json& v) {
            if (auto value = fromString(v.get_ref<const std::string&>()))
                out = *value;
            else
                fail(key, accepted, v);
        });
    }

    std::string problem;

private:
    template <typename Store>
    void readAs(const char* key, const char* kind, bool (Json::*is)() const noexcept, Store store) {
        const auto it = message_.find(key);
        if (it == message_.end() || !problem.empty()) return;
        if (((*it).*is)())
            store(*it);
        else
            fail(key, kind, *it);
    }
    void fail(const char* key, const char* kind, const Json& found) {
        if (problem.empty())
            problem = "a \"" + type_ + "\" message needs \"" + key + "\" to be " + kind +
                      "; found " + jsonSnippet(found);
    }

    const Json& message_;
    const std::string& type_;
};

void readSource(Fields& f, ConfigSource& source) {
    f.read("source", source, &configSourceFromString, "\"file\" or \"client\"");
}

Json withRequest(Json message, const Json& request) {
    if (!request.is_null()) message["request"] = request;
    return message;
}

// The message object of a line, or why there is none.
std::optional<Json> messageObject(std::string_view line, const char* source,
                                  const JsonLimits& limits, std::string& problem,
                                  std::string& type) {
    auto parsed = parseJson(line, source, limits);
    if (!parsed.ok()) {
        problem = "not a JSON object: " + parsed.error.toString();
        return std::nullopt;
    }
    if (!parsed.value->is_object()) {
        problem = std::string("not a JSON object: found ") + parsed.value->type_name();
        return std::nullopt;
    }
    const auto it = parsed.value->find("type");
    if (it == parsed.value->end() || !it->is_string()) {
        problem = "a message needs a string \"type\"; found " +
                  (it == parsed.value->end() ? std::string("none") : jsonSnippet(*it));
        return std::nullopt;
    }
    type = it->get<std::string>();
    return std::move(*parsed.value);
}

}  // namespace

const char* toString(ConfigSource source) {
    return source == ConfigSource::Client ? "client" : "file";
}

std::optional<ConfigSource> configSourceFromString(std::string_view text) {
    if (text == "file") return ConfigSource::File;
    if (text == "client") return ConfigSource::Client;
    return std::nullopt;
}

const char* typeName(const ProbeMessage& message) {
    static const char* const kNames[] = {"hello",   "layer",          "rows_written",
                                         "state",   "config_applied", "config_rejected",
                                         "message", "pong",           "refused"};
    static_assert(std::size(kNames) == std::variant_size_v<ProbeMessage>);
    return kNames[message.index()];
}

const char* typeName(const ClientMessage& message) {
    static const char* const kNames[] = {"hello", "set_config", "ping"};
    static_assert(std::size(kNames) == std::variant_size_v<ClientMessage>);
    return kNames[message.index()];
}

Json toJson(const ProbeMessage& message) {
    Json j =
        std::visit(Overloaded{
                       [](const Hello& m) -> Json {
                           return {{"protocol", m.protocol},
                                   {"probe_version", m.probeVersion},
                                   {"pid", m.pid},
                                   {"device", m.device},
                                   {"command", m.command},
                                   {"output_dir", m.outputDir},
                                   {"dump_root", m.dumpRoot},
                                   {"config_path", m.configPath},
                                   {"config", m.config},
                                   {"state", format::toString(m.state)},
                                   {"started", m.started}};
                       },
                       [](const Layer& m) -> Json {
                           return {{"id", m.id}, {"name", m.name}, {"op_type", m.opType}};
                       },
                       [](const RowsWritten& m) -> Json {
                           return {{"round", m.round}, {"rows", m.rows}, {"bytes", m.bytes}};
                       },
                       [](const StateChanged& m) -> Json {
                           return {{"state", format::toString(m.state)}, {"reason", m.reason}};
                       },
                       [](const ConfigApplied& m) -> Json {
                           return withRequest(
                               {{"config", m.config}, {"source", toString(m.source)}}, m.request);
                       },
                       [](const ConfigRejected& m) -> Json {
                           return withRequest(
                               {{"reason", m.reason}, {"source", toString(m.source)}}, m.request);
                       },
                       [](const Notice& m) -> Json {
                           return {{"level", format::toString(m.level)}, {"text", m.text}};
                       },
                       [](const Pong& m) -> Json {
                           return {{"id", m.id}};
                       },
                       [](const Refused& m) -> Json {
                           return {{"protocol", m.protocol}, {"reason", m.reason}};
                       },
                   },
                   message);
    j["type"] = typeName(message);
    return j;
}

Json toJson(const ClientMessage& message) {
    Json j = std::visit(Overloaded{
                            [](const ClientHello& m) -> Json {
                                return {{"protocol", m.protocol}};
                            },
                            [](const SetConfig& m) -> Json {
                                Json out{{"config", m.config}};
                                if (!m.id.is_null()) out["id"] = m.id;
                                return out;
                            },
                            [](const Ping& m) -> Json {
                                return {{"id", m.id}};
                            },
                        },
                        message);
    j["type"] = typeName(message);
    return j;
}

std::string toLine(const ProbeMessage& message) {
    return dumpJson(toJson(message)) + "\n";
}
std::string toLine(const ClientMessage& message) {
    return dumpJson(toJson(message)) + "\n";
}

Received<ClientMessage> parseClientMessage(std::string_view line) {
    Received<ClientMessage> received;
    std::string type;
    auto object = messageObject(line, "control socket", kControlLineLimits, received.problem, type);
    if (!object) return received;
    const Json& m = *object;
    if (type == "hello") {
        ClientHello hello;
        hello.protocol = 0;  // a hello that does not say its version speaks none we know
        Fields f(m, type);
        f.read("protocol", hello.protocol);
        if (!f.problem.empty())
            received.problem = f.problem;
        else
            received.message = hello;
    } else if (type == "set_config") {
        // The id is echoed whatever it is, as a ping's (a client's string ids went unanswered);
        // a config that is not an object is answered by config_rejected, not by an error message.
        SetConfig set;
        Fields(m, type).readAny("id", set.id);
        Fields(m, type).readAny("config", set.config);
        received.message = std::move(set);
    } else if (type == "ping") {
        Ping ping;
        Fields(m, type).readAny("id", ping.id);
        received.message = std::move(ping);
    }
    return received;
}

Received<ProbeMessage> parseProbeMessage(std::string_view line) {
    Received<ProbeMessage> received;
    std::string type;
    auto object = messageObject(line, "the probe's message", kControlClientLineLimits,
                                received.problem, type);
    if (!object) return received;
    const Json& m = *object;
    Fields f(m, type);
    constexpr const char* kStates = "\"sleeping\", \"dumping\", \"stopped\" or \"exiting\"";
    if (type == "hello") {
        Hello hello;
        hello.protocol = 0;  // a hello that does not say its version speaks none we know
        f.read("protocol", hello.protocol);
        f.read("probe_version", hello.probeVersion);
        f.read("pid", hello.pid);
        f.read("device", hello.device);
        f.read("command", hello.command);
        f.read("output_dir", hello.outputDir);
        f.read("dump_root", hello.dumpRoot);
        f.read("config_path", hello.configPath);
        f.readObject("config", hello.config);
        f.read("state", hello.state, &probeStateFromString, kStates);
        f.read("started", hello.started);
        received.message = std::move(hello);
    } else if (type == "layer") {
        Layer layer;
        f.read("id", layer.id);
        f.read("name", layer.name);
        f.read("op_type", layer.opType);
        received.message = std::move(layer);
    } else if (type == "rows_written") {
        RowsWritten rows;
        f.read("round", rows.round);
        f.read("rows", rows.rows);
        f.read("bytes", rows.bytes);
        received.message = rows;
    } else if (type == "state") {
        StateChanged state;
        f.read("state", state.state, &probeStateFromString, kStates);
        f.read("reason", state.reason);
        received.message = std::move(state);
    } else if (type == "config_applied") {
        ConfigApplied applied;
        f.readObject("config", applied.config);
        readSource(f, applied.source);
        f.readAny("request", applied.request);
        received.message = std::move(applied);
    } else if (type == "config_rejected") {
        ConfigRejected rejected;
        f.read("reason", rejected.reason);
        readSource(f, rejected.source);
        f.readAny("request", rejected.request);
        received.message = std::move(rejected);
    } else if (type == "message") {
        Notice notice;
        f.read("level", notice.level, &messageLevelFromString,
               "\"error\", \"warning\" or \"info\"");
        f.read("text", notice.text);
        received.message = std::move(notice);
    } else if (type == "pong") {
        Pong pong;
        f.readAny("id", pong.id);
        received.message = std::move(pong);
    } else if (type == "refused") {
        Refused refused;
        refused.protocol = 0;
        f.read("protocol", refused.protocol);
        f.read("reason", refused.reason);
        received.message = std::move(refused);
    }
    if (!f.problem.empty()) {
        received.message.reset();
        received.problem = f.problem;
    }
    return received;
}

}  // namespace probe::format::control
