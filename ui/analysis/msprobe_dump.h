// Reading the framework-level layout (FORMATS.md section 2) that PrecisionDebugger writes:
// <dump_path>/step<N>/rank<R>|proc<pid>/{dump.json, construct.json, stack.json,
// dump_tensor_data/}. Each entry of dump.json becomes an op (its parent module from
// construct.json), each tensor item a slot, the step its round. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/dump_reader.h"
#include "analysis/reader_index.h"
#include "probe/format/file_util.h"

namespace probe::analysis {

// The dump_path holding step<N> directories, found from it, from a step<N> directory, from a
// rank/proc directory, or from a directory holding the dump_path. nullopt when none.
std::optional<std::string> findMsprobeDumpRoot(const std::string& path);
// "step12" -> 12 (a step folder's number, as the reader takes it); -1 when not a step folder.
int64_t stepNumber(const std::string& name);

struct MsprobeEntryName {
    enum class Kind { Api, Module, ParametersGrad };
    Kind kind = Kind::Api;
    std::string prefix;       // Functional, Torch, Tensor, Aten, Distributed, VF, ... or Module
    std::string name;         // the API ("linear") or the module path ("layers.0.mlp")
    std::string moduleClass;  // modules: "Linear"
    int64_t call = 0;         // call number
    std::string direction;    // forward | backward; "" for parameters_grad
};

// "Functional.linear.0.forward", "Module.fc.Linear.backward.1",
// "Module.fc.Linear.parameters_grad.0".
std::optional<MsprobeEntryName> parseMsprobeEntryName(std::string_view entry);
// What the op tree shows as the entry's type: "Functional.linear", "Linear",
// "Linear.parameters_grad".
std::string msprobeEntryType(const MsprobeEntryName& name);

// dump.json spells non-finite statistics as Python does (NaN, Infinity, -Infinity), which is not
// JSON: returns the text with those tokens (outside strings) turned into strings "NaN", ...
std::string quoteNonFiniteJsonTokens(std::string_view text);

// A statistic value of a tensor item: a number, a bool (bool tensors: Max = any, Min = all), the
// strings made by quoteNonFiniteJsonTokens, or null (nullopt).
std::optional<double> msprobeStatValue(const nlohmann::ordered_json& value);

class MsprobeDumpReader : public DumpReader {
public:
    explicit MsprobeDumpReader(std::string root);

    DumpLayout layout() const override { return DumpLayout::Msprobe; }
    const std::string& root() const override { return root_; }
    DumpDelta poll(uint64_t byteBudget) override;
    // PrecisionDebugger writes no status file: a dump is never known to be finished.
    bool finished() const override { return false; }

private:
    using FileStamp = format::FileStamp;
    // One step<N>/<rank or proc> directory.
    struct RankDir {
        FileStamp dumpStamp, constructStamp;
        bool errorLogReported = false;
        std::set<std::string> entriesRead;
        std::unordered_map<std::string, std::string> parentOf;  // construct.json
        std::string dir;                                        // where the files are
        uint64_t bytesRead = 0;
    };
    uint64_t readRankDir(DumpDelta& delta, const std::string& dir, const std::string& processKey,
                         int32_t step, RankDir& state);
    // The last op seen under each parent (kNone: the top level) while reading one step in
    // execution order: where an op first seen in that step goes among its siblings.
    using LastChildren = std::unordered_map<uint32_t, uint32_t>;
    void addEntry(DumpDelta& delta, uint32_t op, int32_t step, const std::string& dir,
                  const nlohmann::ordered_json& value);
    void addTensors(DumpDelta& delta, uint32_t op, int32_t step, const std::string& dir,
                    const nlohmann::ordered_json& value, bool isOutput, const std::string& index);
    // `chain`: the entries whose ops are being made, outermost first (their parents' parents).
    uint32_t ensureOp(DumpDelta& delta, uint32_t process, const std::string& entry,
                      const RankDir& state, LastChildren& lastChildren,
                      std::vector<const std::string*>& chain);

    std::string root_;
    ReaderIndex index_;
    std::vector<uint32_t> parentOfOp_;             // by op index
    std::vector<uint16_t> depthOfOp_;              // by op index: 0 at the top level
    std::unordered_set<std::string> saidTooDeep_;  // rank folders whose nesting was cut
    void sayTooDeep(DumpDelta& delta, const RankDir& state, const std::string& entry);
    uint32_t sourceCount_ = 0;
    std::map<std::string, RankDir> rankDirs_;
    bool vanished_ = false;  // the folder was deleted (said once)
    // Folders named like a step that are none ("step01"), said once each (sayNotAStepFolder).
    std::set<std::string> notStepFoldersSaid_;
    void sayNotAStepFolder(DumpDelta& delta, const std::string& dir);
    // Folders and dump.json files that cannot be read (a step the user may not list), said once
    // each with the reason; forgotten once they can be read again.
    std::set<std::string> unreadableSaid_;
    void sayUnreadable(DumpDelta& delta, const std::string& path, const std::string& error,
                       const char* lost);
    // Items of the dump.json being read that are not what msprobe writes (a bare number or
    // string where a tensor or an argument object goes, an entry that is not an object): not
    // read, counted, and said once per file with the first one's entry.
    uint64_t unreadItems_ = 0;
    const std::string* currentEntry_ = nullptr;
    std::string firstUnreadEntry_;
    void noteUnreadItem();
};

}  // namespace probe::analysis
