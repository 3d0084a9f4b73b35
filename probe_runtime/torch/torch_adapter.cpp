// The PyTorch adapter: observes aten ops through at::RecordFunction and feeds the runtime
// core through its C API. Loaded into a Python process by probe_studio (torch.ops.load_library)
// or preloaded into a native libtorch program.
//
// Structure: the Python part reports nn.Module boundaries (modules called by the outermost
// module are layer-level ops, nested modules their children); aten ops become children of the
// innermost module, aten ops inside aten ops kernels. Backward nodes are linked to the layer of
// their forward op by autograd's sequence number and grouped under "<layer>.backward" layer ops.
//
// Cost while the probe sleeps: the RecordFunction callback is not registered at all; module
// boundaries still count rounds (a few atomic loads and a map lookup each).
// Nothing here may throw into PyTorch: every entry point catches everything.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <torch/library.h>
#include <torch/version.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "probe/probe.h"

#define PROBE_TORCH_API extern "C" __attribute__((visibility("default")))

namespace probe::torch_adapter {
namespace {

// ---------------------------------------------------------------------------------------------
// Types

int dtypeCode(c10::ScalarType type) {
    switch (type) {
        case c10::ScalarType::Float: return PROBE_DTYPE_FLOAT;
        case c10::ScalarType::Half: return PROBE_DTYPE_FLOAT16;
        case c10::ScalarType::BFloat16: return PROBE_DTYPE_BF16;
        case c10::ScalarType::Double: return PROBE_DTYPE_DOUBLE;
        case c10::ScalarType::Char: return PROBE_DTYPE_INT8;
        case c10::ScalarType::Byte: return PROBE_DTYPE_UINT8;
        case c10::ScalarType::Short: return PROBE_DTYPE_INT16;
        case c10::ScalarType::Int: return PROBE_DTYPE_INT32;
        case c10::ScalarType::Long: return PROBE_DTYPE_INT64;
        case c10::ScalarType::Bool: return PROBE_DTYPE_BOOL;
        case c10::ScalarType::ComplexFloat: return PROBE_DTYPE_COMPLEX64;
        case c10::ScalarType::ComplexDouble: return PROBE_DTYPE_COMPLEX128;
        default: return -1;
    }
}

// ---------------------------------------------------------------------------------------------
// Per-thread state, parallel to the runtime's op stack for the ops this adapter began.

enum class FrameKind : uint8_t { Module, Aten, Passive, BackwardNode };

struct Frame {
    FrameKind kind;
    bool observeChildren;  // the runtime looks into this op's children
};

struct LayerInfo {
    std::string name, type;
};

struct ThreadState {
    std::vector<Frame> frames;
    bool inRoot = false;
    std::unordered_map<std::string, int> rootOpOccurrences;  // root-level aten ops per root call
    int currentLayer = -1;                                    // forward layer op being executed
    int backwardLayer = -1;                                   // open "<layer>.backward" op
    std::unordered_map<int, int> backwardOccurrences;         // per backward pass
};

thread_local ThreadState tls;

// Forward op sequence numbers -> the layer op they ran in, for backward attribution.
std::mutex gLayersMutex;
std::vector<LayerInfo> gLayers;
std::unordered_map<std::string, int> gLayerIndex;
std::unordered_map<int64_t, int> gSequenceToLayer;
constexpr size_t kMaxSequenceEntries = 4u << 20;

std::atomic<uint64_t> gSeenGeneration{0};
std::mutex gCallbackMutex;
at::CallbackHandle gCallback = at::INVALID_CALLBACK_HANDLE;
std::atomic<bool> gTimeReportingErrors{true};

void reportFailure(const char* where, const char* what) {
    // Rate-limited: one line per kind of failure is enough for a person.
    static std::mutex mutex;
    static std::unordered_map<std::string, int> seen;
    std::lock_guard<std::mutex> lock(mutex);
    if (seen[where]++ < 3) std::fprintf(stderr, "[probe] torch adapter: %s: %s (the model continues)\n", where, what);
}

int layerIndexFor(const std::string& name, const std::string& type) {
    std::lock_guard<std::mutex> lock(gLayersMutex);
    auto [it, inserted] = gLayerIndex.try_emplace(name, static_cast<int>(gLayers.size()));
    if (inserted) gLayers.push_back({name, type});
    return it->second;
}

LayerInfo layerInfo(int index) {
    std::lock_guard<std::mutex> lock(gLayersMutex);
    return index >= 0 && index < static_cast<int>(gLayers.size()) ? gLayers[static_cast<size_t>(index)] : LayerInfo{};
}

// ---------------------------------------------------------------------------------------------
// Tensors

uint64_t bufferIdOf(const at::Tensor& tensor);

// Reports one tensor of the runtime's top op: with its data (made contiguous, on the CPU) when
// `withData`, else its metadata and buffer identity only.
void reportTensor(int io, int index, const char* argName, const at::Tensor& tensor, bool withData) {
    if (!tensor.defined() || tensor.is_sparse() || tensor.is_mkldnn() || tensor.is_quantized()) return;
    const int code = dtypeCode(tensor.scalar_type());
    if (code < 0) return;
    const auto sizes = tensor.sizes();
    std::vector<int64_t> dims(sizes.begin(), sizes.end());
    const uint64_t bufferId = bufferIdOf(tensor);
    const uint64_t nbytes = static_cast<uint64_t>(tensor.numel()) * tensor.element_size();
    if (!withData || !tensor.has_storage()) {
        probe_op_tensor_ex(io, index, argName, code, PROBE_FORMAT_ND, dims.data(), static_cast<int>(dims.size()), nullptr,
                           nbytes, bufferId);
        return;
    }
    // Our own ATen calls must neither be recorded (re-entrance) nor tracked by autograd.
    at::DisableRecordFunctionGuard noRecord;
    c10::AutoGradMode noGrad(false);
    at::Tensor host = tensor;
    if (!host.device().is_cpu()) host = host.cpu();
    if (host.is_conj()) host = host.resolve_conj();
    if (host.is_neg()) host = host.resolve_neg();
    if (!host.is_contiguous()) host = host.contiguous();
    probe_op_tensor_ex(io, index, argName, code, PROBE_FORMAT_ND, dims.data(), static_cast<int>(dims.size()),
                       host.data_ptr(), nbytes, bufferId);
}

// Argument names of an aten op from its schema, cached by operator name.
const std::vector<std::string>* argumentNames(const at::RecordFunction& fn, bool outputs) {
    thread_local std::unordered_map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> cache;
    const char* name = fn.name();
    auto it = cache.find(name);
    if (it == cache.end()) {
        std::pair<std::vector<std::string>, std::vector<std::string>> names;
        if (auto op = fn.operator_name()) {
            if (auto handle = c10::Dispatcher::singleton().findOp(*op)) {
                if (handle->hasSchema()) {
                    for (const auto& a : handle->schema().arguments()) names.first.push_back(a.name());
                    for (const auto& r : handle->schema().returns()) names.second.push_back(r.name());
                }
            }
        }
        it = cache.emplace(name, std::move(names)).first;
    }
    return outputs ? &it->second.second : &it->second.first;
}

uint64_t bufferIdOf(const at::Tensor& tensor) {
    if (!tensor.defined() || !tensor.has_storage()) return 0;
    return reinterpret_cast<uintptr_t>(tensor.storage().data()) +
           static_cast<uint64_t>(tensor.storage_offset()) * tensor.element_size();
}

// Reports every tensor among `values` (a Tensor or a list of tensors per value) and returns
// the non-tensor ones as the op's parameters. With `overwrites`, the op replaces its first
// argument without reading it (copy_, fill_, ...): that tensor's old content, often
// uninitialised memory, goes as metadata only, as does any "out" argument.
nlohmann::ordered_json reportValues(int io, c10::ArrayRef<const c10::IValue> values, const std::vector<std::string>* names,
                                    bool withData, bool overwrites = false) {
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    int tensorIndex = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        const c10::IValue& v = values[i];
        const std::string argName = names && i < names->size() ? (*names)[i] : std::string();
        if (v.isTensor()) {
            const at::Tensor& tensor = v.toTensor();
            const bool data = withData && !((overwrites && i == 0) || argName == "out");
            reportTensor(io, tensorIndex++, argName.empty() ? nullptr : argName.c_str(), tensor, data);
        } else if (v.isTensorList()) {
            const auto list = v.toTensorList();
            for (size_t k = 0; k < list.size(); ++k) {
                const std::string itemName = argName.empty() ? std::string() : argName + std::to_string(k);
                reportTensor(io, tensorIndex++, itemName.empty() ? nullptr : itemName.c_str(), list.get(k), withData);
            }
        } else if (io == PROBE_INPUT) {
            const std::string key = argName.empty() ? "arg" + std::to_string(i) : argName;
            if (v.isNone()) params[key] = nullptr;
            else if (v.isBool()) params[key] = v.toBool();
            else if (v.isInt()) params[key] = v.toInt();
            else if (v.isDouble()) params[key] = v.toDouble();
            else if (v.isString()) params[key] = v.toStringRef();
            else if (v.isIntList()) params[key] = v.toIntVector();
            else if (v.isDoubleList()) params[key] = v.toDoubleVector();
            else if (v.isBoolList()) {
                std::vector<bool> bools;
                for (bool b : v.toBoolList()) bools.push_back(b);
                params[key] = bools;
            } else if (v.isScalar()) params[key] = v.toScalar().toDouble();
            else if (v.isDevice()) params[key] = v.toDevice().str();
            else params[key] = v.tagKind();
        }
    }
    return params;
}

bool startsWith(const char* text, const char* prefix) { return std::strncmp(text, prefix, std::strlen(prefix)) == 0; }

// Factories whose outputs hold uninitialised memory: their statistics would be noise.
bool outputIsUninitialised(const char* name) {
    return std::strcmp(name, "aten::empty") == 0 || std::strcmp(name, "aten::empty_like") == 0 ||
           std::strcmp(name, "aten::empty_strided") == 0 || std::strcmp(name, "aten::new_empty") == 0 ||
           std::strcmp(name, "aten::new_empty_strided") == 0 || std::strcmp(name, "aten::resize_") == 0;
}

// In-place ops that replace their first argument without reading it: its content before the
// op is meaningless (typically a fresh, uninitialised output buffer).
bool overwritesFirstArgument(const char* name) {
    static const char* const kOverwriting[] = {"aten::copy_",    "aten::fill_",      "aten::zero_",
                                               "aten::normal_",  "aten::uniform_",   "aten::bernoulli_",
                                               "aten::random_",  "aten::exponential_", "aten::geometric_",
                                               "aten::cauchy_",  "aten::log_normal_", "aten::resize_",
                                               "aten::set_"};
    for (const char* op : kOverwriting)
        if (std::strcmp(name, op) == 0) return true;
    return false;
}

// ---------------------------------------------------------------------------------------------
// Ops

struct AdapterContext : at::ObserverContext {};

int pushFrame(FrameKind kind) {
    const int wants = probe_op_wants();
    tls.frames.push_back({kind, (wants & PROBE_WANTS_CHILDREN) != 0});
    return wants;
}

void closeBackwardLayer() {
    if (tls.backwardLayer < 0) return;
    // The backward layer op is the bottom frame; anything above it was closed with its node.
    while (!tls.frames.empty()) {
        tls.frames.pop_back();
        probe_op_end();
    }
    tls.backwardLayer = -1;
}

// Opens "<layer>.backward" as the layer-level op for the backward nodes of `layer`. Its inputs
// are the gradients flowing into the layer's first node: those of the layer's outputs.
void openBackwardLayer(int layer, c10::ArrayRef<const c10::IValue> incomingGradients) {
    closeBackwardLayer();
    const LayerInfo info = layerInfo(layer);
    const int occurrence = tls.backwardOccurrences[layer]++;
    const std::string name = info.name + ".backward" + (occurrence ? "_" + std::to_string(occurrence) : std::string());
    probe_op_begin_kind(name.c_str(), (info.type + "Backward").c_str(), nullptr, PROBE_OP_OPERATION);
    const int wants = pushFrame(FrameKind::Module);
    if (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA))
        reportValues(PROBE_INPUT, incomingGradients, nullptr, (wants & PROBE_WANTS_DATA) != 0);
    tls.backwardLayer = layer;
}

std::unique_ptr<at::ObserverContext> onOpStart(const at::RecordFunction& fn) {
    try {
        const char* name = fn.name();
        if (startsWith(name, "probe::") || startsWith(name, "autograd::engine::evaluate_function")) return nullptr;
        const bool backward = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
        int kind = PROBE_OP_OPERATION;
        std::string opName, opType = name;
        if (backward) {
            // A backward node: under the backward op of the layer its forward op ran in.
            int layer = -1;
            {
                std::lock_guard<std::mutex> lock(gLayersMutex);
                auto it = gSequenceToLayer.find(fn.seqNr());
                if (it != gSequenceToLayer.end()) {
                    layer = it->second;
                    gSequenceToLayer.erase(it);
                }
            }
            if (layer >= 0 && tls.backwardLayer != layer && (tls.frames.empty() || tls.backwardLayer >= 0)) {
                // The first node of another layer: its "<layer>.backward" op becomes the open
                // layer-level op (a backward run inside a forward module stays nested there).
                openBackwardLayer(layer, fn.inputs());
            }
            // Nodes of no known layer (the loss outside the model) are skipped; those that follow
            // a layer's nodes (accumulating its parameters' gradients) join that layer's op.
            if (tls.frames.empty()) return nullptr;
            if (!tls.frames.back().observeChildren) {
                tls.frames.push_back({FrameKind::Passive, false});
                return std::make_unique<AdapterContext>();
            }
            opName = name;
            opType = std::string("autograd::") + name;
        } else {
            const bool layerLevel = tls.frames.empty();
            if (layerLevel) {
                if (!tls.inRoot) return nullptr;  // outside the model (data loading, the loss, ...)
                // An aten op called by the outermost module itself: a layer-level op.
                const std::string shortName = startsWith(name, "aten::") ? name + 6 : name;
                opName = shortName + "_" + std::to_string(tls.rootOpOccurrences[shortName]++);
                tls.currentLayer = layerIndexFor(opName, opType);
            }
            // Remember which layer this op's autograd node belongs to, even when nobody looks
            // inside the layer now: its backward may be dumped.
            if (fn.seqNr() >= 0 && tls.currentLayer >= 0) {
                std::lock_guard<std::mutex> lock(gLayersMutex);
                if (gSequenceToLayer.size() > kMaxSequenceEntries) gSequenceToLayer.clear();
                gSequenceToLayer[fn.seqNr()] = tls.currentLayer;
            }
            if (!layerLevel) {
                const Frame& parent = tls.frames.back();
                if (!parent.observeChildren) {
                    tls.frames.push_back({FrameKind::Passive, false});
                    return std::make_unique<AdapterContext>();
                }
                opName = startsWith(name, "aten::") ? name + 6 : name;
                if (parent.kind == FrameKind::Aten) kind = PROBE_OP_KERNEL;
            }
        }
        probe_op_begin_kind(opName.c_str(), opType.c_str(), nullptr, kind);
        const int wants = pushFrame(backward ? FrameKind::BackwardNode : FrameKind::Aten);
        if (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA)) {
            auto params = reportValues(PROBE_INPUT, fn.inputs(), backward ? nullptr : argumentNames(fn, false),
                                       (wants & PROBE_WANTS_DATA) != 0, !backward && overwritesFirstArgument(name));
            if (!params.empty()) probe_op_set_param(params.dump().c_str());
        }
        return std::make_unique<AdapterContext>();
    } catch (const std::exception& e) {
        reportFailure("op start", e.what());
    } catch (...) {
        reportFailure("op start", "unknown failure");
    }
    return nullptr;
}

void onOpEnd(const at::RecordFunction& fn, at::ObserverContext* context) {
    if (!context) return;
    try {
        if (tls.frames.empty()) return;
        const Frame frame = tls.frames.back();
        tls.frames.pop_back();
        if (frame.kind == FrameKind::Passive) return;
        const int wants = probe_op_wants();
        if (outputIsUninitialised(fn.name())) {
            if (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA))
                reportValues(PROBE_OUTPUT, c10::ArrayRef<const c10::IValue>(fn.outputs().data(), fn.outputs().size()),
                             nullptr, /*withData=*/false);
        } else if (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA))
            reportValues(PROBE_OUTPUT, c10::ArrayRef<const c10::IValue>(fn.outputs().data(), fn.outputs().size()), frame.kind == FrameKind::Aten ? argumentNames(fn, true) : nullptr,
                         (wants & PROBE_WANTS_DATA) != 0);
        probe_op_end();
        if (tls.frames.empty()) tls.currentLayer = -1;
    } catch (const std::exception& e) {
        reportFailure("op end", e.what());
    } catch (...) {
        reportFailure("op end", "unknown failure");
    }
}

// Registers the RecordFunction callback while the probe is awake, removes it while it sleeps.
void syncCallbackWithProbeState() {
    const uint64_t generation = probe_state_generation();
    if (generation == gSeenGeneration.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(gCallbackMutex);
    gSeenGeneration.store(generation, std::memory_order_release);
    const bool awake = probe_is_awake() != 0;
    if (awake && gCallback == at::INVALID_CALLBACK_HANDLE) {
        gCallback = at::addGlobalCallback(at::RecordFunctionCallback(onOpStart, onOpEnd)
                                              .needsInputs(true)
                                              .needsOutputs(true)
                                              .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
    } else if (!awake && gCallback != at::INVALID_CALLBACK_HANDLE) {
        at::removeCallback(gCallback);
        gCallback = at::INVALID_CALLBACK_HANDLE;
    }
}

// ---------------------------------------------------------------------------------------------
// Custom ops called from Python

int64_t reportTensorsOp(int64_t io, const std::vector<at::Tensor>& tensors, const std::vector<std::string>& names) {
    try {
        const int wants = probe_op_wants();
        if (!(wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA))) return 0;
        for (size_t i = 0; i < tensors.size(); ++i) {
            const std::string& name = i < names.size() ? names[i] : std::string();
            reportTensor(io == 1 ? PROBE_OUTPUT : PROBE_INPUT, static_cast<int>(i), name.empty() ? nullptr : name.c_str(),
                         tensors[i], (wants & PROBE_WANTS_DATA) != 0);
        }
        return static_cast<int64_t>(tensors.size());
    } catch (const std::exception& e) {
        reportFailure("module tensors", e.what());
    } catch (...) {
        reportFailure("module tensors", "unknown failure");
    }
    return -1;
}

}  // namespace
}  // namespace probe::torch_adapter

TORCH_LIBRARY(probe, m) {
    m.def("report_tensors(int io, Tensor[] tensors, str[] names) -> int", &probe::torch_adapter::reportTensorsOp);
}

// ---------------------------------------------------------------------------------------------
// C functions for the Python part (ctypes). None throws.

using namespace probe::torch_adapter;

PROBE_TORCH_API const char* probe_torch_built_version(void) {
    return TORCH_VERSION;
}

// The outermost module's forward begins / ends on this thread.
PROBE_TORCH_API int probe_torch_root_begin(const char* model_name) {
    try {
        syncCallbackWithProbeState();
        closeBackwardLayer();
        tls.inRoot = true;
        tls.rootOpOccurrences.clear();
        static thread_local std::string lastModel;
        if (model_name && lastModel != model_name) {
            lastModel = model_name;
            probe_report_model(model_name, nullptr);
        }
        return 0;
    } catch (...) {
        return -1;
    }
}

PROBE_TORCH_API int probe_torch_root_end(void) {
    tls.inRoot = false;
    return 0;
}

// A module's forward begins. Returns the runtime's wants flags for it (PROBE_WANTS_*).
PROBE_TORCH_API int probe_torch_module_begin(const char* name, const char* type) {
    try {
        syncCallbackWithProbeState();
        if (tls.frames.empty()) {
            closeBackwardLayer();
            probe_op_begin_kind(name, type, nullptr, PROBE_OP_OPERATION);
            const int wants = pushFrame(FrameKind::Module);
            tls.currentLayer = layerIndexFor(name, type ? type : name);
            return wants;
        }
        if (!tls.frames.back().observeChildren) {
            tls.frames.push_back({FrameKind::Passive, false});
            return 0;
        }
        probe_op_begin_kind(name, type, nullptr, PROBE_OP_OPERATION);
        return pushFrame(FrameKind::Module);
    } catch (...) {
        return 0;
    }
}

PROBE_TORCH_API int probe_torch_module_end(void) {
    try {
        if (tls.frames.empty()) return -1;
        const Frame frame = tls.frames.back();
        tls.frames.pop_back();
        if (frame.kind != FrameKind::Passive) probe_op_end();
        if (tls.frames.empty()) tls.currentLayer = -1;
        return 0;
    } catch (...) {
        return -1;
    }
}

// Closes ops left open when an exception unwound through modules: keeps `depth` frames.
PROBE_TORCH_API int probe_torch_unwind_to(int depth) {
    try {
        while (static_cast<int>(tls.frames.size()) > depth && !tls.frames.empty()) {
            const Frame frame = tls.frames.back();
            tls.frames.pop_back();
            if (frame.kind != FrameKind::Passive) probe_op_end();
        }
        if (tls.frames.empty()) tls.currentLayer = -1;
        return 0;
    } catch (...) {
        return -1;
    }
}

PROBE_TORCH_API int probe_torch_depth(void) { return static_cast<int>(tls.frames.size()); }

// A backward pass (torch.autograd.backward / grad) begins / ends on this thread.
PROBE_TORCH_API int probe_torch_backward_begin(void) {
    try {
        syncCallbackWithProbeState();
        closeBackwardLayer();
        tls.backwardOccurrences.clear();
        return 0;
    } catch (...) {
        return -1;
    }
}

PROBE_TORCH_API int probe_torch_backward_end(void) {
    try {
        closeBackwardLayer();
        return 0;
    } catch (...) {
        return -1;
    }
}

// Whether the RecordFunction callback is registered (for tests and the benchmark).
PROBE_TORCH_API int probe_torch_observing_ops(void) {
    std::lock_guard<std::mutex> lock(gCallbackMutex);
    return gCallback != at::INVALID_CALLBACK_HANDLE ? 1 : 0;
}
