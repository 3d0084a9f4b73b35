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
        uint64_t lines = 0;  // their sum
        uint64_t rows = 0;   // of those lines, the rows read
        // The process writes no more (it ended, or the dump has no status: not being written)
        // and all its rows are read: what the file does not place is said, once.
        bool final = false;
        // ... and it ended after writing every row it ordered (not killed, no full disk), and
        // all were read: rows placed that the dump does not have are said, once.
        bool allThere = false;
    };

    // Appends the runs read since the last call to `runs` (zero-row runs dropped, runs of one
    // round in a row merged), and what is wrong with the file to `problems`, once. The runs kept
    // are bounded by the rows: memory stays in proportion to the dump, however big the file.
    // A process that writes again (a probe started again, a pid used again) is read on.
    void poll(const Rows& rows, std::vector<format::RowOrderRun>& runs,
              std::vector<std::string>& problems);

    // No run will be read any more (a line that is no run, a file that is none).
    bool done() const { return stopped_; }

private:
    // Appends `rows` rows of `round` to `runs`.
    void place(int64_t round, uint64_t rows, std::vector<format::RowOrderRun>& runs);
    std::string stop(uint64_t line, const std::string& why);
    // Once the process is done: what the runs place that the dump does not have, and what of
    // the dump they do not place.
    void conclude(const Rows& rows, uint64_t size, std::vector<std::string>& problems);

    std::string path_;
    uint64_t offset_ = 0;      // of the first line not read yet
    uint64_t lineNumber_ = 0;  // lines read
    char lineEnd_ = 0;         // '\n' (LF or CR LF) or '\r' (old Mac OS), told by the first line
    std::map<int64_t, uint64_t> placed_;  // by round: how many of its rows the runs placed
    int64_t lastRound_ = -1;              // of the last run kept
    uint64_t runsKept_ = 0;
    bool stopped_ = false;       // a line that is no run, or a file that is none (said once)
    bool saidMissing_ = false;   // rows placed that the dump does not have
    bool saidUnplaced_ = false;  // rows of the dump the file does not place
};

}  // namespace probe::analysis
