// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/atb_dump_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "analysis/atb_dump.h"
#include "analysis/parallel_for.h"
#include "analysis/tensor_view.h"
#include "probe/format/config_issue.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"
#include "probe/format/row_order.h"

namespace probe::analysis {
namespace {

// Malformed lines reported one by one per file; past this they are only counted.
constexpr uint32_t kReportedMalformedPerFile = 5;
constexpr uint64_t kMaxReadChunk = 4u << 20;
// No row is this long (paths and names are short): a longer line is skipped, not buffered.
constexpr uint64_t kMaxRowBytes = 1u << 20;
// Levels an op may be below its layer-level op (each "_" of its id one): as deep as a structure
// file may nest. Ops are made from the outermost in, one call a level: an id of 150,000 levels
// overflowed the stack (a real dump nests a few dozen).
constexpr std::ptrdiff_t kMaxOpDepth = 256;
// Lines of one read worth parsing on several threads, and how many a thread takes at a time.
constexpr size_t kParallelParseLines = 4096;
constexpr size_t kParsePieceLines = 1024;
// Past this many new ops from structure files, a poll returns before reading rows.
constexpr size_t kOpsAlonePerDelta = 20000;

bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool allDigits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The layer-level "<name>_<id>" of a structure node, split; id "" when there is no numeric suffix.
std::pair<std::string, std::string> splitNameAndId(const std::string& opName) {
    const size_t underscore = opName.rfind('_');
    if (underscore == std::string::npos || underscore == 0) return {opName, ""};
    const std::string suffix = opName.substr(underscore + 1);
    if (!allDigits(suffix)) return {opName, ""};
    return {opName.substr(0, underscore), suffix};
}

std::string paramText(const nlohmann::ordered_json& param) {
    if (param.is_null() || (param.is_string() && param.get_ref<const std::string&>().empty()))
        return {};
    if (param.is_object() && param.empty()) return {};
    return format::dumpJson(param);
}

}  // namespace

AtbDumpReader::AtbDumpReader(std::string root) : root_(std::move(root)) {}

uint32_t AtbDumpReader::internAnew(DumpDelta& delta, std::string_view text, InternCache& cache) {
    cache.text = text;
    cache.index = index_.intern(delta, text);
    return cache.index;
}

uint32_t AtbDumpReader::ensureOp(DumpDelta& delta, uint32_t process, std::string_view id,
                                 std::string_view namePath, std::string_view type) {
    // Hashed once, for the lookups below and the op's registration.
    const auto hashes = ReaderIndex::hashesOf(process, id, namePath);
    if (const uint32_t existing = index_.findOp(process, id, namePath, hashes); existing != kNone) {
        if (roundStamp_ != 0) {
            // Its key taken in this round by an op shifted onto it, or: it ran under another
            // key in this round already (this is a later op of its name, shifted onto it); it
            // has not run yet (this may be an earlier op of its name, shifted onto it).
            if (const uint32_t shifted = shiftedHere(process, id, namePath); shifted != kNone)
                return shifted;
            const uint32_t other =
                ops_[existing].movedIn == roundStamp_
                    ? laterOpShiftedOnto(delta, process, existing, id, namePath, hashes)
                : ops_[existing].seenIn != roundStamp_
                    ? earlierOpShiftedOnto(delta, process, existing, id, namePath, hashes)
                    : kNone;
            if (other != kNone) return other;
        }
        OpState& op = ops_[existing];
        if (!type.empty() && !op.typed) {
            op.typed = true;
            delta.opUpdates.push_back({existing, std::string(type), {}});
        }
        return existing;
    }
    const std::string_view parentId = parentIdOf(id);
    const size_t nameSplit = namePath.rfind('/');
    std::string ownName(nameSplit == std::string_view::npos ? namePath
                                                            : namePath.substr(nameSplit + 1));
    // Name ancestors from the path only when it has one component per id component.
    const auto idDepth = std::count(id.begin(), id.end(), '_');
    const auto nameDepth = std::count(namePath.begin(), namePath.end(), '/');
    std::string_view parentPath;
    if (idDepth == nameDepth && nameSplit != std::string_view::npos)
        parentPath = namePath.substr(0, nameSplit);
    if (ownName.empty()) ownName = id;
    const uint32_t parent =
        parentId.empty() ? kNone : ensureOp(delta, process, parentId, parentPath, {});
    if (!namePath.empty())
        if (const uint32_t known =
                opRunElsewhere(delta, process, parent, parentId, id, namePath, hashes);
            known != kNone)
            return known;
    const uint32_t index = index_.addOp(process, id, namePath, hashes);
    OpState state;
    state.process = process;
    state.parent = parent;
    state.bornIn = roundStamp_;
    state.typed = !type.empty();
    ops_.push_back(state);
    delta.ops.push_back({process,
                         parent,
                         std::string(id),
                         std::move(ownName),
                         std::string(type),
                         {},
                         std::nullopt});
    return index;
}

namespace {
// How many ops of one name path, and for each how many of one id, opRunElsewhere looks at: a
// crafted dump of a million keys of one name costs at most 64 x 8 steps a key.
constexpr int kMaxOpsOfAPathLookedAt = 64, kMaxOpsOfAnIdLookedAt = 8;
// How far apart two ops of one name may be for earlierOpShiftedOnto to look between them.
constexpr int64_t kMaxPositionsBetween = 64;

// `parentId` and `local` joined as an id ("2" and "9": "2_9").
void joinId(std::string& id, std::string_view parentId, std::string_view local) {
    id.assign(parentId);
    if (!id.empty()) id += '_';
    id += local;
}
}  // namespace

uint32_t AtbDumpReader::shiftedHere(uint32_t process, std::string_view id,
                                    std::string_view namePath) const {
    const auto it = runElsewhere_.find(std::make_tuple(process, id, namePath));
    return it != runElsewhere_.end() && it->second.stamp == roundStamp_ ? it->second.op : kNone;
}

uint32_t AtbDumpReader::ranUnder(DumpDelta& delta, uint32_t process, std::string_view id,
                                 std::string_view namePath, uint32_t op) {
    const auto key = std::make_tuple(process, id, namePath);
    if (auto it = runElsewhere_.find(key); it != runElsewhere_.end())
        it->second = {op, roundStamp_};  // (the key of an earlier round: no strings built)
    else
        runElsewhere_.emplace(std::make_tuple(process, std::string(id), std::string(namePath)),
                              RunElsewhere{op, roundStamp_});
    ops_[op].movedIn = roundStamp_;
    delta.roundIds.push_back({op, static_cast<int32_t>(stampRound_), std::string(id)});
    return op;
}

uint32_t AtbDumpReader::laterOpShiftedOnto(DumpDelta& delta, uint32_t process, uint32_t existing,
                                           std::string_view id, std::string_view namePath,
                                           const ReaderIndex::OpHashes& hashes) {
    const int64_t position = positionOfId(index_.idOf(existing));
    if (position < 0) return kNone;
    const uint32_t parent = ops_[existing].parent;
    uint32_t found = kNone;
    int64_t foundAt = 0;
    index_.forEachOpWithPath(process, namePath, hashes, kMaxOpsOfAPathLookedAt,
                             [&](uint32_t candidate) {
                                 // The first after it (ops of one name keep their order) not met in
                                 // this round.
                                 const OpState& state = ops_[candidate];
                                 if (state.parent != parent || state.seenIn == roundStamp_)
                                     return false;
                                 const int64_t own = positionOfId(index_.idOf(candidate));
                                 if (own <= position || (found != kNone && own >= foundAt))
                                     return false;
                                 found = candidate;
                                 foundAt = own;
                                 return false;
                             });
    return found == kNone ? kNone : ranUnder(delta, process, id, namePath, found);
}

bool AtbDumpReader::takenInRound(uint32_t process, const std::string& at, std::string_view namePath,
                                 uint32_t op) const {
    bool taken = false;
    index_.forEachOpWithId(process, at, kMaxOpsOfAnIdLookedAt, [&](uint32_t other) {
        taken = ops_[other].seenIn == roundStamp_ && index_.namePathOf(other) != namePath;
        return taken;
    });
    if (taken) return true;
    for (auto it = runElsewhere_.lower_bound(
             std::make_tuple(process, std::string_view(at), std::string_view()));
         it != runElsewhere_.end() && std::get<0>(it->first) == process &&
         std::get<1>(it->first) == at;
         ++it)
        if (it->second.stamp == roundStamp_ && it->second.op != op) return true;
    return false;
}

uint32_t AtbDumpReader::earlierOpShiftedOnto(DumpDelta& delta, uint32_t process, uint32_t existing,
                                             std::string_view id, std::string_view namePath,
                                             const ReaderIndex::OpHashes& hashes) {
    const int64_t position = positionOfId(id);
    if (position < 0) return kNone;
    const uint32_t parent = ops_[existing].parent;
    const std::string_view parentId = parentIdOf(id);
    uint32_t found = kNone;
    std::string at;
    index_.forEachOpWithPath(
        process, namePath, hashes, kMaxOpsOfAPathLookedAt, [&](uint32_t candidate) {
            // The first added of those before it (ops of one name keep their order).
            if (candidate >= existing || candidate >= found || ops_[candidate].parent != parent ||
                ops_[candidate].seenIn == roundStamp_)
                return false;
            const int64_t own = positionOfId(index_.idOf(candidate));
            if (own < 0 || own >= position || position - own > kMaxPositionsBetween) return false;
            joinId(at, parentId, localIdOf(index_.idOf(candidate)));
            if (!takenInRound(process, at, namePath, candidate)) return false;
            // Had the ops between the two run in their places, `existing` would be in its own.
            for (int64_t between = own + 1; between < position; ++between) {
                joinId(at, parentId, std::to_string(between));
                bool ranThere = false;  // (an op new in this round is none of them)
                index_.forEachOpWithId(process, at, kMaxOpsOfAnIdLookedAt, [&](uint32_t other) {
                    ranThere =
                        ops_[other].seenIn == roundStamp_ && ops_[other].bornIn != roundStamp_;
                    return ranThere;
                });
                if (ranThere) return false;
            }
            found = candidate;
            return false;
        });
    return found == kNone ? kNone : ranUnder(delta, process, id, namePath, found);
}

uint32_t AtbDumpReader::opRunElsewhere(DumpDelta& delta, uint32_t process, uint32_t parent,
                                       std::string_view parentId, std::string_view id,
                                       std::string_view namePath,
                                       const ReaderIndex::OpHashes& hashes) {
    if (roundStamp_ == 0) return kNone;
    if (const uint32_t shifted = shiftedHere(process, id, namePath); shifted != kNone)
        return shifted;
    // Of the ops that could be it, the first added (ops of one name under one parent keep
    // their order from round to round).
    uint32_t found = kNone;
    std::string usual;
    index_.forEachOpWithPath(
        process, namePath, hashes, kMaxOpsOfAPathLookedAt, [&](uint32_t candidate) {
            const OpState& state = ops_[candidate];
            if (candidate >= found || state.parent != parent || state.seenIn == roundStamp_)
                return false;
            // Its usual position, under this round's parent.
            joinId(usual, parentId, localIdOf(index_.idOf(candidate)));
            // Or the parent moved, this one with it. (Not: its new position is another op's own,
            // one left out; that op may run later in the round, the known one at its own key,
            // making one op of two runs a round.)
            if (usual == id || takenInRound(process, usual, namePath, candidate)) found = candidate;
            return false;
        });
    return found == kNone ? kNone : ranUnder(delta, process, id, namePath, found);
}

void AtbDumpReader::enterRound(uint32_t process, int64_t round) {
    stampProcess_ = process;
    stampRound_ = round;
    const auto [it, added] = roundStamps_.try_emplace({process, round}, 0);
    if (added) it->second = static_cast<uint32_t>(roundStamps_.size());
    roundStamp_ = it->second;
}

namespace {
constexpr uint64_t kBytesPerFileListed = 2048;
// Who says a process the status says is running is gone (format::settleVanishedProcesses).
constexpr const char* kSettledBy = "the reader (its process is gone, its status was not updated)";
}  // namespace

void AtbDumpReader::pollStatus(DumpDelta& delta) {
    const std::string path = root_ + "/" + format::kStatusFileName;
    const auto stamp = format::fileStamp(path);
    const int statError = errno;
    hasStatusFile_ = stamp.has_value();
    if (!stamp) {
        // There, but out of reach (a dump folder the user may not enter): said, not taken for a
        // dump without one. Said once, as its error.
        if (statError != ENOENT && statError != ENOTDIR) {
            const std::string error = std::strerror(statError);
            if (!delta.statusError && error != unreachableStatus_) {
                delta.problems.push_back(path + ": " + error);
                delta.statusError = error;
            }
            unreachableStatus_ = error;
        }
        return;
    }
    unreachableStatus_.clear();
    if (*stamp == statusStamp_) {
        // Unchanged: a process it says is running may have gone since (killed with probe run).
        if (lastStatus_ && lastStatus_->state == format::DumpState::Running &&
            format::settleVanishedProcesses(*lastStatus_, kSettledBy))
            takeStatus(delta, *lastStatus_);
        return;
    }
    statusStamp_ = *stamp;
    std::string error;
    std::optional<format::DumpStatus> status;
    try {
        status = format::readStatusFile(root_, &error);
    } catch (const std::exception& e) {  // a field of the wrong type
        error = std::string("not a status file this version understands: ") + e.what();
    }
    if (!status) {
        // One problem a line (a status file none of whose processes can be read says why, a
        // line for each).
        size_t start = 0;
        for (size_t end = 0; end != std::string::npos; start = end + 1) {
            end = error.find('\n', start);
            delta.problems.push_back(path + ": " + error.substr(start, end - start));
        }
        delta.statusError = error.substr(0, error.find('\n'));
        return;
    }
    // Values of the wrong type, read as defaults ("state": [] read as running): said, once per
    // change of the file.
    for (const auto& issue : status->issues) delta.problems.push_back(path + ": " + issue);
    format::settleVanishedProcesses(*status, kSettledBy);
    lastStatus_ = status;
    takeStatus(delta, *status);
}

void AtbDumpReader::takeStatus(DumpDelta& delta, const format::DumpStatus& status) {
    state_ = status.state;
    endedWritingAll_.clear();  // a process may write again (its probe started again)
    for (const auto& p : status.processes)
        if (p.state != format::DumpState::Running)
            endedWritingAll_[p.pid] = p.state == format::DumpState::Complete && !p.cutOff &&
                                      p.dumpStopped.empty() && p.droppedRows == 0;
    delta.status = status;
}

void AtbDumpReader::mergeStructureNode(DumpDelta& delta, uint32_t process, uint32_t parent,
                                       std::string& id, std::string& namePath, size_t position,
                                       const format::StructureNode& node) {
    // `id` and `namePath` hold the parent's (empty for a top-level node): this node's are
    // appended, and its children's after them, then taken off again (a hundred thousand nodes:
    // no string of their own for either).
    const size_t parentIdSize = id.size(), parentPathSize = namePath.size();
    const bool topLevel = parentIdSize == 0;  // a parent's id is never empty
    std::string_view name;
    std::string topName;  // a top-level node's name (as splitNameAndId gives it)
    if (topLevel) {
        auto [n, suffix] = splitNameAndId(node.opName);
        id = suffix.empty() ? std::to_string(position) : suffix;
        topName = suffix.empty() ? node.opName : n;
        name = topName;
    } else {
        // A child's id is its parent's plus its position; its opName ends with the id (this
        // probe) or with its position alone.
        char digits[24];
        const std::string_view local(
            digits, static_cast<size_t>(
                        std::to_chars(digits, digits + sizeof digits, position).ptr - digits));
        id.append(1, '_').append(local);
        // The name before "_<suffix>" when opName ends so and has a name before it.
        const std::string_view opName = node.opName;
        auto nameBefore = [&](std::string_view suffix) {
            return opName.size() > suffix.size() + 1 && endsWith(opName, suffix) &&
                   opName[opName.size() - suffix.size() - 1] == '_';
        };
        if (nameBefore(id))
            name = opName.substr(0, opName.size() - id.size() - 1);
        else if (nameBefore(local))
            name = opName.substr(0, opName.size() - local.size() - 1);
        else
            name = opName;
    }
    if (name.empty()) name = id;
    std::string param = paramText(node.param);
    if (!topLevel) namePath.append(1, '/');  // as statistic.csv has it
    namePath.append(name);
    const auto hashes = ReaderIndex::hashesOf(process, id, namePath);
    uint32_t op = index_.findOp(process, id, namePath, hashes);
    if (op != kNone) {
        OpState& state = ops_[op];
        state.fromStructure = true;
        const bool needsType = !state.typed && !node.opType.empty();
        if (needsType || (!param.empty() && !state.hasParam)) {
            delta.opUpdates.push_back({op, needsType ? node.opType : std::string(), param});
            state.typed = state.typed || needsType;
            state.hasParam = state.hasParam || !param.empty();
        }
    } else {
        op = index_.addOp(process, id, namePath, hashes);
        OpState state;
        state.process = process;
        state.parent = parent;
        state.typed = !node.opType.empty();
        state.hasParam = !param.empty();
        state.fromStructure = true;
        ops_.push_back(state);
        delta.ops.push_back(
            {process, parent, id, std::string(name), node.opType, std::move(param), std::nullopt});
    }
    // Rows usually follow the structure's order: the op described after this one is the guess
    // for the op whose rows follow its rows (until rows say otherwise).
    if (nextOp_.size() < ops_.size()) nextOp_.resize(ops_.size(), kNone);
    if (lastStructureOp_ != kNone && nextOp_[lastStructureOp_] == kNone)
        nextOp_[lastStructureOp_] = op;
    lastStructureOp_ = op;
    for (size_t i = 0; i < node.nodes.size(); ++i)
        mergeStructureNode(delta, process, op, id, namePath, i, node.nodes[i]);
    id.resize(parentIdSize);
    namePath.resize(parentPathSize);
}

namespace {

// A structure file read and checked, possibly on another thread.
struct ParsedStructure {
    std::string path, processKey, layerId;
    bool isModel = false;
    bool checkOnly = false;  // a layer file whose nodes its model file holds: children not kept
    std::optional<format::ModelStructure> model;
    std::optional<format::StructureNode> layer;
    std::string problem;  // when it cannot be used
    // A big model file's text, cut where its top-level nodes lie (read side by side, and the
    // layer files compared with them), kept until the layer files are checked.
    std::string text;
    std::optional<format::ModelTextParts> parts;
};

// Model files this big are read in parts on every thread; smaller ones whole, side by side.
constexpr size_t kModelBytesReadInParts = 1u << 20;

// How many nodes a structure holds: room for its ops in a delta at once.
size_t countNodes(const std::vector<format::StructureNode>& nodes) {
    size_t count = nodes.size();
    for (const auto& node : nodes) count += countNodes(node.nodes);
    return count;
}

// `work` run for the file; what it throws (out of memory on a huge file) becomes the file's
// problem, not a crash.
template <typename Work>
void guarded(ParsedStructure& file, Work&& work) {
    try {
        work();
    } catch (const std::exception& e) {
        file.problem = file.path + ": " + e.what();
    }
}

// The file's text, or nullopt with its problem said.
std::optional<std::string> readStructureText(ParsedStructure& file) {
    std::string why;
    auto text = format::readRegularFile(file.path, format::kStructureJsonLimits.maxBytes, &why);
    if (!text) {
        format::JsonError error;
        error.source = file.path;
        error.problem = format::printableText(why);
        file.problem = error.toString();
    }
    return text;
}

// `text` read into the file's structs; a model in parts by `forEach` when it was cut.
void parseStructureText(ParsedStructure& file, std::string_view text,
                        const format::ForEachIndex* forEach = nullptr) {
    // Read straight into the structs: the JSON tree of a big model costs more than the parse.
    auto report = [&](auto& read, const char* what) {
        if (read.jsonError)
            file.problem = read.jsonError->toString();
        else if (!read.value)
            file.problem = file.path + ": not a " + what + " structure file: " + read.error;
    };
    format::StructureReadOptions options;
    options.tensorNames = false;  // the index keeps no tensor names: they are checked, not kept
    if (file.isModel) {
        auto read = file.parts && forEach ? format::readModelStructure(text, file.path, *file.parts,
                                                                       options, *forEach)
                                          : format::readModelStructure(text, file.path, options);
        report(read, "model");
        file.model = std::move(read.value);
    } else {
        options.children = !file.checkOnly;
        auto read = format::readLayerStructure(text, file.path, options);
        report(read, "layer");
        file.layer = std::move(read.value);
    }
}

void parseStructure(ParsedStructure& file) {
    guarded(file, [&] {
        if (const auto text = readStructureText(file)) parseStructureText(file, *text);
    });
}

// Whether a layer file's text is that of the top-level node at its position in a model file
// read without a problem: then it reads without one too (a node read in the model, and no deeper
// than there), and need not be read again.
bool sameAsModelNode(std::string_view text, const ParsedStructure& model,
                     const std::string& layerId) {
    if (!model.model || !model.parts || !allDigits(layerId) || layerId.size() > 9) return false;
    const size_t position = std::strtoull(layerId.c_str(), nullptr, 10);
    if (position >= model.parts->nodes.size()) return false;
    auto isSpace = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
    while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
    while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
    return text == model.parts->nodes[position];
}

}  // namespace

void AtbDumpReader::pollStructure(DumpDelta& delta) {
    // Every changed file is parsed first, side by side (a big model's are tens of MB of JSON),
    // then merged in order: the model file first, as it lists the layer-level ops in the order
    // they were first seen and holds what each layer file holds.
    std::vector<ParsedStructure> files;
    std::set<std::string> processesWithModel;  // of the model files found
    for (const char* kind : {"model", "layer"}) {
        const bool isModel = std::string(kind) == "model";
        const std::string dir = root_ + "/info/" + kind;
        for (const auto& processKey : format::listDirectory(dir, format::EntryKind::Directories)) {
            const std::string processDir = dir + "/" + processKey;
            for (const auto& file : format::listDirectory(processDir, format::EntryKind::Files)) {
                if (!endsWith(file, ".json") || file[0] == '.')
                    continue;  // .tmp files are being written
                const std::string path = processDir + "/" + file;
                const auto stamp = format::fileStamp(path);
                if (!stamp) continue;
                if (isModel) processesWithModel.insert(processKey);
                FileStamp& known = structureFiles_[path];
                if (known == *stamp) continue;
                known = *stamp;
                ParsedStructure parsed;
                parsed.path = path;
                parsed.processKey = processKey;
                parsed.isModel = isModel;
                // A model file holds every layer's nodes: its layer files (merged after it) are
                // only checked, and read whole again should one describe a layer it lacks.
                parsed.checkOnly = !isModel && processesWithModel.count(processKey) > 0;
                if (!isModel)
                    parsed.layerId = splitNameAndId(file.substr(0, file.size() - 5))
                                         .second;  // "<OpName>_<id>.json"
                files.push_back(std::move(parsed));
            }
        }
    }
    std::vector<size_t> models, layers;
    for (size_t i = 0; i < files.size(); ++i) (files[i].isModel ? models : layers).push_back(i);
    // Model files first, side by side: read, and a big one cut where its top-level nodes lie
    // (small ones are read whole here).
    parallelFor(models.size(), usefulThreads(8), [&](size_t i, unsigned) {
        ParsedStructure& file = files[models[i]];
        guarded(file, [&] {
            auto text = readStructureText(file);
            if (!text) return;
            if (text->size() >= kModelBytesReadInParts) file.parts = format::cutModelText(*text);
            if (file.parts)
                file.text = std::move(*text);
            else
                parseStructureText(file, *text);
        });
    });
    // Then each cut one in parts on every thread (one big model: the cores share it).
    const format::ForEachIndex onEveryThread = [](size_t count,
                                                  const std::function<void(size_t)>& read) {
        std::exception_ptr failure;  // of a part (out of memory): rethrown here
        std::mutex failureMutex;
        parallelFor(count, usefulThreads(8), [&](size_t i, unsigned) {
            try {
                read(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(failureMutex);
                failure = std::current_exception();
            }
        });
        if (failure) std::rethrow_exception(failure);
    };
    for (const size_t i : models) {
        ParsedStructure& file = files[i];
        if (file.parts) guarded(file, [&] { parseStructureText(file, file.text, &onEveryThread); });
    }
    // Then the layer files, side by side. One only checked whose text is its node's in the
    // model file is not read again.
    parallelFor(layers.size(), usefulThreads(8), [&](size_t i, unsigned) {
        ParsedStructure& file = files[layers[i]];
        if (!file.checkOnly) {
            parseStructure(file);
            return;
        }
        guarded(file, [&] {
            const auto text = readStructureText(file);
            if (!text) return;
            for (const size_t m : models) {
                if (files[m].processKey == file.processKey &&
                    sameAsModelNode(*text, files[m], file.layerId)) {
                    file.layer.emplace();  // read (its children are not kept)
                    return;
                }
            }
            parseStructureText(file, *text);
        });
    });
    for (const size_t i : models) {
        files[i].parts.reset();
        std::string().swap(files[i].text);
    }
    std::string id, namePath;  // mergeStructureNode's, reused
    for (auto& file : files) {
        const uint32_t process = index_.processIndex(delta, file.processKey);
        // A layer the model file (or another layer file) described already is only checked: a
        // broken file is a problem to report even when nothing is missing.
        bool describedAlready = false;
        if (!file.isModel) {
            const uint32_t existing = index_.findOp(process, file.layerId);
            describedAlready = existing != kNone && ops_[existing].fromStructure;
        }
        if (!file.problem.empty()) {
            delta.problems.push_back(std::move(file.problem));
            continue;
        }
        if (file.model) {
            const size_t nodes = countNodes(file.model->nodes);
            delta.ops.reserve(delta.ops.size() + nodes);
            index_.reserveOps(nodes);
            ops_.reserve(ops_.size() + nodes);
            nextOp_.reserve(ops_.size() + nodes);
            for (size_t i = 0; i < file.model->nodes.size(); ++i)
                mergeStructureNode(delta, process, kNone, id, namePath, i, file.model->nodes[i]);
        } else if (file.layer && !describedAlready) {
            if (file.checkOnly) {  // its nodes are needed after all
                file.checkOnly = false;
                file.layer.reset();
                parseStructure(file);
                if (!file.problem.empty()) {
                    delta.problems.push_back(std::move(file.problem));
                    continue;
                }
                if (!file.layer) continue;
            }
            const size_t position = file.layerId.empty()
                                        ? index_.opCountOf(process)
                                        : std::strtoull(file.layerId.c_str(), nullptr, 10);
            mergeStructureNode(delta, process, kNone, id, namePath, position, *file.layer);
        }
    }
}

void AtbDumpReader::malformedLine(DumpDelta& delta, const std::string& path, CsvFile& file,
                                  const std::string& why) {
    ++file.malformed;
    if (file.malformed <= kReportedMalformedPerFile)
        delta.problems.push_back(path + ":" + std::to_string(file.lineNumber) +
                                 ": row skipped: " + why);
    else if (file.malformed == kReportedMalformedPerFile + 1)
        delta.problems.push_back(path + ": more malformed rows skipped (only the first " +
                                 std::to_string(kReportedMalformedPerFile) + " are listed)");
}

void AtbDumpReader::addRow(DumpDelta& delta, CsvFile& file, uint32_t process,
                           const format::StatRowView& row, uint64_t lineOffset) {
    if (row.opId.empty()) {
        malformedLine(delta, file.path, file, "empty Op Id");
        return;
    }
    // A row belongs where it lies: one saying another round or process (a file copied into the
    // wrong folder, or edited) was read as that round's, said nowhere ("rounds 0..7 (5)").
    if (row.round != file.round || row.devicePid != file.devicePid) [[unlikely]] {
        malformedLine(delta, file.path, file,
                      row.round != file.round
                          ? "Execution Count " + std::to_string(row.round) +
                                " is not the round of its folder (" + std::to_string(file.round) +
                                ")"
                          : "Device and PID " + std::string(row.devicePid) +
                                " is not the process of its folder (" + file.devicePid + ")");
        return;
    }
    // An op's rows come one after the other: look it up once for them. The row names the op of
    // the row before when it has that op's own key (no copy of the key kept), or the key that
    // row had, copied, when the op found for it has another (an empty name path finds the first
    // op with the id).
    const bool sameOp =
        lastRowOp_.op != kNone &&
        (lastRowOp_.ownKey ? index_.isOp(lastRowOp_.op, process, row.opId, row.opName)
                           : process == lastRowOp_.process && row.opId == lastRowOp_.id &&
                                 row.opName == lastRowOp_.namePath);
    // (Before a lookup: ensureOp asks what was met in this round.)
    const bool newRound = process != stampProcess_ || row.round != stampRound_;
    if (newRound) enterRound(process, row.round);
    if (!sameOp) {
        const uint32_t previous = lastRowOp_.op;
        const uint32_t predicted = previous < nextOp_.size() ? nextOp_[previous] : kNone;
        uint32_t op;
        bool ownKey = true;  // the op found has the row's key
        // (Not one that ran under another key in this round: its own is a later op's then.)
        if (predicted != kNone && ops_[predicted].movedIn != roundStamp_ &&
            index_.isOp(predicted, process, row.opId, row.opName)) {
            op = predicted;
            OpState& state = ops_[op];
            if (!row.opType.empty() && !state.typed) {  // as ensureOp does
                state.typed = true;
                delta.opUpdates.push_back({op, std::string(row.opType), {}});
            }
        } else {
            // Looked at only here, where an op may be made: no op of the index is deeper.
            if (std::count(row.opId.begin(), row.opId.end(), '_') > kMaxOpDepth) [[unlikely]] {
                malformedLine(
                    delta, file.path, file,
                    "Op Id nested deeper than " + std::to_string(kMaxOpDepth) + " levels");
                return;
            }
            op = ensureOp(delta, process, row.opId, row.opName, row.opType);
            // ensureOp found or made the op of exactly this key, or one of another key (one
            // with the id, the name path being empty; or one that ran elsewhere in other rounds).
            ownKey = index_.isOp(op, process, row.opId, row.opName);
        }
        if (nextOp_.size() < ops_.size()) nextOp_.resize(ops_.size(), kNone);
        if (previous != kNone && previous < nextOp_.size()) nextOp_[previous] = op;
        lastRowOp_.op = op;
        lastRowOp_.ownKey = ownKey;
        if (!lastRowOp_.ownKey) {
            lastRowOp_.process = process;
            lastRowOp_.id = row.opId;
            lastRowOp_.namePath = row.opName;
        }
    }
    const uint32_t op = lastRowOp_.op;
    if (!sameOp || newRound) markSeen(op);  // (one op's rows may end a round and begin the next)
    StatRecord record;
    record.slot = index_.slotIndex(delta, op, row.isOutput, row.index);
    record.round = static_cast<int32_t>(row.round);
    record.dtype = intern(delta, row.dtype, lastDtype_);
    record.format = intern(delta, row.format, lastFormat_);
    record.shape = intern(delta, row.shape, lastShape_);
    record.source = file.source;
    record.lineOffset = lineOffset;
    record.hasTensorFile = !row.tensorPath.empty();
    const std::optional<double>* values[] = {&row.max, &row.min, &row.mean, &row.norm};
    unsigned present = 0;  // (the record's is a bit-field: set once)
    for (int i = 0; i < kStatCount; ++i) {
        if (!*values[i]) continue;
        record.value[i] = **values[i];
        present |= 1u << i;
    }
    record.present = present;
    record.anomalies = rowAnomalies(record.value, present);
    if (statisticsFromFiles_ && !present && record.hasTensorFile)
        awaitingStatistics_.push_back({static_cast<uint32_t>(rowsRead_ + delta.rows.size()),
                                       tensorPathInDump(file.path, std::string(row.tensorPath)),
                                       std::string(row.shape)});
    delta.rows.push_back(record);
}

template <typename LineAt, typename Add>
void AtbDumpReader::parseAndAdd(size_t lines, const LineAt& lineAt, const Add& add) {
    parsedLines_.resize(lines);
    OrderedPieces pieces((lines + kParsePieceLines - 1) / kParsePieceLines);
    std::atomic<bool> helperFailed{false};
    auto parse = [&](size_t piece, std::string& error) {
        const size_t end = std::min(lines, (piece + 1) * kParsePieceLines);
        for (size_t i = piece * kParsePieceLines; i < end; ++i) {
            ParsedLine& line = parsedLines_[i];
            // A quoted field is unquoted into scratch strings: such (rare) lines are left to be
            // parsed in order.
            const auto ok = format::parseUnquotedStatRow(lineAt(i), line.row, &error);
            line.deferred = !ok;
            if (line.deferred) continue;
            line.ok = *ok;
            if (!line.ok) line.error = std::move(error);
        }
    };
    parseHelper_.start([&] {
        try {
            std::string error;
            pieces.doAll([&](size_t piece) { parse(piece, error); });
        } catch (...) {  // out of memory: said to the waiting thread, rethrown by wait()
            helperFailed = true;
            throw;
        }
    });
    try {
        std::string error;
        auto parseHere = [&](size_t piece) { parse(piece, error); };
        for (size_t piece = 0; piece < pieces.count(); ++piece) {
            if (!pieces.waitFor(piece, parseHere, [&] { return helperFailed.load(); }))
                parseHelper_.wait();  // rethrows the helper's failure
            const size_t end = std::min(lines, (piece + 1) * kParsePieceLines);
            for (size_t i = piece * kParsePieceLines; i < end; ++i) add(i);
        }
    } catch (...) {  // out of memory: the helper's pieces refer to this frame
        pieces.stop();
        try {
            parseHelper_.wait();
        } catch (...) {
        }
        throw;
    }
    parseHelper_.wait();
}

uint64_t AtbDumpReader::pollCsv(const RoundFile& listed, uint64_t budget, DumpDelta& delta) {
    const std::string& path = listed.path;
    const std::string& devicePid = listed.devicePid;
    auto [it, isNew] = csvFiles_.try_emplace(path);
    CsvFile& file = it->second;
    if (isNew) {
        file.source = sourceCount_++;
        file.path = path;
        file.devicePid = listed.devicePid;
        file.round = listed.round;
        delta.sources.push_back(path);
    }
    uint64_t size = 0;
    std::string openError;
    // A FIFO or device in place of the file is refused, never read (it could block or never end).
    const int fd = format::openRegularFile(path, UINT64_MAX, &size, &openError);
    if (fd < 0) {
        if (!file.refused) delta.problems.push_back(path + ": " + openError);
        file.refused = true;
        return 0;
    }
    file.refused = false;
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    if (size < file.offset) {
        if (file.lastSize != static_cast<int64_t>(size))
            delta.problems.push_back(path + " shrank from " + std::to_string(file.offset) + " to " +
                                     std::to_string(size) +
                                     " bytes while being read; the rows read before are kept");
        file.lastSize = static_cast<int64_t>(size);
        return 0;
    }
    const bool stable = file.lastSize == static_cast<int64_t>(size);
    file.lastSize = static_cast<int64_t>(size);
    const auto readFailed = [&](int error) {
        if (file.readFailed) return;
        file.readFailed = true;
        delta.problems.push_back(path + ": cannot be read from byte " +
                                 std::to_string(file.offset) + ": " + std::strerror(error) +
                                 "; the rows from there on are not read");
    };
    // Whether anyone may still write the file: a line or a header still missing once nobody
    // does is missing for good.
    const bool writerDone =
        (state_ && *state_ != format::DumpState::Running) || (!hasStatusFile_ && stable);
    if (file.offset == size) {
        // Empty, or a file whose size says nothing (procfs): one byte tells which (a link to
        // /proc/self/mem dropped its round without a word).
        char byte;
        if (size == 0 && ::pread(fd, &byte, 1, 0) < 0) {
            readFailed(errno);
        } else if (size == 0 && writerDone && !file.saidEmpty) {
            // The runtime writes the header as it creates the file: an empty one was cut (a
            // full disk, a copy interrupted), and its round would vanish without a word.
            file.saidEmpty = true;
            delta.problems.push_back(path + ": empty (0 bytes, not even the header); no rows");
        }
        return 0;
    }

    const uint32_t process = index_.processIndex(delta, devicePid);
    uint64_t consumed = 0;
    uint64_t chunk = std::min<uint64_t>(kMaxReadChunk, std::max<uint64_t>(budget, 64u << 10));
    // A row over the limit, whole in the read or not: skipped, said with its line number.
    const auto rowTooLong = [&] {
        malformedLine(delta, path, file, "longer than " + std::to_string(kMaxRowBytes) + " bytes");
    };
    // `parsed`: the line parsed ahead (on another thread), or null to parse it here.
    auto handleLine = [&](std::string_view line, uint64_t lineOffset, const ParsedLine* parsed) {
        ++file.lineNumber;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!file.headerChecked) {
            file.headerChecked = true;
            // A file saved by a spreadsheet may begin with a byte order mark.
            if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
            if (line == format::kStatisticCsvHeader) return;
            if (line.rfind("Device and PID", 0) == 0) {
                delta.problems.push_back(
                    path + ":1: unexpected header, read as if it were the standard one");
                return;
            }
            delta.problems.push_back(path + ":1: no header line; rows read anyway");
        }
        if (line.empty()) return;
        ++file.dataLines;
        // As a row without its end in the read is (below): whatever the read's size.
        if (line.size() > kMaxRowBytes) {
            rowTooLong();
            return;
        }
        if (parsed && !parsed->deferred) {
            if (parsed->ok)
                addRow(delta, file, process, parsed->row, lineOffset);
            else
                malformedLine(delta, path, file, parsed->error);
            return;
        }
        std::string error;
        format::StatRowView row;
        if (!format::parseStatRow(line, row, rowScratch_, &error)) {
            malformedLine(delta, path, file, error);
            return;
        }
        addRow(delta, file, process, row, lineOffset);
    };
    auto skip = [&](uint64_t bytes) {
        file.offset += bytes;
        consumed += bytes;
    };
    while (file.offset < size && consumed < budget) {
        const uint64_t want = std::min<uint64_t>(size - file.offset, chunk);
        // Kept from read to read, and not filled before the read fills it: 120 MB of rows would
        // be zeroed for nothing.
        if (readBufferSize_ < want) {
            readBuffer_.reset();
            readBuffer_.reset(new char[want]);
            readBufferSize_ = want;
        }
        const ssize_t n = ::pread(fd, readBuffer_.get(), want, static_cast<off_t>(file.offset));
        if (n < 0) readFailed(errno);  // EIO: the rows from here on are not there to read
        if (n <= 0) break;
        file.readFailed = false;
        const std::string_view buffer(readBuffer_.get(), static_cast<size_t>(n));
        // Read from the start while no line end was known (the offset stays 0 until one is):
        // a lone CR ending the whole file, once nobody writes it, ends its header.
        if (file.offset == 0)
            file.lineEnd =
                format::firstLineEnd(buffer, writerDone && static_cast<uint64_t>(n) == size)
                    .value_or('\n');
        const char lineEnd = file.lineEnd;
        size_t start = 0;
        if (file.skippingLongRow) {  // the rest of a row over the limit, said when it began
            const size_t end = buffer.find(lineEnd);
            if (end == std::string::npos) {
                skip(buffer.size());
                continue;
            }
            start = end + 1;
            file.skippingLongRow = false;
        }
        const size_t lastNewline = buffer.rfind(lineEnd);
        if (lastNewline == std::string::npos || lastNewline < start) {
            if (buffer.size() - start > kMaxRowBytes) {
                skip(start);
                ++file.lineNumber;
                ++file.dataLines;
                rowTooLong();
                file.headerChecked = true;
                file.skippingLongRow = true;
                skip(buffer.size() - start);
                continue;
            }
            skip(start);
            if (file.offset + (buffer.size() - start) < size) {  // one line longer than the chunk
                chunk *= 2;
                continue;
            }
            break;  // a partial last line: the writer has not finished it (yet)
        }
        lineStarts_.clear();
        for (size_t at = start; at <= lastNewline; at = buffer.find(lineEnd, at) + 1)
            lineStarts_.push_back(at);
        lineStarts_.push_back(lastNewline + 1);  // where the line after the last would start
        const size_t lines = lineStarts_.size() - 1;
        auto lineAt = [&](size_t i) {
            return buffer.substr(lineStarts_[i], lineStarts_[i + 1] - 1 - lineStarts_[i]);
        };
        // Room for this read's rows at once (by doubling, as push_back would, but once).
        if (delta.rows.capacity() < delta.rows.size() + lines)
            delta.rows.reserve(std::max(2 * delta.rows.capacity(), delta.rows.size() + lines));
        if (lines < kParallelParseLines || usefulThreads(2) < 2) {
            for (size_t i = 0; i < lines; ++i)
                handleLine(lineAt(i), file.offset + lineStarts_[i], nullptr);
        } else {
            parseAndAdd(lines, lineAt, [&](size_t i) {
                handleLine(lineAt(i), file.offset + lineStarts_[i], &parsedLines_[i]);
            });
        }
        skip(lastNewline + 1);
    }
    // Rows are written whole, line end included: a last line without one, once nobody writes
    // any more, is a row cut short (a crash, a full disk, a copy interrupted). It may even
    // parse (a cut path), so it is reported and skipped, never taken for a real row.
    if (file.offset < size && consumed < budget && writerDone) {
        if (!file.skippingLongRow) {
            ++file.lineNumber;
            ++file.dataLines;
            malformedLine(delta, path, file,
                          "the last line is cut short (no line end): the file was truncated");
        }
        file.headerChecked = true;
        file.skippingLongRow = false;
        consumed += size - file.offset;
        file.offset = size;
    }
    return consumed;
}

DumpDelta AtbDumpReader::poll(uint64_t byteBudget) {
    DumpDelta delta = newDelta();
    if (!format::isDirectory(root_)) {
        if (!vanished_) delta.problems.push_back(root_ + " no longer exists");
        vanished_ = true;
        finished_ = true;
        return delta;
    }
    if (!sameFolderAsFirstRead(delta, vanished_)) {
        finished_ = true;
        return delta;
    }
    vanished_ = false;
    pollStatus(delta);
    pollStructure(delta);
    if (delta.ops.size() > kOpsAlonePerDelta) {
        // A big model's structure is a delta of its own: applying it and its rows at once would
        // hold up the thread that owns the index.
        delta.more = true;
        return delta;
    }
    uint64_t used = 0;
    RoundListing listing = listRoundFiles(root_);
    // Listing the rounds and looking at each file costs a few system calls a file at every poll:
    // a poll reads at least kBytesPerFileListed for each, or a training run's hundred thousand
    // rounds (2 GB of rows) took 500 polls of 100,000 files each, over ten minutes to read.
    byteBudget = std::max<uint64_t>(byteBudget, listing.files.size() * kBytesPerFileListed);
    for (auto& unread : listing.unreadEntries)
        if (unreadSaid_.insert(unread).second) delta.problems.push_back(std::move(unread));
    std::map<std::string, ProcessRows> rowsOf;  // by process key
    for (const auto& file : listing.files) {
        auto known = csvFiles_.find(file.path);
        // A file read to its end that has not changed since is not opened again (at every poll,
        // a dump of ten thousand rounds made for about eight system calls a round).
        const bool unchanged = known != csvFiles_.end() && file.regularSize &&
                               *file.regularSize > 0 && !known->second.refused &&
                               !known->second.readFailed &&
                               known->second.offset == *file.regularSize &&
                               known->second.lastSize == static_cast<int64_t>(*file.regularSize);
        if (used < byteBudget && !unchanged) {
            used += pollCsv(file, byteBudget - used, delta);
            known = csvFiles_.find(file.path);
        }
        // A file not reached in this poll (budget spent) is not known yet: offset 0.
        const uint64_t offset = known == csvFiles_.end() ? 0 : known->second.offset;
        struct stat st;
        const uint64_t size = file.regularSize ? *file.regularSize
                              : ::stat(file.path.c_str(), &st) == 0
                                  ? static_cast<uint64_t>(st.st_size)
                                  : offset;
        delta.bytesDone += offset;
        delta.bytesTotal += std::max(size, offset);
        if (offset < size && used >= byteBudget) delta.more = true;
        ProcessRows& rows = rowsOf[file.devicePid];
        if (known == csvFiles_.end()) continue;
        const CsvFile& csv = known->second;
        rows.linesOfRound[file.round] += csv.dataLines;
        rows.lines += csv.dataLines;
        rows.rows += csv.dataLines - std::min<uint64_t>(csv.malformed, csv.dataLines);
        rows.someUnread = rows.someUnread || csv.refused || csv.readFailed || csv.saidEmpty ||
                          csv.malformed > 0 ||
                          static_cast<int64_t>(csv.offset) > csv.lastSize;  // it shrank
    }
    const bool allRead = !delta.more && delta.bytesDone == delta.bytesTotal;
    for (auto& [key, rows] : rowsOf) {
        // A folder that could not be read may be any process's, or hold a round.
        rows.someUnread = rows.someUnread || !unreadSaid_.empty();
        pollRowOrder(delta, key, rows, allRead);
    }
    // (A data/ that is no folder is said as such.)
    if (allRead && lastStatus_ && format::isDirectory(root_ + "/data"))
        sayProcessesWithoutRows(delta, rowsOf);
    finished_ = state_ && *state_ != format::DumpState::Running && !delta.more &&
                delta.bytesDone == delta.bytesTotal;
    rowsRead_ += delta.rows.size();
    // New rows first, shown before statistics are computed: those at the next poll that finds
    // no new rows (the opening's rows are not held back by a big tensor file).
    if (!awaitingStatistics_.empty() && !delta.more && delta.rows.empty())
        pollStatistics(delta, byteBudget);
    if (statisticsFromFiles_) delta.statisticsPending = awaitingStatistics_.size();
    return delta;
}

void AtbDumpReader::pollStatistics(DumpDelta& delta, uint64_t budget) {
    constexpr uint32_t kReportedUnread = 10;
    uint64_t used = 0;
    std::deque<AwaitingStatistics> later;  // files not there yet, while the dump is written
    while (!awaitingStatistics_.empty() && (used == 0 || used < budget) && !stopRequested()) {
        AwaitingStatistics awaiting = std::move(awaitingStatistics_.front());
        awaitingStatistics_.pop_front();
        struct stat st;
        const bool found = ::stat(awaiting.path.c_str(), &st) == 0;
        if (!found && errno == ENOENT && !finished_) {
            // The probe writes a tensor's file before its row, but a copied or synced dump may
            // bring them in any order: looked for again at the next poll.
            later.push_back(std::move(awaiting));
            continue;
        }
        if (!awaiting.begun)
            awaiting.begun =
                std::make_unique<TensorFileStatistics>(awaiting.path, true, awaiting.shape);
        TensorFileStatistics& statistics = *awaiting.begun;
        const uint64_t before = statistics.bytesRead();
        const bool done = statistics.advance(used < budget ? budget - used : 0,
                                             [this] { return !stopRequested(); });
        used += std::max<uint64_t>(statistics.bytesRead() - before, 4096);
        // The budget is spent, or its owner is done with this reader: on at the next poll.
        if (!done) {
            awaitingStatistics_.push_front(std::move(awaiting));
            break;
        }
        const auto& stats = statistics.result();
        const std::string& error = statistics.error();
        if (stats) {
            DumpDelta::RowStatistics& computed = delta.rowStatistics.emplace_back();
            computed.row = awaiting.row;
            const double values[kStatCount] = {stats->max, stats->min, stats->mean, stats->norm};
            std::copy(values, values + kStatCount, computed.value);
        } else if (!error.empty()) {  // else no data kept, or no values with an order
            if (++statisticsUnread_ <= kReportedUnread)
                delta.problems.push_back("no statistics from the tensor file: " + error);
            else if (statisticsUnread_ == kReportedUnread + 1)
                delta.problems.push_back(
                    "more tensor files could not be read for their statistics (only the first " +
                    std::to_string(kReportedUnread) + " are listed)");
        }
    }
    for (auto& awaiting : later) awaitingStatistics_.push_back(std::move(awaiting));
}

// A process the status file says wrote rows, and ended, whose rows are not in the dump at all:
// an emptied data/ read as a complete dump of no rows ("no overflow", exit 0). Said once each.
void AtbDumpReader::sayProcessesWithoutRows(DumpDelta& delta,
                                            const std::map<std::string, ProcessRows>& rowsOf) {
    for (const auto& p : lastStatus_->processes) {
        if (p.state == format::DumpState::Running || p.rows == 0) continue;
        const std::string key = format::processFolderName(p.device, p.pid);
        if (rowsOf.count(key) || !processesSaidEmpty_.insert(key).second) continue;
        delta.problems.push_back(root_ + "/data/" + key + ": no rows there, yet " +
                                 format::kStatusFileName + " says process " +
                                 std::to_string(p.pid) + " wrote " + std::to_string(p.rows) +
                                 " rows into it: removed, or the dump was not copied whole");
    }
}

void AtbDumpReader::pollRowOrder(DumpDelta& delta, const std::string& devicePid,
                                 const ProcessRows& read, bool allRead) {
    const uint32_t process = index_.knownProcess(devicePid);
    if (process == kNone) return;  // its rows are not read yet
    auto file = rowOrderFiles_.find(devicePid);
    if (file == rowOrderFiles_.end())
        file = rowOrderFiles_
                   .emplace(devicePid, RowOrderReader(root_ + "/" + format::kRowOrderDirectory +
                                                      "/" + devicePid + ".csv"))
                   .first;
    if (file->second.done()) return;
    RowOrderReader::Rows rows;
    rows.ofRound = &read.linesOfRound;
    rows.lines = read.lines;
    rows.rows = read.rows;
    // A dump without a status file is not being written by the probe (copied, or another
    // tool's): as read, it is whole.
    const auto ended = endedWritingAll_.find(readProcessKey(DumpLayout::Atb, devicePid).pid);
    rows.final = allRead && (!hasStatusFile_ || ended != endedWritingAll_.end());
    rows.allThere = rows.final && (!hasStatusFile_ || ended->second) && !read.someUnread;
    std::vector<format::RowOrderRun> runs;
    file->second.poll(rows, runs, delta.problems);
    for (const auto& run : runs) delta.rowOrder.emplace_back(process, run);
}

}  // namespace probe::analysis
