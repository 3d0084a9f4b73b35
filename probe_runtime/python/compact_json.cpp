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
// With indent, the text is the file itself, json.dumps(value, indent=1) as msprobe writes it:
// exactly what probe::json_indent (probe/format/json_indent.h) makes of the compact text, made
// in the same pass (the structure's line breaks written as it is encoded, a raw item indented
// by that header's indentInto at its depth, and a string whose escapes the indenter would
// change, a \u escape, handed to indentInto too). The file writer then only writes it.
//
// Returns None (the caller then uses json.dumps) for what json.dumps would refuse or treat
// otherwise: dictionary keys that are not strings, numbers, booleans or None, and nesting
// deeper than kMaxDepth (json.dumps reports circular references).
// SPDX-License-Identifier: GPL-3.0-or-later
#include "compact_json.h"

#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "probe/format/json_indent.h"

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
enum CharClass : unsigned char { kPlain, kOther, kQuote, kBackslash, kOpen, kClose, kComma };

struct CharClasses {
    CharClass of[256];
    constexpr CharClasses() : of() {
        for (int c = 0; c < 256; ++c) of[c] = c >= ' ' && c <= '~' ? kPlain : kOther;
        of[static_cast<int>('"')] = kQuote;
        of[static_cast<int>('\\')] = kBackslash;
        of[static_cast<int>('{')] = of[static_cast<int>('[')] = kOpen;
        of[static_cast<int>('}')] = of[static_cast<int>(']')] = kClose;
        of[static_cast<int>(',')] = kComma;
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
// that need no escape are appended at once. Returns whether it may have written a \u escape.
bool appendEscaped(std::string& out, PyObject* text) {
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    bool unicodeEscape = false;
    out += '"';
    if (PyUnicode_IS_ASCII(text)) {
        const auto* data = reinterpret_cast<const unsigned char*>(PyUnicode_1BYTE_DATA(text));
        Py_ssize_t run = 0;
        for (Py_ssize_t i = 0; i < length; ++i) {
            const CharClass k = kClasses.of[data[i]];
            if (k != kQuote && k != kBackslash && k != kOther) continue;
            out.append(reinterpret_cast<const char*>(data) + run, static_cast<size_t>(i - run));
            appendEscapedChar(out, data[i]);
            unicodeEscape |= k == kOther;  // (or \n & co.: saying so is never wrong)
            run = i + 1;
        }
        out.append(reinterpret_cast<const char*>(data) + run, static_cast<size_t>(length - run));
    } else {
        const int kind = PyUnicode_KIND(text);
        const void* data = PyUnicode_DATA(text);
        for (Py_ssize_t i = 0; i < length; ++i) {
            const Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c >= ' ' && c <= '~' && c != '\\' && c != '"') {
                out += static_cast<char>(c);
            } else {
                appendEscapedChar(out, c);
                unicodeEscape = true;
            }
        }
    }
    out += '"';
    return unicodeEscape;
}

// Whether `text` is ASCII, the mark and then text from an opening to a closing brace: a tensor
// item is an object, and a user's string that starts with the mark is written as a string
// unless it looks so (then it is that object, as it was spliced before).
bool markedObject(PyObject* text) {
    if (!PyUnicode_IS_ASCII(text)) return false;
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const auto* data = reinterpret_cast<const unsigned char*>(PyUnicode_1BYTE_DATA(text));
    return length >= 3 && data[0] == static_cast<unsigned char>(kRawMark) && data[1] == '{' &&
           data[length - 1] == '}';
}

// The raw JSON a marked string stands for: its text after the mark when that text is printable
// ASCII whose strings are closed and whose brackets balance, as the indenter's rawJsonOf judges
// it (then the file writer reads it in place exactly as it reads it spliced); else false.
bool rawJson(PyObject* text, const char** begin, Py_ssize_t* size) {
    if (!markedObject(text)) return false;
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const char* data = reinterpret_cast<const char*>(PyUnicode_1BYTE_DATA(text));
    const std::string_view raw(data + 1, static_cast<size_t>(length - 1));
    for (const char c : raw)
        if (kClasses.of[static_cast<unsigned char>(c)] == kOther) return false;
    if (!probe::format::json_indent::balancedJson(raw)) return false;
    *begin = raw.data();
    *size = length - 1;
    return true;
}

// What appendIndentedRaw made of a marked object.
enum class RawItem { Indented, NotRaw, Generic };

// A marked object (markedObject) as rawJson() and then indentInto() at `depth` treat it, in one
// pass, for the common text without a backslash in a string (a tensor item), indented in a
// scratch buffer: Indented (the indented object appended), NotRaw (rawJson() refuses it: nothing
// appended, it is a string) or Generic (nothing appended: a backslash in a string, or more text
// than the scratch holds; rawJson() and indentInto() do it).
RawItem appendIndentedRaw(std::string& out, PyObject* text, int depth) {
    const size_t length = static_cast<size_t>(PyUnicode_GET_LENGTH(text));
    const auto* data = reinterpret_cast<const unsigned char*>(PyUnicode_1BYTE_DATA(text));
    char scratch[4096];
    char* p = scratch;
    const char* end = scratch + sizeof scratch;
    int level = 0;  // brackets open inside the object
    bool inString = false;
    auto lineBreak = [&p](int indent) {
        *p++ = '\n';
        std::memset(p, ' ', static_cast<size_t>(indent));
        p += indent;
    };
    for (size_t i = 1; i < length; ++i) {
        if (end - p < depth + level + 4) return RawItem::Generic;  // a line break, two brackets
        const unsigned char c = data[i];
        const CharClass k = kClasses.of[c];
        if (k == kOther) return RawItem::NotRaw;
        if (inString) {
            if (k == kBackslash) return RawItem::Generic;
            inString = k != kQuote;
            *p++ = static_cast<char>(c);
            continue;
        }
        switch (k) {
            case kQuote:
                inString = true;
                *p++ = static_cast<char>(c);
                break;
            case kOpen: {
                *p++ = static_cast<char>(c);
                if (i + 1 < length && data[i + 1] == (c == '[' ? ']' : '}')) {
                    *p++ = static_cast<char>(data[++i]);
                } else {
                    lineBreak(depth + ++level);
                }
                break;
            }
            case kClose:
                if (--level < 0) return RawItem::NotRaw;
                lineBreak(depth + level);
                *p++ = static_cast<char>(c);
                break;
            case kComma:
                *p++ = ',';
                lineBreak(depth + level);
                break;
            default:  // plain, and a backslash outside a string (both copied as they are)
                *p++ = static_cast<char>(c);
        }
    }
    if (inString || level != 0) return RawItem::NotRaw;
    out.append(scratch, static_cast<size_t>(p - scratch));
    return RawItem::Indented;
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
    Encoder(PyObject* defaultFunction, bool indent) : default_(defaultFunction), indent_(indent) {}

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
            if (indent_ && markedObject(v)) {
                const RawItem item = appendIndentedRaw(out, v, level_);
                if (item == RawItem::Indented) return Encoded::Ok;
                if (item == RawItem::NotRaw) {
                    string(v);
                    return Encoded::Ok;
                }
            }
            const char* raw = nullptr;
            Py_ssize_t size = 0;
            if (!rawJson(v, &raw, &size))
                string(v);
            else if (indent_)
                probe::format::json_indent::indentInto(
                    std::string_view(raw, static_cast<size_t>(size)), out, level_);
            else
                out.append(raw, static_cast<size_t>(size));
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
    const bool indent_;  // json.dumps(value, indent=1)'s text
    int level_ = 0;      // with indent_: the brackets open

    // A string token (a value or a key). Indenting, one with a \u escape is written as
    // indentInto writes it: a lone surrogate's escape as its text, a marked string that the
    // indenter reads as raw JSON spliced (other escapes it copies as they are).
    void string(PyObject* v) {
        const size_t mark = out.size();
        if (!appendEscaped(out, v) || !indent_) return;
        const std::string token = out.substr(mark);
        out.resize(mark);
        probe::format::json_indent::indentInto(token, out, level_);
    }

    // An opening bracket (empty: false, with its closing one written too) and a separator.
    bool open(char bracket, char close, bool empty) {
        out += bracket;
        if (empty) {
            out += close;
            return false;
        }
        if (indent_) probe::format::json_indent::lineBreak(out, ++level_);
        return true;
    }
    void separate() {
        out += ',';
        if (indent_) probe::format::json_indent::lineBreak(out, level_);
    }
    void close(char bracket) {
        if (indent_) probe::format::json_indent::lineBreak(out, --level_);
        out += bracket;
    }

    Encoded sequence(PyObject* v, int depth) {
        PyObject* fast = PySequence_Fast(v, "");  // the list or tuple itself, new reference
        if (!fast) return Encoded::Error;
        Encoded result = Encoded::Ok;
        if (open('[', ']', PySequence_Fast_GET_SIZE(fast) == 0)) {
            // The size is read again after each item, as json does: a callback of `default`
            // may change a list; the item is held meanwhile.
            for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && result == Encoded::Ok;
                 ++i) {
                if (i) separate();
                PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
                Py_INCREF(item);
                result = value(item, depth + 1);
                Py_DECREF(item);
            }
            close(']');
        }
        Py_DECREF(fast);
        return result;
    }

    // json's keys: strings as they are; floats, booleans, None and ints as their JSON text.
    Encoded key(PyObject* k) {
        if (PyUnicode_Check(k)) {
            string(k);
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
        if (open('{', '}', n == 0)) {
            for (Py_ssize_t i = 0; i < n && result == Encoded::Ok; ++i) {
                if (i) separate();
                PyObject* pair = PyList_GET_ITEM(items, i);
                result = key(PyTuple_GET_ITEM(pair, 0));
                if (result != Encoded::Ok) break;
                out += ": ";
                result = value(PyTuple_GET_ITEM(pair, 1), depth + 1);
            }
            close('}');
        }
        Py_DECREF(items);
        return result;
    }
};

}  // namespace

PyObject* probeCompactJson(PyObject*, PyObject* args) {
    PyObject *value, *defaultFunction;
    int indent = 0;
    if (!PyArg_ParseTuple(args, "OO|p:compact_json", &value, &defaultFunction, &indent))
        return nullptr;
    if (!PyCallable_Check(defaultFunction)) {
        PyErr_SetString(PyExc_TypeError, "compact_json(value, default): default must be callable");
        return nullptr;
    }
    try {
        Encoder encoder(defaultFunction, indent != 0);
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
