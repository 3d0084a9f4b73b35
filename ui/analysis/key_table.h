// Finds items (ops, strings) by a text key that the items themselves hold: an open-addressing
// table of (hash, item number) pairs. Unlike an unordered_map<std::string, uint32_t> it copies no
// key and allocates no node: a dump of 100,000 ops was spending more time on its maps' nodes,
// rehashes and string copies than on reading its rows. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

namespace probe::analysis {

// The hash of a text key, or of several pieces of one (combine them with hashCombine).
inline uint64_t hashText(std::string_view text) {
    return std::hash<std::string_view>{}(text);
}
inline uint64_t hashCombine(uint64_t seed, uint64_t value) {
    return (seed ^ value) * 0x9E3779B97F4A7C15ull + (seed >> 29);
}

// Whether the `size` bytes at `a` and `b` are the same: inline, a few loads for the short texts
// the readers compare at every row (ids, names, dtypes), where a memcmp call costs more than the
// comparison.
[[gnu::always_inline]] inline bool sameBytes(const char* a, const char* b, size_t size) {
    auto word8 = [](const char* p) {
        uint64_t w;
        std::memcpy(&w, p, sizeof w);
        return w;
    };
    auto word4 = [](const char* p) {
        uint32_t w;
        std::memcpy(&w, p, sizeof w);
        return w;
    };
    if (size >= 8) {  // eight bytes at a time, the last eight (overlapping) for the rest
        for (size_t i = 0; i + 8 < size; i += 8)
            if (word8(a + i) != word8(b + i)) return false;
        return word8(a + size - 8) == word8(b + size - 8);
    }
    if (size >= 4) return word4(a) == word4(b) && word4(a + size - 4) == word4(b + size - 4);
    if (size == 0) return true;  // 1 to 3 bytes: the first, the middle and the last cover them
    return a[0] == b[0] && a[size / 2] == b[size / 2] && a[size - 1] == b[size - 1];
}
inline bool sameText(std::string_view a, std::string_view b) {
    return a.size() == b.size() && sameBytes(a.data(), b.data(), a.size());
}

class KeyTable {
public:
    static constexpr uint32_t kAbsent = UINT32_MAX;

    size_t size() const { return size_; }
    // How many items it holds before it grows.
    size_t capacity() const { return slots_.size() / 2; }

    // The first item inserted with `hash` for which same(item) holds, or kAbsent.
    template <typename Same>
    uint32_t find(uint64_t hash, Same&& same) const {
        if (slots_.empty()) return kAbsent;
        for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.item == kAbsent) return kAbsent;
            if (slot.hash == hash && same(slot.item)) return slot.item;
        }
    }
    // Room for `more` items beyond those it holds, so that adding them never grows the table
    // (each growth places every item again).
    void reserve(size_t more) {
        size_t wanted = slots_.empty() ? 64 : slots_.size();  // ("slots" is Qt's macro)
        while ((size_ + more) * 2 > wanted) wanted *= 2;
        if (wanted != slots_.size()) grow(wanted);  // at once, not doubling by doubling
    }
    // Adds `item` under `hash`. An item with an equal key stays the one find() returns.
    void insert(uint64_t hash, uint32_t item) {
        if ((size_ + 1) * 2 > slots_.size()) grow(slots_.empty() ? 64 : slots_.size() * 2);
        place(hash, item);
        ++size_;
    }

private:
    struct Slot {
        uint64_t hash = 0;
        uint32_t item = kAbsent;
    };
    // Linear probing: an item goes after those inserted before it with the same hash, so
    // find() meets the first one first.
    void place(uint64_t hash, uint32_t item) {
        size_t i = hash & mask_;
        while (slots_[i].item != kAbsent) i = (i + 1) & mask_;
        slots_[i] = {hash, item};
    }
    void grow(size_t slotCount) {  // a power of two
        std::vector<Slot> old;
        old.swap(slots_);
        slots_.assign(slotCount, Slot{});
        mask_ = slots_.size() - 1;
        // Re-placed in the old table's order from each run's start: equal hashes keep their
        // relative order only if earlier-inserted ones are placed first, so walk the old table
        // from a slot that begins a probe run (an empty one).
        size_t start = 0;
        while (start < old.size() && old[start].item != kAbsent) ++start;
        for (size_t k = 0; k < old.size(); ++k) {
            const Slot& slot = old[(start + k) % old.size()];
            if (slot.item != kAbsent) place(slot.hash, slot.item);
        }
    }

    std::vector<Slot> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
};

}  // namespace probe::analysis
