// The control protocol's messages (probe/format/control_messages.h): every one written and read
// back unchanged, the wire names both ends rely on, and lines that are not messages judged.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <set>

#include <gtest/gtest.h>

#include "probe/format/control_messages.h"

namespace probe::format::control {
namespace {

// One of each message, every field away from its default, so that a field lost on the way
// shows as a difference.
std::vector<ProbeMessage> everyProbeMessage() {
    Hello hello;
    hello.probeVersion = "0.1.0";
    hello.pid = 4242;
    hello.device = 3;
    hello.command = "python3 train.py --epochs 2";
    hello.outputDir = "/tmp/out \xc3\xa9";
    hello.dumpRoot = "/tmp/out \xc3\xa9/atb_dump_data";
    hello.configPath = "/tmp/config.json";
    hello.config = {{"task", "statistics"}, {"dump_enable", true}, {"ids", "1,2"}};
    hello.state = ProbeState::Dumping;
    hello.started = "2026-12-01T08:00:00Z";
    return {
        hello,
        Layer{"7", "model.layers.0", "LlamaDecoderLayer"},
        RowsWritten{12, 3000, 456789},
        StateChanged{ProbeState::Stopped, "no space left"},
        ConfigApplied{{{"task", "all"}, {"exec_range", "0,3"}}, ConfigSource::Client, "r9"},
        ConfigRejected{"key \"task\": \"x\" is not a valid value", ConfigSource::File, nullptr},
        Notice{MessageLevel::Warning, "the disk is nearly full"},
        Pong{{{"nested", {1, 2}}}},
        Refused{2, "another version"},
    };
}

std::vector<ClientMessage> everyClientMessage() {
    return {ClientHello{2}, SetConfig{{{"task", "tensor"}, {"ids", "3"}}, 11}, Ping{"abc"}};
}

TEST(ControlMessages, EveryProbeMessageRoundTrips) {
    const auto messages = everyProbeMessage();
    ASSERT_EQ(messages.size(), std::variant_size_v<ProbeMessage>);
    std::set<size_t> kinds;
    for (const auto& message : messages) {
        kinds.insert(message.index());
        const std::string line = toLine(message);
        ASSERT_EQ(line.back(), '\n');
        EXPECT_EQ(line.find('\n'), line.size() - 1) << "one message, one line";
        const auto back = parseProbeMessage(std::string_view(line).substr(0, line.size() - 1));
        ASSERT_TRUE(back.message) << line << back.problem;
        EXPECT_EQ(back.message->index(), message.index()) << line;
        EXPECT_EQ(toJson(*back.message), toJson(message)) << line;
        EXPECT_EQ(toJson(message)["type"], typeName(message));
    }
    EXPECT_EQ(kinds.size(), std::variant_size_v<ProbeMessage>) << "one of each";
}

TEST(ControlMessages, EveryClientMessageRoundTrips) {
    const auto messages = everyClientMessage();
    ASSERT_EQ(messages.size(), std::variant_size_v<ClientMessage>);
    for (const auto& message : messages) {
        const std::string line = toLine(message);
        const auto back = parseClientMessage(line);
        ASSERT_TRUE(back.message) << line << back.problem;
        EXPECT_EQ(back.message->index(), message.index()) << line;
        EXPECT_EQ(toJson(*back.message), toJson(message)) << line;
    }
}

TEST(ControlMessages, TheWireNamesAreThoseOfTheDocs) {
    // docs/control-protocol.md; a probe and an application of one version read each other.
    const auto hello = toJson(everyProbeMessage()[0]);
    for (const char* key : {"type", "protocol", "probe_version", "pid", "device", "command",
                            "output_dir", "dump_root", "config_path", "config", "state", "started"})
        EXPECT_TRUE(hello.contains(key)) << key;
    EXPECT_EQ(hello["state"], "dumping");
    EXPECT_EQ(hello["protocol"], kProtocolVersion);
    EXPECT_EQ(toJson(RowsWritten{1, 2, 3}),
              (nlohmann::json{{"type", "rows_written"}, {"round", 1}, {"rows", 2}, {"bytes", 3}}));
    EXPECT_EQ(toJson(Layer{"1", "a", "b"}),
              (nlohmann::json{{"type", "layer"}, {"id", "1"}, {"name", "a"}, {"op_type", "b"}}));
    EXPECT_EQ(toJson(Notice{MessageLevel::Error, "x"}),
              (nlohmann::json{{"type", "message"}, {"level", "error"}, {"text", "x"}}));
    // A request id is said only when there is one.
    EXPECT_FALSE(toJson(ConfigApplied{{}, ConfigSource::File, nullptr}).contains("request"));
    EXPECT_EQ(toJson(ConfigRejected{"r", ConfigSource::Client, 4})["request"], 4);
    EXPECT_EQ(toJson(ConfigRejected{"r", ConfigSource::Client, 4})["source"], "client");
    EXPECT_EQ(toJson(SetConfig{{{"task", "all"}}, 3}),
              (nlohmann::json{{"type", "set_config"}, {"id", 3}, {"config", {{"task", "all"}}}}));
    EXPECT_EQ(toJson(ClientHello{}), (nlohmann::json{{"type", "hello"}, {"protocol", 2}}));
}

TEST(ControlMessages, ANewerPeersTypesAndKeysAreIgnored) {
    auto unknownType = parseProbeMessage(R"({"type": "gossip", "text": 1})");
    EXPECT_TRUE(unknownType.ignored());
    EXPECT_TRUE(parseClientMessage(R"({"type": "subscribe"})").ignored());
    auto extraKey = parseProbeMessage(R"({"type": "layer", "id": "1", "colour": "red"})");
    ASSERT_TRUE(extraKey.message);
    EXPECT_EQ(std::get<Layer>(*extraKey.message).id, "1");
}

TEST(ControlMessages, LinesThatAreNotMessagesAreJudgedWithTheReason) {
    const std::vector<std::pair<std::string, std::string>> lines = {
        {"not json", "not a JSON object: the probe's message:1:2: not valid JSON"},
        {"[1]", "not a JSON object: found array"},
        {R"({"type": 5})", "a message needs a string \"type\"; found 5"},
        {R"({"type": "rows_written", "rows": -1})",
         "a \"rows_written\" message needs \"rows\" to be an integer >= 0; found -1"},
        {R"({"type": "state", "state": "dancing"})",
         "a \"state\" message needs \"state\" to be \"sleeping\", \"dumping\", \"stopped\" or "
         "\"exiting\"; found \"dancing\""},
        {R"({"type": "hello", "protocol": 2, "pid": "12"})",
         "a \"hello\" message needs \"pid\" to be an integer; found \"12\""},
        {R"({"type": "hello", "protocol": 2, "config": [1]})",
         "a \"hello\" message needs \"config\" to be an object; found [1]"},
        {R"({"type": "config_applied", "source": "elsewhere"})",
         "needs \"source\" to be \"file\" or \"client\""},
        {R"({"type": "message", "level": "loud", "text": "x"})", "needs \"level\" to be"},
        {R"({"type": "rows_written", "rows": 1e999})", "out of range"},
    };
    for (const auto& [line, expected] : lines) {
        const auto received = parseProbeMessage(line);
        EXPECT_FALSE(received.message) << line;
        EXPECT_NE(received.problem.find(expected), std::string::npos)
            << line << "\n  said: " << received.problem;
    }
    // A hello that does not say its protocol speaks none this end knows.
    auto silent = parseProbeMessage(R"({"type": "hello"})");
    ASSERT_TRUE(silent.message);
    EXPECT_EQ(std::get<Hello>(*silent.message).protocol, 0);
}

TEST(ControlMessages, AClientsRequestsAreReadWhateverTheirIds) {
    // The id of a set_config is echoed whatever it is, as a ping's (string ids went unanswered);
    // a config that is not an object is kept for the probe to reject with a reason.
    auto set = parseClientMessage(R"({"type": "set_config", "id": "seven", "config": "x"})");
    ASSERT_TRUE(set.message);
    EXPECT_EQ(std::get<SetConfig>(*set.message).id, "seven");
    EXPECT_FALSE(std::get<SetConfig>(*set.message).config.is_object());
    auto ping = parseClientMessage(R"({"type": "ping", "id": [1, {"a": null}]})");
    ASSERT_TRUE(ping.message);
    EXPECT_EQ(std::get<Ping>(*ping.message).id, nlohmann::json::parse(R"([1, {"a": null}])"));
    auto hello = parseClientMessage(R"({"type": "hello", "protocol": "two"})");
    EXPECT_NE(hello.problem.find("needs \"protocol\" to be an integer"), std::string::npos)
        << hello.problem;
    EXPECT_NE(parseClientMessage("{").problem.find("not a JSON object: control socket:1:"),
              std::string::npos);
}

}  // namespace
}  // namespace probe::format::control
