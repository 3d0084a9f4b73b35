// json.dumps(value, indent=1) from json.dumps(value, separators=(",", ": ")): the line breaks and
// indents of the msprobe layout's JSON files (dump.json, stack.json, construct.json), as msprobe
// writes them with json.dump(value, f, indent=1). Header-only: the code-level API's encoder
// (probe_runtime/python/compact_json.cpp, which indents as it encodes) and the adapter's
// json_indent op (probe_runtime/torch/json_file_writer.cpp, for text json.dumps made) both
// indent with indentInto.
//
// A string token that stands for raw JSON (the mark U+0001, then a JSON object's text, escaped
// as a string) is spliced in, unescaped, and indented at its depth. A lone surrogate's escape
// (text UTF-8 cannot carry, refused by strict JSON readers) is written as the text of the
// escape, "\\udc80", the way probe_studio._names writes such names.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace probe::format::json_indent {

// The 16-bit code of the four hex digits at `p`, or -1.
inline int hexCode(const char* p) {
    int code = 0;
    for (int i = 0; i < 4; ++i) {
        const char c = p[i];
        const int digit = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
        if (digit < 0) return -1;
        code = code * 16 + digit;
    }
    return code;
}

inline bool isHighSurrogate(int code) {
    return code >= 0xD800 && code <= 0xDBFF;
}
inline bool isLowSurrogate(int code) {
    return code >= 0xDC00 && code <= 0xDFFF;
}

// Copies the string token starting at compact[i] (its opening quote) to `out`; returns the
// index after its closing quote. A lone surrogate's escape is written as the text of the escape.
inline size_t copyString(std::string_view compact, size_t i, std::string& out) {
    const size_t n = compact.size();
    out += compact[i++];
    while (i < n) {
        // The run up to the next quote or backslash goes in one append.
        size_t run = i;
        while (run < n && compact[run] != '"' && compact[run] != '\\') ++run;
        out.append(compact.data() + i, run - i);
        i = run;
        if (i >= n) break;
        const char c = compact[i];
        if (c == '"') {
            out += c;
            return i + 1;
        }
        if (i + 1 >= n) {
            out += c;
            ++i;
            continue;
        }
        if (compact[i + 1] != 'u' || i + 6 > n) {
            out.append(compact.substr(i, 2));
            i += 2;
            continue;
        }
        const int code = hexCode(compact.data() + i + 2);
        const bool pair = isHighSurrogate(code) && i + 12 <= n && compact[i + 6] == '\\' &&
                          compact[i + 7] == 'u' && isLowSurrogate(hexCode(compact.data() + i + 8));
        if (pair) {
            out.append(compact.substr(i, 12));
            i += 12;
        } else {
            if (isHighSurrogate(code) || isLowSurrogate(code)) out += '\\';
            out.append(compact.substr(i, 6));
            i += 6;
        }
    }
    return i;
}

// Whether `text` could be a tensor item's text as far as the indenter cares: an object, its
// strings closed and its brackets balanced (a user's string may start with the mark and hold
// anything; it is written as the string it is unless it looks so).
inline bool balancedJson(std::string_view text) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if ((c == ']' || c == '}') && --depth < 0) {
            return false;
        }
    }
    return !inString && depth == 0;
}

// The content of a string token that stands for raw JSON (Python's _jsonio.RAW_JSON_MARK, the
// character U+0001, then the JSON text, escaped as a string by the C encoder), unescaped; or
// nullopt for any other string, and for a marked one whose text is not balanced JSON (a user's
// string that begins with U+0001: written as the string it is). `end` is the index after the
// token.
inline std::optional<std::string> rawJsonOf(std::string_view compact, size_t begin, size_t end) {
    constexpr std::string_view kMark = "\"\\u0001";
    if (compact.compare(begin, kMark.size(), kMark) != 0) return std::nullopt;
    std::string raw;
    for (size_t i = begin + kMark.size(); i + 1 < end; ++i) {
        if (compact[i] == '\\') {
            // Only \" and \\ occur in the text of a tensor item (printable ASCII).
            if (i + 2 >= end || (compact[i + 1] != '"' && compact[i + 1] != '\\'))
                return std::nullopt;
            ++i;
        }
        raw += compact[i];
    }
    if (raw.size() < 2 || raw.front() != '{' || raw.back() != '}' || !balancedJson(raw))
        return std::nullopt;
    return raw;
}

// The bytes that end a run of a number, a literal or the ": " after a key.
struct StructuralBytes {
    bool is[256];
    constexpr StructuralBytes() : is() {
        for (char c : std::string_view("\"[{]},")) is[static_cast<unsigned char>(c)] = true;
    }
};
inline constexpr StructuralBytes kStructural;

inline void lineBreak(std::string& out, int depth) {
    out += '\n';
    out.append(static_cast<size_t>(depth), ' ');
}

// Appends `compact` indented, starting at `depth` (the brackets open around it; updated to the
// depth after it): after an opening bracket and after a comma a line break and the depth's
// indent, before a closing bracket the outer depth's; an empty [] or {} stays as it is. Raw
// JSON strings are spliced in, indented at their depth. Text that is not JSON is indented as it
// comes (the depth never goes below zero); nothing throws but std::bad_alloc.
inline void indentInto(std::string_view compact, std::string& out, int& depth) {
    const size_t n = compact.size();
    size_t i = 0;
    while (i < n) {
        const char c = compact[i];
        if (c == '"') {
            const size_t mark = out.size();
            const size_t end = copyString(compact, i, out);
            if (auto raw = rawJsonOf(compact, i, end)) {
                out.resize(mark);
                indentInto(*raw, out, depth);
            }
            i = end;
            continue;
        }
        if (c == '[' || c == '{') {
            const char close = c == '[' ? ']' : '}';
            out += c;
            if (i + 1 < n && compact[i + 1] == close) {
                out += close;
                i += 2;
                continue;
            }
            ++depth;
            lineBreak(out, depth);
        } else if (c == ']' || c == '}') {
            depth = depth > 0 ? depth - 1 : 0;
            lineBreak(out, depth);
            out += c;
        } else if (c == ',') {
            out += c;
            lineBreak(out, depth);
        } else {
            // A number, a literal or the ": " after a key: up to the next token, in one append.
            size_t run = i + 1;
            while (run < n && !kStructural.is[static_cast<unsigned char>(compact[run])]) ++run;
            out.append(compact.data() + i, run - i);
            i = run;
            continue;
        }
        ++i;
    }
}

inline std::string indentJson(std::string_view compact) {
    std::string out;
    out.reserve(compact.size() + compact.size() / 2);
    int depth = 0;
    indentInto(compact, out, depth);
    return out;
}

}  // namespace probe::format::json_indent
