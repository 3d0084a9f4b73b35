// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/atb_dump.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"

namespace probe::analysis {
namespace {

bool allDigits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void walkFiles(const std::string& dir, uint64_t& files, uint64_t& bytes, uint64_t& bins) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        const std::string path = dir + "/" + name;
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            walkFiles(path, files, bytes, bins);
        } else if (S_ISREG(st.st_mode)) {
            if (name == format::kStatusFileName || name == ".probe_status.lock" || name == "probe_injection.jsonl") continue;
            if (name[0] == '.' && name.size() > 4 && name.substr(name.size() - 4) == ".tmp") continue;  // being written
            ++files;
            bytes += static_cast<uint64_t>(st.st_size);
            if (name.size() > 4 && name.substr(name.size() - 4) == ".bin") ++bins;
        }
    }
    ::closedir(d);
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

bool forEachRow(const std::string& root, const std::function<bool(const RoundFile&, const format::StatRow&)>& onRow,
                uint64_t* malformed) {
    for (const auto& file : listRoundFiles(root)) {
        std::ifstream in(file.path);
        std::string line;
        bool header = true;
        while (std::getline(in, line)) {
            if (header) {
                header = false;
                if (line.rfind("Device and PID,", 0) == 0) continue;
            }
            if (line.empty()) continue;
            auto row = format::parseStatRow(line, nullptr);
            if (!row) {
                if (malformed) ++*malformed;
                continue;
            }
            if (!onRow(file, *row)) return false;
        }
    }
    return true;
}

AtbDumpSummary summarizeAtbDump(const std::string& root) {
    AtbDumpSummary s;
    s.root = root;
    std::string error;
    if (auto status = format::readStatusFile(root, &error)) {
        s.state = status->state;
        for (const auto& p : status->processes) {
            for (const auto& m : p.messages) s.messages.push_back(m);
            if (!p.dumpStopped.empty()) s.dumpStopped = p.dumpStopped;
        }
    } else {
        s.state = "unknown";
    }
    std::set<std::string> processes, ops;
    std::set<int64_t> roundDirs;
    forEachRow(
        root,
        [&](const RoundFile& file, const format::StatRow& row) {
            ++s.rows;
            processes.insert(file.devicePid);
            if (ops.insert(file.devicePid + "|" + row.opId).second && row.opId.find('_') == std::string::npos)
                ++s.layerOps;
            if (s.firstRound < 0 || row.round < s.firstRound) s.firstRound = row.round;
            s.lastRound = std::max(s.lastRound, row.round);
            roundDirs.insert(row.round);
            if (!s.firstNan || !s.firstInf) {
                std::string what;
                bool nan = false, inf = false;
                const char* names[] = {"max", "min", "mean", "norm"};
                const std::optional<double> values[] = {row.max, row.min, row.mean, row.norm};
                for (int i = 0; i < 4; ++i) {
                    if (!values[i] || std::isfinite(*values[i])) continue;
                    nan = nan || std::isnan(*values[i]);
                    inf = inf || std::isinf(*values[i]);
                    what += std::string(what.empty() ? "" : " ") + names[i] + "=" + format::formatStatValue(values[i]);
                }
                const Anomaly anomaly{file.devicePid, row.round, row.opId, row.opName, row.opType, row.isOutput, row.index, what};
                if (nan && !s.firstNan) s.firstNan = anomaly;
                if (inf && !s.firstInf) s.firstInf = anomaly;
            }
            return true;
        },
        &s.malformedRows);
    s.ops = ops.size();
    s.roundDirectories = roundDirs.size();
    for (const auto& p : format::listDirectory(root + "/data", format::EntryKind::Directories)) processes.insert(p);
    s.processes.assign(processes.begin(), processes.end());
    walkFiles(root, s.files, s.bytes, s.tensorFiles);
    return s;
}

std::string humanBytes(uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    return buffer;
}

std::string formatSummary(const AtbDumpSummary& s) {
    std::string out = "dump: " + s.root + " (" + s.state + ")\n";
    char line[512];
    std::snprintf(line, sizeof line, "  processes: %zu   ops: %llu (%llu layer-level)   rounds: ", s.processes.size(),
                  static_cast<unsigned long long>(s.ops), static_cast<unsigned long long>(s.layerOps));
    out += line;
    if (s.firstRound < 0)
        out += "none";
    else
        out += std::to_string(s.firstRound) + ".." + std::to_string(s.lastRound) + " (" + std::to_string(s.roundDirectories) + ")";
    out += "\n";
    std::snprintf(line, sizeof line, "  rows: %llu   files: %llu (%llu tensors)   size: %s\n",
                  static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.files),
                  static_cast<unsigned long long>(s.tensorFiles), humanBytes(s.bytes).c_str());
    out += line;
    auto describe = [](const Anomaly& a) {
        return "round " + std::to_string(a.round) + ", op " + a.opId + " " + a.opName + " (" + a.opType + "), " +
               (a.isOutput ? "output " : "input ") + a.index + ": " + a.what + "\n";
    };
    if (s.firstNan) out += "  first NaN: " + describe(*s.firstNan);
    if (s.firstInf) out += "  first Inf: " + describe(*s.firstInf);
    if (!s.firstNan && !s.firstInf && s.rows > 0) out += "  no NaN or Inf in any statistic\n";
    if (s.malformedRows) out += "  note: " + std::to_string(s.malformedRows) + " malformed row(s) skipped\n";
    if (!s.dumpStopped.empty()) out += "  dumping stopped early: " + s.dumpStopped + "\n";
    for (const auto& m : s.messages) out += "  runtime error: " + m.substr(0, m.find('\n')) + "\n";
    return out;
}

}  // namespace probe::analysis
