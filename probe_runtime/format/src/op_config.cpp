// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/op_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "probe/format/json_input.h"

namespace probe::format {
namespace {

const char* kAcceptedTask = "\"tensor\", \"statistics\", \"all\", \"overflow_check\"";
const char* kAcceptedOverflowNums =
    "a whole number: births of an overflow to dump, or -1 for no limit";
const char* kAcceptedBool = "true or false (JSON booleans, without quotes)";
const char* kAcceptedExecRange =
    "\"all\", \"none\", or \"start,end\" with whole numbers 0 <= start <= end "
    "(several pairs allowed: \"0,2,5,7\")";
const char* kAcceptedIds =
    "a comma-separated list of op ids such as \"0,2_1\" (numbers joined by \"_\"), "
    "or \"\" for all layer-level ops";
const char* kAcceptedOpName =
    "a comma-separated list of op name prefixes such as \"word,prefill_layer\" "
    "(case-insensitive), or \"\" for all layer-level ops";
const char* kAcceptedDevice =
    "a comma-separated list of device ids such as \"0,1\", or \"\" for all";
const char* kAcceptedFilterLevel = "0, 1 or 2";

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

// Splits on commas and trims; returns nullopt if an item is empty (",," or a trailing comma).
std::optional<std::vector<std::string>> splitList(std::string_view text) {
    std::vector<std::string> items;
    if (trim(text).empty()) return items;
    size_t pos = 0;
    while (true) {
        size_t comma = text.find(',', pos);
        std::string item =
            trim(text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos));
        if (item.empty()) return std::nullopt;
        items.push_back(std::move(item));
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return items;
}

bool parseNonNegative(std::string_view text, int64_t& value) {
    if (text.empty()) return false;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && ptr == text.data() + text.size() && value >= 0;
}

bool isOpId(std::string_view id) {
    if (id.empty() || id.front() == '_' || id.back() == '_') return false;
    for (size_t i = 0; i < id.size(); ++i) {
        char c = id[i];
        if (c == '_') {
            if (id[i - 1] == '_') return false;
        } else if (!std::isdigit(static_cast<unsigned char>(c))) {
            return false;
        }
    }
    return true;
}

std::string toLower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool startsWithNoCase(std::string_view text, std::string_view lowerPrefix) {
    if (text.size() < lowerPrefix.size()) return false;
    for (size_t i = 0; i < lowerPrefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(text[i])) != lowerPrefix[i]) return false;
    return true;
}

std::string joinList(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += ',';
        out += item;
    }
    return out;
}

}  // namespace

const char* dumpTaskName(DumpTask task) {
    switch (task) {
        case DumpTask::Tensor:
            return "tensor";
        case DumpTask::Statistics:
            return "statistics";
        case DumpTask::All:
            return "all";
        case DumpTask::OverflowCheck:
            return "overflow_check";
    }
    return "tensor";
}

bool ExecRange::contains(int64_t round) const {
    switch (kind) {
        case Kind::All:
            return true;
        case Kind::None:
            return false;
        case Kind::Ranges:
            for (const auto& [lo, hi] : ranges)
                if (round >= lo && round <= hi) return true;
            return false;
    }
    return false;
}

std::string ExecRange::toString() const {
    if (kind == Kind::All) return "all";
    if (kind == Kind::None) return "none";
    std::string out;
    for (const auto& [lo, hi] : ranges) {
        if (!out.empty()) out += ',';
        out += std::to_string(lo) + "," + std::to_string(hi);
    }
    return out;
}

const std::vector<std::string>& opConfigKeys() {
    static const std::vector<std::string> keys = {"task",   "dump_enable", "exec_range",
                                                  "ids",    "op_name",     "save_child",
                                                  "device", "filter_level"};
    return keys;
}

const std::vector<std::string>& opConfigOptionalKeys() {
    static const std::vector<std::string> keys = {"grad_monitor", "overflow_nums",
                                                  "stop_after_overflow"};
    return keys;
}

bool OpConfig::selects(const OpLocation& op) const {
    bool idMatch = false;
    for (const auto& id : ids) {
        if (op.idPath == id) {
            idMatch = true;
            break;
        }
        if (saveChild && op.idPath.size() > id.size() && op.idPath.compare(0, id.size(), id) == 0 &&
            op.idPath[id.size()] == '_') {
            idMatch = true;
            break;
        }
    }
    if (idMatch) return true;
    if (opNames.empty()) {
        if (!ids.empty()) return false;
        return saveChild || op.depth == 0;
    }
    const std::string_view path = op.namePath;
    const size_t slash = path.rfind('/');
    const std::string_view leaf = slash == std::string_view::npos ? path : path.substr(slash + 1);
    for (const auto& prefix : opNames) {
        if (!saveChild) {
            if (startsWithNoCase(leaf, prefix)) return true;
            continue;
        }
        // The op itself or any ancestor: the path or any segment after a '/' starts with it.
        if (startsWithNoCase(path, prefix)) return true;
        for (size_t pos = path.find('/'); pos != std::string_view::npos;
             pos = path.find('/', pos + 1))
            if (startsWithNoCase(path.substr(pos + 1), prefix)) return true;
    }
    return false;
}

bool OpConfig::maySelectBelowLayers() const {
    if (saveChild || !opNames.empty()) return true;
    for (const auto& id : ids)
        if (id.find('_') != std::string::npos) return true;
    return false;
}

bool OpConfig::maySelectDescendants(const OpLocation& op) const {
    if (saveChild) {
        if (ids.empty() && opNames.empty()) return true;
        if (selects(op)) return true;
    }
    // A listed id below this op, or a name prefix that may match any deeper op's own name.
    if (!opNames.empty()) return true;
    for (const auto& id : ids)
        if (id.size() > op.idPath.size() && id.compare(0, op.idPath.size(), op.idPath) == 0 &&
            id[op.idPath.size()] == '_')
            return true;
    return false;
}

bool OpConfig::acceptsDevice(int device) const {
    if (devices.empty()) return true;
    if (device < 0) return false;
    const std::string text = std::to_string(device);
    return std::find(devices.begin(), devices.end(), text) != devices.end();
}

OpConfig OpConfig::startingPoint() {
    OpConfig config;
    config.task = DumpTask::Statistics;
    config.dumpEnable = true;
    config.execRange.kind = ExecRange::Kind::All;
    config.execRange.ranges.clear();
    return config;
}

std::string OpConfig::toFileText() const {
    return dumpJson(orderedJson(), 4) + "\n";
}

nlohmann::json OpConfig::toJson() const {
    // Converted, not dumped and parsed back: a name that is not UTF-8 must not throw here.
    const nlohmann::ordered_json ordered = orderedJson();
    nlohmann::json j = nlohmann::json::object();
    for (const auto& item : ordered.items()) j[item.key()] = nlohmann::json(item.value());
    return j;
}

nlohmann::ordered_json OpConfig::orderedJson() const {
    nlohmann::ordered_json j;
    j["task"] = dumpTaskName(task);
    j["dump_enable"] = dumpEnable;
    j["exec_range"] = execRange.toString();
    j["ids"] = joinList(ids);
    j["op_name"] = joinList(opNames);
    j["save_child"] = saveChild;
    j["device"] = joinList(devices);
    j["filter_level"] = filterLevel;
    if (gradMonitor) j["grad_monitor"] = true;  // absent by default: older readers accept the file
    if (task == DumpTask::OverflowCheck || overflowNums != 1) j["overflow_nums"] = overflowNums;
    if (stopAfterOverflow) j["stop_after_overflow"] = true;
    return j;
}

bool OpConfig::operator==(const OpConfig& o) const {
    return task == o.task && dumpEnable == o.dumpEnable && execRange == o.execRange &&
           ids == o.ids && opNames == o.opNames && saveChild == o.saveChild &&
           devices == o.devices && filterLevel == o.filterLevel && gradMonitor == o.gradMonitor &&
           overflowNums == o.overflowNums && stopAfterOverflow == o.stopAfterOverflow;
}

OpConfigResult parseOpConfig(std::string_view text, const std::string& file) {
    OpConfigResult result;
    auto& issues = result.issues;
    auto issue = [&](const std::string& key, std::string problem, const char* accepted) {
        issues.push_back({file, key, std::move(problem), accepted ? accepted : "", 0, 0});
    };
    nlohmann::json root;
    if (!parseJsonText(text, file, root, issues)) return result;
    if (!root.is_object()) {
        issue("", "the config must be a JSON object {...}, found " + std::string(root.type_name()),
              "an object with the keys task, dump_enable, exec_range, ids, op_name, save_child, "
              "device, filter_level (and optionally grad_monitor, overflow_nums, "
              "stop_after_overflow)");
        return result;
    }

    OpConfig config;
    std::vector<std::string> keys = opConfigKeys();
    keys.insert(keys.end(), opConfigOptionalKeys().begin(), opConfigOptionalKeys().end());
    for (const auto& item : root.items()) {
        if (std::find(keys.begin(), keys.end(), item.key()) == keys.end()) {
            std::string accepted;
            for (const auto& k : keys) accepted += (accepted.empty() ? "" : ", ") + k;
            issue(item.key(), "unknown key (a misspelling?)", accepted.c_str());
        }
    }

    auto requireString = [&](const char* key, const char* accepted) -> const std::string* {
        auto it = root.find(key);
        if (it == root.end()) return nullptr;
        if (!it->is_string()) {
            issue(key, "must be a string, found " + foundValue(*it), accepted);
            return nullptr;
        }
        return it->get_ptr<const std::string*>();
    };
    auto readBool = [&](const char* key, bool& out) {
        auto it = root.find(key);
        if (it == root.end()) return;
        if (!it->is_boolean()) {
            issue(key, "must be a boolean, found " + foundValue(*it), kAcceptedBool);
            return;
        }
        out = it->get<bool>();
    };

    if (const std::string* task = requireString("task", kAcceptedTask)) {
        if (*task == "tensor")
            config.task = DumpTask::Tensor;
        else if (*task == "statistics")
            config.task = DumpTask::Statistics;
        else if (*task == "all")
            config.task = DumpTask::All;
        else if (*task == "overflow_check")
            config.task = DumpTask::OverflowCheck;
        else
            issue("task", "\"" + *task + "\" is not a valid value", kAcceptedTask);
    }
    readBool("dump_enable", config.dumpEnable);
    readBool("save_child", config.saveChild);
    readBool("grad_monitor", config.gradMonitor);
    readBool("stop_after_overflow", config.stopAfterOverflow);

    if (const std::string* range = requireString("exec_range", kAcceptedExecRange)) {
        const std::string value = trim(*range);
        if (value == "all") {
            config.execRange.kind = ExecRange::Kind::All;
            config.execRange.ranges.clear();
        } else if (value == "none") {
            config.execRange.kind = ExecRange::Kind::None;
            config.execRange.ranges.clear();
        } else {
            auto items = splitList(value);
            std::vector<std::pair<int64_t, int64_t>> ranges;
            bool good = items && !items->empty() && items->size() % 2 == 0;
            for (size_t i = 0; good && i + 1 < items->size(); i += 2) {
                int64_t lo = 0, hi = 0;
                good = parseNonNegative((*items)[i], lo) && parseNonNegative((*items)[i + 1], hi) &&
                       lo <= hi;
                ranges.emplace_back(lo, hi);
            }
            if (good) {
                config.execRange.kind = ExecRange::Kind::Ranges;
                config.execRange.ranges = std::move(ranges);
            } else {
                issue("exec_range", "\"" + *range + "\" is not a valid range", kAcceptedExecRange);
            }
        }
    }

    if (const std::string* ids = requireString("ids", kAcceptedIds)) {
        auto items = splitList(*ids);
        if (!items) {
            issue("ids", "\"" + *ids + "\" has an empty item", kAcceptedIds);
        } else {
            for (const auto& id : *items)
                if (!isOpId(id)) issue("ids", "\"" + id + "\" is not an op id", kAcceptedIds);
            config.ids = std::move(*items);
        }
    }

    if (const std::string* names = requireString("op_name", kAcceptedOpName)) {
        auto items = splitList(*names);
        if (!items) {
            issue("op_name", "\"" + *names + "\" has an empty item", kAcceptedOpName);
        } else {
            for (auto& name : *items) config.opNames.push_back(toLower(name));
        }
    }

    if (const std::string* devices = requireString("device", kAcceptedDevice)) {
        auto items = splitList(*devices);
        if (!items) {
            issue("device", "\"" + *devices + "\" has an empty item", kAcceptedDevice);
        } else {
            for (const auto& d : *items) {
                int64_t value = 0;
                if (!parseNonNegative(d, value))
                    issue("device", "\"" + d + "\" is not a device id", kAcceptedDevice);
                else
                    config.devices.push_back(std::to_string(value));
            }
        }
    }

    if (auto it = root.find("filter_level"); it != root.end()) {
        if (!it->is_number_integer()) {
            issue("filter_level", notWholeNumber(*it), kAcceptedFilterLevel);
        } else {
            const auto level = signedInteger(*it);
            if (!level || *level < 0 || *level > 2)
                issue("filter_level", jsonSnippet(*it) + " is out of range", kAcceptedFilterLevel);
            else
                config.filterLevel = static_cast<int>(*level);
        }
    }

    if (auto it = root.find("overflow_nums"); it != root.end()) {
        if (!it->is_number_integer())
            issue("overflow_nums", notWholeNumber(*it), kAcceptedOverflowNums);
        else if (const auto count = signedInteger(*it); count && *count >= -1)
            config.overflowNums = *count;
        else
            issue("overflow_nums", jsonSnippet(*it) + " is out of range", kAcceptedOverflowNums);
    }

    // Warnings (a key given twice) are said, but do not reject the file.
    const bool anyError =
        std::any_of(issues.begin(), issues.end(), [](const auto& i) { return !i.warning; });
    if (!anyError) result.config = std::move(config);
    return result;
}

OpConfigResult loadOpConfigFile(const std::string& path, std::string* text) {
    std::string error;
    auto read = readTextFile(path, &error, kConfigJsonLimits.maxBytes);
    if (!read) {
        OpConfigResult result;
        result.issues.push_back({path, "", "cannot be read: " + error,
                                 "a readable JSON file (see docs/formats.md section 4)", 0, 0});
        return result;
    }
    if (text) *text = *read;
    return parseOpConfig(*read, path);
}

}  // namespace probe::format
