// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/config_issue.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::format {

std::string ConfigIssue::toString() const {
    // Paths, keys and values quoted in the problem come from outside: shown printable and short.
    std::string out = file.empty() ? std::string("<config>") : printableText(file, 4096);
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    out += warning ? ": warning: " : ": ";
    if (!key.empty()) out += "key \"" + printableText(key, 120) + "\": ";
    out += printableText(problem, 1000);
    if (!accepted.empty()) out += "; accepted: " + accepted;
    return out;
}

std::string describeIssues(const std::vector<ConfigIssue>& issues) {
    std::string out;
    for (const auto& issue : issues) {
        if (!out.empty()) out += '\n';
        out += issue.toString();
    }
    return out;
}

std::optional<std::string> readTextFile(const std::string& path, std::string* error,
                                        uint64_t maxBytes) {
    return readRegularFile(path, maxBytes, error);
}

bool parseJsonText(std::string_view text, const std::string& file, nlohmann::json& out,
                   std::vector<ConfigIssue>& issues) {
    auto parsed = parseJson(text, file, kConfigJsonLimits);
    if (!parsed.ok()) {
        ConfigIssue issue;
        issue.file = file;
        issue.line = parsed.error.line;
        issue.column = parsed.error.column;
        issue.problem = parsed.error.problem;
        issues.push_back(std::move(issue));
        return false;
    }
    // Legal JSON, but the person who wrote the file may have meant the first value: said.
    for (const std::string& key : parsed.duplicateKeys) {
        ConfigIssue issue;
        issue.file = file;
        issue.key = key;
        issue.problem = "is given more than once; only the last value counts";
        issue.warning = true;
        issues.push_back(std::move(issue));
    }
    out = std::move(*parsed.value);
    return true;
}

std::string jsonSnippet(const nlohmann::json& value) {
    std::string text = dumpJson(value);
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
}

std::string foundValue(const nlohmann::json& value) {
    return value.is_null() ? "null" : std::string(value.type_name()) + " " + jsonSnippet(value);
}

std::string notWholeNumber(const nlohmann::json& value) {
    // 1.0, 2e0, 1e10 are whole numbers written as reals: the rule is how they are written.
    if (value.is_number_float()) {
        const double v = value.get<double>();
        if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.2e18)
            return "must be written as an integer (" + std::to_string(static_cast<int64_t>(v)) +
                   ", not " + jsonSnippet(value) + ")";
    }
    return "must be a whole number, found " + foundValue(value);
}

std::optional<int64_t> signedInteger(const nlohmann::json& value) {
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return std::nullopt;
    return value.get<int64_t>();
}

}  // namespace probe::format
