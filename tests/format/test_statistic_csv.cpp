// SPDX-License-Identifier: GPL-3.0-or-later
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "probe/format/statistic_csv.h"

using namespace probe::format;

TEST(StatisticCsv, HeaderIsExact) {
    EXPECT_STREQ(kStatisticCsvHeader,
                 "Device and PID,Execution Count,Op Name,Op Type,Op "
                 "Id,Input/Output,Index,Dtype,Format,Shape,Max,Min,"
                 "Mean,Norm,Tensor Path");
}

TEST(StatisticCsv, ValuesAreFixedPointWithSixDecimalsAndSpecialsSpelledOut) {
    EXPECT_EQ(formatStatValue(1.0), "1.000000");
    EXPECT_EQ(formatStatValue(-0.125), "-0.125000");
    EXPECT_EQ(formatStatValue(1e-9), "0.000000");
    EXPECT_EQ(formatStatValue(123456789.5), "123456789.500000");
    EXPECT_EQ(formatStatValue(INFINITY), "inf");
    EXPECT_EQ(formatStatValue(-INFINITY), "-inf");
    EXPECT_EQ(formatStatValue(NAN), "nan");
    EXPECT_EQ(formatStatValue(-NAN), "nan");
    EXPECT_EQ(formatStatValue(std::nullopt), "N/A");
    EXPECT_EQ(formatStatValue(1e300).size(), 301u + 7u);
}

TEST(StatisticCsv, RowRoundTrip) {
    StatRow row;
    row.devicePid = "0_39943";
    row.round = 3;
    row.opName = "Prefill_layer/Attention";
    row.opType = "SelfAttentionOperation";
    row.opId = "2_1";
    row.isOutput = true;
    row.index = "2_value";
    row.dtype = "float16";
    row.format = "nd";
    row.shape = "36x128";
    row.max = 1.5;
    row.min = -INFINITY;
    row.mean = NAN;
    row.norm = 2.0;
    row.tensorPath =
        "/abs/atb_dump_data/data/0_39943/3/2_Prefill_layer/1_Attention/after/outtensor2_value.bin";
    const std::string line = formatStatRow(row);
    EXPECT_EQ(line,
              "0_39943,3,Prefill_layer/"
              "Attention,SelfAttentionOperation,2_1,output,2_value,float16,nd,36x128,"
              "1.500000,-inf,nan,2.000000," +
                  row.tensorPath + "\n");
    std::string error;
    auto parsed = parseStatRow(line, &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_EQ(parsed->opName, row.opName);
    EXPECT_EQ(parsed->round, 3);
    EXPECT_TRUE(parsed->isOutput);
    EXPECT_EQ(parsed->max, 1.5);
    EXPECT_TRUE(std::isinf(*parsed->min) && *parsed->min < 0);
    EXPECT_TRUE(std::isnan(*parsed->mean));
    EXPECT_EQ(parsed->tensorPath, row.tensorPath);
}

TEST(StatisticCsv, NotApplicableAndQuotedFields) {
    StatRow row;
    row.devicePid = "123";
    row.opName = "odd,name \"x\"";
    row.opType = "T";
    row.opId = "0";
    row.index = "0";
    row.dtype = "float";
    row.format = "nd";
    const std::string line = formatStatRow(row);
    EXPECT_EQ(line, "123,0,\"odd,name \"\"x\"\"\",T,0,input,0,float,nd,,N/A,N/A,N/A,N/A,N/A\n");
    std::string error;
    auto parsed = parseStatRow(line, &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_EQ(parsed->opName, row.opName);
    EXPECT_FALSE(parsed->max);
    EXPECT_TRUE(parsed->tensorPath.empty());
    EXPECT_EQ(parsed->shape, "");
    // Each byte that needs quotes quotes the field wherever it stands in it.
    for (const std::string name : {",lead", "tail\"", "mid\rdle", "new\nline"}) {
        row.opName = name;
        const std::string quoted = formatStatRow(row);
        EXPECT_EQ(quoted.substr(0, 7), "123,0,\"") << name;
        auto back = parseStatRow(quoted.substr(0, quoted.size() - 1), &error);
        ASSERT_TRUE(back) << name << ": " << error;
        EXPECT_EQ(back->opName, name);
    }
}

// Rows are formatted on the stack when they surely fit, else straight into the batch: rows on
// both sides of that bound (long names, quotes doubled, values of 300 digits) read back whole.
TEST(StatisticCsv, RowsOfEveryLengthReadBackWhole) {
    int checked = 0;
    for (size_t length : {0, 100, 200, 220, 230, 240, 300, 500, 2000}) {
        for (const bool quoted : {false, true}) {
            for (const double big : {1.5, 1e300}) {
                StatRow row;
                row.devicePid = "7";
                row.round = 12;
                row.opName = std::string(length, quoted ? '"' : 'n');
                row.opType = "T,y";
                row.opId = "0_1";
                row.isOutput = true;
                row.index = std::string(length / 2, 'i');
                row.dtype = "float";
                row.format = "nd";
                row.shape = "2x3";
                row.max = big;
                row.min = -big;
                row.mean = 0.25;
                row.norm = 2;
                row.tensorPath = std::string(length, '/');
                const std::string line = formatStatRow(row);
                ASSERT_EQ(line.back(), '\n');
                std::string error;
                auto back = parseStatRow(line.substr(0, line.size() - 1), &error);
                ASSERT_TRUE(back) << length << ": " << error;
                EXPECT_EQ(back->opName, row.opName);
                EXPECT_EQ(back->opType, row.opType);
                EXPECT_EQ(back->index, row.index);
                EXPECT_EQ(back->tensorPath, row.tensorPath);
                EXPECT_EQ(back->max, big);
                EXPECT_EQ(back->min, -big);
                EXPECT_EQ(back->norm, 2);
                const std::string tail =
                    "," + (row.tensorPath.empty() ? std::string("N/A") : row.tensorPath) + "\n";
                EXPECT_EQ(line.substr(line.size() - tail.size()), tail) << length;
                ++checked;
            }
        }
    }
    EXPECT_EQ(checked, 36);
}

TEST(StatisticCsv, MalformedRowsAreRejected) {
    std::string error;
    EXPECT_FALSE(parseStatRow("a,b,c", &error));
    EXPECT_NE(error.find("15 columns"), std::string::npos);
    EXPECT_FALSE(parseStatRow("0_1,x,a,b,0,input,0,float,nd,,1,1,1,1,N/A", &error));
    EXPECT_FALSE(parseStatRow("0_1,0,a,b,0,sideways,0,float,nd,,1,1,1,1,N/A", &error));
    EXPECT_FALSE(parseStatRow("0_1,0,a,b,0,input,0,float,nd,,abc,1,1,1,N/A", &error));
    EXPECT_FALSE(parseStatRow("0_1,0,\"a,b,0,input,0,float,nd,,1,1,1,1,N/A", &error));
    // Some statistics N/A and some numbers: no row the runtime writes (it compared as a match on
    // the numbers left). All four N/A is task tensor's row.
    EXPECT_FALSE(parseStatRow("0_1,0,a,b,0,input,0,float,nd,2,N/A,1,1,1,N/A", &error));
    EXPECT_EQ(error,
              "Max is N/A while the other statistics are numbers (all four are N/A, or none)");
    EXPECT_FALSE(parseStatRow("0_1,0,a,b,0,input,0,float,nd,2,1,N/A,1,N/A,N/A", &error));
    EXPECT_EQ(
        error,
        "Min, Norm are N/A while the other statistics are numbers (all four are N/A, or none)");
    EXPECT_TRUE(parseStatRow("0_1,0,a,b,0,input,0,float,nd,2,N/A,N/A,N/A,N/A,/t/x.bin", &error));
}

// The statistics columns hold printf("%f") of each value: checked against printf itself on
// values of every magnitude and on exact ties (odd multiples of 2^-7 have seven decimals
// ending in 5: printf rounds them half to even).
TEST(StatisticCsv, ValuesAreWrittenAsPrintfWritesThem) {
    std::mt19937_64 random(20261201);
    std::vector<double> values = {0.0,
                                  -0.0,
                                  1e-7,
                                  -1e-7,
                                  5e-7,
                                  -5e-7,
                                  4.9999999e-7,
                                  0.5,
                                  2.5,
                                  9007199254.740991,
                                  -9007199254.740991,
                                  9007199254.740993,
                                  1e10,
                                  -1e15,
                                  4503599627.370496};
    for (int j = 1; j < 4000; j += 2) {
        values.push_back(j / 128.0);
        values.push_back(-j / 128.0);
        values.push_back(j / 256.0 + 1e9);
    }
    std::uniform_int_distribution<uint64_t> bits;
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-30, 40);
    for (int i = 0; i < 100000; ++i) {
        values.push_back(std::ldexp(unit(random), exponent(random)));
        double any;
        const uint64_t b = bits(random);
        std::memcpy(&any, &b, sizeof any);
        if (std::isfinite(any)) values.push_back(any);
    }
    ASSERT_FALSE(values.empty());
    char expected[400];
    int mismatches = 0;
    for (double v : values) {
        std::snprintf(expected, sizeof expected, "%f", v);
        if (formatStatValue(v) != expected && ++mismatches <= 5)
            ADD_FAILURE() << std::hexfloat << v << ": " << formatStatValue(v) << " printf "
                          << expected;
    }
    EXPECT_EQ(mismatches, 0);
}

// The probe packs rows on the model's thread and its writer formats them: the lines must be
// those appendStatRow makes from the same fields, for every kind of text and value.
TEST(StatisticCsv, PackedRowsFormatToTheSameLines) {
    std::vector<StatRow> rows;
    std::vector<StatRowCodes> codes;
    const std::vector<int64_t> dims = {2, 3};
    for (size_t length : {0, 1, 230, 2000}) {
        for (const bool odd : {false, true}) {
            StatRow row;
            row.devicePid = odd ? "0_17" : "17";
            row.round = odd ? -3 : static_cast<int64_t>(length) * 1000003;
            row.opName = std::string(length, odd ? '"' : 'n') + (odd ? ",\n" : "");
            row.opType = odd ? "T,y" : "Linear";
            row.opId = "0_1";
            row.isOutput = odd;
            row.index = odd ? "2_value" : "0";
            row.dtype = "float";
            row.format = odd ? "nchw" : "nd";
            row.shape = length ? "2x3" : "";
            if (!odd) {
                row.max = length ? 1e300 : 1.5;
                row.min = -INFINITY;
                row.mean = NAN;
            }
            row.norm = 0.25 * static_cast<double>(length);
            row.tensorPath = odd ? std::string(length, '/') : "";
            rows.push_back(row);
        }
    }
    std::string packed, expected;
    for (const auto& row : rows) {
        StatRowCodes code;
        code.devicePid = row.devicePid;
        code.round = row.round;
        code.opName = row.opName;
        code.opType = row.opType;
        code.opId = row.opId;
        code.isOutput = row.isOutput;
        code.index = row.isOutput ? 2 : 0;
        code.argName = row.isOutput ? "value" : "";
        code.dtype = 0;                      // float
        code.format = row.isOutput ? 0 : 2;  // nchw, nd
        code.dims = dims.data();
        code.ndims = row.shape.empty() ? 0 : 2;
        code.max = row.max;
        code.min = row.min;
        code.mean = row.mean;
        code.norm = row.norm;
        code.tensorPath = row.tensorPath;
        packStatRow(packed, code, false);
        expected += formatStatRow(row);
    }
    std::string out = "kept,";
    EXPECT_EQ(appendPackedStatRows(out, packed), rows.size());
    EXPECT_EQ(out, "kept," + expected);
    EXPECT_EQ(appendPackedStatRows(out, {}), 0u);
}

// Rows the probe packs with numbers (index, dtype, format and dims) format to the lines of the
// same rows spelled out by hand; a row marked as another tensor of the op before takes that
// op's names.
TEST(StatisticCsv, PackedRowsOfCodesFormatAsSpelledOut) {
    struct Case {
        int32_t index;
        std::string argName;
        int32_t dtype;
        const char* dtypeText;
        int32_t format;
        const char* formatText;
        std::vector<int64_t> dims;
        const char* shapeText;
    };
    const std::vector<Case> cases = {
        {0, "", 0, "float", 2, "nd", {2, 3}, "2x3"},
        {1, "weight", 27, "bf16", 0, "nchw", {}, ""},
        {2, "a,\"b\"", 5, "undefined(5)", 99, "format_99", {0}, "0"},
        {2147483647, "", -7, "undefined(-7)", -1, "format_-1", {1, 1, 1, 1}, "1x1x1x1"},
        {3, std::string(300, 'q'), 1, "float16", 29, "fractal_nz",
         std::vector<int64_t>(20, 9223372036854775807LL),
         nullptr},  // 20 dims of the largest value: spelled below
    };
    std::string packed, expected;
    size_t packedRows = 0;
    for (size_t c = 0; c < cases.size(); ++c) {
        const Case& k = cases[c];
        std::string shape = k.shapeText ? k.shapeText : "";
        if (!k.shapeText)
            for (size_t i = 0; i < k.dims.size(); ++i)
                shape += (i ? "x" : "") + std::string("9223372036854775807");
        for (const bool sameOp : {false, true}) {
            for (const bool output : {false, true}) {
                StatRow spelled;
                spelled.devicePid = c % 2 ? "3_41" : "41";
                spelled.round = static_cast<int64_t>(c) * 7 + 3;  // readers take 0..2^31-1
                spelled.opName = "layer" + std::to_string(c) + (c == 2 ? "/a,b" : "/linear");
                spelled.opType = c == 3 ? std::string(600, 't') : "aten::linear";
                spelled.opId = std::to_string(c) + "_0";
                spelled.isOutput = output;
                spelled.index =
                    std::to_string(k.index) + (k.argName.empty() ? "" : "_" + k.argName);
                spelled.dtype = k.dtypeText;
                spelled.format = k.formatText;
                spelled.shape = shape;
                if (output) {  // inputs N/A, as task tensor's rows (all four or none)
                    spelled.max = 1.5 + static_cast<double>(c);
                    spelled.min = -INFINITY;
                    spelled.mean = 0.25;
                    spelled.norm = c == 1 ? NAN : 1e300;
                }
                spelled.tensorPath = output && c == 4 ? "/d/x,y.bin" : "";
                expected += formatStatRow(spelled);
                StatRowCodes row;
                // A row of the same op carries other names, which must not be read.
                row.devicePid =
                    sameOp ? std::string_view("wrong") : std::string_view(spelled.devicePid);
                row.round = spelled.round;
                row.opName = sameOp ? std::string_view("wrong") : std::string_view(spelled.opName);
                row.opType = sameOp ? std::string_view("wrong") : std::string_view(spelled.opType);
                row.opId = sameOp ? std::string_view("wrong") : std::string_view(spelled.opId);
                row.isOutput = output;
                row.index = k.index;
                row.argName = k.argName;
                row.dtype = k.dtype;
                row.format = k.format;
                row.dims = k.dims.data();
                row.ndims = static_cast<uint32_t>(k.dims.size());
                row.max = spelled.max;
                row.min = spelled.min;
                row.mean = spelled.mean;
                row.norm = spelled.norm;
                row.tensorPath = spelled.tensorPath;
                packStatRow(packed, row, sameOp || output);
                ++packedRows;
            }
        }
    }
    std::string out = "kept\n";
    EXPECT_EQ(appendPackedStatRows(out, packed), packedRows);
    EXPECT_EQ(out, "kept\n" + expected);
    // Every line parses back to its 15 fields.
    size_t lines = 0;
    for (size_t at = 5; at < out.size(); at = out.find('\n', at) + 1, ++lines) {
        std::string error;
        EXPECT_TRUE(parseStatRow(std::string_view(out).substr(at, out.find('\n', at) - at), &error))
            << error;
    }
    EXPECT_EQ(lines, packedRows);
}
