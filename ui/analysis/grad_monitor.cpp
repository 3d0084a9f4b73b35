// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/grad_monitor.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <regex>
#include <tuple>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "probe/format/config_issue.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::analysis {
namespace {

constexpr int kMaxDepth = 4;

bool isGradCsv(const std::string& name) {
    return name.rfind("grad_reduced_", 0) == 0 && name.size() > 4 &&
           name.compare(name.size() - 4, 4, ".csv") == 0;
}

// A folder that is a link is not entered (as the dump readers refuse linked round folders): a
// link to "." below a rank counted its files again at every level (160 samples for 40).
void findCsvFiles(const std::string& dir, int depth, std::vector<std::string>& out,
                  std::vector<std::string>& problems) {
    const auto entries = format::listDirectoryEntries(dir);
    for (const auto& entry : entries)
        if (!entry.isDirectory && !entry.unfollowed && isGradCsv(entry.name))
            out.push_back(dir + "/" + entry.name);
    if (depth >= kMaxDepth) return;
    for (const auto& entry : entries) {
        if (!entry.isDirectory) continue;
        // Looked into like any folder, but said: the file the name promises is not there.
        if (isGradCsv(entry.name))
            problems.push_back(dir + "/" + entry.name + ": a folder, not a monitor file");
        if (entry.isLink)
            problems.push_back(dir + "/" + entry.name + ": a link to a folder, not followed");
        else
            findCsvFiles(dir + "/" + entry.name, depth + 1, out, problems);
    }
}

// Calls onLine(line, number) for each line of the file at `path` (its end of line left out),
// read a chunk at a time: a monitor's file grows with parameters times steps (32 MB for 150
// parameters and 1000 steps, which a whole-file limit of 16 MiB skipped, saying "no NaN"). A line
// longer than kMaxLineBytes, and a last line without its end, are problems, not lines, as is a
// file that cannot be read.
constexpr size_t kMaxLineBytes = size_t{1} << 20;
constexpr uint64_t kMaxCsvBytes = uint64_t{1} << 40;
// The file's size in bytes; nullopt when it could not be opened (said in `problems`).
template <typename OnLine>
std::optional<uint64_t> forEachLine(const std::string& path, OnLine onLine,
                                    std::vector<std::string>& problems) {
    uint64_t size = 0;
    std::string error;
    const int fd = format::openRegularFile(path, kMaxCsvBytes, &size, &error);
    if (fd < 0) {
        problems.push_back(path + ": " + error);
        return std::nullopt;
    }
    std::vector<char> chunk(size_t{1} << 20);
    std::string pending;
    int64_t number = 0;
    bool skipping = false;  // the rest of a line too long
    bool ok = true;
    while (true) {
        const ssize_t n = ::read(fd, chunk.data(), chunk.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            problems.push_back(path + ": " + std::strerror(errno));
            ok = false;
            break;
        }
        if (n == 0) break;
        const char* at = chunk.data();
        const char* const end = at + n;
        while (at < end) {
            const char* newline = static_cast<const char*>(std::memchr(at, '\n', end - at));
            const char* stop = newline ? newline : end;
            if (!skipping) pending.append(at, static_cast<size_t>(stop - at));
            if (!skipping && pending.size() > kMaxLineBytes) {
                problems.push_back(path + ": line " + std::to_string(number + 1) +
                                   ": longer than " + std::to_string(kMaxLineBytes) +
                                   " bytes, skipped");
                pending.clear();
                skipping = true;
            }
            if (!newline) break;
            ++number;
            if (!skipping) onLine(pending, number);
            pending.clear();
            skipping = false;
            at = newline + 1;
        }
    }
    ::close(fd);
    if (ok && !pending.empty())
        problems.push_back(path + ": line " + std::to_string(number + 1) +
                           ": cut short (no end of line), skipped");
    return size;
}

// "rank3" from the nearest directory whose name holds rank<digits>.
std::string rankOf(const std::string& path, const std::string& root) {
    static const std::regex rank(R"((^|[^A-Za-z])rank(\d+))");
    std::string rest = path.substr(root.size());
    for (size_t end = rest.rfind('/'); end != std::string::npos && end > 0;
         end = rest.rfind('/', end - 1)) {
        const size_t begin = rest.rfind('/', end - 1);
        const std::string component =
            rest.substr(begin == std::string::npos ? 0 : begin + 1,
                        end - (begin == std::string::npos ? 0 : begin + 1));
        std::smatch m;
        if (std::regex_search(component, m, rank)) return "rank" + m[2].str();
        if (begin == std::string::npos) break;
    }
    std::smatch m;
    const std::string base = root.substr(root.rfind('/') + 1);
    if (std::regex_search(base, m, rank)) return "rank" + m[2].str();
    return "rank0";
}

std::vector<std::string> splitCsvLine(const std::string& line) {
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.push_back(std::move(field));
            field.clear();
        } else if (c != '\r') {
            field += c;
        }
    }
    fields.push_back(std::move(field));
    return fields;
}

std::optional<double> parseNumber(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') return std::nullopt;
    return v;
}

// A whole number from 0 to 2^53 (a double holds every one of them exactly).
bool isCount(double v) {
    return std::isfinite(v) && v >= 0 && v <= 9007199254740992.0 && v == std::floor(v);
}

double median(std::vector<double> values) {
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid),
                     values.end());
    double m = values[mid];
    if (values.size() % 2 == 0) {
        const double lowerHalf =
            *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
        m = (m + lowerHalf) / 2;
    }
    return m;
}

std::string number(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", v);
    return buffer;
}

nlohmann::ordered_json jsonNumber(double v) {
    if (std::isfinite(v)) return v;
    return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

}  // namespace

const char* gradFindingKindName(GradFinding::Kind kind) {
    switch (kind) {
        case GradFinding::Kind::Nan:
            return "nan";
        case GradFinding::Kind::Inf:
            return "inf";
        case GradFinding::Kind::Spike:
            return "spike";
        case GradFinding::Kind::Exploding:
            return "exploding";
        case GradFinding::Kind::Vanishing:
            return "vanishing";
    }
    return "?";
}

std::optional<GradMonitorData> readGradMonitor(const std::string& dir, std::string* error) {
    if (!format::isDirectory(dir)) {
        // What is there, as the dump readers say it: a FIFO was "a file".
        if (error) {
            *error = dir + " " + format::whatIsThere(dir);
            if (format::fileExists(dir)) *error += "; give the monitor's output directory";
        }
        return std::nullopt;
    }
    GradMonitorData data;
    std::vector<std::string> found;
    findCsvFiles(dir, 0, found, data.problems);
    std::sort(found.begin(), found.end());
    if (found.empty()) {
        if (error)
            *error = dir +
                     " holds no grad_reduced_*.csv (written by "
                     "probe_studio.grad_monitor.GradMonitor or msprobe's "
                     "monitor)";
        return std::nullopt;
    }
    std::unordered_map<std::string, size_t> seriesOf;  // rank \x1f name
    // Problems of lines, at most this many (a broken file is said, not listed whole).
    constexpr size_t kMaxLineProblems = 50;
    auto lineProblem = [&](const std::string& path, int64_t number, const std::string& what) {
        if (data.problems.size() < kMaxLineProblems)
            data.problems.push_back(path + ": line " + std::to_string(number) + ": " + what);
    };
    for (const auto& path : found) {
        std::vector<std::string> header;
        int nameColumn = -1, stepColumn = -1, vppColumn = -1, normColumn = -1, maxColumn = -1,
            minColumn = -1, meanColumn = -1, nansColumn = -1;
        bool usable = true;
        const std::string rank = rankOf(path, dir);
        const auto size = forEachLine(
            path,
            [&](const std::string& line, int64_t number) {
                if (!usable) return;
                if (number == 1) {
                    header = splitCsvLine(line);
                    auto column = [&](const char* name) -> int {
                        for (size_t i = 0; i < header.size(); ++i)
                            if (header[i] == name) return static_cast<int>(i);
                        return -1;
                    };
                    nameColumn = column("name");
                    stepColumn = column("step");
                    vppColumn = column("vpp_stage");
                    normColumn = column("norm");
                    maxColumn = column("max");
                    minColumn = column("min");
                    meanColumn = column("mean");
                    nansColumn = column("nans");
                    if (nameColumn < 0 || stepColumn < 0) {
                        data.problems.push_back(path +
                                                ": line 1: no 'name' and 'step' columns; is it "
                                                "a gradient monitor CSV?");
                        usable = false;
                    }
                    return;
                }
                if (line.empty() || line == "\r") return;
                const auto fields = splitCsvLine(line);
                auto field = [&](int c) -> std::string {
                    return c >= 0 && static_cast<size_t>(c) < fields.size() ? fields[c] : "";
                };
                const auto step = parseNumber(field(stepColumn));
                if (!step || field(nameColumn).empty()) {
                    lineProblem(path, number, "no parameter name or step");
                    return;
                }
                // A step and a pipeline stage are counts: a NaN, 1e999 or a negative one is no
                // step (it became one, or another parameter, without a word).
                if (!isCount(*step)) {
                    lineProblem(path, number,
                                "step " + field(stepColumn) + " is not a whole number ≥ 0");
                    return;
                }
                std::string name = field(nameColumn);
                const std::string vpp = field(vppColumn);
                if (!vpp.empty() && vpp != "0") {
                    const auto stage = parseNumber(vpp);
                    if (!stage || !isCount(*stage)) {
                        lineProblem(path, number,
                                    "vpp_stage " + vpp + " is not a whole number ≥ 0");
                        return;
                    }
                    name = vpp + ":" + name;
                }
                GradSample sample;
                sample.step = static_cast<int64_t>(*step);
                // An empty value is one not monitored; any other must be a number (a NaN count
                // of "abc" was taken as none).
                bool valuesRead = true;
                auto value = [&](int c, const char* column, double& to) {
                    const std::string text = field(c);
                    if (text.empty() || !valuesRead) return false;
                    const auto v = parseNumber(text);
                    if (!v) {
                        lineProblem(path, number,
                                    std::string(column) + " " + text + " is not a number");
                        valuesRead = false;
                        return false;
                    }
                    to = *v;
                    return true;
                };
                sample.hasNorm = value(normColumn, "norm", sample.norm);
                value(maxColumn, "max", sample.max);
                value(minColumn, "min", sample.min);
                value(meanColumn, "mean", sample.mean);
                if (value(nansColumn, "nans", sample.nans) && !isCount(sample.nans)) {
                    lineProblem(path, number,
                                "nans " + field(nansColumn) + " is not a whole number ≥ 0");
                    valuesRead = false;
                }
                if (!valuesRead) return;
                const std::string key = rank + '\x1f' + name;
                auto [it, inserted] = seriesOf.try_emplace(key, data.series.size());
                if (inserted) data.series.push_back(GradSeries{rank, name, {}});
                data.series[it->second].samples.push_back(sample);
            },
            data.problems);
        if (!size) continue;
        data.files.push_back(path);
        // No bytes: not a monitor's file (one writes its header at once), nor "no NaN". (A first
        // line cut short or too long is said as such above.)
        if (*size == 0) data.problems.push_back(path + ": empty: no header line (name, step, ...)");
    }
    for (auto& s : data.series)
        std::stable_sort(s.samples.begin(), s.samples.end(),
                         [](const GradSample& a, const GradSample& b) { return a.step < b.step; });
    std::stable_sort(data.series.begin(), data.series.end(),
                     [](const GradSeries& a, const GradSeries& b) { return a.rank < b.rank; });
    return data;
}

std::vector<GradFinding> analyzeGradients(const GradMonitorData& data, const GradThresholds& t) {
    std::vector<GradFinding> findings;
    for (const auto& series : data.series) {
        std::deque<double> history;
        bool inVanishingRun = false;
        size_t vanishingIndex = 0;  // the finding of the current run of vanishing steps
        for (const auto& s : series.samples) {
            GradFinding f;
            f.rank = series.rank;
            f.parameter = series.name;
            f.step = f.lastStep = s.step;
            f.norm = s.norm;
            f.nans = s.nans;
            const bool nan = s.nans > 0 || (s.hasNorm && std::isnan(s.norm));
            if (nan) {
                f.kind = GradFinding::Kind::Nan;
                findings.push_back(f);
            } else if (s.hasNorm && std::isinf(s.norm)) {
                f.kind = GradFinding::Kind::Inf;
                findings.push_back(f);
            }
            if (!s.hasNorm || !std::isfinite(s.norm)) {
                inVanishingRun = false;
                continue;
            }
            if (static_cast<int>(history.size()) >= t.minHistory) {
                const double m = median(std::vector<double>(history.begin(), history.end()));
                if (m > 0 && s.norm > t.spike * m) {
                    f.kind = GradFinding::Kind::Spike;
                    f.reference = m;
                    findings.push_back(f);
                }
            }
            if (t.explode && s.norm > *t.explode) {
                f.kind = GradFinding::Kind::Exploding;
                f.reference = *t.explode;
                findings.push_back(f);
            }
            if (s.norm < t.vanish) {
                if (inVanishingRun) {
                    findings[vanishingIndex].lastStep = s.step;
                    ++findings[vanishingIndex].steps;
                } else {
                    f.kind = GradFinding::Kind::Vanishing;
                    f.reference = t.vanish;
                    vanishingIndex = findings.size();
                    findings.push_back(f);
                    inVanishingRun = true;
                }
            } else {
                inVanishingRun = false;
            }
            history.push_back(s.norm);
            if (static_cast<int>(history.size()) > t.window) history.pop_front();
        }
    }
    std::stable_sort(
        findings.begin(), findings.end(), [](const GradFinding& a, const GradFinding& b) {
            return std::tie(a.step, a.rank, a.parameter) < std::tie(b.step, b.rank, b.parameter);
        });
    return findings;
}

std::string formatGradFinding(const GradFinding& f) {
    // Names come from the files: bytes that are no text are shown as \xNN, not sent raw.
    std::string out = "step " + std::to_string(f.step) + "  " +
                      format::printableText(f.rank, 4096) + "  " +
                      format::printableText(f.parameter, 4096) + ": " + gradFindingKindName(f.kind);
    switch (f.kind) {
        case GradFinding::Kind::Nan:
            out += f.nans > 0 ? ", " + number(f.nans) + " NaN element(s)" : ", norm=nan";
            break;
        case GradFinding::Kind::Inf:
            out += ", norm=" + number(f.norm);
            break;
        case GradFinding::Kind::Spike:
            out += ", norm " + number(f.norm) + " is " + number(f.norm / f.reference) +
                   "x its running median " + number(f.reference);
            break;
        case GradFinding::Kind::Exploding:
            out += ", norm " + number(f.norm) + " above " + number(f.reference);
            break;
        case GradFinding::Kind::Vanishing:
            out += ", norm " + number(f.norm) + " below " + number(f.reference);
            if (f.steps > 1)
                out += " for " + std::to_string(f.steps) + " steps (to step " +
                       std::to_string(f.lastStep) + ")";
            break;
    }
    return out;
}

std::string gradFindingsJson(const GradMonitorData& data,
                             const std::vector<GradFinding>& findings) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["files"] = data.files;
    out["parameters"] = data.series.size();
    out["findings"] = nlohmann::ordered_json::array();
    for (const auto& f : findings) {
        nlohmann::ordered_json item = nlohmann::ordered_json::object();
        item["kind"] = gradFindingKindName(f.kind);
        item["step"] = f.step;
        item["last_step"] = f.lastStep;
        item["steps"] = f.steps;
        item["rank"] = f.rank;
        item["parameter"] = f.parameter;
        item["norm"] = jsonNumber(f.norm);
        item["reference"] = jsonNumber(f.reference);
        item["nans"] = f.nans;
        out["findings"].push_back(std::move(item));
    }
    out["problems"] = data.problems;
    return out.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace probe::analysis
