// SPDX-License-Identifier: GPL-3.0-or-later
#include <cmath>

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
}

TEST(StatisticCsv, MalformedRowsAreRejected) {
    std::string error;
    EXPECT_FALSE(parseStatRow("a,b,c", &error));
    EXPECT_NE(error.find("15 columns"), std::string::npos);
    EXPECT_FALSE(parseStatRow("0_1,x,a,b,0,input,0,float,nd,,1,1,1,1,N/A", &error));
    EXPECT_FALSE(parseStatRow("0_1,0,a,b,0,sideways,0,float,nd,,1,1,1,1,N/A", &error));
    EXPECT_FALSE(parseStatRow("0_1,0,a,b,0,input,0,float,nd,,abc,1,1,1,N/A", &error));
    EXPECT_FALSE(parseStatRow("0_1,0,\"a,b,0,input,0,float,nd,,1,1,1,1,N/A", &error));
}
