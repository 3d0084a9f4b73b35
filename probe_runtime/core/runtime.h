// The runtime inside the model process: op stacks per thread, layer-level ops and their
// rounds, the config in force, tensor capture and statistics, handing files to the writer.
// No Qt, no exceptions across its public functions (the C API wraps them).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "probe/format/op_config.h"
#include "probe/format/tensor_stats.h"

namespace probe::runtime {

class DumpWriter;
class ConfigWatcher;
class ModelStructureBuilder;
struct ObservedOp;

// How the runtime classifies an op for filter_level 2 (kernel-level tensors).
enum class OpKind { Auto = 0, Operation = 1, Kernel = 2 };

struct TensorReport {
    int io = 0;  // PROBE_INPUT / PROBE_OUTPUT
    int index = 0;
    const char* argName = nullptr;
    int dtype = 0;
    int format = 2;
    const int64_t* dims = nullptr;
    int ndims = 0;
    const void* data = nullptr;
    uint64_t nbytes = 0;
    uint64_t bufferId = 0;
    // Statistics computed by the engine, used instead of data (task statistics only).
    const format::TensorStats* stats = nullptr;
};

// What the top op of the calling thread wants reported (bit flags).
enum OpWants : int { kWantsNothing = 0, kWantsData = 1, kWantsMetadata = 2, kWantsChildren = 4, kWantsStatisticsOnly = 8 };

// Observers of what the runtime sees, for the live control socket. Called on the op's thread;
// must be cheap and must not call back into the runtime.
class RuntimeListener {
public:
    virtual ~RuntimeListener() = default;
    virtual void layerDiscovered(int id, const std::string& name, const std::string& type) = 0;
    virtual void statisticRow(const std::string& csvLine) = 0;
    virtual void configApplied(const format::OpConfig& config, const std::string& source) = 0;
    virtual void configRejected(const std::string& reason, const std::string& source) = 0;
    // "sleeping", "dumping", "stopped" (dumping stopped early), with why.
    virtual void stateChanged(const std::string& state, const std::string& reason) = 0;
    virtual void message(const std::string& text) = 0;
};

struct LayerDescription {
    int id = 0;
    std::string name, type;
};

class ControlServer;

struct ConfigSnapshot {
    format::OpConfig config;
    uint64_t generation = 0;
};

class Runtime {
public:
    static Runtime& instance();

    int start(const char* outputDir, const char* configPath);
    int stop();
    bool isStarted() const { return started_.load(std::memory_order_acquire); }

    int opBegin(const char* name, const char* type, const char* paramJson, OpKind kind);
    int opTensor(const TensorReport& tensor);
    int opEnd();
    int opWants() const;
    int opSetParam(const char* paramJson);

    bool isAwake() const { return awake_.load(std::memory_order_acquire); }
    uint64_t stateGeneration() const { return stateGeneration_.load(std::memory_order_acquire); }

    int setDevice(int device);
    int reportModel(const char* modelName, const char* modelJson);
    int reportWeight(const char* name, uint64_t bufferId);
    int reportLayer(const char* layerName, const char* layerJson);
    int setRound(int64_t round);

    // Applies a config given as text (from the control socket): validated exactly like the
    // file; on success also written to the config file. Returns "" or the problems.
    std::string applyConfigText(const std::string& text, const std::string& source);
    std::shared_ptr<const ConfigSnapshot> currentConfig() const;

    void setListener(RuntimeListener* listener) { listener_.store(listener); }
    // For a client attaching: who this process is and what it does (the hello message).
    nlohmann::json describe() const;
    std::vector<LayerDescription> knownLayers();
    // The control socket's path, "" when there is none.
    std::string controlSocketPath() const;

    std::string dumpRoot() const { return root_; }
    std::string configPath() const { return configPath_; }
    int device() const { return device_.load(std::memory_order_relaxed); }

    // Thread's last error.
    static const char* lastError();
    static void setLastError(std::string message);

    // Internal: statistic.csv rows batched per thread.
    void flushRows(struct ThreadState& ts);
    void flushAllRows();

    // Internal: signal and fork handling.
    void handleSignal(int signal);
    void afterForkInChild();
    void housekeepingLoop();

private:
    Runtime() = default;

    struct LayerSlot {
        int id = 0;
        std::string name, type;
        int64_t executions = 0;
        bool structureCaptured = false;
        bool explicitStructure = false;
    };

    int beginLayer(struct ThreadState& ts, const std::string& name, const std::string& type,
                   const char* paramJson);
    int beginChild(struct ThreadState& ts, const std::string& name, const std::string& type,
                   const char* paramJson, OpKind kind);
    void finishLayerStructure(struct ThreadState& ts);
    void writeOpParam(const std::string& opDir, const char* paramJson);
    LayerSlot* slotFor(const std::string& name, const std::string& type, int64_t& round);
    std::string devicePid() const;
    std::string infoDirectory(const char* kind) const;

    void onConfigFileChanged(bool removed);
    void applyConfig(const format::OpConfig& config, const std::string& source);
    void recomputeAwake();
    void info(const std::string& text);
    void error(const std::string& text);
    void warning(const std::string& text);
    void record(bool isError, const std::string& text);
    void writeStatus(const char* state);
    int stopRuntime(bool fromHousekeeping);

    std::atomic<bool> started_{false};
    std::atomic<bool> awake_{false};
    std::atomic<uint64_t> stateGeneration_{1};
    std::atomic<uint64_t> epoch_{0};
    std::atomic<int> device_{-1};
    std::atomic<RuntimeListener*> listener_{nullptr};
    int64_t ownerPid_ = 0;

    std::mutex lifecycleMutex_;
    std::string outputDir_, root_, configPath_;
    // Created once, reused by every start, never freed: an op racing a stop on another thread
    // may still use them.
    DumpWriter* writer_ = nullptr;
    ConfigWatcher* watcher_ = nullptr;
    ControlServer* control_ = nullptr;
    std::atomic<bool> watching_{false};     // this session watches a config file
    std::atomic<bool> controlling_{false};  // this session has a control socket

    mutable std::mutex configMutex_;
    std::shared_ptr<const ConfigSnapshot> config_;
    uint64_t configGeneration_ = 0;

    std::mutex layersMutex_;
    std::unordered_map<std::string, std::unique_ptr<LayerSlot>> layers_;
    int nextLayerId_ = 0;
    bool explicitRounds_ = false;
    int64_t round_ = 0;
    std::unordered_map<std::string, int> occurrencesInRound_;

    std::mutex modelMutex_;
    std::string modelName_;
    std::unordered_map<std::string, std::unique_ptr<ModelStructureBuilder>> models_;
    std::unordered_set<std::string> explicitModels_;
    std::unordered_set<uint64_t> weightBuffers_;  // reported by probe_report_weight

    std::mutex statusMutex_;
    std::vector<std::string> messages_;
    uint64_t messageErrors_ = 0;
    std::string interruptedBy_;  // the signal that ended the program ("SIGTERM"), if one did
    std::string startedAt_, command_;
    std::string stateName() const;
    bool quiet_ = false;
    int housekeepingPipe_[2] = {-1, -1};
    std::atomic<bool> housekeepingStop_{false};
    void* housekeepingThread_ = nullptr;  // std::thread*, kept opaque here
};

}  // namespace probe::runtime
