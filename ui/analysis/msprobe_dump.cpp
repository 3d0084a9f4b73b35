// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/msprobe_dump.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "probe/format/config_issue.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::analysis {
namespace {

bool allDigits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool isRankDirectoryName(const std::string& name) {
    for (const char* prefix : {"rank", "proc"}) {
        const size_t n = std::char_traits<char>::length(prefix);
        if (name.size() > n && name.compare(0, n, prefix) == 0 &&
            allDigits(std::string_view(name).substr(n)))
            return true;
    }
    return false;
}

// "step" and digits: a step folder's name, or one with a leading zero ("step01", a copy).
bool namedLikeAStep(const std::string& name) {
    return name.size() > 4 && name.compare(0, 4, "step") == 0 &&
           allDigits(std::string_view(name).substr(4));
}

bool hasStepDirectory(const std::string& dir) {
    for (const auto& name : format::listDirectory(dir, format::EntryKind::Directories))
        if (stepNumber(name) >= 0) return true;
    return false;
}

std::string parentOf(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return "/";
    return path.substr(0, slash);
}

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const size_t at = text.find(separator, start);
        parts.emplace_back(
            text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos) break;
        start = at + 1;
    }
    return parts;
}

std::string join(const std::vector<std::string>& parts, size_t from, size_t to, char separator) {
    std::string out;
    for (size_t i = from; i < to; ++i) {
        if (i > from) out += separator;
        out += parts[i];
    }
    return out;
}

using Stamp = std::pair<int64_t, int64_t>;
bool isTensorItem(const nlohmann::ordered_json& value) {
    return value.is_object() && value.contains("dtype") && value.contains("shape");
}

// A well-formed shape (null, or whole numbers from 0: addTensors checks) as the atb layout
// spells one: "4x8"; "" for a 0-d tensor (null iterates as empty).
std::string shapeText(const nlohmann::ordered_json& shape) {
    std::string out;
    for (const auto& d : shape) {
        if (!out.empty()) out += 'x';
        out += std::to_string(d.get<int64_t>());
    }
    return out;
}

}  // namespace

int64_t stepNumber(const std::string& name) {
    // No leading zero: "step01" beside "step1" is a copy, not step 1 read twice.
    if (!namedLikeAStep(name) || (name.size() > 5 && name[4] == '0')) return -1;
    const long long n = std::strtoll(name.c_str() + 4, nullptr, 10);
    return n > INT32_MAX ? -1 : n;  // a round is an int32
}

std::optional<std::string> findMsprobeDumpRoot(const std::string& path) {
    std::string p = format::absolutePath(path);
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (!format::isDirectory(p)) return std::nullopt;
    if (hasStepDirectory(p)) return p;
    const std::string base = format::fileNameOf(p);
    if (stepNumber(base) >= 0) return parentOf(p);  // a step directory
    if (isRankDirectoryName(base) && stepNumber(format::fileNameOf(parentOf(p))) >= 0)
        return parentOf(parentOf(p));
    // A directory holding the dump_path (a script's working directory): exactly one candidate.
    std::optional<std::string> found;
    for (const auto& name : format::listDirectory(p, format::EntryKind::Directories)) {
        if (!hasStepDirectory(p + "/" + name)) continue;
        if (found) return std::nullopt;
        found = p + "/" + name;
    }
    return found;
}

std::optional<MsprobeEntryName> parseMsprobeEntryName(std::string_view entry) {
    const auto parts = split(entry, '.');
    MsprobeEntryName name;
    if (parts.size() >= 5 && parts[0] == "Module" && parts[parts.size() - 2] == "parameters_grad" &&
        allDigits(parts.back())) {
        name.kind = MsprobeEntryName::Kind::ParametersGrad;
        name.prefix = "Module";
        name.call = std::strtoll(parts.back().c_str(), nullptr, 10);
        name.moduleClass = parts[parts.size() - 3];
        name.name = join(parts, 1, parts.size() - 3, '.');
        return name;
    }
    if (parts.size() >= 5 && parts[0] == "Module" && allDigits(parts.back()) &&
        (parts[parts.size() - 2] == "forward" || parts[parts.size() - 2] == "backward")) {
        name.kind = MsprobeEntryName::Kind::Module;
        name.prefix = "Module";
        name.call = std::strtoll(parts.back().c_str(), nullptr, 10);
        name.direction = parts[parts.size() - 2];
        name.moduleClass = parts[parts.size() - 3];
        name.name = join(parts, 1, parts.size() - 3, '.');
        return name;
    }
    if (parts.size() >= 4 && parts[0] != "Module" && allDigits(parts[parts.size() - 2]) &&
        (parts.back() == "forward" || parts.back() == "backward")) {
        name.kind = MsprobeEntryName::Kind::Api;
        name.prefix = parts[0];
        name.call = std::strtoll(parts[parts.size() - 2].c_str(), nullptr, 10);
        name.direction = parts.back();
        name.name = join(parts, 1, parts.size() - 2, '.');
        return name;
    }
    return std::nullopt;
}

std::string msprobeEntryType(const MsprobeEntryName& name) {
    switch (name.kind) {
        case MsprobeEntryName::Kind::Api:
            return name.prefix + "." + name.name;
        case MsprobeEntryName::Kind::Module:
            return name.moduleClass;
        case MsprobeEntryName::Kind::ParametersGrad:
            return name.moduleClass + ".parameters_grad";
    }
    return {};
}

std::string quoteNonFiniteJsonTokens(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 64);
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            out += c;
            if (c == '\\' && i + 1 < text.size()) {
                out += text[++i];
            } else if (c == '"') {
                inString = false;
            }
            continue;
        }
        if (c == '"') {
            inString = true;
            out += c;
            continue;
        }
        bool replaced = false;
        for (std::string_view token : {std::string_view("NaN"), std::string_view("Infinity"),
                                       std::string_view("-Infinity")}) {
            if (text.compare(i, token.size(), token) == 0) {
                out += '"';
                out += token;
                out += '"';
                i += token.size() - 1;
                replaced = true;
                break;
            }
        }
        if (!replaced) out += c;
    }
    return out;
}

std::optional<double> msprobeStatValue(const nlohmann::ordered_json& value) {
    if (value.is_number()) return value.get<double>();
    if (value.is_boolean()) return value.get<bool>() ? 1.0 : 0.0;
    if (value.is_string()) {
        const auto& s = value.get_ref<const std::string&>();
        if (s == "NaN") return std::nan("");
        if (s == "Infinity") return HUGE_VAL;
        if (s == "-Infinity") return -HUGE_VAL;
    }
    return std::nullopt;
}

// How deep construct.json may nest modules, as deep as a JSON file may nest.
constexpr uint16_t kMaxModuleDepth = 256;

MsprobeDumpReader::MsprobeDumpReader(std::string root) : root_(std::move(root)) {}

void MsprobeDumpReader::sayTooDeep(DumpDelta& delta, const RankDir& state,
                                   const std::string& entry) {
    if (saidTooDeep_.insert(state.dir).second)
        delta.problems.push_back(state.dir + "/construct.json: modules nested deeper than " +
                                 std::to_string(kMaxModuleDepth) + " levels (\"" +
                                 format::printableText(entry) +
                                 "\" and others); those are shown at the top level");
}

uint32_t MsprobeDumpReader::ensureOp(DumpDelta& delta, uint32_t process, const std::string& entry,
                                     const RankDir& state, LastChildren& lastChildren,
                                     std::vector<const std::string*>& chain) {
    uint32_t op = index_.findOp(process, entry);
    uint32_t parent = kNone;
    if (op != kNone) {
        parent = parentOfOp_[op];
    } else {
        auto parentIt = state.parentOf.find(entry);
        if (parentIt != state.parentOf.end() && !parentIt->second.empty()) {
            const std::string& parentName = parentIt->second;
            // A damaged construct.json whose parents go round: the entry is put at the top
            // level (the cycle made a new op at each turn, 259 ops of 16 entries).
            const bool cycle = parentName == entry || std::any_of(chain.begin(), chain.end(),
                                                                  [&](const std::string* name) {
                                                                      return *name == parentName;
                                                                  });
            if (cycle) {
                delta.problems.push_back(state.dir + "/construct.json: the parents of \"" +
                                         format::printableText(entry) +
                                         "\" go round in a cycle; it is shown at the top level");
            } else if (chain.size() < kMaxModuleDepth) {
                chain.push_back(&entry);
                parent = ensureOp(delta, process, parentName, state, lastChildren, chain);
                chain.pop_back();
            } else {
                sayTooDeep(delta, state, entry);
            }
        }
        // Each level's name path holds its ancestors' names: a chain of 100,000 modules (each
        // the parent of the next, so none deeper than 256 in one lookup) took 23 GB. Past 256
        // levels an entry is put at the top level.
        if (parent != kNone && depthOfOp_[parent] + 1 >= kMaxModuleDepth) {
            sayTooDeep(delta, state, entry);
            parent = kNone;
        }
        const auto parsed = parseMsprobeEntryName(entry);
        op = index_.addOp(process, entry);
        parentOfOp_.push_back(parent);
        depthOfOp_.push_back(parent == kNone ? 0 : depthOfOp_[parent] + 1);
        const auto last = lastChildren.find(parent);
        delta.ops.push_back({process,
                             parent,
                             entry,
                             entry,
                             parsed ? msprobeEntryType(*parsed) : std::string(),
                             {},
                             last == lastChildren.end() ? kNone : last->second});
    }
    lastChildren[parent] = op;
    return op;
}

void MsprobeDumpReader::addTensors(DumpDelta& delta, uint32_t op, int32_t step,
                                   const std::string& dir, const nlohmann::ordered_json& value,
                                   bool isOutput, const std::string& index) {
    if (value.is_array()) {
        for (size_t i = 0; i < value.size(); ++i)
            addTensors(delta, op, step, dir, value[i], isOutput,
                       index.empty() ? std::to_string(i) : index + "." + std::to_string(i));
        return;
    }
    if (!value.is_object()) {
        if (!value.is_null()) noteUnreadItem();  // null: an argument that was None
        return;
    }
    if (!isTensorItem(value)) {
        if (value.contains("type")) return;  // a non-tensor argument: {"type": "int", "value": 3}
        for (const auto& [key, item] : value.items())
            addTensors(delta, op, step, dir, item, isOutput,
                       index.empty() ? key : index + "." + key);
        return;
    }
    // A tensor item is told by its dtype (a string) and shape (whole numbers from 0): another
    // type is a damaged item, not a tensor of dtype 7 whose shape differs (compare called it a
    // divergence: "shape differs: 4x8 vs \"x\"").
    const auto& dtypeField = value.at("dtype");  // isTensorItem: both present
    const auto& shapeField = value.at("shape");
    const bool wellFormed = dtypeField.is_string() &&
                            (shapeField.is_null() || shapeField.is_array()) &&
                            std::all_of(shapeField.begin(), shapeField.end(), [](const auto& d) {
                                return d.is_number_unsigned() ||
                                       (d.is_number_integer() && d.template get<int64_t>() >= 0);
                            });
    if (!wellFormed) {
        noteUnreadItem();
        return;
    }
    StatRecord record;
    record.slot = index_.slotIndex(delta, op, isOutput, index.empty() ? "0" : index);
    record.round = step;
    record.dtype = index_.intern(delta, dtypeField.get<std::string>());
    record.shape = index_.intern(delta, shapeText(shapeField));
    const char* keys[] = {"Max", "Min", "Mean", "Norm"};
    for (int i = 0; i < kStatCount; ++i) {
        auto it = value.find(keys[i]);
        if (it == value.end()) continue;
        const auto v = msprobeStatValue(*it);
        if (!v) continue;
        record.value[i] = *v;
        record.present |= static_cast<uint8_t>(1u << i);
    }
    record.anomalies = rowAnomalies(record.value, record.present);
    auto dataName = value.find("data_name");
    if (dataName != value.end() && dataName->is_string()) {
        record.source = sourceCount_++;
        record.hasTensorFile = true;
        delta.sources.push_back(dir + "/dump_tensor_data/" + dataName->get<std::string>());
    }
    delta.rows.push_back(record);
}

void MsprobeDumpReader::noteUnreadItem() {
    if (unreadItems_++ == 0 && currentEntry_) firstUnreadEntry_ = *currentEntry_;
}

void MsprobeDumpReader::addEntry(DumpDelta& delta, uint32_t op, int32_t step,
                                 const std::string& dir, const nlohmann::ordered_json& value) {
    if (!value.is_object()) {
        noteUnreadItem();
        return;
    }
    for (const auto& [key, item] : value.items()) {
        if (key == "input_args" || key == "input_kwargs" || key == "input") {
            addTensors(delta, op, step, dir, item, false, {});
        } else if (key == "output") {
            addTensors(delta, op, step, dir, item, true, {});
        } else if (key == "parameters") {
            addTensors(delta, op, step, dir, item, false, "parameters");
        } else if (item.is_array() && item.size() == 1) {  // parameters_grad: {"weight": [item]}
            addTensors(delta, op, step, dir, item[0], true, key);
        } else {
            addTensors(delta, op, step, dir, item, true, key);
        }
    }
}

uint64_t MsprobeDumpReader::readRankDir(DumpDelta& delta, const std::string& dir,
                                        const std::string& processKey, int32_t step,
                                        RankDir& state) {
    const std::string errorLog = dir + "/dump_error_info.log";
    if (!state.errorLogReported && format::fileExists(errorLog)) {
        state.errorLogReported = true;
        std::string error;
        const auto text = format::readTextFile(errorLog, &error, 1u << 20);
        const std::string first =
            text ? text->substr(0, text->find('\n')) : "(cannot be read: " + error + ")";
        delta.problems.push_back(errorLog +
                                 ": the debugger recorded errors: " + format::printableText(first));
    }
    const std::string dumpPath = dir + "/dump.json";
    const auto stamp = format::fileStamp(dumpPath);
    if (!stamp || *stamp == state.dumpStamp) return 0;
    state.dumpStamp = *stamp;

    state.dir = dir;
    const std::string constructPath = dir + "/construct.json";
    const auto constructStamp = format::fileStamp(constructPath);
    if (constructStamp && *constructStamp != state.constructStamp) {
        state.constructStamp = *constructStamp;
        const auto construct = format::readJsonFile(constructPath, format::kDumpJsonLimits);
        if (!construct.ok()) {
            delta.problems.push_back(construct.error.toString() +
                                     "; the tree of this step is shown flat");
        } else if (construct.value->is_object()) {
            for (const auto& [entry, parent] : construct.value->items())
                state.parentOf[entry] =
                    parent.is_string() ? parent.get<std::string>() : std::string();
        } else {
            delta.problems.push_back(constructPath +
                                     ": not a JSON object (entry -> parent module); the tree "
                                     "of this step is shown flat");
        }
    }

    std::string error;
    auto text = format::readTextFile(dumpPath, &error, format::kDumpJsonLimits.maxBytes);
    if (!text) {
        delta.problems.push_back(dumpPath + ": " + error);
        return 0;
    }
    const auto parsed = format::parseOrderedJson(quoteNonFiniteJsonTokens(*text), dumpPath,
                                                 format::kDumpJsonLimits);
    if (!parsed.ok()) {
        delta.problems.push_back(parsed.error.toString());
        return text->size();
    }
    // An entry given twice hides the first (the last is read): a NaN there went unsaid.
    if (!parsed.duplicateKeys.empty()) {
        std::string keys;
        for (const auto& key : parsed.duplicateKeys) keys += (keys.empty() ? "" : ", ") + key;
        delta.problems.push_back(dumpPath +
                                 ": keys given twice, only the last value of each is "
                                 "read: " +
                                 keys);
    }
    const nlohmann::ordered_json& json = *parsed.value;
    auto data = json.find("data");
    if (!json.is_object() || data == json.end() || !data->is_object()) {
        delta.problems.push_back(
            dumpPath + ": has no \"data\" object; is it a dump.json written by PrecisionDebugger?");
        return text->size();
    }
    const uint32_t process = index_.processIndex(delta, processKey);
    LastChildren lastChildren;
    for (const auto& [entry, value] : data->items()) {
        std::vector<const std::string*> chain;
        const uint32_t op = ensureOp(delta, process, entry, state, lastChildren, chain);
        if (!state.entriesRead.insert(entry).second) continue;  // read at an earlier rewrite
        currentEntry_ = &entry;
        addEntry(delta, op, step, dir, value);
    }
    currentEntry_ = nullptr;
    if (unreadItems_ > 0) {
        delta.problems.push_back(
            dumpPath + ": " + std::to_string(unreadItems_) +
            (unreadItems_ == 1 ? " item is" : " items are") +
            " neither a tensor nor an argument as msprobe writes them, and not read (the first "
            "in \"" +
            format::printableText(firstUnreadEntry_) + "\")");
        unreadItems_ = 0;
        firstUnreadEntry_.clear();
    }
    state.bytesRead = text->size();
    return text->size();
}

// Said once, when it holds a rank's dump.json: a renamed step folder lost them without a word.
void MsprobeDumpReader::sayNotAStepFolder(DumpDelta& delta, const std::string& dir) {
    if (notStepFoldersSaid_.count(dir)) return;
    for (const auto& rankName : format::listDirectory(dir, format::EntryKind::Directories)) {
        if (!isRankDirectoryName(rankName) ||
            !format::fileStamp(dir + "/" + rankName + "/dump.json"))
            continue;
        delta.problems.push_back(dir +
                                 ": not a step folder (its name is not step followed by a number "
                                 "from 0 to 2147483647 without leading zeros); its dump.json files "
                                 "are not read");
        notStepFoldersSaid_.insert(dir);
        return;
    }
}

void MsprobeDumpReader::sayUnreadable(DumpDelta& delta, const std::string& path,
                                      const std::string& error, const char* lost) {
    if (error.empty()) {
        unreadableSaid_.erase(path);
        return;
    }
    if (unreadableSaid_.insert(path).second)
        delta.problems.push_back(path + ": " + error + "; " + lost + " not read");
}

DumpDelta MsprobeDumpReader::poll(uint64_t byteBudget) {
    DumpDelta delta = newDelta();
    if (!format::isDirectory(root_)) {
        if (!vanished_) delta.problems.push_back(root_ + " no longer exists");
        vanished_ = true;
        return delta;
    }
    if (!sameFolderAsFirstRead(delta, vanished_)) return delta;
    vanished_ = false;
    std::vector<std::pair<int64_t, std::string>> steps;
    // The folders in `dir`; what keeps them from being read is said once (a file in a rank
    // folder's place lost its step without a word). `dir` listed again is forgotten.
    const auto foldersIn = [&](const std::string& dir, auto&& named) {
        FolderListing listed = listFolders(dir, named);
        bool dirSaid = false;
        for (const auto& [path, problem] : listed.problems) {
            dirSaid = dirSaid || path == dir;
            if (unreadableSaid_.insert(path).second) delta.problems.push_back(problem);
        }
        if (!dirSaid) unreadableSaid_.erase(dir);
        std::vector<std::string> folders;
        for (auto& entry : listed.folders) folders.push_back(std::move(entry.name));
        return folders;
    };
    const auto names =
        foldersIn(root_, [](const std::string& name) { return namedLikeAStep(name); });
    for (const auto& name : names) {
        if (const int64_t n = stepNumber(name); n >= 0)
            steps.emplace_back(n, name);
        else if (namedLikeAStep(name))
            sayNotAStepFolder(delta, root_ + "/" + name);
    }
    std::sort(steps.begin(), steps.end());
    uint64_t used = 0;
    for (const auto& [step, stepName] : steps) {
        const std::string stepDir = root_ + "/" + stepName;
        const auto ranks = foldersIn(stepDir, isRankDirectoryName);
        for (const auto& rankName : ranks) {
            if (!isRankDirectoryName(rankName)) continue;
            const std::string dir = stepDir + "/" + rankName;
            RankDir& state = rankDirs_[dir];
            const auto now = format::fileStamp(dir + "/dump.json");
            const int statError = errno;
            // Gone is not yet written; any other failure (a rank folder the user may not
            // enter) is said.
            sayUnreadable(delta, dir + "/dump.json",
                          now || statError == ENOENT ? std::string() : std::strerror(statError),
                          "the rank's step is");
            if (now && *now != state.dumpStamp) {
                if (used >= byteBudget) {
                    delta.more = true;
                } else {
                    used += readRankDir(delta, dir, rankName, static_cast<int32_t>(step), state);
                }
            }
            if (now) {
                delta.bytesTotal += static_cast<uint64_t>(now->size);
                delta.bytesDone += state.dumpStamp == *now ? static_cast<uint64_t>(now->size) : 0;
            }
        }
    }
    return delta;
}

}  // namespace probe::analysis
