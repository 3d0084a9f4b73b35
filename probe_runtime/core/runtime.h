// The runtime inside the model process: the facade the C API calls. It owns one piece per
// concern, each in its own file and with its own lock:
//   lifecycle.cpp       start, stop, signals, fork, the housekeeping thread (lifecycleMutex_)
//   config_state.*      the config in force and its changes
//   op_tracker.*        op stacks per thread, layer-level ops and their rounds
//   tensor_capture.*    a tensor's statistics, .bin files and statistic.csv rows
//   model_reports.*     info/model and info/layer: observed and reported structure, weights
//   status_recorder.*   messages for people and probe_status.json
// No Qt, no exceptions across its public functions (the C API wraps them).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config_state.h"
#include "model_reports.h"
#include "op_tracker.h"
#include "overflow_watch.h"
#include "probe/format/control_messages.h"
#include "probe/format/op_config.h"
#include "probe/format/states.h"
#include "probe/format/tensor_stats.h"
#include "status_recorder.h"
#include "tensor_capture.h"

namespace probe::runtime {

class DumpWriter;
class ConfigWatcher;
class ControlServer;

// Observers of what the runtime sees, for the live control socket. Called on the op's thread
// (rowsWritten: on the writer's); must be cheap and must not call back into the runtime.
class RuntimeListener {
public:
    virtual ~RuntimeListener() = default;
    virtual void layerDiscovered(int id, const std::string& name, const std::string& type) = 0;
    // Rows of round `round` are in their statistic.csv files now.
    virtual void rowsWritten(int64_t round, uint64_t rows, uint64_t bytes) = 0;
    virtual void configApplied(const format::OpConfig& config, const std::string& source) = 0;
    virtual void configRejected(const std::string& reason, const std::string& source) = 0;
    virtual void stateChanged(format::ProbeState state, const std::string& reason) = 0;
    virtual void message(format::MessageLevel level, const std::string& text) = 0;
};

class Runtime {
public:
    static Runtime& instance();

    // Lifecycle (lifecycle.cpp).
    int start(const char* outputDir, const char* configPath);
    int stop();
    // probe_before_exec(): what is queued written out, the status complete until more is written.
    int beforeExec(const char* program);
    bool isStarted() const { return started_.load(std::memory_order_acquire); }

    // Ops and their tensors.
    int opBegin(const char* name, const char* type, const char* paramJson, OpKind kind,
                int* wants = nullptr) {
        return ops_.opBegin(name, type, paramJson, kind, wants);
    }
    int opTensor(const TensorReport& tensor) { return capture_.opTensor(tensor); }
    int opEnd() { return ops_.opEnd(); }
    int opCountChild() { return ops_.opCountChild(); }
    int opCountLayer(const char* name, const char* type) { return ops_.opCountLayer(name, type); }
    int opWants() const { return ops_.opWants(); }
    int opSetParam(const char* paramJson) { return ops_.opSetParam(paramJson); }
    int setRound(int64_t round) { return ops_.layers().setRound(round); }

    bool isAwake() const { return awake_.load(std::memory_order_acquire); }
    uint64_t stateGeneration() const { return stateGeneration_.load(std::memory_order_acquire); }
    // probe_counting_only: the epoch while a layer-level op beginning now needs only counting
    // (asleep, no rounds set by the engine, no change of the config that may be waiting for it:
    // ConfigWatcher::boundaryMayBeCounted), else 0.
    uint64_t countingOnly() const;

    int setDevice(int device);
    int reportModel(const char* modelName, const char* modelJson) {
        return models_.reportModel(modelName, modelJson);
    }
    int reportWeight(const char* name, uint64_t bufferId) {
        return models_.reportWeight(name, bufferId);
    }
    int reportLayer(const char* layerName, const char* layerJson) {
        return models_.reportLayer(layerName, layerJson);
    }

    // Applies a config given as text (from the control socket): validated exactly like the
    // file; on success also written to the config file. Returns "" or the problems.
    std::string applyConfigText(const std::string& text, const std::string& source) {
        return config_.applyText(text, source);
    }
    std::shared_ptr<const ConfigSnapshot> currentConfig() const { return config_.current(); }

    void setListener(RuntimeListener* listener) { listener_.store(listener); }
    // Tells the listener, if there is one. Calls from op threads are counted, so that stopping
    // waits until none is under way before the listener goes (see quiesce()).
    template <typename Call>
    void notify(Call call) {
        const InFlight inFlight(inFlight_);
        if (auto* l = listener_.load()) call(*l);
    }
    // For a client attaching: who this process is and what it does (the hello message; its
    // config is the server's to fill in).
    format::control::Hello describe() const;
    std::vector<LayerDescription> knownLayers() { return ops_.layers().known(); }
    // The control socket's path, "" when there is none.
    std::string controlSocketPath() const;

    std::string dumpRoot() const { return root_; }
    std::string configPath() const { return configPath_; }
    // Where the run's record of its config is kept in step with the config applied
    // (PROBE_CONFIG_RECORD, set by probe run beside the dump when the config is the user's
    // file); "" when the config file is its own record.
    std::string configRecordPath() const { return configRecordPath_; }
    int device() const { return device_.load(std::memory_order_relaxed); }

    // Thread's last error.
    static const char* lastError();
    static void setLastError(std::string message);

    // For the pieces: what the session shares.
    DumpWriter& writer() const { return *writer_; }
    bool hasWriter() const { return writer_ != nullptr; }
    const std::string& root() const { return root_; }
    int64_t ownerPid() const { return ownerPid_; }
    uint64_t epoch() const { return epoch_.load(std::memory_order_relaxed); }
    // "<dev>_<pid>", or "<pid>" when no device is known: the data/ and info/ folder of this
    // process.
    std::string devicePid() const;
    std::string infoDirectory(const char* kind) const;
    // A config change made to the file takes effect before the next layer-level op (on this
    // thread, whose last check of the file `lastCheck` is): ConfigWatcher::syncAtBoundary.
    void syncConfigFile(std::chrono::steady_clock::time_point& lastCheck, bool roundBegins);
    // probe_report_own_config_writes / probe_note_file_written: ConfigWatcher::askEveryRound,
    // noteWrite.
    void reportOwnConfigWrites(bool reported);
    void noteFileWritten(const char* path);
    void recomputeAwake();
    ConfigState& config() { return config_; }
    OpTracker& ops() { return ops_; }
    TensorCapture& capture() { return capture_; }
    ModelReports& models() { return models_; }
    OverflowWatch& overflow() { return overflow_; }
    StatusRecorder& status() { return status_; }

    // Internal: signal and fork handling (lifecycle.cpp).
    void handleSignal(int signal);
    void drainForFatalSignal(int signal);
    void afterForkInChild();
    void housekeepingLoop();

private:
    Runtime();

    // Counts a call into a piece that stop() stops (the listener, the config watcher) while
    // it is under way.
    struct InFlight {
        explicit InFlight(std::atomic<int>& count) : count_(count) { count_.fetch_add(1); }
        ~InFlight() { count_.fetch_sub(1); }
        std::atomic<int>& count_;
    };
    // Waits until no op thread is inside the listener or the watcher (those that come later
    // find them gone). Called with them switched off.
    void quiesce();

    format::ProbeState probeState() const;
    int stopRuntime(bool fromHousekeeping);

    std::atomic<bool> started_{false};
    std::atomic<bool> awake_{false};
    std::atomic<uint64_t> stateGeneration_{1};
    std::atomic<uint64_t> epoch_{0};
    std::atomic<int> device_{-1};
    std::atomic<RuntimeListener*> listener_{nullptr};
    std::atomic<int> inFlight_{0};
    int64_t ownerPid_ = 0;

    std::mutex lifecycleMutex_;
    std::string outputDir_, root_, configPath_, configRecordPath_;
    // Created once, reused by every start, never freed: an op racing a stop on another thread
    // may still use them.
    DumpWriter* writer_ = nullptr;
    ConfigWatcher* watcher_ = nullptr;
    ControlServer* control_ = nullptr;
    std::atomic<bool> watching_{false};  // this session watches a config file
    std::atomic<bool> ownConfigWritesReported_{false};
    std::atomic<bool> controlling_{false};  // this session has a control socket
    int housekeepingPipe_[2] = {-1, -1};
    std::atomic<bool> housekeepingStop_{false};
    void* housekeepingThread_ = nullptr;  // std::thread*, kept opaque here

    ConfigState config_;
    StatusRecorder status_;
    OpTracker ops_;
    TensorCapture capture_;
    ModelReports models_;
    OverflowWatch overflow_{*this};
};

}  // namespace probe::runtime
