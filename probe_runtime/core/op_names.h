// Names the engine gives (ops, arguments, models) as they appear in the dump's paths and rows.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>
#include <string_view>

namespace probe::runtime {

// Names (of ops, arguments, models) as the engine gives them are any bytes. In the dump they
// become safe path components and CSV fields: bytes that are not UTF-8 and control characters
// are written \xNN (format::printableText), '/', line feeds and tabs become '_', and a name longer
// than kMaxNameBytes is cut, with a hash of the whole name appended so that names differing only
// beyond the cut stay apart. Ops are told apart by their raw names and ids, never by these ("a/b"
// and "a_b" are two ops). "" for null.
constexpr size_t kMaxNameBytes = 200;
std::string sanitizeName(const char* text);
// sanitizeName(text) into `out`, reusing its memory (an op's names, at every op).
void sanitizeNameInto(const char* text, std::string& out);
// sanitizeName(text) as a view: of `text` itself when it needs no change (nearly every name, and
// no copy made), else of `scratch`, which then holds it. Valid while both are.
std::string_view sanitizedName(const char* text, std::string& scratch);
// sanitizedName of an op's name and of its type (the name when none), the name in
// `nameScratch` and the type in `typeScratch` when they need a change. A name that is the tail
// of its type's text (an aten op's "linear" of "aten::linear") is not looked at again.
struct OpNames {
    std::string_view name, type;
};
OpNames sanitizedOpNames(const char* name, const char* type, std::string& nameScratch,
                         std::string& typeScratch);

}  // namespace probe::runtime
