// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/api_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>
#include <set>
#include <string_view>

namespace probe::format {
namespace {

const char* kAcceptedTask = "\"statistics\", \"tensor\", \"overflow_check\"";
const char* kAcceptedOverflowNums = "a whole number > 0 (births to dump), or -1 for no limit";
const char* kAcceptedLevel = "\"L0\" (modules), \"L1\" (APIs), \"mix\" (both)";
const char* kAcceptedSteps =
    "a list of whole numbers 0..1000000 or \"a-b\" ranges, e.g. [0, 2, \"4-6\"]; [] for all";
const char* kAcceptedScope =
    "[] or two full entry names bounding a range, e.g. [\"Functional.linear.0.forward\", "
    "\"Functional.relu.0.forward\"] or [\"Module.fc1.Linear.forward.0\", "
    "\"Module.fc2.Linear.forward.0\"]";
const char* kAcceptedList =
    "a list of entry names or name fragments, e.g. [\"relu\", \"Functional.linear.0.forward\"]";
const char* kAcceptedDataMode =
    "a list of \"all\" alone, or of \"forward\", \"backward\", \"input\", \"output\"";
const char* kAcceptedSummary = "\"statistics\", \"md5\"";
const char* kAcceptedBool = "true or false (JSON booleans, without quotes)";

using Use = MsprobeKeyUse;

// The keys msprobe's BaseConfig reads in every task block, and what they do in the blocks this
// tool runs (statistics, tensor).
struct BaseKey {
    const char* key;
    Use use;
    const char* note;
};
constexpr BaseKey kBaseKeys[] = {
    {"scope", Use::Honoured, ""},
    {"list", Use::Honoured, ""},
    {"data_mode", Use::Honoured, ""},
    {"summary_mode", Use::Honoured, ""},
    {"slice", Use::NoEffect, "tensors are summarised and saved whole, not sliced"},
    {"request_id", Use::NoEffect, "serving requests (scheduled_tokens) are not tracked"},
    {"diff_nums", Use::NoEffect, "it counts differences for msprobe's diff_check task"},
};
constexpr const char* kOlderMsprobe = "it is read only by older msprobe versions";

std::vector<MsprobeConfigKey> buildMsprobeKeys() {
    std::vector<MsprobeConfigKey> keys = {
        // CommonConfig
        {"", "task", Use::Honoured, ""},
        {"", "dump_path", Use::Honoured, ""},
        {"", "rank", Use::Honoured, ""},
        {"", "step", Use::Honoured, ""},
        {"", "level", Use::Honoured, ""},
        {"", "dump_enable", Use::NoEffect,
         "the config is read once, at PrecisionDebugger(...): dumping follows start() and stop()"},
        {"", "extra_info", Use::Honoured, ""},
        {"", "async_dump", Use::NoEffect,
         "the dump files are always written by a writer thread (PrecisionDebugger.flush() waits "
         "for them)"},
        {"", "precision", Use::NoEffect, "statistics are always accumulated in double precision"},
        {"", "risk_level", Use::NoEffect,
         "it grades APIs for msprobe's accuracy checks, which are not run here"},
        {"", "custom_op_namespaces", Use::NoEffect,
         "Ascend custom operator namespaces are not wrapped"},
        // msprobe 1.x
        {"", "seed", Use::Honoured, ""},
        {"", "is_deterministic", Use::Honoured, ""},
        {"", "enable_dataloader", Use::NoEffect, kOlderMsprobe},
        {"", "acl_config", Use::NoEffect, kOlderMsprobe},
        {"", "load", Use::NoEffect, kOlderMsprobe},
        {"", "framework", Use::NoEffect, kOlderMsprobe},
        // The task blocks (msprobe reads the one named by "task").
        {"", "statistics", Use::Honoured, ""},
        {"", "tensor", Use::Honoured, ""},
        {"", "overflow_check", Use::Honoured, ""},
    };
    for (const char* block : {"acc_check", "diff_check", "structure", "nan_check", "free_benchmark",
                              "run_ut", "grad_probe", "exception_dump"})
        keys.push_back({"", block, Use::OtherTask, ""});
    for (const char* block : {"statistics", "tensor"})
        for (const BaseKey& k : kBaseKeys) keys.push_back({block, k.key, k.use, k.note});
    for (const BaseKey& k : kBaseKeys) {
        if (std::string_view(k.key) == "data_mode")
            keys.push_back({"overflow_check", k.key, Use::NoEffect,
                            "an overflow_check entry always holds its inputs and outputs (msprobe "
                            "sets data_mode [\"all\"] for this task)"});
        else
            keys.push_back({"overflow_check", k.key, k.use, k.note});
    }
    // msprobe's overflow_check block; stop_after_overflow is Probe Studio's own key.
    keys.push_back({"overflow_check", "overflow_nums", Use::Honoured, ""});
    keys.push_back({"overflow_check", "stop_after_overflow", Use::Honoured, ""});
    keys.push_back({"overflow_check", "check_mode", Use::NoEffect,
                    "it selects the overflow detection of Ascend devices (aicore, atomic); here "
                    "every tensor's values are checked"});
    keys.push_back({"statistics", "tensor_list", Use::Honoured, ""});
    keys.push_back({"tensor", "bench_path", Use::NoEffect,
                    "comparing with a bench dump while dumping is msprobe's diff_check; compare "
                    "two dumps with "
                    "`probe compare` instead"});
    for (const char* block : {"statistics", "tensor"})
        for (const char* key :
             {"file_format", "backward_input", "online_run_ut", "nfs_path", "host", "port"})
            keys.push_back({block, key, Use::NoEffect, kOlderMsprobe});
    // The blocks of the tasks this tool does not run, as msprobe reads them.
    for (const char* block : {"acc_check", "diff_check", "structure", "nan_check"})
        for (const BaseKey& k : kBaseKeys) keys.push_back({block, k.key, Use::OtherTask, ""});
    for (const char* key : {"white_list", "black_list", "error_data_path"})
        keys.push_back({"acc_check", key, Use::OtherTask, ""});
    keys.push_back({"nan_check", "tensor_list", Use::OtherTask, ""});
    return keys;
}

const MsprobeConfigKey* findMsprobeKey(std::string_view block, std::string_view key) {
    for (const auto& k : msprobeConfigKeys())
        if (block == k.block && key == k.key) return &k;
    return nullptr;
}

size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The keys of `block` this tool honours, for messages: "task, dump_path, ...".
std::string honouredKeys(std::string_view block) {
    std::string out;
    for (const auto& k : msprobeConfigKeys())
        if (block == k.block && k.use == Use::Honoured)
            out += (out.empty() ? "" : ", ") + std::string(k.key);
    return out + " (and msprobe's other keys, which have no effect here)";
}

// A key msprobe does not read in `block`: said with the closest known key of the block, or
// with the block that does read it.
std::string unknownKeyProblem(std::string_view block, const std::string& key) {
    for (const auto& k : msprobeConfigKeys()) {
        if (key == k.key && block != k.block && k.use != Use::OtherTask) {
            const std::string where =
                *k.block ? "the \"" + std::string(k.block) + "\" block" : "the top level";
            return "unknown key here, ignored: msprobe reads \"" + key + "\" at " + where;
        }
    }
    const char* closest = nullptr;
    size_t best = 0;
    for (const auto& k : msprobeConfigKeys()) {
        if (block != k.block || k.use == Use::OtherTask) continue;
        const size_t d = editDistance(key, k.key);
        if (!closest || d < best) {
            closest = k.key;
            best = d;
        }
    }
    return "unknown key, ignored; the closest known key is \"" +
           std::string(closest ? closest : "") + "\"";
}

}  // namespace

const std::vector<MsprobeConfigKey>& msprobeConfigKeys() {
    static const std::vector<MsprobeConfigKey> keys = buildMsprobeKeys();
    return keys;
}

namespace {

// Matched by hand, not by std::regex: its matcher recurses once per character, so a long name
// in a config overflowed the stack.
bool allDigits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "<Prefix>.<anything>.<call>.<forward|backward>"
bool isL1EntryName(std::string_view name) {
    std::string_view head = name;
    if (endsWith(head, ".forward"))
        head.remove_suffix(8);
    else if (endsWith(head, ".backward"))
        head.remove_suffix(9);
    else
        return false;
    const size_t dot = head.rfind('.');
    if (dot == std::string_view::npos || !allDigits(head.substr(dot + 1))) return false;
    head = head.substr(0, dot + 1);  // "<Prefix>.<anything>."
    for (std::string_view prefix :
         {"Distributed.", "Functional.", "Torch.", "Tensor.", "Aten.", "VF.", "NPU."})
        if (head.size() > prefix.size() && head.substr(0, prefix.size()) == prefix) return true;
    return false;
}

// "Module.<anything>.<forward|backward>.<call>"
bool isModuleEntryName(std::string_view name) {
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || !allDigits(name.substr(dot + 1))) return false;
    const std::string_view head = name.substr(0, dot);
    std::string_view rest;
    if (endsWith(head, ".forward"))
        rest = head.substr(0, head.size() - 8);
    else if (endsWith(head, ".backward"))
        rest = head.substr(0, head.size() - 9);
    else
        return false;
    return rest.size() >= 7 && rest.substr(0, 7) == "Module.";
}

// "a-b" with optional spaces around the numbers; false when it is not that or a number does not
// fit in 64 bits.
bool parseStepRange(std::string_view text, int64_t& lo, int64_t& hi) {
    auto trim = [](std::string_view s) {
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
            s.remove_prefix(1);
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
        return s;
    };
    auto number = [](std::string_view s, int64_t& value) {
        if (!allDigits(s)) return false;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
        if (ec == std::errc::result_out_of_range) value = INT64_MAX;  // out of range, said as such
        return ec != std::errc::invalid_argument && end == s.data() + s.size();
    };
    const size_t dash = text.find('-');
    return dash != std::string_view::npos && number(trim(text.substr(0, dash)), lo) &&
           number(trim(text.substr(dash + 1)), hi);
}

}  // namespace

std::string checkApiTask(const std::string& task) {
    if (task == "statistics" || task == "tensor" || task == "overflow_check") return "";
    return "\"" + task + "\" is not a supported task; accepted: " + kAcceptedTask;
}

std::string checkApiLevel(const std::string& level) {
    if (level == "L0" || level == "L1" || level == "mix") return "";
    return "\"" + level + "\" is not a supported level; accepted: " + kAcceptedLevel;
}

std::optional<std::vector<int64_t>> expandStepList(const nlohmann::json& value,
                                                   std::string* problem) {
    constexpr int64_t kMax = 1000000;
    if (!value.is_array()) {
        *problem = "must be a list, found " + foundValue(value);
        return std::nullopt;
    }
    // Every bad element is named, not only the first.
    std::vector<std::string> problems;
    std::set<int64_t> steps;
    for (const auto& item : value) {
        if (item.is_number_integer()) {
            const auto v = signedInteger(item);
            if (!v || *v < 0 || *v > kMax)
                problems.push_back("element " + jsonSnippet(item) + " is outside 0..1000000");
            else
                steps.insert(*v);
        } else if (item.is_string()) {
            const std::string text = item.get<std::string>();
            int64_t lo = 0, hi = 0;
            if (!parseStepRange(text, lo, hi)) {
                problems.push_back("element \"" + text + "\" is not a range like \"3-5\"");
                continue;
            }
            if (lo > hi || hi > kMax) {
                problems.push_back("range \"" + text + "\" must have 0 <= start <= end <= 1000000");
                continue;
            }
            for (int64_t v = lo; v <= hi; ++v) steps.insert(v);
        } else {
            problems.push_back("element " + jsonSnippet(item) +
                               " must be a whole number or a \"a-b\" string");
        }
    }
    if (!problems.empty()) {
        std::string joined;
        for (const std::string& p : problems) joined += (joined.empty() ? "" : "; ") + p;
        *problem = joined;
        return std::nullopt;
    }
    return std::vector<int64_t>(steps.begin(), steps.end());
}

std::string guessConfigKind(const nlohmann::json& root) {
    if (!root.is_object()) return "";
    for (const char* key : {"exec_range", "ids", "op_name", "save_child", "filter_level", "device"})
        if (root.contains(key)) return "op";
    for (const char* key :
         {"level", "dump_path", "step", "rank", "statistics", "seed", "is_deterministic"})
        if (root.contains(key)) return "api";
    if (root.contains("task") && root["task"].is_string()) {
        const auto task = root["task"].get<std::string>();
        if (task == "all") return "op";
    }
    if (root.contains("dump_enable")) return "op";
    return "";
}

nlohmann::ordered_json ApiConfig::toJson() const {
    nlohmann::ordered_json j;
    j["task"] = task;
    j["dump_path"] = dumpPath;
    j["rank"] = rank;
    j["step"] = step;
    j["level"] = level;
    j["seed"] = seed;
    j["is_deterministic"] = isDeterministic;
    j["extra_info"] = extraInfo;
    j["statistics"] = {{"scope", statistics.scope},
                       {"list", statistics.list},
                       {"data_mode", statistics.dataMode},
                       {"summary_mode", statistics.summaryMode},
                       {"tensor_list", statistics.tensorList}};
    j["tensor"] = {{"scope", tensor.scope},
                   {"list", tensor.list},
                   {"data_mode", tensor.dataMode},
                   {"summary_mode", tensor.summaryMode}};
    // No data_mode: an overflow_check entry always holds its inputs and outputs.
    j["overflow_check"] = {{"scope", overflowCheck.scope},
                           {"list", overflowCheck.list},
                           {"summary_mode", overflowCheck.summaryMode},
                           {"overflow_nums", overflow.overflowNums},
                           {"stop_after_overflow", overflow.stopAfterOverflow}};
    return j;
}

ApiConfigResult parseApiConfig(std::string_view text, const std::string& file) {
    ApiConfigResult result;
    auto& issues = result.issues;
    auto issue = [&](const std::string& key, std::string problem, const char* accepted,
                     bool warning = false) {
        ConfigIssue i{file, key, std::move(problem), accepted ? accepted : "", 0, 0, warning};
        issues.push_back(std::move(i));
    };
    nlohmann::json root;
    if (!parseJsonText(text, file, root, issues)) return result;
    if (!root.is_object()) {
        issue("", "the config must be a JSON object {...}, found " + std::string(root.type_name()),
              "an object with keys such as task, dump_path, level, step, rank, statistics, tensor");
        return result;
    }
    // Every key msprobe reads is accepted: honoured, or said to have no effect here; any other key
    // is ignored with a warning naming the closest known one, as msprobe ignores it.
    auto checkKeys = [&](const char* block, const nlohmann::json& object) {
        const std::string prefix = *block ? std::string(block) + "." : std::string();
        for (const auto& item : object.items()) {
            const std::string& key = item.key();
            const MsprobeConfigKey* known = findMsprobeKey(block, key);
            if (!known)
                issue(prefix + key, unknownKeyProblem(block, key), honouredKeys(block).c_str(),
                      true);
            else if (known->use == Use::NoEffect)
                issue(prefix + key,
                      std::string("has no effect in Probe Studio and is ignored: ") + known->note,
                      nullptr, true);
            else if (known->use == Use::OtherTask)
                issue(prefix + key,
                      "configures a msprobe task Probe Studio does not run; the section is ignored",
                      nullptr, true);
        }
    };
    ApiConfig config;
    checkKeys("", root);

    auto readString = [&](const char* key, std::string& out, const char* accepted) {
        auto it = root.find(key);
        if (it == root.end()) return false;
        if (!it->is_string()) {
            issue(key, "must be a string, found " + foundValue(*it), accepted);
            return false;
        }
        out = it->get<std::string>();
        return true;
    };
    auto readBool = [&](const char* key, bool& out) {
        auto it = root.find(key);
        if (it == root.end()) return;
        if (!it->is_boolean())
            issue(key, "must be a boolean, found " + foundValue(*it), kAcceptedBool);
        else
            out = it->get<bool>();
    };

    if (readString("task", config.task, kAcceptedTask)) {
        if (!checkApiTask(config.task).empty())
            issue("task", "\"" + config.task + "\" is not a supported task", kAcceptedTask);
    }
    if (readString("dump_path", config.dumpPath, "a directory path such as \"./dump_path\"")) {
        if (config.dumpPath.empty())
            issue("dump_path", "must not be empty", "a directory path such as \"./dump_path\"");
        // The system cuts a path at its first NUL: "/home/me/notes.txt\u0000/dump" would name,
        // and overwrite, the file before it.
        else if (config.dumpPath.find('\0') != std::string::npos)
            issue("dump_path", "holds a NUL character (\\u0000), which no path can hold",
                  "a directory path such as \"./dump_path\"");
    }
    if (readString("level", config.level, kAcceptedLevel)) {
        if (!checkApiLevel(config.level).empty())
            issue("level", "\"" + config.level + "\" is not a supported level", kAcceptedLevel);
    }
    for (const char* key : {"rank", "step"}) {
        auto it = root.find(key);
        if (it == root.end()) continue;
        std::string problem;
        auto expanded = expandStepList(*it, &problem);
        if (!expanded)
            issue(key, problem, kAcceptedSteps);
        else
            (std::string(key) == "rank" ? config.rank : config.step) = std::move(*expanded);
    }
    if (auto it = root.find("seed"); it != root.end()) {
        if (!it->is_number_integer())
            issue("seed", notWholeNumber(*it), "a whole number 0..4294967295");
        else if (const auto seed = signedInteger(*it); !seed || *seed < 0 || *seed > 4294967295LL)
            issue("seed", jsonSnippet(*it) + " is not a valid seed",
                  "a whole number 0..4294967295");
        else
            config.seed = *seed;
    }
    readBool("is_deterministic", config.isDeterministic);
    readBool("extra_info", config.extraInfo);

    for (const char* section : {"statistics", "tensor", "overflow_check"}) {
        auto it = root.find(section);
        if (it == root.end()) continue;
        const std::string prefix = std::string(section) + ".";
        if (!it->is_object()) {
            issue(section, "must be an object, found " + std::string(it->type_name()),
                  "an object with scope, list, data_mode");
            continue;
        }
        const std::string block = section;
        ApiTaskConfig& task = block == "tensor" ? config.tensor
                                                : (block == "overflow_check" ? config.overflowCheck
                                                                             : config.statistics);
        checkKeys(section, *it);
        auto readStrings = [&](const char* key, std::vector<std::string>& out,
                               const char* accepted) {
            auto k = it->find(key);
            if (k == it->end()) return false;
            bool good = k->is_array();
            if (good)
                for (const auto& v : *k) good = good && v.is_string();
            if (!good) {
                issue(prefix + key, "must be a list of strings, found " + jsonSnippet(*k),
                      accepted);
                return false;
            }
            out = k->get<std::vector<std::string>>();
            return true;
        };
        if (readStrings("scope", task.scope, kAcceptedScope)) {
            if (!task.scope.empty() && task.scope.size() != 2) {
                issue(
                    prefix + "scope",
                    "must hold exactly two entry names, found " + std::to_string(task.scope.size()),
                    kAcceptedScope);
            } else {
                for (const auto& name : task.scope) {
                    const bool api = isL1EntryName(name), module = isModuleEntryName(name);
                    const bool fits = config.level == "L1"
                                          ? api
                                          : (config.level == "L0" ? module : (api || module));
                    if (!fits)
                        issue(prefix + "scope",
                              "\"" + name + "\" is not a full entry name for level " + config.level,
                              kAcceptedScope);
                }
            }
        }
        readStrings("list", task.list, kAcceptedList);
        if (readStrings("data_mode", task.dataMode, kAcceptedDataMode)) {
            static const std::set<std::string> modes = {"all", "forward", "backward", "input",
                                                        "output"};
            for (const auto& mode : task.dataMode)
                if (!modes.count(mode))
                    issue(prefix + "data_mode", "\"" + mode + "\" is not a data mode",
                          kAcceptedDataMode);
            if (task.dataMode.empty())
                issue(prefix + "data_mode", "must not be empty", kAcceptedDataMode);
            else if (task.dataMode.size() > 1 &&
                     std::find(task.dataMode.begin(), task.dataMode.end(), "all") !=
                         task.dataMode.end())
                issue(prefix + "data_mode", "\"all\" cannot be combined with other modes",
                      kAcceptedDataMode);
        }
        if (auto k = it->find("summary_mode"); k != it->end()) {
            if (!k->is_string() ||
                (k->get<std::string>() != "statistics" && k->get<std::string>() != "md5"))
                issue(
                    prefix + "summary_mode",
                    jsonSnippet(*k) +
                        " is not a summary mode Probe Studio computes (msprobe's \"xor\" checksum "
                        "runs on Ascend NPUs only)",
                    kAcceptedSummary);
            else
                task.summaryMode = k->get<std::string>();
        }
        if (block == "statistics") readStrings("tensor_list", task.tensorList, kAcceptedList);
        if (block != "overflow_check") continue;
        // msprobe's rule: a whole number, -1 or above 0.
        if (auto k = it->find("overflow_nums"); k != it->end()) {
            if (!k->is_number_integer())
                issue(prefix + "overflow_nums", notWholeNumber(*k), kAcceptedOverflowNums);
            else if (const auto count = signedInteger(*k); !count || (*count < 1 && *count != -1))
                issue(prefix + "overflow_nums", jsonSnippet(*k) + " is not a number of births",
                      kAcceptedOverflowNums);
            else
                config.overflow.overflowNums = *count;
        }
        if (auto k = it->find("stop_after_overflow"); k != it->end()) {
            if (!k->is_boolean())
                issue(prefix + "stop_after_overflow", "must be a boolean, found " + foundValue(*k),
                      kAcceptedBool);
            else
                config.overflow.stopAfterOverflow = k->get<bool>();
        }
    }
    const bool anyError =
        std::any_of(issues.begin(), issues.end(), [](const auto& i) { return !i.warning; });
    if (!anyError) result.config = std::move(config);
    return result;
}

ApiConfigResult loadApiConfigFile(const std::string& path) {
    std::string error;
    auto text = readTextFile(path, &error);
    if (!text) {
        ApiConfigResult result;
        result.issues.push_back({path, "", "cannot be read: " + error,
                                 "a readable JSON file (see docs/formats.md section 5)", 0, 0,
                                 false});
        return result;
    }
    return parseApiConfig(*text, path);
}

}  // namespace probe::format
