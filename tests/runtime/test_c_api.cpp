// The C API's contract: cheap no-ops before start, errors as codes with readable text, never
// an exception or a crash on bad input.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "probe/format/row_order.h"
#include "probe/format/structure_json.h"
#include "probe/format/tensor_bin.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

class CApi : public RuntimeTest {};

TEST_F(CApi, CallsBeforeStartAreNoOps) {
    ASSERT_EQ(probe_is_started(), 0);
    EXPECT_EQ(probe_op_begin("A", nullptr, nullptr), 0);
    const int64_t dims[] = {1};
    float v = 1;
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                              &v, 4),
              0);
    EXPECT_EQ(probe_op_end(), 0);
    EXPECT_EQ(probe_op_count_child(), 0);
    EXPECT_EQ(probe_is_awake(), 0);
    EXPECT_EQ(probe_stop(), PROBE_OK);
    EXPECT_STRNE(probe_version(), "");
}

// An op counted rather than begun (a view inside a kernel) still takes its place among its
// siblings: the op after it has the id it would have had. Refused, with nothing counted, where
// the op must be begun in full: no op open, the layer's structure being captured (its first
// execution), overflows looked for.
TEST_F(CApi, AnOpCountedButNotBegunKeepsTheIdsOfTheOpsAfterIt) {
    const int64_t dims[] = {1};
    const float v = 2;
    auto runLayer = [&](bool counted) {
        ASSERT_EQ(probe_op_begin("Blk", nullptr, nullptr), 1);
        EXPECT_EQ(probe_op_count_child(), counted ? 1 : 0);
        if (!counted) {  // begun in full instead
            probe_op_begin("view", "aten::view", nullptr);
            EXPECT_EQ(probe_op_end(), PROBE_OK);
        }
        ASSERT_EQ(probe_op_begin("inner", "aten::inner", nullptr), 1);
        EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                  dims, 1, &v, 4),
                  1);
        EXPECT_EQ(probe_op_end(), PROBE_OK);
        EXPECT_EQ(probe_op_end(), PROBE_OK);
    };
    start(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true})");
    EXPECT_EQ(probe_op_count_child(), 0);  // no op open
    runLayer(false);                       // the structure is captured: begun in full
    runLayer(true);
    runLayer(true);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    auto rows = readRows();
    ASSERT_EQ(rows.size(), 3u);
    for (const auto& r : rows) {
        EXPECT_EQ(r.row.opName, "Blk/inner") << r.row.round;
        EXPECT_EQ(r.row.opId, "0_1") << r.row.round;
    }

    TempDir overflow("probe-count-overflow");
    writeFile(overflow / "c.json", R"({"task": "overflow_check", "dump_enable": true,
                                        "exec_range": "all", "save_child": true})");
    ASSERT_EQ(probe_start(overflow.path().c_str(), (overflow / "c.json").c_str()), PROBE_OK);
    for (int round = 0; round < 2; ++round) runLayer(false);
    ASSERT_EQ(probe_stop(), PROBE_OK);
}

// A layer op counted while no op is open takes its round, as if it had run: the execution begun
// after two counted ones is round 2, and an op of another name is not moved. Refused, with
// nothing counted, while an op is open; an empty name is an error.
TEST_F(CApi, ALayerOpCountedButNotBegunTakesItsRound) {
    EXPECT_EQ(probe_op_count_layer("L", nullptr), 0);  // not started
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    const int64_t dims[] = {1};
    const float v = 3;
    auto runLayer = [&](const char* name) {
        ASSERT_EQ(probe_op_begin(name, "T", nullptr), 1);
        EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                  dims, 1, &v, 4),
                  1);
        EXPECT_EQ(probe_op_end(), PROBE_OK);
    };
    EXPECT_EQ(probe_op_count_layer("L", "T"), 1);
    EXPECT_EQ(probe_op_count_layer("L", nullptr), 1);
    runLayer("L");
    runLayer("M");
    ASSERT_EQ(probe_op_begin("M", "T", nullptr), 1);
    EXPECT_EQ(probe_op_count_layer("L", "T"), 0);  // an op is open
    EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                              &v, 4),
              1);
    EXPECT_EQ(probe_op_end(), PROBE_OK);
    runLayer("L");
    EXPECT_EQ(probe_op_count_layer("", nullptr), PROBE_E_INVALID_ARGUMENT);
    EXPECT_NE(std::string(probe_last_error()).find("empty"), std::string::npos);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    std::multiset<std::pair<int64_t, std::string>> seen;
    for (const auto& r : readRows()) seen.insert({r.row.round, r.row.opName});
    const std::multiset<std::pair<int64_t, std::string>> expected{
        {2, "L"}, {0, "M"}, {1, "M"}, {3, "L"}};
    EXPECT_EQ(seen, expected);
}

// A layer op's round counts its own calls: a block called twice per step, and a branch taken in
// odd steps only, spread a step over several round folders. probe_row_order/<pid>.csv says in
// which order the rows went into them, which no standard file does.
TEST_F(CApi, TheRowOrderFileSaysWhichRoundsRowsCameWhen) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    const int64_t dims[] = {2};
    const float v[] = {1, 2};
    // (round, rows) of each layer op as the program runs it.
    std::vector<format::RowOrderRun> ran;
    std::map<std::string, int64_t> calls;
    auto runLayer = [&](const char* name, int rows) {
        ASSERT_EQ(probe_op_begin(name, "T", nullptr), 1);
        for (int i = 0; i < rows; ++i)
            ASSERT_EQ(probe_op_tensor(PROBE_INPUT, i, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                      dims, 1, v, sizeof v),
                      1);
        ASSERT_EQ(probe_op_end(), PROBE_OK);
        ran.push_back({calls[name]++, static_cast<uint64_t>(rows)});
    };
    for (int step = 0; step < 4; ++step) {
        runLayer("shared", 2);
        runLayer("shared", 2);
        if (step % 2 == 1) runLayer("branch", 1);
        runLayer("head", 3);
    }
    ASSERT_EQ(probe_stop(), PROBE_OK);
    std::string error;
    auto runs = format::parseRowOrder(
        readFile(root() + "/" + format::kRowOrderDirectory + "/" + pidDir() + ".csv"), &error);
    EXPECT_EQ(error, "");
    // A writer batch may end within a layer op: runs of one round next to each other are one.
    std::vector<format::RowOrderRun> merged;
    for (const auto& run : runs) {
        if (!merged.empty() && merged.back().round == run.round)
            merged.back().rows += run.rows;
        else
            merged.push_back(run);
    }
    ASSERT_EQ(merged.size(), ran.size());
    for (size_t i = 0; i < ran.size(); ++i) {
        EXPECT_EQ(merged[i].round, ran[i].round) << "run " << i;
        EXPECT_EQ(merged[i].rows, ran[i].rows) << "run " << i;
    }
    // Each round's statistic.csv holds the rows the file gives it.
    std::map<int64_t, uint64_t> rowsOfRound, listed;
    for (const auto& r : readRows()) ++rowsOfRound[r.row.round];
    for (const auto& run : runs) listed[run.round] += run.rows;
    EXPECT_EQ(listed, rowsOfRound);
}

TEST_F(CApi, UnwritableOutputDirectoryIsAnError) {
    const std::string blocker = dir_ / "file";
    writeFile(blocker, "x");
    EXPECT_EQ(probe_start((blocker + "/sub").c_str(), nullptr), PROBE_E_IO);
    EXPECT_NE(std::string(probe_last_error()).find("cannot create the output directory"),
              std::string::npos);
    EXPECT_EQ(probe_is_started(), 0);
}

TEST_F(CApi, StartTwiceIsHarmlessAndEnvironmentIsUsed) {
    writeFile(configPath(), R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ::setenv("PROBE_OUTPUT_DIR", dir_.path().c_str(), 1);
    ::setenv("PROBE_CONFIG", configPath().c_str(), 1);
    ASSERT_EQ(probe_start(nullptr, nullptr), PROBE_OK);
    EXPECT_EQ(probe_start("/elsewhere", nullptr), PROBE_OK);
    ::unsetenv("PROBE_OUTPUT_DIR");
    ::unsetenv("PROBE_CONFIG");
    EXPECT_EQ(probe_is_started(), 1);
    EXPECT_EQ(probe_is_awake(), 1);
    EXPECT_EQ(probe_op_begin("Layer", "LayerType", nullptr), 1);
    EXPECT_EQ(probe_op_end(), PROBE_OK);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_TRUE(exists(root() + "/probe_status.json"));
}

TEST_F(CApi, MisuseIsReportedNotFatal) {
    start(R"({"task": "all", "dump_enable": true, "exec_range": "all"})");
    EXPECT_EQ(probe_op_end(), PROBE_E_STATE);
    EXPECT_NE(std::string(probe_last_error()).find("no op is open"), std::string::npos);
    const int64_t dims[] = {2, 2};
    float v[4] = {1, 2, 3, 4};
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 2,
                              v, 16),
              PROBE_E_STATE);
    EXPECT_EQ(probe_op_begin(nullptr, nullptr, nullptr), PROBE_E_INVALID_ARGUMENT);
    EXPECT_EQ(probe_op_begin("", nullptr, nullptr), PROBE_E_INVALID_ARGUMENT);
    ASSERT_EQ(probe_op_begin("Layer", nullptr, nullptr), 1);
    // Size that does not match the shape.
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 2,
                              v, 12),
              PROBE_E_INVALID_ARGUMENT);
    EXPECT_NE(std::string(probe_last_error())
                  .find("12 bytes do not match shape 2x2 of float (16 bytes expected)"),
              std::string::npos);
    // Bad io, negative index, missing dims, negative dimension, overflowing shape.
    EXPECT_EQ(probe_op_tensor(7, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 2, v, 16),
              PROBE_E_INVALID_ARGUMENT);
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, -1, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 2,
                              v, 16),
              PROBE_E_INVALID_ARGUMENT);
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, nullptr,
                              2, v, 16),
              PROBE_E_INVALID_ARGUMENT);
    const int64_t negative[] = {-2, 2};
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, negative,
                              2, v, 16),
              PROBE_E_INVALID_ARGUMENT);
    const int64_t huge[] = {1LL << 40, 1LL << 40};
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, huge, 2,
                              v, 16),
              PROBE_E_INVALID_ARGUMENT);
    // A good one still works after all that, and so does a dtype we do not know (kept, no stats).
    EXPECT_EQ(
        probe_op_tensor(PROBE_INPUT, 0, "x", PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 2, v, 16),
        1);
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 1, nullptr, 41, 29, dims, 2, v, 2), 1);
    // A scalar and an empty tensor.
    EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, nullptr,
                              0, v, 4),
              1);
    const int64_t empty[] = {0, 3};
    EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 1, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, empty,
                              2, v, 0),
              1);
    EXPECT_EQ(probe_op_end(), PROBE_OK);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    auto rows = readRows();
    ASSERT_EQ(rows.size(), 4u);
    std::map<std::string, format::StatRow> byIndex;
    for (const auto& r : rows) byIndex[(r.row.isOutput ? "out" : "in") + r.row.index] = r.row;
    EXPECT_EQ(byIndex["in0_x"].max, 4.0);
    EXPECT_EQ(byIndex["in1"].dtype, "undefined(41)");
    EXPECT_EQ(byIndex["in1"].format, "fractal_nz");
    EXPECT_FALSE(byIndex["in1"].max);
    EXPECT_EQ(byIndex["out0"].shape, "");
    EXPECT_EQ(byIndex["out0"].max, 1.0);
    EXPECT_EQ(byIndex["out1"].shape, "0x3");
    EXPECT_FALSE(byIndex["out1"].max);  // empty: N/A
    std::string error;
    auto scalar = format::readBinFile(byIndex["out0"].tensorPath, &error);
    ASSERT_TRUE(scalar) << error;
    EXPECT_TRUE(scalar->header.dims.empty());
}

// A layer op's names are made safe once, at its first execution, but each execution's rows
// carry the type that execution gave (made safe too); an op's rows after its children's carry
// its own names again.
TEST_F(CApi, EachExecutionOfALayerOpKeepsItsOwnTypeAndEveryRowItsOpsNames) {
    start(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true})");
    const int64_t dims[] = {2};
    const float v[] = {1, -3};
    const char* types[] = {"T/1", "T\n2", nullptr, "", "T/1"};
    for (const char* type : types) {
        ASSERT_EQ(probe_op_begin("Blk/a", type, nullptr), 1);
        EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, "x/y", PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims,
                                  1, v, 8),
                  1);
        ASSERT_EQ(probe_op_begin("inner", "aten::inner", nullptr), 1);
        EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                  dims, 1, v, 8),
                  1);
        EXPECT_EQ(probe_op_end(), PROBE_OK);
        EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                  dims, 1, v, 8),
                  1);
        EXPECT_EQ(probe_op_tensor(PROBE_OUTPUT, 1, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                  dims, 1, v, 8),
                  1);
        EXPECT_EQ(probe_op_end(), PROBE_OK);
    }
    ASSERT_EQ(probe_stop(), PROBE_OK);
    auto rows = readRows();
    ASSERT_EQ(rows.size(), 4 * std::size(types));
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a.row.round < b.row.round;  // stable within a round: the file's order
    });
    const char* expectedTypes[] = {"T_1", "T_2", "Blk_a", "Blk_a", "T_1"};
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i].row;
        const size_t round = i / 4, at = i % 4;
        EXPECT_EQ(row.round, static_cast<int64_t>(round));
        const bool child = at == 1;
        EXPECT_EQ(row.opName, child ? "Blk_a/inner" : "Blk_a") << i;
        EXPECT_EQ(row.opType, child ? "aten::inner" : expectedTypes[round]) << i;
        EXPECT_EQ(row.opId, child ? "0_0" : "0") << i;
        EXPECT_EQ(row.index, at == 0 ? "0_x_y" : at == 3 ? "1" : "0") << i;
        EXPECT_EQ(row.isOutput, at != 0) << i;
        EXPECT_EQ(row.shape, "2");
        EXPECT_EQ(row.max, 1.0);
        EXPECT_EQ(row.min, -3.0);
    }
}

// A layer op is found by its name's text, not by where the text is: a buffer that held one
// layer's name and then another's (the runtime remembers layers by the name's address too).
TEST_F(CApi, ALayerIsKnownByItsNamesTextWhereverTheTextIs) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    const int64_t dims[] = {1};
    char name[16];
    const char* sequence[] = {"Attn", "Attn", "Mlp", "Attn", "Mlp"};
    for (const char* layer : sequence) {
        std::snprintf(name, sizeof name, "%s", layer);
        ASSERT_EQ(probe_op_begin(name, nullptr, nullptr), 1);
        const float v = static_cast<float>(name[0]);
        EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims,
                                  1, &v, 4),
                  1);
        EXPECT_EQ(probe_op_end(), PROBE_OK);
    }
    // The text of a fresh copy finds the same layer.
    const std::string copy = "Mlp";
    ASSERT_EQ(probe_op_begin(copy.c_str(), nullptr, nullptr), 1);
    EXPECT_EQ(probe_op_end(), PROBE_OK);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    auto rows = readRows();
    ASSERT_EQ(rows.size(), std::size(sequence));
    std::multiset<std::tuple<std::string, std::string, int64_t>> seen;
    for (const auto& r : rows) seen.insert({r.row.opName, r.row.opId, r.row.round});
    const std::multiset<std::tuple<std::string, std::string, int64_t>> expected = {
        {"Attn", "0", 0}, {"Attn", "0", 1}, {"Mlp", "1", 0}, {"Attn", "0", 2}, {"Mlp", "1", 1}};
    EXPECT_EQ(seen, expected);

    // A new session starts its layers again, whatever addresses the names had.
    TempDir second("probe-restart-names");
    writeFile(second / "c.json",
              R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(probe_start(second.path().c_str(), (second / "c.json").c_str()), PROBE_OK);
    ASSERT_EQ(probe_op_begin(name, nullptr, nullptr), 1);  // "Mlp", layer 0 of this session
    const float v = 7;
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                              &v, 4),
              1);
    EXPECT_EQ(probe_op_end(), PROBE_OK);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const std::string csv =
        readFile(second.path() + "/atb_dump_data/data/" + pidDir() + "/0/statistic.csv");
    EXPECT_NE(csv.find(",0,Mlp,Mlp,0,input,0,float,nd,1,7.000000,"), std::string::npos) << csv;
}

TEST_F(CApi, BadParameterJsonIsKeptAsAString) {
    start(R"({"task": "tensor", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(probe_op_begin("Layer", nullptr, "{not json"), 1);
    probe_op_end();
    ASSERT_EQ(probe_op_begin("Other", nullptr, "{}"), 1);  // empty parameters: no file
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(readFile(root() + "/data/" + pidDir() + "/0/0_Layer/op_param.json"),
              "\"{not json\"\n");
    EXPECT_FALSE(exists(root() + "/data/" + pidDir() + "/0/1_Other/op_param.json"));
}

TEST_F(CApi, ParametersGoWithTensorsNotWithStatisticsAlone) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(probe_op_begin("Layer", nullptr, "{\"k\": 1}"), 1);
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_FALSE(exists(root() + "/data/" + pidDir() + "/0/0_Layer/op_param.json"));
}

TEST_F(CApi, PrecomputedStatisticsForStatisticsOnly) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(probe_op_begin("Layer", nullptr, nullptr), 1);
    EXPECT_EQ(probe_op_wants() & (PROBE_WANTS_DATA | PROBE_WANTS_STATISTICS_ONLY),
              PROBE_WANTS_DATA | PROBE_WANTS_STATISTICS_ONLY);
    const float values[] = {3.0f, -4.0f};
    probe_tensor_stats stats;
    ASSERT_EQ(probe_compute_stats(PROBE_DTYPE_FLOAT, values, 2, &stats), PROBE_OK);
    EXPECT_EQ(stats.valid, 1);
    EXPECT_EQ(stats.norm, 5.0);
    const int64_t dims[] = {2};
    EXPECT_EQ(probe_op_tensor_stats(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                    dims, 1, &stats, 0),
              1);
    EXPECT_EQ(probe_op_tensor_stats(PROBE_INPUT, 1, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                    dims, 1, nullptr, 0),
              PROBE_E_INVALID_ARGUMENT);
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const std::string csv = readFile(root() + "/data/" + pidDir() + "/0/statistic.csv");
    EXPECT_NE(csv.find(",input,0,float,nd,2,3.000000,-4.000000,-0.500000,5.000000,N/A"),
              std::string::npos)
        << csv;
}

// probe_op_begin_wants begins the op as probe_op_begin_kind does and returns what
// probe_op_wants() says right after it, at every depth and under configs that want different
// things of each level.
TEST_F(CApi, BeginWantsReturnsWhatWantsSaysAfterBegin) {
    EXPECT_EQ(probe_op_begin_wants("Layer", nullptr, nullptr, PROBE_OP_AUTO), 0);  // not started
    EXPECT_EQ(probe_op_end(), 0);
    const char* configs[] = {
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})",
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true})",
        R"({"task": "tensor", "dump_enable": true, "exec_range": "all", "save_child": true})",
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true,
            "ids": "1_0"})",
        R"({"task": "statistics", "dump_enable": false})"};
    // Per config and round: First, 0_0, 0_0_0, 0_1, 0_1_0, Second, 1_0, 1_0_0, 1_1, 1_1_0.
    std::vector<std::vector<std::vector<int>>> seen;
    for (const char* config : configs) {
        start(config);
        std::vector<std::vector<int>> rounds;
        for (int round = 0; round < 2; ++round) {
            std::vector<int> wants;
            for (const char* name : {"First", "Second"}) {
                wants.push_back(probe_op_begin_wants(name, "LayerType", nullptr, PROBE_OP_AUTO));
                EXPECT_EQ(wants.back(), probe_op_wants()) << config;
                for (int child = 0; child < 2; ++child) {
                    wants.push_back(
                        probe_op_begin_wants("child", nullptr, nullptr, PROBE_OP_OPERATION));
                    EXPECT_EQ(wants.back(), probe_op_wants()) << config;
                    wants.push_back(
                        probe_op_begin_wants("kernel", nullptr, nullptr, PROBE_OP_KERNEL));
                    EXPECT_EQ(wants.back(), probe_op_wants()) << config;
                    EXPECT_EQ(probe_op_end(), PROBE_OK);
                    EXPECT_EQ(probe_op_end(), PROBE_OK);
                }
                EXPECT_EQ(probe_op_end(), PROBE_OK);
            }
            rounds.push_back(wants);
        }
        EXPECT_LT(probe_op_begin_wants("", nullptr, nullptr, PROBE_OP_AUTO), 0);
        EXPECT_NE(std::string(probe_last_error()).find("empty"), std::string::npos);
        ASSERT_EQ(probe_stop(), PROBE_OK);
        seen.push_back(rounds);
    }
    const int stats = PROBE_WANTS_DATA | PROBE_WANTS_STATISTICS_ONLY;
    // A layer's first execution has its structure captured: metadata, and its children watched.
    for (int config = 0; config < 4; ++config)
        EXPECT_EQ(seen[config][0][0] & (PROBE_WANTS_METADATA | PROBE_WANTS_CHILDREN),
                  PROBE_WANTS_METADATA | PROBE_WANTS_CHILDREN)
            << configs[config];
    // Then layer-level statistics: the layers' tensors, nothing below them.
    EXPECT_EQ(seen[0][1][0], stats);
    EXPECT_EQ(seen[0][1][1], 0);
    // Every op's statistics, and every op's tensors.
    EXPECT_EQ(seen[1][1][0], stats | PROBE_WANTS_CHILDREN);
    EXPECT_EQ(seen[1][1][2] & stats, stats);
    EXPECT_EQ(seen[2][1][2] & stats, PROBE_WANTS_DATA);
    // One op by id, with save_child: the second layer's first child and its kernel alone have
    // their tensors wanted.
    std::vector<int> data;
    for (int w : seen[3][1]) data.push_back(w & PROBE_WANTS_DATA);
    EXPECT_EQ(data, (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1, 0, 0}));
    EXPECT_EQ(seen[4], std::vector<std::vector<int>>(2, std::vector<int>(10, 0)));  // dumping off
}

TEST_F(CApi, PrecomputedStatisticsAreRefusedWhenTensorsAreWanted) {
    start(R"({"task": "all", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(probe_op_begin("Layer", nullptr, nullptr), 1);
    EXPECT_EQ(probe_op_wants() & PROBE_WANTS_STATISTICS_ONLY, 0);
    probe_tensor_stats stats{1, 1, 1, 1, 1, 1};
    const int64_t dims[] = {1};
    EXPECT_EQ(probe_op_tensor_stats(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND,
                                    dims, 1, &stats, 0),
              PROBE_E_INVALID_ARGUMENT);
    EXPECT_NE(std::string(probe_last_error()).find("wants the tensor's data"), std::string::npos);
    probe_op_end();
}

TEST_F(CApi, NamesWithSlashesCannotEscapeTheTree) {
    start(R"({"task": "tensor", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(probe_op_begin("../../evil/name", nullptr, nullptr), 1);
    const int64_t dims[] = {1};
    float v = 1;
    EXPECT_EQ(
        probe_op_tensor(PROBE_INPUT, 0, "a/b", PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1, &v, 4),
        1);
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_TRUE(
        exists(root() + "/data/" + pidDir() + "/0/0_.._.._evil_name/before/intensor0_a_b.bin"));
    EXPECT_FALSE(exists(dir_ / "evil"));
}

TEST_F(CApi, ExplicitStructureReports) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    EXPECT_EQ(probe_report_model("MyModel", R"({"modelName": "MyModel", "nodes": []})"), PROBE_OK);
    EXPECT_EQ(probe_report_layer("MyLayer",
                                 R"({"opName": "MyLayer_0", "opType": "MyLayer", "nodes": []})"),
              PROBE_OK);
    EXPECT_EQ(probe_report_layer("Bad", "[1,2"), PROBE_E_INVALID_ARGUMENT);
    EXPECT_EQ(probe_report_model("", nullptr), PROBE_E_INVALID_ARGUMENT);
    ASSERT_EQ(probe_op_begin("MyLayer", nullptr, nullptr),
              1);  // keeps id 0, its reported structure wins
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(readFile(root() + "/info/model/" + pidDir() + "/MyModel.json"),
              "{\"modelName\":\"MyModel\",\"nodes\":[]}\n");
    EXPECT_EQ(readFile(root() + "/info/layer/" + pidDir() + "/MyLayer_0.json"),
              "{\"opName\":\"MyLayer_0\",\"opType\":\"MyLayer\",\"nodes\":[]}\n");
    EXPECT_EQ(dumpedOps(), (std::set<std::pair<int64_t, std::string>>{}));  // no tensors reported
}

TEST_F(CApi, ReportedWeightsAreTheModelsWeightTensors) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    float x[4] = {1, 2, 3, 4}, w[4] = {0.5f, 0.5f, 0.5f, 0.5f}, c[4] = {9, 9, 9, 9}, y[4] = {};
    const int64_t dims[1] = {4};
    const auto id = [](const float* p) {
        return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
    };
    EXPECT_EQ(probe_report_weight("fc.weight", id(w)), PROBE_OK);
    EXPECT_EQ(probe_report_weight("fc.weight", id(w)), PROBE_OK);  // again: harmless
    EXPECT_EQ(probe_report_weight("nothing", 0), PROBE_E_INVALID_ARGUMENT);
    ASSERT_EQ(probe_report_model("Net", nullptr), PROBE_OK);
    // Two layers reading the same weight (tied), one also reading a constant that is no weight.
    for (const char* layer : {"fc", "head"}) {
        probe_op_begin(layer, "Linear", nullptr);
        probe_op_tensor_ex(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1, x,
                           sizeof x, id(x));
        probe_op_begin("mul", "aten::mul", nullptr);
        probe_op_tensor_ex(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1, x,
                           sizeof x, id(x));
        probe_op_tensor_ex(PROBE_INPUT, 1, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1, w,
                           sizeof w, id(w));
        if (std::string(layer) == "head")
            probe_op_tensor_ex(PROBE_INPUT, 2, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                               c, sizeof c, id(c));
        probe_op_tensor_ex(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1, y,
                           sizeof y, id(y));
        probe_op_end();
        probe_op_tensor_ex(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1, y,
                           sizeof y, id(y));
        probe_op_end();
    }
    ASSERT_EQ(probe_stop(), PROBE_OK);
    std::string error;
    auto model = format::ModelStructure::fromJson(
        nlohmann::json::parse(readFile(root() + "/info/model/" + pidDir() + "/Net.json")), &error);
    ASSERT_TRUE(model) << error;
    EXPECT_EQ(model->weightTensors, std::vector<std::string>{"Net_weight_0"});
    ASSERT_EQ(model->nodes.size(), 2u);
    for (const auto& layer : model->nodes) {
        ASSERT_EQ(layer.nodes.size(), 1u);
        EXPECT_EQ(layer.nodes[0].inTensors.at(1), "Net_weight_0") << layer.opName;
        EXPECT_EQ(
            std::count(layer.internalTensors.begin(), layer.internalTensors.end(), "Net_weight_0"),
            0);
    }
    // The constant stays an internal tensor of its layer; the layer file keeps its own names.
    EXPECT_EQ(model->nodes[1].internalTensors.size(), 1u);
    EXPECT_EQ(model->nodes[1].nodes[0].inTensors.at(2), model->nodes[1].internalTensors[0]);
    auto layerFile = format::StructureNode::fromJson(
        nlohmann::json::parse(readFile(root() + "/info/layer/" + pidDir() + "/fc_0.json")), &error);
    ASSERT_TRUE(layerFile) << error;
    EXPECT_EQ(layerFile->nodes[0].inTensors.at(1), layerFile->internalTensors.at(0));
}

TEST_F(CApi, RestartOnAnotherDirectory) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    probe_op_begin("A", nullptr, nullptr);  // left open on purpose: a restart must not inherit it
    ASSERT_EQ(probe_stop(), PROBE_OK);
    TempDir second("probe-restart");
    writeFile(second / "c.json",
              R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(probe_start(second.path().c_str(), (second / "c.json").c_str()), PROBE_OK);
    EXPECT_EQ(probe_op_begin("B", nullptr, nullptr), 1);
    const int64_t dims[] = {1};
    float v = 5;
    EXPECT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                              &v, 4),
              1);
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    // B is a fresh layer op (id 0) of the new session, not a child of the stale A.
    EXPECT_TRUE(exists(second.path() + "/atb_dump_data/data/" + pidDir() + "/0/statistic.csv"));
    const std::string csv =
        readFile(second.path() + "/atb_dump_data/data/" + pidDir() + "/0/statistic.csv");
    EXPECT_NE(csv.find(",0,B,B,0,input,0,float,nd,1,5.000000,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace probe::test
