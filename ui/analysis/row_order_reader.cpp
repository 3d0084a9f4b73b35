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
    placed_[round] += rows;
    placedRows_ += rows;
    if (!runs.empty() && runs.back().round == round)
        runs.back().rows += rows;
    else
        runs.push_back({round, rows});
}

void RowOrderReader::poll(const Rows& rows, std::vector<format::RowOrderRun>& runs,
                          std::vector<std::string>& problems) {
    if (done()) return;
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

    // Whether the run can be taken now; false when it places rows not read yet (it is read
    // again at the next poll). A run placing rows its round will never have stops the reading
    // when all the process's rows are there, and is taken as far as it goes when some are not
    // (the probe writes a batch's runs before its rows: a kill or a full disk leaves runs of
    // rows that never arrived; a file the reader could not read has none to place).
    const auto take = [&](const format::RowOrderRun& run, uint64_t line) {
        if (run.rows == 0) return true;
        const auto have = rows.ofRound->find(run.round);
        const uint64_t inFile = have != rows.ofRound->end() ? have->second : 0;
        const auto placed = placed_.find(run.round);
        const uint64_t before = placed != placed_.end() ? placed->second : 0;
        const uint64_t room = inFile - std::min(before, inFile);
        if (run.rows <= room) {
            place(run.round, run.rows, runs);
            return true;
        }
        if (!rows.final) return false;
        if (rows.allThere) {
            const std::string where =
                have == rows.ofRound->end()
                    ? "of round " + std::to_string(run.round) + ", which has no statistic.csv"
                    : "more of round " + std::to_string(run.round) + ", whose statistic.csv has " +
                          rowCount(inFile) + " (" + std::to_string(before) + " placed before)";
            problems.push_back(stop(line, "places " + rowCount(run.rows) + " " + where +
                                              ": rows missing, or the file of another run"));
        } else if (room > 0) {
            place(run.round, room, runs);
        }
        return true;
    };

    std::string text;
    bool waiting = false;
    while (offset_ < size && !waiting) {
        text.resize(std::min(kChunk, size - offset_));
        const ssize_t n = ::pread(fd, text.data(), text.size(), static_cast<off_t>(offset_));
        if (n <= 0) return;  // tried again at the next poll
        text.resize(static_cast<size_t>(n));
        if (lineEnd_ == 0) {
            // CR alone ends the first line (a CR the last byte read may yet be a CR LF's).
            const size_t end = text.find_first_of("\r\n");
            if (end != std::string::npos && (text[end] == '\n' || end + 1 < text.size()))
                lineEnd_ = text[end] == '\r' && text[end + 1] != '\n' ? '\r' : '\n';
        }
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
    if (!rows.final) return;
    concluded_ = true;
    uint64_t total = 0;
    for (const auto& [round, lines] : *rows.ofRound) total += lines;
    if (placedRows_ >= total) return;
    std::string why;
    if (size == 0)
        why = "empty (not even its header): ";
    else if (offset_ < size)
        why = "line " + std::to_string(lineNumber_ + 1) + " is cut short (no line end): ";
    else if (lineNumber_ == 1)
        why = "the header alone: ";
    problems.push_back(path_ + ": " + why + "its runs place " + std::to_string(placedRows_) +
                       " of the process's " + rowCount(total) +
                       "; the rest are taken round by round, after them");
}

}  // namespace probe::analysis
