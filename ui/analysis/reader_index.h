// What a dump reader has announced in its deltas so far: processes, ops by id per process, the
// tensor slots of each op, interned strings. One piece of bookkeeping for the readers of both
// layouts.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/dump_index.h"

namespace probe::analysis {

class ReaderIndex {
public:
    // The process with this key, announced in `delta` when new.
    uint32_t processIndex(DumpDelta& delta, const std::string& key);
    // The op with `id` and name path `namePath` in `process`, or kNone. An id alone does not
    // name an op in every layout: atb ids are positions ("2_5": the sixth child of layer 2), and
    // a layer whose control flow changes from one round to the next runs another op there. With
    // an empty `namePath`, the first op found with `id`.
    uint32_t findOp(uint32_t process, std::string_view id, std::string_view namePath = {}) const;
    // Whether `op` is the one findOp(process, id, namePath) names, without a lookup: readers
    // check the op that followed last time first (rounds repeat the same ops in order).
    bool isOp(uint32_t op, uint32_t process, std::string_view id, std::string_view namePath) const {
        return op < processOfOp_.size() && processOfOp_[op] == process &&
               keyOfOp_[op] == key(id, namePath);
    }
    size_t opCountOf(uint32_t process) const { return opsByKey_[process].size(); }
    uint32_t opCount() const { return static_cast<uint32_t>(slotsOfOp_.size()); }
    // Registers a new op and returns its index; announcing it in the delta is the reader's.
    uint32_t addOp(uint32_t process, std::string_view id, std::string_view namePath = {});
    // The slot of an op's input or output `index`, announced in `delta` when new.
    uint32_t slotIndex(DumpDelta& delta, uint32_t op, bool isOutput, std::string_view index);
    // The string's number, announced in `delta` when new.
    uint32_t intern(DumpDelta& delta, std::string_view text);

private:
    struct Slot {
        bool isOutput;
        std::string index;
    };
    std::map<std::string, uint32_t> processByKey_;
    // "<name path>\x1f<id>", built in a buffer kept between calls (a million rows look ops up).
    const std::string& key(std::string_view id, std::string_view namePath) const {
        keyScratch_.assign(namePath).push_back('\x1f');
        keyScratch_.append(id);
        return keyScratch_;
    }
    const std::string& scratch(std::string_view text) const { return keyScratch_.assign(text); }
    mutable std::string keyScratch_;
    std::vector<std::string> keyOfOp_;   // by op
    std::vector<uint32_t> processOfOp_;  // by op
    std::vector<std::unordered_map<std::string, uint32_t>>
        opsByKey_;  // per process: (name path, id)
    std::vector<std::unordered_map<std::string, uint32_t>> firstOpById_;  // per process
    std::vector<std::vector<uint32_t>> slotsOfOp_;
    std::vector<Slot> slots_;
    std::unordered_map<std::string, uint32_t> strings_;
};

}  // namespace probe::analysis
