// The code-level API's config (FORMATS.md section 3, msprobe style): what PrecisionDebugger
// reads. Parsed and validated here so the Python API, `probe config validate` and the app's
// editor all judge a file the same way.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "probe/format/config_issue.h"

namespace probe::format {

struct ApiTaskConfig {
    std::vector<std::string> scope;  // empty, or two entry names bounding a range
    std::vector<std::string> list;   // entry names or substrings to keep
    std::vector<std::string> dataMode{"all"};
    std::string summaryMode = "statistics";  // statistics | md5
    std::vector<std::string> tensorList;     // statistics task: entries whose tensors are saved too
};

// Task overflow_check (msprobe's "overflow_check" block): only the calls where an overflow is
// born are dumped, with their tensors.
struct ApiOverflowCheck {
    int64_t overflowNums = 1;        // births to dump, then nothing more is watched; -1: no limit
    bool stopAfterOverflow = false;  // Probe Studio's key: end the program after the last birth
};

struct ApiConfig {
    std::string task = "statistics";  // statistics | tensor | overflow_check
    std::string dumpPath = "./dump_path";
    std::vector<int64_t> rank, step;  // expanded and sorted; empty = all
    std::string level = "L1";         // L0 | L1 | mix
    int64_t seed = 1234;
    bool isDeterministic = false;
    bool extraInfo = true;  // stack.json and construct.json
    ApiTaskConfig statistics, tensor, overflowCheck;
    ApiOverflowCheck overflow;

    const ApiTaskConfig& active() const {
        return task == "tensor" ? tensor : (task == "overflow_check" ? overflowCheck : statistics);
    }
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
std::optional<std::vector<int64_t>> expandStepList(const nlohmann::json& value,
                                                   std::string* problem);

// How Probe Studio treats a key that msprobe's own config classes read.
enum class MsprobeKeyUse {
    Honoured,   // does what it does under msprobe
    NoEffect,   // accepted with a warning that says why it does nothing here
    OtherTask,  // a block (or a key in it) of a msprobe task Probe Studio does not run: ignored
};

struct MsprobeConfigKey {
    const char* block;  // "" for the top level; "statistics", "tensor", ... for a task's block
    const char* key;
    MsprobeKeyUse use;
    const char* note;  // NoEffect: why, said in the warning
};

// Every key msprobe reads from its config.json (CommonConfig; BaseConfig and the task configs
// of msprobe/pytorch/dump/pt_config.py; the keys of older versions that existing files still
// carry), and what Probe Studio does with it. The one table: the validator judges by it, and
// Python reads it through the adapter (probe::msprobe_tables) to test the API against it.
const std::vector<MsprobeConfigKey>& msprobeConfigKeys();

// Which kind of config a JSON object looks like: "op" (injected probe), "api" (code-level), or
// "" when it cannot tell.
std::string guessConfigKind(const nlohmann::json& root);

}  // namespace probe::format
