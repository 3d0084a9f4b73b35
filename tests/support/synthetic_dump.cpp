// SPDX-License-Identifier: GPL-3.0-or-later
#include "synthetic_dump.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "probe/format/dtype.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/statistic_csv.h"
#include "probe/format/structure_json.h"
#include "probe/format/tensor_bin.h"
#include "probe/format/tensor_stats.h"

namespace probe::synthetic {
namespace {

struct GenOp {
    std::string id, name, type, namePath, relDir;
    int layer = 0;
    int depth = 0;
    std::vector<GenOp> children;
};

const char* const kOperationNames[] = {
    "input_layernorm", "self_attn", "post_attention_layernorm", "mlp", "rotary", "residual"};
const char* const kOperationTypes[] = {"RMSNorm", "Attention",       "RMSNorm",
                                       "MLP",     "RotaryEmbedding", "Add"};
const char* const kKernelNames[] = {"mm",   "add",   "mul",       "softmax",
                                    "silu", "rsqrt", "transpose", "cat"};

void check(int rc, const std::string& what) {
    if (rc != 0) throw std::runtime_error("cannot write " + what + ": " + std::strerror(rc));
}

// A deterministic value in [0, 1) for a few integers.
double noise(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full ^
                 c * 0x165667B19E3779F9ull;
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 32;
    return static_cast<double>(x >> 11) / static_cast<double>(1ull << 53);
}

format::StructureNode structureOf(const GenOp& op) {
    format::StructureNode node;
    node.opName = op.name + "_" + op.id;
    node.opType = op.type;
    node.inTensors = {node.opName + "_input_0"};
    node.outTensors = {node.opName + "_output_0"};
    for (const auto& child : op.children) node.nodes.push_back(structureOf(child));
    return node;
}

class Writer {
public:
    Writer(const SyntheticDumpOptions& options, SyntheticDumpResult& result)
        : o_(options), r_(result) {}

    void run() {
        r_.root = format::absolutePath(o_.output) + "/atb_dump_data";
        buildTree();
        writeStructure();
        const uint64_t rowsPerRound = 2 * r_.ops;
        r_.rounds = rowsPerRound == 0 ? 0 : (o_.rows + rowsPerRound - 1) / rowsPerRound;
        for (uint64_t round = 0; round < r_.rounds && r_.rows < o_.rows; ++round)
            writeRound(static_cast<int>(round));
        writeStatus();
    }

private:
    void buildTree() {
        const int layers = std::max(1, o_.layers);
        const uint64_t perLayer = std::max<uint64_t>(1, o_.ops / static_cast<uint64_t>(layers));
        const uint64_t extra = o_.ops > perLayer * static_cast<uint64_t>(layers)
                                   ? o_.ops - perLayer * static_cast<uint64_t>(layers)
                                   : 0;
        for (int l = 0; l < layers; ++l) {
            GenOp layer;
            layer.id = std::to_string(l);
            layer.name = "layers." + std::to_string(l);
            layer.type = "DecoderLayer";
            layer.namePath = layer.name;
            layer.relDir = layer.id + "_" + layer.name;
            layer.layer = l;
            const uint64_t n = perLayer + (static_cast<uint64_t>(l) < extra ? 1 : 0);
            const uint64_t rest = n - 1;
            const uint64_t operations =
                rest == 0 ? 0
                          : std::max<uint64_t>(
                                1, static_cast<uint64_t>(std::lround(std::sqrt(double(rest)))));
            const uint64_t kernels = rest - operations;
            for (uint64_t j = 0; j < operations; ++j) {
                GenOp op;
                op.id = layer.id + "_" + std::to_string(j);
                op.name = kOperationNames[j % 6];
                if (j >= 6) op.name += std::to_string(j / 6);
                op.type = kOperationTypes[j % 6];
                op.namePath = layer.namePath + "/" + op.name;
                op.relDir = layer.relDir + "/" + std::to_string(j) + "_" + op.name;
                op.layer = l;
                op.depth = 1;
                const uint64_t k = kernels / operations + (j < kernels % operations ? 1 : 0);
                for (uint64_t m = 0; m < k; ++m) {
                    GenOp kernel;
                    kernel.id = op.id + "_" + std::to_string(m);
                    kernel.name = kKernelNames[m % 8];
                    kernel.type = "aten::" + kernel.name;
                    kernel.namePath = op.namePath + "/" + kernel.name;
                    kernel.relDir = op.relDir + "/" + std::to_string(m) + "_" + kernel.name;
                    kernel.layer = l;
                    kernel.depth = 2;
                    op.children.push_back(std::move(kernel));
                }
                layer.children.push_back(std::move(op));
            }
            r_.ops += n;
            tree_.push_back(std::move(layer));
        }
    }

    void writeStructure() {
        format::ModelStructure model;
        model.modelName = "SyntheticModel";
        model.inTensors = {"SyntheticModel_input_0"};
        for (const auto& layer : tree_) {
            format::StructureNode node = structureOf(layer);
            const std::string layerFile = r_.root + "/info/layer/" + o_.devicePid + "/" +
                                          format::safeFileComponent(layer.name) + "_" + layer.id +
                                          ".json";
            check(format::makeDirectories(r_.root + "/info/layer/" + o_.devicePid), "info/layer");
            check(format::writeFileAtomically(layerFile, node.toJson().dump()), layerFile);
            model.nodes.push_back(std::move(node));
        }
        check(format::makeDirectories(r_.root + "/info/model/" + o_.devicePid), "info/model");
        const std::string modelFile =
            r_.root + "/info/model/" + o_.devicePid + "/SyntheticModel.json";
        check(format::writeFileAtomically(modelFile, model.toJson().dump()), modelFile);
    }

    // Layers at or after the planted overflow, in the planted round.
    bool overflows(int layer, int round) const {
        return round == o_.nanRound && o_.nanLayer >= 0 && layer == o_.nanLayer;
    }
    bool poisoned(int layer, int round) const {
        return round == o_.nanRound && o_.nanLayer >= 0 && layer > o_.nanLayer;
    }

    void statsFor(const GenOp& op, int round, bool isOutput, format::StatRow& row) {
        const double u = noise(serial_, static_cast<uint64_t>(round), isOutput);
        const double scale = 1.0 + 0.08 * op.layer + 0.01 * round;
        row.max = scale * (1.5 + u);
        row.min = -scale * (1.2 + 0.8 * noise(serial_, round, 7));
        row.mean = (u - 0.5) * 0.02 * scale;
        row.norm = scale * (20.0 + 10.0 * u) / (1 + op.depth);
        if (poisoned(op.layer, round)) {
            row.max = row.min = row.mean = row.norm = std::nan("");
        } else if (overflows(op.layer, round) && isOutput) {
            row.max = HUGE_VAL;
            row.mean = HUGE_VAL;
            row.norm = HUGE_VAL;
        }
    }

    // A 16x64 float tensor whose values follow the op, round and planted anomaly.
    std::vector<float> tensorData(const GenOp& op, int round, bool isOutput) const {
        std::vector<float> data(16 * 64);
        const double scale = 1.0 + 0.08 * op.layer + 0.01 * round;
        for (size_t i = 0; i < data.size(); ++i) {
            const double r = static_cast<double>(i / 64), c = static_cast<double>(i % 64);
            data[i] = static_cast<float>(
                scale * (std::sin(0.3 * c + 0.7 * r + op.layer) + 0.4 * std::cos(0.11 * c * r)) -
                (isOutput ? 0.0 : 0.2));
        }
        if (poisoned(op.layer, round)) {
            for (size_t i = 0; i < data.size(); i += 7)
                data[i] = std::numeric_limits<float>::quiet_NaN();
        } else if (overflows(op.layer, round) && isOutput) {
            for (size_t i = 3; i < data.size(); i += 97)
                data[i] = std::numeric_limits<float>::infinity();
        }
        return data;
    }

    void emitRow(const GenOp& op, int round, bool isOutput) {
        if (r_.rows >= o_.rows) return;
        format::StatRow row;
        row.devicePid = o_.devicePid;
        row.round = round;
        row.opName = op.namePath;
        row.opType = op.type;
        row.opId = op.id;
        row.isOutput = isOutput;
        row.index = "0";
        row.dtype = "float";
        row.format = "nd";
        row.shape = op.depth == 0 ? "1x16x64" : "16x64";
        if (o_.tensors && op.depth == 0) {
            const auto data = tensorData(op, round, isOutput);
            const auto stats =
                format::computeTensorStats(format::DType::Float, data.data(), data.size());
            row.shape = "16x64";
            row.max = stats.max;
            row.min = stats.min;
            row.mean = stats.mean;
            row.norm = stats.norm;
            format::BinHeader header;
            header.dims = {16, 64};
            header.dataLength = data.size() * sizeof(float);
            const std::string dir = roundDir_ + "/" + op.relDir + (isOutput ? "/after" : "/before");
            check(format::makeDirectories(dir), dir);
            row.tensorPath = dir + (isOutput ? "/outtensor0.bin" : "/intensor0.bin");
            check(format::writeFileAtomically(row.tensorPath, format::makeBinHeader(header),
                                              data.data(), header.dataLength),
                  row.tensorPath);
            ++r_.tensorFiles;
            r_.bytes += header.dataLength;
        } else {
            statsFor(op, round, isOutput, row);
        }
        csv_ += format::formatStatRow(row);
        ++r_.rows;
        ++serial_;
        if (csv_.size() > (4u << 20)) flush();
    }

    void walk(const GenOp& op, int round) {
        emitRow(op, round, false);
        for (const auto& child : op.children) walk(child, round);
        emitRow(op, round, true);
    }

    void flush() {
        if (csv_.empty()) return;
        if (std::fwrite(csv_.data(), 1, csv_.size(), file_) != csv_.size())
            throw std::runtime_error("cannot write " + roundDir_ + "/statistic.csv");
        r_.bytes += csv_.size();
        csv_.clear();
    }

    void writeRound(int round) {
        roundDir_ = r_.root + "/data/" + o_.devicePid + "/" + std::to_string(round);
        check(format::makeDirectories(roundDir_), roundDir_);
        const std::string path = roundDir_ + "/statistic.csv";
        file_ = std::fopen(path.c_str(), "wb");
        if (!file_) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
        csv_ = std::string(format::kStatisticCsvHeader) + "\n";
        serial_ = 0;
        for (const auto& layer : tree_) walk(layer, round);
        flush();
        std::fclose(file_);
        file_ = nullptr;
    }

    void writeStatus() {
        format::ProcessDumpStatus status;
        const size_t underscore = o_.devicePid.find('_');
        status.pid = std::stoll(
            underscore == std::string::npos ? o_.devicePid : o_.devicePid.substr(underscore + 1));
        status.device =
            underscore == std::string::npos ? -1 : std::stoi(o_.devicePid.substr(0, underscore));
        status.state = o_.complete ? format::DumpState::Complete : format::DumpState::Running;
        status.command = "synthetic dump";
        status.started = status.updated = format::isoTimestampNow();
        status.rows = r_.rows;
        status.files = r_.tensorFiles + r_.rounds;
        status.bytes = r_.bytes;
        check(format::updateStatusFile(r_.root, status), "probe_status.json");
    }

    const SyntheticDumpOptions& o_;
    SyntheticDumpResult& r_;
    std::vector<GenOp> tree_;
    std::string roundDir_, csv_;
    std::FILE* file_ = nullptr;
    uint64_t serial_ = 0;
};

}  // namespace

SyntheticDumpResult writeSyntheticDump(const SyntheticDumpOptions& options) {
    SyntheticDumpResult result;
    Writer(options, result).run();
    return result;
}

SyntheticPair writeSyntheticPair(SyntheticDumpOptions options, const std::string& directory,
                                 int nanLayer, int nanRound) {
    SyntheticPair pair;
    options.output = directory + "/reference";
    options.nanLayer = options.nanRound = -1;
    pair.reference = writeSyntheticDump(options);
    options.output = directory + "/candidate";
    options.nanLayer = nanLayer;
    options.nanRound = nanRound;
    pair.candidate = writeSyntheticDump(options);
    return pair;
}

}  // namespace probe::synthetic
