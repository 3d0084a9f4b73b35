// The native test engine drives the C API through a layered model for several rounds; the
// output tree is then checked file by file against FORMATS.md and against what the engine
// itself handed over.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "probe/format/dump_status.h"
#include "probe/format/structure_json.h"
#include "probe/format/tensor_bin.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

class NativeEngineDump : public RuntimeTest {};

std::string expectedHeader(const CapturedTensor& t) {
    std::string dims;
    for (size_t i = 0; i < t.dims.size(); ++i) dims += (i ? "," : "") + std::to_string(t.dims[i]);
    const std::string n = std::to_string(t.bytes.size());
    return "$Version=1.0\n$Object.Count=1\n$Object.Length=" + n +
           "\nformat=2\ndtype=" + std::to_string(t.dtype) + "\ndims=" + dims + "\n$Object.data=0," +
           n + "\n$End=1\n";
}

TEST_F(NativeEngineDump, EveryTensorEveryRoundFileByFile) {
    start(
        R"({"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true, "filter_level": 0})");
    NativeModelOptions options;
    options.layers = 3;
    options.nanInLayer = 1;
    NativeModel model(options);
    constexpr int kRounds = 3;
    for (int r = 0; r < kRounds; ++r) model.run();
    ASSERT_EQ(probe_stop(), PROBE_OK);

    const auto& captured = model.captured();
    // Every op of the engine wanted its tensors: 5 layer ops and their whole subtrees.
    ASSERT_FALSE(model.begins().empty());
    for (const auto& begin : model.begins()) EXPECT_EQ(begin.wanted, 1) << begin.namePath;
    ASSERT_FALSE(captured.empty());

    const std::string data = root() + "/data/" + pidDir();
    EXPECT_EQ(listSubdirectories(data), (std::vector<std::string>{"0", "1", "2"}));

    // Rows: exactly one per captured tensor, all fields as documented.
    auto rows = readRows();
    ASSERT_EQ(rows.size(), captured.size());
    std::map<std::string, const Row*> rowByPath;
    for (const auto& r : rows) rowByPath[r.row.tensorPath] = &r;
    size_t binFiles = 0;
    for (const auto& t : captured) {
        const int layerId = t.layerOrdinal;
        const std::string path = data + "/" + std::to_string(t.round) + "/" +
                                 t.relativeDir(layerId) + (t.output ? "/after/" : "/before/") +
                                 fileNameOf(t);
        SCOPED_TRACE(path);
        // The .bin: the exact header, then the engine's bytes.
        ASSERT_TRUE(exists(path));
        const std::string content = readFile(path);
        const std::string header = expectedHeader(t);
        ASSERT_EQ(content.substr(0, header.size()), header);
        ASSERT_EQ(content.size(), header.size() + t.bytes.size());
        EXPECT_EQ(std::memcmp(content.data() + header.size(), t.bytes.data(), t.bytes.size()), 0);
        ++binFiles;

        ASSERT_TRUE(rowByPath.count(path));
        const Row& row = *rowByPath[path];
        EXPECT_EQ(row.csv, data + "/" + std::to_string(t.round) + "/statistic.csv");
        EXPECT_EQ(row.row.devicePid, pidDir());
        EXPECT_EQ(row.row.round, t.round);
        std::string namePath;
        for (size_t i = 0; i < t.names.size(); ++i) namePath += (i ? "/" : "") + t.names[i];
        EXPECT_EQ(row.row.opName, namePath);
        EXPECT_EQ(row.row.opType, t.opType);
        EXPECT_EQ(row.row.opId, t.idPath(layerId));
        EXPECT_EQ(row.row.isOutput, t.output);
        EXPECT_EQ(row.row.index,
                  std::to_string(t.index) + (t.argName.empty() ? "" : "_" + t.argName));
        EXPECT_EQ(row.row.dtype, dtypeNameOf(t.dtype));
        EXPECT_EQ(row.row.format, "nd");
        EXPECT_EQ(row.row.shape, shapeOf(t.dims));
        expectStatsMatch(row.row, t);
    }

    // The NaN the engine put into layer 1's MLP shows in its rows, never dropped.
    bool sawNan = false;
    for (const auto& r : rows)
        if (r.row.opName == "Decoder_layer_1/Mlp/MatMulKernel" && r.row.isOutput)
            sawNan = sawNan || std::isnan(*r.row.max);
    EXPECT_TRUE(sawNan);
    const std::string csvText = readFile(data + "/0/statistic.csv");
    EXPECT_NE(csvText.find(",nan,nan,nan,nan,"), std::string::npos);

    // op_param.json: compact JSON of the op's parameters, only where there are some.
    EXPECT_EQ(readFile(data + "/0/0_WordEmbedding/op_param.json"), "{\"axis\":0}\n");
    EXPECT_EQ(readFile(data + "/2/2_Decoder_layer_1/1_Attention/op_param.json"),
              "{\"headNum\":2}\n");
    EXPECT_FALSE(exists(data + "/0/4_LmHead/op_param.json"));
    EXPECT_FALSE(exists(data + "/0/1_Decoder_layer_0/1_Attention/0_MatMulKernel/op_param.json"));

    // Nothing but the documented files; no temporaries left behind.
    size_t files = 0;
    for (const auto& f : listFiles(root())) {
        EXPECT_EQ(f.find(".tmp"), std::string::npos) << f;
        ++files;
    }

    // Layer structure: every layer op, tensors named, data flow between children drawn.
    const std::string layerDir = root() + "/info/layer/" + pidDir();
    const auto layerFiles = listFiles(layerDir);
    EXPECT_EQ(layerFiles, (std::vector<std::string>{
                              "Decoder_layer_0_1.json", "Decoder_layer_1_2.json",
                              "Decoder_layer_2_3.json", "LmHead_4.json", "WordEmbedding_0.json"}));
    std::string error;
    auto layer = format::StructureNode::fromJson(
        nlohmann::json::parse(readFile(layerDir + "/Decoder_layer_1_2.json")), &error);
    ASSERT_TRUE(layer) << error;
    EXPECT_EQ(layer->opName, "Decoder_layer_1_2");
    EXPECT_EQ(layer->opType, "Decoder_layer");
    EXPECT_EQ(layer->param["layerId"], 1);
    EXPECT_EQ(layer->inTensors, std::vector<std::string>{"Decoder_layer_1_2_input_0"});
    EXPECT_EQ(layer->outTensors, std::vector<std::string>{"Decoder_layer_1_2_output_0"});
    ASSERT_EQ(layer->nodes.size(), 3u);
    const auto& rms = layer->nodes[0];
    const auto& attention = layer->nodes[1];
    const auto& mlp = layer->nodes[2];
    EXPECT_EQ(rms.opName, "RmsNorm_2_0");
    EXPECT_EQ(rms.inTensors, layer->inTensors);            // the layer's input flows in
    EXPECT_EQ(attention.inTensors[0], rms.outTensors[0]);  // RmsNorm -> Attention
    EXPECT_EQ(mlp.inTensors[0], attention.outTensors[0]);  // Attention -> Mlp
    EXPECT_EQ(mlp.outTensors, layer->outTensors);          // Mlp's output is the layer's
    ASSERT_EQ(attention.nodes.size(), 3u);                 // kernels nest below
    EXPECT_EQ(attention.nodes[1].inTensors[0], attention.nodes[0].outTensors[0]);

    // Model structure: layers in order, each consuming the previous one's output.
    const auto modelFiles = listFiles(root() + "/info/model/" + pidDir());
    ASSERT_EQ(modelFiles.size(), 1u);
    auto modelStructure = format::ModelStructure::fromJson(
        nlohmann::json::parse(readFile(root() + "/info/model/" + pidDir() + "/" + modelFiles[0])),
        &error);
    ASSERT_TRUE(modelStructure) << error;
    ASSERT_EQ(modelStructure->nodes.size(), 5u);
    EXPECT_EQ(modelStructure->nodes[0].opName, "WordEmbedding_0");
    for (size_t i = 1; i + 1 < modelStructure->nodes.size(); ++i)
        EXPECT_EQ(modelStructure->nodes[i].inTensors[0], modelStructure->nodes[i - 1].outTensors[0])
            << i;
    // The model's output is the last layer's, and not also an internal tensor.
    ASSERT_FALSE(modelStructure->outTensors.empty());
    EXPECT_EQ(modelStructure->outTensors, modelStructure->nodes.back().outTensors);
    for (const auto& out : modelStructure->outTensors)
        EXPECT_EQ(std::count(modelStructure->internalTensors.begin(),
                             modelStructure->internalTensors.end(), out),
                  0)
            << out;

    // Status: complete, and its counts are those of the tree.
    auto status = format::readStatusFile(root(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->state, format::DumpState::Complete);
    ASSERT_EQ(status->processes.size(), 1u);
    EXPECT_EQ(status->rows, rows.size());
    EXPECT_EQ(status->errors, 0u);
    // Written files: every .bin and csv and json except the status file and its lock.
    EXPECT_EQ(status->files, files - 2);
    EXPECT_GT(binFiles, 100u);
}

TEST_F(NativeEngineDump, DeviceIdNamesTheDirectories) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    probe_set_device(3);
    NativeModel model({});
    model.run();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const std::string devicePid = "3_" + pidDir();
    EXPECT_TRUE(exists(root() + "/data/" + devicePid + "/0/statistic.csv"));
    const auto rows = readRows();
    ASSERT_FALSE(rows.empty());
    for (const auto& r : rows) {
        EXPECT_EQ(r.row.devicePid, devicePid);
        EXPECT_TRUE(r.row.tensorPath.empty());  // statistics only: N/A
    }
    EXPECT_TRUE(exists(root() + "/info/layer/" + devicePid + "/WordEmbedding_0.json"));
}

TEST_F(NativeEngineDump, TwoThreadsKeepTheirOwnOpStacks) {
    start(
        R"({"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true, "filter_level": 0})");
    constexpr int kRounds = 4;
    std::vector<std::unique_ptr<NativeModel>> models;
    for (int t = 0; t < 2; ++t) {
        NativeModelOptions options;
        options.prefix = "T" + std::to_string(t) + "_";
        options.layers = 2;
        models.push_back(std::make_unique<NativeModel>(options));
    }
    std::vector<std::thread> threads;
    for (auto& m : models)
        threads.emplace_back([&m] {
            for (int r = 0; r < kRounds; ++r) m->run();
        });
    for (auto& t : threads) t.join();
    ASSERT_EQ(probe_stop(), PROBE_OK);

    auto rows = readRows();
    EXPECT_EQ(rows.size(), models[0]->captured().size() + models[1]->captured().size());
    // Each layer op has one id for all its rounds, and its children's ids extend it.
    std::map<std::string, std::string> layerIds;  // layer name -> id
    for (const auto& r : rows) {
        const std::string layer = r.row.opName.substr(0, r.row.opName.find('/'));
        const std::string layerId = r.row.opId.substr(0, r.row.opId.find('_'));
        auto [it, inserted] = layerIds.emplace(layer, layerId);
        EXPECT_EQ(it->second, layerId) << r.row.opName;
    }
    EXPECT_EQ(layerIds.size(), 8u);
    std::set<std::string> distinct;
    for (const auto& [name, id] : layerIds) distinct.insert(id);
    EXPECT_EQ(distinct.size(), 8u);
    // Every captured tensor of each thread has its file with its bytes.
    for (const auto& m : models) {
        for (const auto& t : m->captured()) {
            const std::string layerName = t.names[0];
            const int layerId = std::stoi(layerIds[layerName]);
            const std::string path = root() + "/data/" + pidDir() + "/" + std::to_string(t.round) +
                                     "/" + t.relativeDir(layerId) +
                                     (t.output ? "/after/" : "/before/") + fileNameOf(t);
            std::string error;
            auto file = format::readBinFile(path, &error);
            ASSERT_TRUE(file) << path << ": " << error;
            EXPECT_EQ(file->data, t.bytes) << path;
        }
    }
    // Rounds are counted per layer op: each went 0..3.
    std::map<std::string, std::set<int64_t>> rounds;
    for (const auto& r : rows)
        rounds[r.row.opName.substr(0, r.row.opName.find('/'))].insert(r.row.round);
    for (const auto& [layer, seen] : rounds)
        EXPECT_EQ(seen, (std::set<int64_t>{0, 1, 2, 3})) << layer;
}

TEST_F(NativeEngineDump, ExplicitRoundsGiveSameNamedLayersDistinctIds) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    NativeModelOptions options;
    options.layers = 3;
    options.layerNamesShared = true;
    options.useExplicitRounds = true;
    NativeModel model(options);
    for (int r = 0; r < 2; ++r) model.run();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    std::map<int64_t, std::set<std::string>> idsByRound;
    for (const auto& r : readRows())
        if (r.row.opName == "Decoder_layer") idsByRound[r.row.round].insert(r.row.opId);
    ASSERT_EQ(idsByRound.size(), 2u);
    EXPECT_EQ(idsByRound[0], (std::set<std::string>{"1", "2", "3"}));
    EXPECT_EQ(idsByRound[1], idsByRound[0]);
}

}  // namespace
}  // namespace probe::test
