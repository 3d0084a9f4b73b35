// The C API: thin wrappers that keep every exception inside the library.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <exception>
#include <new>
#include <string>

#include "probe/format/dtype.h"
#include "probe/probe.h"
#include "probe_config.h"
#include "runtime.h"

using probe::runtime::Runtime;

namespace {

// Runs `body`; any exception becomes PROBE_E_INTERNAL with its text as the thread's last error.
template <typename Body>
auto guarded(const char* function, Body body, decltype(body()) onError) noexcept
    -> decltype(body()) {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        Runtime::setLastError(std::string(function) + ": out of memory");
    } catch (const std::exception& e) {
        Runtime::setLastError(std::string(function) + ": " + e.what());
    } catch (...) {
        Runtime::setLastError(std::string(function) + ": unknown failure");
    }
    return onError;
}

probe::runtime::TensorReport tensorReport(int io, int index, const char* argName, int dtype,
                                          int format, const int64_t* dims, int ndims,
                                          uint64_t bufferId) {
    probe::runtime::TensorReport t;
    t.io = io;
    t.index = index;
    t.argName = argName;
    t.dtype = dtype;
    t.format = format;
    t.dims = dims;
    t.ndims = ndims;
    t.bufferId = bufferId;
    return t;
}

// The C API's op kind (PROBE_OP_*); anything else counts as Auto.
probe::runtime::OpKind opKindOf(int kind) {
    return kind < 0 || kind > 2 ? probe::runtime::OpKind::Auto
                                : static_cast<probe::runtime::OpKind>(kind);
}

}  // namespace

extern "C" {

int probe_start(const char* output_dir, const char* config_path) {
    return guarded(
        "probe_start", [&] { return Runtime::instance().start(output_dir, config_path); },
        PROBE_E_INTERNAL);
}

int probe_stop(void) {
    return guarded(
        "probe_stop", [] { return Runtime::instance().stop(); }, PROBE_E_INTERNAL);
}

int probe_before_exec(const char* program) {
    return guarded(
        "probe_before_exec", [&] { return Runtime::instance().beforeExec(program); },
        PROBE_E_INTERNAL);
}

int probe_is_started(void) {
    return Runtime::instance().isStarted() ? 1 : 0;
}

int probe_op_begin(const char* name, const char* type, const char* param_json) {
    return guarded(
        "probe_op_begin",
        [&] {
            return Runtime::instance().opBegin(name, type, param_json,
                                               probe::runtime::OpKind::Auto);
        },
        PROBE_E_INTERNAL);
}

int probe_op_begin_kind(const char* name, const char* type, const char* param_json, int kind) {
    return guarded(
        "probe_op_begin_kind",
        [&] { return Runtime::instance().opBegin(name, type, param_json, opKindOf(kind)); },
        PROBE_E_INTERNAL);
}

int probe_op_begin_wants(const char* name, const char* type, const char* param_json, int kind) {
    return guarded(
        "probe_op_begin_wants",
        [&] {
            int wants = 0;
            const int begun =
                Runtime::instance().opBegin(name, type, param_json, opKindOf(kind), &wants);
            return begun < 0 ? begun : wants;
        },
        PROBE_E_INTERNAL);
}

int probe_op_tensor_ex(int io, int index, const char* arg_name, int dtype, int format,
                       const int64_t* dims, int ndims, const void* data, uint64_t nbytes,
                       uint64_t buffer_id) {
    return guarded(
        "probe_op_tensor",
        [&] {
            auto t = tensorReport(io, index, arg_name, dtype, format, dims, ndims, buffer_id);
            t.data = data;
            t.nbytes = nbytes;
            return Runtime::instance().opTensor(t);
        },
        PROBE_E_INTERNAL);
}

int probe_op_tensor(int io, int index, const char* arg_name, int dtype, int format,
                    const int64_t* dims, int ndims, const void* data, uint64_t nbytes) {
    return probe_op_tensor_ex(io, index, arg_name, dtype, format, dims, ndims, data, nbytes, 0);
}

int probe_compute_stats(int dtype, const void* data, uint64_t count, probe_tensor_stats* out) {
    return guarded(
        "probe_compute_stats",
        [&] {
            if (!out) return static_cast<int>(PROBE_E_INVALID_ARGUMENT);
            const auto type = probe::format::dtypeFromCode(dtype);
            probe::format::TensorStats stats;
            if (type && data) stats = probe::format::computeTensorStats(*type, data, count);
            *out = {stats.max, stats.min, stats.mean, stats.norm, stats.count, stats.valid ? 1 : 0};
            return static_cast<int>(PROBE_OK);
        },
        PROBE_E_INTERNAL);
}

int probe_op_tensor_stats(int io, int index, const char* arg_name, int dtype, int format,
                          const int64_t* dims, int ndims, const probe_tensor_stats* stats,
                          uint64_t buffer_id) {
    return guarded(
        "probe_op_tensor_stats",
        [&] {
            if (!stats) return static_cast<int>(PROBE_E_INVALID_ARGUMENT);
            probe::format::TensorStats converted;
            converted.valid = stats->valid != 0;
            converted.max = stats->max;
            converted.min = stats->min;
            converted.mean = stats->mean;
            converted.norm = stats->norm;
            converted.count = stats->count;
            auto t = tensorReport(io, index, arg_name, dtype, format, dims, ndims, buffer_id);
            t.stats = &converted;
            return Runtime::instance().opTensor(t);
        },
        PROBE_E_INTERNAL);
}

int probe_op_end(void) {
    return guarded(
        "probe_op_end", [] { return Runtime::instance().opEnd(); }, PROBE_E_INTERNAL);
}

int probe_op_count_child(void) {
    return guarded(
        "probe_op_count_child", [] { return Runtime::instance().opCountChild(); }, 0);
}

int probe_op_count_layer(const char* name, const char* type) {
    return guarded(
        "probe_op_count_layer", [&] { return Runtime::instance().opCountLayer(name, type); },
        PROBE_E_INTERNAL);
}

uint64_t probe_counting_only(void) {
    return Runtime::instance().countingOnly();
}

probe_layer_counter* probe_layer_counter_of(const char* name, const char* type) {
    return guarded(
        "probe_layer_counter_of",
        [&]() -> probe_layer_counter* {
            auto& runtime = Runtime::instance();
            if (!runtime.isStarted()) return nullptr;
            if (!name || !*name) {
                Runtime::setLastError("probe_layer_counter_of: the op name is empty");
                return nullptr;
            }
            return reinterpret_cast<probe_layer_counter*>(
                runtime.ops().layers().counterOf(name, type));
        },
        static_cast<probe_layer_counter*>(nullptr));
}

void probe_layer_counter_add(probe_layer_counter* counter) {
    if (counter)
        reinterpret_cast<probe::runtime::LayerRegistry::Slot*>(counter)->executions.fetch_add(
            1, std::memory_order_relaxed);
}

int probe_op_wants(void) {
    return guarded(
        "probe_op_wants", [] { return Runtime::instance().opWants(); }, 0);
}

int probe_op_set_param(const char* param_json) {
    return guarded(
        "probe_op_set_param", [&] { return Runtime::instance().opSetParam(param_json); },
        PROBE_E_INTERNAL);
}

int probe_is_awake(void) {
    return Runtime::instance().isAwake() ? 1 : 0;
}

uint64_t probe_state_generation(void) {
    return Runtime::instance().stateGeneration();
}

int probe_may_select_below_layers(void) {
    return guarded(
        "probe_may_select_below_layers",
        [] {
            auto& runtime = Runtime::instance();
            if (!runtime.isStarted()) return 0;
            const auto snapshot = runtime.currentConfig();
            return snapshot && snapshot->config.maySelectBelowLayers() ? 1 : 0;
        },
        0);
}

int probe_set_device(int device_id) {
    return guarded(
        "probe_set_device", [&] { return Runtime::instance().setDevice(device_id); },
        PROBE_E_INTERNAL);
}

int probe_report_model(const char* model_name, const char* model_json) {
    return guarded(
        "probe_report_model",
        [&] { return Runtime::instance().reportModel(model_name, model_json); }, PROBE_E_INTERNAL);
}

int probe_report_weight(const char* name, uint64_t buffer_id) {
    return guarded(
        "probe_report_weight", [&] { return Runtime::instance().reportWeight(name, buffer_id); },
        PROBE_E_INTERNAL);
}

int probe_report_layer(const char* layer_name, const char* layer_json) {
    return guarded(
        "probe_report_layer",
        [&] { return Runtime::instance().reportLayer(layer_name, layer_json); }, PROBE_E_INTERNAL);
}

int probe_set_round(int64_t round) {
    return guarded(
        "probe_set_round", [&] { return Runtime::instance().setRound(round); }, PROBE_E_INTERNAL);
}

int probe_report_own_config_writes(int reported) {
    return guarded(
        "probe_report_own_config_writes",
        [&] {
            Runtime::instance().reportOwnConfigWrites(reported != 0);
            return PROBE_OK;
        },
        PROBE_E_INTERNAL);
}

int probe_warn(const char* text) {
    return guarded(
        "probe_warn",
        [&] {
            Runtime& runtime = Runtime::instance();
            if (text && runtime.isStarted()) runtime.status().warning(text);
            return PROBE_OK;
        },
        PROBE_E_INTERNAL);
}

int probe_note_file_written(const char* path) {
    return guarded(
        "probe_note_file_written",
        [&] {
            Runtime::instance().noteFileWritten(path);
            return PROBE_OK;
        },
        PROBE_E_INTERNAL);
}

const char* probe_grad_monitor_dir(void) {
    static thread_local std::string directory;
    directory = guarded(
        "probe_grad_monitor_dir",
        [] {
            Runtime& runtime = Runtime::instance();
            if (!runtime.isStarted() || !runtime.currentConfig()->config.gradMonitor)
                return std::string();
            return runtime.dumpRoot() + "/grad_monitor";
        },
        std::string());
    return directory.c_str();
}

const char* probe_last_error(void) {
    return Runtime::lastError();
}

const char* probe_version(void) {
    return PROBE_VERSION_STRING;
}

}  // extern "C"
