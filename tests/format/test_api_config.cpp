// The code-level (msprobe style) config: every key validated, warnings for msprobe keys that
// have no effect here.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <map>

#include <gtest/gtest.h>

#include "probe/format/api_config.h"

using namespace probe::format;

namespace {
ApiConfig parseOk(const std::string& text) {
    auto result = parseApiConfig(text, "config.json");
    EXPECT_TRUE(result.ok()) << describeIssues(result.issues);
    return result.config.value_or(ApiConfig{});
}
ConfigIssue firstError(const std::string& text) {
    auto result = parseApiConfig(text, "config.json");
    EXPECT_FALSE(result.ok());
    for (const auto& i : result.issues)
        if (!i.warning) return i;
    ADD_FAILURE() << "no error";
    return {};
}
}  // namespace

TEST(ApiConfig, TheDocumentedExampleParses) {
    ApiConfig c = parseOk(
        R"({"task": "statistics", "dump_path": "./dump", "rank": [], "step": [], "level": "L1",
        "seed": 1234, "is_deterministic": false,
        "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"},
        "tensor": {"scope": [], "list": [], "data_mode": ["all"]}})");
    EXPECT_EQ(c.task, "statistics");
    EXPECT_EQ(c.dumpPath, "./dump");
    EXPECT_EQ(c.level, "L1");
    EXPECT_EQ(c.seed, 1234);
    EXPECT_EQ(c.statistics.summaryMode, "statistics");
}

TEST(ApiConfig, StepsAndRanksExpandRanges) {
    ApiConfig c = parseOk(R"({"step": [0, "3-5", 2, 3], "rank": ["1-2"]})");
    EXPECT_EQ(c.step, (std::vector<int64_t>{0, 2, 3, 4, 5}));
    EXPECT_EQ(c.rank, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(firstError(R"({"step": "1"})").key, "step");
    EXPECT_EQ(firstError(R"({"step": [-1]})").key, "step");
    EXPECT_EQ(firstError(R"({"step": ["5-3"]})").key, "step");
    EXPECT_EQ(firstError(R"({"rank": [1.5]})").key, "rank");
    EXPECT_EQ(firstError(R"({"rank": [true]})").key, "rank");
}

TEST(ApiConfig, TaskAndLevel) {
    EXPECT_EQ(parseOk(R"({"task": "tensor"})").task, "tensor");
    for (const char* level : {"L0", "L1", "mix"})
        EXPECT_EQ(parseOk(std::string(R"({"level": ")") + level + "\"}").level, level);
    auto issue = firstError(R"({"task": "free_benchmark"})");
    EXPECT_EQ(issue.key, "task");
    EXPECT_NE(issue.accepted.find("statistics"), std::string::npos);
    EXPECT_EQ(firstError(R"({"level": "L2"})").key, "level");
}

TEST(ApiConfig, OverflowCheckTaskReadsItsBlock) {
    const ApiConfig c = parseOk(
        R"({"task": "overflow_check", "overflow_check": {"overflow_nums": -1, "list": ["mul"],
            "stop_after_overflow": true}})");
    EXPECT_EQ(c.task, "overflow_check");
    EXPECT_EQ(c.overflow.overflowNums, -1);
    EXPECT_TRUE(c.overflow.stopAfterOverflow);
    EXPECT_EQ(c.active().list, std::vector<std::string>{"mul"});
    EXPECT_EQ(parseOk(R"({"task": "overflow_check"})").overflow.overflowNums, 1);  // msprobe's
    EXPECT_FALSE(parseOk("{}").overflow.stopAfterOverflow);
    // msprobe's rule: -1 or a whole number above 0.
    for (const char* bad : {"0", "-2", "1.5", "\"2\"", "18446744073709551615"})
        EXPECT_EQ(
            firstError(std::string(R"({"overflow_check": {"overflow_nums": )") + bad + "}}").key,
            "overflow_check.overflow_nums")
            << bad;
    EXPECT_EQ(firstError(R"({"overflow_check": {"stop_after_overflow": 1}})").key,
              "overflow_check.stop_after_overflow");
    // Ascend's check_mode has no effect here: a warning, not an error.
    auto result = parseApiConfig(R"({"overflow_check": {"check_mode": "all"}})", "c.json");
    ASSERT_TRUE(result.ok());
    ASSERT_EQ(result.issues.size(), 1u);
    EXPECT_EQ(result.issues[0].key, "overflow_check.check_mode");
    const auto json = c.toJson();
    EXPECT_EQ(json["overflow_check"]["overflow_nums"], -1);
    EXPECT_EQ(json["overflow_check"]["stop_after_overflow"], true);
}

TEST(ApiConfig, TaskSections) {
    ApiConfig c = parseOk(
        R"({"level": "mix", "statistics": {"scope": ["Module.fc1.Linear.forward.0", "Functional.relu.0.forward"],
                                "list": ["relu"], "data_mode": ["forward", "input"], "summary_mode": "md5"}})");
    EXPECT_EQ(c.statistics.scope.size(), 2u);
    EXPECT_EQ(c.statistics.list, std::vector<std::string>{"relu"});
    EXPECT_EQ(c.statistics.dataMode, (std::vector<std::string>{"forward", "input"}));
    EXPECT_EQ(c.statistics.summaryMode, "md5");
    EXPECT_EQ(firstError(R"({"statistics": {"scope": ["Functional.relu.0.forward"]}})").key,
              "statistics.scope");
    EXPECT_EQ(
        firstError(
            R"({"level": "L1", "statistics": {"scope": ["Module.a.A.forward.0", "Module.b.B.forward.0"]}})")
            .key,
        "statistics.scope");
    EXPECT_EQ(firstError(R"({"statistics": {"data_mode": ["all", "input"]}})").key,
              "statistics.data_mode");
    EXPECT_EQ(firstError(R"({"statistics": {"data_mode": ["sideways"]}})").key,
              "statistics.data_mode");
    EXPECT_EQ(firstError(R"({"statistics": {"summary_mode": "sha1"}})").key,
              "statistics.summary_mode");
    EXPECT_EQ(firstError(R"({"tensor": {"summary_mode": "xor"}})").key, "tensor.summary_mode");
    // msprobe reads summary_mode in the tensor block too (an md5 beside each saved tensor).
    EXPECT_EQ(
        parseOk(R"({"task": "tensor", "tensor": {"summary_mode": "md5"}})").tensor.summaryMode,
        "md5");
    EXPECT_EQ(parseOk(R"({"statistics": {"tensor_list": ["relu"]}})").statistics.tensorList,
              std::vector<std::string>{"relu"});
    EXPECT_EQ(firstError(R"({"tensor": {"list": "relu"}})").key, "tensor.list");
}

TEST(ApiConfig, MsprobeOnlyKeysWarn) {
    auto result = parseApiConfig(
        R"({"task": "statistics", "async_dump": false, "acc_check": {"white_list": []}})",
        "c.json");
    ASSERT_TRUE(result.ok());
    ASSERT_EQ(result.issues.size(), 2u);
    EXPECT_TRUE(result.issues[0].warning);
    EXPECT_NE(result.issues[0].toString().find("warning"), std::string::npos);
}

TEST(ApiConfig, EveryKeyMsprobeReadsIsAccepted) {
    // Each key of the table, alone in its block with a value msprobe accepts: never an error;
    // a warning exactly for the keys that do nothing here.
    for (const auto& k : msprobeConfigKeys()) {
        const std::string block = k.block, key = k.key;
        nlohmann::json value = nullptr;
        if (key == "tensor_list" || key == "list" || key == "scope" || key == "white_list")
            value = nlohmann::json::array();
        else if (key == "data_mode")
            value = nlohmann::json::array({"all"});
        else if (key == "summary_mode")
            value = "md5";
        else if (key == "overflow_nums")
            value = 1;
        else if (key == "stop_after_overflow")
            value = false;
        else if (block.empty() && k.use == MsprobeKeyUse::Honoured)
            value = nlohmann::json::parse(ApiConfig().toJson()[key].dump());  // its default
        nlohmann::json config = nlohmann::json::object();
        if (block.empty())
            config[k.key] = value;
        else
            config[block][k.key] = value;
        SCOPED_TRACE(config.dump());
        auto result = parseApiConfig(config.dump(), "c.json");
        ASSERT_TRUE(result.ok()) << describeIssues(result.issues);
        size_t warnings = 0;
        for (const auto& issue : result.issues) {
            EXPECT_TRUE(issue.warning);
            if (k.use == MsprobeKeyUse::NoEffect) {
                EXPECT_NE(issue.problem.find(k.note), std::string::npos) << issue.problem;
            }
            ++warnings;
        }
        EXPECT_EQ(warnings, k.use == MsprobeKeyUse::Honoured ? 0u : 1u);
    }
}

TEST(ApiConfig, UnknownKeysAreIgnoredWithTheClosestKnownKey) {
    auto result =
        parseApiConfig(R"({"levle": "L0", "statistics": {"summary_mod": "md5", "scope": []},
                                     "summary_mode": "md5", "tensor": {"tensor_list": []}})",
                       "c.json");
    ASSERT_TRUE(result.ok()) << describeIssues(result.issues);
    EXPECT_EQ(result.config->level, "L1");  // the misspelt key does nothing
    ASSERT_EQ(result.issues.size(), 4u) << describeIssues(result.issues);
    std::map<std::string, std::string> problems;
    for (const auto& issue : result.issues) {
        EXPECT_TRUE(issue.warning);
        problems[issue.key] = issue.toString();
    }
    EXPECT_NE(problems["levle"].find("the closest known key is \"level\""), std::string::npos)
        << problems["levle"];
    EXPECT_NE(problems["levle"].find("accepted: task, dump_path"), std::string::npos)
        << problems["levle"];
    EXPECT_NE(problems["statistics.summary_mod"].find("the closest known key is \"summary_mode\""),
              std::string::npos);
    EXPECT_NE(
        problems["summary_mode"].find("msprobe reads \"summary_mode\" at the \"statistics\" block"),
        std::string::npos)
        << problems["summary_mode"];
    EXPECT_NE(problems["tensor.tensor_list"].find("at the \"statistics\" block"),
              std::string::npos);
}

TEST(ApiConfig, SeedAndBooleans) {
    EXPECT_EQ(parseOk(R"({"seed": 7})").seed, 7);
    EXPECT_TRUE(parseOk(R"({"is_deterministic": true})").isDeterministic);
    EXPECT_FALSE(parseOk(R"({"extra_info": false})").extraInfo);
    EXPECT_EQ(firstError(R"({"seed": -1})").key, "seed");
    EXPECT_EQ(firstError(R"({"seed": "1"})").key, "seed");
    EXPECT_EQ(firstError(R"({"seed": 42.0})").problem,
              "must be written as an integer (42, not 42.0)");
    EXPECT_EQ(firstError(R"({"seed": -1})").problem, "-1 is not a valid seed");
    EXPECT_EQ(firstError(R"({"is_deterministic": "yes"})").key, "is_deterministic");
}

TEST(ApiConfig, KindIsRecognised) {
    EXPECT_EQ(guessConfigKind(nlohmann::json::parse(R"({"task":"tensor","exec_range":"all"})")),
              "op");
    EXPECT_EQ(guessConfigKind(nlohmann::json::parse(R"({"task":"statistics","level":"L1"})")),
              "api");
    EXPECT_EQ(guessConfigKind(nlohmann::json::parse(R"({"dump_enable":true})")), "op");
    EXPECT_EQ(guessConfigKind(nlohmann::json::parse(R"({})")), "");
}

TEST(ApiConfig, EveryBadElementOfAListIsNamed) {
    const ConfigIssue issue = firstError(R"({"step": ["6-4", "x-y", 1.5, 3]})");
    EXPECT_EQ(issue.key, "step");
    for (const char* part : {"\"6-4\"", "\"x-y\"", "1.5"})
        EXPECT_NE(issue.problem.find(part), std::string::npos) << part;
    EXPECT_EQ(issue.problem.find(" 3"), std::string::npos) << issue.problem;
}

TEST(ApiConfig, KeysGivenTwiceAreSaidWithTheirPath) {
    auto result = parseApiConfig(
        R"({"task": "tensor", "statistics": {"list": [], "list": ["relu"]}, "task": "statistics"})",
        "c.json");
    ASSERT_TRUE(result.ok()) << describeIssues(result.issues);  // legal JSON: warned, not refused
    EXPECT_EQ(result.config->task, "statistics");               // the last value counts, as it says
    std::vector<std::string> warned;
    for (const auto& i : result.issues)
        if (i.warning && i.problem.find("more than once") != std::string::npos)
            warned.push_back(i.key);
    EXPECT_EQ(warned, (std::vector<std::string>{"statistics.list", "task"}));
}

TEST(ApiConfigHostile, HostileValuesAreIssuesNotCrashes) {
    // Beyond double range, not UTF-8, nested 100k deep: issues with their place.
    for (const std::string& text :
         {std::string(R"({"seed": 1e999})"), std::string("{\"level\": \"L\xff\"}"),
          "{\"step\": " + std::string(100000, '[') + std::string(100000, ']') + "}"}) {
        auto result = parseApiConfig(text, "c.json");
        ASSERT_FALSE(result.ok());
        EXPECT_EQ(result.issues.at(0).line, 1) << describeIssues(result.issues);
    }
    // A range whose numbers do not fit in 64 bits: std::stoll threw out_of_range.
    const ConfigIssue issue =
        firstError(R"({"step": ["99999999999999999999-1", "0-99999999999999999999"]})");
    EXPECT_EQ(issue.key, "step");
    EXPECT_NE(issue.problem.find("99999999999999999999-1"), std::string::npos) << issue.problem;
}

TEST(ApiConfigHostile, AVeryLongEntryNameInScopeIsJudgedWithoutRecursion) {
    // std::regex matched ".*" one stack frame per character: a long name overflowed the stack.
    const std::string name = "Functional." + std::string(300000, 'x') + ".0.forward";
    auto result = parseApiConfig(
        "{\"level\": \"L1\", \"statistics\": {\"scope\": [\"" + name + "\", \"" + name + "\"]}}",
        "c.json");
    ASSERT_TRUE(result.ok()) << describeIssues(result.issues);
    EXPECT_EQ(result.config->statistics.scope.size(), 2u);
}
