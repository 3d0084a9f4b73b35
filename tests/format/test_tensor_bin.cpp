// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include <cstring>

#include "probe/format/file_util.h"
#include "probe/format/tensor_bin.h"
#include "test_support.h"

using namespace probe::format;

TEST(TensorBin, HeaderIsExactlyTheDocumentedText) {
    BinHeader h;
    h.formatCode = 2;
    h.dtypeCode = 1;
    h.dims = {36, 128};
    h.dataLength = 36 * 128 * 2;
    EXPECT_EQ(makeBinHeader(h),
              "$Version=1.0\n$Object.Count=1\n$Object.Length=9216\nformat=2\ndtype=1\ndims=36,128\n"
              "$Object.data=0,9216\n$End=1\n");
    h.alias = "2_1_outtensor0.bin";
    EXPECT_EQ(makeBinHeader(h),
              "$Version=1.0\n$Object.Count=0\n$Object.Length=0\nformat=2\ndtype=1\ndims=36,128\n"
              "data=2_1_outtensor0.bin\n$End=1\n");
}

TEST(TensorBin, RoundTripThroughAFile) {
    probe::test::TempDir dir;
    std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -8.5f};
    BinHeader h;
    h.dtypeCode = 0;
    h.dims = {2, 3};
    h.dataLength = values.size() * 4;
    const std::string path = dir / "t.bin";
    ASSERT_EQ(writeFileAtomically(path, makeBinHeader(h), values.data(), h.dataLength), 0);
    std::string error;
    auto file = readBinFile(path, &error);
    ASSERT_TRUE(file) << error;
    EXPECT_EQ(file->header.dims, h.dims);
    EXPECT_EQ(file->header.dtypeCode, 0);
    ASSERT_EQ(file->data.size(), 24u);
    EXPECT_EQ(std::memcmp(file->data.data(), values.data(), 24), 0);
    auto header = readBinHeader(path, &error);
    ASSERT_TRUE(header);
    EXPECT_EQ(header->dataLength, 24u);
}

TEST(TensorBin, ScalarAndHeaderOnly) {
    BinHeader h;
    h.dims = {};
    h.dataLength = 4;
    std::string error;
    auto parsed = parseBinHeader(makeBinHeader(h) + "abcd", &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_TRUE(parsed->dims.empty());
    h.alias = "intensor0.bin";
    parsed = parseBinHeader(makeBinHeader(h), &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_TRUE(parsed->headerOnly());
    EXPECT_EQ(parsed->alias, "intensor0.bin");
    EXPECT_EQ(parsed->dataLength, 0u);
}

TEST(TensorBin, MalformedFilesAreRejectedWithAReason) {
    probe::test::TempDir dir;
    std::string error;
    EXPECT_FALSE(parseBinHeader("$Version=1.0\n$Object.Count=1\n", &error));
    EXPECT_NE(error.find("$End"), std::string::npos);
    EXPECT_FALSE(parseBinHeader("garbage without equals\n$End=1\n", &error));
    BinHeader h;
    h.dims = {4};
    h.dataLength = 16;
    probe::test::writeFile(dir / "short.bin", makeBinHeader(h) + "12345678");
    EXPECT_FALSE(readBinFile(dir / "short.bin", &error));
    EXPECT_NE(error.find("truncated"), std::string::npos);
    h.dataLength = 12;  // does not match 4 floats
    probe::test::writeFile(dir / "mismatch.bin", makeBinHeader(h) + std::string(12, 'x'));
    EXPECT_FALSE(readBinFile(dir / "mismatch.bin", &error));
    EXPECT_NE(error.find("does not match"), std::string::npos);
    EXPECT_FALSE(readBinFile(dir / "absent.bin", &error));
}
