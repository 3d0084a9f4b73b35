// probe_studio._module_call.compact_json: the code-level API's JSON text (dump.json, stack.json,
// construct.json; probe_studio.pytorch._jsonio) without escaping the tensor items.
//
// The text is what json.dumps(value, separators=(",", ": "), default=default) writes (Python's
// C encoder, ensure_ascii), with one difference: a string at a value's place that starts with
// _jsonio.RAW_JSON_MARK (U+0001) and whose rest is printable ASCII forming a balanced JSON object
// (a tensor item rendered by the C++ core) is written as that JSON itself rather than as a string.
// The adapter's file writer (json_file_writer.cpp) turns both forms into the same indented
// file: it splices a marked string's unescaped text in at the depth where it stands, exactly as
// it indents the same text met in place. json.dumps escaped every quote of every item and the
// writer unescaped them again: that was most of the encoder's work.
//
// Returns None (the caller then uses json.dumps) for what json.dumps would refuse or treat
// otherwise: dictionary keys that are not strings, numbers, booleans or None, and nesting
// deeper than kMaxDepth (json.dumps reports circular references).
// SPDX-License-Identifier: GPL-3.0-or-later
#include "compact_json.h"

#include <cmath>
#include <new>
#include <string>

namespace {

constexpr int kMaxDepth = 200;
constexpr char kRawMark = '\x01';

// Outcome of encoding a value: written, failed with a Python exception, or to be left to
// json.dumps.
enum class Encoded { Ok, Error, Fallback };

const char kHex[] = "0123456789abcdef";

void appendUnicodeEscape(std::string& out, Py_UCS4 c) {
    out += "\\u";
    out += kHex[(c >> 12) & 0xf];
    out += kHex[(c >> 8) & 0xf];
    out += kHex[(c >> 4) & 0xf];
    out += kHex[c & 0xf];
}

// What a byte is to the scans below: printable ASCII that needs nothing, or else.
enum CharClass : unsigned char { kPlain, kOther, kQuote, kBackslash, kOpen, kClose };

struct CharClasses {
    CharClass of[256];
    constexpr CharClasses() : of() {
        for (int c = 0; c < 256; ++c) of[c] = c >= ' ' && c <= '~' ? kPlain : kOther;
        of[static_cast<int>('"')] = kQuote;
        of[static_cast<int>('\\')] = kBackslash;
        of[static_cast<int>('{')] = of[static_cast<int>('[')] = kOpen;
        of[static_cast<int>('}')] = of[static_cast<int>(']')] = kClose;
    }
};
constexpr CharClasses kClasses;

void appendEscapedChar(std::string& out, Py_UCS4 c) {
    switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c >= 0x10000) {  // a surrogate pair
                const Py_UCS4 v = c - 0x10000;
                appendUnicodeEscape(out, 0xd800 | ((v >> 10) & 0x3ff));
                appendUnicodeEscape(out, 0xdc00 | (v & 0x3ff));
            } else {
                appendUnicodeEscape(out, c);
            }
    }
}

// The string as json's encode_basestring_ascii writes it, quotes included; runs of characters
// that need no escape are appended at once.
void appendEscaped(std::string& out, PyObject* text) {
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    out += '"';
    if (PyUnicode_IS_ASCII(text)) {
        const auto* data = reinterpret_cast<const unsigned char*>(PyUnicode_1BYTE_DATA(text));
        Py_ssize_t run = 0;
        for (Py_ssize_t i = 0; i < length; ++i) {
            const CharClass k = kClasses.of[data[i]];
            if (k != kQuote && k != kBackslash && k != kOther) continue;
            out.append(reinterpret_cast<const char*>(data) + run, static_cast<size_t>(i - run));
            appendEscapedChar(out, data[i]);
            run = i + 1;
        }
        out.append(reinterpret_cast<const char*>(data) + run, static_cast<size_t>(length - run));
    } else {
        const int kind = PyUnicode_KIND(text);
        const void* data = PyUnicode_DATA(text);
        for (Py_ssize_t i = 0; i < length; ++i) {
            const Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c >= ' ' && c <= '~' && c != '\\' && c != '"')
                out += static_cast<char>(c);
            else
                appendEscapedChar(out, c);
        }
    }
    out += '"';
}

// The raw JSON a marked string stands for: its text after the mark when that text is printable
// ASCII whose strings are closed and whose brackets balance (then the file writer reads it in
// place exactly as it reads it spliced); else false.
bool rawJson(PyObject* text, const char** begin, Py_ssize_t* size) {
    if (!PyUnicode_IS_ASCII(text)) return false;
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const auto* data = reinterpret_cast<const unsigned char*>(PyUnicode_1BYTE_DATA(text));
    // A tensor item is an object: a user's string that starts with the mark is written as a
    // string unless it looks so (then it is that object, as it was spliced before).
    if (length < 3 || data[0] != static_cast<unsigned char>(kRawMark) || data[1] != '{' ||
        data[length - 1] != '}')
        return false;
    int depth = 0;
    bool inString = false;
    for (Py_ssize_t i = 1; i < length; ++i) {
        const CharClass k = kClasses.of[data[i]];
        if (k == kPlain) continue;
        if (k == kOther) return false;
        if (inString) {
            if (k == kBackslash) {
                if (++i >= length || kClasses.of[data[i]] == kOther) return false;
            } else if (k == kQuote) {
                inString = false;
            }
        } else if (k == kQuote) {
            inString = true;
        } else if (k == kOpen) {
            ++depth;
        } else if (k == kClose && --depth < 0) {
            return false;
        }
    }
    if (inString || depth != 0) return false;
    *begin = reinterpret_cast<const char*>(data) + 1;
    *size = length - 1;
    return true;
}

bool appendRepr(std::string& out, PyObject* (*repr)(PyObject*), PyObject* value) {
    PyObject* text = repr(value);
    if (!text) return false;
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8) out.append(utf8, static_cast<size_t>(size));
    Py_DECREF(text);
    return utf8 != nullptr;
}

bool appendFloat(std::string& out, PyObject* value) {
    const double v = PyFloat_AS_DOUBLE(value);
    if (!std::isfinite(v)) {
        out += v > 0 ? "Infinity" : v < 0 ? "-Infinity" : "NaN";
        return true;
    }
    return appendRepr(out, PyFloat_Type.tp_repr, value);
}

class Encoder {
public:
    explicit Encoder(PyObject* defaultFunction) : default_(defaultFunction) {}

    std::string out;

    // The order of json's encoder_listencode_obj.
    Encoded value(PyObject* v, int depth) {
        if (depth > kMaxDepth) return Encoded::Fallback;
        if (v == Py_None) {
            out += "null";
        } else if (v == Py_True) {
            out += "true";
        } else if (v == Py_False) {
            out += "false";
        } else if (PyUnicode_Check(v)) {
            const char* raw = nullptr;
            Py_ssize_t size = 0;
            if (rawJson(v, &raw, &size))
                out.append(raw, static_cast<size_t>(size));
            else
                appendEscaped(out, v);
        } else if (PyLong_Check(v)) {
            if (!appendRepr(out, PyLong_Type.tp_repr, v)) return Encoded::Error;
        } else if (PyFloat_Check(v)) {
            if (!appendFloat(out, v)) return Encoded::Error;
        } else if (PyList_Check(v) || PyTuple_Check(v)) {
            return sequence(v, depth);
        } else if (PyDict_Check(v)) {
            return dict(v, depth);
        } else {
            PyObject* replaced = PyObject_CallOneArg(default_, v);
            if (!replaced) return Encoded::Error;
            const Encoded result = value(replaced, depth + 1);
            Py_DECREF(replaced);
            return result;
        }
        return Encoded::Ok;
    }

private:
    PyObject* default_;

    Encoded sequence(PyObject* v, int depth) {
        PyObject* fast = PySequence_Fast(v, "");  // the list or tuple itself, new reference
        if (!fast) return Encoded::Error;
        Encoded result = Encoded::Ok;
        out += '[';
        // The size is read again after each item, as json does: a callback of `default` may
        // change a list; the item is held meanwhile.
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && result == Encoded::Ok; ++i) {
            if (i) out += ',';
            PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
            Py_INCREF(item);
            result = value(item, depth + 1);
            Py_DECREF(item);
        }
        out += ']';
        Py_DECREF(fast);
        return result;
    }

    // json's keys: strings as they are; floats, booleans, None and ints as their JSON text.
    Encoded key(PyObject* k) {
        if (PyUnicode_Check(k)) {
            appendEscaped(out, k);
            return Encoded::Ok;
        }
        std::string text;
        if (PyFloat_Check(k)) {
            if (!appendFloat(text, k)) return Encoded::Error;
        } else if (k == Py_True || k == Py_False || k == Py_None) {
            text = k == Py_True ? "true" : k == Py_False ? "false" : "null";
        } else if (PyLong_Check(k)) {
            if (!appendRepr(text, PyLong_Type.tp_repr, k)) return Encoded::Error;
        } else {
            return Encoded::Fallback;  // json.dumps raises its TypeError
        }
        out += '"';
        out += text;  // digits, letters, '.', '-', '+': nothing to escape
        out += '"';
        return Encoded::Ok;
    }

    Encoded dict(PyObject* v, int depth) {
        PyObject* items = PyDict_Items(v);  // a snapshot: `default` may change the dict
        if (!items) return Encoded::Error;
        const Py_ssize_t n = PyList_GET_SIZE(items);
        Encoded result = Encoded::Ok;
        out += '{';
        for (Py_ssize_t i = 0; i < n && result == Encoded::Ok; ++i) {
            if (i) out += ',';
            PyObject* pair = PyList_GET_ITEM(items, i);
            result = key(PyTuple_GET_ITEM(pair, 0));
            if (result != Encoded::Ok) break;
            out += ": ";
            result = value(PyTuple_GET_ITEM(pair, 1), depth + 1);
        }
        out += '}';
        Py_DECREF(items);
        return result;
    }
};

}  // namespace

PyObject* probeCompactJson(PyObject*, PyObject* args) {
    PyObject *value, *defaultFunction;
    if (!PyArg_ParseTuple(args, "OO:compact_json", &value, &defaultFunction)) return nullptr;
    if (!PyCallable_Check(defaultFunction)) {
        PyErr_SetString(PyExc_TypeError, "compact_json(value, default): default must be callable");
        return nullptr;
    }
    try {
        Encoder encoder(defaultFunction);
        encoder.out.reserve(1 << 16);
        switch (encoder.value(value, 0)) {
            case Encoded::Error:
                return nullptr;
            case Encoded::Fallback:
                Py_RETURN_NONE;
            case Encoded::Ok:
                break;
        }
        return PyUnicode_DecodeASCII(encoder.out.data(),
                                     static_cast<Py_ssize_t>(encoder.out.size()), nullptr);
    } catch (const std::bad_alloc&) {
        return PyErr_NoMemory();
    }
}
