// Follows one process's row order file (probe_row_order/<dev>_<pid>.csv, docs/formats.md
// section 3) as the dump grows, and keeps only what its runs say of rows there are.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "probe/format/row_order.h"

namespace probe::analysis {

class RowOrderReader {
public:
    explicit RowOrderReader(std::string path) : path_(std::move(path)) {}

    // What is known of the process's rows when the file is read.
    struct Rows {
        // By round: the lines of its statistic.csv read so far (rows and malformed lines: the
        // probe counted both when it wrote the runs).
        const std::map<int64_t, uint64_t>* ofRound = nullptr;
        // The process writes no more and all its rows are read: what the file has not placed
        // yet it never will.
        bool final = false;
        // ... and it ended after writing every row it ordered (not killed, no full disk), and
        // all were read: a run placing rows its round does not have is then a file of another
        // run.
        bool allThere = false;
    };

    // Appends the runs read since the last call to `runs` (zero-row runs dropped, runs of one
    // round in a row merged), and what is wrong with the file to `problems`, once. A run placing
    // rows not read yet waits for them: memory stays in proportion to the dump's rows, however
    // big the file. Once `rows.final`, what the file does not place is said.
    void poll(const Rows& rows, std::vector<format::RowOrderRun>& runs,
              std::vector<std::string>& problems);

    // No run will be read any more.
    bool done() const { return stopped_ || concluded_; }

private:
    // Takes `rows` rows of `round` (placed() more) into `runs`.
    void place(int64_t round, uint64_t rows, std::vector<format::RowOrderRun>& runs);
    std::string stop(uint64_t line, const std::string& why);

    std::string path_;
    uint64_t offset_ = 0;      // of the first line not read yet
    uint64_t lineNumber_ = 0;  // lines read
    char lineEnd_ = 0;         // '\n' (LF or CR LF) or '\r' (old Mac OS), told by the first line
    std::map<int64_t, uint64_t> placed_;  // by round: its first rows the runs read placed
    uint64_t placedRows_ = 0;
    bool stopped_ = false;    // a line that is no run, or a file that is none (said once)
    bool concluded_ = false;  // read to its end once the process was done (said what it missed)
};

}  // namespace probe::analysis
