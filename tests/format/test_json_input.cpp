// The guarded JSON entry point: hostile text and hostile files are errors that name the place,
// never exceptions, stack overflows, blocking reads or unbounded allocations.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "probe/format/file_util.h"
#include "probe/format/json_input.h"
#include "test_support.h"

using namespace probe::format;

namespace {

constexpr JsonLimits kSmall{1u << 20, 32};

using probe::test::maxResidentKb;
using probe::test::nested;

}  // namespace

TEST(JsonInput, ParsesWhatIsWithinTheLimits) {
    auto parsed =
        parseJson(R"({"a": [1, 2.5, "x", null, true], "b": {"c": -3}})", "t.json", kSmall);
    ASSERT_TRUE(parsed.ok()) << parsed.error.toString();
    EXPECT_EQ((*parsed.value)["a"][1], 2.5);
    EXPECT_EQ((*parsed.value)["b"]["c"], -3);
    EXPECT_TRUE(parsed.duplicateKeys.empty());
    // Exactly at the depth limit is fine; one more is not.
    EXPECT_TRUE(parseJson(nested(32, "[", "]"), "t", kSmall).ok());
    EXPECT_FALSE(parseJson(nested(33, "[", "]"), "t", kSmall).ok());
    // Brackets inside strings do not count.
    EXPECT_TRUE(parseJson("[\"" + std::string(100, '[') + "\\\"[\"]", "t", kSmall).ok());
}

TEST(JsonInput, DeepNestingIsRefusedBeforeTheParserSeesIt) {
    // 100k levels: nlohmann recursed (copy, compare, dump) and the process died of a stack
    // overflow; 100k nested objects took 10 GB and quadratic time in the config reader.
    const long before = maxResidentKb();
    for (const auto& text : {nested(100000, "[", "]"), nested(100000, "{\"a\":", "}"),
                             "{\"task\": " + nested(100000, "[", "]") + "}"}) {
        auto parsed = parseJson(text, "deep.json", kSmall);
        ASSERT_FALSE(parsed.ok());
        EXPECT_EQ(parsed.error.line, 1);
        EXPECT_GT(parsed.error.column, 32);
        EXPECT_LT(parsed.error.column, 32 * 5 + 12);
        EXPECT_NE(parsed.error.problem.find("nested deeper than 32 levels"), std::string::npos)
            << parsed.error.problem;
        EXPECT_EQ(parsed.error.toString().rfind("deep.json:1:", 0), 0u) << parsed.error.toString();
    }
    EXPECT_LT(maxResidentKb() - before, 100 * 1024);  // far from the 10 GB the old reader took
}

TEST(JsonInput, NumbersBeyondDoubleRangeAreErrorsWithTheirPlace) {
    for (const char* text : {"{\n  \"task\": 1e999\n}", "{\n  \"x\": -1e999}", "[\n\n 1E+400]"}) {
        auto parsed = parseJson(text, "n.json", kSmall);
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_NE(parsed.error.problem.find("out of range"), std::string::npos)
            << parsed.error.problem;
        EXPECT_GE(parsed.error.line, 2);
    }
    auto error = parseJson("{\n  \"task\": 1e999\n}", "n.json", kSmall).error;
    EXPECT_EQ(error.line, 2);
    EXPECT_EQ(error.column, 11);  // where the number starts
    EXPECT_EQ(error.problem,
              "the number 1e999 is out of range (beyond +-1.8e308, the range of a double)");
    // Tiny numbers underflow to zero: that is a number, not an error.
    auto tiny = parseJson("[1e-999]", "n", kSmall);
    ASSERT_TRUE(tiny.ok());
    EXPECT_EQ((*tiny.value)[0], 0.0);
}

TEST(JsonInput, InvalidUtf8IsAnErrorWhoseTextIsValidUtf8) {
    for (const std::string& text :
         {std::string("{\"task\": \"a\xff\"}"), std::string("{\"\xc3\": 1}"), std::string("\xff"),
          std::string("{\"id\": \"\xe2\x82")}) {
        auto parsed = parseJson(text, "bad\xfe.json", kSmall);
        ASSERT_FALSE(parsed.ok());
        const std::string message = parsed.error.toString();
        EXPECT_TRUE(isValidUtf8(message)) << message;
        EXPECT_EQ(message.rfind("bad\\xFE.json:1:", 0), 0u) << message;
        // And it can travel in a message: dumping it does not throw.
        EXPECT_NO_THROW(dumpJson(nlohmann::json{{"reason", message}}));
    }
}

TEST(JsonInput, DumpingNeverThrowsOnInvalidUtf8) {
    nlohmann::json value{{"output_dir", std::string("/tmp/out\xff\xfe")}, {"ok", "caf\xc3\xa9"}};
    EXPECT_THROW(value.dump(), nlohmann::json::type_error);  // what killed the probe
    const std::string text = dumpJson(value);
    EXPECT_TRUE(isValidUtf8(text));
    EXPECT_NE(text.find("/tmp/out\xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos) << text;
    EXPECT_NE(text.find("caf\xc3\xa9"), std::string::npos);
    nlohmann::ordered_json ordered{{"k", std::string("\x80")}};
    EXPECT_EQ(dumpJson(ordered), "{\"k\":\"\xEF\xBF\xBD\"}");
    EXPECT_EQ(toValidUtf8("a\xffz"), "a\xEF\xBF\xBDz");
}

TEST(JsonInput, SizeLimit) {
    const std::string text = "[" + std::string(2000, ' ') + "]";
    EXPECT_TRUE(parseJson(text, "t", {4096, 4}).ok());
    auto parsed = parseJson(text, "big.json", {1000, 4});
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error.toString(), "big.json: is 2002 bytes, more than the limit of 1000");
}

TEST(JsonInput, RepeatedKeysKeepTheLastValueAndAreListed) {
    auto parsed = parseJson(R"({"a": 1, "s": {"k": 1, "k": [2]}, "a": 3})", "t", kSmall);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ((*parsed.value)["a"], 3);
    EXPECT_EQ((*parsed.value)["s"]["k"], nlohmann::json::array({2}));
    EXPECT_EQ(parsed.duplicateKeys, (std::vector<std::string>{"s.k", "a"}));
    // The ordered form keeps the first position and the last value, also in big objects.
    std::string big = "{";
    for (int i = 0; i < 100; ++i)
        big += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
    big += "\"k5\": 500}";
    auto ordered = parseOrderedJson(big, "t", kSmall);
    ASSERT_TRUE(ordered.ok());
    ASSERT_EQ(ordered.value->size(), 100u);
    EXPECT_EQ(ordered.value->begin().key(), "k0");
    EXPECT_EQ((*ordered.value)["k5"], 500);
    EXPECT_EQ(std::next(ordered.value->begin(), 5).key(), "k5");
    EXPECT_EQ(ordered.duplicateKeys, (std::vector<std::string>{"k5"}));
}

TEST(JsonInput, SyntaxErrorsNameLineAndColumn) {
    auto parsed =
        parseJson("{\n  \"task\": \"tensor\"\n  \"dump_enable\": true\n}", "cfg.json", kSmall);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error.line, 3);
    EXPECT_EQ(parsed.error.toString().rfind("cfg.json:3:", 0), 0u) << parsed.error.toString();
    EXPECT_NE(parsed.error.problem.find("not valid JSON"), std::string::npos);
    EXPECT_EQ(parsed.error.problem.find("json.exception"), std::string::npos)
        << parsed.error.problem;
    // Line breaks in what the parser last read are written as JSON writes them (they were
    // "<U+000A>", found by a new user typing after the closing brace).
    auto trailing = parseJson("{\"a\": 1\n}\nxx", "cfg.json", kSmall);
    ASSERT_FALSE(trailing.ok());
    EXPECT_NE(trailing.error.problem.find("'1\\n}\\nx'"), std::string::npos)
        << trailing.error.problem;
    EXPECT_EQ(trailing.error.problem.find("<U+"), std::string::npos) << trailing.error.problem;
    // A long bad token is not copied whole into the message.
    auto longToken = parseJson("[\"" + std::string(100000, 'x') + "\xff\"]", "t", kSmall);
    ASSERT_FALSE(longToken.ok());
    EXPECT_LT(longToken.error.problem.size(), 400u);
}

// nlohmann's lexer ends the text at a NUL byte: what followed went unread, and a config with
// anything after one was valid. A NUL is an error with its place, whatever follows it.
TEST(JsonInput, ANulByteIsAnErrorWithItsPlace) {
    const std::string text =
        std::string("{\"task\":\"statistics\",\"ids\":\"1\"}") + '\0' + "{\"ids\":\"zzz\"";
    auto parsed = parseJson(text, "nul.json", kSmall);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error.line, 1);
    EXPECT_EQ(parsed.error.column, 32);
    EXPECT_NE(parsed.error.problem.find("NUL"), std::string::npos) << parsed.error.problem;
    EXPECT_FALSE(parseJson(std::string("{}") + '\0', "t", kSmall).ok());
    EXPECT_TRUE(parseJson("{\"a\": \"\\u0000\"}", "t", kSmall).ok());  // escaped, as JSON allows
}

TEST(JsonInput, FilesThatAreNotRegularAreRefusedWithoutBlocking) {
    probe::test::TempDir dir;
    const std::string fifo = dir / "config.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto fromFifo = readJsonFile(fifo, kSmall);  // opening it for reading would wait for a writer
    ASSERT_FALSE(fromFifo.ok());
    EXPECT_EQ(fromFifo.error.toString(), fifo + ": is a named pipe (FIFO), not a regular file");
    auto fromDir = readJsonFile(dir.path(), kSmall);
    ASSERT_FALSE(fromDir.ok());
    EXPECT_NE(fromDir.error.problem.find("is a directory"), std::string::npos);
    auto fromDevice = readJsonFile("/dev/zero", kSmall);
    ASSERT_FALSE(fromDevice.ok());
    EXPECT_NE(fromDevice.error.problem.find("character device"), std::string::npos);
    // A link is followed and what it leads to is judged.
    const std::string link = dir / "link.json";
    ASSERT_EQ(::symlink(fifo.c_str(), link.c_str()), 0);
    EXPECT_NE(readJsonFile(link, kSmall).error.problem.find("named pipe"), std::string::npos);
    EXPECT_EQ(nonRegularKind(fifo), "a named pipe (FIFO)");
    EXPECT_EQ(nonRegularKind(dir / "absent"), "");
}

TEST(JsonInput, AHugeSparseFileIsRefusedBeforeAnythingIsAllocated) {
    probe::test::TempDir dir;
    const std::string path = dir / "dump.json";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, 6ll << 30), 0);  // 6 GiB, no blocks
    ::close(fd);
    const long before = maxResidentKb();
    auto parsed = readJsonFile(path, kDumpJsonLimits);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error.toString(),
              path + ": is 6442450944 bytes, more than the limit of 1073741824");
    std::string error;
    EXPECT_FALSE(readRegularFile(path, 1u << 20, &error));
    EXPECT_LT(maxResidentKb() - before, 10 * 1024);
}

TEST(JsonInput, PrintableText) {
    EXPECT_EQ(printableText("plain caf\xc3\xa9"), "plain caf\xc3\xa9");
    EXPECT_EQ(printableText("a\xff"
                            "b\x01"),
              "a\\xFFb\\x01");
    EXPECT_EQ(printableText(std::string(50, 'x'), 10), std::string(10, 'x') + "...");
    EXPECT_TRUE(isValidUtf8("\xf0\x9f\x98\x80"));
    EXPECT_FALSE(isValidUtf8("\xed\xa0\x80"));      // a surrogate
    EXPECT_FALSE(isValidUtf8("\xc0\xaf"));          // overlong
    EXPECT_FALSE(isValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}
