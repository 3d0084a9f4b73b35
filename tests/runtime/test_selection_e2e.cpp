// Every config key and combination that changes what is dumped, end to end through the C API.
// The native model (2 decoder layers) has layer ops 0 WordEmbedding, 1 Decoder_layer_0,
// 2 Decoder_layer_1, 3 LmHead; a decoder layer has children 0 RmsNorm, 1 Attention, 2 Mlp,
// each with kernels below.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/tensor_bin.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

class Selection : public RuntimeTest {
protected:
    // Runs the model for `rounds` executions under `config` and returns (round, op id) of the
    // ops that were dumped.
    std::set<std::pair<int64_t, std::string>> runWith(const std::string& config, int rounds = 3,
                                                      int device = -1) {
        start(config);
        if (device >= 0) probe_set_device(device);
        model_ = std::make_unique<NativeModel>(NativeModelOptions{});
        for (int r = 0; r < rounds; ++r) model_->run();
        EXPECT_EQ(probe_stop(), PROBE_OK);
        return dumpedOps();
    }
    static std::set<std::pair<int64_t, std::string>> ops(
        std::initializer_list<std::pair<int64_t, std::string>> list) {
        return {list.begin(), list.end()};
    }
    std::unique_ptr<NativeModel> model_;
};

TEST_F(Selection, DumpDisabledWritesNoData) {
    EXPECT_TRUE(runWith(R"({"task": "all", "dump_enable": false, "exec_range": "all"})").empty());
    EXPECT_FALSE(exists(root() + "/data"));
    ASSERT_FALSE(model_->begins().empty());  // the ops ran, and none wanted its tensors
    for (const auto& b : model_->begins()) EXPECT_EQ(b.wanted, 0);
}

TEST_F(Selection, DefaultsDumpRoundZeroOfLayerOps) {
    EXPECT_EQ(runWith(R"({"dump_enable": true})"), ops({{0, "0"}, {0, "1"}, {0, "2"}, {0, "3"}}));
}

TEST_F(Selection, ExecRange) {
    EXPECT_EQ(
        runWith(R"({"task": "statistics", "dump_enable": true, "exec_range": "1,2", "ids": "3"})"),
        ops({{1, "3"}, {2, "3"}}));
}

TEST_F(Selection, ExecRangeNone) {
    EXPECT_TRUE(
        runWith(R"({"task": "statistics", "dump_enable": true, "exec_range": "none"})").empty());
}

TEST_F(Selection, ExecRangePairs) {
    EXPECT_EQ(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0,2,2", "ids": "0"})",
            4),
        ops({{0, "0"}, {2, "0"}}));
}

TEST_F(Selection, IdOfALayerWithoutChildren) {
    EXPECT_EQ(
        runWith(R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "ids": "2"})"),
        ops({{0, "2"}}));
}

TEST_F(Selection, IdOfAChildAloneNeedsNoSaveChild) {
    EXPECT_EQ(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "ids": "2_1"})"),
        ops({{0, "2_1"}}));
}

TEST_F(Selection, IdWithSaveChildTakesTheSubtree) {
    EXPECT_EQ(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "ids": "2_1", "save_child": true})"),
        ops({{0, "2_1"}, {0, "2_1_0"}, {0, "2_1_1"}, {0, "2_1_2"}}));
}

TEST_F(Selection, SaveChildWithNothingElseTakesEverything) {
    auto dumped = runWith(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "save_child": true})");
    EXPECT_EQ(dumped.size(), 3u + 2u * 10u + 1u);  // every op of round 0
    EXPECT_TRUE(dumped.count({0, "1_2_1"}));
}

TEST_F(Selection, OpNamePrefixCaseInsensitive) {
    EXPECT_EQ(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "op_name": "ATTENTION"})"),
        ops({{0, "1_1"}, {0, "2_1"}}));
}

TEST_F(Selection, OpNameWithSaveChild) {
    EXPECT_EQ(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "op_name": "decoder_layer_1",
                          "save_child": true})")
            .size(),
        10u);  // the layer, 3 operations, 6 kernels
}

TEST_F(Selection, IdsOrOpName) {
    EXPECT_EQ(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "ids": "0", "op_name": "lmhead"})"),
        ops({{0, "0"}, {0, "3"}}));
}

TEST_F(Selection, DeviceFilter) {
    EXPECT_EQ(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "ids": "0", "device": "1,2"})",
            1, 2),
        ops({{0, "0"}}));
}

TEST_F(Selection, DeviceFilterExcludes) {
    EXPECT_TRUE(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "device": "1"})", 1,
            0)
            .empty());
}

TEST_F(Selection, DeviceFilterWithUnknownDevice) {
    EXPECT_TRUE(
        runWith(
            R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "device": "0"})", 1)
            .empty());
}

TEST_F(Selection, TaskTensorWritesBinsAndRowsWithoutStatistics) {
    runWith(R"({"task": "tensor", "dump_enable": true, "exec_range": "0,0", "ids": "3"})", 1);
    auto rows = readRows();
    ASSERT_EQ(rows.size(), 3u);  // LmHead: input, logits, next_token
    for (const auto& r : rows) {
        EXPECT_FALSE(r.row.max || r.row.min || r.row.mean || r.row.norm);
        EXPECT_TRUE(exists(r.row.tensorPath)) << r.row.tensorPath;
    }
    EXPECT_TRUE(
        exists(root() + "/data/" + pidDir() + "/0/3_LmHead/after/outtensor1_next_token.bin"));
}

TEST_F(Selection, TaskStatisticsWritesRowsOnly) {
    runWith(R"({"task": "statistics", "dump_enable": true, "exec_range": "0,0", "ids": "3"})", 1);
    const auto rows = readRows();
    ASSERT_FALSE(rows.empty());
    for (const auto& r : rows) {
        EXPECT_TRUE(r.row.max.has_value());
        EXPECT_TRUE(r.row.tensorPath.empty());
    }
    const auto files = listFiles(root() + "/data");
    ASSERT_FALSE(files.empty());
    for (const auto& f : files) EXPECT_EQ(f.find(".bin"), std::string::npos) << f;
}

TEST_F(Selection, TaskAllWritesBoth) {
    runWith(R"({"task": "all", "dump_enable": true, "exec_range": "0,0", "ids": "3"})", 1);
    const auto rows = readRows();
    ASSERT_FALSE(rows.empty());
    for (const auto& r : rows) {
        EXPECT_TRUE(r.row.max.has_value());
        EXPECT_TRUE(exists(r.row.tensorPath));
    }
}

// filter_level: how tensors that appear again, and kernel-level tensors, are written.
class FilterLevel : public Selection {
protected:
    struct Census {
        size_t full = 0, aliases = 0, selfAliases = 0;
    };
    Census census() {
        Census c;
        for (const auto& r : readRows()) {
            std::string error;
            auto header = format::readBinHeader(r.row.tensorPath, &error);
            EXPECT_TRUE(header) << r.row.tensorPath << ": " << error;
            if (!header) continue;
            if (!header->headerOnly()) {
                ++c.full;
                continue;
            }
            const std::string name = r.row.tensorPath.substr(r.row.tensorPath.rfind('/') + 1);
            if (header->alias == name) {
                ++c.selfAliases;
                continue;
            }
            ++c.aliases;
            // "<first op id>_<file name>": find that op's file in the same round, with the data.
            const std::string round = r.csv.substr(0, r.csv.rfind('/'));
            bool found = false;
            for (const auto& other : readRows()) {
                const std::string otherName =
                    other.row.tensorPath.substr(other.row.tensorPath.rfind('/') + 1);
                if (other.csv == r.csv && other.row.opId + "_" + otherName == header->alias) {
                    auto first = format::readBinFile(other.row.tensorPath, &error);
                    EXPECT_TRUE(first && !first->header.headerOnly()) << header->alias;
                    found = true;
                }
            }
            EXPECT_TRUE(found) << r.row.tensorPath << " -> " << header->alias;
        }
        return c;
    }
};

TEST_F(FilterLevel, ZeroWritesEverythingInFull) {
    runWith(
        R"({"task": "tensor", "dump_enable": true, "exec_range": "0,0", "ids": "1", "save_child": true, "filter_level": 0})",
        1);
    Census c = census();
    EXPECT_EQ(c.aliases + c.selfAliases, 0u);
    EXPECT_GT(c.full, 20u);
}

TEST_F(FilterLevel, OneWritesRepeatedDataOnce) {
    runWith(
        R"({"task": "tensor", "dump_enable": true, "exec_range": "0,0", "ids": "1", "save_child": true, "filter_level": 1})",
        1);
    Census c = census();
    EXPECT_GT(c.aliases, 10u);
    EXPECT_EQ(c.selfAliases, 0u);
    // The layer's input is written once; RmsNorm's input (the same data) points at it.
    const std::string round = root() + "/data/" + pidDir() + "/0/1_Decoder_layer_0";
    std::string error;
    auto rmsInput = format::readBinHeader(round + "/0_RmsNorm/before/intensor0.bin", &error);
    ASSERT_TRUE(rmsInput);
    EXPECT_EQ(rmsInput->alias, "1_intensor0.bin");
    EXPECT_FALSE(format::readBinHeader(round + "/before/intensor0.bin", &error)->headerOnly());
}

TEST_F(FilterLevel, TwoAlsoSkipsKernelTensorsButKeepsTheirRows) {
    runWith(
        R"({"task": "all", "dump_enable": true, "exec_range": "0,0", "ids": "1", "save_child": true, "filter_level": 2})",
        1);
    Census c = census();
    EXPECT_GT(c.selfAliases, 10u);
    for (const auto& r : readRows()) {
        const bool kernel = std::count(r.row.opId.begin(), r.row.opId.end(), '_') >= 2;
        std::string error;
        auto header = format::readBinHeader(r.row.tensorPath, &error);
        ASSERT_TRUE(header);
        if (kernel) {
            EXPECT_TRUE(header->headerOnly()) << r.row.tensorPath;
            EXPECT_TRUE(r.row.max.has_value());  // statistics still computed
        }
    }
}

TEST_F(FilterLevel, IgnoredWithoutSaveChild) {
    runWith(
        R"({"task": "tensor", "dump_enable": true, "exec_range": "0,0", "op_name": "rmsnorm", "filter_level": 2})",
        1);
    Census c = census();
    EXPECT_EQ(c.aliases + c.selfAliases, 0u);
    EXPECT_EQ(c.full, 8u);  // RmsNorm and RmsNormKernel (both start with the prefix) in two layers
}

}  // namespace
}  // namespace probe::test
