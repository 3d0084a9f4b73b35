// SPDX-License-Identifier: GPL-3.0-or-later
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "op_names.h"

namespace probe::runtime {
namespace {

// The rule op_names.h states, a byte at a time: names of printable ASCII without '/', at most
// kMaxNameBytes long, are kept as they are.
bool plainByRule(std::string_view text) {
    if (text.size() > kMaxNameBytes) return false;
    for (const unsigned char c : text)
        if (c < 0x20 || c > 0x7e || c == '/') return false;
    return true;
}

// Every length up to past a few words, with one byte outside the rule at every position (or
// none): the name is a view of itself exactly when the rule keeps it, and its sanitized form
// is plain otherwise.
TEST(OpNames, KeepsExactlyThePlainNamesAtEveryLengthAndPosition) {
    const std::string fills[] = {"a", " ", "~", ".", "0", "aten::x_1"};
    const unsigned char odd[] = {0x01, 0x09, 0x0a, 0x1f, 0x7f, 0x80, 0xc3, 0xff, '/'};
    int plain = 0, changed = 0;
    for (const std::string& fill : fills) {
        for (size_t length = 1; length <= 40; ++length) {
            std::string base;
            while (base.size() < length) base += fill;
            base.resize(length);
            for (size_t at = 0; at <= length; ++at) {
                for (const unsigned char c : odd) {
                    std::string text = base;
                    if (at < length) text[at] = static_cast<char>(c);
                    std::string scratch;
                    const std::string_view name = sanitizedName(text.c_str(), scratch);
                    if (plainByRule(text)) {
                        ASSERT_EQ(name.data(), text.data()) << length << " " << at;
                        ASSERT_EQ(name.size(), text.size());
                        ++plain;
                    } else {
                        ASSERT_NE(name, text) << length << " " << at << " " << int(c);
                        ASSERT_TRUE(plainByRule(name)) << name;
                        ASSERT_EQ(std::string(name), sanitizeName(text.c_str()));
                        ++changed;
                    }
                    if (at == length) break;  // no odd byte: once
                }
            }
        }
    }
    EXPECT_GT(plain, 200);
    EXPECT_GT(changed, 10000);
}

TEST(OpNames, LongNamesAreCutAtTheLimit) {
    const std::string limit(kMaxNameBytes, 'n'), over(kMaxNameBytes + 1, 'n');
    std::string scratch;
    EXPECT_EQ(sanitizedName(limit.c_str(), scratch).data(), limit.data());
    const std::string_view cut = sanitizedName(over.c_str(), scratch);
    EXPECT_NE(cut.data(), over.data());
    EXPECT_EQ(cut.substr(0, kMaxNameBytes), limit);
    EXPECT_EQ(cut.substr(kMaxNameBytes, 1), "~");
}

TEST(OpNames, AnOpsNameAndTypeAreSanitizedEachAsAlone) {
    const char* const types[] = {"aten::linear",
                                 "aten::a/b",
                                 "aten::\x01odd",
                                 "x",
                                 "",
                                 "aten::very_long_operator_name_of_many_words"};
    for (const char* type : types) {
        const size_t length = std::string_view(type).size();
        for (size_t tail = 0; tail < length; ++tail) {
            const char* name = type + tail;  // the name inside its type's text
            std::string nameScratch, typeScratch;
            const OpNames names = sanitizedOpNames(name, type, nameScratch, typeScratch);
            EXPECT_EQ(std::string(names.name), sanitizeName(name)) << type << " " << tail;
            EXPECT_EQ(std::string(names.type), *type ? sanitizeName(type) : sanitizeName(name));
        }
    }
    std::string nameScratch, typeScratch;
    const OpNames apart = sanitizedOpNames("a/b", "aten::add", nameScratch, typeScratch);
    EXPECT_EQ(apart.name, "a_b");
    EXPECT_EQ(apart.type, "aten::add");
    const OpNames untyped = sanitizedOpNames("mm\t", nullptr, nameScratch, typeScratch);
    EXPECT_EQ(untyped.name, "mm_");
    EXPECT_EQ(untyped.type, "mm_");
}

}  // namespace
}  // namespace probe::runtime
