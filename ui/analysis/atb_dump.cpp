// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/atb_dump.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <set>
#include <tuple>

#include "analysis/dump_reader.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::analysis {
namespace {

bool allDigits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string parentOf(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

bool startsWith(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The file `file` of the op whose id parts are parts[k..] below `dir`. The runtime nests op
// directories and names each by the last part of the id ("0_WordEmbedding/0_Gather" for op 0_0);
// a flat directory named by the whole id ("2_1_mm") is found as well. Names may start with
// digits too, so every directory that fits is tried and the file decides. `searched` holds the
// (folder, k) pairs searched in vain: each is searched once, however many paths lead to it (two
// links to "." and an id of 22 parts made 4 million searches, a compare that never ended).
using SearchedFolders = std::set<std::tuple<dev_t, ino_t, size_t>>;
std::string findOpFile(const std::string& dir, const std::vector<std::string>& parts, size_t k,
                       const std::string& file, SearchedFolders& searched) {
    if (k == parts.size()) {
        const std::string path = dir + "/" + file;
        return format::fileExists(path) ? path : std::string();
    }
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0 || !searched.emplace(st.st_dev, st.st_ino, k).second)
        return {};
    for (const auto& child : format::listDirectory(dir, format::EntryKind::Directories)) {
        std::string prefix;
        for (size_t end = k; end < parts.size(); ++end) {
            prefix += parts[end] + "_";
            if (!startsWith(child, prefix)) break;
            std::string found = findOpFile(dir + "/" + child, parts, end + 1, file, searched);
            if (!found.empty()) return found;
        }
    }
    return {};
}

// A round folder that is a symbolic link to its process folder, or to a folder above it, holds
// the rounds again rather than a round's files (a process folder, the processes again): what
// it says of itself (`what` it should be), else nothing. (Read, it was a round with no rows,
// said nowhere.)
std::optional<std::string> linkToAFolderHoldingIt(const std::string& path, const char* what) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return std::nullopt;
    const std::string target = format::resolvedPath(path);
    const std::string holder = format::resolvedPath(parentOf(path));
    if (target.empty() || holder.empty()) return std::nullopt;
    if (holder != target && holder.compare(0, target.size() + 1, target + "/") != 0)
        return std::nullopt;
    return path + ": a symbolic link to " +
           (holder == target ? std::string("the folder that holds it")
                             : "a folder above it (" + target + ")") +
           ", not a " + what + "; not read";
}

}  // namespace

std::optional<int32_t> roundNumber(std::string_view name) {
    // Digits only, and a number a round can be ("99999999999999999999" is no round), as the
    // runtime writes it: "01" (a copy of round 1) is none, else round 1 is read twice.
    int64_t round = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), round);
    if (name.empty() || name[0] < '0' || name[0] > '9' || ec != std::errc() ||
        end != name.data() + name.size() || round > INT32_MAX ||
        (name.size() > 1 && name[0] == '0'))
        return std::nullopt;
    return static_cast<int32_t>(round);
}

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

RoundListing listRoundFiles(const std::string& root) {
    RoundListing listing;
    const std::string data = root + "/data";
    // Names as the runtime gives them: "<dev>_<pid>" or "<pid>" for a process, digits for a round.
    const auto looksLikeProcess = [](const std::string& name) {
        const size_t split = name.find('_');
        return split == std::string::npos
                   ? allDigits(name)
                   : allDigits(name.substr(0, split)) && allDigits(name.substr(split + 1));
    };
    // The folders in `dir`; what keeps them from being read is noted.
    const auto foldersIn = [&](const std::string& dir, auto&& named) {
        FolderListing listed = listFolders(dir, named);
        for (auto& [path, problem] : listed.problems)
            listing.unreadEntries.push_back(std::move(problem));
        return std::move(listed.folders);
    };
    struct stat dataStat;
    if (::stat(data.c_str(), &dataStat) == 0 && !S_ISDIR(dataStat.st_mode))
        listing.unreadEntries.push_back(data + ": " + format::whatIsThere(data) +
                                        ", not a folder; the rows it should hold are not read");
    for (const auto& process : foldersIn(data, looksLikeProcess)) {
        const std::string& devicePid = process.name;
        const std::string processDir = data + "/" + devicePid;
        if (process.isLink)
            if (const auto loop = linkToAFolderHoldingIt(processDir, "process folder")) {
                listing.unreadEntries.push_back(*loop);
                continue;
            }
        std::vector<int64_t> rounds;
        for (const auto& entry : foldersIn(processDir, allDigits)) {
            const std::string& r = entry.name;
            const auto number = roundNumber(r);
            if (!number) {
                // Said when it holds rows: a renamed round folder lost them without a word.
                const std::string csv = processDir + "/" + r + "/statistic.csv";
                struct stat st;
                if (::lstat(csv.c_str(), &st) == 0)
                    listing.unreadEntries.push_back(
                        processDir + "/" + r +
                        ": not a round folder (its name is not a number from 0 to 2147483647 "
                        "without leading zeros); its statistic.csv is not read");
                continue;
            }
            if (entry.isLink)
                if (const auto loop =
                        linkToAFolderHoldingIt(processDir + "/" + r, "round folder")) {
                    listing.unreadEntries.push_back(*loop);
                    continue;
                }
            rounds.push_back(*number);
        }
        std::sort(rounds.begin(), rounds.end());
        for (int64_t round : rounds) {
            const std::string path = processDir + "/" + std::to_string(round) + "/statistic.csv";
            // Whatever holds the name, so that what cannot be read is reported, not skipped (a
            // symlink loop there dropped the round's rows without a word).
            struct stat st;
            if (::lstat(path.c_str(), &st) != 0) {
                // A round folder begun but not written yet has none; one the user may not
                // read lost its rows without a word.
                const int error = errno;
                // Denied here is the round folder's doing (lstat needs only to search it).
                const std::string where = error == EACCES ? parentOf(path) : path;
                if (error != ENOENT)
                    listing.unreadEntries.push_back(where + ": " + std::strerror(error) +
                                                    "; the round's rows are not read");
                continue;
            }
            RoundFile file{devicePid, round, path};
            if (S_ISREG(st.st_mode)) file.regularSize = static_cast<uint64_t>(st.st_size);
            listing.files.push_back(std::move(file));
        }
    }
    return listing;
}

std::string tensorPathInDump(const std::string& csvPath, const std::string& recordedPath) {
    // "data/<dev_pid>/<round>": the last three directories of the statistic.csv's path.
    const std::string roundDir = parentOf(csvPath);
    std::string tail = roundDir;
    size_t start = std::string::npos;
    for (int parts = 0; parts < 3; ++parts) {
        start = tail.rfind('/');
        if (start == std::string::npos) return recordedPath;
        tail.resize(start);
    }
    const std::string marker = roundDir.substr(start) + "/";  // "/data/0_1234/2/"
    const size_t at = recordedPath.rfind(marker);
    if (at == std::string::npos) return recordedPath;
    return roundDir + "/" + recordedPath.substr(at + marker.size());
}

std::string findFirstCopy(const std::string& binPath, const std::string& alias) {
    // Op ids hold only digits and '_'; the file name starts with intensor or outtensor.
    size_t split = std::string::npos;
    for (const char* kind : {"_intensor", "_outtensor"}) split = std::min(split, alias.find(kind));
    if (split == std::string::npos || split == 0) return {};
    const std::string id = alias.substr(0, split);
    if (id.find_first_not_of("0123456789_") != std::string::npos) return {};
    const std::string file = alias.substr(split + 1);
    const std::string side = startsWith(file, "outtensor") ? "after/" : "before/";
    // The round directory is the nearest one named by digits alone (op directories are
    // "<id>_<name>").
    std::string round = parentOf(binPath);
    while (!round.empty() && !allDigits(format::fileNameOf(round))) round = parentOf(round);
    if (round.empty()) return {};
    std::vector<std::string> parts;
    for (size_t begin = 0, end = 0; end != std::string::npos; begin = end + 1) {
        end = id.find('_', begin);
        parts.push_back(
            id.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    }
    SearchedFolders searched;
    return findOpFile(round, parts, 0, side + file, searched);
}

std::optional<std::string> roundOpParams(const std::string& tensorPath, std::string* error) {
    const size_t file = tensorPath.rfind('/');
    if (file == std::string::npos || file == 0) return std::nullopt;
    const size_t side = tensorPath.rfind('/', file - 1);
    if (side == std::string::npos) return std::nullopt;
    const std::string_view sideName(tensorPath.data() + side + 1, file - side - 1);
    if (sideName != "before" && sideName != "after") return std::nullopt;
    const std::string path = tensorPath.substr(0, side) + "/op_param.json";
    if (!format::fileExists(path)) return std::nullopt;
    std::string why;
    const auto text = format::readRegularFile(path, format::kConfigJsonLimits.maxBytes, &why);
    if (!text) {
        if (error) *error = path + ": " + why;
        return std::nullopt;
    }
    const auto parsed = format::parseOrderedJson(*text, path, format::kConfigJsonLimits);
    if (!parsed.ok()) {
        if (error) *error = parsed.error.toString();
        return std::nullopt;
    }
    return format::dumpJson(*parsed.value);
}

}  // namespace probe::analysis
