// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_names.h"

#include <cstdint>
#include <cstdio>

#include "probe/format/json_input.h"

namespace probe::runtime {

namespace {

// Printable ASCII without '/': what sanitizeName keeps as it is (nearly every name).
bool isPlainName(std::string_view text) {
    if (text.size() > kMaxNameBytes) return false;
    for (const char c : text)
        if (c < 0x20 || c > 0x7e || c == '/') return false;
    return true;
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

std::string sanitizeName(const char* text) {
    std::string out;
    sanitizeNameInto(text, out);
    return out;
}

}  // namespace probe::runtime
