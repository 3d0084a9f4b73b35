"""ctypes bindings to the C++ runtime (libprobe_runtime.so) and the PyTorch adapter."""
# SPDX-License-Identifier: GPL-3.0-or-later
import ctypes

from . import _paths

WANTS_DATA = 1
WANTS_METADATA = 2
WANTS_CHILDREN = 4
WANTS_STATISTICS_ONLY = 8
WANTS_TENSORS = WANTS_DATA | WANTS_METADATA

_runtime = None
_adapter = None


def _declare(lib, name, restype, argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


def runtime():
    """The runtime library's C API (loaded once)."""
    global _runtime
    if _runtime is None:
        lib = ctypes.CDLL(_paths.RUNTIME_LIBRARY)
        c = ctypes
        _declare(lib, "probe_start", c.c_int, [c.c_char_p, c.c_char_p])
        _declare(lib, "probe_stop", c.c_int, [])
        _declare(lib, "probe_is_started", c.c_int, [])
        _declare(lib, "probe_is_awake", c.c_int, [])
        _declare(lib, "probe_state_generation", c.c_uint64, [])
        _declare(lib, "probe_op_wants", c.c_int, [])
        _declare(lib, "probe_op_set_param", c.c_int, [c.c_char_p])
        _declare(lib, "probe_last_error", c.c_char_p, [])
        _declare(lib, "probe_grad_monitor_dir", c.c_char_p, [])
        _declare(lib, "probe_version", c.c_char_p, [])
        _declare(lib, "probe_set_device", c.c_int, [c.c_int])
        _declare(lib, "probe_report_weight", c.c_int, [c.c_char_p, c.c_uint64])
        _declare(lib, "probe_report_own_config_writes", c.c_int, [c.c_int])
        _declare(lib, "probe_note_file_written", c.c_int, [c.c_char_p])
        _declare(lib, "probe_warn", c.c_int, [c.c_char_p])
        _declare(lib, "probe_before_exec", c.c_int, [c.c_char_p])
        _declare(lib, "probe_counting_only", c.c_uint64, [])
        _declare(lib, "probe_layer_counter_of", c.c_void_p, [c.c_char_p, c.c_char_p])
        _declare(lib, "probe_layer_counter_add", None, [c.c_void_p])
        _runtime = lib
    return _runtime


def load_adapter(torch):
    """Load the PyTorch adapter into this process (registers the torch.ops.probe ops) and
    return its C functions. Loading it again is a no-op."""
    torch.ops.load_library(_paths.TORCH_ADAPTER_LIBRARY)
    return adapter()


def adapter():
    """The PyTorch adapter's C functions; the library must be loaded by torch first."""
    global _adapter
    if _adapter is None:
        lib = ctypes.CDLL(_paths.TORCH_ADAPTER_LIBRARY)
        c = ctypes
        _declare(lib, "probe_torch_built_version", c.c_char_p, [])
        _declare(lib, "probe_torch_root_begin", c.c_int, [c.c_char_p])
        _declare(lib, "probe_torch_root_end", c.c_int, [])
        _declare(lib, "probe_torch_module_begin", c.c_int, [c.c_char_p, c.c_char_p])
        _declare(lib, "probe_torch_module_end", c.c_int, [])
        _declare(lib, "probe_torch_unwind_to", c.c_int, [c.c_int])
        _declare(lib, "probe_torch_depth", c.c_int, [])
        _declare(lib, "probe_torch_in_backward_pass", c.c_int, [])
        _declare(lib, "probe_torch_backward_begin_from", c.c_int, [c.c_void_p, c.c_int])
        _declare(lib, "probe_torch_backward_end", c.c_int, [])
        _declare(lib, "probe_torch_observing_ops", c.c_int, [])
        _declare(lib, "probe_torch_gradient_hooks_made", c.c_int64, [])
        _declare(lib, "probe_torch_backward_passes_watched", c.c_int64, [])
        _declare(lib, "probe_torch_layer_calls_counted", c.c_int64, [])
        _declare(lib, "probe_torch_layer_index", c.c_int, [c.c_char_p, c.c_char_p])
        _declare(lib, "probe_torch_sequence_number", c.c_uint64, [])
        _declare(lib, "probe_torch_counted_layer_call", None, [c.c_int, c.c_uint64])
        _declare(lib, "probe_torch_report_tensor", c.c_int, [c.c_int, c.c_int, c.c_char_p, c.c_void_p])
        _declare(lib, "probe_torch_function_outputs_wanted", c.c_int, [c.c_char_p])
        _declare(lib, "probe_torch_report_backward_output", c.c_int, [c.c_char_p, c.c_int, c.c_char_p, c.c_void_p])
        _declare(lib, "probe_torch_hook_input_gradient", c.c_int, [c.c_char_p, c.c_int, c.c_char_p, c.c_void_p])
        _declare(lib, "probe_torch_impl_numel", c.c_int64, [c.c_void_p])
        _declare(lib, "probe_api_queue_json", c.c_uint64, [c.c_char_p, c.c_uint64, c.c_char_p, c.c_int])
        _declare(lib, "probe_api_wait_json", c.c_int, [c.c_uint64, c.c_int64])
        _declare(lib, "probe_api_flush_json", c.c_int, [c.c_int64, c.c_char_p, c.c_uint64])
        _adapter = lib
    return _adapter
