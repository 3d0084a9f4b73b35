// SPDX-License-Identifier: GPL-3.0-or-later
#include "dump_builder.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "probe/format/dtype.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/tensor_bin.h"
#include "probe/format/tensor_stats.h"
#include "test_support.h"

namespace probe::test {

DumpBuilder::DumpBuilder(std::string output, std::string devicePid)
    : output_(std::move(output)),
      devicePid_(std::move(devicePid)),
      root_(output_ + "/atb_dump_data") {
    format::makeDirectories(root_ + "/data/" + devicePid_);
}

std::string DumpBuilder::roundDir(int round) const {
    return root_ + "/data/" + devicePid_ + "/" + std::to_string(round);
}

std::string DumpBuilder::csvPath(int round) const {
    return roundDir(round) + "/statistic.csv";
}

void DumpBuilder::addLayerRound(int round, const std::vector<std::string>& children) {
    for (size_t i = 0; i < children.size(); ++i)
        addRow(round, "0_" + std::to_string(i), "L/" + children[i], "aten::" + children[i], true,
               {static_cast<float>(i)});
    addRow(round, "0", "L", "Layer", true, {9.0f});
}

void DumpBuilder::appendRaw(int round, const std::string& text, bool header) {
    format::makeDirectories(roundDir(round));
    const bool exists = format::fileExists(csvPath(round));
    std::ofstream out(csvPath(round), std::ios::app | std::ios::binary);
    if (!exists && header) out << format::kStatisticCsvHeader << "\n";
    out << text;
}

format::StatRow DumpBuilder::rowOf(int round, const std::string& id, const std::string& namePath,
                                   const std::string& type, bool isOutput) const {
    format::StatRow row;
    row.devicePid = devicePid_;
    row.round = round;
    row.opName = namePath;
    row.opType = type;
    row.opId = id;
    row.isOutput = isOutput;
    row.index = "0";
    row.format = "nd";
    return row;
}

format::StatRow DumpBuilder::addRow(int round, const std::string& id, const std::string& namePath,
                                    const std::string& type, bool isOutput,
                                    std::vector<float> values, std::vector<int64_t> dims,
                                    std::optional<double> forceMax) {
    format::StatRow row = rowOf(round, id, namePath, type, isOutput);
    row.dtype = "float";
    if (values.empty()) values = {1.0f, -2.0f, 3.0f};
    if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
    row.shape = format::shapeString(dims);
    const auto stats =
        format::computeTensorStats(format::DType::Float, values.data(), values.size());
    row.max = forceMax ? *forceMax : stats.max;
    row.min = stats.min;
    row.mean = stats.mean;
    row.norm = stats.norm;
    if (!statisticsPrinted_) row.max = row.min = row.mean = row.norm = std::nullopt;
    // The tensor file, in a directory named after the op (flat here: tests only need it unique).
    const std::string dir = roundDir(round) + "/" + id + "_" +
                            format::safeFileComponent(namePath.substr(namePath.rfind('/') + 1)) +
                            (isOutput ? "/after" : "/before");
    format::makeDirectories(dir);
    row.tensorPath = dir + (isOutput ? "/outtensor0.bin" : "/intensor0.bin");
    format::BinHeader header;
    header.dims = dims;
    header.dataLength = values.size() * sizeof(float);
    if (format::writeFileAtomically(row.tensorPath, format::makeBinHeader(header), values.data(),
                                    header.dataLength) != 0)
        throw std::runtime_error("cannot write " + row.tensorPath);
    appendRaw(round, format::formatStatRow(row));
    return row;
}

void DumpBuilder::addStatisticsRow(int round, const std::string& id, const std::string& namePath,
                                   const std::string& type, double max, double min, double mean,
                                   double norm) {
    format::StatRow row = rowOf(round, id, namePath, type, true);
    row.dtype = "double";
    row.shape = "2";
    row.max = max;
    row.min = min;
    row.mean = mean;
    row.norm = norm;
    appendRaw(round, format::formatStatRow(row));
}

std::string DumpBuilder::writeAliasBin(int round, const std::string& relativePath,
                                       const std::string& alias, std::vector<int64_t> dims) {
    format::BinHeader header;
    header.dims = std::move(dims);
    header.alias = alias;
    const std::string path = roundDir(round) + "/" + relativePath;
    format::makeDirectories(path.substr(0, path.rfind('/')));
    if (format::writeFileAtomically(path, format::makeBinHeader(header)) != 0)
        throw std::runtime_error("cannot write " + path);
    return path;
}

void DumpBuilder::writeModel(const format::ModelStructure& model, const std::string& name) {
    const std::string dir = root_ + "/info/model/" + devicePid_;
    format::makeDirectories(dir);
    format::writeFileAtomically(dir + "/" + name + ".json", model.toJson().dump());
}

void DumpBuilder::writeLayer(const format::StructureNode& layer, const std::string& fileName) {
    const std::string dir = root_ + "/info/layer/" + devicePid_;
    format::makeDirectories(dir);
    format::writeFileAtomically(dir + "/" + fileName, layer.toJson().dump());
}

void DumpBuilder::setStatus(const std::string& state) {
    format::ProcessDumpStatus status;
    const size_t underscore = devicePid_.find('_');
    status.pid = std::stoll(underscore == std::string::npos ? devicePid_
                                                            : devicePid_.substr(underscore + 1));
    status.state = format::dumpStateFromString(state).value();
    format::updateStatusFile(root_, status);
}

const char* const kMsprobeDumpJson = R"({
 "task": "tensor", "level": "mix", "framework": "pytorch", "dump_data_dir": "/elsewhere/dump_tensor_data",
 "data": {
  "Functional.linear.0.forward": {
   "input_args": [
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [10, 8], "Max": 1.5, "Min": -1.0, "Mean": 0.25, "Norm": 3.0,
     "requires_grad": false, "data_name": "Functional.linear.0.forward.input.0.pt"},
    {"type": "int", "value": 3},
    null
   ],
   "input_kwargs": {"bias": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": NaN, "Min": -Infinity,
                             "Mean": NaN, "Norm": Infinity, "requires_grad": true}},
   "output": [{"type": "torch.Tensor", "dtype": "torch.bool", "shape": [], "Max": true, "Min": false, "Mean": null, "Norm": null,
               "requires_grad": false}]
  },
  "Module.fc.Linear.forward.0": {
   "input_args": [], "input_kwargs": {}, "output": [[{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 2],
     "Max": 2.0, "Min": 0.0, "Mean": 1.0, "Norm": 2.5, "requires_grad": true}]],
   "parameters": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 8], "Max": 0.5, "Min": -0.5,
     "Mean": 0.0, "Norm": 1.0, "requires_grad": true}}
  },
  "Module.fc.Linear.parameters_grad.0": {"weight": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 8],
     "Max": 0.1, "Min": -0.1, "Mean": 0.0, "Norm": 0.2, "requires_grad": false}]}
 }})";

std::string msprobeCalls(const std::vector<std::pair<std::string, double>>& calls) {
    std::string data;
    for (const auto& [entry, value] : calls) {
        if (!data.empty()) data += ",\n";
        const std::string v = std::isnan(value) ? "NaN" : std::to_string(value);
        data += "\"" + entry +
                "\": {\"input_args\": [], \"output\": [{\"type\": \"torch.Tensor\", \"dtype\": "
                "\"torch.float32\", "
                "\"shape\": [2], \"Max\": " +
                v + ", \"Min\": 0, \"Mean\": 0, \"Norm\": " + v + "}]}";
    }
    return "{\"task\": \"statistics\", \"level\": \"mix\", \"data\": {\n" + data + "\n}}";
}

void writeMsprobeStep(const std::string& dumpPath, int step, const std::string& dumpJson) {
    const std::string dir = dumpPath + "/step" + std::to_string(step) + "/rank0";
    format::makeDirectories(dir + "/dump_tensor_data");
    writeFile(
        dir + "/construct.json",
        R"({"Functional.linear.0.forward": "Module.fc.Linear.forward.0", "Module.fc.Linear.forward.0": null})");
    writeFile(dir + "/stack.json", "{}");
    replaceFile(dir + "/dump.json", dumpJson);
}

format::StructureNode node(const std::string& name, const std::string& id, const std::string& type,
                           std::vector<format::StructureNode> children) {
    format::StructureNode n;
    n.opName = name + "_" + id;
    n.opType = type;
    n.nodes = std::move(children);
    return n;
}

synthetic::SyntheticDumpResult writeSmallSyntheticDump(const std::string& dir, uint64_t ops,
                                                       uint64_t rows, int layers, bool tensors) {
    synthetic::SyntheticDumpOptions options;
    options.output = dir;
    options.ops = ops;
    options.rows = rows;
    options.layers = layers;
    options.nanLayer = 1;
    options.nanRound = 2;
    options.tensors = tensors;
    return synthetic::writeSyntheticDump(options);
}

}  // namespace probe::test
