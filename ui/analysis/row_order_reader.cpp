// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/row_order_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "probe/format/file_util.h"

namespace probe::analysis {

namespace {
// Runs are a dozen bytes: no line is longer than this.
constexpr uint64_t kChunk = 1u << 20;
// Runs kept beyond one per row read: a batch's runs are written before its rows.
constexpr uint64_t kRunsAheadOfRows = 1u << 16;

std::string rowCount(uint64_t n) {
    return std::to_string(n) + (n == 1 ? " row" : " rows");
}
}  // namespace

std::string RowOrderReader::stop(uint64_t line, const std::string& why) {
    stopped_ = true;
    if (line == 0) return path_ + ": " + why + "; the process's rows are taken round by round";
    return path_ + ":" + std::to_string(line) + ": " + why +
           "; the rows after it are taken round by round";
}

void RowOrderReader::place(int64_t round, uint64_t rows, std::vector<format::RowOrderRun>& runs) {
    uint64_t& placed = placed_[round];
    placed = rows > UINT64_MAX - placed ? UINT64_MAX : placed + rows;
    if (!runs.empty() && runs.back().round == round) {
        runs.back().rows =
            rows > UINT64_MAX - runs.back().rows ? UINT64_MAX : runs.back().rows + rows;
    } else {
        runs.push_back({round, rows});
        if (round != lastRound_) ++runsKept_;
    }
    lastRound_ = round;
}

void RowOrderReader::poll(const Rows& rows, std::vector<format::RowOrderRun>& runs,
                          std::vector<std::string>& problems) {
    if (stopped_) return;
    struct stat st;
    if (::lstat(path_.c_str(), &st) != 0) {
        // None: a dump of another tool or of an older probe, or none yet.
        if (errno != ENOENT) problems.push_back(stop(0, std::strerror(errno)));
        return;
    }
    std::string error;
    uint64_t size = 0;
    const int fd = format::openRegularFile(path_, UINT64_MAX, &size, &error);
    if (fd < 0) {
        if (S_ISLNK(st.st_mode) && ::stat(path_.c_str(), &st) != 0 && errno == ENOENT)
            error = "a symbolic link to a file that does not exist";
        problems.push_back(stop(0, error));
        return;
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};

    // Whether the run can be taken now. Runs are kept whole, also those placing rows not read
    // yet or never written (RowTimes takes the rows there are): the probe writes a batch's runs
    // before its rows, a kill or a full disk leaves runs of rows that never arrived, and a dump
    // read while it is copied gets its rows later. What bounds them is the rows: each run kept
    // places at least one row unless the file is not this dump's, so past that many (and some
    // room for a batch ahead of its rows) a run waits for more rows, or once none will come, the
    // file is said not to fit.
    const uint64_t maxRuns = rows.lines + kRunsAheadOfRows;
    const auto take = [&](const format::RowOrderRun& run, uint64_t line) {
        if (run.rows == 0) return true;
        if (run.round != lastRound_ && runsKept_ >= maxRuns) {
            if (!rows.final) return false;
            problems.push_back(stop(line, "more runs than the process has rows (" +
                                              std::to_string(rows.lines) +
                                              "): the file of another run?"));
            return true;
        }
        place(run.round, run.rows, runs);
        return true;
    };

    std::string text;
    bool waiting = false;
    while (offset_ < size && !waiting) {
        text.resize(std::min(kChunk, size - offset_));
        const ssize_t n = ::pread(fd, text.data(), text.size(), static_cast<off_t>(offset_));
        if (n <= 0) return;  // tried again at the next poll
        text.resize(static_cast<size_t>(n));
        // Once no row will come, the file's end is its end: a CR ending it ends a line.
        if (lineEnd_ == 0)
            lineEnd_ =
                format::firstLineEnd(text, rows.final && offset_ + text.size() == size).value_or(0);
        const char lineEnd = lineEnd_ ? lineEnd_ : '\n';
        std::string_view rest(text);
        for (size_t end; (end = rest.find(lineEnd)) != std::string_view::npos;
             rest.remove_prefix(end + 1)) {
            std::string why;
            const auto run = format::readRowOrderLine(lineNumber_ + 1, rest.substr(0, end), &why);
            if (!why.empty()) {
                problems.push_back(stop(lineNumber_ + 1, why));
                return;
            }
            if (run && !take(*run, lineNumber_ + 1)) {
                waiting = true;
                break;
            }
            if (stopped_) return;
            ++lineNumber_;
            offset_ += end + 1;
        }
        // What is left is a line being written, or cut short by a crash: its rows come after
        // the rest, round by round, as any the file does not place.
        if (!waiting && rest.size() == text.size()) {
            if (text.size() == kChunk) {
                problems.push_back(stop(lineNumber_ + 1, "a line longer than any run"));
                return;
            }
            break;
        }
    }
    if (rows.final) conclude(rows, size, problems);
}

void RowOrderReader::conclude(const Rows& rows, uint64_t size, std::vector<std::string>& problems) {
    // Rows placed that the dump does not have, and the rows that are placed.
    uint64_t missing = 0, placedThere = 0;
    std::string missingRounds;
    for (const auto& [round, placed] : placed_) {
        const auto have = rows.ofRound->find(round);
        const uint64_t inFile = have != rows.ofRound->end() ? have->second : 0;
        placedThere += std::min(placed, inFile);
        if (placed <= inFile) continue;
        missing += placed - inFile;
        if (missingRounds.size() < 80)
            missingRounds += (missingRounds.empty() ? "" : ", ") + std::to_string(round) + " (" +
                             std::to_string(inFile) + " of " + std::to_string(placed) + ")";
        else if (missingRounds.back() != '.')
            missingRounds += ", ...";
    }
    if (missing > 0 && rows.allThere && !saidMissing_) {
        saidMissing_ = true;
        problems.push_back(path_ + ": its runs place " + rowCount(missing) +
                           " the dump does not have (round " + missingRounds +
                           "): a round removed, a copy not finished, or the file of another "
                           "run; the order of the rest may be off");
    }
    if (placedThere >= rows.rows || saidUnplaced_) return;
    saidUnplaced_ = true;
    std::string why;
    if (size == 0)
        why = "empty (not even its header): ";
    else if (offset_ < size)
        why = "line " + std::to_string(lineNumber_ + 1) + " is cut short (no line end): ";
    else if (lineNumber_ == 1)
        why = "the header alone: ";
    problems.push_back(path_ + ": " + why + "its runs place " + std::to_string(placedThere) +
                       " of the process's " + rowCount(rows.rows) +
                       "; the rest are taken round by round, after them");
}

}  // namespace probe::analysis
