// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_names.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "probe/format/json_input.h"

namespace probe::runtime {

namespace {

// Whether any byte of `word` is below 0x20, above 0x7e or '/' (bit-twiddling hacks' hasless,
// hasmore and haszero: exact for the question "any?").
bool hasUnplainByte(uint64_t word) {
    constexpr uint64_t kOnes = ~uint64_t{0} / 255, kHighs = kOnes * 0x80;
    const uint64_t below = (word - kOnes * 0x20) & ~word & kHighs;
    const uint64_t above = ((word + kOnes * (127 - 0x7e)) | word) & kHighs;
    const uint64_t slash = word ^ (kOnes * '/');
    const uint64_t slashes = (slash - kOnes) & ~slash & kHighs;
    return (below | above | slashes) != 0;
}

uint64_t wordAt(const char* bytes) {
    uint64_t word;
    std::memcpy(&word, bytes, sizeof word);
    return word;
}

// Printable ASCII without '/': what sanitizeName keeps as it is (nearly every name). Eight
// bytes at a time: a byte at a time was a tenth of an op's cost in the runtime.
bool isPlainName(std::string_view text) {
    const size_t size = text.size();
    if (size > kMaxNameBytes) return false;
    const char* bytes = text.data();
    if (size < 8) {  // the bytes beside the name are a plain 'a'
        uint64_t word = ~uint64_t{0} / 255 * 'a';
        std::memcpy(&word, bytes, size);
        return !hasUnplainByte(word);
    }
    for (size_t at = 0; at + 8 <= size; at += 8)
        if (hasUnplainByte(wordAt(bytes + at))) return false;
    return !hasUnplainByte(wordAt(bytes + size - 8));  // the last bytes (overlapping)
}

}  // namespace

void sanitizeNameInto(const char* text, std::string& out) {
    const std::string_view name = sanitizedName(text, out);
    if (name.data() != out.data()) out.assign(name);
}

std::string_view sanitizedName(const char* text, std::string& out) {
    const std::string_view raw(text ? text : "");
    if (isPlainName(raw)) return raw;
    out = format::printableText(raw, std::string::npos);  // bad bytes and controls as \xNN
    for (auto& c : out)
        if (c == '/' || c == '\n' || c == '\t') c = '_';
    if (out.size() > kMaxNameBytes) {
        size_t cut = kMaxNameBytes;
        while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80)
            --cut;                               // whole characters
        uint64_t hash = 1469598103934665603ull;  // FNV-1a of the raw name
        for (unsigned char c : raw) hash = (hash ^ c) * 1099511628211ull;
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, "~%08x", static_cast<unsigned>(hash ^ (hash >> 32)));
        out.resize(cut);
        out += suffix;
    }
    return out;
}

OpNames sanitizedOpNames(const char* name, const char* type, std::string& nameScratch,
                         std::string& typeScratch) {
    if (!type || !*type) {
        const std::string_view display = sanitizedName(name, nameScratch);
        return {display, display};
    }
    const std::string_view typeName = sanitizedName(type, typeScratch);
    // The tail of a type that needed no change needs none either ("linear" of "aten::linear").
    const auto at = reinterpret_cast<uintptr_t>(name), from = reinterpret_cast<uintptr_t>(type);
    if (typeName.data() == type && at >= from && at <= from + typeName.size())
        return {std::string_view(name, typeName.size() - (at - from)), typeName};
    return {sanitizedName(name, nameScratch), typeName};
}

std::string sanitizeName(const char* text) {
    std::string out;
    sanitizeNameInto(text, out);
    return out;
}

}  // namespace probe::runtime
