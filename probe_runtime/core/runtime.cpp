// SPDX-License-Identifier: GPL-3.0-or-later
#include "runtime.h"

#include <fcntl.h>

#include <algorithm>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "config_watcher.h"
#include "control_server.h"
#include "dump_writer.h"
#include "probe/format/config_issue.h"
#include "probe/format/dtype.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/statistic_csv.h"
#include "probe/format/structure_json.h"
#include "probe/format/tensor_bin.h"
#include "probe/format/tensor_stats.h"
#include "structure_builder.h"
#include "probe_config.h"

namespace probe::runtime {

// ---------------------------------------------------------------------------------------------
// Per-thread state

namespace {

struct Frame {
    bool active = false;          // part of an execution being observed
    bool selected = false;        // this op's tensors are dumped
    bool childrenActive = false;  // children must be observed (selected or structure capture)
    bool kernel = false;
    int depth = 0;
    uint32_t childCount = 0;
    std::string id, name, type, namePath, relDir;
    ObservedOp* observed = nullptr;
};

struct DedupKey {
    uint64_t hash, nbytes;
    int32_t dtype;
    std::string shape;
    bool operator==(const DedupKey& o) const {
        return hash == o.hash && nbytes == o.nbytes && dtype == o.dtype && shape == o.shape;
    }
};
struct DedupKeyHash {
    size_t operator()(const DedupKey& k) const { return static_cast<size_t>(k.hash ^ (k.nbytes << 7)); }
};

struct LayerExecution {
    std::shared_ptr<const ConfigSnapshot> config;
    void* slot = nullptr;  // Runtime::LayerSlot*
    int64_t round = 0;
    bool inRange = false;
    bool capture = false;
    std::string devicePid, roundDir, csvPath;
    std::unique_ptr<ObservedOp> observed;
    std::unordered_map<DedupKey, std::string, DedupKeyHash> firstCopies;

    void reset() {
        config.reset();
        slot = nullptr;
        observed.reset();
        firstCopies.clear();
        capture = inRange = false;
    }
};

}  // namespace

// statistic.csv rows of one thread, written in batches rather than one job per row. Reachable
// from stop() (through the registry below), so nothing pending is lost when the process ends.
struct PendingRows {
    std::mutex mutex;
    std::string path, text;
    uint64_t count = 0;
};

struct ThreadState {
    uint64_t epoch = 0;
    std::vector<Frame> stack;
    LayerExecution layer;
    PendingRows rows;
    ThreadState();
    ~ThreadState();
};

namespace {

std::mutex gThreadsMutex;
std::vector<ThreadState*> gThreads;
constexpr size_t kRowBatchBytes = 256 * 1024;

thread_local ThreadState* tlsState = nullptr;
thread_local std::string tlsLastError;

}  // namespace

ThreadState::ThreadState() {
    std::lock_guard<std::mutex> lock(gThreadsMutex);
    gThreads.push_back(this);
}

ThreadState::~ThreadState() {
    Runtime::instance().flushRows(*this);
    std::lock_guard<std::mutex> lock(gThreadsMutex);
    gThreads.erase(std::remove(gThreads.begin(), gThreads.end(), this), gThreads.end());
}

namespace {

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
        tlsState->rows.text.clear();
        tlsState->rows.count = 0;
        tlsState->epoch = epoch;
    }
    return *tlsState;
}

std::string sanitizeName(const char* text) {
    std::string out = text ? text : "";
    for (auto& c : out)
        if (c == '/' || c == '\n' || c == '\r' || c == '\0') c = '_';
    return out;
}

uint64_t envMegabytes(const char* name, uint64_t fallbackMb) {
    const char* value = std::getenv(name);
    if (!value || !*value) return fallbackMb << 20;
    char* end = nullptr;
    unsigned long long mb = std::strtoull(value, &end, 10);
    if (end == value || *end != '\0') return fallbackMb << 20;
    return static_cast<uint64_t>(mb) << 20;
}

std::string processCommandLine() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (auto& c : raw)
        if (c == '\0') c = ' ';
    while (!raw.empty() && raw.back() == ' ') raw.pop_back();
    return raw;
}

std::string processName() {
    std::ifstream in("/proc/self/comm");
    std::string name;
    std::getline(in, name);
    return name.empty() ? "model" : sanitizeName(name.c_str());
}

// Signals: the handler only writes the signal number to a pipe; the housekeeping thread drains
// the writer, marks the dump complete, restores the previous handler and re-raises.
int gSignalPipeWrite = -1;
struct sigaction gPreviousInt, gPreviousTerm;
std::atomic<bool> gSignalsInstalled{false};

void onSignal(int signal) {
    const int saved = errno;
    if (gSignalPipeWrite >= 0) {
        unsigned char byte = static_cast<unsigned char>(signal);
        if (::write(gSignalPipeWrite, &byte, 1) < 0) {
        }
    }
    errno = saved;
}

void childAfterFork() { Runtime::instance().afterForkInChild(); }

void stopAtExit() {
    try {
        Runtime::instance().stop();
    } catch (...) {
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Lifecycle

Runtime& Runtime::instance() {
    // Never destroyed: ops on other threads may still run during static destruction.
    static Runtime* runtime = new Runtime();
    return *runtime;
}

const char* Runtime::lastError() { return tlsLastError.c_str(); }

void Runtime::setLastError(std::string message) { tlsLastError = std::move(message); }

int Runtime::start(const char* outputDir, const char* configPath) {
    std::lock_guard<std::mutex> lifecycle(lifecycleMutex_);
    if (started_.load()) return 0;

    std::string out = outputDir && *outputDir ? outputDir : "";
    if (out.empty()) {
        const char* env = std::getenv("PROBE_OUTPUT_DIR");
        out = env && *env ? env : ".";
    }
    std::string cfg = configPath && *configPath ? configPath : "";
    if (cfg.empty()) {
        const char* env = std::getenv("PROBE_CONFIG");
        cfg = env && *env ? env : "";
    }
    outputDir_ = format::absolutePath(out);
    root_ = format::joinPath(outputDir_, "atb_dump_data");
    configPath_ = cfg.empty() ? std::string() : format::absolutePath(cfg);
    const char* quiet = std::getenv("PROBE_QUIET");
    quiet_ = quiet && *quiet && std::strcmp(quiet, "0") != 0;

    if (int err = format::makeDirectories(root_)) {
        setLastError("cannot create the output directory " + root_ + ": " + std::strerror(err));
        return -4;
    }
    if (::access(root_.c_str(), W_OK) != 0) {
        setLastError("the output directory " + root_ + " is not writable: " + std::strerror(errno));
        return -4;
    }

    ownerPid_ = ::getpid();
    startedAt_ = format::isoTimestampNow();
    command_ = processCommandLine();
    {
        std::lock_guard<std::mutex> lock(statusMutex_);
        messages_.clear();
        messageErrors_ = 0;
        interruptedBy_.clear();
    }
    {
        std::lock_guard<std::mutex> lock(layersMutex_);
        layers_.clear();
        nextLayerId_ = 0;
        explicitRounds_ = false;
        round_ = 0;
        occurrencesInRound_.clear();
    }
    {
        std::lock_guard<std::mutex> lock(modelMutex_);
        models_.clear();
        explicitModels_.clear();
        if (modelName_.empty()) modelName_ = processName();
    }

    WriterOptions options;
    options.root = root_;
    options.memoryCapBytes = envMegabytes("PROBE_MEMORY_CAP_MB", 512);
    options.minFreeBytes = envMegabytes("PROBE_MIN_FREE_MB", 256);
    // One writer, watcher and control server for the process, reused by every start: an op
    // racing a stop on another thread may still hold a pointer to them.
    if (!writer_) {
        writer_ = new DumpWriter(options, [this](const std::string& text) {
            error(text);
            recomputeAwake();
        });
    } else {
        writer_->reset(options);
    }
    writer_->start();

    // The config in force: the file when it is valid, else the defaults (dump disabled).
    {
        std::lock_guard<std::mutex> lock(configMutex_);
        config_ = std::make_shared<ConfigSnapshot>(ConfigSnapshot{format::OpConfig{}, ++configGeneration_});
    }
    if (!configPath_.empty()) {
        if (format::fileExists(configPath_)) {
            auto result = format::loadOpConfigFile(configPath_);
            if (result.ok())
                applyConfig(*result.config, "file");
            else
                warning("config rejected, dumping stays disabled until it is fixed:\n" +
                      format::describeIssues(result.issues));
        } else {
            info("config " + configPath_ + " does not exist yet; dumping is disabled until it is written");
        }
        if (!watcher_) {
            watcher_ = new ConfigWatcher(configPath_, [this](ConfigWatcher::Change change) {
                onConfigFileChanged(change == ConfigWatcher::Change::Removed);
            });
        } else {
            watcher_->setPath(configPath_);
        }
        watcher_->start();
        watching_ = true;
    } else {
        watching_ = false;
    }

    // Housekeeping: status file once a second, and signals.
    if (::pipe2(housekeepingPipe_, O_CLOEXEC | O_NONBLOCK) != 0) housekeepingPipe_[0] = housekeepingPipe_[1] = -1;
    housekeepingStop_ = false;
    housekeepingThread_ = new std::thread([this] { housekeepingLoop(); });

    const char* signals = std::getenv("PROBE_SIGNALS");
    if (!(signals && std::strcmp(signals, "0") == 0) && !gSignalsInstalled.exchange(true)) {
        gSignalPipeWrite = housekeepingPipe_[1];
        struct sigaction action {};
        action.sa_handler = onSignal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        sigaction(SIGINT, &action, &gPreviousInt);
        sigaction(SIGTERM, &action, &gPreviousTerm);
    } else if (gSignalsInstalled) {
        gSignalPipeWrite = housekeepingPipe_[1];
    }
    static std::once_flag processHooks;
    std::call_once(processHooks, [] {
        pthread_atfork(nullptr, nullptr, childAfterFork);
        std::atexit(stopAtExit);
    });

    // The live control socket, for the application to attach to.
    controlling_ = false;
    const char* control = std::getenv("PROBE_CONTROL");
    if (!(control && std::strcmp(control, "0") == 0)) {
        if (!control_) control_ = new ControlServer(*this);
        const std::string problem = control_->start();
        if (problem.empty()) {
            controlling_ = true;
            setListener(control_);
        } else {
            info("no live control socket (" + problem + "); the dump is written as usual");
        }
    }

    epoch_.fetch_add(1);
    started_.store(true, std::memory_order_release);
    recomputeAwake();
    writeStatus("running");
    return 0;
}

int Runtime::stop() { return stopRuntime(/*fromHousekeeping=*/false); }

int Runtime::stopRuntime(bool fromHousekeeping) {
    std::thread* housekeeping = nullptr;
    {
        std::lock_guard<std::mutex> lifecycle(lifecycleMutex_);
        if (!started_.load()) return 0;
        if (::getpid() != ownerPid_) return 0;  // a forked child never owns the parent's dump
        started_.store(false, std::memory_order_release);
        recomputeAwake();
        if (watching_) watcher_->stop();
        flushAllRows();
        // Drains what is queued; ops still running get their enqueue refused from here on, and
        // no write is left half done (a temporary file) when the process ends right after.
        writer_->stop();
        writeStatus("complete");
        if (controlling_) {
            setListener(nullptr);
            control_->stop();
        }
        housekeepingStop_ = true;
        housekeeping = static_cast<std::thread*>(housekeepingThread_);
        housekeepingThread_ = nullptr;
    }
    // Outside the lock: the housekeeping thread may itself be waiting for it (a signal arrived
    // while this thread was stopping).
    if (housekeeping && housekeeping->joinable()) {
        if (fromHousekeeping) {
            housekeeping->detach();  // this very thread: it ends when the signal is handled
        } else {
            if (housekeepingPipe_[1] >= 0) {
                unsigned char zero = 0;
                if (::write(housekeepingPipe_[1], &zero, 1) < 0) {
                }
            }
            housekeeping->join();
        }
    }
    delete housekeeping;
    return 0;
}

void Runtime::afterForkInChild() {
    // Only this thread exists in the child. The parent's dump belongs to the parent: the child
    // runs unprobed (its threads are gone), and never joins or drains anything.
    started_.store(false);
    awake_.store(false);
    stateGeneration_.fetch_add(1);
    if (writer_) writer_->abandonAfterFork();
    if (watcher_) watcher_->abandonAfterFork();
    if (control_) {
        listener_.store(nullptr);
        control_->abandonAfterFork();
    }
    auto* thread = static_cast<std::thread*>(housekeepingThread_);
    if (thread && thread->joinable()) thread->detach();
    housekeepingThread_ = nullptr;
    gSignalPipeWrite = -1;
    if (gSignalsInstalled.exchange(false)) {
        sigaction(SIGINT, &gPreviousInt, nullptr);
        sigaction(SIGTERM, &gPreviousTerm, nullptr);
    }
}

void Runtime::housekeepingLoop() {
    uint64_t lastWritten = ~0ull;
    while (!housekeepingStop_.load()) {
        pollfd fd{housekeepingPipe_[0], POLLIN, 0};
        int ready = ::poll(&fd, housekeepingPipe_[0] >= 0 ? 1 : 0, 1000);
        if (ready > 0) {
            unsigned char byte = 0;
            while (::read(housekeepingPipe_[0], &byte, 1) == 1)
                if (byte != 0 && !housekeepingStop_.load()) handleSignal(byte);
        }
        if (housekeepingStop_.load()) break;
        const auto c = writer_->counters();
        const uint64_t fingerprint = c.files * 1000003 + c.rows * 31 + c.errors + messageErrors_;
        if (fingerprint != lastWritten) {
            lastWritten = fingerprint;
            writeStatus("running");
        }
    }
}

void Runtime::handleSignal(int signal) {
    const char* name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    info(std::string("received ") + name + ": writing out what is queued, then stopping the probe");
    {
        // The dump is whole, but the program did not run to its end: the status says so.
        std::lock_guard<std::mutex> lock(statusMutex_);
        interruptedBy_ = name;
    }
    stopRuntime(/*fromHousekeeping=*/true);
    // Hand the signal to whoever had it before us (or the default action).
    const struct sigaction& previous = signal == SIGINT ? gPreviousInt : gPreviousTerm;
    gSignalsInstalled = false;
    gSignalPipeWrite = -1;
    sigaction(SIGINT, &gPreviousInt, nullptr);
    sigaction(SIGTERM, &gPreviousTerm, nullptr);
    if (previous.sa_handler != SIG_IGN) ::kill(::getpid(), signal);
}

void Runtime::writeStatus(const char* state) {
    if (!writer_) return;
    format::ProcessDumpStatus status;
    status.pid = ownerPid_;
    status.device = device_.load();
    status.state = state;
    status.command = command_;
    status.started = startedAt_;
    status.updated = format::isoTimestampNow();
    const auto counters = writer_->counters();
    status.files = counters.files;
    status.bytes = counters.bytes;
    status.rows = counters.rows;
    status.droppedRows = counters.droppedJobs;
    status.dumpStopped = writer_->diskStopped() ? writer_->diskStoppedReason() : "";
    {
        std::lock_guard<std::mutex> lock(statusMutex_);
        status.errors = messageErrors_;
        status.messages = messages_;
        status.interruptedBy = interruptedBy_;
    }
    if (int err = format::updateStatusFile(root_, status))
        std::fprintf(stderr, "[probe] cannot write %s/probe_status.json: %s\n", root_.c_str(), std::strerror(err));
}

void Runtime::info(const std::string& text) {
    if (!quiet_) std::fprintf(stderr, "[probe] %s\n", text.c_str());
    if (auto* l = listener_.load()) l->message(text);
}

void Runtime::error(const std::string& text) { record(true, text); }

void Runtime::warning(const std::string& text) { record(false, text); }

// Errors are the dump's own (files not written: the status counts them, and a dump with errors
// is incomplete); warnings are said and kept in the status's messages without making the dump
// incomplete (a config refused while the previous one dumped on).
void Runtime::record(bool isError, const std::string& text) {
    const char* level = isError ? "error" : "warning";
    std::fprintf(stderr, "[probe] %s: %s\n", level, text.c_str());
    {
        std::lock_guard<std::mutex> lock(statusMutex_);
        if (isError) ++messageErrors_;
        messages_.push_back(isError ? text : std::string(level) + ": " + text);
        if (messages_.size() > 20) messages_.erase(messages_.begin());
    }
    if (auto* l = listener_.load()) l->message(std::string(level) + ": " + text);
}

// ---------------------------------------------------------------------------------------------
// Config

std::shared_ptr<const ConfigSnapshot> Runtime::currentConfig() const {
    std::lock_guard<std::mutex> lock(configMutex_);
    return config_;
}

void Runtime::onConfigFileChanged(bool removed) {
    if (removed) {
        info("config " + configPath_ + " was removed; the current config stays in force");
        return;
    }
    auto result = format::loadOpConfigFile(configPath_);
    if (!result.ok()) {
        const std::string reason = format::describeIssues(result.issues);
        warning("config rejected, the previous one stays in force:\n" + reason);
        if (auto* l = listener_.load()) l->configRejected(reason, "file");
        return;
    }
    applyConfig(*result.config, "file");
}

std::string Runtime::applyConfigText(const std::string& text, const std::string& source) {
    auto result = format::parseOpConfig(text, source);
    if (!result.ok()) {
        const std::string reason = format::describeIssues(result.issues);
        warning("config rejected, the previous one stays in force:\n" + reason);
        if (auto* l = listener_.load()) l->configRejected(reason, source);
        return reason;
    }
    applyConfig(*result.config, source);
    if (!configPath_.empty()) {
        // Keep the file in step, so that what is on disk is what runs. The watcher will see
        // the same config again and ignore it.
        const std::string content = result.config->toFileText();
        if (int err = format::writeFileAtomically(configPath_, content))
            error("cannot write the config file " + configPath_ + ": " + std::strerror(err));
    }
    return "";
}

void Runtime::applyConfig(const format::OpConfig& config, const std::string& source) {
    {
        std::lock_guard<std::mutex> lock(configMutex_);
        const bool unchanged = config_ && config_->config == config;
        // The file rewritten with what is in force already (by a client's push, say): nothing
        // to say. A client asking for it is still answered.
        if (unchanged && source == "file") return;
        if (!unchanged) config_ = std::make_shared<ConfigSnapshot>(ConfigSnapshot{config, ++configGeneration_});
    }
    recomputeAwake();
    std::string summary = "config applied (" + source + "): dump_enable=" +
                          (config.dumpEnable ? "true" : "false") + " task=" + format::dumpTaskName(config.task) +
                          " exec_range=" + config.execRange.toString();
    if (!config.ids.empty()) summary += " ids=" + config.toJson()["ids"].get<std::string>();
    if (!config.opNames.empty()) summary += " op_name=" + config.toJson()["op_name"].get<std::string>();
    if (config.saveChild) summary += " save_child=true filter_level=" + std::to_string(config.filterLevel);
    info(summary);
    if (auto* l = listener_.load()) l->configApplied(config, source);
}

void Runtime::recomputeAwake() {
    bool awake = false;
    if (started_.load() && writer_ && !writer_->diskStopped()) {
        auto snapshot = currentConfig();
        awake = snapshot && snapshot->config.dumpEnable && snapshot->config.acceptsDevice(device_.load());
    }
    if (awake_.exchange(awake) != awake) {
        stateGeneration_.fetch_add(1, std::memory_order_acq_rel);
        if (auto* l = listener_.load()) {
            std::string reason;
            if (awake) reason = "dump_enable is true";
            else if (writer_ && writer_->diskStopped()) reason = writer_->diskStoppedReason();
            else if (!started_.load()) reason = "the probe stopped";
            else reason = "dump_enable is false, or this device is not selected";
            l->stateChanged(stateName(), reason);
        }
    }
}

std::string Runtime::stateName() const {
    if (awake_.load()) return "dumping";
    if (writer_ && writer_->diskStopped()) return "stopped";
    return "sleeping";
}

nlohmann::json Runtime::describe() const {
    return {{"probe_version", PROBE_VERSION_STRING},
            {"pid", ownerPid_},
            {"device", device_.load()},
            {"command", command_},
            {"output_dir", outputDir_},
            {"dump_root", root_},
            {"config_path", configPath_},
            {"state", stateName()},
            {"started", startedAt_}};
}

std::vector<LayerDescription> Runtime::knownLayers() {
    std::vector<LayerDescription> layers;
    std::lock_guard<std::mutex> lock(layersMutex_);
    for (const auto& [key, slot] : layers_) layers.push_back({slot->id, slot->name, slot->type});
    std::sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return layers;
}

std::string Runtime::controlSocketPath() const { return controlling_ ? control_->socketPath() : std::string(); }

// ---------------------------------------------------------------------------------------------
// Ops

std::string Runtime::devicePid() const {
    const int device = device_.load(std::memory_order_relaxed);
    const std::string pid = std::to_string(ownerPid_);
    return device >= 0 ? std::to_string(device) + "_" + pid : pid;
}

std::string Runtime::infoDirectory(const char* kind) const {
    return root_ + "/info/" + kind + "/" + devicePid();
}

Runtime::LayerSlot* Runtime::slotFor(const std::string& name, const std::string& type, int64_t& round) {
    std::lock_guard<std::mutex> lock(layersMutex_);
    std::string key = name;
    if (explicitRounds_) key += "\x1f" + std::to_string(occurrencesInRound_[name]++);
    auto& slot = layers_[key];
    if (!slot) {
        slot = std::make_unique<LayerSlot>();
        slot->id = nextLayerId_++;
        slot->name = name;
        slot->type = type;
        if (auto* l = listener_.load()) l->layerDiscovered(slot->id, name, type);
    }
    round = explicitRounds_ ? round_ : slot->executions;
    ++slot->executions;
    return slot.get();
}

int Runtime::opBegin(const char* name, const char* type, const char* paramJson, OpKind kind) {
    if (!started_.load(std::memory_order_acquire)) return 0;
    if (!name || !*name) {
        setLastError("probe_op_begin: the op name is empty");
        return -1;
    }
    ThreadState& ts = threadState(epoch_.load(std::memory_order_relaxed));
    if (!ts.stack.empty()) {
        Frame& parent = ts.stack.back();
        ++parent.childCount;
        if (!parent.active || !parent.childrenActive) {
            // Hot path inside an op nobody looks into: no strings, no locks.
            Frame frame;
            frame.depth = parent.depth + 1;
            ts.stack.push_back(std::move(frame));
            return 0;
        }
    }
    const std::string display = sanitizeName(name);
    const std::string typeName = type && *type ? sanitizeName(type) : display;
    if (ts.stack.empty()) return beginLayer(ts, display, typeName, paramJson);
    return beginChild(ts, display, typeName, paramJson, kind);
}

int Runtime::beginLayer(ThreadState& ts, const std::string& name, const std::string& type, const char* paramJson) {
    // A config change already made to the file takes effect here, at this boundary, for the
    // whole of this layer op (its children never see half of one config and half of another).
    if (watching_) watcher_->syncPending();
    int64_t round = 0;
    LayerSlot* slot = slotFor(name, type, round);

    Frame frame;
    frame.depth = 0;
    LayerExecution& layer = ts.layer;
    layer.reset();
    auto snapshot = currentConfig();
    const auto& config = snapshot->config;
    const bool active = config.dumpEnable && config.acceptsDevice(device_.load()) && !writer_->diskStopped();
    if (!active) {
        ts.stack.push_back(std::move(frame));
        return 0;
    }
    layer.config = snapshot;
    layer.slot = slot;
    layer.round = round;
    layer.inRange = config.execRange.contains(round);
    {
        std::lock_guard<std::mutex> lock(layersMutex_);
        layer.capture = !slot->structureCaptured;
    }
    frame.id = std::to_string(slot->id);
    frame.name = name;
    frame.type = type;
    frame.namePath = name;
    frame.relDir = frame.id + "_" + name;
    const format::OpLocation location{frame.id, frame.namePath, 0};
    frame.selected = layer.inRange && config.selects(location);
    frame.childrenActive = layer.capture || (layer.inRange && config.maySelectDescendants(location));
    frame.active = frame.selected || frame.childrenActive;
    if (frame.active) {
        layer.devicePid = devicePid();
        layer.roundDir = root_ + "/data/" + layer.devicePid + "/" + std::to_string(round);
        layer.csvPath = layer.roundDir + "/statistic.csv";
    }
    if (layer.capture) {
        layer.observed = std::make_unique<ObservedOp>();
        layer.observed->name = name;
        layer.observed->type = type;
        layer.observed->id = frame.id;
        layer.observed->paramJson = paramJson ? paramJson : "";
        frame.observed = layer.observed.get();
    }
    if (frame.selected && config.wantsTensors()) writeOpParam(layer.roundDir + "/" + frame.relDir, paramJson);
    const int wanted = frame.selected ? 1 : 0;
    ts.stack.push_back(std::move(frame));
    return wanted;
}

int Runtime::beginChild(ThreadState& ts, const std::string& name, const std::string& type,
                        const char* paramJson, OpKind kind) {
    Frame& parent = ts.stack.back();
    const uint32_t index = parent.childCount - 1;  // counted by opBegin
    Frame frame;
    frame.depth = parent.depth + 1;
    LayerExecution& layer = ts.layer;
    const auto& config = layer.config->config;
    const std::string local = std::to_string(index);
    frame.id = parent.id + "_" + local;
    frame.name = name;
    frame.type = type;
    frame.namePath = parent.namePath + "/" + name;
    frame.relDir = parent.relDir + "/" + local + "_" + name;
    frame.kernel = kind == OpKind::Kernel || (kind == OpKind::Auto && frame.depth >= 2);
    const format::OpLocation location{frame.id, frame.namePath, frame.depth};
    frame.selected = layer.inRange && config.selects(location);
    frame.childrenActive = layer.capture || (layer.inRange && config.maySelectDescendants(location));
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
    if (frame.selected && config.wantsTensors()) writeOpParam(layer.roundDir + "/" + frame.relDir, paramJson);
    const int wanted = frame.selected ? 1 : 0;
    ts.stack.push_back(std::move(frame));
    return wanted;
}

// op_param.json goes beside an op's tensor files: with task "statistics" there are none, and
// thousands of small files per round would cost more than the statistics themselves.
void Runtime::writeOpParam(const std::string& opDir, const char* paramJson) {
    if (!paramJson || !*paramJson) return;
    auto parsed = nlohmann::ordered_json::parse(paramJson, nullptr, false);
    std::string content;
    if (parsed.is_discarded()) {
        setLastError("op parameters are not valid JSON; written as a string");
        content = nlohmann::json(std::string(paramJson)).dump();
    } else {
        if ((parsed.is_object() || parsed.is_array()) && parsed.empty()) return;
        content = parsed.dump();
    }
    WriteJob job;
    job.kind = WriteJob::Kind::File;
    job.path = opDir + "/op_param.json";
    job.head = content + "\n";
    writer_->enqueue(std::move(job));
}

int Runtime::opWants() const {
    if (!started_.load(std::memory_order_acquire) || !tlsState || tlsState->stack.empty() ||
        tlsState->epoch != epoch_.load(std::memory_order_relaxed))
        return kWantsNothing;
    const Frame& top = tlsState->stack.back();
    int wants = kWantsNothing;
    if (top.active && top.selected) wants |= kWantsData;
    if (top.observed) wants |= kWantsMetadata;
    if (top.active && top.childrenActive) wants |= kWantsChildren;
    if ((wants & kWantsData) && !tlsState->layer.config->config.wantsTensors()) wants |= kWantsStatisticsOnly;
    return wants;
}

int Runtime::opSetParam(const char* paramJson) {
    if (!started_.load(std::memory_order_acquire)) return 0;
    ThreadState& ts = threadState(epoch_.load(std::memory_order_relaxed));
    if (ts.stack.empty()) {
        setLastError("probe_op_set_param: no op is open on this thread");
        return -5;
    }
    Frame& frame = ts.stack.back();
    if (!frame.active) return 0;
    if (frame.observed) frame.observed->paramJson = paramJson ? paramJson : "";
    if (frame.selected && ts.layer.config->config.wantsTensors())
        writeOpParam(ts.layer.roundDir + "/" + frame.relDir, paramJson);
    return 0;
}

int Runtime::opTensor(const TensorReport& t) {
    if (!started_.load(std::memory_order_acquire)) return 0;
    ThreadState& ts = threadState(epoch_.load(std::memory_order_relaxed));
    if (ts.stack.empty()) {
        setLastError("probe_op_tensor: no op is open on this thread (call probe_op_begin first)");
        return -5;
    }
    if ((t.io != 0 && t.io != 1) || t.index < 0 || t.ndims < 0 || (t.ndims > 0 && !t.dims)) {
        setLastError("probe_op_tensor: io must be PROBE_INPUT or PROBE_OUTPUT, index >= 0, and dims given when ndims > 0");
        return -1;
    }
    Frame& frame = ts.stack.back();
    if (!frame.active) return 0;
    const bool isOutput = t.io == 1;
    if (frame.observed)
        frame.observed->addTensor(isOutput, t.index, t.bufferId ? t.bufferId : reinterpret_cast<uintptr_t>(t.data));
    if (!frame.selected || (!t.data && !t.stats)) return 0;

    LayerExecution& layer = ts.layer;
    const auto& config = layer.config->config;
    if (t.stats && config.wantsTensors()) {
        setLastError("probe_op_tensor_stats: this op wants the tensor's data (task " +
                     std::string(format::dumpTaskName(config.task)) + "), not statistics alone");
        return -1;
    }
    std::vector<int64_t> dims(t.dims, t.dims + t.ndims);
    const auto dtype = format::dtypeFromCode(t.dtype);
    const auto count = format::elementCount(dims);
    if (!count) {
        setLastError("probe_op_tensor: negative dimension in shape " + format::shapeString(dims));
        return -1;
    }
    if (t.data && dtype && *count * format::dtypeSize(*dtype) != t.nbytes) {
        setLastError("probe_op_tensor: " + std::to_string(t.nbytes) + " bytes do not match shape " +
                     format::shapeString(dims) + " of " + format::dtypeName(*dtype) + " (" +
                     std::to_string(*count * format::dtypeSize(*dtype)) + " bytes expected)");
        return -1;
    }

    const std::string arg = sanitizeName(t.argName);
    const std::string indexText = std::to_string(t.index) + (arg.empty() ? "" : "_" + arg);
    const std::string fileName = std::string(isOutput ? "outtensor" : "intensor") + indexText + ".bin";

    format::StatRow row;
    row.devicePid = layer.devicePid;
    row.round = layer.round;
    row.opName = frame.namePath;
    row.opType = frame.type;
    row.opId = frame.id;
    row.isOutput = isOutput;
    row.index = indexText;
    row.dtype = dtype ? format::dtypeName(*dtype) : "undefined(" + std::to_string(t.dtype) + ")";
    row.format = format::formatName(t.format);
    row.shape = format::shapeString(dims);
    if (config.wantsStatistics() && dtype) {
        const auto stats = t.stats ? *t.stats : format::computeTensorStats(*dtype, t.data, *count);
        if (stats.valid) {
            row.max = stats.max;
            row.min = stats.min;
            row.mean = stats.mean;
            row.norm = stats.norm;
        }
    }
    if (config.wantsTensors()) {
        format::BinHeader header;
        header.formatCode = t.format;
        header.dtypeCode = t.dtype;
        header.dims = dims;
        header.dataLength = t.nbytes;
        if (frame.kernel && config.skipsKernelTensors()) {
            header.alias = fileName;  // as the reference: header only, naming itself
        } else if (config.deduplicatesTensors()) {
            DedupKey key{format::contentHash64(t.data, t.nbytes), t.nbytes, t.dtype, row.shape};
            auto [it, inserted] = layer.firstCopies.try_emplace(std::move(key), frame.id + "_" + fileName);
            if (!inserted) header.alias = it->second;
        }
        WriteJob job;
        job.kind = WriteJob::Kind::Tensor;
        job.path = layer.roundDir + "/" + frame.relDir + (isOutput ? "/after/" : "/before/") + fileName;
        job.head = format::makeBinHeader(header);
        if (!header.headerOnly() && t.nbytes) {
            job.data.reset(new uint8_t[t.nbytes]);
            std::memcpy(job.data.get(), t.data, t.nbytes);
            job.size = t.nbytes;
        }
        row.tensorPath = job.path;
        writer_->enqueue(std::move(job));
    }
    const std::string line = format::formatStatRow(row);
    if (auto* l = listener_.load()) l->statisticRow(line);
    bool full = false;
    {
        std::lock_guard<std::mutex> lock(ts.rows.mutex);
        if (ts.rows.count == 0) ts.rows.path = layer.csvPath;
        ts.rows.text += line;
        ++ts.rows.count;
        full = ts.rows.text.size() >= kRowBatchBytes;
    }
    if (full) flushRows(ts);
    return 1;
}

void Runtime::flushRows(ThreadState& ts) {
    std::lock_guard<std::mutex> lock(ts.rows.mutex);
    if (ts.rows.count == 0) return;
    WriteJob job;
    job.kind = WriteJob::Kind::Row;
    job.path = std::move(ts.rows.path);
    job.head = std::move(ts.rows.text);
    job.rows = ts.rows.count;
    ts.rows.path.clear();
    ts.rows.text.clear();
    ts.rows.count = 0;
    if (writer_) writer_->enqueue(std::move(job));
}

void Runtime::flushAllRows() {
    std::lock_guard<std::mutex> lock(gThreadsMutex);
    for (ThreadState* ts : gThreads) flushRows(*ts);
}

int Runtime::opEnd() {
    if (!started_.load(std::memory_order_acquire)) return 0;
    ThreadState& ts = threadState(epoch_.load(std::memory_order_relaxed));
    if (ts.stack.empty()) {
        setLastError("probe_op_end: no op is open on this thread");
        return -5;
    }
    const bool layerEnds = ts.stack.size() == 1;
    ts.stack.pop_back();
    if (layerEnds) {
        flushRows(ts);
        if (ts.layer.capture && ts.layer.observed) finishLayerStructure(ts);
        ts.layer.reset();
    }
    return 0;
}

void Runtime::finishLayerStructure(ThreadState& ts) {
    auto* slot = static_cast<LayerSlot*>(ts.layer.slot);
    bool explicitLayer = false;
    {
        std::lock_guard<std::mutex> lock(layersMutex_);
        if (slot->structureCaptured) return;  // another thread got there first
        slot->structureCaptured = true;
        explicitLayer = slot->explicitStructure;
    }
    const ObservedOp& observed = *ts.layer.observed;
    std::vector<SourceTensor> sources;
    format::StructureNode layer = buildLayerStructure(observed, &sources);
    if (!explicitLayer) {
        WriteJob job;
        job.kind = WriteJob::Kind::File;
        job.path = infoDirectory("layer") + "/" + format::safeFileComponent(slot->name + "_" + observed.id) + ".json";
        job.head = layer.toJson().dump() + "\n";
        writer_->enqueue(std::move(job));
    }
    std::lock_guard<std::mutex> lock(modelMutex_);
    if (explicitModels_.count(modelName_)) return;
    auto& builder = models_[modelName_];
    if (!builder) builder = std::make_unique<ModelStructureBuilder>(modelName_);
    // Of what the layer's ops read and no op wrote, the reported weights are the model's.
    sources.erase(std::remove_if(sources.begin(), sources.end(),
                                 [&](const SourceTensor& s) { return weightBuffers_.count(s.buffer) == 0; }),
                  sources.end());
    builder->addLayer(observed, std::move(layer), sources);
    WriteJob job;
    job.kind = WriteJob::Kind::LatestFile;
    job.path = infoDirectory("model") + "/" + format::safeFileComponent(modelName_) + ".json";
    job.head = builder->model().toJson().dump() + "\n";
    writer_->enqueue(std::move(job));
}

int Runtime::setDevice(int device) {
    device_.store(device < 0 ? -1 : device);
    recomputeAwake();
    return 0;
}

int Runtime::reportModel(const char* modelName, const char* modelJson) {
    if (!modelName || !*modelName) {
        setLastError("probe_report_model: the model name is empty");
        return -1;
    }
    const std::string name = sanitizeName(modelName);
    std::string content;
    if (modelJson && *modelJson) {
        auto parsed = nlohmann::ordered_json::parse(modelJson, nullptr, false);
        if (parsed.is_discarded() || !parsed.is_object()) {
            setLastError("probe_report_model: the model description is not a JSON object");
            return -1;
        }
        content = parsed.dump() + "\n";
    }
    {
        std::lock_guard<std::mutex> lock(modelMutex_);
        modelName_ = name;
        if (!content.empty()) explicitModels_.insert(name);
    }
    if (!content.empty()) {
        if (!started_.load()) {
            setLastError("probe_report_model: the runtime is not started");
            return -2;
        }
        WriteJob job;
        job.kind = WriteJob::Kind::LatestFile;
        job.path = infoDirectory("model") + "/" + format::safeFileComponent(name) + ".json";
        job.head = std::move(content);
        writer_->enqueue(std::move(job));
    }
    return 0;
}

int Runtime::reportWeight(const char* name, uint64_t bufferId) {
    if (bufferId == 0) {
        setLastError(std::string("probe_report_weight: no buffer id for ") + (name ? name : "the weight"));
        return -1;
    }
    std::lock_guard<std::mutex> lock(modelMutex_);
    weightBuffers_.insert(bufferId);
    return 0;
}

int Runtime::reportLayer(const char* layerName, const char* layerJson) {
    if (!started_.load()) {
        setLastError("probe_report_layer: the runtime is not started");
        return -2;
    }
    if (!layerName || !*layerName || !layerJson) {
        setLastError("probe_report_layer: layer name and JSON are required");
        return -1;
    }
    auto parsed = nlohmann::ordered_json::parse(layerJson, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
        setLastError("probe_report_layer: the layer description is not a JSON object");
        return -1;
    }
    const std::string name = sanitizeName(layerName);
    int id = 0;
    {
        std::lock_guard<std::mutex> lock(layersMutex_);
        auto& slot = layers_[name];
        if (!slot) {
            slot = std::make_unique<LayerSlot>();
            slot->id = nextLayerId_++;
            slot->name = name;
            slot->type = name;
        }
        slot->explicitStructure = true;
        id = slot->id;
    }
    WriteJob job;
    job.kind = WriteJob::Kind::LatestFile;
    job.path = infoDirectory("layer") + "/" + format::safeFileComponent(name + "_" + std::to_string(id)) + ".json";
    job.head = parsed.dump() + "\n";
    writer_->enqueue(std::move(job));
    return 0;
}

int Runtime::setRound(int64_t round) {
    if (round < 0) {
        setLastError("probe_set_round: the round must be >= 0");
        return -1;
    }
    std::lock_guard<std::mutex> lock(layersMutex_);
    if (!explicitRounds_ || round != round_) occurrencesInRound_.clear();
    explicitRounds_ = true;
    round_ = round;
    return 0;
}

}  // namespace probe::runtime
