// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_tracker.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dump_writer.h"
#include "op_names.h"
#include "probe/format/json_input.h"
#include "runtime.h"
#include "thread_state.h"

namespace probe::runtime {

// ---------------------------------------------------------------------------------------------
// Thread states

namespace {
thread_local ThreadState* tlsState = nullptr;
}  // namespace

ThreadState& threadState(uint64_t epoch) {
    if (!tlsState) {
        // Freed at thread exit by a thread_local owner.
        static thread_local std::unique_ptr<ThreadState> owner(new ThreadState);
        tlsState = owner.get();
    }
    if (tlsState->epoch != epoch) {
        tlsState->stack.clear();
        tlsState->layer.reset();
        std::lock_guard<std::mutex> lock(tlsState->rows.mutex);
        tlsState->rows.path.clear();
        tlsState->rows.packed.clear();
        tlsState->rows.count = 0;
        tlsState->lastConfigCheck = {};
        tlsState->lastConfigCheckRound = -1;
        tlsState->recentSlots.clear();
        tlsState->configInForce.reset();
        tlsState->epoch = epoch;
    }
    return *tlsState;
}

ThreadState* existingThreadState(uint64_t epoch) {
    return tlsState && tlsState->epoch == epoch ? tlsState : nullptr;
}

// ---------------------------------------------------------------------------------------------
// Layer-level ops

void LayerRegistry::reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_.clear();
    nextId_ = 0;
    explicitRounds_ = false;
    round_ = 0;
    occurrencesInRound_.clear();
}

LayerRegistry::Slot* LayerRegistry::begin(const char* rawName, const char* rawType, int64_t& round,
                                          RecentSlots& recent) {
    RecentSlots::Entry& cached = recent.at(rawName);
    if (cached.address == rawName && !explicitRounds_.load(std::memory_order_relaxed)) {
        auto* slot = static_cast<Slot*>(cached.value);
        if (slot->key == rawName) {
            round = slot->executions.fetch_add(1, std::memory_order_relaxed);
            return slot;
        }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    key_.assign(rawName);
    const bool explicitRounds = explicitRounds_.load(std::memory_order_relaxed);
    if (explicitRounds) {
        const int occurrence = occurrencesInRound_[key_]++;
        key_ += '\0';
        key_ += std::to_string(occurrence);
    }
    Slot& slot = slotOfKey(rawName, rawType);
    if (explicitRounds) {
        round = round_;
        slot.executions.fetch_add(1, std::memory_order_relaxed);
    } else {
        round = slot.executions.fetch_add(1, std::memory_order_relaxed);
        cached = {rawName, &slot};
    }
    return &slot;
}

LayerRegistry::Slot& LayerRegistry::slotOfKey(const char* rawName, const char* rawType) {
    auto& slot = slots_[key_];
    const bool discovered = !slot;
    if (discovered) {
        slot = std::make_unique<Slot>();
        slot->id = nextId_++;
        slot->key = key_;
    }
    if (!slot->began) {
        // The names of every execution of the op are made safe once, here.
        slot->began = true;
        slot->opName = sanitizeName(rawName);
        slot->opRawType = rawType && *rawType ? rawType : rawName;
        slot->opType = sanitizeName(slot->opRawType.c_str());
        slot->idText = std::to_string(slot->id);
    }
    if (discovered) {
        slot->name = slot->opName;
        slot->type = slot->opType;
        runtime_.notify(
            [&](RuntimeListener& l) { l.layerDiscovered(slot->id, slot->name, slot->type); });
    }
    return *slot;
}

LayerRegistry::Slot* LayerRegistry::counterOf(const char* rawName, const char* rawType) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (explicitRounds_.load(std::memory_order_relaxed)) return nullptr;
    key_.assign(rawName);
    return &slotOfKey(rawName, rawType);
}

bool LayerRegistry::wantsStructure(const Slot& slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    return !slot.structureCaptured;
}

bool LayerRegistry::claimStructure(Slot& slot, bool* explicitLayer) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (slot.structureCaptured) return false;
    slot.structureCaptured = true;
    *explicitLayer = slot.explicitStructure;
    return true;
}

int LayerRegistry::markExplicit(const std::string& key, const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = slots_[key];
    if (!slot) {
        slot = std::make_unique<Slot>();
        slot->id = nextId_++;
        slot->key = key;
        slot->name = name;
        slot->type = name;
    }
    slot->explicitStructure = true;
    return slot->id;
}

int LayerRegistry::setRound(int64_t round) {
    if (round < 0) {
        Runtime::setLastError("probe_set_round: the round must be >= 0");
        return -1;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!explicitRounds_ || round != round_) occurrencesInRound_.clear();
    explicitRounds_ = true;
    round_ = round;
    return 0;
}

std::vector<LayerDescription> LayerRegistry::known() {
    std::vector<LayerDescription> layers;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [key, slot] : slots_) layers.push_back({slot->id, slot->name, slot->type});
    std::sort(layers.begin(), layers.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    return layers;
}

// ---------------------------------------------------------------------------------------------
// Op boundaries

int OpTracker::opBegin(const char* name, const char* type, const char* paramJson, OpKind kind,
                       int* wants) {
    if (wants) *wants = kWantsNothing;
    if (!runtime_.isStarted()) return 0;
    if (!name || !*name) {
        Runtime::setLastError("probe_op_begin: the op name is empty");
        return -1;
    }
    ThreadState& ts = threadState(runtime_.epoch());
    if (!ts.stack.empty()) {
        Frame& parent = ts.stack.back();
        ++parent.childCount;
        if (!parent.active || !parent.childrenActive) {
            // Hot path inside an op nobody looks into: no strings, no locks.
            const int depth = parent.depth + 1;
            ts.stack.push().depth = depth;
            return 0;
        }
    }
    if (ts.stack.empty()) {
        const int selected = beginLayer(ts, name, type, paramJson);
        if (wants) *wants = wantsOf(ts);
        return selected;
    }
    // An op inside another (nearly every op): its names as views, copied once into its frame.
    const OpNames names = sanitizedOpNames(name, type, ts.opName, ts.opType);
    const int selected = beginChild(ts, names.name, names.type, paramJson, kind);
    if (wants) *wants = wantsOf(ts);
    return selected;
}

namespace {
// Files are written per op (tensors, an overflow's dump): ops need their folders.
bool writesFilesPerOp(const format::OpConfig& config) {
    return config.wantsTensors() || config.task == format::DumpTask::OverflowCheck;
}
}  // namespace

int OpTracker::beginLayer(ThreadState& ts, const char* rawName, const char* rawType,
                          const char* paramJson) {
    int64_t round = 0;
    LayerRegistry::Slot* slot = layers_.begin(rawName, rawType, round, ts.recentSlots);
    // Its names, made safe once per op (not per execution), unless this execution gives
    // another type than the first.
    const std::string& name = slot->opName;
    const std::string* type = &slot->opType;
    if (const char* typeText = rawType && *rawType ? rawType : rawName;
        slot->opRawType != typeText) {
        sanitizeNameInto(typeText, ts.opType);
        type = &ts.opType;
    }
    // A config change made to the file takes effect here, at this boundary, for the whole of
    // this layer op (its children never see half of one config and half of another): when the
    // program wrote it before the round began, or 5 ms or more ago (syncAtBoundary).
    runtime_.syncConfigFile(ts.lastConfigCheck, round != ts.lastConfigCheckRound);
    ts.lastConfigCheckRound = round;

    LayerExecution& layer = ts.layer;
    layer.reset();
    const auto& config = runtime_.config().currentInto(ts.configInForce).config;
    const bool active = config.dumpEnable && config.acceptsDevice(runtime_.device()) &&
                        !runtime_.writer().diskStopped() &&
                        !(config.task == format::DumpTask::OverflowCheck &&
                          runtime_.overflow().exhausted(config.overflowNums));
    Frame& frame = ts.stack.push();
    if (!active) return 0;
    try {
        layer.config = ts.configInForce;
        layer.slot = slot;
        layer.round = round;
        layer.inRange = config.execRange.contains(round);
        layer.capture = layers_.wantsStructure(*slot);
        frame.id = slot->idText;
        frame.name = name;
        frame.type = *type;
        frame.namePath = name;
        // Its folder only when files are written per op (as a child's, in beginChild).
        if (writesFilesPerOp(config)) frame.relDir.append(frame.id).append(1, '_').append(name);
        const format::OpLocation location{frame.id, frame.namePath, 0};
        frame.selected = layer.inRange && config.selects(location);
        frame.childrenActive =
            layer.capture || (layer.inRange && config.maySelectDescendants(location));
        frame.active = frame.selected || frame.childrenActive;
        const int device = runtime_.device();
        if (frame.active && (layer.pathsRound != round || layer.pathsDevice != device ||
                             layer.pathsEpoch != ts.epoch)) {
            layer.devicePid = runtime_.devicePid();
            layer.roundDir =
                runtime_.root() + "/data/" + layer.devicePid + "/" + std::to_string(round);
            layer.csvPath = layer.roundDir + "/statistic.csv";
            layer.pathsRound = round;
            layer.pathsDevice = device;
            layer.pathsEpoch = ts.epoch;
            ++layer.pathsVersion;
        }
        if (layer.capture) {
            layer.observed = std::make_unique<ObservedOp>();
            layer.observed->name = name;
            layer.observed->type = *type;
            layer.observed->id = frame.id;
            layer.observed->paramJson = paramJson ? paramJson : "";
            frame.observed = layer.observed.get();
        }
        return selectTop(ts, paramJson);
    } catch (...) {
        ts.stack.pop_back();  // the op did not begin
        throw;
    }
}

// A selected op (the top one, just pushed) either waits for an overflow to be born in it (task
// overflow_check) or has its parameters written beside its tensor files.
int OpTracker::selectTop(ThreadState& ts, const char* paramJson) {
    const LayerExecution& layer = ts.layer;
    const auto& config = layer.config->config;
    Frame& frame = ts.stack.back();
    if (frame.selected && config.task == format::DumpTask::OverflowCheck)
        frame.overflow = OverflowWatch::watch(paramJson);
    else if (frame.selected && config.wantsTensors())
        writeOpParam(layer.roundDir + "/" + frame.relDir, paramJson);
    return frame.selected ? 1 : 0;
}

void FrameStack::nameChild(const Frame& parent, Frame& frame) {
    char digits[16];
    const size_t length = std::to_chars(digits, digits + sizeof digits, frame.index).ptr - digits;
    // push_back rather than append(1, c): inline, where the other is a call that costs as much
    // as a copy.
    frame.id.append(parent.id);
    frame.id.push_back('_');
    frame.id.append(digits, length);
    frame.namePath.append(parent.namePath);
    frame.namePath.push_back('/');
    frame.namePath.append(frame.displayName());
    frame.namesPending = false;
}

int OpTracker::beginChild(ThreadState& ts, std::string_view name, std::string_view type,
                          const char* paramJson, OpKind kind) {
    Frame& frame = ts.stack.push(FrameStack::kKeepType);
    try {
        Frame& parent = ts.stack[ts.stack.size() - 2];  // after the push, which may move it
        frame.index = parent.childCount - 1;            // counted by opBegin
        frame.depth = parent.depth + 1;
        const auto& config = ts.layer.config->config;
        // Siblings are often of one type (the selects of a batched matmul's loop): kept then.
        if (frame.type != type) frame.type.assign(type);
        const auto nameAt = reinterpret_cast<uintptr_t>(name.data()),
                   typeAt = reinterpret_cast<uintptr_t>(type.data());
        if (nameAt >= typeAt && nameAt + name.size() == typeAt + type.size())
            frame.nameInType = static_cast<uint32_t>(nameAt - typeAt);
        else
            frame.name = name;
        // Files per op (tensors, an overflow's dump), a structure captured or a config that
        // selects by id or name read the names at once; statistics alone only for a row.
        const bool filesPerOp = writesFilesPerOp(config);
        frame.namesPending = true;
        if (filesPerOp || parent.observed || !config.ids.empty() || !config.opNames.empty())
            ts.stack.named();
        // Its folder only when files are written per op: with statistics alone it is never
        // used, and it is the longest of the names.
        if (filesPerOp)
            frame.relDir.append(parent.relDir)
                .append(1, '/')
                .append(frame.id, parent.id.size() + 1)  // its index
                .append(1, '_')
                .append(name);
        frame.kernel = kind == OpKind::Kernel || (kind == OpKind::Auto && frame.depth >= 2);
        const format::OpLocation location{frame.id, frame.namePath, frame.depth};
        frame.selected = ts.layer.inRange && config.selects(location);
        frame.childrenActive =
            ts.layer.capture || (ts.layer.inRange && config.maySelectDescendants(location));
        frame.active = true;
        if (parent.observed) {
            auto child = std::make_unique<ObservedOp>();
            child->name = name;
            child->type = type;
            child->id = frame.id;
            child->paramJson = paramJson ? paramJson : "";
            frame.observed = child.get();
            parent.observed->children.push_back(std::move(child));
        }
        return selectTop(ts, paramJson);
    } catch (...) {
        ts.stack.pop_back();  // the op did not begin
        throw;
    }
}

// op_param.json goes beside an op's tensor files: with task "statistics" there are none, and
// thousands of small files per round would cost more than the statistics themselves.
void OpTracker::writeOpParam(const std::string& opDir, const char* paramJson) {
    if (!paramJson || !*paramJson) return;
    auto parsed = nlohmann::ordered_json::parse(paramJson, nullptr, false);
    std::string content;
    if (parsed.is_discarded()) {
        Runtime::setLastError("op parameters are not valid JSON; written as a string");
        content = format::dumpJson(nlohmann::json(std::string(paramJson)));
    } else {
        if ((parsed.is_object() || parsed.is_array()) && parsed.empty()) return;
        content = format::dumpJson(parsed);
    }
    WriteJob job;
    job.kind = WriteJob::Kind::File;
    job.path = opDir + "/op_param.json";
    job.head = content + "\n";
    runtime_.writer().enqueue(std::move(job));
}

int OpTracker::opWants() const {
    if (!runtime_.isStarted()) return kWantsNothing;
    const ThreadState* ts = existingThreadState(runtime_.epoch());
    return ts ? wantsOf(*ts) : kWantsNothing;
}

int OpTracker::wantsOf(const ThreadState& ts) {
    if (ts.stack.empty()) return kWantsNothing;
    const Frame& top = ts.stack.back();
    int wants = kWantsNothing;
    if (top.active && top.selected) wants |= kWantsData;
    if (top.observed) wants |= kWantsMetadata;
    if (top.active && top.childrenActive) wants |= kWantsChildren;
    if ((wants & kWantsData) && !ts.layer.config->config.wantsTensors())
        wants |= kWantsStatisticsOnly;
    return wants;
}

int OpTracker::opSetParam(const char* paramJson) {
    if (!runtime_.isStarted()) return 0;
    ThreadState& ts = threadState(runtime_.epoch());
    if (ts.stack.empty()) {
        Runtime::setLastError("probe_op_set_param: no op is open on this thread");
        return -5;
    }
    Frame& frame = ts.stack.back();
    if (!frame.active) return 0;
    if (frame.observed) frame.observed->paramJson = paramJson ? paramJson : "";
    if (frame.overflow)
        frame.overflow->paramJson = paramJson ? paramJson : "";
    else if (frame.selected && ts.layer.config->config.wantsTensors())
        writeOpParam(ts.layer.roundDir + "/" + frame.relDir, paramJson);
    return 0;
}

int OpTracker::opCountChild() {
    if (!runtime_.isStarted()) return 0;
    ThreadState& ts = threadState(runtime_.epoch());
    if (ts.stack.empty()) return 0;
    Frame& parent = ts.stack.back();
    // A structure being captured holds every op; an overflow is looked for op by op.
    if (parent.observed ||
        (ts.layer.config && ts.layer.config->config.task == format::DumpTask::OverflowCheck))
        return 0;
    ++parent.childCount;  // as opBegin counts it: the ops after it keep their ids
    return 1;
}

int OpTracker::opCountLayer(const char* name, const char* type) {
    if (!runtime_.isStarted()) return 0;
    if (!name || !*name) {
        Runtime::setLastError("probe_op_count_layer: the op name is empty");
        return -1;
    }
    ThreadState& ts = threadState(runtime_.epoch());
    if (!ts.stack.empty()) return 0;
    int64_t round = 0;
    layers_.begin(name, type, round, ts.recentSlots);
    return 1;
}

int OpTracker::opEnd() {
    if (!runtime_.isStarted()) return 0;
    ThreadState& ts = threadState(runtime_.epoch());
    if (ts.stack.empty()) {
        Runtime::setLastError("probe_op_end: no op is open on this thread");
        return -5;
    }
    const bool layerEnds = ts.stack.size() == 1;
    if (ts.stack.back().overflow) runtime_.overflow().opEnding(ts);
    ts.stack.pop_back();
    if (layerEnds) {
        if (ts.layer.capture && ts.layer.observed)
            runtime_.models().layerObserved(*ts.layer.slot, *ts.layer.observed);
        ts.layer.reset();
    }
    return 0;
}

}  // namespace probe::runtime
