// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include <thread>

#include "probe/format/dump_status.h"
#include "probe/format/structure_json.h"
#include "test_support.h"

using namespace probe::format;

TEST(StructureJson, LayerKeysInOrderAndRoundTrip) {
    StructureNode layer;
    layer.opName = "Prefill_layer_2";
    layer.opType = "Prefill_layer";
    layer.inTensors = {"Prefill_layer_2_input_0"};
    layer.outTensors = {"Prefill_layer_2_output_0"};
    StructureNode child;
    child.opName = "Attention_2_0";
    child.opType = "SelfAttention";
    child.param = nlohmann::ordered_json{{"headNum", 2}};
    child.inTensors = {"Prefill_layer_2_input_0"};
    child.outTensors = {"Prefill_layer_2_output_0"};
    layer.nodes.push_back(child);
    const std::string text = layer.toJson().dump();
    EXPECT_EQ(text.rfind("{\"opName\":\"Prefill_layer_2\",\"opType\":\"Prefill_layer\",\"param\":\"\",\"inTensors\":", 0), 0u);
    std::string error;
    auto parsed = StructureNode::fromJson(nlohmann::json::parse(text), &error);
    ASSERT_TRUE(parsed) << error;
    ASSERT_EQ(parsed->nodes.size(), 1u);
    EXPECT_EQ(parsed->nodes[0].param["headNum"], 2);
    EXPECT_EQ(parsed->nodes[0].inTensors, child.inTensors);
}

TEST(StructureJson, ModelKeysInOrder) {
    ModelStructure model;
    model.modelName = "DecoderModel";
    const std::string text = model.toJson().dump();
    EXPECT_EQ(text, "{\"modelName\":\"DecoderModel\",\"weightTensors\":[],\"inTensors\":[],\"outTensors\":[],"
                    "\"internalTensors\":[],\"nodes\":[]}");
    std::string error;
    EXPECT_TRUE(ModelStructure::fromJson(nlohmann::json::parse(text), &error));
    EXPECT_FALSE(ModelStructure::fromJson(nlohmann::json::parse("[1]"), &error));
}

TEST(DumpStatus, FieldsOfTheWrongTypeFallBack) {
    probe::test::TempDir dir;
    probe::test::writeFile(dir / "probe_status.json",
                           R"({"processes": [{"pid": "12", "state": 3, "rows": -1, "files": 5, "messages": [1, "x"]}]})");
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    ASSERT_EQ(status->processes.size(), 1u);
    EXPECT_EQ(status->processes[0].pid, 0);
    EXPECT_EQ(status->processes[0].state, "running");
    EXPECT_EQ(status->files, 5u);
    EXPECT_EQ(status->processes[0].messages, std::vector<std::string>{"x"});
}

TEST(DumpStatus, ProcessesMergeUnderTheLock) {
    probe::test::TempDir dir;
    std::vector<std::thread> writers;
    for (int pid = 1; pid <= 8; ++pid) {
        writers.emplace_back([&, pid] {
            ProcessDumpStatus s;
            s.pid = pid;
            s.files = static_cast<uint64_t>(pid);
            s.rows = 10;
            s.state = pid == 3 ? "running" : "complete";
            ASSERT_EQ(updateStatusFile(dir.path(), s), 0);
        });
    }
    for (auto& w : writers) w.join();
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->processes.size(), 8u);
    EXPECT_EQ(status->files, 36u);
    EXPECT_EQ(status->rows, 80u);
    EXPECT_EQ(status->state, "running");
    ProcessDumpStatus three;
    three.pid = 3;
    three.state = "complete";
    three.files = 3;
    ASSERT_EQ(updateStatusFile(dir.path(), three), 0);
    EXPECT_EQ(readStatusFile(dir.path(), &error)->state, "complete");
    three.dumpStopped = "disk full";
    ASSERT_EQ(updateStatusFile(dir.path(), three), 0);
    EXPECT_EQ(readStatusFile(dir.path(), &error)->state, "incomplete");
}
