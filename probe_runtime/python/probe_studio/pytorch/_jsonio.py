"""JSON output of the msprobe layout: exactly what ``json.dump(obj, f, indent=1)`` writes
(msprobe's own writer). A C encoder writes the indented text in one pass (indented(): json.dumps
with indent uses the pure-Python encoder, about 20 times slower); the adapter's C++ file writer
(probe_runtime/torch/json_file_writer.cpp) writes the file atomically (temporary name, then
rename), without the GIL, so that neither a reader nor a crash ever sees half a file. The one
difference from json.dumps: a lone surrogate in a string (which UTF-8 cannot carry) is written
as the text of its escape, as _names does."""
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


def _json_dumps(value):
    return json.dumps(value, separators=(",", ": "), default=_default)


def compact(value):
    """The compact text probe::json_indent indents: json.dumps(value, separators=(",", ": "),
    default=_default), but written by _module_call.compact_json where it can, which puts a raw
    JSON string's text in place instead of escaping it as a string (both forms indent alike;
    json.dumps escaped every quote of every tensor item, and the indenter unescaped them)."""
    if _compact_json is not None:
        text = _compact_json(value, _default)
        if text is not None:
            return text
    return _json_dumps(value)


def indented(value):
    """``json.dumps(value, indent=1)`` (see the module's note): what probe::json_indent makes of
    compact(value), written by _module_call.compact_json in the same pass where it can."""
    if _compact_json is not None:
        text = _compact_json(value, _default, True)
        if text is not None:
            return text
    return _ops.json_indent(_json_dumps(value))


dumps = indented


LATER = _ops.LATER


def queue(path, text, waited):
    """Hands `text` (from indented()) to the C++ writer for `path`; returns the ticket to wait()
    for (only a `waited` file's error is kept for wait(): True, waited for now; LATER, asked for
    later, the writer thread writing it). Raises OSError."""
    return _ops.queue_json(text, path, waited)


def wait(ticket, timeout=None):
    """Waits (without the GIL) until the file of `ticket` and all queued before it are written;
    False when `timeout` seconds passed first (with 0 it only looks, writing nothing). Raises
    OSError when writing that file failed."""
    return _ops.wait_json(ticket, timeout)


def flush(timeout=None):
    """Returns once every file queued so far is written, and each file whose last write failed
    has been tried once more: True, or False when `timeout` seconds passed first. Raises OSError
    (filename: the file's path) for the first file that still fails."""
    return _ops.flush_json(timeout)


def write_json_atomic(path, value):
    wait(queue(path, indented(value), True))
