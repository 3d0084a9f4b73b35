"""JSON output of the msprobe layout: exactly what ``json.dump(obj, f, indent=1)`` writes
(msprobe's own writer). Python's C encoder writes the compact text (json.dumps with indent
uses the pure-Python encoder, about 20 times slower); the adapter's C++ file writer
(probe_runtime/torch/json_file_writer.cpp) adds the line breaks and indents and writes the file
atomically (temporary name, then rename) on its own thread, without the GIL, so that neither a
reader nor a crash ever sees half a file. The one difference from json.dumps: a lone surrogate
in a string (which UTF-8 cannot carry) is written as the text of its escape, as _names does."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json

from . import _ops

# An object with a raw_json() method (a tensor item, rendered in C++ with its statistics) is
# written as a string of this mark and its JSON text; the C++ side splices the text back in.
RAW_JSON_MARK = "\x01"


def _default(value):
    raw_json = getattr(value, "raw_json", None)
    if raw_json is not None:
        return RAW_JSON_MARK + raw_json()
    return str(value)  # anything JSON has no type for: its str(), never raised


def compact(value):
    """The compact text (C encoder) the C++ side indents."""
    return json.dumps(value, separators=(",", ": "), default=_default)


def dumps(value):
    """``json.dumps(value, indent=1)``."""
    return _ops.json_indent(compact(value))


def queue(path, text, waited):
    """Hands `text` (from compact()) to the C++ writer for `path`; returns the ticket to wait()
    for (only a `waited` file's error is kept for wait()). Raises OSError."""
    return _ops.queue_json(text, path, waited)


def wait(ticket, timeout=None):
    """Waits (without the GIL) until the file of `ticket` and all queued before it are written;
    False when `timeout` seconds passed first. Raises OSError when writing that file failed."""
    return _ops.wait_json(ticket, timeout)


def write_json_atomic(path, value):
    wait(queue(path, compact(value), True))
