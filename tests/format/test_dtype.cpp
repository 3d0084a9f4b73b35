// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdint>

#include <gtest/gtest.h>

#include "probe/format/dtype.h"

using namespace probe::format;

TEST(DType, CodesNamesAndSizesFollowTheFormat) {
    struct Expect {
        int code;
        const char* name;
        size_t size;
    };
    const Expect table[] = {{0, "float", 4},      {1, "float16", 2},      {2, "int8", 1},
                            {3, "int32", 4},      {4, "uint8", 1},        {6, "int16", 2},
                            {7, "uint16", 2},     {8, "uint32", 4},       {9, "int64", 8},
                            {10, "uint64", 8},    {11, "double", 8},      {12, "bool", 1},
                            {16, "complex64", 8}, {17, "complex128", 16}, {27, "bf16", 2}};
    for (const auto& e : table) {
        auto dtype = dtypeFromCode(e.code);
        ASSERT_TRUE(dtype) << e.code;
        EXPECT_STREQ(dtypeName(*dtype), e.name);
        EXPECT_EQ(dtypeSize(*dtype), e.size) << e.name;
        EXPECT_EQ(dtypeFromName(e.name), dtype);
    }
    EXPECT_FALSE(dtypeFromCode(5));
    EXPECT_FALSE(dtypeFromCode(13));
}

TEST(DType, FormatNames) {
    EXPECT_EQ(formatName(0), "nchw");
    EXPECT_EQ(formatName(1), "nhwc");
    EXPECT_EQ(formatName(2), "nd");
    EXPECT_EQ(formatName(3), "nc1hwc0");
    EXPECT_EQ(formatName(4), "fractal_z");
    EXPECT_EQ(formatName(29), "fractal_nz");
    EXPECT_EQ(formatName(30), "ncdhw");
    EXPECT_EQ(formatName(35), "nc");
    EXPECT_EQ(formatName(47), "ncl");
    EXPECT_EQ(formatName(99), "format_99");
    EXPECT_EQ(formatName(-7), "format_-7");
    std::string appended = "row,";
    appendFormatName(appended, 29);
    appendFormatName(appended, 2147483647);
    EXPECT_EQ(appended, "row,fractal_nzformat_2147483647");
    EXPECT_EQ(formatCodeFromName("fractal_nz"), 29);
    EXPECT_EQ(formatCodeFromName("format_99"), 99);
    EXPECT_FALSE(formatCodeFromName("nope"));
}

TEST(DType, ShapesAndCounts) {
    EXPECT_EQ(shapeString({36, 128}), "36x128");
    EXPECT_EQ(shapeString({}), "");
    EXPECT_EQ(parseShapeString("36x128"), (std::vector<int64_t>{36, 128}));
    EXPECT_EQ(parseShapeString(""), std::vector<int64_t>{});
    EXPECT_FALSE(parseShapeString("3xx4"));
    EXPECT_EQ(elementCount({}), 1u);
    EXPECT_EQ(elementCount({2, 0, 3}), 0u);
    EXPECT_EQ(elementCount({2, 3, 4}), 24u);
    EXPECT_FALSE(elementCount({-1}));
    EXPECT_FALSE(elementCount({1LL << 40, 1LL << 40}));
    // The forms over a plain array (a runtime row's dims) say the same as the vector forms.
    const int64_t dims[] = {9223372036854775807LL, 0, 7};
    std::string shape = "x=";
    appendShape(shape, dims, 3);
    EXPECT_EQ(shape, "x=" + std::to_string(dims[0]) + "x0x7");
    EXPECT_EQ(elementCount(dims, 3), 0u);
    EXPECT_EQ(elementCount(dims, 0), 1u);
    const int64_t negative[] = {4, -1};
    EXPECT_FALSE(elementCount(negative, 2));
}

// appendShape prints into a buffer of its own: shapes of any rank and the widest numbers come out
// as the dimensions joined by 'x', whatever the buffer holds at once.
TEST(DType, ShapesOfAnyRankAndWidth) {
    for (size_t rank = 0; rank <= 40; ++rank) {
        std::vector<int64_t> dims;
        std::string expected = "head:";
        for (size_t i = 0; i < rank; ++i) {
            const int64_t widths[] = {INT64_MIN, INT64_MAX, 0, 7, -12, 1234567890123LL};
            dims.push_back(widths[(i + rank) % 6]);
            expected += (i ? "x" : "") + std::to_string(dims.back());
        }
        std::string shape = "head:";
        appendShape(shape, dims.data(), dims.size());
        EXPECT_EQ(shape, expected) << rank;
        EXPECT_EQ("head:" + shapeString(dims), expected);
    }
}
