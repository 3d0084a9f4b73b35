// What a dump reader has announced in its deltas so far: processes, ops by id per process, the
// tensor slots of each op, interned strings. One piece of bookkeeping for the readers of both
// layouts.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/dump_index.h"
#include "analysis/key_table.h"

namespace probe::analysis {

class ReaderIndex {
public:
    // The process with this key, announced in `delta` when new.
    uint32_t processIndex(DumpDelta& delta, const std::string& key);
    // The process with this key, kNone when none was announced.
    uint32_t knownProcess(const std::string& key) const {
        const auto it = processByKey_.find(key);
        return it != processByKey_.end() ? it->second : kNone;
    }
    // The op with `id` and name path `namePath` in `process`, or kNone. An id alone does not
    // name an op in every layout: atb ids are positions ("2_5": the sixth child of layer 2), and
    // a layer whose control flow changes from one round to the next runs another op there. With
    // an empty `namePath`, the first op found with `id`.
    uint32_t findOp(uint32_t process, std::string_view id, std::string_view namePath = {}) const;
    // An op key's hashes, worked out once for a findOp and the addOp after it (a big model's
    // hundred thousand nodes: each name path hashed once, not three times).
    struct OpHashes {
        uint64_t id = 0, key = 0, path = 0;
    };
    static OpHashes hashesOf(uint32_t process, std::string_view id, std::string_view namePath) {
        const uint64_t byId = idHash(process, id), ofPath = hashText(namePath);
        return {byId, hashCombine(byId, ofPath), hashCombine(process, ofPath)};
    }
    uint32_t findOp(uint32_t process, std::string_view id, std::string_view namePath,
                    const OpHashes& hashes) const;
    // Whether `op` is the one findOp(process, id, namePath) names, without a lookup: readers
    // check the op that followed last time first (rounds repeat the same ops in order).
    bool isOp(uint32_t op, uint32_t process, std::string_view id, std::string_view namePath) const {
        if (op >= ops_.size()) return false;
        const OpKey& key = ops_[op];  // (sizes first: most ops that are not it differ there)
        if (key.process != process || key.idSize != id.size() ||
            key.namePathSize != namePath.size())
            return false;
        const char* text = keyText_.data() + key.offset;
        return sameBytes(text, namePath.data(), namePath.size()) &&
               sameBytes(text + namePath.size(), id.data(), id.size());
    }
    // Calls f(op) for the ops of `process` with this id (any name path), or with this name path
    // (any id), until f returns true or `most` were called: the first added first, then the
    // others from the last added. Where a layer's control flow changed, the op a row names
    // under a new key may be one known under another (AtbDumpReader::opRunElsewhere).
    template <typename F>
    void forEachOpWithId(uint32_t process, std::string_view id, int most, F&& f) const {
        walk(findOp(process, id, {}, {idHash(process, id), 0, 0}), nextWithId_, most, f);
    }
    // (`hashes`: of a key with this name path, hashesOf.)
    template <typename F>
    void forEachOpWithPath(uint32_t process, std::string_view namePath, const OpHashes& hashes,
                           int most, F&& f) const {
        walk(firstOpByPath(process, namePath, hashes.path), nextWithPath_, most, f);
    }
    // An op's key, as addOp was given it.
    std::string_view namePathOf(uint32_t op) const {
        return std::string_view(keyText_).substr(ops_[op].offset, ops_[op].namePathSize);
    }
    std::string_view idOf(uint32_t op) const {
        return std::string_view(keyText_).substr(ops_[op].offset + ops_[op].namePathSize,
                                                 ops_[op].idSize);
    }
    size_t opCountOf(uint32_t process) const { return opsOfProcess_[process]; }
    uint32_t opCount() const { return static_cast<uint32_t>(ops_.size()); }
    // Room for `more` new ops (a structure file's nodes) before they are added one by one.
    void reserveOps(size_t more);
    // Registers a new op and returns its index; announcing it in the delta is the reader's.
    uint32_t addOp(uint32_t process, std::string_view id, std::string_view namePath = {});
    uint32_t addOp(uint32_t process, std::string_view id, std::string_view namePath,
                   const OpHashes& hashes);
    // The slot of an op's input or output `index`, announced in `delta` when new.
    uint32_t slotIndex(DumpDelta& delta, uint32_t op, bool isOutput, std::string_view index) {
        for (uint32_t s : slotsOfOp_[op]) {  // (inline: once per row, a million times)
            const Slot& slot = slots_[s];
            if (slot.isOutput == isOutput && slot.indexSize == index.size() &&
                sameBytes(slotText_.data() + slot.indexOffset, index.data(), index.size()))
                return s;
        }
        return addSlot(delta, op, isOutput, index);
    }
    // The string's number, announced in `delta` when new.
    uint32_t intern(DumpDelta& delta, std::string_view text);

private:
    // A slot's index is kept in slotText_: 16 bytes a slot, and no string of its own.
    struct Slot {
        uint64_t indexOffset = 0;
        uint32_t indexSize = 0;
        bool isOutput = false;
    };
    // An op's key, kept in one buffer: its name path then its id.
    struct OpKey {
        uint64_t offset = 0;
        uint32_t namePathSize = 0, idSize = 0;
        uint32_t process = 0;
    };
    uint32_t addSlot(DumpDelta& delta, uint32_t op, bool isOutput, std::string_view index);
    uint32_t firstOpByPath(uint32_t process, std::string_view namePath, uint64_t hash) const {
        return firstOpByPath_.find(hash, [&](uint32_t op) {
            return ops_[op].process == process && namePathOf(op) == namePath;
        });
    }
    template <typename F>
    static void walk(uint32_t first, const std::vector<uint32_t>& next, int most, F& f) {
        for (uint32_t op = first; op != kNone && most-- > 0; op = next[op])
            if (f(op)) return;
    }
    static uint64_t idHash(uint32_t process, std::string_view id) {
        return hashCombine(process, hashText(id));
    }

    std::map<std::string, uint32_t> processByKey_;
    std::vector<size_t> opsOfProcess_;  // by process
    std::vector<OpKey> ops_;            // by op
    std::string keyText_;
    KeyTable opsByKey_;       // (process, name path, id)
    KeyTable firstOpById_;    // (process, id): the first op added with the id
    KeyTable firstOpByPath_;  // (process, name path): the first op added with it
    // By op: the next op with its id, and with its name path (kNone: none). A chain runs from
    // the first op added with the key to the last added, then back to the second (each op is
    // put right after the first: no last op to keep per key).
    std::vector<uint32_t> nextWithId_, nextWithPath_;
    std::vector<std::vector<uint32_t>> slotsOfOp_;
    ChunkedVector<Slot> slots_;  // never copied to grow
    std::string slotText_;
    std::vector<std::string> strings_;  // interned, by number
    KeyTable stringIndex_;
};

}  // namespace probe::analysis
