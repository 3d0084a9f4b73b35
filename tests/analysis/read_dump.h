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

}  // namespace probe::analysis
