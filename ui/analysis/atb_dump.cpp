// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/atb_dump.h"

#include <algorithm>

#include "probe/format/file_util.h"

namespace probe::analysis {
namespace {

bool allDigits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<std::string> findAtbDumpRoot(const std::string& path) {
    std::string p = format::absolutePath(path);
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (format::isDirectory(p + "/atb_dump_data")) return p + "/atb_dump_data";
    // Inside it: walk up until the directory named atb_dump_data.
    for (std::string q = p; !q.empty() && q != "/";) {
        const size_t slash = q.rfind('/');
        const std::string base = q.substr(slash + 1);
        if (base == "atb_dump_data" && format::isDirectory(q)) return q;
        if (slash == std::string::npos || slash == 0) break;
        q = q.substr(0, slash);
    }
    return std::nullopt;
}

std::vector<RoundFile> listRoundFiles(const std::string& root) {
    std::vector<RoundFile> files;
    const std::string data = root + "/data";
    const auto processes = format::listDirectory(data, format::EntryKind::Directories);
    for (const auto& devicePid : processes) {
        std::vector<int64_t> rounds;
        for (const auto& r : format::listDirectory(data + "/" + devicePid, format::EntryKind::Directories))
            if (allDigits(r)) rounds.push_back(std::stoll(r));
        std::sort(rounds.begin(), rounds.end());
        for (int64_t round : rounds) {
            const std::string path = data + "/" + devicePid + "/" + std::to_string(round) + "/statistic.csv";
            if (format::fileExists(path)) files.push_back({devicePid, round, path});
        }
    }
    return files;
}

}  // namespace probe::analysis
