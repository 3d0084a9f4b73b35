// A thread's small table of what it last looked up by a name's address: a model passes the same
// names (a module's, an aten op's) from the same memory again and again, so a hit costs a pointer
// compare instead of a lock, a copy or a hash of the text. The address may hold another name by
// now: callers check the text of a hit.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace probe::format {

// kSize entries; an address may sit in any of the kWays entries from its home (linear probing
// over a short window), so that a few names whose addresses hash alike do not evict each other
// at every call (with one entry per home, five module names of a small MLP, a fixed stride
// apart, missed every time).
template <typename Value, size_t kSize = 256, size_t kWays = 16>
class RecentByAddress {
    static_assert(kSize >= 2 && (kSize & (kSize - 1)) == 0 && kWays <= kSize);

public:
    struct Entry {
        const void* address = nullptr;
        Value value{};
    };

    // The entry of `address` when the table holds one; else the entry to fill for it: the first
    // empty one of its window, or its home (evicting what is there).
    Entry& at(const void* address) {
        const size_t home = homeOf(address);
        for (size_t i = 0; i < kWays; ++i) {
            Entry& entry = entries_[(home + i) & (kSize - 1)];
            if (entry.address == address || !entry.address) return entry;
        }
        return entries_[home];
    }
    void clear() { entries_.fill(Entry{}); }

private:
    static size_t homeOf(const void* address) {
        // A full mix of the bits (a multiplicative hash alone let names a power-of-two stride
        // apart crowd into a few homes).
        uint64_t x = reinterpret_cast<uintptr_t>(address);
        x ^= x >> 32;
        x *= 0xd6e8feb86659fd93ull;
        x ^= x >> 32;
        x *= 0xd6e8feb86659fd93ull;
        x ^= x >> 32;
        return static_cast<size_t>(x) & (kSize - 1);
    }
    std::array<Entry, kSize> entries_{};
};

}  // namespace probe::format
