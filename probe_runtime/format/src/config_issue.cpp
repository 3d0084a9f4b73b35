// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/config_issue.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace probe::format {

std::string ConfigIssue::toString() const {
    std::string out = file.empty() ? std::string("<config>") : file;
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    out += warning ? ": warning: " : ": ";
    if (!key.empty()) out += "key \"" + key + "\": ";
    out += problem;
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

std::optional<std::string> readTextFile(const std::string& path, std::string* error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (error) *error = std::strerror(errno);
        return std::nullopt;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) {
        if (error) *error = "read error";
        return std::nullopt;
    }
    return buffer.str();
}

bool parseJsonText(std::string_view text, const std::string& file, nlohmann::json& out,
                   std::vector<ConfigIssue>& issues) {
    // JSON allows a key twice in an object and the parser keeps the last value: legal, but the
    // person who wrote the file may have meant the first, so it is said.
    struct Object {
        std::string prefix;  // "statistics." inside the "statistics" object
        std::set<std::string> keys;
    };
    std::vector<Object> objects;
    std::string lastKey;
    std::vector<std::string> repeated;
    auto noteKeys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (event == Event::object_start) {
            objects.push_back({objects.empty() ? std::string() : objects.back().prefix + lastKey + ".", {}});
        } else if (event == Event::object_end) {
            if (!objects.empty()) objects.pop_back();
        } else if (event == Event::key && !objects.empty()) {
            lastKey = parsed.get<std::string>();
            if (!objects.back().keys.insert(lastKey).second) repeated.push_back(objects.back().prefix + lastKey);
        }
        return true;
    };
    try {
        out = nlohmann::json::parse(text.begin(), text.end(), noteKeys);
        for (const std::string& key : repeated) {
            ConfigIssue issue;
            issue.file = file;
            issue.key = key;
            issue.problem = "is given more than once; only the last value counts";
            issue.warning = true;
            issues.push_back(std::move(issue));
        }
        return true;
    } catch (const nlohmann::json::parse_error& e) {
        ConfigIssue issue;
        issue.file = file;
        // Translate the byte offset into a line and column people can find.
        size_t byte = e.byte > 0 ? e.byte - 1 : 0;
        if (byte > text.size()) byte = text.size();
        int line = 1, column = 1;
        for (size_t i = 0; i < byte; ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        issue.line = line;
        issue.column = column;
        std::string what = e.what();
        // nlohmann's text starts with "[json.exception.parse_error.101] parse error at line..":
        // keep only the part after the last ": " which says what was unexpected.
        auto pos = what.rfind(": ");
        issue.problem = "not valid JSON (" +
                        (pos == std::string::npos ? what : what.substr(pos + 2)) + ")";
        issues.push_back(std::move(issue));
        return false;
    }
}

std::string jsonSnippet(const nlohmann::json& value) {
    std::string text = value.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
}

}  // namespace probe::format
