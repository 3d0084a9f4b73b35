// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/reader_index.h"

namespace probe::analysis {

uint32_t ReaderIndex::processIndex(DumpDelta& delta, const std::string& key) {
    auto it = processByKey_.find(key);
    if (it != processByKey_.end()) return it->second;
    const auto index = static_cast<uint32_t>(opsOfProcess_.size());
    processByKey_.emplace(key, index);
    opsOfProcess_.push_back(0);
    delta.processes.push_back({key});
    return index;
}

uint32_t ReaderIndex::findOp(uint32_t process, std::string_view id,
                             std::string_view namePath) const {
    if (namePath.empty()) return findOp(process, id, namePath, {idHash(process, id), 0});
    return findOp(process, id, namePath, hashesOf(process, id, namePath));
}

uint32_t ReaderIndex::findOp(uint32_t process, std::string_view id, std::string_view namePath,
                             const OpHashes& hashes) const {
    if (namePath.empty())
        return firstOpById_.find(
            hashes.id, [&](uint32_t op) { return ops_[op].process == process && idOf(op) == id; });
    return opsByKey_.find(hashes.key, [&](uint32_t op) { return isOp(op, process, id, namePath); });
}

void ReaderIndex::reserveOps(size_t more) {
    ops_.reserve(ops_.size() + more);
    slotsOfOp_.reserve(slotsOfOp_.size() + more);
    opsByKey_.reserve(more);
    firstOpById_.reserve(more);
    firstOpByPath_.reserve(more);
    nextWithId_.reserve(nextWithId_.size() + more);
    nextWithPath_.reserve(nextWithPath_.size() + more);
}

uint32_t ReaderIndex::addOp(uint32_t process, std::string_view id, std::string_view namePath) {
    return addOp(process, id, namePath, hashesOf(process, id, namePath));
}

uint32_t ReaderIndex::addOp(uint32_t process, std::string_view id, std::string_view namePath,
                            const OpHashes& hashes) {
    const auto index = static_cast<uint32_t>(ops_.size());
    const uint32_t firstWithId = findOp(process, id, {}, hashes);
    const uint32_t firstWithPath = firstOpByPath(process, namePath, hashes.path);
    slotsOfOp_.emplace_back();
    OpKey key;
    key.offset = keyText_.size();
    key.namePathSize = static_cast<uint32_t>(namePath.size());
    key.idSize = static_cast<uint32_t>(id.size());
    key.process = process;
    keyText_.append(namePath).append(id);
    ops_.push_back(key);
    ++opsOfProcess_[process];
    opsByKey_.insert(hashes.key, index);
    const auto chain = [&](uint32_t first, KeyTable& firsts, uint64_t hash,
                           std::vector<uint32_t>& next) {
        next.push_back(kNone);
        if (first == kNone) {
            firsts.insert(hash, index);
        } else {
            next[index] = next[first];
            next[first] = index;
        }
    };
    chain(firstWithId, firstOpById_, hashes.id, nextWithId_);
    chain(firstWithPath, firstOpByPath_, hashes.path, nextWithPath_);
    return index;
}

uint32_t ReaderIndex::addSlot(DumpDelta& delta, uint32_t op, bool isOutput,
                              std::string_view index) {
    const auto slot = static_cast<uint32_t>(slots_.size());
    Slot added;
    added.indexOffset = slotText_.size();
    added.indexSize = static_cast<uint32_t>(index.size());
    added.isOutput = isOutput;
    slotText_.append(index);
    slots_.push_back(added);
    // Room for an input and an output at once (most ops have both): no reallocation at the second.
    if (slotsOfOp_[op].empty()) slotsOfOp_[op].reserve(2);
    slotsOfOp_[op].push_back(slot);
    delta.tensorSlots.push_back({op, isOutput, std::string(index)});
    return slot;
}

uint32_t ReaderIndex::intern(DumpDelta& delta, std::string_view text) {
    const uint64_t hash = hashText(text);
    const uint32_t found =
        stringIndex_.find(hash, [&](uint32_t string) { return strings_[string] == text; });
    if (found != KeyTable::kAbsent) return found;
    const auto index = static_cast<uint32_t>(strings_.size());
    strings_.emplace_back(text);
    stringIndex_.insert(hash, index);
    delta.strings.push_back(strings_.back());
    return index;
}

}  // namespace probe::analysis
