// The PyTorch adapter: observes aten ops through at::RecordFunction and feeds the runtime
// core through its C API. Loaded into a Python process by probe_studio (torch.ops.load_library)
// or preloaded into a native libtorch program.
//
// Structure: the Python part reports nn.Module calls (modules called by the outermost module
// are layer-level ops, nested modules their children); aten ops become children of the
// innermost module, aten ops inside aten ops kernels. Backward nodes are linked to the layer of
// their forward op through autograd's sequence numbers (each layer op records the range of
// numbers its forward used) and grouped under "<layer>.backward" layer ops.
//
// Cost: while the probe sleeps the RecordFunction callback is registered only during the
// outermost module's own code (its aten ops are layer-level ops, counted for stable ids and
// rounds) and is off inside every layer; module calls still count rounds. While it is awake the
// callback is thread-local and switched off inside every layer op whose children nobody looks at,
// so dumping layer-level ops costs about as much as their own statistics. Statistics of several
// views of the same memory (a weight seen by linear, t, transpose, ...) are computed once, on the
// memory as it lies. Nothing here may throw into PyTorch: every entry point catches everything.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/SequenceNumber.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>
#include <torch/version.h>

#include "input_users.h"
#include "probe/format/recent_by_address.h"
#include "probe/probe.h"
#include "sequence_ranges.h"

#define PROBE_TORCH_API extern "C" __attribute__((visibility("default")))

namespace probe::torch_adapter {
namespace {

// probe_torch_module_begin's flags beside the PROBE_WANTS_* ones for a layer-level op
// (torch_hooks.py _LAYER_AWAKE, _LAYER_GRAD_ENABLED): the probe is awake, and with it, grad mode is
// on (its input gradients are to be hooked; saves the caller asking torch.is_grad_enabled).
constexpr int kLayerProbeAwake = 1 << 16;
constexpr int kLayerGradEnabled = 1 << 17;

// ---------------------------------------------------------------------------------------------
// Types

int dtypeCode(c10::ScalarType type) {
    switch (type) {
        case c10::ScalarType::Float:
            return PROBE_DTYPE_FLOAT;
        case c10::ScalarType::Half:
            return PROBE_DTYPE_FLOAT16;
        case c10::ScalarType::BFloat16:
            return PROBE_DTYPE_BF16;
        case c10::ScalarType::Double:
            return PROBE_DTYPE_DOUBLE;
        case c10::ScalarType::Char:
            return PROBE_DTYPE_INT8;
        case c10::ScalarType::Byte:
            return PROBE_DTYPE_UINT8;
        case c10::ScalarType::Short:
            return PROBE_DTYPE_INT16;
        case c10::ScalarType::Int:
            return PROBE_DTYPE_INT32;
        case c10::ScalarType::Long:
            return PROBE_DTYPE_INT64;
        case c10::ScalarType::Bool:
            return PROBE_DTYPE_BOOL;
        case c10::ScalarType::ComplexFloat:
            return PROBE_DTYPE_COMPLEX64;
        case c10::ScalarType::ComplexDouble:
            return PROBE_DTYPE_COMPLEX128;
        default:
            return -1;
    }
}

// Inline, a byte at a time: an op's name differs from most prefixes at its first byte.
inline bool startsWith(const char* text, const char* prefix) {
    for (; *prefix; ++prefix, ++text)
        if (*text != *prefix) return false;
    return true;
}

// startsWith(name, "aten::"), which nearly every op's name does: six compares the compiler lays
// out in a row (the loop above cost 40 instructions an op, 1.3% of the probe's on a small-op
// model). Each byte is read only when the ones before it matched: never past the name's end.
inline bool isAtenName(const char* name) {
    return name[0] == 'a' && name[1] == 't' && name[2] == 'e' && name[3] == 'n' && name[4] == ':' &&
           name[5] == ':';
}

void reportFailure(const char* where, const char* what) {
    // Rate-limited: a few lines per kind of failure are enough for a person.
    static std::mutex mutex;
    static std::unordered_map<std::string, int> seen;
    std::lock_guard<std::mutex> lock(mutex);
    if (seen[where]++ >= 3) return;
    // Its first line: torch's errors carry a C++ backtrace of 200 frames after it, on the
    // model's standard error.
    const char* end = what ? std::strchr(what, '\n') : nullptr;
    const int length = what ? static_cast<int>(end ? end - what : std::strlen(what)) : 0;
    std::fprintf(stderr, "[probe] torch adapter: %s: %.*s (the model continues)\n", where,
                 std::min(length, 500), what ? what : "");
}

// ---------------------------------------------------------------------------------------------
// Layers and the autograd sequence numbers their forward used

struct LayerInfo {
    std::string name, type;
};

std::mutex gLayersMutex;
std::vector<LayerInfo> gLayers;
std::unordered_map<std::string, int> gLayerIndex;

// By forward thread (RecordFunction's thread id): a node's backward may run on another thread.
std::unordered_map<uint64_t, SequenceRanges> gSequenceRanges;

int layerIndexFor(const std::string& name, const std::string& type) {
    std::lock_guard<std::mutex> lock(gLayersMutex);
    auto [it, inserted] = gLayerIndex.try_emplace(name, static_cast<int>(gLayers.size()));
    if (inserted) gLayers.push_back({name, type});
    return it->second;
}

// The index of the layer named `name`, -1 when there is none.
int layerIndexOf(const char* name) {
    std::lock_guard<std::mutex> lock(gLayersMutex);
    const auto it = gLayerIndex.find(name);
    return it == gLayerIndex.end() ? -1 : it->second;
}

LayerInfo layerInfo(int index) {
    std::lock_guard<std::mutex> lock(gLayersMutex);
    return index >= 0 && index < static_cast<int>(gLayers.size())
               ? gLayers[static_cast<size_t>(index)]
               : LayerInfo{};
}

// The ranges of this thread's layer calls (held by the caller: found once per thread, as
// gSequenceRanges never lets an entry go).
SequenceRanges& sequenceRangesOfThisThread() {
    const uint64_t thread = at::RecordFunction::currentThreadId();
    std::lock_guard<std::mutex> lock(gLayersMutex);
    return gSequenceRanges[thread];
}

// The layer whose forward made the node with this sequence number, and which call of it (the
// call's first sequence number); layer -1 when none.
std::pair<int, uint64_t> layerCallOfSequence(uint64_t thread, int64_t sequence) {
    if (sequence < 0) return {-1, 0};
    std::lock_guard<std::mutex> lock(gLayersMutex);
    const auto ranges = gSequenceRanges.find(thread);
    if (ranges == gSequenceRanges.end()) return {-1, 0};
    return ranges->second.find(static_cast<uint64_t>(sequence));
}

// ---------------------------------------------------------------------------------------------
// Per-thread state, parallel to the runtime's op stack for the ops this adapter began.

enum class FrameKind : uint8_t { Module, Aten, Passive, BackwardNode };

struct OpSchemaFacts;
struct SharedInputGradient;

struct Frame {
    FrameKind kind;
    bool observeChildren;       // the runtime looks into this op's children
    bool metadataOnly = false;  // a view (or a metadata-only in-place op) inside another aten op:
                                // its memory may not be written yet
    bool ofUnwrittenMemory = false;  // a view of uninitialised memory, or an op inside one
    // Layer-level ops: the callback this op switched off (to switch on again at its end), and
    // for forward ones the first autograd sequence number their forward used, and the layer.
    at::CallbackHandle opCallbackOff = at::INVALID_CALLBACK_HANDLE;
    uint64_t firstSequence = 0;
    int layer = -1;
    const OpSchemaFacts* facts = nullptr;  // an aten op's, once looked up (at its start)
    // The runtime's wants flags for the op as it began: they hold until it ends (its layer's
    // config, its selection and structure capture are fixed then), so its end asks no more.
    int wants = 0;
    // An op RecordFunction gives no outputs of (a Python autograd Function: "Sq" for Sq.apply):
    // its name, for the Python part to report the outputs of its forward (torch_hooks).
    const char* function = nullptr;
};

// Statistics of memory seen through several views, for the current model call. Each entry
// holds a weak reference to its storage: the storage object cannot be freed and its address
// reused by another storage meanwhile (no false hit), while its memory is freed as soon as the
// model lets go of it (holding it until the end of the call changed when the model's memory was
// freed, and with it how the allocator behaved).
// By memory region alone, the version in the value: an op's output replaces what was known of
// its region whatever the version of the tensor it wrote through (`.data` has a counter of its
// own: `w.data.mul_(0.5)` left w's entry, under w's unchanged version, for w's next reader).
struct StatsKey {
    const void* storage;
    uint64_t offset, count;
    int dtype;
    bool operator==(const StatsKey& o) const {
        return storage == o.storage && offset == o.offset && count == o.count && dtype == o.dtype;
    }
};
struct StatsKeyHash {
    size_t operator()(const StatsKey& k) const {
        return std::hash<const void*>()(k.storage) ^ (k.offset * 31 + k.count * 1000003);
    }
};
struct CachedStats {
    c10::weak_intrusive_ptr<c10::StorageImpl> storage;
    int64_t version;  // of the tensor the statistics were computed through
    probe_tensor_stats stats;
};
constexpr size_t kMaxCachedStats = 1024;

// Memory a factory left uninitialised (torch.empty called by the model or its framework, not
// inside another op: DDP's gradient bucket), as long as nothing is seen to write it: its version
// unchanged, no op that writes it through its schema, no op but an aten one (a collective writes
// behind the version counter), within one model call. A view of it reads nothing the model will
// read, only the probe would: its statistics are garbage, and two identical runs differed there.
struct UninitialisedMemory {
    c10::weak_intrusive_ptr<c10::StorageImpl> storage;  // its address cannot be reused meanwhile
    int64_t version;
    // Handed out to be written (detach, as Tensor.numpy does): still unwritten through the
    // pass-through ops numpy() calls next (to, resolve_conj, resolve_neg), whose rows would hold
    // garbage; forgotten at any other op, as the program may have written it by then.
    bool handedOut = false;
};
constexpr size_t kMaxUninitialised = 256;  // past it, the oldest is forgotten (read as ever)

// Where a thread gathers a strided tensor's elements: grown as needed, never zeroed (a vector's
// resize would write every new byte once more).
struct GatherBuffer {
    std::unique_ptr<unsigned char[]> bytes;
    size_t capacity = 0;
    unsigned char* reserve(size_t size) {
        if (size > capacity) {
            bytes.reset(new unsigned char[size]);
            capacity = size;
        }
        return bytes.get();
    }
    void release() {
        bytes.reset();
        capacity = 0;
    }
};

// The nodes a walk has met: open addressing over pointers, kept per thread between passes (a
// std::unordered_set allocated a node per insert, most of the walk's cost).
class NodeSet {
public:
    void clear(size_t expected) {
        size_t capacity = 64;
        while (capacity < expected * 2) capacity *= 2;
        if (slots_.size() < capacity || slots_.size() > 4 * capacity)
            slots_.assign(capacity, nullptr);
        else
            std::fill(slots_.begin(), slots_.end(), nullptr);
        size_ = 0;
    }
    // True when `node` was not in the set (it is now).
    bool insert(const torch::autograd::Node* node) {
        if ((size_ + 1) * 2 > slots_.size()) grow();
        const size_t mask = slots_.size() - 1;
        for (size_t i = hash(node) & mask;; i = (i + 1) & mask) {
            if (slots_[i] == node) return false;
            if (!slots_[i]) {
                slots_[i] = node;
                ++size_;
                return true;
            }
        }
    }
    size_t size() const { return size_; }

private:
    static size_t hash(const torch::autograd::Node* node) {
        return (reinterpret_cast<uintptr_t>(node) >> 4) * 0x9E3779B97F4A7C15ull >> 20;
    }
    void grow() {
        std::vector<const torch::autograd::Node*> old(slots_.size() * 2, nullptr);
        old.swap(slots_);
        size_ = 0;
        for (const torch::autograd::Node* node : old)
            if (node) insert(node);
    }
    std::vector<const torch::autograd::Node*> slots_;
    size_t size_ = 0;
};

// A layer-level op a sleeping probe counts without beginning it: its names, and its counter in
// the runtime while the runtime only counts (probe_counting_only; got under `epoch`).
struct CountedOp {
    std::string name, type;
    probe_layer_counter* counter = nullptr;
    uint64_t epoch = 0;
};

// A sleeping probe's walk over a backward pass's graph (countSleepingBackwardOps): its memory,
// kept in the thread's state from pass to pass (reached through the state the caller holds: a
// thread_local of its own cost a TLS lookup at every use, five per node).
struct BackwardWalk {
    std::vector<torch::autograd::Node*> pending;
    NodeSet seen;
    std::vector<std::pair<uint64_t, int>> calls;  // (first sequence number, layer)
    std::vector<int> occurrences;                 // per layer, in this pass
    // per layer and occurrence: "<layer>.backward", "<layer>.backward_1", ... and its type
    std::vector<std::vector<CountedOp>> ops;
};

struct ThreadState {
    std::vector<Frame> frames;
    bool inRoot = false;
    std::unordered_map<std::string, int> rootOpOccurrences;  // root-level aten ops per root call
    int currentLayer = -1;                                   // forward layer op being executed
    int backwardLayer = -1;                                  // open "<layer>.backward" op
    uint64_t backwardCall = 0;                               // of this forward call of the layer
    std::unordered_map<int, int> backwardOccurrences;        // per backward pass
    // Two callbacks, so that a layer op can switch off what it does not look into: aten ops
    // (FUNCTION scope) and autograd nodes (BACKWARD_FUNCTION scope).
    at::CallbackHandle opCallback = at::INVALID_CALLBACK_HANDLE;
    at::CallbackHandle nodeCallback = at::INVALID_CALLBACK_HANDLE;
    int backwardPasses = 0;  // torch.autograd.backward / grad calls open on this thread
    // Whether the aten ops inside backward nodes are watched during this thread's backward
    // passes (decided as the outermost one begins; see watchBackwardChildren).
    bool watchingBackwardChildren = false;
    std::vector<int> forwardCalls;  // per layer: forward calls that made autograd nodes, since
                                    // the last backward pass that was watched while awake
    std::vector<int> backwardSeen;  // per layer: its backward ops begun with their children
                                    // watched (occurrences 0..n-1 of a pass)
    uint64_t backwardSeenGeneration = 0;
    uint64_t seenGeneration = 0;
    bool seenInRoot = false;
    bool seenInBackward = false;
    bool seenWatchingBackwardChildren = false;
    // Of the model's calls on this thread (since its last change of model): whether one was
    // watched whole (the aten ops' callback on from its beginning), and whether such a call
    // called aten ops itself, outside its modules. A sleeping probe needs the callback in later
    // calls only then (see syncCallbackWithProbeState).
    bool rootWatchedWhole = false, rootCallWatched = false, rootOpsSeen = false;
    std::unordered_map<StatsKey, CachedStats, StatsKeyHash> statsCache;
    std::vector<UninitialisedMemory> uninitialised;
    bool anyHandedOut = false;  // some of `uninitialised` is handedOut
    // Memory given to an op that is not an aten op, during this model call or backward pass: a
    // collective (gloo's allreduce) writes it from its own thread until the program waits for
    // it, behind the version counter, so its statistics are never kept (statsCache).
    std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> writtenAsynchronously;
    bool tooMuchWrittenAsynchronously = false;  // past kMaxWrittenAsynchronously: nothing kept
    // Accumulator nodes of leaves hooked as the layer op began, held until it ends: a leaf's
    // accumulator lives as long as something holds it, which is the graph only once an op of the
    // layer has used the leaf (probe_torch_hook_input_gradient).
    std::vector<std::shared_ptr<torch::autograd::Node>> leafAccumulatorsHeld;
    // The inputs of the layer-level aten op or Function running that need their gradient, noted
    // as it begins (noteLayerInputs), their gradients hooked as it ends (hookLayerInputGradients).
    struct LayerInput {
        at::Tensor tensor;
        torch::autograd::Edge edge;  // along which its gradient flows out of the op's nodes
        int index;
        std::string name;
    };
    std::vector<LayerInput> layerInputs;
    std::vector<at::Tensor> layerFunctionOutputs;  // a layer-level Function's, from Python
    // Gradients of layer inputs being summed from several nodes' shares, reported as the
    // backward op open ends (flushInputGradients).
    std::vector<std::shared_ptr<SharedInputGradient>> inputGradientsWaiting;
    GatherBuffer gathered;         // a strided tensor's elements (gatherRowMajor)
    void* freeContexts = nullptr;  // AdapterContext's free list
    // schemaFacts' table, by the op name's address (checked against the facts' name).
    probe::format::RecentByAddress<const OpSchemaFacts*, 256> recentFacts;
    struct RecentLayer {  // recentLayerIndex's table, by the name's address
        std::string text;
        int index = -1;
    };
    probe::format::RecentByAddress<RecentLayer> recentLayers;
    int64_t layerCallsCounted = 0;             // probe_torch_counted_layer_call's calls (for tests)
    SequenceRanges* sequenceRanges = nullptr;  // this thread's, once it recorded one
    BackwardWalk backwardWalk;
    ~ThreadState();
};

// The thread's state through a plain pointer: a thread_local object with a constructor costs an
// init guard and a TLS lookup at every use in a library loaded with dlopen; the callbacks read
// the pointer once (threadTls) and keep a reference.
thread_local ThreadState* tlsState = nullptr;

ThreadState& newThreadTls() {
    struct Owner {  // frees the state at thread exit
        ThreadState* state = nullptr;
        ~Owner() {
            tlsState = nullptr;
            delete state;
            state = nullptr;
        }
    };
    static thread_local Owner owner;
    if (!owner.state) owner.state = new ThreadState;
    tlsState = owner.state;
    return *owner.state;
}

inline ThreadState& threadTls() {
    ThreadState* state = tlsState;
    return state ? *state : newThreadTls();
}
std::atomic<int> gThreadsObserving{0};

// layerIndexFor without its lock, strings and hashing when the name is one this thread passed
// before from the same place (a module's name, at every call of it). Layers are never
// forgotten, so an index once found stays right for its name.
int recentLayerIndex(ThreadState& tls, const char* name, const char* type) {
    auto& recent = tls.recentLayers.at(name);
    if (recent.address == name && recent.value.text == name) return recent.value.index;
    const int index = layerIndexFor(name, type);
    recent.address = name;
    recent.value.text = name;
    recent.value.index = index;
    return index;
}

// ---------------------------------------------------------------------------------------------
// Tensors

uint64_t bufferIdOf(const at::Tensor& tensor) {
    if (!tensor.defined() || !tensor.has_storage()) return 0;
    return reinterpret_cast<uintptr_t>(tensor.storage().data()) +
           static_cast<uint64_t>(tensor.storage_offset()) * tensor.element_size();
}

// The storage object of a tensor, what the runtime's tables of memory are keyed by; null for
// one without.
const c10::StorageImpl* storageOf(const at::Tensor& tensor) {
    return tensor.defined() && tensor.has_storage() ? tensor.storage().unsafeGetStorageImpl()
                                                    : nullptr;
}

// Our own ATen calls (a copy to the CPU, a contiguous copy) must neither be recorded
// (re-entrance) nor tracked by autograd. Only where we make them: switching RecordFunction off
// and on costs more than the statistics of a small tensor.
struct OwnAtenCalls {
    at::DisableRecordFunctionGuard noRecord;
    c10::AutoGradMode noGrad{false};
};

// Copies the elements of a strided CPU tensor into `out` in the row-major order of their
// indices: what contiguous() would hold, byte for byte, without an ATen call (which cost ten
// thousand instructions for a slice of a few hundred elements, switching RecordFunction off and
// on included). gatherRowMajor (below) says nullptr for a tensor it does not handle (empty, not
// strided, not on the CPU, with a conjugate or negative bit, of 16-byte elements).
template <typename Element>
void gatherElements(const char* base, int dims, const int64_t* sizes, const int64_t* strides,
                    Element* out) {
    // An odometer over every dimension but the last, which is copied in one loop.
    int64_t index[64] = {};
    const int last = dims - 1;
    const int64_t lastSize = dims > 0 ? sizes[last] : 1;
    const int64_t lastStride = dims > 0 ? strides[last] : 0;
    const char* row = base;
    for (;;) {
        const Element* from = reinterpret_cast<const Element*>(row);
        if (lastStride == 1) {
            std::memcpy(out, from, static_cast<size_t>(lastSize) * sizeof(Element));
        } else {
            for (int64_t i = 0; i < lastSize; ++i)
                std::memcpy(out + i, from + i * lastStride, sizeof(Element));
        }
        out += lastSize;
        int d = last - 1;
        for (; d >= 0; --d) {
            row += strides[d] * static_cast<int64_t>(sizeof(Element));
            if (++index[d] < sizes[d]) break;
            row -= sizes[d] * strides[d] * static_cast<int64_t>(sizeof(Element));
            index[d] = 0;
        }
        if (d < 0) return;
    }
}

// The buffer holding the elements, or nullptr when the tensor is not one this handles.
const void* gatherRowMajor(const at::Tensor& tensor, GatherBuffer& buffer) {
    const int64_t count = tensor.numel();
    const int dims = static_cast<int>(tensor.dim());
    if (count <= 0 || dims > 64 || tensor.layout() != c10::kStrided || !tensor.has_storage() ||
        !tensor.device().is_cpu() || tensor.is_conj() || tensor.is_neg())
        return nullptr;
    const size_t size = tensor.element_size();
    unsigned char* out = buffer.reserve(static_cast<size_t>(count) * size);
    const char* base = static_cast<const char*>(tensor.data_ptr());
    const int64_t* sizes = tensor.sizes().data();
    const int64_t* strides = tensor.strides().data();
    switch (size) {
        case 1:
            gatherElements(base, dims, sizes, strides, reinterpret_cast<uint8_t*>(out));
            return out;
        case 2:
            gatherElements(base, dims, sizes, strides, reinterpret_cast<uint16_t*>(out));
            return out;
        case 4:
            gatherElements(base, dims, sizes, strides, reinterpret_cast<uint32_t*>(out));
            return out;
        case 8:
            gatherElements(base, dims, sizes, strides, reinterpret_cast<uint64_t*>(out));
            return out;
        default:
            return nullptr;
    }
}

// A thread keeps its gathering buffer between tensors, up to this size.
constexpr size_t kMaxKeptGather = size_t{16} << 20;

constexpr size_t kMaxWrittenAsynchronously = 64;  // past it, nothing is kept in statsCache

// Remembers the memory of the tensors among `values` as written asynchronously.
void rememberWrittenAsynchronously(ThreadState& tls, c10::ArrayRef<const c10::IValue> values) {
    const auto remember = [&tls](const at::Tensor& tensor) {
        const c10::StorageImpl* storage = storageOf(tensor);
        if (!storage) return;
        auto& known = tls.writtenAsynchronously;
        for (const auto& k : known)
            if (k._unsafe_get_target() == storage) return;
        if (known.size() < kMaxWrittenAsynchronously)
            known.push_back(tensor.storage().getWeakStorageImpl());
        else
            tls.tooMuchWrittenAsynchronously = true;
    };
    for (const c10::IValue& v : values) {
        if (v.isTensor()) {
            remember(v.toTensor());
        } else if (v.isTensorList()) {
            for (const at::Tensor& t : v.toTensorList().vec()) remember(t);
        }
    }
}

// At the end of a model call or backward pass: the program has waited for its collectives.
void forgetWrittenAsynchronously(ThreadState& tls) {
    tls.writtenAsynchronously.clear();
    tls.tooMuchWrittenAsynchronously = false;
}

bool writtenAsynchronously(const ThreadState& tls, const c10::StorageImpl* storage) {
    if (tls.tooMuchWrittenAsynchronously) return true;
    for (const auto& k : tls.writtenAsynchronously)
        if (k._unsafe_get_target() == storage) return true;
    return false;
}

// Statistics of a tensor for a statistics-only op: computed once per memory region and model
// call, directly on the memory when the tensor covers it densely (statistics do not depend on
// the order of the elements), else on its elements gathered in row-major order (as a
// contiguous copy holds them). An op's output (`written`) is computed afresh and replaces what
// was known of its memory: a kernel writes memory without the version counter telling, after
// an op inside it saw that memory (addmm copies its bias into its result with copy_, whose
// output was seen, then its gemm writes the product there).
probe_tensor_stats statisticsOf(const at::Tensor& tensor, int code, bool written) {
    ThreadState& tls = threadTls();
    const uint64_t count = static_cast<uint64_t>(tensor.numel());
    // Only a tensor covering its memory densely is known by (storage, offset, count): it holds
    // exactly the elements of that range, whatever their order. Anything else (an expand
    // repeating elements, a strided slice) may share those numbers with different elements.
    const bool dense = tensor.device().is_cpu() && tensor.is_non_overlapping_and_dense() &&
                       !tensor.is_conj() && !tensor.is_neg();
    const bool cacheable = dense && tensor.has_storage() && !tensor.is_inference() &&
                           (tls.writtenAsynchronously.empty() ||
                            !writtenAsynchronously(tls, tensor.storage().unsafeGetStorageImpl()));
    StatsKey key{};
    if (cacheable) {
        key = {tensor.storage().unsafeGetStorageImpl(),
               static_cast<uint64_t>(tensor.storage_offset()), count, code};
        if (!written) {
            auto it = tls.statsCache.find(key);
            if (it != tls.statsCache.end() && it->second.version == tensor._version())
                return it->second.stats;
        }
    }
    probe_tensor_stats stats{};
    if (dense) {
        probe_compute_stats(code, tensor.data_ptr(), count, &stats);
    } else if (const void* gathered = gatherRowMajor(tensor, tls.gathered)) {
        probe_compute_stats(code, gathered, count, &stats);
        if (tls.gathered.capacity > kMaxKeptGather) tls.gathered.release();
    } else {
        const OwnAtenCalls own;
        at::Tensor host = tensor.cpu().resolve_conj().resolve_neg().contiguous();
        probe_compute_stats(code, host.data_ptr(), count, &stats);
    }
    if (cacheable) {
        if (tls.statsCache.size() >= kMaxCachedStats) tls.statsCache.clear();
        tls.statsCache.insert_or_assign(
            key, CachedStats{tensor.storage().getWeakStorageImpl(),
                             static_cast<int64_t>(tensor._version()), stats});
    }
    return stats;
}

// Reports one tensor of the runtime's top op, as `wants` (PROBE_WANTS_*) asks: with its data
// (contiguous, on the CPU), its statistics alone, or its metadata and buffer identity only.
// `written`: the op may have written the tensor's memory (see statisticsOf).
void reportTensor(int io, int index, const char* argName, const at::Tensor& tensor, int wants,
                  bool withData, bool written) {
    if (!tensor.defined() || tensor.is_sparse() || tensor.is_mkldnn() || tensor.is_quantized())
        return;
    const int code = dtypeCode(tensor.scalar_type());
    if (code < 0) return;
    const auto dims = tensor.sizes();
    const uint64_t bufferId = bufferIdOf(tensor);
    const uint64_t nbytes = static_cast<uint64_t>(tensor.numel()) * tensor.element_size();
    const int ndims = static_cast<int>(dims.size());
    // A meta tensor (a model built on the meta device) has a shape but no values.
    if (!withData || !(wants & PROBE_WANTS_DATA) || !tensor.has_storage() || tensor.is_meta()) {
        probe_op_tensor_ex(io, index, argName, code, PROBE_FORMAT_ND, dims.data(), ndims, nullptr,
                           nbytes, bufferId);
        return;
    }
    if (wants & PROBE_WANTS_STATISTICS_ONLY) {
        const probe_tensor_stats stats = statisticsOf(tensor, code, written);
        probe_op_tensor_stats(io, index, argName, code, PROBE_FORMAT_ND, dims.data(), ndims, &stats,
                              bufferId);
        return;
    }
    const OwnAtenCalls own;
    at::Tensor host = tensor;
    if (!host.device().is_cpu()) host = host.cpu();
    if (host.is_conj()) host = host.resolve_conj();
    if (host.is_neg()) host = host.resolve_neg();
    if (!host.is_contiguous()) host = host.contiguous();
    // A tensor without elements has no data pointer, and a null one would report its metadata
    // alone (no row, no file: the shape of a slice [:, :0] went unseen): its zero bytes are
    // given from anywhere.
    // Its identity in the structure is then its own (a fresh one has no storage address): the
    // dummy pointer would make every such tensor one buffer.
    static const char kNoElements = 0;
    const void* data = nbytes ? host.data_ptr() : &kNoElements;
    const uint64_t id =
        bufferId || nbytes ? bufferId : reinterpret_cast<uintptr_t>(tensor.unsafeGetTensorImpl());
    probe_op_tensor_ex(io, index, argName, code, PROBE_FORMAT_ND, dims.data(), ndims, data, nbytes,
                       id);
}

// Whether `name` is one of `names` (op names, compared once per op: the facts below are cached).
bool isOneOf(const char* name, std::initializer_list<const char*> names) {
    for (const char* candidate : names)
        if (std::strcmp(name, candidate) == 0) return true;
    return false;
}

// Factories whose output is fresh memory left uninitialised.
bool allocatesUninitialised(const char* name) {
    return isOneOf(name, {"aten::empty", "aten::empty_like", "aten::empty_strided",
                          "aten::new_empty", "aten::new_empty_strided"});
}

// Ops whose outputs hold uninitialised memory, their statistics noise: those factories, and
// resize_ (its new bytes; it keeps what its tensor held).
bool outputIsUninitialised(const char* name) {
    return allocatesUninitialised(name) || std::strcmp(name, "aten::resize_") == 0;
}

// In-place ops that replace their first argument without reading it: its content before the
// op is meaningless (typically a fresh, uninitialised output buffer).
bool overwritesFirstArgument(const char* name) {
    return isOneOf(name,
                   {"aten::copy_", "aten::fill_", "aten::zero_", "aten::normal_", "aten::uniform_",
                    "aten::bernoulli_", "aten::random_", "aten::exponential_", "aten::geometric_",
                    "aten::cauchy_", "aten::log_normal_", "aten::resize_", "aten::set_",
                    "aten::_foreach_zero_",
                    // received into: a pipeline stage's torch.empty buffer
                    "c10d::recv_", "c10d::recv_any_source_"});
}

// In-place ops that change only a tensor's metadata (shape, strides, autograd): they neither
// read nor write its memory. Inside another op's kernel they often reshape a result not written
// yet (min.dim unsqueezes its empty values and indices before filling them).
bool changesMetadataOnly(const char* name) {
    return isOneOf(name,
                   {"aten::unsqueeze_", "aten::squeeze_", "aten::as_strided_", "aten::transpose_",
                    "aten::t_", "aten::swapdims_", "aten::swapaxes_", "aten::detach_"});
}

// Views whose kernel, on a strided tensor, makes its result without calling any op but views
// of this list: inside another op's kernel neither they nor anything they call report a thing
// (see onOpStart), so they can be counted without being begun. resolve_conj and resolve_neg
// only while the bit they resolve is off (they then return their input; else they copy it).
enum class LeafView { No, Always, UnlessConjugate, UnlessNegative };

LeafView leafViewOf(const char* name) {
    if (isOneOf(name, {"aten::as_strided", "aten::select", "aten::slice", "aten::narrow",
                       "aten::transpose", "aten::t", "aten::expand", "aten::permute",
                       "aten::unsqueeze", "aten::squeeze", "aten::view", "aten::alias",
                       "aten::diagonal", "aten::unfold", "aten::_reshape_alias"}))
        return LeafView::Always;
    if (std::strcmp(name, "aten::resolve_conj") == 0) return LeafView::UnlessConjugate;
    if (std::strcmp(name, "aten::resolve_neg") == 0) return LeafView::UnlessNegative;
    return LeafView::No;
}

// What the schema says of an aten op: its argument and return names, and whether it is a
// view (its result aliases an input without writing it); and what its name says (above).
// Cached per op name and overload, so that no op compares its name with lists.
struct OpSchemaFacts {
    std::string op;
    std::string overload;  // of the schema the facts are of ("out" of abs.out)
    std::vector<std::string> arguments, returns;
    // Per argument: the op overwrites it without reading it (an out= argument; the first of an
    // overwriting op), so its content before the op is not worth a statistic.
    std::vector<bool> contentUnread;
    bool view = false;
    bool metadataOnly = false;         // changesMetadataOnly(op): its tensor as a view's
    bool outputUninitialised = false;  // outputIsUninitialised(op)
    // A collective (c10d::allreduce_): its outputs are written from the backend's thread after it
    // returns, until the program waits for it; at its end they hold the input, the result or a
    // mix (two runs of one job differed there), so they have no statistics.
    bool outputUnsettled = false;
    bool allocates = false;  // allocatesUninitialised(op)
    // detach: how a tensor goes to numpy (Tensor.numpy) and other code that writes its memory
    // behind the version counter.
    bool handsOut = false;
    std::vector<bool> written;         // per argument: the op writes it (in place, out=)
    LeafView leafView = LeafView::No;  // leafViewOf(op), for a view
};

const OpSchemaFacts& schemaFactsOf(const at::RecordFunction& fn);

// An aten op's name is its schema's string, the same pointer at every call and another for each
// overload: a small table by that pointer answers nearly every lookup (checked by the name
// itself, so a pointer that came to name another op is only a miss) before the table by the
// name's and overload's hash.
const OpSchemaFacts& schemaFacts(ThreadState& tls, const at::RecordFunction& fn) {
    const char* name = fn.name();
    auto& recent = tls.recentFacts.at(name);
    if (recent.address == name && std::strcmp(recent.value->op.c_str(), name) == 0)
        return *recent.value;
    const OpSchemaFacts& facts = schemaFactsOf(fn);
    recent = {name, &facts};
    return facts;
}

const OpSchemaFacts& schemaFactsOf(const at::RecordFunction& fn) {
    // The facts stay where they are made (a deque per hash): `recent` points at them.
    // By overload too: abs and abs.out share their name, not their arguments (an "out" taken for
    // an input had the statistics of the uninitialised buffer a kernel was to fill).
    thread_local std::unordered_map<uint64_t, std::deque<OpSchemaFacts>> cache;
    const char* name = fn.name();
    const auto op = fn.operator_name();
    const std::string overload = op ? op->overload_name : std::string();
    uint64_t hash = 1469598103934665603ull;  // FNV-1a of the name, then the overload
    for (const std::string_view text : {std::string_view(name), std::string_view(overload)})
        for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    auto& bucket = cache[hash];
    for (const auto& entry : bucket)
        if (entry.op == name && entry.overload == overload) return entry;
    const bool overwritesFirst = overwritesFirstArgument(name);
    OpSchemaFacts facts;
    facts.op = name;
    facts.overload = overload;
    facts.outputUninitialised = outputIsUninitialised(name);
    facts.allocates = allocatesUninitialised(name);
    facts.outputUnsettled = startsWith(name, "c10d::");
    facts.handsOut = std::strcmp(name, "aten::detach") == 0;
    facts.metadataOnly = changesMetadataOnly(name);
    if (op) {
        if (auto handle = c10::Dispatcher::singleton().findOp(*op)) {
            if (handle->hasSchema()) {
                const auto& schema = handle->schema();
                for (const auto& a : schema.arguments()) {
                    facts.written.push_back(a.alias_info() && a.alias_info()->isWrite());
                    facts.contentUnread.push_back(a.is_out() ||
                                                  (overwritesFirst && facts.arguments.empty()));
                    facts.arguments.push_back(a.name());
                }
                for (const auto& r : schema.returns()) {
                    facts.returns.push_back(r.name());
                    if (r.alias_info() && !r.alias_info()->isWrite()) facts.view = true;
                }
                if (facts.view) facts.leafView = leafViewOf(name);
            }
        }
    }
    if (facts.contentUnread.empty() && overwritesFirst) facts.contentUnread.push_back(true);
    bucket.push_back(std::move(facts));
    return bucket.back();
}

// Whether `tensor`'s memory is uninitialised as far as the probe saw (UninitialisedMemory).
// Memory written since (its version moved on) is forgotten.
bool isUninitialised(ThreadState& tls, const at::Tensor& tensor) {
    const c10::StorageImpl* storage = tls.uninitialised.empty() ? nullptr : storageOf(tensor);
    if (!storage || tensor.is_inference()) return false;
    auto& known = tls.uninitialised;
    for (auto it = known.begin(); it != known.end(); ++it) {
        if (it->storage._unsafe_get_target() != storage) continue;
        if (it->version == tensor._version()) return true;
        known.erase(it);
        return false;
    }
    return false;
}

// Whether the first tensor among `values` (a view's base) is uninitialised memory.
bool firstTensorUninitialised(ThreadState& tls, c10::ArrayRef<const c10::IValue> values) {
    for (const c10::IValue& v : values)
        if (v.isTensor()) return isUninitialised(tls, v.toTensor());
    return false;
}

// The outputs of a factory that allocates uninitialised memory (allocatesUninitialised), called
// outside any other op: inside one, a kernel fills its result without the version telling.
void rememberUninitialised(ThreadState& tls, c10::ArrayRef<const c10::IValue> outputs) {
    auto& known = tls.uninitialised;
    known.erase(std::remove_if(known.begin(), known.end(),
                               [](const UninitialisedMemory& m) { return m.storage.expired(); }),
                known.end());
    for (const c10::IValue& v : outputs) {
        if (!v.isTensor()) continue;
        const at::Tensor& tensor = v.toTensor();
        if (!tensor.defined() || !tensor.has_storage() || tensor.is_inference()) continue;
        if (known.size() >= kMaxUninitialised) known.erase(known.begin());
        known.push_back({tensor.storage().getWeakStorageImpl(), tensor._version()});
    }
}

// Forgets what is known of `tensor`'s memory as uninitialised.
void forgetUninitialised(ThreadState& tls, const at::Tensor& tensor) {
    const c10::StorageImpl* storage = tls.uninitialised.empty() ? nullptr : storageOf(tensor);
    if (!storage) return;
    auto& known = tls.uninitialised;
    known.erase(std::remove_if(known.begin(), known.end(),
                               [storage](const UninitialisedMemory& m) {
                                   return m.storage._unsafe_get_target() == storage;
                               }),
                known.end());
}

// Marks `tensor`'s memory, if uninitialised, as handed out (UninitialisedMemory::handedOut).
void handOutUninitialised(ThreadState& tls, const at::Tensor& tensor) {
    const c10::StorageImpl* storage = tls.uninitialised.empty() ? nullptr : storageOf(tensor);
    if (!storage) return;
    for (UninitialisedMemory& m : tls.uninitialised)
        if (m.storage._unsafe_get_target() == storage) m.handedOut = tls.anyHandedOut = true;
}

// Whether `name` is an op Tensor.numpy calls on the memory it hands out, after detach: none of
// them writes it, so the program has not yet either.
bool passesHandedOutMemoryOn(const char* name) {
    return std::strcmp(name, "aten::to") == 0 || std::strcmp(name, "aten::resolve_conj") == 0 ||
           std::strcmp(name, "aten::resolve_neg") == 0;
}

// Forgets the memory handed out: the program may write it from now on.
void forgetHandedOut(ThreadState& tls) {
    auto& known = tls.uninitialised;
    known.erase(std::remove_if(known.begin(), known.end(),
                               [](const UninitialisedMemory& m) { return m.handedOut; }),
                known.end());
    tls.anyHandedOut = false;
}

// Forgets the memory of the arguments an op wrote through its schema (in place, out=), should
// its kernel not have moved the version on.
void forgetWritten(ThreadState& tls, c10::ArrayRef<const c10::IValue> inputs,
                   const OpSchemaFacts& facts) {
    for (size_t i = 0; i < inputs.size() && i < facts.written.size(); ++i)
        if (facts.written[i] && inputs[i].isTensor())
            forgetUninitialised(tls, inputs[i].toTensor());
}

// A parameter that is a number. JSON has none for infinity or NaN (nlohmann writes them as null,
// which no op takes for a float: the masks filled with -inf could not be replayed): they are
// written as statistic.csv spells them, "inf", "-inf" and "nan".
nlohmann::ordered_json numberParam(double value) {
    if (std::isfinite(value)) return value;
    return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

// The tensors among an op's values, numbered as their rows are (a list item by item) and named
// by their argument (a list's items "<name>0", "<name>1", ...): `tensor(arg, argName, index,
// name, t)` for each, `other(arg, argName, value)` for each value that is no tensor. One
// enumeration for reporting an op's tensors and for hooking its inputs' gradients, whose rows
// must be numbered and named alike.
template <typename OnTensor, typename OnOther>
void forEachTensorValue(c10::ArrayRef<const c10::IValue> values,
                        const std::vector<std::string>* names, OnTensor&& tensor, OnOther&& other) {
    static const std::string kNoName;
    int index = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        const c10::IValue& v = values[i];
        const std::string& argName = names && i < names->size() ? (*names)[i] : kNoName;
        if (v.isTensor()) {
            tensor(i, argName, index++, argName, v.toTensor());
        } else if (v.isTensorList()) {
            const auto list = v.toTensorList();
            for (size_t k = 0; k < list.size(); ++k) {
                const std::string itemName =
                    argName.empty() ? std::string() : argName + std::to_string(k);
                tensor(i, argName, index++, itemName, list.get(k));
            }
        } else {
            other(i, argName, v);
        }
    }
}

// Reports every tensor among `values` (a Tensor or a list of tensors per value), named by the
// aten op's `facts` if there are any, and returns the non-tensor ones as the op's parameters.
// The tensors of the arguments whose content the op does not read (`contentUnread`: out=
// arguments, the first of copy_, fill_, ...), often uninitialised memory, go as metadata only,
// as does any argument named "out". A view's outputs are memory it did not write: their
// statistics are those of its input, known already, rather than computed again (a third of the
// elements summed on a small transformer were the outputs of views: t, transpose, view).
nlohmann::ordered_json reportValues(int io, c10::ArrayRef<const c10::IValue> values,
                                    const OpSchemaFacts* facts, int wants) {
    const std::vector<std::string>* names =
        facts ? (io == PROBE_INPUT ? &facts->arguments : &facts->returns) : nullptr;
    const std::vector<bool>* contentUnread =
        facts && io == PROBE_INPUT ? &facts->contentUnread : nullptr;
    const bool written = io == PROBE_OUTPUT && !(facts && facts->view);
    // The runtime keeps an op's parameters for the observed structure (metadata) and beside
    // its tensor files: statistics alone need none, so none are built.
    const bool wantsParams = (wants & PROBE_WANTS_METADATA) ||
                             ((wants & PROBE_WANTS_DATA) && !(wants & PROBE_WANTS_STATISTICS_ONLY));
    nlohmann::ordered_json params;  // null until a parameter is set: no allocation for none
    forEachTensorValue(
        values, names,
        [&](size_t i, const std::string& argName, int index, const std::string& name,
            const at::Tensor& tensor) {
            const bool unread =
                (contentUnread && i < contentUnread->size() && (*contentUnread)[i]) ||
                argName == "out";
            reportTensor(io, index, name.empty() ? nullptr : name.c_str(), tensor, wants, !unread,
                         written);
        },
        [&](size_t i, const std::string& argName, const c10::IValue& v) {
            if (io != PROBE_INPUT || !wantsParams) return;
            const std::string key = argName.empty() ? "arg" + std::to_string(i) : argName;
            if (v.isNone())
                params[key] = nullptr;
            else if (v.isBool())
                params[key] = v.toBool();
            else if (v.isInt())
                params[key] = v.toInt();
            else if (v.isDouble())
                params[key] = numberParam(v.toDouble());
            else if (v.isString())
                params[key] = v.toStringRef();
            else if (v.isIntList())
                params[key] = v.toIntVector();
            else if (v.isDoubleList()) {
                auto& list = params[key] = nlohmann::ordered_json::array();
                for (double d : v.toDoubleVector()) list.push_back(numberParam(d));
            } else if (v.isBoolList()) {
                std::vector<bool> bools;
                for (bool b : v.toBoolList()) bools.push_back(b);
                params[key] = bools;
            } else if (v.isScalar())
                params[key] = numberParam(v.toScalar().toDouble());
            else if (v.isDevice())
                params[key] = v.toDevice().str();
            else
                params[key] = v.tagKind();
        });
    return params;
}

c10::ArrayRef<const c10::IValue> outputsOf(const at::RecordFunction& fn) {
    const auto& outputs = fn.outputs();
    return c10::ArrayRef<const c10::IValue>(outputs.data(), outputs.size());
}

// ---------------------------------------------------------------------------------------------
// Ops

// What onOpStart gives RecordFunction for an op it began (onOpEnd ends it). One is made and
// destroyed per op watched: they come from a free list of the thread that made them rather than
// the heap, whose allocator cost as much as the rest of a passive op. That thread's state is
// written after the context's own bytes, where onOpEnd and operator delete read it: neither
// looks the thread's state up (a call into the dynamic linker for a library loaded with dlopen,
// three per op with the allocation's). RecordFunction ends an op of the scopes watched
// (FUNCTION, BACKWARD_FUNCTION) on the thread that began it, before that thread ends: a list is
// only ever used by its own thread, and freed when the thread ends.
struct AdapterContext : at::ObserverContext {
    static std::unique_ptr<at::ObserverContext> make(ThreadState& owner) {
        return std::unique_ptr<at::ObserverContext>(new (owner) AdapterContext);
    }
    static ThreadState& ownerOf(const at::ObserverContext* context) { return ownerAt(context); }
    static void* operator new(size_t, ThreadState& owner) {
        void* memory = owner.freeContexts;
        if (memory)
            owner.freeContexts = *static_cast<void**>(memory);
        else
            memory = ::operator new(kBytes);
        ThreadState* const ownerPointer = &owner;
        std::memcpy(static_cast<char*>(memory) + kOwnerAt, &ownerPointer, sizeof ownerPointer);
        return memory;
    }
    static void operator delete(void* memory,
                                ThreadState& owner) noexcept {  // if a constructor threw
        giveBack(owner, memory);
    }
    static void operator delete(void* memory) noexcept { giveBack(ownerAt(memory), memory); }

private:
    static constexpr size_t kOwnerAt = sizeof(at::ObserverContext);  // after this one's bytes
    static constexpr size_t kBytes = kOwnerAt + sizeof(ThreadState*);
    static ThreadState& ownerAt(const void* memory) {
        ThreadState* owner = nullptr;
        std::memcpy(&owner, static_cast<const char*>(memory) + kOwnerAt, sizeof owner);
        return *owner;
    }
    static void giveBack(ThreadState& owner, void* memory) {
        *static_cast<void**>(memory) = owner.freeContexts;
        owner.freeContexts = memory;
    }
};
static_assert(sizeof(AdapterContext) == sizeof(at::ObserverContext) &&
              sizeof(AdapterContext) >= sizeof(void*));

ThreadState::~ThreadState() {
    while (freeContexts) {
        void* next = *static_cast<void**>(freeContexts);
        ::operator delete(freeContexts);
        freeContexts = next;
    }
}

// Begins an op in the runtime: what it wants (PROBE_WANTS_*), 0 when it could not begin.
int beginOp(const char* name, const char* type, int kind) {
    const int wants = probe_op_begin_wants(name, type, nullptr, kind);
    return wants < 0 ? 0 : wants;
}

// After beginOp, with what it returned: pushes the frame. A layer-level op whose children nobody
// looks at switches this thread's aten-op callback off until it ends, so that the ops inside cost
// nothing, not even the copy of their inputs that RecordFunction makes for an observer. The
// autograd nodes' callback stays on: no node runs inside a forward op but for a backward pass
// called from it (whose nodes then join it, like any child nobody looks at), and the next
// layer's nodes must be seen in a backward one. Switching a callback costs about a microsecond.
int pushFrame(ThreadState& tls, FrameKind kind, int wants, int layer = -1) {
    Frame frame{kind, (wants & PROBE_WANTS_CHILDREN) != 0};
    frame.wants = wants;
    if (tls.frames.empty()) {
        const bool forward = kind != FrameKind::BackwardNode;
        if (forward) {
            frame.layer = layer;
            frame.firstSequence = at::sequence_number::peek();
        }
        if (!frame.observeChildren) {
            if (tls.opCallback != at::INVALID_CALLBACK_HANDLE) {
                at::disableCallback(tls.opCallback);
                frame.opCallbackOff = tls.opCallback;
            }
        }
    }
    tls.frames.push_back(frame);
    return wants;
}

int pushFrame(FrameKind kind, int wants, int layer = -1) {
    return pushFrame(threadTls(), kind, wants, layer);
}

// A forward call of `layer` used the autograd sequence numbers [first, end): kept for the
// backward ops' count; when it made autograd nodes, a backward op of the layer is to come.
// A call of the model begins or ends on this thread: the layer calls it recorded are kept as one
// segment (see SequenceRanges).
void sealModelCall(ThreadState& tls) {
    if (!tls.sequenceRanges || !tls.sequenceRanges->hasOpenSegment()) return;
    std::lock_guard<std::mutex> lock(gLayersMutex);
    tls.sequenceRanges->closeSegment();
}

void recordLayerCall(ThreadState& tls, int layer, uint64_t first, uint64_t end) {
    if (end <= first || layer < 0) return;  // no autograd node made (inference)
    if (!tls.sequenceRanges) tls.sequenceRanges = &sequenceRangesOfThisThread();
    {
        std::lock_guard<std::mutex> lock(gLayersMutex);
        tls.sequenceRanges->add(first, end, layer);
    }
    if (tls.forwardCalls.size() <= static_cast<size_t>(layer))
        tls.forwardCalls.resize(static_cast<size_t>(layer) + 1, 0);
    ++tls.forwardCalls[static_cast<size_t>(layer)];
}

// Pops the top frame and ends its op in the runtime (unless passive).
void popFrame(ThreadState& tls) {
    const Frame frame = tls.frames.back();
    tls.frames.pop_back();
    if (frame.kind != FrameKind::Passive) probe_op_end();
    // Only the callbacks still registered (a handle is never reused).
    if (frame.opCallbackOff != at::INVALID_CALLBACK_HANDLE && frame.opCallbackOff == tls.opCallback)
        at::reenableCallback(tls.opCallback);
    if (tls.frames.empty()) {
        if (frame.kind != FrameKind::BackwardNode)
            recordLayerCall(tls, frame.layer, frame.firstSequence, at::sequence_number::peek());
        tls.currentLayer = -1;
        tls.leafAccumulatorsHeld.clear();
        tls.layerInputs.clear();
        tls.layerFunctionOutputs.clear();
    }
}

void popFrame() {
    popFrame(threadTls());
}

// `op`'s counter while the runtime only counts (`epoch`, from probe_counting_only), got once per
// epoch; null when there is none.
probe_layer_counter* counterOf(CountedOp& op, uint64_t epoch) {
    if (op.epoch != epoch) {
        op.counter = probe_layer_counter_of(op.name.c_str(), op.type.c_str());
        op.epoch = epoch;
    }
    return op.counter;
}

// Counts an execution of `op` without beginning it: by its counter while the runtime only
// counts, else by name (probe_op_count_layer).
void countExecution(CountedOp& op, uint64_t epoch) {
    if (probe_layer_counter* counter = epoch ? counterOf(op, epoch) : nullptr)
        probe_layer_counter_add(counter);
    else
        probe_op_count_layer(op.name.c_str(), op.type.c_str());
}

void flushInputGradients(ThreadState& tls);

void closeBackwardLayer() {
    ThreadState& tls = threadTls();
    if (!tls.inputGradientsWaiting.empty()) flushInputGradients(tls);
    if (tls.backwardLayer < 0) return;
    // The backward layer op is the bottom frame; anything above it was closed with its node.
    while (!tls.frames.empty()) popFrame();
    tls.backwardLayer = -1;
}

// Opens "<layer>.backward" as the layer-level op for the backward nodes of `layer`. Its inputs
// are the gradients flowing into the layer's first node: those of the layer's outputs.
void openBackwardLayer(int layer, uint64_t call,
                       c10::ArrayRef<const c10::IValue> incomingGradients) {
    ThreadState& tls = threadTls();
    closeBackwardLayer();
    const LayerInfo info = layerInfo(layer);
    const int occurrence = tls.backwardOccurrences[layer]++;
    if (tls.watchingBackwardChildren) {
        if (tls.backwardSeen.size() <= static_cast<size_t>(layer))
            tls.backwardSeen.resize(layer + 1, 0);
        tls.backwardSeen[layer] = std::max(tls.backwardSeen[layer], occurrence + 1);
    }
    const std::string name =
        info.name + ".backward" + (occurrence ? "_" + std::to_string(occurrence) : std::string());
    const int wants =
        pushFrame(FrameKind::BackwardNode,
                  beginOp(name.c_str(), (info.type + "Backward").c_str(), PROBE_OP_OPERATION));
    if (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA))
        reportValues(PROBE_INPUT, incomingGradients, nullptr, wants);
    tls.backwardLayer = layer;
    tls.backwardCall = call;
}

// Whether `fn` is a call of a leaf view (leafViewOf) that calls no other kind of op: on a
// strided tensor, without the bit it would resolve.
bool isLeafViewCall(ThreadState& tls, const at::RecordFunction& fn) {
    const OpSchemaFacts& facts = schemaFacts(tls, fn);
    if (facts.leafView == LeafView::No) return false;
    const auto inputs = fn.inputs();
    if (inputs.empty() || !inputs[0].isTensor()) return false;
    const at::Tensor& self = inputs[0].toTensor();
    if (self.layout() != at::kStrided) return false;
    switch (facts.leafView) {
        case LeafView::UnlessConjugate:
            return !self.is_conj();
        case LeafView::UnlessNegative:
            return !self.is_neg();
        default:
            return true;
    }
}

void noteLayerInputs(ThreadState& tls, c10::ArrayRef<const c10::IValue> inputs,
                     const OpSchemaFacts* facts);
void hookLayerInputGradients(ThreadState& tls, c10::ArrayRef<const c10::IValue> outputs);

std::unique_ptr<at::ObserverContext> onOpStart(const at::RecordFunction& fn) {
    try {
        ThreadState& tls = threadTls();
        const char* name = fn.name();
        // Nearly every op is an aten op, which is neither of ours nor the engine's bookkeeping.
        const bool aten = isAtenName(name);
        if (!aten && (startsWith(name, "probe::") ||
                      startsWith(name, "autograd::engine::evaluate_function")))
            return nullptr;
        const bool backward = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
        // Anything but an aten op (a collective, a custom op, a scope of the program's own such
        // as DDP's copy_bucket_to_grad or Python's record_function) may write memory behind the
        // version counter: gloo's allreduce writes a bucket seen before, and the copy out of it
        // was given the bucket's statistics from before the reduction. Nothing known of any
        // memory is kept past it.
        if (!aten && !backward) {
            tls.statsCache.clear();
            rememberWrittenAsynchronously(tls, fn.inputs());
            // Inside an aten op it writes only what that op does (detach_'s own scope).
            if (tls.frames.empty() || tls.frames.back().kind != FrameKind::Aten) {
                tls.uninitialised.clear();
                tls.anyHandedOut = false;
            }
        }
        // A Python record_function scope is watched for that alone: it is no op of the model.
        if (fn.scope() == at::RecordScope::USER_SCOPE) return nullptr;
        int layer = -1;
        if (backward) {
            // A backward node: under the backward op of the layer its forward op ran in.
            // Each forward call of a layer has its own backward op (a module called twice in one
            // forward: both gradients flowing in are its inputs).
            const auto [nodeLayer, call] = layerCallOfSequence(fn.forwardThreadId(), fn.seqNr());
            layer = nodeLayer;
            // A node run inside another's (a pass nested in it) is that node's child.
            if (layer >= 0 && (tls.backwardLayer != layer || tls.backwardCall != call) &&
                (tls.frames.empty() || (tls.backwardLayer >= 0 && tls.frames.size() == 1)))
                openBackwardLayer(layer, call, fn.inputs());
            // Nodes of no known layer (the loss outside the model) are skipped; those that
            // follow a layer's nodes (accumulating its parameters' gradients) join its op.
            if (tls.frames.empty()) return nullptr;
        } else if (tls.frames.empty() && !tls.inRoot) {
            return nullptr;  // outside the model (data loading, the loss, ...)
        }
        // Inside an op nobody looks into: kept count of, nothing more (no names built).
        if (!tls.frames.empty() && !tls.frames.back().observeChildren) {
            tls.frames.push_back({FrameKind::Passive, false});
            return AdapterContext::make(tls);
        }
        int kind = PROBE_OP_OPERATION;
        bool layerLevel = false;  // a forward op the outermost module calls itself
        // An op inside another (nearly every op) is named by the op's own name: no string built.
        const char* opNameText = aten ? name + 6 : name;
        const char* opTypeText = name;
        std::string opName, opType;
        if (backward) {
            opType = std::string("autograd::") + name;
            opNameText = name;
            opTypeText = opType.c_str();
        } else if (tls.frames.empty()) {
            // An aten op called by the outermost module itself: a layer-level op.
            layerLevel = true;
            const std::string shortName = opNameText;
            opName = shortName + "_" + std::to_string(tls.rootOpOccurrences[shortName]++);
            opType = name;
            layer = tls.currentLayer = layerIndexFor(opName, opType);
            opNameText = opName.c_str();
        } else if (tls.frames.back().kind == FrameKind::Aten) {
            kind = PROBE_OP_KERNEL;
            // A view inside another op's kernel reports nothing (below) unless a structure is
            // being captured, nor does any view it calls: one of those the runtime only counts
            // (it refuses while a structure is captured), and the ops it calls pass as in an op
            // nobody looks into (a fifth of the probe's instructions on a small-op model went
            // to the selects of batched matmuls' loops).
            if (isLeafViewCall(tls, fn) && probe_op_count_child() == 1) {
                tls.frames.push_back({FrameKind::Passive, false});
                return AdapterContext::make(tls);
            }
        }
        if (tls.anyHandedOut && kind != PROBE_OP_KERNEL &&
            (backward || !passesHandedOutMemoryOn(name)))
            forgetHandedOut(tls);
        int wants = pushFrame(tls, backward ? FrameKind::BackwardNode : FrameKind::Aten,
                              beginOp(opNameText, opTypeText, kind), layer);
        if (!aten && !backward && !fn.operator_name()) tls.frames.back().function = name;
        if (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA)) {
            const OpSchemaFacts* facts = backward ? nullptr : &schemaFacts(tls, fn);
            tls.frames.back().facts = facts;
            // A view made inside another aten op often looks into that op's output buffer
            // before it is written (index_select selects rows of its empty result to fill
            // them): its statistics would be noise, and its data is its input's anyway. The
            // same for an in-place op changing only the metadata (min.dim's unsqueeze_ of its
            // empty results: two identical runs differed there, by their garbage).
            // Likewise a view of uninitialised memory anywhere (UninitialisedMemory), and any op
            // inside such a view (detach's own record). One that hands the memory out to be
            // written (detach, for numpy) marks it so.
            const bool insideUnwritten =
                tls.frames.size() >= 2 &&
                tls.frames[tls.frames.size() - 2].kind == FrameKind::Aten &&
                tls.frames[tls.frames.size() - 2].ofUnwrittenMemory;
            const bool viewLike = facts && (facts->view || facts->metadataOnly);
            const bool unwritten = insideUnwritten || (viewLike && kind != PROBE_OP_KERNEL &&
                                                       firstTensorUninitialised(tls, fn.inputs()));
            if (unwritten || (viewLike && kind == PROBE_OP_KERNEL)) {
                tls.frames.back().metadataOnly = true;
                tls.frames.back().ofUnwrittenMemory = unwritten;
                wants &= ~PROBE_WANTS_DATA;
                if (unwritten && facts && facts->handsOut)
                    for (const c10::IValue& v : fn.inputs())
                        if (v.isTensor()) handOutUninitialised(tls, v.toTensor());
            }
            // Such a view's tensors matter only to a structure being captured: else nothing is
            // reported (the selects and as_strided of a batched matmul's loop, thousands a step).
            if (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA)) {
                auto params = reportValues(PROBE_INPUT, fn.inputs(), facts, wants);
                if (!params.empty()) probe_op_set_param(params.dump().c_str());
            }
        }
        // A layer-level op's backward op has as outputs the gradients of its inputs, as a module
        // layer's has (its backward op had inputs only). Hooked while the probe is awake, as a
        // module layer's inputs are (torch_hooks._enter_tensors).
        if (layerLevel && at::GradMode::is_enabled() && probe_is_awake())
            noteLayerInputs(
                tls, fn.inputs(),
                tls.frames.back().facts ? tls.frames.back().facts : &schemaFacts(tls, fn));
        return AdapterContext::make(tls);
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
        ThreadState& tls = AdapterContext::ownerOf(context);  // this thread's (see AdapterContext)
        if (tls.frames.empty()) return;
        const Frame& top = tls.frames.back();
        if (top.kind != FrameKind::Passive) {
            // Tensors without data matter only to a structure being captured (as at the start).
            int wants = top.wants;
            if (top.metadataOnly) wants &= ~PROBE_WANTS_DATA;
            const OpSchemaFacts* facts =
                (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA)) && top.kind == FrameKind::Aten
                    ? (top.facts ? top.facts : &schemaFacts(tls, fn))
                    : nullptr;
            if (facts && (facts->outputUninitialised || facts->outputUnsettled))
                wants &= ~PROBE_WANTS_DATA;
            if (wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA))
                reportValues(PROBE_OUTPUT, outputsOf(fn), facts, wants);
            if (facts && facts->allocates &&
                (tls.frames.size() < 2 ||
                 tls.frames[tls.frames.size() - 2].kind != FrameKind::Aten))
                rememberUninitialised(tls, outputsOf(fn));
            else if (facts && !tls.uninitialised.empty())
                forgetWritten(tls, fn.inputs(), *facts);
        }
        if (tls.frames.size() == 1 && !tls.layerInputs.empty())
            hookLayerInputGradients(tls, outputsOf(fn));
        popFrame(tls);
    } catch (const std::exception& e) {
        reportFailure("op end", e.what());
    } catch (...) {
        reportFailure("op end", "unknown failure");
    }
}

std::atomic<int64_t> gBackwardPassesWatched{0};

// Decided as a thread's outermost backward pass begins (its nodes keep the callbacks of that
// moment): whether the ops inside its nodes are to be watched. They are when the config may
// select ops below layer-level ops, or when a layer's backward op may come that has not yet
// been seen with its children watched (its structure, captured once, must hold them): a layer
// whose forward calls since the last watched pass outnumber its backward ops seen so. A change
// of the probe's state (a restart, dumping switched on) forgets what was seen.
bool watchBackwardChildren(ThreadState& tls) {
    const uint64_t generation = probe_state_generation();
    if (generation != tls.backwardSeenGeneration) {
        tls.backwardSeen.clear();
        tls.backwardSeenGeneration = generation;
    }
    if (!probe_is_awake()) return true;  // nothing is watched; the calls stay counted
    bool watch = probe_may_select_below_layers() != 0;
    for (size_t layer = 0; layer < tls.forwardCalls.size() && !watch; ++layer)
        watch = tls.forwardCalls[layer] >
                (layer < tls.backwardSeen.size() ? tls.backwardSeen[layer] : 0);
    std::fill(tls.forwardCalls.begin(), tls.forwardCalls.end(), 0);
    if (watch) gBackwardPassesWatched.fetch_add(1);
    return watch;
}

// Registers this thread's RecordFunction callbacks. The aten ops' one only where they can be ops
// of the model: during the outermost module's call, and while the probe is awake during a
// backward pass. Elsewhere (the loss, the optimizer, data loading) every aten op would pay for
// RecordFunction copying its inputs and outputs, only to be ignored. While the probe sleeps it is
// on only during the outermost module's call: the aten ops that module calls itself are layer-level
// ops, counted even while sleeping so that their ids and rounds do not depend on when dumping began
// (inside the layers the callback is off, as in any layer nobody looks into). Unless one call of
// the model was watched whole and called none (nn.Sequential calls only its modules): then no
// callback at all while sleeping, rather than switching it off and on again around each layer,
// which cost a sleeping probe a third of its instructions on a small MLP. The autograd nodes'
// one only while awake: a sleeping probe counts the backward ops of a pass from its graph as it
// begins instead (countSleepingBackwardOps), which costs no callback per node. In a backward pass
// the aten ops' one only when some backward op may look into its nodes' ops
// (watchBackwardChildren): the autograd engine gives every node the thread-local state of the
// pass's start, so it cannot be switched off per layer there, and it was a third of the probe's
// cost per step on a small MLP. Four compares when nothing changed.
void syncCallbackWithProbeState() {
    ThreadState& tls = threadTls();
    const uint64_t generation = probe_state_generation();
    const bool inBackward = tls.backwardPasses > 0;
    if (generation == tls.seenGeneration && tls.inRoot == tls.seenInRoot &&
        inBackward == tls.seenInBackward &&
        tls.watchingBackwardChildren == tls.seenWatchingBackwardChildren)
        return;
    tls.seenGeneration = generation;
    tls.seenInRoot = tls.inRoot;
    tls.seenInBackward = inBackward;
    tls.seenWatchingBackwardChildren = tls.watchingBackwardChildren;
    const bool awake = probe_is_awake() != 0;
    const bool rootOpsWanted = awake || !tls.rootCallWatched || tls.rootOpsSeen;
    const bool opsWanted =
        (tls.inRoot && rootOpsWanted) || (awake && inBackward && tls.watchingBackwardChildren);
    if (opsWanted && tls.opCallback == at::INVALID_CALLBACK_HANDLE) {
        tls.opCallback = at::addThreadLocalCallback(
            at::RecordFunctionCallback(onOpStart, onOpEnd)
                .needsInputs(true)
                .needsOutputs(true)
                .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
        gThreadsObserving.fetch_add(1);
    } else if (!opsWanted && tls.opCallback != at::INVALID_CALLBACK_HANDLE) {
        at::removeCallback(tls.opCallback);
        tls.opCallback = at::INVALID_CALLBACK_HANDLE;
        gThreadsObserving.fetch_sub(1);
    }
    if (awake && tls.nodeCallback == at::INVALID_CALLBACK_HANDLE) {
        tls.nodeCallback =
            at::addThreadLocalCallback(at::RecordFunctionCallback(onOpStart, onOpEnd)
                                           .needsInputs(true)
                                           .needsOutputs(true)
                                           .scopes({at::RecordScope::BACKWARD_FUNCTION}));
    } else if (!awake && tls.nodeCallback != at::INVALID_CALLBACK_HANDLE) {
        at::removeCallback(tls.nodeCallback);
        tls.nodeCallback = at::INVALID_CALLBACK_HANDLE;
    }
}

// ---------------------------------------------------------------------------------------------
// Custom ops called from Python

// An output of the layer-level Function or module on top, reported from Python (RecordFunction
// gives none of a Function's): the op's autograd nodes are found from theirs once it ends
// (hookLayerInputGradients).
void noteFunctionOutput(int io, const at::Tensor& tensor) {
    ThreadState* state = tlsState;
    if (io == PROBE_OUTPUT && state && state->frames.size() == 1 && !state->layerInputs.empty() &&
        (state->frames.back().function || state->frames.back().kind == FrameKind::Module))
        state->layerFunctionOutputs.push_back(tensor);
}

// What the runtime's top op on this thread wants: kept in the adapter's top frame since the op
// began (see Frame::wants), else asked.
int topWants() {
    const ThreadState* state = tlsState;
    if (state && !state->frames.empty() && state->frames.back().kind != FrameKind::Passive)
        return state->frames.back().wants;
    return probe_op_wants();
}

// Reports `tensors` (named by `names`) as the top op's inputs or outputs, numbered from
// `first`. Returns how many, 0 when the op wants none, -1 on a failure (said).
int64_t reportTensorList(int io, int first, const std::vector<at::Tensor>& tensors,
                         const std::vector<std::string>& names, const char* where) {
    try {
        for (const at::Tensor& tensor : tensors) noteFunctionOutput(io, tensor);
        const int wants = topWants();
        if (!(wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA))) return 0;
        for (size_t i = 0; i < tensors.size(); ++i) {
            const std::string& name = i < names.size() ? names[i] : std::string();
            reportTensor(io, first + static_cast<int>(i), name.empty() ? nullptr : name.c_str(),
                         tensors[i], wants, true, io == PROBE_OUTPUT);
        }
        return static_cast<int64_t>(tensors.size());
    } catch (const std::exception& e) {
        reportFailure(where, e.what());
    } catch (...) {
        reportFailure(where, "unknown failure");
    }
    return -1;
}

int64_t reportTensorsOp(int64_t io, const std::vector<at::Tensor>& tensors,
                        const std::vector<std::string>& names) {
    return reportTensorList(io == 1 ? PROBE_OUTPUT : PROBE_INPUT, 0, tensors, names,
                            "module tensors");
}

// True while the "<layer>.backward" op of `layer` is open with none of its nodes running: the
// gradients flowing out of the layer (those of its forward inputs, from Python's tensor
// hooks) are then its outputs.
// A layer is known by its index (layerIndexOf; -1: no layer) as by its name: one name, one index.
bool backwardLayerOpen(int layer) {
    const ThreadState& tls = threadTls();
    return layer >= 0 && tls.backwardLayer == layer && tls.frames.size() == 1;
}

bool backwardLayerOpenFor(const char* layer) {
    const ThreadState& tls = threadTls();
    if (tls.backwardLayer < 0 || tls.frames.size() != 1 || !layer) return false;
    return backwardLayerOpen(layerIndexOf(layer));
}

// The gradients flowing out of a layer as outputs of its "<layer>.backward" op, numbered from
// `first` like the forward inputs. Returns how many were reported.
int64_t reportBackwardOutputsOp(const std::string& layer, int64_t first,
                                const std::vector<at::Tensor>& grads,
                                const std::vector<std::string>& names) {
    try {
        if (!backwardLayerOpenFor(layer.c_str())) return 0;
    } catch (...) {
        return -1;
    }
    return reportTensorList(PROBE_OUTPUT, static_cast<int>(first), grads, names,
                            "backward outputs");
}

// A tensor from the TensorImpl that torch.Tensor._cdata gives, holding a reference of its own.
at::Tensor tensorOfImpl(void* impl) {
    return at::Tensor(c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::reclaim_copy(
        static_cast<c10::TensorImpl*>(impl)));
}

// One tensor of the top op. Returns 1 when reported, 0 when the op wants none, -1 on a failure
// (said).
int reportOneTensor(int io, int index, const char* name, const at::Tensor& tensor,
                    const char* where) {
    try {
        if (index < 0) return -1;
        noteFunctionOutput(io, tensor);
        const int wants = topWants();
        if (!(wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA))) return 0;
        reportTensor(io, index, name && *name ? name : nullptr, tensor, wants, true,
                     io == PROBE_OUTPUT);
        return 1;
    } catch (const std::exception& e) {
        reportFailure(where, e.what());
    } catch (...) {
        reportFailure(where, "unknown failure");
    }
    return -1;
}

// The same, given by its TensorImpl (for ctypes: a call costs a fraction of a torch.ops one,
// which boxes its lists and goes through the dispatcher).
int reportOneTensor(int io, int index, const char* name, void* impl, const char* where) {
    try {
        if (!impl) return -1;
        return reportOneTensor(io, index, name, tensorOfImpl(impl), where);
    } catch (...) {
        reportFailure(where, "unknown failure");
    }
    return -1;
}

std::atomic<int64_t> gGradientHooksMade{0};  // hooks on input gradients made (for tests)

// The input-gradient hooks already on autograd nodes, of this thread: a leaf's on its grad
// accumulator, any other tensor's on the node that made it (a tensor hook lives with that node).
// A leaf (an input that requires its gradient) is hooked on its accumulator node, not with a
// tensor hook: torch 1.x runs a leaf's tensor hooks inside that node, where the layer's backward
// op is no longer the open one (its gradient went unreported), but a node's pre-hooks before the
// node. An accumulator lives as long as the graph using its leaf (one per step;
// ThreadState::leafAccumulatorsHeld until the graph holds it). One hook per (layer, input) on a
// node, so that a tensor passed to a layer many times, or at every step (a tensor computed once
// and kept, its graph retained), is reported once per backward pass: its hooks piled up, one
// more each step, each reporting again (2,000 rows of one output in round 1,999).
class NodeHooks {
public:
    // True when `node` has the hook of (output, layer, index, name) already; else notes that it
    // will. `output`: which of the node's outputs the tensor is (0 for an accumulator).
    bool hookedBefore(const std::shared_ptr<torch::autograd::Node>& node, uint32_t output,
                      const char* layer, int index, const char* name) {
        std::string key =
            std::to_string(output) + '\0' + layer + '\0' + std::to_string(index) + '\0' + name;
        Hooked& entry = nodes_[node.get()];
        if (entry.keys.empty() || entry.node.expired()) {  // new, or a dead node's address
            entry.node = node;
            entry.keys.clear();
        }
        for (const auto& known : entry.keys)
            if (known == key) return true;
        entry.keys.push_back(std::move(key));
        if (nodes_.size() >= pruneAt_) prune();
        return false;
    }

private:
    struct Hooked {
        std::weak_ptr<torch::autograd::Node> node;
        std::vector<std::string> keys;
    };
    // Nodes made at every step come and go: the dead are dropped when the table has
    // doubled since the last time.
    void prune() {
        for (auto it = nodes_.begin(); it != nodes_.end();)
            it = it->second.node.expired() ? nodes_.erase(it) : std::next(it);
        pruneAt_ = std::max<size_t>(1024, nodes_.size() * 2);
    }
    std::unordered_map<const torch::autograd::Node*, Hooked> nodes_;
    size_t pruneAt_ = 1024;
};

// A leaf's input-gradient hook, run by the engine before the leaf's accumulator node: the
// gradient it is given is the leaf's whole gradient (every use summed).
template <typename Report>
class LeafGradientHook final : public torch::autograd::FunctionPreHook {
public:
    explicit LeafGradientHook(Report report) : report_(std::move(report)) {}
    torch::autograd::variable_list operator()(
        const torch::autograd::variable_list& grads) override {
        if (!grads.empty() && grads[0].defined()) report_(grads[0]);
        return grads;
    }

private:
    Report report_;
};

// The gradient that will flow out of the backward op of the layer with index `layer` through its
// forward input `index` (see probe_torch_hook_input_gradient): one of that op's outputs, when it
// is the open one.
void reportInputGradient(int layer, int index, const char* name, const at::Tensor& grad) {
    try {
        if (backwardLayerOpen(layer))
            reportOneTensor(PROBE_OUTPUT, index, name, grad, "backward outputs");
    } catch (...) {
        reportFailure("backward outputs", "unknown failure");
    }
}

// The names input-gradient hooks carry (their layer's forward inputs' argument names), each held
// once for the life of the process, so that a hook's closure holds a pointer: it then fits in
// std::function's own storage, and hooking a tensor neither allocates nor copies strings for it
// (a closure holding the two names was copied three times, each copy on the heap). Names past
// the cap (positions in lists, keys of dicts the program makes anew) go in the closure instead.
const std::string* hookNameOf(const char* name) {
    constexpr size_t kMaxHookNames = 4096;
    static std::mutex mutex;
    static std::unordered_set<std::string> names;
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = names.find(name); it != names.end()) return &*it;
    if (names.size() >= kMaxHookNames) return nullptr;
    return &*names.emplace(name).first;
}

// Hooks the forward input `index` (named `name`) of the layer-level op `layer` (named
// `layerName`): the gradient computed for it is an output of "<layer>.backward". The hook runs
// once the gradient is complete, before its producer's node (a leaf's: its accumulator): the
// layer's backward op is still the open one (checked when it runs). The hook only reads the
// gradient. In C++ rather than Python: no Python runs in the backward pass. Returns 1 when
// hooked, 0 when the tensor needs no gradient. `layer` is -1 for a layer not registered (its
// name then goes in the closure).
int hookInputGradient(const char* layerName, int layer, int index, const char* name,
                      const at::Tensor& tensor) {
    if (!tensor.requires_grad()) return 0;
    thread_local NodeHooks nodeHooks;
    std::shared_ptr<torch::autograd::Node> accumulator;
    if (tensor.is_leaf()) {
        accumulator = torch::autograd::impl::grad_accumulator(tensor);
        if (!accumulator) return 0;
        if (nodeHooks.hookedBefore(accumulator, 0, layerName, index, name)) return 1;
        threadTls().leafAccumulatorsHeld.push_back(accumulator);
    } else if (const auto& made = tensor.grad_fn();
               made && nodeHooks.hookedBefore(made, tensor.output_nr(), layerName, index, name)) {
        return 1;
    }
    gGradientHooksMade.fetch_add(1, std::memory_order_relaxed);
    // On the leaf's accumulator, or on the tensor (run before its producer's node).
    const auto hook = [&](auto report) {
        if (accumulator)
            accumulator->add_pre_hook(
                std::make_unique<LeafGradientHook<decltype(report)>>(std::move(report)));
        else
            tensor.register_hook(std::move(report));
    };
    // The layer by its index, the name held once (hookNameOf); else both in the closure.
    const std::string* held = layer >= 0 ? hookNameOf(name) : nullptr;
    if (held) {
        hook([layer, index, held](const at::Tensor& grad) {
            reportInputGradient(layer, index, held->c_str(), grad);
        });
    } else {
        hook([layerName = std::string(layerName), index,
              name = std::string(name)](const at::Tensor& grad) {
            reportInputGradient(layerIndexOf(layerName.c_str()), index, name.c_str(), grad);
        });
    }
    return 1;
}

// A layer-level op RecordFunction saw (an aten op or an autograd Function the outermost module
// calls itself) begins: the gradients flowing out of its backward op are those of its tensor
// inputs, numbered and named as its forward inputs are. Noted with the edge each gradient flows
// along, before the op can change an input in place.
// One input of the layer-level op on top, when it needs its gradient: noted with the edge its
// gradient flows along as the op begins. Returns whether it was noted.
bool noteLayerInput(ThreadState& tls, const at::Tensor& tensor, int index,
                    const std::string& name) {
    if (!tensor.defined() || !tensor.requires_grad()) return false;
    tls.layerInputs.push_back({tensor, torch::autograd::impl::gradient_edge(tensor), index, name});
    return true;
}

void noteLayerInputs(ThreadState& tls, c10::ArrayRef<const c10::IValue> inputs,
                     const OpSchemaFacts* facts) {
    tls.layerInputs.clear();
    tls.layerFunctionOutputs.clear();
    forEachTensorValue(
        inputs, facts ? &facts->arguments : nullptr,
        [&](size_t, const std::string&, int index, const std::string& name,
            const at::Tensor& tensor) { noteLayerInput(tls, tensor, index, name); },
        [](size_t, const std::string&, const c10::IValue&) {});
}

// The gradient an input of a layer-level op gets from it when several of the op's autograd nodes
// pass it a share (a module's input read by its q, k and v): the shares summed as the nodes run,
// reported as the op's backward op ends (flushInputGradients). A node that does not run in a
// pass (one for an output of the op the loss does not use) adds nothing, and a second pass
// through a retained graph begins its own sum: waiting for every node, the sum of such an input
// was never reported, or reported in the next pass with both passes' shares.
struct SharedInputGradient {
    std::mutex mutex;
    at::Tensor sum;
    bool waiting = false;  // in its thread's ThreadState::inputGradientsWaiting
    int layer = -1, index = 0;
    std::string name;
};

// Reports the gradients of inputs summed from several nodes' shares (SharedInputGradient) as the
// backward op of their layer ends: called before it closes, while it is the open one.
void flushInputGradients(ThreadState& tls) {
    std::vector<std::shared_ptr<SharedInputGradient>> waiting;
    waiting.swap(tls.inputGradientsWaiting);
    for (const auto& shared : waiting) {
        std::lock_guard<std::mutex> lock(shared->mutex);
        if (shared->sum.defined())
            reportInputGradient(shared->layer, shared->index, shared->name.c_str(), shared->sum);
        shared->sum = at::Tensor();
        shared->waiting = false;
    }
}

// Reports, after an autograd node of a layer-level op ran, what it passed back to the op's
// inputs: each input's share of its gradient from the op, an output of the op's backward op (the
// open one: the node is the op's). An input other nodes of the op pass shares to too gets their
// sum as that op ends (SharedInputGradient).
class InputGradientsHook final : public torch::autograd::FunctionPostHook {
public:
    struct Output {
        std::vector<uint32_t> edges;  // the node's outputs to the input (x * x: two), summed
        int index;
        std::string name;
        std::shared_ptr<SharedInputGradient> shared;  // null when this node alone passes a share
    };
    InputGradientsHook(int layer, std::vector<Output> outputs)
        : layer_(layer), outputs_(std::move(outputs)) {}
    torch::autograd::variable_list operator()(const torch::autograd::variable_list& grads,
                                              const torch::autograd::variable_list&) override {
        try {
            // A sum is the probe's, no op of the model's nor part of a graph.
            at::DisableRecordFunctionGuard noRecord;
            at::NoGradGuard noGrad;
            for (const Output& output : outputs_) {
                at::Tensor share;
                for (const uint32_t edge : output.edges) {
                    if (edge >= grads.size() || !grads[edge].defined()) continue;
                    share = share.defined() ? share + grads[edge] : grads[edge];
                }
                if (!output.shared) {
                    if (share.defined())
                        reportInputGradient(layer_, output.index, output.name.c_str(), share);
                    continue;
                }
                SharedInputGradient& whole = *output.shared;
                std::lock_guard<std::mutex> lock(whole.mutex);
                // The engine adds into a gradient only while nothing else holds it: the first
                // share held here stays as it is.
                if (share.defined()) whole.sum = whole.sum.defined() ? whole.sum + share : share;
                if (!whole.waiting) {
                    whole.waiting = true;
                    threadTls().inputGradientsWaiting.push_back(output.shared);
                }
            }
        } catch (const std::exception& e) {
            reportFailure("backward outputs", e.what());
        } catch (...) {
            reportFailure("backward outputs", "unknown failure");
        }
        return grads;
    }

private:
    int layer_;
    std::vector<Output> outputs_;
};

// The layer-level op on top ends (an aten op, a Function, or a module): its inputs' gradients are
// hooked where their edges leave its autograd nodes, those it made, found from the nodes of its
// outputs. A gradient hooked on the input tensor instead is reported when the input's own node
// runs: then it is the input's whole gradient, every use's share summed (norm.backward of
// `h + lin(norm(h))` had the residual's too), and another layer's backward op may have begun
// (add_0.backward of `e(t) + p(t)` lost the gradient of e's output, reported as p.backward had
// begun). An input none of the op's nodes is found to pass a gradient to, or one the op returns as
// it is (what reaches that output passes no node of the op), keeps the tensor hook.
void hookLayerInputGradients(ThreadState& tls, c10::ArrayRef<const c10::IValue> outputs) {
    using torch::autograd::Node;
    std::vector<ThreadState::LayerInput> inputs = std::move(tls.layerInputs);
    tls.layerInputs.clear();
    // The outputs reported from Python (a Function's, a module's), and RecordFunction's.
    std::vector<at::Tensor> outputTensors = std::move(tls.layerFunctionOutputs);
    tls.layerFunctionOutputs.clear();
    const Frame& frame = tls.frames.back();
    const int layer = frame.layer;
    for (const c10::IValue& v : outputs) {
        if (v.isTensor())
            outputTensors.push_back(v.toTensor());
        else if (v.isTensorList())
            for (const at::Tensor& t : v.toTensorList().vec()) outputTensors.push_back(t);
    }
    std::vector<torch::autograd::Edge> edges;
    edges.reserve(inputs.size());
    for (const ThreadState::LayerInput& input : inputs) edges.push_back(input.edge);
    std::vector<std::vector<InputUser>> users =
        findInputUsers(outputTensors, edges, frame.firstSequence, at::sequence_number::peek());
    std::vector<std::pair<Node*, std::vector<InputGradientsHook::Output>>> hooks;
    const std::string layerName = layerInfo(layer).name;
    for (size_t i = 0; i < inputs.size(); ++i) {
        ThreadState::LayerInput& input = inputs[i];
        if (users[i].empty()) {
            hookInputGradient(layerName.c_str(), layer, input.index, input.name.c_str(),
                              input.tensor);
            continue;
        }
        std::shared_ptr<SharedInputGradient> shared;
        if (users[i].size() > 1) {
            shared = std::make_shared<SharedInputGradient>();
            shared->layer = layer;
            shared->index = input.index;
            shared->name = input.name;
        }
        for (InputUser& user : users[i]) {
            auto it = std::find_if(hooks.begin(), hooks.end(),
                                   [&](const auto& hook) { return hook.first == user.node; });
            if (it == hooks.end()) it = hooks.insert(hooks.end(), {user.node, {}});
            it->second.push_back({std::move(user.edges), input.index, input.name, shared});
        }
    }
    for (auto& [node, wanted] : hooks) {
        gGradientHooksMade.fetch_add(1, std::memory_order_relaxed);
        node->add_post_hook(std::make_unique<InputGradientsHook>(layer, std::move(wanted)));
    }
}

}  // namespace
}  // namespace probe::torch_adapter

TORCH_LIBRARY(probe, m) {
    m.def("report_tensors(int io, Tensor[] tensors, str[] names) -> int",
          &probe::torch_adapter::reportTensorsOp);
    m.def("report_backward_outputs(str layer, int first, Tensor[] grads, str[] names) -> int",
          &probe::torch_adapter::reportBackwardOutputsOp);
}

// ---------------------------------------------------------------------------------------------
// C functions for the Python part (ctypes). None throws.

using namespace probe::torch_adapter;

PROBE_TORCH_API const char* probe_torch_built_version(void) {
    return TORCH_VERSION;
}

// The outermost module's call begins / ends on this thread. Begin returns 1 when the caller may
// count the layer calls of this call itself rather than begin them (while probe_counting_only()
// says so; see probe_torch_counted_layer_call), 0 when it must begin them: this thread watches
// the model's own aten ops, which a layer op begun here switches off inside it.
PROBE_TORCH_API int probe_torch_root_begin(const char* model_name) {
    try {
        ThreadState& tls = threadTls();
        closeBackwardLayer();
        // A pass the program ran without torch.autograd.backward or grad (Megatron's
        // run_backward) is over: the next one's backward ops are numbered from the first again.
        if (tls.backwardPasses == 0) tls.backwardOccurrences.clear();
        sealModelCall(tls);
        tls.inRoot = true;
        tls.rootOpOccurrences.clear();
        static thread_local std::string lastModel;
        const bool newModel = model_name && lastModel != model_name;
        if (newModel) tls.rootCallWatched = tls.rootOpsSeen = false;  // a model of its own
        syncCallbackWithProbeState();
        tls.rootWatchedWhole = tls.opCallback != at::INVALID_CALLBACK_HANDLE;
        if (newModel) {
            lastModel = model_name;
            probe_report_model(model_name, nullptr);
        }
        return tls.rootWatchedWhole ? 0 : 1;
    } catch (...) {
        return -1;
    }
}

PROBE_TORCH_API int probe_torch_root_end(void) {
    try {
        ThreadState& tls = threadTls();
        if (tls.rootWatchedWhole && tls.opCallback != at::INVALID_CALLBACK_HANDLE) {
            tls.rootCallWatched = true;
            if (!tls.rootOpOccurrences.empty()) tls.rootOpsSeen = true;
        }
        tls.inRoot = false;
        sealModelCall(tls);
        syncCallbackWithProbeState();
        tls.statsCache.clear();     // let go of the activations it holds
        tls.uninitialised.clear();  // the program may write it between calls (numpy, .data)
        tls.anyHandedOut = false;
        forgetWrittenAsynchronously(tls);
        return 0;
    } catch (...) {
        return -1;
    }
}

// A module's call begins. Returns the runtime's wants flags for it (PROBE_WANTS_*), and for a
// layer-level op kLayerProbeAwake when the probe is awake and kLayerGradEnabled when grad mode is
// on then (saves the caller two calls).
PROBE_TORCH_API int probe_torch_module_begin(const char* name, const char* type) {
    try {
        ThreadState& tls = threadTls();
        if (tls.frames.empty()) {
            syncCallbackWithProbeState();
            closeBackwardLayer();
            const int begun = beginOp(name, type, PROBE_OP_OPERATION);
            // Its begin may have applied a config (woken the probe, at this boundary): the
            // callbacks follow before its children run, or they would go unseen in it.
            syncCallbackWithProbeState();
            tls.currentLayer = recentLayerIndex(tls, name, type ? type : name);
            const int wants = pushFrame(FrameKind::Module, begun, tls.currentLayer);
            if (!probe_is_awake()) return wants;
            return wants | kLayerProbeAwake | (c10::GradMode::is_enabled() ? kLayerGradEnabled : 0);
        }
        if (!tls.frames.back().observeChildren) {
            tls.frames.push_back({FrameKind::Passive, false});
            return 0;
        }
        return pushFrame(FrameKind::Module, beginOp(name, type, PROBE_OP_OPERATION));
    } catch (...) {
        return 0;
    }
}

PROBE_TORCH_API int probe_torch_module_end(void) {
    try {
        ThreadState& tls = threadTls();
        if (tls.frames.empty()) return -1;
        if (tls.frames.size() == 1 && !tls.layerInputs.empty()) hookLayerInputGradients(tls, {});
        popFrame();
        return 0;
    } catch (...) {
        return -1;
    }
}

// Closes ops left open when an exception unwound through modules: keeps `depth` frames.
PROBE_TORCH_API int probe_torch_unwind_to(int depth) {
    try {
        ThreadState& tls = threadTls();
        while (static_cast<int>(tls.frames.size()) > depth && !tls.frames.empty()) popFrame();
        return 0;
    } catch (...) {
        return -1;
    }
}

// Whether this thread is in a backward pass: a module of the model called there (checkpointing's
// recomputation) is work of the backward op running, not a call of a model. A pass the program
// runs without torch.autograd.backward or grad (Megatron's run_backward) is known while one of
// its nodes runs: its last backward op stays open after it.
PROBE_TORCH_API int probe_torch_in_backward_pass(void) {
    const ThreadState* state = tlsState;
    return state &&
           (state->backwardPasses > 0 ||
            (state->frames.size() > 1 && state->frames.front().kind == FrameKind::BackwardNode));
}

PROBE_TORCH_API int probe_torch_depth(void) {
    return tlsState ? static_cast<int>(tlsState->frames.size()) : 0;
}

// For a caller counting layer calls itself while the runtime only counts (the layer's counter
// from probe_layer_counter_of): the layer's index here, the autograd sequence number before the
// call, and after it the call's end. The adapter keeps the numbers the call used, as for a layer
// op begun here, so that the backward ops of a pass are counted from its graph.
PROBE_TORCH_API int probe_torch_layer_index(const char* name, const char* type) {
    try {
        if (!name || !*name) return -1;
        return layerIndexFor(name, type && *type ? type : name);
    } catch (...) {
        return -1;
    }
}

PROBE_TORCH_API uint64_t probe_torch_sequence_number(void) {
    return at::sequence_number::peek();
}

PROBE_TORCH_API void probe_torch_counted_layer_call(int layer, uint64_t first_sequence) {
    try {
        ThreadState& tls = threadTls();
        ++tls.layerCallsCounted;
        recordLayerCall(tls, layer, first_sequence, at::sequence_number::peek());
    } catch (...) {
    }
}

namespace probe::torch_adapter {
namespace {

// A sleeping probe watches no autograd node, yet the rounds of the backward ops must not depend
// on when dumping began (as those of the forward ones do not): the backward ops of a pass are
// counted from its graph as it begins. Every layer call whose nodes the pass can reach (from the
// tensors it starts from) has its backward op, in the order the engine runs them (the later
// call's first: higher sequence numbers run first), and a layer called n times has n of them
// ("<layer>.backward", "<layer>.backward_1", ...), as when they are watched. A walk over the
// graph, a lookup per node: no callback per node, which cost as much as the rest of a sleeping
// probe on a small MLP. (A pass of torch.autograd.grad with `inputs` may run fewer nodes than it
// reaches: counted as reached.)
// "<layer>.backward", "<layer>.backward_1", ... of type "<type>Backward", made once per thread.
CountedOp& backwardOp(BackwardWalk& walk, int layer, int occurrence) {
    auto& ops = walk.ops;
    if (ops.size() <= static_cast<size_t>(layer)) ops.resize(layer + 1);
    auto& ofLayer = ops[static_cast<size_t>(layer)];
    while (ofLayer.size() <= static_cast<size_t>(occurrence)) {
        const LayerInfo info = layerInfo(layer);
        const size_t k = ofLayer.size();
        CountedOp op;
        op.name = info.name + ".backward" + (k ? "_" + std::to_string(k) : std::string());
        op.type = info.type + "Backward";
        ofLayer.push_back(std::move(op));
    }
    return ofLayer[static_cast<size_t>(occurrence)];
}

void countSleepingBackwardOps(BackwardWalk& walk, void* const* roots, int count) {
    auto& pending = walk.pending;
    auto& seen = walk.seen;
    auto& calls = walk.calls;
    auto& occurrences = walk.occurrences;
    pending.clear();
    calls.clear();
    seen.clear(seen.size());
    for (int i = 0; i < count; ++i) {
        if (!roots[i]) continue;
        const at::Tensor root = tensorOfImpl(roots[i]);
        if (!root.defined()) continue;
        if (torch::autograd::Node* node = torch::autograd::impl::grad_fn_unsafe(root))
            if (seen.insert(node)) pending.push_back(node);
    }
    {
        std::lock_guard<std::mutex> lock(gLayersMutex);
        uint64_t lastThread = 0;
        const SequenceRanges* ranges = nullptr;
        std::pair<uint64_t, uint64_t> lastRange{1, 0};  // [first, end) of the last call found
        int lastLayer = -1;
        while (!pending.empty()) {
            torch::autograd::Node* node = pending.back();
            pending.pop_back();
            if (!ranges || node->thread_id() != lastThread) {
                lastThread = node->thread_id();
                const auto it = gSequenceRanges.find(lastThread);
                ranges = it == gSequenceRanges.end() ? nullptr : &it->second;
                lastRange = {1, 0};
            }
            const uint64_t sequence = node->sequence_nr();
            if (sequence >= lastRange.first && sequence < lastRange.second) {
                calls.emplace_back(lastRange.first, lastLayer);  // the call's nodes are adjacent
            } else if (ranges) {
                const auto found = ranges->findRange(sequence);
                if (found.layer >= 0) {
                    lastRange = {found.first, found.end};
                    lastLayer = found.layer;
                    calls.emplace_back(found.first, found.layer);
                }
            }
            for (const torch::autograd::Edge& edge : node->next_edges())
                if (edge.function && seen.insert(edge.function.get()))
                    pending.push_back(edge.function.get());
        }
    }
    std::sort(calls.begin(), calls.end(), std::greater<>());
    calls.erase(std::unique(calls.begin(), calls.end()), calls.end());
    const uint64_t epoch = probe_counting_only();
    for (const auto& [call, layer] : calls) {
        if (occurrences.size() <= static_cast<size_t>(layer)) occurrences.resize(layer + 1, 0);
        countExecution(backwardOp(walk, layer, occurrences[layer]++), epoch);
    }
    for (const auto& call : calls) occurrences[call.second] = 0;
}

}  // namespace
}  // namespace probe::torch_adapter

// A backward pass (torch.autograd.backward / grad) begins / ends on this thread. `roots`: the
// TensorImpls (torch.Tensor._cdata) of the `count` tensors it starts from, when known.
// A pass begun inside another (reentrant checkpointing's backward runs one over the block it
// recomputed) is part of the op running: it closes nothing, and its nodes are that op's children.
PROBE_TORCH_API int probe_torch_backward_begin_from(void* const* roots, int count) {
    try {
        ThreadState& tls = threadTls();
        if (++tls.backwardPasses > 1) return 0;
        tls.watchingBackwardChildren = watchBackwardChildren(tls);
        syncCallbackWithProbeState();
        closeBackwardLayer();
        tls.backwardOccurrences.clear();
        if (roots && count > 0 && !probe_is_awake())
            countSleepingBackwardOps(tls.backwardWalk, roots, count);
        return 0;
    } catch (...) {
        return -1;
    }
}

PROBE_TORCH_API int probe_torch_backward_end(void) {
    try {
        ThreadState& tls = threadTls();
        if (tls.backwardPasses > 1) {
            --tls.backwardPasses;
            return 0;
        }
        closeBackwardLayer();
        tls.statsCache.clear();
        tls.backwardPasses = 0;
        forgetWrittenAsynchronously(tls);
        syncCallbackWithProbeState();
        return 0;
    } catch (...) {
        return -1;
    }
}

// The Python part's tensors, one per call: `impl` is torch.Tensor._cdata (the TensorImpl).
// io 0: inputs, 1: outputs of the op on top of this thread's stack. Returns 1 when reported,
// 0 when the op wants no tensors, -1 on a failure (said).
PROBE_TORCH_API int probe_torch_report_tensor(int io, int index, const char* name, void* impl) {
    return reportOneTensor(io == 1 ? PROBE_OUTPUT : PROBE_INPUT, index, name, impl,
                           "module tensors");
}

// Whether the op on top of this thread's stack is the autograd Function `function` (its class's
// name) and wants its tensors: its forward has returned, and its outputs are to be reported
// (probe_torch_report_tensor, io 1). RecordFunction gives none of a Python Function: its op had
// inputs only, and a Function that changed its values compared as a match. A layer-level one's
// outputs are wanted for its autograd node too (noteFunctionOutput).
PROBE_TORCH_API int probe_torch_function_outputs_wanted(const char* function) {
    const ThreadState* state = tlsState;
    if (!function || !state || state->frames.empty()) return 0;
    const Frame& top = state->frames.back();
    return top.kind == FrameKind::Aten && top.function &&
           std::strcmp(top.function, function) == 0 &&
           ((top.wants & (PROBE_WANTS_DATA | PROBE_WANTS_METADATA)) ||
            (state->frames.size() == 1 && !state->layerInputs.empty()));
}

// A gradient flowing out of `layer` (that of its forward input `index`) while its backward op
// is open: one of that op's outputs. Returns 1 when reported, 0 when not (another op is open).
PROBE_TORCH_API int probe_torch_report_backward_output(const char* layer, int index,
                                                       const char* name, void* impl) {
    try {
        if (!backwardLayerOpenFor(layer)) return 0;
    } catch (...) {
        return -1;
    }
    return reportOneTensor(PROBE_OUTPUT, index, name, impl, "backward outputs");
}

// Hooks the forward input `index` (named `name`, TensorImpl `impl`) of the module layer `layer`:
// noted while its call runs, hooked where its nodes pass the gradient back as it ends
// (hookLayerInputGradients; the Python part reports its outputs then, from which they are found),
// else on the tensor (hookInputGradient). Returns 1 when hooked, 0 when the tensor needs no
// gradient, -1 on a failure.
PROBE_TORCH_API int probe_torch_hook_input_gradient(const char* layer, int index, const char* name,
                                                    void* impl) {
    try {
        if (!layer || !impl || index < 0) return -1;
        // Layer-level ops are registered as they begin, before their inputs are hooked.
        const int layerIndex = layerIndexOf(layer);
        at::Tensor tensor = tensorOfImpl(impl);
        ThreadState& tls = threadTls();
        if (tls.frames.size() == 1 && tls.frames.back().kind == FrameKind::Module &&
            tls.frames.back().layer == layerIndex && layerIndex >= 0) {
            // The module on top: hooked as it ends, where its nodes pass the gradient back.
            return noteLayerInput(tls, tensor, index, name ? name : "") ? 1 : 0;
        }
        return hookInputGradient(layer, layerIndex, index, name ? name : "", tensor);
    } catch (const std::exception& e) {
        reportFailure("gradient hook", e.what());
    } catch (...) {
        reportFailure("gradient hook", "unknown failure");
    }
    return -1;
}

// The number of elements of the tensor whose TensorImpl is `impl`: the Python part checks once
// that torch.Tensor._cdata is what this adapter takes it for before using it.
PROBE_TORCH_API int64_t probe_torch_impl_numel(void* impl) {
    try {
        return impl ? static_cast<c10::TensorImpl*>(impl)->numel() : -1;
    } catch (...) {
        return -1;
    }
}

// How many threads have the RecordFunction callback registered (for tests and benchmarks).
PROBE_TORCH_API int probe_torch_observing_ops(void) {
    return gThreadsObserving.load();
}

// How many hooks on input gradients this process has registered (for tests).
PROBE_TORCH_API int64_t probe_torch_gradient_hooks_made(void) {
    return gGradientHooksMade.load();
}

// How many layer calls of this thread were counted rather than begun (for tests).
PROBE_TORCH_API int64_t probe_torch_layer_calls_counted(void) {
    return tlsState ? tlsState->layerCallsCounted : 0;
}

// How many backward passes, while awake, had the ops inside their nodes watched (for tests).
PROBE_TORCH_API int64_t probe_torch_backward_passes_watched(void) {
    return gBackwardPassesWatched.load();
}
