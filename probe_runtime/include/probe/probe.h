/* Probe Studio runtime: the C API an inference engine (or an adapter) calls at op boundaries.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The runtime lives inside the model's process. The engine tells it "op X begins", reports
 * the op's tensors, and "op X ends"; the runtime decides from the config which tensors are
 * wanted, computes statistics, and writes the standard op-level dump (atb_dump_data layout)
 * through its own writer thread.
 *
 * Rules every function follows:
 *  - No C++ exception ever leaves the library; failures return a negative PROBE_E_* code and
 *    the text is available from probe_last_error() on the same thread.
 *  - Every function is safe to call from several threads. Each thread has its own op stack:
 *    an op begun on a thread must end on that thread, and tensors are reported for the op on
 *    top of the calling thread's stack.
 *  - Before probe_start() (or after probe_stop()) op calls are cheap no-ops returning 0.
 *
 * Minimal use:
 *
 *     probe_start(NULL, NULL);                 // PROBE_OUTPUT_DIR / PROBE_CONFIG from the
 * environment if (probe_op_begin("Prefill_layer", "Prefill_layer", NULL) > 0) {
 *         // only now copy device memory to the host
 *         probe_op_tensor(PROBE_INPUT, 0, NULL, PROBE_DTYPE_FLOAT16, PROBE_FORMAT_ND, dims, 2,
 * host, nbytes);
 *     }
 *     ... children: probe_op_begin / probe_op_tensor / probe_op_end, nested ...
 *     probe_op_end();
 *     probe_stop();
 */
#ifndef PROBE_PROBE_H
#define PROBE_PROBE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PROBE_API __attribute__((visibility("default")))
#else
#define PROBE_API
#endif

/* Version of this API (major * 10000 + minor * 100 + patch). */
#define PROBE_API_VERSION 100

/* Return codes. Non-negative values are success. */
enum probe_status_code {
    PROBE_OK = 0,
    PROBE_E_INVALID_ARGUMENT = -1, /* a null or out-of-range argument */
    PROBE_E_NOT_STARTED = -2,      /* the call needs a started runtime */
    PROBE_E_CONFIG = -3,           /* the config file is unreadable or invalid (previous kept) */
    PROBE_E_IO = -4,               /* the output directory cannot be created or written */
    PROBE_E_STATE = -5,            /* e.g. probe_op_end() or probe_op_tensor() with no open op */
    PROBE_E_INTERNAL = -6          /* an unexpected failure, caught; see probe_last_error() */
};

/* Tensor element types: the dtype codes of the .bin format. */
enum probe_dtype {
    PROBE_DTYPE_FLOAT = 0,
    PROBE_DTYPE_FLOAT16 = 1,
    PROBE_DTYPE_INT8 = 2,
    PROBE_DTYPE_INT32 = 3,
    PROBE_DTYPE_UINT8 = 4,
    PROBE_DTYPE_INT16 = 6,
    PROBE_DTYPE_UINT16 = 7,
    PROBE_DTYPE_UINT32 = 8,
    PROBE_DTYPE_INT64 = 9,
    PROBE_DTYPE_UINT64 = 10,
    PROBE_DTYPE_DOUBLE = 11,
    PROBE_DTYPE_BOOL = 12,
    PROBE_DTYPE_COMPLEX64 = 16,
    PROBE_DTYPE_COMPLEX128 = 17,
    PROBE_DTYPE_BF16 = 27
};

/* Tensor memory formats: the format codes of the .bin format. */
enum probe_format {
    PROBE_FORMAT_NCHW = 0,
    PROBE_FORMAT_NHWC = 1,
    PROBE_FORMAT_ND = 2,
    PROBE_FORMAT_NC1HWC0 = 3,
    PROBE_FORMAT_FRACTAL_Z = 4,
    PROBE_FORMAT_FRACTAL_NZ = 29,
    PROBE_FORMAT_NCDHW = 30,
    PROBE_FORMAT_NC = 35,
    PROBE_FORMAT_NCL = 47
};

enum probe_io { PROBE_INPUT = 0, PROBE_OUTPUT = 1 };

/* Start the runtime. output_dir: the dump goes to <output_dir>/atb_dump_data; config_path: the
 * op-level config JSON, watched for changes while the model runs (it need not exist yet).
 * NULL for either takes PROBE_OUTPUT_DIR / PROBE_CONFIG from the environment; with no output
 * directory at all the current directory is used, with no config the defaults (dump disabled).
 * Calling it again while started is a no-op returning PROBE_OK.
 * Returns PROBE_OK, or PROBE_E_IO when the output directory cannot be created (or its
 * atb_dump_data is a symbolic link: the probe writes only inside a folder of its own, never
 * following a link planted in it); an invalid config does not fail the start: it is reported,
 * and the defaults stay in force.
 * Signals: at SIGINT/SIGTERM what is queued is written and the dump marked complete, then the
 * signal goes to the disposition it had (a signal the program ignores is left ignored). At a
 * fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) whose disposition is the default, what
 * is queued is written (waiting at most PROBE_FATAL_DRAIN_MS, default 3000) and the dump marked
 * incomplete before the program dies of it. PROBE_SIGNALS=0 leaves every signal alone. */
PROBE_API int probe_start(const char* output_dir, const char* config_path);

/* Drain every pending write, mark the dump complete in probe_status.json, stop the runtime's
 * threads and give every signal back the disposition it had before probe_start(). Also done
 * automatically at normal exit and on SIGINT/SIGTERM. */
PROBE_API int probe_stop(void);

/* 1 when started, else 0. */
PROBE_API int probe_is_started(void);

/* The program is about to exec() `program` (may be NULL): every row and tensor queued so far is
 * written out, and the status says the probe ended there (complete, with a note); a probe the new
 * image starts takes the entry over. The new image never runs this probe's stop: what was queued
 * (up to the memory cap's worth) was lost. If the exec fails, the next rows written mark the dump
 * running again. The Python probe calls it at os.exec*(). Does nothing in a forked child, whose
 * queue is its parent's. */
PROBE_API int probe_before_exec(const char* program);

/* Begin an op on the calling thread. An op begun with an empty stack is a layer-level op; ops
 * begun inside it are its children (operations), their children kernels, and so on.
 * name: shown in paths and statistic.csv; type: the op's type (NULL = same as name);
 * param_json: the op's parameters as a JSON text, or NULL/"" (written to op_param.json);
 *   JSON has no infinity or NaN: spell them "inf", "-inf", "nan", as the PyTorch adapter does.
 * A layer-level op is identified by its name: each one counts its own executions (rounds).
 * Returns 1 when this op's tensors are wanted (report them with data), 0 when not
 * (the engine should skip device-to-host copies), negative on error. */
PROBE_API int probe_op_begin(const char* name, const char* type, const char* param_json);

/* Report a tensor of the op on top of the calling thread's stack.
 * io: PROBE_INPUT or PROBE_OUTPUT; index: position among the op's inputs or outputs;
 * arg_name: optional argument name (NULL or ""), which appears in the file and row names;
 * dtype, format: PROBE_DTYPE_* and PROBE_FORMAT_* codes; dims/ndims: the shape (ndims 0 =
 * scalar); data: host pointer to nbytes of contiguous row-major little-endian data, read only
 * during this call. data may be NULL to report the tensor's metadata alone (used for the
 * model/layer structure); nbytes must match the shape and dtype when data is given.
 * Returns 1 when the tensor was captured, 0 when it was not wanted, negative on error. */
PROBE_API int probe_op_tensor(int io, int index, const char* arg_name, int dtype, int format,
                              const int64_t* dims, int ndims, const void* data, uint64_t nbytes);

/* Same as probe_op_tensor, with buffer_id naming the underlying buffer (a device address, say)
 * so that data flow between ops can be drawn in the layer structure even when the host copy
 * lives elsewhere. probe_op_tensor uses the data pointer as the buffer id. */
PROBE_API int probe_op_tensor_ex(int io, int index, const char* arg_name, int dtype, int format,
                                 const int64_t* dims, int ndims, const void* data, uint64_t nbytes,
                                 uint64_t buffer_id);

/* Op kinds for probe_op_begin_kind(): how filter_level 2 classifies an op. With
 * PROBE_OP_AUTO (what probe_op_begin uses) ops two or more levels below a layer-level op are
 * kernels (layer -> operations -> kernels). */
enum probe_op_kind { PROBE_OP_AUTO = 0, PROBE_OP_OPERATION = 1, PROBE_OP_KERNEL = 2 };

PROBE_API int probe_op_begin_kind(const char* name, const char* type, const char* param_json,
                                  int kind);

/* What the op on top of the calling thread's stack wants reported, as bit flags:
 * PROBE_WANTS_DATA (report tensors with data), PROBE_WANTS_METADATA (report tensors, data or
 * not, so that the layer structure can show data flow), PROBE_WANTS_CHILDREN (its children
 * are observed: an adapter that sees this bit clear may skip reporting them at all).
 * 0 when nothing. */
enum probe_wants {
    PROBE_WANTS_DATA = 1,
    PROBE_WANTS_METADATA = 2,
    PROBE_WANTS_CHILDREN = 4,
    /* With PROBE_WANTS_DATA: only statistics are kept (task "statistics"), so the engine may
     * hand over the elements in any order, or statistics it computed (probe_op_tensor_stats). */
    PROBE_WANTS_STATISTICS_ONLY = 8
};
PROBE_API int probe_op_wants(void);

/* probe_op_begin_kind returning, instead of 1 or 0, the PROBE_WANTS_* flags that
 * probe_op_wants() would return right after it (0 when the runtime is not started): one call
 * per op instead of two for an adapter that asks both. Negative on error, as probe_op_begin. */
PROBE_API int probe_op_begin_wants(const char* name, const char* type, const char* param_json,
                                   int kind);

/* The parameters of the op on top of the calling thread's stack, as JSON text, for engines
 * that know them only after probe_op_begin (same effect as passing them there). */
PROBE_API int probe_op_set_param(const char* param_json);

/* Statistics of a tensor, as the runtime computes them (one fused pass; NaN propagates as in
 * PyTorch; fp16/bf16 widened; for bool max = any, min = all). valid is 0 for an empty tensor
 * or a dtype without an order (complex). */
typedef struct probe_tensor_stats {
    double max, min, mean, norm;
    uint64_t count;
    int valid;
} probe_tensor_stats;

/* Computes the statistics of `count` elements of `dtype` at `data` (any element order). */
PROBE_API int probe_compute_stats(int dtype, const void* data, uint64_t count,
                                  probe_tensor_stats* out);

/* Like probe_op_tensor for an op whose tensors want statistics only
 * (PROBE_WANTS_STATISTICS_ONLY): the engine hands over statistics it computed with
 * probe_compute_stats (e.g. once for several views of the same memory) instead of the data. */
PROBE_API int probe_op_tensor_stats(int io, int index, const char* arg_name, int dtype, int format,
                                    const int64_t* dims, int ndims, const probe_tensor_stats* stats,
                                    uint64_t buffer_id);

/* End the op on top of the calling thread's stack. */
PROBE_API int probe_op_end(void);

/* Counts an op begun inside the calling thread's top op without beginning it, so that the ops
 * after it keep their ids: for an op that reports nothing and calls no op that does (a view
 * inside another op's kernel, such as the selects of a batched matmul's loop), at a fraction of
 * the cost of probe_op_begin and probe_op_end. 1 when counted; 0 when it must be begun in full
 * (no op is open, a structure is being captured, the task watches overflows), nothing counted. */
PROBE_API int probe_op_count_child(void);

/* Counts an execution of the layer-level op `name` (of `type`, its name when NULL) without
 * beginning it, when no op is open on the calling thread: for an engine that knows a layer-level
 * op ran while the probe slept (PyTorch's backward ops, counted as a pass begins), so that the
 * op's rounds do not depend on when dumping began. No config is looked at, nothing is dumped.
 * 1 when counted; 0 when an op is open or the runtime is not started (nothing counted);
 * negative on error (an empty name). */
PROBE_API int probe_op_count_layer(const char* name, const char* type);

/* Nonzero while a layer-level op beginning now on any thread needs only to be counted: the
 * runtime is started and asleep (probe_is_awake() is 0), rounds are not set by the engine
 * (probe_set_round), and no write of the config by this program waits to be applied. Then an
 * adapter may count the op with its counter (probe_layer_counter_of) instead of beginning and
 * ending it: the op's rounds are the same, and so is when a config change takes effect (it is 0
 * while a boundary must ask whether the config changed: see probe_report_own_config_writes). The
 * value is the runtime's start count: counters got under another value are stale. A few atomic
 * loads and a read of the clock. */
PROBE_API uint64_t probe_counting_only(void);

/* The execution counter of the layer-level op `name` (of `type`, its name when NULL), made
 * known to the runtime now (the application sees it as when it begins) without counting an
 * execution. Valid while probe_counting_only() gives the value it gave when got; NULL when
 * the runtime is not started or on error (an empty name, rounds set by the engine). */
typedef struct probe_layer_counter probe_layer_counter;
PROBE_API probe_layer_counter* probe_layer_counter_of(const char* name, const char* type);

/* Counts an execution of the counter's op, as probe_op_count_layer does. */
PROBE_API void probe_layer_counter_add(probe_layer_counter* counter);

/* 1 when an op begun now on this thread could be dumped (the runtime is started, dumping is
 * enabled, the disk has room): lets an adapter skip per-op work entirely while the probe
 * sleeps. A few atomic loads. */
PROBE_API int probe_is_awake(void);

/* A counter that changes whenever probe_is_awake() may have changed; adapters poll it cheaply
 * to switch their own hooks on and off. */
PROBE_API uint64_t probe_state_generation(void);

/* 1 when the op-level config in force may select ops below layer-level ops (save_child, an
 * op_name prefix, an id below a layer), so that an adapter must watch the ops inside them; 0
 * when it selects layer-level ops only (or the runtime is not started). */
PROBE_API int probe_may_select_below_layers(void);

/* The folder the gradient monitor of a PyTorch adapter writes to when the op-level config in
 * force asks for it ("grad_monitor": true): <dump root>/grad_monitor. "" when it does not, or
 * the runtime is not started. Valid until the calling thread's next call. */
PROBE_API const char* probe_grad_monitor_dir(void);

/* The device id of this process (the <dev> of data/<dev>_<pid>); negative = unknown. */
PROBE_API int probe_set_device(int device_id);

/* Name the model (info/model/<dev>_<pid>/<model_name>.json). When model_json is non-NULL it
 * is the engine's own description of the model (FORMATS.md, info/model) and is written as is;
 * otherwise the runtime writes the structure it observed. */
PROBE_API int probe_report_model(const char* model_name, const char* model_json);

/* A buffer holding one of the model's weights (a parameter, a constant buffer), by the same
 * buffer id its tensors are reported with (probe_op_tensor_ex; the data pointer otherwise).
 * The observed model structure (info/model) lists the weights its ops read in weightTensors
 * ("<model>_weight_<i>") instead of as internal tensors of the layers. Reporting the same buffer
 * again is harmless. */
PROBE_API int probe_report_weight(const char* name, uint64_t buffer_id);

/* The engine's own description of a layer-level op (FORMATS.md, info/layer), written to
 * info/layer/<dev>_<pid>/<layer_name>_<id>.json instead of the observed structure. */
PROBE_API int probe_report_layer(const char* layer_name, const char* layer_json);

/* Explicit rounds. By default every layer-level op counts its own executions (its round).
 * An engine that knows better (e.g. the token step) calls probe_set_round() before running the
 * model: from then on every op's round is the one given, and layer-level ops of the same name
 * executed within one round get distinct ids (by their order in the round). */
PROBE_API int probe_set_round(int64_t round);

/* The config file is watched from a thread of the runtime. By default each round's first
 * layer-level op asks the kernel whether a change of the file is queued (a system call: a few
 * microseconds on a virtual machine), so a change written before a round begins applies from its
 * first layer-level op. A program that reports its own writes calls
 * probe_report_own_config_writes(1) once (for the process; 0 undoes it), then
 * probe_note_file_written(path) before it writes, replaces or makes any file (the probe tells
 * whether it is the config). Rounds then ask only while such a write of the config is noted: a
 * change the program writes between rounds still applies from the next round's first
 * layer-level op, and a change made by another process applies as soon as the watcher has read
 * it (microseconds), at the latest at the first layer-level op beginning 5 ms after the write.
 * The Python probe reports what Python code writes (open, os.replace, ...). */
PROBE_API int probe_report_own_config_writes(int reported);
PROBE_API int probe_note_file_written(const char* path);

/* A warning about how the program is dumped (two models whose ops share names, ...): kept among
 * probe_status.json's messages, where `probe summary` and the app show it. PROBE_OK, also when the
 * runtime is not started (then it goes nowhere). */
PROBE_API int probe_warn(const char* text);

/* The calling thread's last error as text ("" when none). Valid until the thread's next call. */
PROBE_API const char* probe_last_error(void);

/* Library version as text, e.g. "0.1.0". */
PROBE_API const char* probe_version(void);

#ifdef __cplusplus
}
#endif

#endif /* PROBE_PROBE_H */
