// What a dump reader has announced in its deltas so far: processes, ops by id per process, the
// tensor slots of each op, interned strings. One piece of bookkeeping for the readers of both
// layouts.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/dump_index.h"

namespace probe::analysis {

class ReaderIndex {
public:
    // The process with this key, announced in `delta` when new.
    uint32_t processIndex(DumpDelta& delta, const std::string& key);
    // The op with `id` in `process`, or kNone.
    uint32_t findOp(uint32_t process, const std::string& id) const;
    size_t opCountOf(uint32_t process) const { return opsById_[process].size(); }
    uint32_t opCount() const { return static_cast<uint32_t>(slotsOfOp_.size()); }
    // Registers a new op and returns its index; announcing it in the delta is the reader's.
    uint32_t addOp(uint32_t process, const std::string& id);
    // The slot of an op's input or output `index`, announced in `delta` when new.
    uint32_t slotIndex(DumpDelta& delta, uint32_t op, bool isOutput, const std::string& index);
    // The string's number, announced in `delta` when new.
    uint32_t intern(DumpDelta& delta, const std::string& text);

private:
    struct Slot {
        bool isOutput;
        std::string index;
    };
    std::map<std::string, uint32_t> processByKey_;
    std::vector<std::unordered_map<std::string, uint32_t>> opsById_;  // per process
    std::vector<std::vector<uint32_t>> slotsOfOp_;
    std::vector<Slot> slots_;
    std::unordered_map<std::string, uint32_t> strings_;
};

}  // namespace probe::analysis
