// SPDX-License-Identifier: GPL-3.0-or-later
#include "fuzz_support.h"

#include <unistd.h>

#include <filesystem>
#include <vector>

#include "probe/format/file_util.h"

namespace probe::fuzz {

const std::string& scratchDirectory() {
    // Never destroyed: the exit handler that removes it runs after static destructors would.
    static const std::string* dir = [] {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base && *base ? base : "/tmp") + "/probe-fuzz-XXXXXX";
        std::vector<char> buffer(pattern.begin(), pattern.end());
        buffer.push_back('\0');
        PROBE_FUZZ_CHECK(::mkdtemp(buffer.data()) != nullptr);
        std::atexit([] { std::filesystem::remove_all(scratchDirectory()); });
        return new std::string(buffer.data());
    }();
    return *dir;
}

void writeScratchFile(const std::string& path, std::string_view content) {
    PROBE_FUZZ_CHECK(format::writeFileAtomically(path, content) == 0);
}

}  // namespace probe::fuzz
