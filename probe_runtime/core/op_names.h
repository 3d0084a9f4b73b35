// Names the engine gives (ops, arguments, models) as they appear in the dump's paths and rows.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>
#include <string_view>

namespace probe::runtime {

// The name with path separators and line breaks replaced; "" for null.
std::string sanitizeName(const char* text);

// `text` with every byte that is not part of valid UTF-8 written as \xNN, so that any bytes can
// go into JSON and on screen, and different bytes stay different.
std::string validUtf8(std::string_view text);

}  // namespace probe::runtime
