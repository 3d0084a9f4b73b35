// The op-level config: every key, its validation, and the selection rules.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "probe/format/op_config.h"
#include "test_support.h"

using namespace probe::format;

namespace {

OpConfig parseOk(const std::string& text) {
    auto result = parseOpConfig(text, "cfg.json");
    EXPECT_TRUE(result.ok()) << describeIssues(result.issues);
    return result.config.value_or(OpConfig{});
}

std::vector<ConfigIssue> parseBad(const std::string& text) {
    auto result = parseOpConfig(text, "cfg.json");
    EXPECT_FALSE(result.ok());
    EXPECT_FALSE(result.issues.empty());
    return result.issues;
}

bool selects(const OpConfig& c, const std::string& id, const std::string& path) {
    int depth = 0;
    for (char ch : id) depth += ch == '_';
    return c.selects({id, path, depth});
}

}  // namespace

TEST(OpConfig, DefaultsMatchTheDocumentedOnes) {
    OpConfig c = parseOk("{}");
    EXPECT_EQ(c.task, DumpTask::Tensor);
    EXPECT_FALSE(c.dumpEnable);
    EXPECT_EQ(c.execRange.kind, ExecRange::Kind::Ranges);
    EXPECT_TRUE(c.execRange.contains(0));
    EXPECT_FALSE(c.execRange.contains(1));
    EXPECT_TRUE(c.ids.empty());
    EXPECT_TRUE(c.opNames.empty());
    EXPECT_FALSE(c.saveChild);
    EXPECT_TRUE(c.devices.empty());
    EXPECT_EQ(c.filterLevel, 1);
}

TEST(OpConfig, ReadsTheDocumentedExample) {
    OpConfig c = parseOk(
        R"({"task": "tensor", "dump_enable": false, "exec_range": "all", "ids": "", "op_name": "",
                             "save_child": false, "device": "", "filter_level": 1})");
    EXPECT_EQ(c.execRange.kind, ExecRange::Kind::All);
    EXPECT_EQ(c, parseOpConfig(c.toJson().dump(), "x").config.value());
}

TEST(OpConfig, Task) {
    EXPECT_EQ(parseOk(R"({"task":"tensor"})").task, DumpTask::Tensor);
    EXPECT_EQ(parseOk(R"({"task":"statistics"})").task, DumpTask::Statistics);
    EXPECT_EQ(parseOk(R"({"task":"all"})").task, DumpTask::All);
    EXPECT_TRUE(parseOk(R"({"task":"tensor"})").wantsTensors());
    EXPECT_FALSE(parseOk(R"({"task":"tensor"})").wantsStatistics());
    EXPECT_FALSE(parseOk(R"({"task":"statistics"})").wantsTensors());
    EXPECT_TRUE(parseOk(R"({"task":"statistics"})").wantsStatistics());
    EXPECT_TRUE(parseOk(R"({"task":"all"})").wantsTensors());
    EXPECT_TRUE(parseOk(R"({"task":"all"})").wantsStatistics());
    auto issues = parseBad(R"({"task":"Tensor"})");
    EXPECT_EQ(issues[0].key, "task");
    EXPECT_NE(issues[0].accepted.find("\"statistics\""), std::string::npos);
    EXPECT_EQ(parseBad(R"({"task":1})")[0].key, "task");
}

TEST(OpConfig, DumpEnableAndSaveChildMustBeBooleans) {
    EXPECT_TRUE(parseOk(R"({"dump_enable":true})").dumpEnable);
    EXPECT_TRUE(parseOk(R"({"save_child":true})").saveChild);
    auto issues = parseBad(R"({"dump_enable":"true"})");
    EXPECT_EQ(issues[0].key, "dump_enable");
    EXPECT_NE(issues[0].problem.find("string"), std::string::npos);
    EXPECT_EQ(parseBad(R"({"save_child":1})")[0].key, "save_child");
}

TEST(OpConfig, ExecRange) {
    auto all = parseOk(R"({"exec_range":"all"})").execRange;
    EXPECT_TRUE(all.contains(0));
    EXPECT_TRUE(all.contains(123456));
    auto none = parseOk(R"({"exec_range":"none"})").execRange;
    EXPECT_FALSE(none.contains(0));
    auto range = parseOk(R"({"exec_range":"2,4"})").execRange;
    EXPECT_FALSE(range.contains(1));
    EXPECT_TRUE(range.contains(2));
    EXPECT_TRUE(range.contains(4));
    EXPECT_FALSE(range.contains(5));
    auto pairs = parseOk(R"({"exec_range":" 0 , 1 ,5,5"})").execRange;
    EXPECT_TRUE(pairs.contains(1));
    EXPECT_FALSE(pairs.contains(3));
    EXPECT_TRUE(pairs.contains(5));
    EXPECT_EQ(pairs.toString(), "0,1,5,5");
    for (const char* bad : {"\"3\"", "\"4,2\"", "\"a,b\"", "\"-1,2\"", "\"1,2,3\"", "\"\"", "5"})
        EXPECT_EQ(parseBad(std::string(R"({"exec_range":)") + bad + "}")[0].key, "exec_range")
            << bad;
}

TEST(OpConfig, IdsAndOpNameValidation) {
    EXPECT_EQ(parseOk(R"({"ids":"0, 2_1"})").ids, (std::vector<std::string>{"0", "2_1"}));
    EXPECT_EQ(parseOk(R"({"op_name":"Word,Prefill_Layer"})").opNames,
              (std::vector<std::string>{"word", "prefill_layer"}));
    for (const char* bad : {"\"a\"", "\"2__1\"", "\"_1\"", "\"1,\"", "\"1,,2\"", "3"})
        EXPECT_EQ(parseBad(std::string(R"({"ids":)") + bad + "}")[0].key, "ids") << bad;
    EXPECT_EQ(parseBad(R"({"op_name":"a,,b"})")[0].key, "op_name");
}

TEST(OpConfig, DeviceAndFilterLevel) {
    OpConfig c = parseOk(R"({"device":"0, 3"})");
    EXPECT_TRUE(c.acceptsDevice(0));
    EXPECT_TRUE(c.acceptsDevice(3));
    EXPECT_FALSE(c.acceptsDevice(1));
    EXPECT_FALSE(c.acceptsDevice(-1));
    EXPECT_TRUE(parseOk("{}").acceptsDevice(-1));
    EXPECT_EQ(parseBad(R"({"device":"x"})")[0].key, "device");
    EXPECT_EQ(parseBad(R"({"device":0})")[0].key, "device");
    for (int level : {0, 1, 2})
        EXPECT_EQ(parseOk("{\"filter_level\":" + std::to_string(level) + "}").filterLevel, level);
    EXPECT_EQ(parseBad(R"({"filter_level":3})")[0].key, "filter_level");
    EXPECT_EQ(parseBad(R"({"filter_level":"1"})")[0].key, "filter_level");
    EXPECT_EQ(parseBad(R"({"filter_level":1.5})")[0].key, "filter_level");
    // Why: a fraction, or a whole number written as a real ("must be a whole number, found
    // number 1.0" read as a contradiction).
    EXPECT_EQ(parseBad(R"({"filter_level":1.5})")[0].problem,
              "must be a whole number, found number 1.5");
    EXPECT_EQ(parseBad(R"({"filter_level":1.0})")[0].problem,
              "must be written as an integer (1, not 1.0)");
    EXPECT_EQ(parseBad(R"({"overflow_nums":1e10})")[0].problem,
              "must be written as an integer (10000000000, not 10000000000.0)");
    EXPECT_EQ(parseBad(R"({"overflow_nums":1e300})")[0].problem,
              "must be a whole number, found number 1e+300");
}

TEST(OpConfig, FilterLevelOnlyMattersWithSaveChild) {
    OpConfig c = parseOk(R"({"filter_level":2})");
    EXPECT_FALSE(c.deduplicatesTensors());
    EXPECT_FALSE(c.skipsKernelTensors());
    c = parseOk(R"({"filter_level":0,"save_child":true})");
    EXPECT_FALSE(c.deduplicatesTensors());
    EXPECT_FALSE(c.skipsKernelTensors());
    c = parseOk(R"({"filter_level":1,"save_child":true})");
    EXPECT_TRUE(c.deduplicatesTensors());
    EXPECT_FALSE(c.skipsKernelTensors());
    c = parseOk(R"({"filter_level":2,"save_child":true})");
    EXPECT_TRUE(c.deduplicatesTensors());
    EXPECT_TRUE(c.skipsKernelTensors());
}

TEST(OpConfig, GradMonitorIsOptionalAndWrittenOnlyWhenOn) {
    EXPECT_FALSE(parseOk("{}").gradMonitor);
    const OpConfig on = parseOk(R"({"grad_monitor": true})");
    EXPECT_TRUE(on.gradMonitor);
    EXPECT_EQ(parseBad(R"({"grad_monitor": "yes"})")[0].key, "grad_monitor");
    EXPECT_EQ(on.toFileText().find("\"grad_monitor\": true") != std::string::npos, true);
    EXPECT_EQ(OpConfig{}.toFileText().find("grad_monitor"), std::string::npos);
    EXPECT_EQ(parseOpConfig(on.toFileText(), "x").config.value(), on);
    EXPECT_NE(on, OpConfig{});
}

TEST(OpConfig, OverflowCheckTaskAndOverflowNums) {
    const OpConfig c = parseOk(R"({"task": "overflow_check", "overflow_nums": -1})");
    EXPECT_EQ(c.task, DumpTask::OverflowCheck);
    EXPECT_TRUE(c.wantsTensors());  // the born ops' tensors are written
    EXPECT_TRUE(c.wantsStatistics());
    EXPECT_EQ(c.overflowNums, -1);
    EXPECT_EQ(parseOk("{}").overflowNums, 1);  // msprobe's default
    EXPECT_EQ(parseBad(R"({"overflow_nums": -2})")[0].key, "overflow_nums");
    EXPECT_EQ(parseBad(R"({"overflow_nums": 1.5})")[0].key, "overflow_nums");
    // Beyond a signed 64-bit number: said as written (2^64 - 1 was taken as -1, no limit, and
    // 2^63 said as -9223372036854775808).
    EXPECT_EQ(parseBad(R"({"overflow_nums": 18446744073709551615})")[0].problem,
              "18446744073709551615 is out of range");
    EXPECT_EQ(parseBad(R"({"overflow_nums": 9223372036854775808})")[0].problem,
              "9223372036854775808 is out of range");
    EXPECT_EQ(parseBad(R"({"filter_level": 18446744073709551615})")[0].problem,
              "18446744073709551615 is out of range");
    EXPECT_NE(parseBad(R"({"task": "overflow"})")[0].accepted.find("overflow_check"),
              std::string::npos);
    // Written back: the task's count always, a count alone only when not the default.
    EXPECT_NE(c.toFileText().find("\"overflow_nums\": -1"), std::string::npos);
    EXPECT_EQ(parseOpConfig(c.toFileText(), "x").config.value(), c);
    EXPECT_EQ(OpConfig{}.toFileText().find("overflow_nums"), std::string::npos);
    EXPECT_NE(parseOk(R"({"task": "overflow_check"})").toFileText().find("\"overflow_nums\": 1"),
              std::string::npos);
}

TEST(OpConfig, StopAfterOverflowIsAnOptionalBoolean) {
    EXPECT_FALSE(parseOk("{}").stopAfterOverflow);
    const OpConfig c = parseOk(R"({"task": "overflow_check", "stop_after_overflow": true})");
    EXPECT_TRUE(c.stopAfterOverflow);
    EXPECT_NE(c.toFileText().find("\"stop_after_overflow\": true"), std::string::npos);
    EXPECT_EQ(parseOpConfig(c.toFileText(), "x").config.value(), c);
    EXPECT_EQ(OpConfig{}.toFileText().find("stop_after_overflow"), std::string::npos);
    const auto issues = parseBad(R"({"stop_after_overflow": "yes"})");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].key, "stop_after_overflow");
    EXPECT_NE(issues[0].accepted.find("true or false"), std::string::npos);
}

TEST(OpConfig, EveryProblemIsReportedWithFileKeyAndAcceptedValues) {
    auto issues = parseBad(R"({"task":"x","dump_enable":1,"exec_range":"9,1","ids":"q","op_name":3,
                               "save_child":"no","device":"z","filter_level":7,"dump_enabel":true})");
    EXPECT_EQ(issues.size(), 9u);
    for (const auto& issue : issues) {
        EXPECT_EQ(issue.file, "cfg.json");
        EXPECT_FALSE(issue.key.empty());
        EXPECT_FALSE(issue.accepted.empty()) << issue.toString();
        EXPECT_NE(issue.toString().find("cfg.json: key \"" + issue.key + "\""), std::string::npos);
    }
}

TEST(OpConfig, SyntaxErrorsGiveLineAndColumn) {
    auto issues = parseBad("{\n  \"task\": \"tensor\",\n  \"dump_enable\": tru\n}");
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].line, 3);
    EXPECT_GT(issues[0].column, 1);
    EXPECT_EQ(parseBad("[1]")[0].key, "");
}

TEST(OpConfig, MissingFileIsReported) {
    auto result = loadOpConfigFile("/nonexistent/dir/cfg.json");
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.issues[0].toString().find("cannot be read"), std::string::npos);
}

// Selection: ids and op_name, with and without save_child (see the reference's rules).
TEST(OpConfigSelection, EmptySelectsLayerLevelOnlyOrEverythingWithSaveChild) {
    OpConfig c;
    EXPECT_TRUE(selects(c, "2", "Prefill_layer"));
    EXPECT_FALSE(selects(c, "2_1", "Prefill_layer/Attention"));
    c.saveChild = true;
    EXPECT_TRUE(selects(c, "2_1", "Prefill_layer/Attention"));
    EXPECT_TRUE(selects(c, "2_1_0", "Prefill_layer/Attention/MatMulKernel"));
}

TEST(OpConfigSelection, IdsExactWithoutSaveChildAndSubtreeWithIt) {
    OpConfig c = parseOk(R"({"ids":"2_1"})");
    EXPECT_TRUE(selects(c, "2_1", "L/A"));
    EXPECT_FALSE(selects(c, "2", "L"));
    EXPECT_FALSE(selects(c, "2_1_0", "L/A/K"));
    EXPECT_FALSE(selects(c, "2_10", "L/B"));
    c.saveChild = true;
    EXPECT_TRUE(selects(c, "2_1_0", "L/A/K"));
    EXPECT_FALSE(selects(c, "2_10", "L/B"));
    EXPECT_FALSE(selects(c, "2", "L"));
    OpConfig layer = parseOk(R"({"ids":"2","save_child":true})");
    EXPECT_TRUE(selects(layer, "2", "L"));
    EXPECT_TRUE(selects(layer, "2_3_1", "L/x/y"));
    EXPECT_FALSE(selects(layer, "20", "M"));
    EXPECT_FALSE(selects(layer, "20_1", "M/x"));
}

TEST(OpConfigSelection, OpNamePrefixCaseInsensitive) {
    OpConfig c = parseOk(R"({"op_name":"ATTEN"})");
    EXPECT_TRUE(selects(c, "2_1", "Decoder_layer/Attention"));
    EXPECT_FALSE(selects(c, "2_1_0", "Decoder_layer/Attention/MatMulKernel"));
    EXPECT_FALSE(selects(c, "2", "Decoder_layer"));
    EXPECT_FALSE(selects(c, "3_1", "Decoder_layer/SelfAttention"));  // a prefix, not a substring
    c.saveChild = true;
    EXPECT_TRUE(selects(c, "2_1", "Decoder_layer/Attention"));
    EXPECT_TRUE(selects(c, "2_1_0", "Decoder_layer/Attention/MatMulKernel"));
    EXPECT_FALSE(selects(c, "2_2", "Decoder_layer/Mlp"));
    OpConfig layer = parseOk(R"({"op_name":"decoder_layer_1"})");
    EXPECT_TRUE(selects(layer, "2", "Decoder_layer_1"));
    EXPECT_TRUE(selects(layer, "5", "Decoder_layer_12"));  // prefix semantics
    EXPECT_FALSE(selects(layer, "2_0", "Decoder_layer_1/RmsNorm"));
}

TEST(OpConfigSelection, IdsAndOpNameAreAlternatives) {
    OpConfig c = parseOk(R"({"ids":"0","op_name":"lmhead"})");
    EXPECT_TRUE(selects(c, "0", "WordEmbedding"));
    EXPECT_TRUE(selects(c, "3", "LmHead"));
    EXPECT_FALSE(selects(c, "1", "Decoder_layer_0"));
}

TEST(OpConfigSelection, MaySelectDescendants) {
    OpConfig c;
    EXPECT_FALSE(c.maySelectDescendants({"2", "L", 0}));
    c.saveChild = true;
    EXPECT_TRUE(c.maySelectDescendants({"2", "L", 0}));
    OpConfig ids = parseOk(R"({"ids":"2_1_0"})");
    EXPECT_TRUE(ids.maySelectDescendants({"2", "L", 0}));
    EXPECT_TRUE(ids.maySelectDescendants({"2_1", "L/A", 1}));
    EXPECT_FALSE(ids.maySelectDescendants({"3", "M", 0}));
    EXPECT_FALSE(ids.maySelectDescendants({"2_1_0", "L/A/K", 2}));
}

// Whether any layer-level op may have a selected descendant: exactly when maySelectDescendants
// holds for some layer-level op of some config (an adapter then watches ops inside layers).
TEST(OpConfigSelection, MaySelectBelowLayers) {
    EXPECT_FALSE(OpConfig().maySelectBelowLayers());
    EXPECT_FALSE(parseOk(R"({"ids":"2,5"})").maySelectBelowLayers());
    EXPECT_TRUE(parseOk(R"({"ids":"2,5_0"})").maySelectBelowLayers());
    EXPECT_TRUE(parseOk(R"({"op_name":"Linear"})").maySelectBelowLayers());
    EXPECT_TRUE(parseOk(R"({"save_child":true})").maySelectBelowLayers());
    for (const char* text : {R"({"ids":"2,5"})", R"({})"}) {
        const OpConfig layersOnly = parseOk(text);
        for (const char* id : {"2", "5", "7"})
            EXPECT_FALSE(layersOnly.maySelectDescendants({id, "L", 0})) << text << " " << id;
    }
}

// --- hostile config text: every case is an issue naming the place, never an exception ----------

namespace {

bool validUtf8(const std::string& text) {
    return nlohmann::json(text).dump(-1, ' ', false).size() > 0;
}

std::string deepArray(size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace

TEST(OpConfigHostile, NumberBeyondDoubleRangeIsAnIssue) {
    // out_of_range.406 escaped the parser and aborted the model.
    for (const char* text :
         {R"({"task": 1e999})", R"({"filter_level": -1e999})", R"({"x": [1e400]})"}) {
        auto result = parseOpConfig(text, "cfg.json");
        ASSERT_FALSE(result.ok()) << text;
        ASSERT_EQ(result.issues.size(), 1u);
        EXPECT_EQ(result.issues[0].line, 1);
        EXPECT_NE(result.issues[0].toString().find("out of range"), std::string::npos)
            << result.issues[0].toString();
    }
}

TEST(OpConfigHostile, BytesThatAreNotUtf8AreAnIssueThatCanBeSent) {
    // type_error.316 came after the rejection, when its text was put in a JSON message.
    for (const std::string& text :
         {std::string("{\"task\": \"\xff\"}"), std::string("{\"\xfe\": 1}"),
          std::string("{\"ids\": \"1\", \"op_name\": \"a\xc3\"}")}) {
        auto result = parseOpConfig(text, "cfg\xff.json");
        ASSERT_FALSE(result.ok());
        const std::string reason = describeIssues(result.issues);
        EXPECT_NE(reason.find("cfg\\xFF.json:1:"), std::string::npos) << reason;
        EXPECT_NO_THROW(EXPECT_TRUE(validUtf8(reason)));
    }
}

TEST(OpConfigHostile, DeepNestingIsAnIssue) {
    for (size_t depth : {100u, 100000u}) {
        auto result = parseOpConfig("{\"task\": " + deepArray(depth) + "}", "cfg.json");
        ASSERT_FALSE(result.ok());
        ASSERT_EQ(result.issues.size(), 1u);
        EXPECT_NE(result.issues[0].problem.find("nested deeper than"), std::string::npos);
        EXPECT_EQ(result.issues[0].line, 1);
    }
    // Shallow enough to be read: the wrong type is said, with a short rendering of the value.
    auto result = parseOpConfig("{\"task\": " + deepArray(20) + "}", "cfg.json");
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.issues[0].problem.find("must be a string"), std::string::npos);
}

// What a key of the wrong type holds is said once: "found null", not "found null null".
TEST(OpConfigHostile, AWrongTypeIsSaidWithWhatTheKeyHolds) {
    auto result = parseOpConfig(R"({"op_name": null, "save_child": 1, "ids": ["0"]})", "cfg.json");
    ASSERT_FALSE(result.ok());
    std::vector<std::string> problems;
    for (const auto& issue : result.issues) problems.push_back(issue.problem);
    const auto said = [&](const std::string& text) {
        return std::find(problems.begin(), problems.end(), text) != problems.end();
    };
    EXPECT_TRUE(said("must be a string, found null"));
    EXPECT_TRUE(said("must be a boolean, found number 1"));
    EXPECT_TRUE(said("must be a string, found array [\"0\"]"));
}

TEST(OpConfigHostile, ARepeatedKeyWarnsAndTheLastValueCounts) {
    // It warned "only the last value counts" and then rejected the file.
    auto result = parseOpConfig(R"({"ids": "1", "dump_enable": true, "ids": "2"})", "cfg.json");
    ASSERT_TRUE(result.ok()) << describeIssues(result.issues);
    EXPECT_EQ(result.config->ids, (std::vector<std::string>{"2"}));
    ASSERT_EQ(result.issues.size(), 1u);
    EXPECT_TRUE(result.issues[0].warning);
    EXPECT_EQ(
        result.issues[0].toString(),
        "cfg.json: warning: key \"ids\": is given more than once; only the last value counts");
}

TEST(OpConfigHostile, AConfigPathThatIsNotARegularFileIsReportedAsWhatItIs) {
    probe::test::TempDir dir;
    auto fromDir = loadOpConfigFile(dir.path());
    ASSERT_FALSE(fromDir.ok());
    EXPECT_NE(fromDir.issues[0].toString().find("is a directory"), std::string::npos)
        << fromDir.issues[0].toString();
    const std::string fifo = dir / "fifo.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto fromFifo = loadOpConfigFile(fifo);  // blocked in open() for a writer before
    ASSERT_FALSE(fromFifo.ok());
    EXPECT_NE(fromFifo.issues[0].toString().find("named pipe"), std::string::npos)
        << fromFifo.issues[0].toString();
    auto fromDevice = loadOpConfigFile("/dev/zero");  // read forever before
    ASSERT_FALSE(fromDevice.ok());
    EXPECT_NE(fromDevice.issues[0].toString().find("character device"), std::string::npos);
    // Bigger than any config: refused by its size.
    probe::test::writeFile(dir / "big.json", "{\"ids\": \"" + std::string(2u << 20, '1') + "\"}");
    auto big = loadOpConfigFile(dir / "big.json");
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.issues[0].toString().find("more than the limit of 1048576"), std::string::npos);
}
