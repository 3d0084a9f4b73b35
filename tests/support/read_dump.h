// Reading a whole dump in a test: the index, or an empty one after a test failure that says why.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "analysis/dump_reader.h"

namespace probe::analysis {

inline DumpIndex indexOf(const std::string& root) {
    std::string error;
    auto index = readDump(root, &error);
    EXPECT_TRUE(index) << error;
    return index ? std::move(*index) : DumpIndex();
}

// The index after reading the dump `polls` times over, as the app does while it follows one:
// whatever a poll says of the dump must not be said again by the next.
inline DumpIndex indexPolledRepeatedly(const std::string& root, int polls = 4) {
    auto reader = openDumpReader(root, nullptr);
    EXPECT_TRUE(reader) << root;
    DumpIndex index;
    for (int poll = 0; reader && poll < polls; ++poll)
        index.apply(reader->poll(kDefaultPollBudget));
    return index;
}

// The index as the app reads the dump: statistics a dump left out (task tensor) computed from
// its tensor files.
inline DumpIndex indexAsTheAppReadsIt(const std::string& root) {
    auto reader = openDumpReader(root, nullptr);
    EXPECT_TRUE(reader) << root;
    if (!reader) return DumpIndex();
    reader->setStatisticsFromTensorFiles(true);
    DumpIndex index(reader->layout(), reader->root());
    for (int poll = 0; poll < 10000; ++poll) {
        DumpDelta delta = reader->poll(kDefaultPollBudget);
        const bool done = !delta.more && delta.statisticsPending.value_or(0) == 0;
        index.apply(std::move(delta));
        if (done) break;
    }
    return index;
}

}  // namespace probe::analysis
