// A small layered model that drives the C API the way an inference engine does: layer-level
// ops (WordEmbedding, decoder layers, LmHead), their operations, and kernels below those; real
// arithmetic, so data flows from op to op through shared buffers. It records every tensor it
// handed over with data, so tests can check the files against what the engine itself saw.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace probe::test {

struct CapturedTensor {
    std::string namePath;  // "Decoder_layer_0/Attention/MatMulKernel"
    std::string opType;
    bool output = false;
    int index = 0;
    std::string argName;
    int dtype = 0;
    int format = 2;
    std::vector<int64_t> dims;
    std::vector<uint8_t> bytes;
    // Where the engine itself knows the op to be: its layer's position among the model's
    // layer ops (in first-seen order), the child indices below the layer, the op names on the
    // way, and the execution (round).
    int layerOrdinal = 0;
    std::vector<int> childPath;
    std::vector<std::string> names;
    int64_t round = 0;

    // "2_1_0" given the layer's id.
    std::string idPath(int layerId) const;
    // "2_Decoder_layer_0/1_Attention/0_MatMulKernel" given the layer's id.
    std::string relativeDir(int layerId) const;
};

struct NativeModelOptions {
    std::string prefix;  // prepended to layer names, so two threads can run two models
    int layers = 2;      // decoder layers
    int hidden = 8;
    int seqLen = 4;
    int vocab = 16;
    int nanInLayer = -1;  // a decoder layer whose MLP output gets a NaN (and an inf)
    int nudgeLayer = -1;  // a decoder layer with one weight element 5% larger (a second run)
    bool useExplicitRounds = false;  // probe_set_round(run index) before each run()
    bool layerNamesShared =
        false;  // all decoder layers named "Decoder_layer" (needs explicit rounds)
};

class NativeModel {
public:
    explicit NativeModel(NativeModelOptions options);
    // One execution of the model (one token step).
    void run();
    int runs() const { return runs_; }

    // Tensors handed over with data and accepted (probe_op_tensor returned 1), in order.
    const std::vector<CapturedTensor>& captured() const { return captured_; }
    void clearCaptured() { captured_.clear(); }
    // Every op begun: its name path and what probe_op_begin returned.
    struct Begin {
        std::string namePath;
        int wanted;
    };
    const std::vector<Begin>& begins() const { return begins_; }
    // Layer-level op names in execution order.
    std::vector<std::string> layerNames() const;

private:
    void beginOp(const std::string& name, const std::string& type, const std::string& param,
                 int kind = 0);
    void endOp();
    void tensor(bool output, int index, const char* arg, int dtype,
                const std::vector<int64_t>& dims, const void* data, uint64_t nbytes);
    void tensorF(bool output, int index, const char* arg, const std::vector<int64_t>& dims,
                 const std::vector<float>& v);

    void embedding();
    void decoderLayer(int layer);
    void lmHead();

    NativeModelOptions options_;
    int runs_ = 0;
    std::vector<std::string> path_;
    std::vector<std::string> types_;
    std::vector<int> childCounters_;  // children begun so far, per open op
    std::vector<int> childPath_;      // indices of the open ops below the layer
    int layerOrdinal_ = 0;
    int decoderSeen_ = 0;
    std::vector<int> wanted_;
    std::vector<CapturedTensor> captured_;
    std::vector<Begin> begins_;

    // Buffers (their addresses are the tensors' identities).
    std::vector<int64_t> tokens_;
    std::vector<float> embeddingWeight_, hidden_, normed_, query_, attention_, mlp_, next_, logits_;
    std::vector<uint16_t> scoresHalf_, mlpBf16_;
    std::vector<uint8_t> mask_;
    std::vector<int32_t> nextToken_;
    std::vector<std::vector<float>> layerWeights_;
};

}  // namespace probe::test
