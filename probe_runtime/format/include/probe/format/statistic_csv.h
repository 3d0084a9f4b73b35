// statistic.csv: one row per dumped tensor (FORMATS.md section 1).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probe::format {

// The exact header line, without the line end.
extern const char* const kStatisticCsvHeader;

struct StatRow {
    std::string devicePid;  // "0_39943", or "39943" when no device is known
    int64_t round = 0;      // Execution Count
    std::string opName;     // "/"-joined path
    std::string opType;
    std::string opId;       // "2_0"
    bool isOutput = false;  // Input/Output column
    std::string index;      // "0" or "2_value"
    std::string dtype;      // "float", "bf16", ...
    std::string format;     // "nd", ...
    std::string shape;      // "36x128", "" for a scalar
    // nullopt is written as N/A (task "tensor", an empty tensor, complex data).
    std::optional<double> max, min, mean, norm;
    std::string tensorPath;  // absolute .bin path; "" is written as N/A
};

// A row's fields as views, for readers of millions of rows: into the line, or into the scratch
// strings for a quoted field. Valid while both are.
struct StatRowView {
    std::string_view devicePid;
    int64_t round = 0;
    std::string_view opName, opType, opId;
    bool isOutput = false;
    std::string_view index, dtype, format, shape;
    std::optional<double> max, min, mean, norm;
    std::string_view tensorPath;  // "" for N/A
};

// Views of `row`'s fields (valid while it is).
StatRowView viewOf(const StatRow& row);

// The same line as formatStatRow, appended to `out` from views (the probe writes rows from the
// names it holds, without copying them into a StatRow first). tensorPath "" is written as N/A.
void appendStatRow(std::string& out, const StatRowView& row);

// Rows packed to be formatted later, on another thread: the probe's model thread copies a row's
// texts, values and codes as they are (a few copies, no number printing), its writer thread
// formats them into exactly the lines appendStatRow makes. The packing is this process's own
// memory layout, never a file format.
// A row as the probe has it when a tensor is reported: its index, dtype, format and shape as
// numbers, spelled by the writer (appendPackedStatRows). Formats to the line appendStatRow makes of
// the same row spelled out: Index
// "<index>" or "<index>_<argName>", Dtype dtypeName or "undefined(<code>)", Format
// appendFormatName, Shape appendShape.
struct StatRowCodes {
    std::string_view devicePid;
    int64_t round = 0;
    std::string_view opName, opType, opId;
    bool isOutput = false;
    int32_t index = 0;
    std::string_view argName;  // already a safe name; "" for none
    int32_t dtype = 0, format = 0;
    const int64_t* dims = nullptr;
    uint32_t ndims = 0;
    std::optional<double> max, min, mean, norm;
    std::string_view tensorPath;  // "" for N/A
};
// With `sameOp`, the row's devicePid, round, opName, opType and opId are those of the row packed
// before it in `packed` (another tensor of the same op): they are not copied again.
void packStatRow(std::string& packed, const StatRowCodes& row, bool sameOp);
// Appends the lines of every row in `packed` (made by packStatRow) to `out`; their count.
size_t appendPackedStatRows(std::string& out, std::string_view packed);

// A CSV field, quoted (RFC 4180) when it holds ',' '"' or a line end.
std::string csvField(std::string_view field);
// "%f" with six decimals; inf, -inf and nan spelled exactly so (never "-nan"); N/A for nullopt.
std::string formatStatValue(std::optional<double> value);
// One line including its '\n'. Fields holding ',' '"' or a line end are quoted (RFC 4180).
std::string formatStatRow(const StatRow& row);
// Parses one line (without or with its line end). nullopt with `error` on a malformed line.
std::optional<StatRow> parseStatRow(std::string_view line, std::string* error);
// The same without copying a field: false with `error` on a malformed line. `scratch` holds the
// unquoted text of quoted fields (rare); keep it between calls to spare allocations.
bool parseStatRow(std::string_view line, StatRowView& row, std::vector<std::string>& scratch,
                  std::string* error);
// The same for a line holding no quote (nearly every row: a field is quoted only when it holds a
// comma or a quote), without a scratch; nullopt, with nothing parsed, when the line holds a quote
// (unless more than 15 columns come before it: then refused as parseStatRow refuses it).
std::optional<bool> parseUnquotedStatRow(std::string_view line, StatRowView& row,
                                         std::string* error);
// Parses "N/A", "inf", "-inf", "nan" and decimal numbers.
std::optional<double> parseStatValue(std::string_view text, bool* ok);

}  // namespace probe::format
