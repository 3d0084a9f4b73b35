// probe_row_order/<dev>_<pid>.csv: ours, beside the standard layout (docs/formats.md section 3).
// A layer-level op's round counts its own executions, so a module called twice per step, or in
// some steps only, spreads one step over several round folders. Each statistic.csv is in the
// order its rows were written, but which rows of one round came before which of another is in
// no standard file: this one says it, as runs "<round>,<rows>": the next <rows> rows of that
// round's statistic.csv were written then.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probe::format {

extern const char* const kRowOrderDirectory;  // "probe_row_order"
extern const char* const kRowOrderHeader;     // "Execution Count,Rows"

struct RowOrderRun {
    int64_t round = 0;
    uint64_t rows = 0;
};

// "<round>,<rows>\n"
void appendRowOrderLine(std::string& out, const RowOrderRun& run);

// Line `lineNumber` (from 1) of a file, without its line end (a CR before it, from a copy through
// Windows, is dropped): line 1 must be the header (nullopt, `why` left empty), every later line
// a run. Else nullopt, and `why` says what the line is not ("not the header ...").
std::optional<RowOrderRun> readRowOrderLine(uint64_t lineNumber, std::string_view line,
                                            std::string* why);

// The runs of a file's text (its header first). Reading stops at the first line that is not a
// run (a line cut short by a crash at the end, or damage): `error` then says which line and why,
// and the runs before it are returned.
std::vector<RowOrderRun> parseRowOrder(std::string_view text, std::string* error);

}  // namespace probe::format
