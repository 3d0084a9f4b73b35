// Shared by the fuzz targets: an invariant check that stops the fuzzer (a finding), and a scratch
// directory for the targets that drive a reader through real files.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace probe::fuzz {

// A broken invariant is a finding like a crash: say which, and abort so the input is kept.
#define PROBE_FUZZ_CHECK(condition)                                                           \
    do {                                                                                      \
        if (!(condition)) {                                                                   \
            std::fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", #condition, __FILE__, \
                         __LINE__);                                                           \
            std::abort();                                                                     \
        }                                                                                     \
    } while (0)

inline std::string_view textOf(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// A directory of this process, made once (under $TMPDIR, else /tmp) and reused by every input.
const std::string& scratchDirectory();
// Replaces `path` with `content` (written whole, then renamed over it).
void writeScratchFile(const std::string& path, std::string_view content);

}  // namespace probe::fuzz
