// Where an op-level dump (atb_dump_data layout) is, and its statistic.csv files in order. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probe::analysis {

// Finds the atb_dump_data directory given it, its parent (the --output directory), or a
// directory inside it. nullopt when there is none.
std::optional<std::string> findAtbDumpRoot(const std::string& path);
// A round folder's number, as the reader takes it ("3" -> 3); nullopt for a name that is none.
std::optional<int32_t> roundNumber(std::string_view name);

// One statistic.csv of data/<dev_pid>/<round>/.
struct RoundFile {
    std::string devicePid;
    int64_t round = 0;
    std::string path;
    // Its size when listed, if it is a regular file (not a link, a FIFO, ...).
    std::optional<uint64_t> regularSize;
};

// What is below <root>/data: every statistic.csv, ordered by process, then round (numerically),
// and each entry named like a process's or a round's folder that is not one (a file, a device, a
// symlink loop), with why, so that its rows are said to be missing rather than silently absent.
struct RoundListing {
    std::vector<RoundFile> files;
    // What is in the place of a folder and is not read, and why: "<path>: is a character device,
    // not a folder; ...", "<path>: a symbolic link to the folder that holds it; ...".
    std::vector<std::string> unreadEntries;
};
RoundListing listRoundFiles(const std::string& root);

// Where a row's tensor file is in the dump as it was opened. The row records an absolute path
// into the folder the dump was written to, and dumps get copied and moved: the part after the
// round directory ("data/<dev_pid>/<round>/") is taken from under the directory of `csvPath`
// (the row's statistic.csv). The recorded path is returned only when it has no such part.
std::string tensorPathInDump(const std::string& csvPath, const std::string& recordedPath);

// A de-duplicated (header-only) .bin names the first copy of its data, "<op id>_<file>"
// ("2_1_outtensor0.bin"): an op of the same round. The path of that copy in the round directory
// that holds `binPath`, or "" when it is not there.
std::string findFirstCopy(const std::string& binPath, const std::string& alias);

// The parameters an op ran with in the round of one of its tensor files (`tensorPath`, in
// "<op folder>/before/" or "/after/"): the op_param.json beside them, as compact JSON. nullopt
// when there is none (an op without parameters, a path of another shape); with `error` set when
// it is there and cannot be read (not a regular file, over 1 MiB, not JSON).
std::optional<std::string> roundOpParams(const std::string& tensorPath, std::string* error);

}  // namespace probe::analysis
