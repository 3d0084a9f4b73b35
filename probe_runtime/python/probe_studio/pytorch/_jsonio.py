"""JSON output of the msprobe layout: exactly what ``json.dump(obj, f, indent=1)`` writes
(msprobe's own writer). Python's C encoder writes the compact text (json.dumps with indent
uses the pure-Python encoder, about 20 times slower); the adapter's C++ adds the line breaks
and indents and writes the file atomically (temporary name, then rename), so that a reader or
a crash never sees half a file. The one difference from json.dumps: a lone surrogate in a
string (which UTF-8 cannot carry) is written as the text of its escape, as _names does."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os

from . import _ops


def compact(value):
    """The compact text (C encoder) the C++ side indents; anything JSON has no type for is
    written as its str(), never raised."""
    return json.dumps(value, separators=(",", ": "), default=str)


def dumps(value):
    """``json.dumps(value, indent=1)``."""
    return _ops.json_indent(compact(value))


def write_compact_atomic(path, text):
    """Writes the indented form of `text` (from compact()) to `path` atomically; the GIL is
    released meanwhile. Raises OSError."""
    _ops.write_json(text, path)


def write_json_atomic(path, value):
    write_compact_atomic(path, compact(value))
