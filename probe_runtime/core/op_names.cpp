// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_names.h"

namespace probe::runtime {

std::string sanitizeName(const char* text) {
    std::string out = text ? text : "";
    for (auto& c : out)
        if (c == '/' || c == '\n' || c == '\r' || c == '\0') c = '_';
    return out;
}

}  // namespace probe::runtime
