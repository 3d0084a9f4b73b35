"""JSON output of the msprobe layout: exactly what ``json.dump(obj, f, indent=1)`` writes
(msprobe's own writer). A C encoder writes the compact text (compact(); json.dumps with indent
uses the pure-Python encoder, about 20 times slower); the adapter's C++ file writer
(probe_runtime/torch/json_file_writer.cpp) adds the line breaks and indents and writes the file
atomically (temporary name, then rename) on its own thread, without the GIL, so that neither a
reader nor a crash ever sees half a file. The one difference from json.dumps: a lone surrogate
in a string (which UTF-8 cannot carry) is written as the text of its escape, as _names does."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json

from . import _ops

try:  # C (compact_json.cpp): tensor items written in place, not escaped
    from .._module_call import compact_json as _compact_json
except ImportError:  # built without the extension
    _compact_json = None

# An object with a raw_json() method (a tensor item, rendered in C++ with its statistics) is
# written as a string of this mark and its JSON text; the C++ side splices the text back in.
RAW_JSON_MARK = "\x01"


def _default(value):
    raw_json = getattr(value, "raw_json", None)
    if raw_json is not None:
        return RAW_JSON_MARK + raw_json()
    return str(value)  # anything JSON has no type for: its str(), never raised


def compact(value):
    """The compact text the C++ side indents: json.dumps(value, separators=(",", ": "),
    default=_default), but written by _module_call.compact_json where it can, which puts a raw
    JSON string's text in place instead of escaping it as a string (the C++ side indents both
    forms alike; json.dumps escaped every quote of every tensor item, and the C++ side unescaped
    them)."""
    if _compact_json is not None:
        text = _compact_json(value, _default)
        if text is not None:
            return text
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
