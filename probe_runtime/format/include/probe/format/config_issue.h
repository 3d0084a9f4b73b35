// Problems found in a config file, worded for people: which file, which key, what is wrong,
// and what would be accepted.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace probe::format {

struct ConfigIssue {
    std::string file;      // path as given, or "<text>"
    std::string key;       // dotted key ("statistics.data_mode"), "" for the file as a whole
    std::string problem;   // what is wrong
    std::string accepted;  // what would be accepted, "" when not applicable
    int line = 0;          // 1-based; 0 when unknown
    int column = 0;
    bool warning = false;  // accepted, but worth saying (a key that has no effect here)

    // `config.json: key "task": "tensors" is not a valid value; accepted: "tensor", "statistics",
    // "all"`
    std::string toString() const;
};

std::string describeIssues(const std::vector<ConfigIssue>& issues);

// Reads a whole small regular file (see readRegularFile: no FIFO, device or directory, never
// blocks, at most `maxBytes`). nullopt with `error` set when it cannot be read.
std::optional<std::string> readTextFile(const std::string& path, std::string* error,
                                        uint64_t maxBytes = 16u << 20);

// Parses a config's JSON text through the guarded entry point (json_input.h, config limits).
// On an error returns false and appends an issue with line and column; a key given twice is a
// warning (the last value counts, as in every JSON reader).
bool parseJsonText(std::string_view text, const std::string& file, nlohmann::json& out,
                   std::vector<ConfigIssue>& issues);

// A short rendering of a JSON value for messages ("\"abc\"", "3", "[1, 2]").
std::string jsonSnippet(const nlohmann::json& value);
// What a key holds, for "found ...": its type and a snippet ("number 5", "string \"true\""), or
// "null" alone.
std::string foundValue(const nlohmann::json& value);
// Why `value` is not a whole number where one is wanted: "must be written as an integer (1, not
// 1.0)" for a number with a fraction of zero, else "must be a whole number, found number 1.5".
std::string notWholeNumber(const nlohmann::json& value);
// A JSON integer as a signed 64-bit number; nullopt for one beyond it (nlohmann keeps those as
// unsigned, and get<int64_t>() wrapped 2^64 - 1 to -1: an overflow_nums of 18446744073709551615
// was taken as -1, "no limit"). Only for values that are integers (is_number_integer()).
std::optional<int64_t> signedInteger(const nlohmann::json& value);

}  // namespace probe::format
