// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/reader_index.h"

namespace probe::analysis {

uint32_t ReaderIndex::processIndex(DumpDelta& delta, const std::string& key) {
    auto it = processByKey_.find(key);
    if (it != processByKey_.end()) return it->second;
    const auto index = static_cast<uint32_t>(opsByKey_.size());
    processByKey_.emplace(key, index);
    opsByKey_.emplace_back();
    firstOpById_.emplace_back();
    delta.processes.push_back({key});
    return index;
}

uint32_t ReaderIndex::findOp(uint32_t process, std::string_view id,
                             std::string_view namePath) const {
    const auto& ops = namePath.empty() ? firstOpById_[process] : opsByKey_[process];
    auto it = ops.find(namePath.empty() ? scratch(id) : key(id, namePath));
    return it == ops.end() ? kNone : it->second;
}

uint32_t ReaderIndex::addOp(uint32_t process, std::string_view id, std::string_view namePath) {
    const auto index = static_cast<uint32_t>(slotsOfOp_.size());
    slotsOfOp_.emplace_back();
    keyOfOp_.push_back(key(id, namePath));
    processOfOp_.push_back(process);
    opsByKey_[process].emplace(keyOfOp_.back(), index);
    firstOpById_[process].emplace(std::string(id), index);
    return index;
}

uint32_t ReaderIndex::slotIndex(DumpDelta& delta, uint32_t op, bool isOutput,
                                std::string_view index) {
    for (uint32_t s : slotsOfOp_[op])
        if (slots_[s].isOutput == isOutput && slots_[s].index == index) return s;
    const auto slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back({isOutput, std::string(index)});
    slotsOfOp_[op].push_back(slot);
    delta.tensorSlots.push_back({op, isOutput, std::string(index)});
    return slot;
}

uint32_t ReaderIndex::intern(DumpDelta& delta, std::string_view text) {
    auto [it, inserted] =
        strings_.try_emplace(scratch(text), static_cast<uint32_t>(strings_.size()));
    if (inserted) delta.strings.push_back(it->first);
    return it->second;
}

}  // namespace probe::analysis
