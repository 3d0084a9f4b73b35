// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "probe/format/row_order.h"

using namespace probe::format;

namespace {

std::vector<std::pair<int64_t, uint64_t>> pairs(const std::vector<RowOrderRun>& runs) {
    std::vector<std::pair<int64_t, uint64_t>> out;
    for (const auto& run : runs) out.emplace_back(run.round, run.rows);
    return out;
}

}  // namespace

TEST(RowOrder, LinesWrittenAreReadBack) {
    std::string text = std::string(kRowOrderHeader) + "\n";
    EXPECT_EQ(text, "Execution Count,Rows\n");
    appendRowOrderLine(text, {0, 18});
    appendRowOrderLine(text, {2147483647, 18446744073709551615ull});
    appendRowOrderLine(text, {7, 0});
    EXPECT_EQ(text, "Execution Count,Rows\n0,18\n2147483647,18446744073709551615\n7,0\n");
    std::string error;
    const auto runs = parseRowOrder(text, &error);
    EXPECT_EQ(error, "");
    const std::vector<std::pair<int64_t, uint64_t>> expected{
        {0, 18}, {2147483647, 18446744073709551615ull}, {7, 0}};
    EXPECT_EQ(pairs(runs), expected);
    EXPECT_TRUE(parseRowOrder("", &error).empty());
    EXPECT_EQ(error, "");
    // A file copied through Windows ends its lines in CR LF.
    const auto crlf = parseRowOrder("Execution Count,Rows\r\n0,18\r\n7,0\r\n", &error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(pairs(crlf), (std::vector<std::pair<int64_t, uint64_t>>{{0, 18}, {7, 0}}));
}

// A crash may cut the last line short; damage stops the reading where it is, with the runs
// before it kept.
TEST(RowOrder, ReadingStopsAtTheFirstLineThatIsNoRun) {
    const std::string header = std::string(kRowOrderHeader) + "\n";
    const std::vector<std::pair<std::string, std::string>> cases{
        {header + "0,3\n1,", "line 3 does not end (cut short)"},
        {header + "0,3\n-1,2\n", "line 3 is not \"<round>,<rows>\""},
        {header + "0,3\n2147483648,2\n", "line 3 is not"},
        {header + "0,3\n1,2,3\n", "line 3 is not"},
        {header + "0,3\n1 2\n", "line 3 is not"},
        {header + "0,3\n1,-2\n", "line 3 is not"},
        {header + "0,3\n\n", "line 3 is not"},
        {header + "0,3\n1,99999999999999999999999\n", "line 3 is not"},
        {"Device and PID\n0,3\n", "line 1 is not the header \"Execution Count,Rows\""},
    };
    for (const auto& [text, message] : cases) {
        std::string error;
        const auto runs = parseRowOrder(text, &error);
        EXPECT_NE(error.find(message), std::string::npos) << text << " -> " << error;
        if (text.rfind(header, 0) == 0) {
            EXPECT_EQ(pairs(runs), (std::vector<std::pair<int64_t, uint64_t>>{{0, 3}})) << text;
        } else {
            EXPECT_TRUE(runs.empty());
        }
    }
}
