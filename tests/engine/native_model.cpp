// SPDX-License-Identifier: GPL-3.0-or-later
#include "native_model.h"

#include <cmath>
#include <cstring>

#include "probe/probe.h"

namespace probe::test {
namespace {

uint16_t floatToHalf(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exponent = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
    uint32_t mantissa = x & 0x7fffffu;
    if (((x >> 23) & 0xff) == 0xff)
        return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0));
    if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
    if (exponent <= 0)
        return static_cast<uint16_t>(sign);  // flush tiny values: fine for a test model
    // round to nearest even
    uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(half);
}

uint16_t floatToBf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40u);
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
}

float pseudoRandom(uint64_t& state) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>((state >> 40) & 0xffff) / 32768.0f - 1.0f;
}

}  // namespace

NativeModel::NativeModel(NativeModelOptions options) : options_(std::move(options)) {
    uint64_t state = 42;
    embeddingWeight_.resize(static_cast<size_t>(options_.vocab * options_.hidden));
    for (auto& w : embeddingWeight_) w = pseudoRandom(state);
    layerWeights_.resize(static_cast<size_t>(options_.layers));
    for (auto& weights : layerWeights_) {
        weights.resize(static_cast<size_t>(options_.hidden * options_.hidden));
        for (auto& w : weights) w = pseudoRandom(state) * 0.5f;
    }
    if (options_.nudgeLayer >= 0 && options_.nudgeLayer < options_.layers)
        layerWeights_[static_cast<size_t>(options_.nudgeLayer)]
                     [static_cast<size_t>(options_.hidden + 3)] *= 1.05f;
    const size_t n = static_cast<size_t>(options_.seqLen * options_.hidden);
    tokens_.resize(static_cast<size_t>(options_.seqLen));
    for (auto* v : {&hidden_, &normed_, &query_, &attention_, &mlp_, &next_}) v->resize(n);
    scoresHalf_.resize(n);
    mlpBf16_.resize(n);
    mask_.resize(static_cast<size_t>(options_.seqLen * options_.seqLen));
    logits_.resize(static_cast<size_t>(options_.seqLen * options_.vocab));
    nextToken_.resize(static_cast<size_t>(options_.seqLen));
}

std::vector<std::string> NativeModel::layerNames() const {
    std::vector<std::string> names{options_.prefix + "WordEmbedding"};
    for (int i = 0; i < options_.layers; ++i)
        names.push_back(options_.prefix + (options_.layerNamesShared
                                               ? "Decoder_layer"
                                               : "Decoder_layer_" + std::to_string(i)));
    names.push_back(options_.prefix + "LmHead");
    return names;
}

std::string CapturedTensor::idPath(int layerId) const {
    std::string id = std::to_string(layerId);
    for (int index : childPath) id += "_" + std::to_string(index);
    return id;
}

std::string CapturedTensor::relativeDir(int layerId) const {
    std::string dir = std::to_string(layerId) + "_" + names[0];
    for (size_t i = 0; i < childPath.size(); ++i)
        dir += "/" + std::to_string(childPath[i]) + "_" + names[i + 1];
    return dir;
}

void NativeModel::beginOp(const std::string& name, const std::string& type,
                          const std::string& param, int kind) {
    if (path_.empty()) {
        const auto names = layerNames();
        layerOrdinal_ = 0;
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == name) layerOrdinal_ = static_cast<int>(i);
        if (options_.layerNamesShared && name.find("Decoder_layer") != std::string::npos) {
            // Shared names: the engine's own position of this layer op within the run.
            layerOrdinal_ = 1 + decoderSeen_;
        }
    } else {
        childPath_.push_back(childCounters_.back()++);
    }
    childCounters_.push_back(0);
    path_.push_back(name);
    types_.push_back(type);
    std::string namePath;
    for (size_t i = 0; i < path_.size(); ++i) namePath += (i ? "/" : "") + path_[i];
    const int wanted = probe_op_begin_kind(name.c_str(), type.c_str(),
                                           param.empty() ? nullptr : param.c_str(), kind);
    wanted_.push_back(wanted);
    begins_.push_back({namePath, wanted});
}

void NativeModel::endOp() {
    probe_op_end();
    childCounters_.pop_back();
    if (!childPath_.empty() && path_.size() > 1) childPath_.pop_back();
    path_.pop_back();
    types_.pop_back();
    wanted_.pop_back();
}

void NativeModel::tensor(bool output, int index, const char* arg, int dtype,
                         const std::vector<int64_t>& dims, const void* data, uint64_t nbytes) {
    const bool wanted = wanted_.back() > 0;
    // Like a device engine: copy to the host only when wanted; otherwise report the metadata
    // (with the buffer's identity) when the runtime asks for it.
    if (!wanted) {
        if (probe_op_wants() & PROBE_WANTS_METADATA)
            probe_op_tensor_ex(output ? PROBE_OUTPUT : PROBE_INPUT, index, arg, dtype,
                               PROBE_FORMAT_ND, dims.data(), static_cast<int>(dims.size()), nullptr,
                               nbytes, reinterpret_cast<uintptr_t>(data));
        return;
    }
    const int accepted =
        probe_op_tensor(output ? PROBE_OUTPUT : PROBE_INPUT, index, arg, dtype, PROBE_FORMAT_ND,
                        dims.data(), static_cast<int>(dims.size()), data, nbytes);
    if (accepted != 1) return;
    CapturedTensor t;
    for (size_t i = 0; i < path_.size(); ++i) t.namePath += (i ? "/" : "") + path_[i];
    t.opType = types_.back();
    t.output = output;
    t.index = index;
    t.argName = arg ? arg : "";
    t.dtype = dtype;
    t.dims = dims;
    t.bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + nbytes);
    t.layerOrdinal = layerOrdinal_;
    t.childPath = childPath_;
    t.names = path_;
    t.round = runs_;
    captured_.push_back(std::move(t));
}

void NativeModel::tensorF(bool output, int index, const char* arg, const std::vector<int64_t>& dims,
                          const std::vector<float>& v) {
    tensor(output, index, arg, PROBE_DTYPE_FLOAT, dims, v.data(), v.size() * sizeof(float));
}

void NativeModel::run() {
    if (options_.useExplicitRounds) probe_set_round(runs_);
    for (int i = 0; i < options_.seqLen; ++i)
        tokens_[static_cast<size_t>(i)] = (runs_ * 7 + i * 3) % options_.vocab;
    embedding();
    decoderSeen_ = 0;
    for (int layer = 0; layer < options_.layers; ++layer) decoderLayer(layer);
    lmHead();
    ++runs_;
}

void NativeModel::embedding() {
    const int64_t S = options_.seqLen, H = options_.hidden, V = options_.vocab;
    beginOp(options_.prefix + "WordEmbedding", "WordEmbedding", "{\"axis\":0}");
    tensor(false, 0, "input_ids", PROBE_DTYPE_INT64, {S}, tokens_.data(), tokens_.size() * 8);
    tensorF(false, 1, "weight", {V, H}, embeddingWeight_);
    {
        beginOp("Gather", "GatherOperation", "{\"axis\":0,\"batchDims\":0}");
        tensor(false, 0, nullptr, PROBE_DTYPE_FLOAT, {V, H}, embeddingWeight_.data(),
               embeddingWeight_.size() * 4);
        tensor(false, 1, nullptr, PROBE_DTYPE_INT64, {S}, tokens_.data(), tokens_.size() * 8);
        {
            beginOp("GatherKernel", "GatherKernel", "");
            tensor(false, 0, nullptr, PROBE_DTYPE_FLOAT, {V, H}, embeddingWeight_.data(),
                   embeddingWeight_.size() * 4);
            tensor(false, 1, nullptr, PROBE_DTYPE_INT64, {S}, tokens_.data(), tokens_.size() * 8);
            for (int64_t s = 0; s < S; ++s)
                for (int64_t h = 0; h < H; ++h)
                    hidden_[static_cast<size_t>(s * H + h)] = embeddingWeight_[static_cast<size_t>(
                        tokens_[static_cast<size_t>(s)] * H + h)];
            tensorF(true, 0, nullptr, {S, H}, hidden_);
            endOp();
        }
        tensorF(true, 0, nullptr, {S, H}, hidden_);
        endOp();
    }
    tensorF(true, 0, nullptr, {S, H}, hidden_);
    endOp();
}

void NativeModel::decoderLayer(int layer) {
    const int64_t S = options_.seqLen, H = options_.hidden;
    const auto& W = layerWeights_[static_cast<size_t>(layer)];
    const std::string name =
        options_.prefix +
        (options_.layerNamesShared ? "Decoder_layer" : "Decoder_layer_" + std::to_string(layer));
    beginOp(name, "Decoder_layer", "{\"layerId\":" + std::to_string(layer) + "}");
    tensorF(false, 0, nullptr, {S, H}, hidden_);
    {
        beginOp("RmsNorm", "RmsNormOperation", "{\"epsilon\":1e-06}");
        tensorF(false, 0, nullptr, {S, H}, hidden_);
        beginOp("RmsNormKernel", "RmsNormKernel", "");
        tensorF(false, 0, nullptr, {S, H}, hidden_);
        for (int64_t s = 0; s < S; ++s) {
            double sq = 0;
            for (int64_t h = 0; h < H; ++h)
                sq += hidden_[static_cast<size_t>(s * H + h)] *
                      hidden_[static_cast<size_t>(s * H + h)];
            const float scale =
                static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(H) + 1e-6));
            for (int64_t h = 0; h < H; ++h)
                normed_[static_cast<size_t>(s * H + h)] =
                    hidden_[static_cast<size_t>(s * H + h)] * scale;
        }
        tensorF(true, 0, nullptr, {S, H}, normed_);
        endOp();
        tensorF(true, 0, nullptr, {S, H}, normed_);
        endOp();
    }
    {
        beginOp("Attention", "SelfAttentionOperation", "{\"headNum\":2}");
        for (int64_t i = 0; i < S; ++i)
            for (int64_t j = 0; j < S; ++j) mask_[static_cast<size_t>(i * S + j)] = j <= i;
        tensorF(false, 0, nullptr, {S, H}, normed_);
        tensor(false, 1, "mask", PROBE_DTYPE_BOOL, {S, S}, mask_.data(), mask_.size());
        beginOp("MatMulKernel", "MatMulKernel", "");
        tensorF(false, 0, nullptr, {S, H}, normed_);
        tensorF(false, 1, nullptr, {H, H}, W);
        for (int64_t s = 0; s < S; ++s)
            for (int64_t o = 0; o < H; ++o) {
                float acc = 0;
                for (int64_t h = 0; h < H; ++h)
                    acc +=
                        normed_[static_cast<size_t>(s * H + h)] * W[static_cast<size_t>(h * H + o)];
                query_[static_cast<size_t>(s * H + o)] = acc;
            }
        tensorF(true, 0, nullptr, {S, H}, query_);
        endOp();
        beginOp("SoftmaxKernel", "SoftmaxKernel", "");
        tensorF(false, 0, nullptr, {S, H}, query_);
        for (int64_t s = 0; s < S; ++s) {
            float mx = -INFINITY;
            for (int64_t h = 0; h < H; ++h)
                mx = std::max(mx, query_[static_cast<size_t>(s * H + h)]);
            double total = 0;
            for (int64_t h = 0; h < H; ++h)
                total += std::exp(query_[static_cast<size_t>(s * H + h)] - mx);
            for (int64_t h = 0; h < H; ++h)
                scoresHalf_[static_cast<size_t>(s * H + h)] = floatToHalf(static_cast<float>(
                    std::exp(query_[static_cast<size_t>(s * H + h)] - mx) / total));
        }
        tensor(true, 0, nullptr, PROBE_DTYPE_FLOAT16, {S, H}, scoresHalf_.data(),
               scoresHalf_.size() * 2);
        endOp();
        beginOp("CastKernel", "CastKernel", "{\"dtype\":\"float\"}");
        tensor(false, 0, nullptr, PROBE_DTYPE_FLOAT16, {S, H}, scoresHalf_.data(),
               scoresHalf_.size() * 2);
        for (size_t i = 0; i < attention_.size(); ++i) {
            // exact half -> float
            uint16_t h = scoresHalf_[i];
            const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
            uint32_t bits = e == 0 ? sign : sign | ((e + 112) << 23) | (m << 13);
            std::memcpy(&attention_[i], &bits, 4);
        }
        tensorF(true, 0, nullptr, {S, H}, attention_);
        endOp();
        tensorF(true, 0, nullptr, {S, H}, attention_);
        endOp();
    }
    {
        beginOp("Mlp", "MlpOperation", "{\"activation\":\"gelu\"}");
        tensorF(false, 0, nullptr, {S, H}, attention_);
        beginOp("MatMulKernel", "MatMulKernel", "");
        tensorF(false, 0, nullptr, {S, H}, attention_);
        for (size_t i = 0; i < mlp_.size(); ++i) {
            float v = std::tanh(attention_[i] * 3.0f + hidden_[i]);
            mlpBf16_[i] = floatToBf16(v);
        }
        if (layer == options_.nanInLayer) {
            mlpBf16_[0] = floatToBf16(NAN);
            mlpBf16_[1] = floatToBf16(INFINITY);
        }
        tensor(true, 0, nullptr, PROBE_DTYPE_BF16, {S, H}, mlpBf16_.data(), mlpBf16_.size() * 2);
        endOp();
        beginOp("AddKernel", "AddKernel", "");
        tensor(false, 0, nullptr, PROBE_DTYPE_BF16, {S, H}, mlpBf16_.data(), mlpBf16_.size() * 2);
        tensorF(false, 1, nullptr, {S, H}, hidden_);
        for (size_t i = 0; i < next_.size(); ++i) {
            uint32_t bits = static_cast<uint32_t>(mlpBf16_[i]) << 16;
            float m;
            std::memcpy(&m, &bits, 4);
            next_[i] = hidden_[i] + m;
        }
        tensorF(true, 0, nullptr, {S, H}, next_);
        endOp();
        tensorF(true, 0, nullptr, {S, H}, next_);
        endOp();
    }
    tensorF(true, 0, nullptr, {S, H}, next_);
    endOp();
    hidden_.swap(next_);
    ++decoderSeen_;
}

void NativeModel::lmHead() {
    const int64_t S = options_.seqLen, H = options_.hidden, V = options_.vocab;
    beginOp(options_.prefix + "LmHead", "LmHead", "");
    tensorF(false, 0, nullptr, {S, H}, hidden_);
    for (int64_t s = 0; s < S; ++s) {
        int32_t best = 0;
        for (int64_t v = 0; v < V; ++v) {
            float acc = 0;
            for (int64_t h = 0; h < H; ++h)
                acc += hidden_[static_cast<size_t>(s * H + h)] *
                       embeddingWeight_[static_cast<size_t>(v * H + h)];
            logits_[static_cast<size_t>(s * V + v)] = acc;
            if (acc > logits_[static_cast<size_t>(s * V + best)]) best = static_cast<int32_t>(v);
        }
        nextToken_[static_cast<size_t>(s)] = best;
    }
    tensorF(true, 0, nullptr, {S, V}, logits_);
    tensor(true, 1, "next_token", PROBE_DTYPE_INT32, {S}, nextToken_.data(), nextToken_.size() * 4);
    endOp();
}

}  // namespace probe::test
