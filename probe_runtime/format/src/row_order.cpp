// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/row_order.h"

#include <charconv>

namespace probe::format {

const char* const kRowOrderDirectory = "probe_row_order";
const char* const kRowOrderHeader = "Execution Count,Rows";

void appendRowOrderLine(std::string& out, const RowOrderRun& run) {
    char line[48];
    char* end = std::to_chars(line, line + 20, run.round).ptr;
    *end++ = ',';
    end = std::to_chars(end, line + sizeof line - 1, run.rows).ptr;
    *end++ = '\n';
    out.append(line, end);
}

namespace {

std::optional<RowOrderRun> parseRun(std::string_view line) {
    RowOrderRun run;
    const char* const begin = line.data();
    const char* const end = begin + line.size();
    const auto round = std::from_chars(begin, end, run.round);
    if (round.ec != std::errc() || round.ptr == end || *round.ptr != ',' || run.round < 0 ||
        run.round > INT32_MAX)
        return std::nullopt;
    const auto rows = std::from_chars(round.ptr + 1, end, run.rows);
    if (rows.ec != std::errc() || rows.ptr != end) return std::nullopt;
    return run;
}

}  // namespace

std::optional<RowOrderRun> readRowOrderLine(uint64_t lineNumber, std::string_view line,
                                            std::string* why) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (lineNumber == 1) {
        if (line != kRowOrderHeader)
            *why = "not the header \"" + std::string(kRowOrderHeader) + "\"";
        return std::nullopt;
    }
    auto run = parseRun(line);
    if (!run) *why = "not \"<round>,<rows>\" with a round from 0 to 2147483647";
    return run;
}

std::vector<RowOrderRun> parseRowOrder(std::string_view text, std::string* error) {
    std::vector<RowOrderRun> runs;
    size_t lineNumber = 0;
    while (!text.empty()) {
        ++lineNumber;
        const size_t newline = text.find('\n');
        if (newline == std::string_view::npos) {
            *error = "line " + std::to_string(lineNumber) + " does not end (cut short)";
            break;
        }
        const std::string_view line = text.substr(0, newline);
        text.remove_prefix(newline + 1);
        std::string why;
        const auto run = readRowOrderLine(lineNumber, line, &why);
        if (!why.empty()) {
            *error = "line " + std::to_string(lineNumber) + " is " + why;
            break;
        }
        if (run) runs.push_back(*run);
    }
    return runs;
}

}  // namespace probe::format
