// The code-level API's config (FORMATS.md section 3, msprobe style): what PrecisionDebugger
// reads. Parsed and validated here so the Python API, `probe config validate` and the app's
// editor all judge a file the same way.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/format/config_issue.h"

namespace probe::format {

struct ApiTaskConfig {
    std::vector<std::string> scope;  // empty, or two entry names bounding a range
    std::vector<std::string> list;   // entry names or substrings to keep
    std::vector<std::string> dataMode{"all"};
    std::string summaryMode = "statistics";  // statistics task only: statistics | md5
};

struct ApiConfig {
    std::string task = "statistics";  // statistics | tensor
    std::string dumpPath = "./dump_path";
    std::vector<int64_t> rank, step;  // expanded and sorted; empty = all
    std::string level = "L1";         // L0 | L1 | mix
    int64_t seed = 1234;
    bool isDeterministic = false;
    bool extraInfo = true;  // stack.json and construct.json
    ApiTaskConfig statistics, tensor;

    const ApiTaskConfig& active() const { return task == "tensor" ? tensor : statistics; }
    nlohmann::ordered_json toJson() const;
};

struct ApiConfigResult {
    std::optional<ApiConfig> config;  // set only when there is no error (warnings allowed)
    std::vector<ConfigIssue> issues;
    bool ok() const { return config.has_value(); }
};

ApiConfigResult parseApiConfig(std::string_view text, const std::string& file);
ApiConfigResult loadApiConfigFile(const std::string& path);

// Validates one value the way the config file's key would be (for constructor arguments):
// returns "" or the problem with the accepted values.
std::string checkApiTask(const std::string& task);
std::string checkApiLevel(const std::string& level);
// Expands a step/rank list ("4-6" ranges allowed) or reports why it cannot.
std::optional<std::vector<int64_t>> expandStepList(const nlohmann::json& value, std::string* problem);

// Which kind of config a JSON object looks like: "op" (injected probe), "api" (code-level), or
// "" when it cannot tell.
std::string guessConfigKind(const nlohmann::json& root);

}  // namespace probe::format
