// Op tracking: each thread's stack of open ops, the layer-level ops (by name) with their ids and
// rounds, and what the config in force selects of each op as it begins.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "config_state.h"
#include "probe/format/recent_by_address.h"

namespace probe::runtime {

class Runtime;
struct ObservedOp;
struct Frame;
struct ThreadState;

// How the runtime classifies an op for filter_level 2 (kernel-level tensors).
enum class OpKind { Auto = 0, Operation = 1, Kernel = 2 };

// What the top op of the calling thread wants reported (bit flags).
enum OpWants : int {
    kWantsNothing = 0,
    kWantsData = 1,
    kWantsMetadata = 2,
    kWantsChildren = 4,
    kWantsStatisticsOnly = 8
};

struct LayerDescription {
    int id = 0;
    std::string name, type;
};

// The layer-level ops seen so far: ids in first-seen order, executions (rounds) per op, or the
// engine's explicit rounds.
// A thread's layer slots last begun (LayerRegistry::Slot*), by the address of the raw name they
// were begun with: a model's layer ops pass the same names again and again. Checked against the
// slot's key (the address may hold another name by now); emptied when the runtime restarts (the
// slots go).
using RecentSlots = format::RecentByAddress<void*>;

class LayerRegistry {
public:
    struct Slot {
        int id = 0;
        std::string name, type;
        std::string key;  // the raw name it is looked up by (with rounds set by the engine:
                          // and its occurrence in the round)
        std::atomic<int64_t> executions{0};
        bool structureCaptured = false;
        bool explicitStructure = false;
        // Made at its first begin() and never changed after: the op's name made safe, the raw
        // type (the raw name when none) of that begin and that type made safe, the id's text.
        bool began = false;
        std::string opName, opRawType, opType, idText;
    };

    explicit LayerRegistry(Runtime& runtime) : runtime_(runtime) {}
    void reset();
    // The slot of the layer op `rawName` beginning now (of type `rawType`, its name when none),
    // and the round of this execution. `recent`: the calling thread's slots last begun, looked
    // at first (no lock, no hashing of the name).
    Slot* begin(const char* rawName, const char* rawType, int64_t& round, RecentSlots& recent);
    // The slot of the layer op `rawName`, made known without counting an execution (for
    // probe_layer_counter_of); nullptr while the engine sets the rounds.
    Slot* counterOf(const char* rawName, const char* rawType);
    bool explicitRounds() const { return explicitRounds_.load(std::memory_order_relaxed); }
    // True when this execution should capture the layer's structure (none captured yet).
    bool wantsStructure(const Slot& slot);
    // Claims the structure capture of `slot`; false when another thread got there first.
    bool claimStructure(Slot& slot, bool* explicitLayer);
    // The engine describes the layer itself (probe_report_layer): its id.
    int markExplicit(const std::string& key, const std::string& name);
    int setRound(int64_t round);
    std::vector<LayerDescription> known();

private:
    // The slot of key_ (the caller holds mutex_), made and announced when new.
    Slot& slotOfKey(const char* rawName, const char* rawType);

    Runtime& runtime_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<Slot>> slots_;
    int nextId_ = 0;
    std::atomic<bool> explicitRounds_{false};
    int64_t round_ = 0;
    std::unordered_map<std::string, int> occurrencesInRound_;
    std::string key_;  // begin()'s look-up key (memory kept from op to op)
};

class OpTracker {
public:
    explicit OpTracker(Runtime& runtime) : runtime_(runtime), layers_(runtime) {}

    // With `wants`, also what the op just begun wants (opWants' flags), for one call per op.
    int opBegin(const char* name, const char* type, const char* paramJson, OpKind kind,
                int* wants = nullptr);
    int opEnd();
    // probe_op_count_child: an op inside the top one counted, not begun (1), or 0.
    int opCountChild();
    // probe_op_count_layer: an execution of a layer-level op counted, not begun (1), or 0.
    int opCountLayer(const char* name, const char* type);
    int opWants() const;
    int opSetParam(const char* paramJson);
    LayerRegistry& layers() { return layers_; }
    const LayerRegistry& layers() const { return layers_; }
    // op_param.json of an op, written beside its tensor files.
    void writeOpParam(const std::string& opDir, const char* paramJson);

private:
    int beginLayer(ThreadState& ts, const char* rawName, const char* rawType,
                   const char* paramJson);
    int beginChild(ThreadState& ts, std::string_view name, std::string_view type,
                   const char* paramJson, OpKind kind);
    int selectTop(ThreadState& ts, const char* paramJson);
    static int wantsOf(const ThreadState& ts);

    Runtime& runtime_;
    LayerRegistry layers_;
};

}  // namespace probe::runtime
