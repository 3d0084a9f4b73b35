// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "probe/format/recent_by_address.h"

using probe::format::RecentByAddress;

namespace {

// Looks `address` up as the runtime does: a hit, or the entry filled for it. True on a hit.
bool lookUp(RecentByAddress<int>& table, const char* address, int value) {
    auto& entry = table.at(address);
    if (entry.address == address) {
        EXPECT_EQ(entry.value, value) << "a hit gave another address's value";
        return true;
    }
    entry = {address, value};
    return false;
}

}  // namespace

// The reproduction of a sleeping probe's misses on a small MLP: its five module names are bytes
// objects 48 bytes apart, its five backward names elsewhere; with one entry per home, two pairs
// of them evicted each other at every call (six misses in ten, each a lock and a copy). The
// addresses are made up, not allocated (the table never reads them): where the heap put two
// buffers changed from run to run, and with it whether a cluster of homes overflowed a window,
// so the test failed now and then.
TEST(RecentByAddress, NamesAFixedStrideApartAreFoundAgainWhereverTheyLie) {
    // Where a heap, a mapping and a stack put memory on x86-64 Linux, and a low address.
    const uintptr_t bases[] = {0x55d4c3a1e000, 0x7f3a1e240000, 0x7ffc8b1f3000, 0x1000000};
    int checked = 0;
    for (const uintptr_t base : bases)
        for (size_t offset = 0; offset < 4096; offset += 16) {
            const uintptr_t block = base + 0x20000, elsewhere = base + 0x90000;
            RecentByAddress<int> table;
            std::vector<const char*> names;
            // A model of 40 layers: its forward names in one block, its backward names apart.
            for (int i = 0; i < 40; ++i)
                names.push_back(reinterpret_cast<const char*>(block + offset + 48 * i));
            for (int i = 0; i < 40; ++i)
                names.push_back(reinterpret_cast<const char*>(elsewhere + 1024 * i + offset * 3));
            for (size_t i = 0; i < names.size(); ++i)
                EXPECT_FALSE(lookUp(table, names[i], static_cast<int>(i)));
            for (int call = 0; call < 3; ++call)
                for (size_t i = 0; i < names.size(); ++i) {
                    EXPECT_TRUE(lookUp(table, names[i], static_cast<int>(i)))
                        << "name " << i << " missed at base " << base << " offset " << offset;
                    ++checked;
                }
        }
    EXPECT_EQ(checked, 4 * 256 * 3 * 80);
}

// More names than entries: each lookup still gives the entry of its own address or one to fill,
// never another address's value, and a name just filled in is found at once.
TEST(RecentByAddress, MoreNamesThanEntriesEvictButNeverMix) {
    std::vector<char> names(4096);
    RecentByAddress<int> table;
    int hits = 0;
    for (int round = 0; round < 4; ++round)
        for (int i = 0; i < 1000; ++i) {
            const char* address = names.data() + 4 * i;
            if (lookUp(table, address, i)) ++hits;
            EXPECT_EQ(table.at(address).address, address);
            EXPECT_EQ(table.at(address).value, i);
        }
    EXPECT_LT(hits, 4 * 1000);  // 1000 names in 256 entries: most are misses
    table.clear();
    EXPECT_EQ(table.at(names.data()).address, nullptr);
}
