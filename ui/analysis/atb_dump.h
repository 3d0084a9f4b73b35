// Where an op-level dump (atb_dump_data layout) is, and its statistic.csv files in order. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>


namespace probe::analysis {

// Finds the atb_dump_data directory given it, its parent (the --output directory), or a
// directory inside it. nullopt when there is none.
std::optional<std::string> findAtbDumpRoot(const std::string& path);

// One statistic.csv of data/<dev_pid>/<round>/.
struct RoundFile {
    std::string devicePid;
    int64_t round = 0;
    std::string path;
};

// Every statistic.csv below <root>/data, ordered by process, then round (numerically).
std::vector<RoundFile> listRoundFiles(const std::string& root);

}  // namespace probe::analysis
