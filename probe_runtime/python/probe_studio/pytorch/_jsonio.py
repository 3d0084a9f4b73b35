"""JSON output of the msprobe layout: exactly what ``json.dump(obj, f, indent=1)`` writes
(msprobe's own writer), produced faster, and written atomically (temporary name, then rename)
so that a reader or a crash never sees half a file."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
from json.encoder import encode_basestring_ascii as _encode_str

_INFINITY = float("inf")
_float_repr = float.__repr__
_int_repr = int.__repr__


def _float(value):
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return _float_repr(value)


class TensorItem(dict):
    """A tensor's JSON item: a flat dict of scalars and its "shape" list, rendered in one go."""

    __slots__ = ()


_PADS = ["\n" + " " * i for i in range(64)]


def _pad(depth):
    return _PADS[depth] if depth < len(_PADS) else "\n" + " " * depth


def _finite_float(v):
    return _float_repr(v) if v - v == 0.0 else _float(v)


_SCALARS = {type(None): lambda v: "null", bool: lambda v: "true" if v else "false", str: _encode_str,
            float: _finite_float, int: _int_repr}


_item_formats = {}


def _item_format(keys, indent):
    fmt = _item_formats.get((keys, indent))
    if fmt is None:
        inner = _pad(indent + 1)
        fmt = "{" + inner + ("," + inner).join(_encode_str(k).replace("%", "%%") + ": %s" for k in keys)
        fmt += _pad(indent) + "}"
        _item_formats[(keys, indent)] = fmt
    return fmt


def _encode_item(item, out, indent):
    values = []
    scalars = _SCALARS
    for v in item.values():
        render = scalars.get(type(v))
        if render is not None:
            values.append(render(v))
        elif type(v) is list and all(type(d) is int for d in v):  # the shape
            if v:
                deeper = _pad(indent + 2)
                values.append("[" + deeper + ("," + deeper).join(map(_int_repr, v)) + _pad(indent + 1) + "]")
            else:
                values.append("[]")
        else:
            rendered = []
            _encode(v, rendered, indent + 1)
            values.append("".join(rendered))
    out.append(_item_format(tuple(item), indent) % tuple(values))


def _encode(value, out, indent):
    """Appends the indent=1 rendering of `value` to `out`; `indent` is the current depth."""
    if type(value) is TensorItem and value:
        _encode_item(value, out, indent)
    elif isinstance(value, str):
        out.append(_encode_str(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(_int_repr(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = "\n" + " " * (indent + 1)
        first = True
        for key, item in value.items():
            if first:
                out.append("{" + inner)
                first = False
            else:
                out.append("," + inner)
            if not isinstance(key, str):
                key = _key_string(key)
            out.append(_encode_str(key))
            out.append(": ")
            _encode(item, out, indent + 1)
        out.append("\n" + " " * indent + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = "\n" + " " * (indent + 1)
        first = True
        for item in value:
            if first:
                out.append("[" + inner)
                first = False
            else:
                out.append("," + inner)
            _encode(item, out, indent + 1)
        out.append("\n" + " " * indent + "]")
    else:
        # Anything else is rendered the way json would after conversion; never raise here.
        out.append(json.dumps(value, default=str))


def _key_string(key):
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, float):
        return _float(key)
    return str(key)


def dumps(value):
    """``json.dumps(value, indent=1)`` for dicts, lists, str, int, float, bool and None."""
    out = []
    _encode(value, out, 0)
    return "".join(out)


def write_text_atomic(path, text):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json_atomic(path, value):
    write_text_atomic(path, dumps(value))
