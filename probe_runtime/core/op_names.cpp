// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_names.h"

#include <cstdint>
#include <cstdio>

namespace probe::runtime {

namespace {

// Length of the UTF-8 sequence starting at text[i], or 0 when it is not a valid one (overlong
// forms, surrogates and code points beyond U+10FFFF are not).
size_t utf8SequenceLength(std::string_view text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return 1;
    size_t length = 0;
    uint32_t codePoint = 0;
    if ((c & 0xe0) == 0xc0) length = 2, codePoint = c & 0x1f;
    else if ((c & 0xf0) == 0xe0) length = 3, codePoint = c & 0x0f;
    else if ((c & 0xf8) == 0xf0) length = 4, codePoint = c & 0x07;
    else return 0;
    if (i + length > text.size()) return 0;
    for (size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xc0) != 0x80) return 0;
        codePoint = (codePoint << 6) | (byte(i + k) & 0x3f);
    }
    static const uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (codePoint < kSmallest[length] || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff))
        return 0;
    return length;
}

}  // namespace

std::string validUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        if (const size_t length = utf8SequenceLength(text, i)) {
            out.append(text.substr(i, length));
            i += length;
            continue;
        }
        static const char kHex[] = "0123456789ABCDEF";
        const auto c = static_cast<unsigned char>(text[i++]);
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    return out;
}

std::string sanitizeName(const char* text) {
    if (!text) return "";
    const std::string_view raw(text);
    std::string out = validUtf8(raw);
    for (auto& c : out)
        if (c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '_';
    if (out.size() > kMaxNameBytes) {
        size_t cut = kMaxNameBytes;
        while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;  // whole characters
        uint64_t hash = 1469598103934665603ull;  // FNV-1a of the raw name
        for (unsigned char c : raw) hash = (hash ^ c) * 1099511628211ull;
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, "~%08x", static_cast<unsigned>(hash ^ (hash >> 32)));
        out = out.substr(0, cut) + suffix;
    }
    return out;
}

}  // namespace probe::runtime
