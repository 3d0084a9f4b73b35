// Dynamic dump: the config file is replaced while the model runs; each change takes effect at
// the next layer-level op boundary (no sleeps here: the runtime must not need them), an
// invalid file is rejected whole and the previous config kept.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/dump_status.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

class DynamicConfig : public RuntimeTest {
protected:
    std::set<std::string> opsOfRound(const std::set<std::pair<int64_t, std::string>>& ops,
                                     int64_t round) {
        std::set<std::string> out;
        for (const auto& [r, id] : ops)
            if (r == round) out.insert(id);
        return out;
    }
};

TEST_F(DynamicConfig, ReplacedFileTakesEffectAtTheNextOp) {
    start(R"({"task": "statistics", "dump_enable": false, "exec_range": "all"})");
    NativeModel model({});
    model.run();  // round 0: disabled
    model.run();  // round 1: disabled
    replaceFile(configPath(),
                R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    model.run();  // round 2: all layer ops, from the first one on
    replaceFile(configPath(),
                R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "2"})");
    model.run();  // round 3: only layer 2
    replaceFile(configPath(),
                R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "x"})");
    model.run();  // round 4: rejected, layer 2 still
    writeFile(configPath(),
              R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "0"})");
    model.run();  // round 5: written in place, layer 0
    replaceFile(configPath(), R"({"task": "statistics", "dump_enable": false})");
    model.run();  // round 6: off again
    ASSERT_EQ(probe_stop(), PROBE_OK);

    const auto ops = dumpedOps();
    EXPECT_TRUE(opsOfRound(ops, 0).empty());
    EXPECT_TRUE(opsOfRound(ops, 1).empty());
    EXPECT_EQ(opsOfRound(ops, 2), (std::set<std::string>{"0", "1", "2", "3"}));
    EXPECT_EQ(opsOfRound(ops, 3), (std::set<std::string>{"2"}));
    EXPECT_EQ(opsOfRound(ops, 4), (std::set<std::string>{"2"}));
    EXPECT_EQ(opsOfRound(ops, 5), (std::set<std::string>{"0"}));
    EXPECT_TRUE(opsOfRound(ops, 6).empty());

    std::string error;
    auto status = format::readStatusFile(root(), &error);
    ASSERT_TRUE(status) << error;
    ASSERT_EQ(status->processes.size(), 1u);
    bool rejectionReported = false;
    for (const auto& m : status->processes[0].messages)
        rejectionReported =
            rejectionReported || (m.level == format::MessageLevel::Warning &&
                                  m.text.find("config rejected") != std::string::npos &&
                                  m.text.find("key \"ids\"") != std::string::npos);
    EXPECT_TRUE(rejectionReported);
    // A refused config is the user's to fix, not a fault of the dump: said, but not an error.
    EXPECT_EQ(status->errors, 0u);
    EXPECT_EQ(status->state, format::DumpState::Complete);
}

// A change made inside a layer op: that op keeps the config it began with; the next round's
// first layer op has it, whatever the timing (within a round, a layer op has it once the probe
// has seen it: it asks the kernel at most once every 5 ms there, so B's round 0 may go
// either way, whole).
TEST_F(DynamicConfig, ChangeInsideALayerOpAppliesFromTheNextRoundAtTheLatest) {
    start(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "0", "save_child": true})");
    const int64_t dims[] = {2};
    const float values[] = {1.0f, 2.0f};
    auto op = [&](const char* name) {
        const int wanted = probe_op_begin(name, nullptr, nullptr);
        if (wanted > 0)
            probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                            values, 8);
        return wanted;
    };
    EXPECT_EQ(op("A"), 1);
    EXPECT_EQ(op("first"), 1);
    probe_op_end();
    // The whole layer op keeps the config it began with: no half-dumped layer.
    replaceFile(
        configPath(),
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "1", "save_child": true})");
    EXPECT_EQ(op("second"), 1);
    probe_op_end();
    probe_op_end();
    const int bSelected = op("B");  // id 1, round 0: the new config once seen
    EXPECT_EQ(op("child"), bSelected);
    probe_op_end();
    probe_op_end();
    EXPECT_EQ(op("A"), 0);  // round 1 began: the new config, without fail
    probe_op_end();
    EXPECT_EQ(op("B"), 1);
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    std::set<std::pair<int64_t, std::string>> expected{{0, "0"}, {0, "0_0"}, {0, "0_1"}, {1, "1"}};
    if (bSelected == 1) expected.insert({{0, "1"}, {0, "1_0"}});
    EXPECT_EQ(dumpedOps(), expected);
}

// A program that reports its own writes (as the Python probe does through an audit hook):
// rounds no longer ask the kernel each time, yet each change it writes between rounds applies
// from the next round's first layer-level op.
TEST_F(DynamicConfig, AProgramReportingItsOwnWritesHasEachAtTheNextRound) {
    start(R"({"task": "statistics", "dump_enable": false, "exec_range": "all"})");
    ASSERT_EQ(probe_report_own_config_writes(1), PROBE_OK);
    struct Undo {  // the runtime is the test process's, for the tests after this one
        ~Undo() { probe_report_own_config_writes(0); }
    } undo;
    NativeModel model({});
    constexpr int kRounds = 30;
    for (int round = 0; round < kRounds; ++round) {
        const std::string config =
            R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": ")" +
            std::to_string(round % 4) + R"("})";
        ASSERT_EQ(probe_note_file_written(configPath().c_str()), PROBE_OK);
        if (round % 2)
            replaceFile(configPath(), config);
        else
            writeFile(configPath(), config);
        model.run();
    }
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const auto ops = dumpedOps();
    ASSERT_FALSE(ops.empty());
    for (int round = 0; round < kRounds; ++round)
        EXPECT_EQ(opsOfRound(ops, round), (std::set<std::string>{std::to_string(round % 4)}))
            << "round " << round;
}

// While the probe sleeps, a program that reports its own writes may count its layer-level ops
// rather than begin them (probe_counting_only, probe_layer_counter_of): the same rounds. Not
// while every round must ask the kernel for a change of the config, nor while a write of it by
// the program waits to be applied, nor once awake; a counter is for one start of the runtime.
TEST_F(DynamicConfig, LayerOpsAreCountedWhileTheProbeSleepsWithTheSameRounds) {
    EXPECT_EQ(probe_counting_only(), 0u);  // not started
    EXPECT_EQ(probe_layer_counter_of("L", nullptr), nullptr);
    // A layer-level op begun (a boundary that asks), until the runtime says counting will do;
    // 0 when it never does.
    auto countingOnlyAfterABoundary = [] {
        for (int attempt = 0; attempt < 1000; ++attempt) {
            probe_op_begin("Boundary", nullptr, nullptr);
            probe_op_end();
            if (const uint64_t epoch = probe_counting_only()) return epoch;
        }
        return uint64_t{0};
    };
    start(R"({"task": "statistics", "dump_enable": false, "exec_range": "all"})");
    EXPECT_EQ(countingOnlyAfterABoundary(), 0u);  // every round asks the kernel
    ASSERT_EQ(probe_report_own_config_writes(1), PROBE_OK);
    struct Undo {  // the runtime is the test process's, for the tests after this one
        ~Undo() { probe_report_own_config_writes(0); }
    } undo;
    const uint64_t epoch = countingOnlyAfterABoundary();
    ASSERT_NE(epoch, 0u);
    EXPECT_EQ(probe_layer_counter_of("", nullptr), nullptr);
    EXPECT_NE(std::string(probe_last_error()).find("empty"), std::string::npos);
    probe_layer_counter* counter = probe_layer_counter_of("L", "T");
    ASSERT_NE(counter, nullptr);
    EXPECT_EQ(probe_layer_counter_of("L", "T"), counter);
    probe_layer_counter_add(counter);
    probe_layer_counter_add(counter);
    probe_layer_counter_add(nullptr);  // harmless
    ASSERT_EQ(probe_note_file_written(configPath().c_str()), PROBE_OK);
    EXPECT_EQ(probe_counting_only(), 0u);  // the program's write waits to be applied
    writeFile(configPath(), R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    const int64_t dims[] = {1};
    const float v = 5;
    auto runLayer = [&] {
        ASSERT_EQ(probe_op_begin("L", "T", nullptr), 1);
        EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                  dims, 1, &v, 4),
                  1);
        EXPECT_EQ(probe_op_end(), PROBE_OK);
    };
    runLayer();  // round 2: after the two counted executions
    EXPECT_EQ(probe_is_awake(), 1);
    EXPECT_EQ(probe_counting_only(), 0u);  // awake
    runLayer();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(probe_counting_only(), 0u);  // stopped
    // "L" is op 1 ("Boundary", begun first while asleep, is op 0 and dumped nothing).
    EXPECT_EQ(dumpedOps(), (std::set<std::pair<int64_t, std::string>>{{2, "1"}, {3, "1"}}));

    start(R"({"task": "statistics", "dump_enable": false, "exec_range": "all"})");
    const uint64_t again = countingOnlyAfterABoundary();
    EXPECT_NE(again, 0u);
    EXPECT_NE(again, epoch);  // another start: the counters got before are stale
    ASSERT_EQ(probe_set_round(0), PROBE_OK);
    EXPECT_EQ(probe_counting_only(), 0u);  // rounds set by the engine
    EXPECT_EQ(probe_layer_counter_of("L", "T"), nullptr);
    ASSERT_EQ(probe_stop(), PROBE_OK);
}

TEST_F(DynamicConfig, ConfigWrittenAfterStartAndRemovedLater) {
    start("");  // no file yet: defaults, dumping disabled
    NativeModel model({});
    model.run();
    EXPECT_EQ(probe_is_awake(), 0);
    const uint64_t generation = probe_state_generation();
    replaceFile(configPath(),
                R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "3"})");
    model.run();
    EXPECT_EQ(probe_is_awake(), 1);
    EXPECT_NE(probe_state_generation(), generation);
    ::unlink(configPath().c_str());
    model.run();  // the config in force stays
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(dumpedOps(), (std::set<std::pair<int64_t, std::string>>{{1, "3"}, {2, "3"}}));
}

TEST_F(DynamicConfig, InvalidConfigAtStartKeepsDumpingDisabled) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "everything"})");
    NativeModel model({});
    model.run();
    EXPECT_EQ(probe_is_awake(), 0);
    replaceFile(configPath(),
                R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "ids": "0"})");
    model.run();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(dumpedOps(), (std::set<std::pair<int64_t, std::string>>{{1, "0"}}));
}

}  // namespace
}  // namespace probe::test
