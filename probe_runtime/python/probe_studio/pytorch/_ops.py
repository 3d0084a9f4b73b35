"""The C++ side of the code-level API: statistics and config validation ops registered by the
PyTorch adapter library (probe_runtime/torch/stats_op.cpp)."""
# SPDX-License-Identifier: GPL-3.0-or-later
import ctypes
import errno
import json
import os

from .. import _native, _paths

try:
    from .. import _build_info
except ImportError:  # an unbuilt source tree
    _build_info = None

tensor_items = None  # torch.ops.probe.tensor_items
_config_check = None
_config_check_file = None
_tables = None
_json_indent = None
_queue_json = None
_wait_json = None
_flush_json = None
_overflow_reasons = None
overflow_ignored = None  # torch.ops.probe.overflow_ignored: an op type never where an overflow is born
sequence_number = None  # this thread's next autograd sequence number (the adapter's, by ctypes)
module_input_users = None  # torch.ops.probe.module_input_users (input_users.cpp)


def _major_minor(version):
    parts = str(version).split("+")[0].split(".")
    return tuple(int("".join(ch for ch in p if ch.isdigit()) or 0) for p in parts[:2])


def load(torch):
    """Loads the adapter library once. Raises ImportError saying what to do when it cannot."""
    global tensor_items, _config_check, _config_check_file, _tables, _json_indent, _queue_json, _wait_json, _flush_json
    global _overflow_reasons, overflow_ignored, sequence_number, module_input_users
    if tensor_items is not None:
        return
    if _build_info is None or not _build_info.HAVE_TORCH_ADAPTER or not os.path.exists(_paths.TORCH_ADAPTER_LIBRARY):
        raise ImportError("probe_studio.pytorch needs the PyTorch adapter (%s), which this Probe Studio was built "
                          "without; rebuild with libtorch-dev installed" % _paths.TORCH_ADAPTER_LIBRARY)
    built = getattr(_build_info, "TORCH_BUILT_VERSION", "unknown")
    if _major_minor(torch.__version__) != _major_minor(built):
        raise ImportError("probe_studio.pytorch: torch %s is not the version the adapter was built for (%s); use "
                          "the interpreter of that torch (Debian: /usr/bin/python3)" % (torch.__version__, built))
    adapter = _native.load_adapter(torch)
    _queue_json, _wait_json = adapter.probe_api_queue_json, adapter.probe_api_wait_json
    _flush_json = adapter.probe_api_flush_json
    tensor_items = torch.ops.probe.tensor_items.default  # the overload: one Python call less
    _config_check = torch.ops.probe.api_config_check
    _config_check_file = torch.ops.probe.api_config_check_file
    _tables = torch.ops.probe.msprobe_tables
    _json_indent = torch.ops.probe.json_indent
    _overflow_reasons = torch.ops.probe.overflow_reasons.default
    overflow_ignored = torch.ops.probe.overflow_ignored.default
    sequence_number = adapter.probe_torch_sequence_number
    module_input_users = torch.ops.probe.module_input_users.default


def overflow_reasons(tensors):
    """Why each tensor counts as overflowed ("nan", "max=inf", ...; "" when it does not): the
    C++ rule (probe/format/overflow_rule.h) that the op-level task and `probe overflow` apply."""
    return _overflow_reasons(tensors) if tensors else []


def overflow_stop_exit_code():
    """The exit code of a program ended by stop_after_overflow (format::kOverflowStopExitCode)."""
    import torch
    load(torch)
    return int(torch.ops.probe.overflow_stop_exit_code())


def check_config(text, label):
    """Validates a code-level config text with the C++ validator (probe::format::parseApiConfig).
    Returns (config dict or None, issues list)."""
    result = json.loads(_config_check(text, label))
    return result["config"], result["issues"]


def check_config_file(path):
    """check_config() of the config file `path`, read as every config is (a regular file within
    the config size limit: a FIFO or a device is refused, never read; see
    probe::format::readTextFile). The dict also holds "text" (the file's text) when the config is
    valid, or "unreadable" (why the file cannot be read)."""
    return json.loads(_config_check_file(path))


def msprobe_tables():
    """The format library's msprobe tables (probe/format/api_config.h, msprobe_layout.h):
    {"config_keys": [{"block", "key", "use", "note"}], "layout": {"dump_keys", "tensor_keys", ...}}."""
    return json.loads(_tables())


def _loaded():
    if _queue_json is None:
        import torch
        load(torch)


def json_indent(compact):
    """json.dumps(value, indent=1) from json.dumps(value, separators=(",", ": "))."""
    _loaded()
    return _json_indent(compact)


def queue_json(text, path, waited):
    """Queues `text` (indented JSON) to be written to `path` atomically by the C++ writer thread;
    returns the ticket for wait_json. `waited`: False, its result is not kept; True, it is waited
    for now (the waiting thread writes it); LATER, its result is asked for later. Raises OSError
    when it cannot be queued."""
    _loaded()
    data = text.encode("ascii")  # the C encoder writes ASCII only
    ticket = _queue_json(data, len(data), os.fsencode(path), int(waited))
    if not ticket:
        raise OSError(errno.ENOMEM, "the JSON file writer could not take %s" % path, path)
    return ticket


LATER = 2  # queue_json's `waited`: the file's result is asked for later (json_file_writer.cpp)


def wait_json(ticket, timeout=None):
    """Waits (the GIL released) until `ticket` and every file queued before it are written.
    False when `timeout` seconds passed first; raises OSError when that file failed."""
    error = _wait_json(ticket, -1 if timeout is None else int(timeout * 1000))
    if error < 0:
        return False
    if error:
        raise OSError(error, os.strerror(error))
    return True


def flush_json(timeout=None):
    """Has every file queued so far written (this thread writes those no thread is writing), then
    each file whose last write failed once more (json_file_writer.cpp). True when all are on
    disk, False when `timeout` seconds passed first; raises OSError (with the file's path) for
    the first file that still fails. The GIL is released meanwhile."""
    _loaded()
    path = ctypes.create_string_buffer(4096)
    error = _flush_json(-1 if timeout is None else max(0, int(timeout * 1000)), path, len(path))
    if error < 0:
        return False
    if error:
        raise OSError(error, os.strerror(error), os.fsdecode(path.value))
    return True
