// Hostile config files under a running model (issue 9): each of these killed or hung the model.
// Now each is refused with a message saying what and where, the previous config stays in force,
// and the next good config is still applied at the next layer-level op.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <fcntl.h>
#include <sys/stat.h>

#include "probe/format/dump_status.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

const char* kLayer2 =
    R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "2"})";
const char* kLayer0 =
    R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "0"})";

class HostileConfig : public RuntimeTest {
protected:
    // Layer ids dumped in each round, in round order.
    std::vector<std::set<std::string>> layersByRound(int rounds) const {
        std::vector<std::set<std::string>> out(static_cast<size_t>(rounds));
        for (const auto& [round, id] : dumpedOps())
            if (round < rounds) out[static_cast<size_t>(round)].insert(id);
        return out;
    }
    // The status file's messages (it must still be readable JSON).
    std::vector<std::string> statusMessages() const {
        std::string error;
        auto status = format::readStatusFile(root(), &error);
        EXPECT_TRUE(status) << error;
        if (!status || status->processes.empty()) return {};
        std::vector<std::string> texts;
        for (const auto& m : status->processes[0].messages) texts.push_back(m.text);
        return texts;
    }
    // Layer 2 dumped in round 0, then the config file replaced by `text` before round 1: the
    // layers dumped in each of the two rounds (the probe stopped).
    std::vector<std::set<std::string>> roundsAroundARewrite(const std::string& text) {
        start(kLayer2);
        NativeModel model({});
        model.run();
        replaceFile(configPath(), text);
        model.run();
        EXPECT_EQ(probe_stop(), PROBE_OK);
        return layersByRound(2);
    }
    static bool anyContains(const std::vector<std::string>& messages, const std::string& a,
                            const std::string& b) {
        for (const auto& m : messages)
            if (m.find(a) != std::string::npos && m.find(b) != std::string::npos) return true;
        return false;
    }
};

TEST_F(HostileConfig, ConfigsThatKilledTheModelAreRefusedAndThePreviousStays) {
    start(kLayer2);
    NativeModel model({});
    model.run();  // round 0: layer 2
    const long before = maxResidentKb();
    const std::vector<std::pair<std::string, std::string>> hostile = {
        {R"({"task": "statistics", "dump_enable": true, "ids": 1e999})",
         "out of range"},  // out_of_range.406
        {"{\"task\": \"statistics\xff\", \"dump_enable\": true}",
         "not valid JSON"},  // type_error.316
        {"{\"\xfe\": 1}", "not valid JSON"},
        {"{\"task\": " + nested(100000, "[", "]") + "}", "nested deeper than"},  // SIGSEGV
        {nested(100000, "{\"a\":", "}"), "nested deeper than"},  // 10.5 GB, quadratic
    };
    for (const auto& [text, expected] : hostile) {
        replaceFile(configPath(), text);
        model.run();  // rounds 1..5: still layer 2
    }
    EXPECT_LT(maxResidentKb() - before, 200 * 1024);
    replaceFile(configPath(), kLayer0);
    model.run();  // round 6: the next good config applies
    ASSERT_EQ(probe_stop(), PROBE_OK);

    const auto rounds = layersByRound(7);
    for (int r = 0; r < 6; ++r) EXPECT_EQ(rounds[r], std::set<std::string>{"2"}) << "round " << r;
    EXPECT_EQ(rounds[6], std::set<std::string>{"0"});
    const auto messages = statusMessages();
    size_t rejections = 0;
    for (const auto& m : messages) rejections += m.find("config rejected") != std::string::npos;
    EXPECT_EQ(rejections, hostile.size());
    EXPECT_TRUE(anyContains(messages, "config rejected", configPath() + ":1:"));
    for (const char* expected : {"out of range", "not valid JSON", "nested deeper than 32 levels"})
        EXPECT_TRUE(anyContains(messages, "config rejected", expected)) << expected;
}

// probe run --config keeps a copy of the user's file as the run's record (PROBE_CONFIG_RECORD):
// the probe keeps it in step with each config it applies, so that a refused edit after a good
// one leaves the record at the good one, the config in force (it kept the first config: a walk).
TEST_F(HostileConfig, TheRecordOfTheConfigFollowsWhatIsAppliedNotWhatIsRefused) {
    const std::string record = dir_ / "probe_config.json";
    writeFile(record, kLayer2);  // probe run's copy of the file it was given
    ::setenv("PROBE_CONFIG_RECORD", record.c_str(), 1);
    start(kLayer2);
    ::unsetenv("PROBE_CONFIG_RECORD");
    NativeModel model({});
    model.run();
    replaceFile(configPath(), kLayer0);
    model.run();
    EXPECT_EQ(readFile(record), kLayer0);
    // An edit the probe refuses leaves the record at the config in force.
    replaceFile(configPath(), R"({"task": "statistics", "dump_enable": true, "filter_level": 7})");
    model.run();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(readFile(record), kLayer0);
    EXPECT_EQ(layersByRound(3), (std::vector<std::set<std::string>>{{"2"}, {"0"}, {"0"}}));
    EXPECT_TRUE(anyContains(statusMessages(), "config rejected", "filter_level"));
}

TEST_F(HostileConfig, AFifoInPlaceOfTheConfigBlocksNothing) {
    start(kLayer2);
    NativeModel model({});
    model.run();  // round 0
    const std::string fifo = dir_ / "fifo.tmp", keeper = dir_ / "fifo.keeper";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    ASSERT_EQ(::link(fifo.c_str(), keeper.c_str()),
              0);  // a name to open it by after it is replaced
    ASSERT_EQ(::rename(fifo.c_str(), configPath().c_str()), 0);
    model.run();  // round 1: the watcher looked at it and refused it
    replaceFile(configPath(), kLayer0);
    model.run();  // round 2: a watcher stuck in open() on the FIFO would never see this
    // Release a watcher blocked on the FIFO (as before the fix), so that a failure here is an
    // assertion, not a hang: a writer that opens and closes lets its open() return.
    const int writer = ::open(keeper.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const auto rounds = layersByRound(3);
    EXPECT_EQ(rounds[0], std::set<std::string>{"2"});
    EXPECT_EQ(rounds[1], std::set<std::string>{"2"});
    EXPECT_EQ(rounds[2], std::set<std::string>{"0"});
    EXPECT_TRUE(anyContains(statusMessages(), "config rejected",
                            "is a named pipe (FIFO), not a regular file"));
}

TEST_F(HostileConfig, ADirectoryInPlaceOfTheConfigIsSaidToBeOne) {
    start(kLayer2);
    NativeModel model({});
    model.run();
    ASSERT_EQ(::unlink(configPath().c_str()), 0);
    ASSERT_EQ(::mkdir(configPath().c_str(), 0755), 0);
    model.run();  // still layer 2
    ASSERT_EQ(::rmdir(configPath().c_str()), 0);
    replaceFile(configPath(), kLayer0);
    model.run();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const auto rounds = layersByRound(3);
    EXPECT_EQ(rounds[1], std::set<std::string>{"2"});
    EXPECT_EQ(rounds[2], std::set<std::string>{"0"});
    // Not only "was removed": what is there now is said.
    EXPECT_TRUE(anyContains(statusMessages(), "config rejected", "is a directory"));
}

TEST_F(HostileConfig, ALinkToAFifoIsJudgedByWhatItLeadsTo) {
    start(kLayer2);
    NativeModel model({});
    model.run();
    const std::string fifo = dir_ / "elsewhere.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    ASSERT_EQ(::unlink(configPath().c_str()), 0);
    ASSERT_EQ(::symlink(fifo.c_str(), configPath().c_str()), 0);
    model.run();
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(layersByRound(2)[1], std::set<std::string>{"2"});
    EXPECT_TRUE(anyContains(statusMessages(), "config rejected", "named pipe"));
}

TEST_F(HostileConfig, ARepeatedKeyIsAcceptedWithItsLastValue) {
    // It was warned about ("only the last value counts") and then the whole file refused; then
    // applied without a word (the first "ids" readable as the one in force), as `probe config
    // validate` warns.
    const auto rounds = roundsAroundARewrite(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "2", "ids": "0"})");
    EXPECT_EQ(rounds[0], std::set<std::string>{"2"});
    EXPECT_EQ(rounds[1], std::set<std::string>{"0"});
    EXPECT_TRUE(
        anyContains(statusMessages(), "config applied with warnings", "is given more than once"));
}

// The same, with the config in force already: still said (the probe said nothing when the file's
// last values were those in force).
TEST_F(HostileConfig, ARepeatedKeyIsSaidEvenWhenTheConfigIsInForceAlready) {
    const auto rounds = roundsAroundARewrite(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "0", "ids": "2"})");
    EXPECT_EQ(rounds[1], std::set<std::string>{"2"});
    EXPECT_TRUE(
        anyContains(statusMessages(), "config applied with warnings", "is given more than once"));
}

TEST_F(HostileConfig, ANonUtf8PathIsNamedPrintably) {
    // The config path is named in messages that go into probe_status.json: a byte that is not
    // UTF-8 made the status writer throw (type_error.316) on the housekeeping thread.
    const std::string subdir = dir_ / "conf\xff";
    ASSERT_EQ(::mkdir(subdir.c_str(), 0755), 0);
    const std::string config = subdir + "/config.json";
    writeFile(config,
              R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "x"})");
    ASSERT_EQ(probe_start(dir_.path().c_str(), config.c_str()), PROBE_OK) << probe_last_error();
    NativeModel model({});
    model.run();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    // Named printably in the message, and the status file is whole.
    EXPECT_TRUE(anyContains(statusMessages(), "conf\\xFF/config.json", "key \"ids\""));
}

}  // namespace
}  // namespace probe::test
