// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/statistic_csv.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace probe::format {

const char* const kStatisticCsvHeader =
    "Device and PID,Execution Count,Op Name,Op Type,Op Id,Input/Output,Index,Dtype,Format,Shape,"
    "Max,Min,Mean,Norm,Tensor Path";

namespace {

constexpr int kColumns = 15;

void appendField(std::string& out, std::string_view field) {
    if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
        out += field;
        return;
    }
    out += '"';
    for (char c : field) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

bool splitCsvLine(std::string_view line, std::vector<std::string>& fields) {
    fields.clear();
    std::string current;
    bool quoted = false;
    size_t i = 0;
    while (i < line.size()) {
        char c = line[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < line.size() && line[i + 1] == '"') {
                    current += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                current += c;
            }
        } else if (c == '"' && current.empty()) {
            quoted = true;
        } else if (c == ',') {
            fields.push_back(std::move(current));
            current.clear();
        } else {
            current += c;
        }
        ++i;
    }
    if (quoted) return false;
    fields.push_back(std::move(current));
    return true;
}

}  // namespace

std::string csvField(std::string_view field) {
    std::string out;
    appendField(out, field);
    return out;
}

std::string formatStatValue(std::optional<double> value) {
    if (!value) return "N/A";
    const double v = *value;
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    // Same digits as printf("%f") (both round the exact binary value), several times faster.
    char buffer[400];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed, 6);
    if (ec != std::errc()) return "nan";
    return std::string(buffer, end);
}

std::optional<double> parseStatValue(std::string_view text, bool* ok) {
    if (ok) *ok = true;
    if (text == "N/A") return std::nullopt;
    if (text == "nan" || text == "-nan") return std::nan("");
    if (text == "inf") return HUGE_VAL;
    if (text == "-inf") return -HUGE_VAL;
    std::string copy(text);
    char* end = nullptr;
    double v = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size()) {
        if (ok) *ok = false;
        return std::nullopt;
    }
    return v;
}

std::string formatStatRow(const StatRow& row) {
    std::string out;
    out.reserve(256 + row.tensorPath.size() + row.opName.size());
    appendField(out, row.devicePid);
    out += ',';
    out += std::to_string(row.round);
    out += ',';
    appendField(out, row.opName);
    out += ',';
    appendField(out, row.opType);
    out += ',';
    appendField(out, row.opId);
    out += row.isOutput ? ",output," : ",input,";
    appendField(out, row.index);
    out += ',';
    appendField(out, row.dtype);
    out += ',';
    appendField(out, row.format);
    out += ',';
    appendField(out, row.shape);
    for (const auto& value : {row.max, row.min, row.mean, row.norm}) {
        out += ',';
        out += formatStatValue(value);
    }
    out += ',';
    appendField(out, row.tensorPath.empty() ? std::string_view("N/A") : std::string_view(row.tensorPath));
    out += '\n';
    return out;
}

std::optional<StatRow> parseStatRow(std::string_view line, std::string* error) {
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    std::vector<std::string> f;
    if (!splitCsvLine(line, f)) {
        if (error) *error = "unterminated quote";
        return std::nullopt;
    }
    if (static_cast<int>(f.size()) != kColumns) {
        if (error) *error = "expected 15 columns, found " + std::to_string(f.size());
        return std::nullopt;
    }
    StatRow row;
    row.devicePid = f[0];
    char* end = nullptr;
    row.round = std::strtoll(f[1].c_str(), &end, 10);
    if (f[1].empty() || *end != '\0') {
        if (error) *error = "Execution Count is not a number: " + f[1];
        return std::nullopt;
    }
    row.opName = f[2];
    row.opType = f[3];
    row.opId = f[4];
    if (f[5] != "input" && f[5] != "output") {
        if (error) *error = "Input/Output must be input or output: " + f[5];
        return std::nullopt;
    }
    row.isOutput = f[5] == "output";
    row.index = f[6];
    row.dtype = f[7];
    row.format = f[8];
    row.shape = f[9];
    std::optional<double>* values[] = {&row.max, &row.min, &row.mean, &row.norm};
    for (int i = 0; i < 4; ++i) {
        bool ok = true;
        *values[i] = parseStatValue(f[10 + i], &ok);
        if (!ok) {
            if (error) *error = "not a number: " + f[10 + i];
            return std::nullopt;
        }
    }
    row.tensorPath = f[14] == "N/A" ? std::string() : f[14];
    return row;
}

}  // namespace probe::format
