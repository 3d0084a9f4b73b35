// Names the engine gives (ops, arguments, models) as they appear in the dump's paths and rows.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

namespace probe::runtime {

// The name with path separators and line breaks replaced; "" for null.
std::string sanitizeName(const char* text);

}  // namespace probe::runtime
