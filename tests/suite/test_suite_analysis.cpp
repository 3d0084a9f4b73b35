// The analyses of the precision suite on small dumps and monitor files written here: where an
// overflow is born (innermost op, range, ignored ops, several processes), and gradient findings.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "analysis/grad_monitor.h"
#include "analysis/msprobe_dump.h"
#include "analysis/overflow_check.h"
#include "test_support.h"

namespace probe::analysis {
namespace {

const char* kHeader =
    "Device and PID,Execution Count,Op Name,Op Type,Op "
    "Id,Input/Output,Index,Dtype,Format,Shape,Max,Min,Mean,Norm,"
    "Tensor Path\n";

void makeDirs(const std::string& path) {
    for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
        ::mkdir(path.substr(0, at).c_str(), 0755);
    ::mkdir(path.c_str(), 0755);
}

// A row: name path, type, id, input|output, index, dtype, max, min.
struct Row {
    std::string name, type, id, io, index, dtype, max, min;
};

void writeRound(const std::string& root, const std::string& process, int round,
                const std::vector<Row>& rows) {
    const std::string dir = root + "/atb_dump_data/data/" + process + "/" + std::to_string(round);
    makeDirs(dir);
    std::string text = kHeader;
    for (const auto& r : rows) {
        const std::string mean = r.max == "nan" || r.min == "nan" ? "nan" : "1.000000";
        text += process + "," + std::to_string(round) + "," + r.name + "," + r.type + "," + r.id +
                "," + r.io + "," + r.index + "," + r.dtype + ",nd,2x2," + r.max + "," + r.min +
                "," + mean + ",1.000000,N/A\n";
    }
    test::writeFile(dir + "/statistic.csv", text);
}

// layer L (id 0) with children a (0_0) and b (0_1): x -> a -> b -> L's output.
std::vector<Row> layerRound(const std::string& bMax, const std::string& aMax = "2.000000",
                            const std::string& inMax = "1.000000") {
    return {{"L", "Block", "0", "input", "0", "float", inMax, "-1.000000"},
            {"L/a", "aten::mul", "0_0", "input", "0_self", "float", inMax, "-1.000000"},
            {"L/a", "aten::mul", "0_0", "output", "0", "float", aMax, "-1.000000"},
            {"L/b", "aten::exp", "0_1", "input", "0_self", "float", aMax, "-1.000000"},
            {"L/b", "aten::exp", "0_1", "output", "0", "float", bMax, "0.000000"},
            {"L", "Block", "0", "output", "0", "float", bMax, "0.000000"}};
}

DumpIndex read(const std::string& dir) {
    std::string error;
    auto index = readDump(dir, &error);
    EXPECT_TRUE(index) << error;
    return index ? std::move(*index) : DumpIndex();
}

TEST(Overflow, TheInnermostOpWithFiniteInputsIsWhereItIsBorn) {
    test::TempDir dir;
    writeRound(dir.path(), "0_100", 0, layerRound("7.000000"));
    writeRound(dir.path(), "0_100", 1, layerRound("inf"));
    writeRound(dir.path(), "0_100", 2, layerRound("nan", "inf"));  // later rounds: not the first
    const auto index = read(dir.path());
    const auto report = findOverflowBirths(index, {});
    ASSERT_EQ(report.births.size(), 1u);
    const auto& birth = report.births[0];
    EXPECT_EQ(birth.round, 1);
    EXPECT_EQ(index.op(birth.op).namePath, "L/b");  // not the layer L, whose child it is
    EXPECT_EQ(birth.why, "output 0: max=inf");
    ASSERT_EQ(birth.inputs.size(), 1u);
    EXPECT_FALSE(birth.inputs[0].overflowed);

    OverflowOptions all;
    all.allBirths = true;
    const auto every = findOverflowBirths(index, all);
    ASSERT_EQ(every.births.size(), 2u);
    EXPECT_EQ(every.births[1].round, 2);
    EXPECT_EQ(index.op(every.births[1].op).namePath, "L/a");  // in round 2, a already overflows
    // (and b's NaN, made of a's Inf, follows from a's birth: none of its own)

    // A NaN made of an Inf that no op of the round made of finite inputs (a mask's -inf, given
    // with the model's input) is born where it is made.
    test::TempDir given;
    writeRound(given.path(), "0_100", 0, layerRound("nan", "-inf", "-inf"));
    const auto givenIndex = read(given.path());
    const auto givenReport = findOverflowBirths(givenIndex, all);
    const std::string text = formatOverflowReport(givenIndex, givenReport);
    ASSERT_EQ(givenReport.births.size(), 1u) << text;
    EXPECT_EQ(givenIndex.op(givenReport.births[0].op).namePath, "L/b") << text;
    EXPECT_TRUE(givenReport.births[0].nanOfInfinities);
    EXPECT_EQ(givenReport.births[0].why, "output 0: nan");
    EXPECT_NE(text.find("no input NaN (made of an input's Inf)"), std::string::npos) << text;
}

TEST(Overflow, ValuesBeyondANarrowerFormatCountOnlyWhenAsked) {
    test::TempDir dir;
    // 70000 in a float32 run, and an int64 tensor of token ids beyond 65504 feeding the layer.
    auto rows = layerRound("70000.000000");
    rows.insert(rows.begin(),
                {"L", "Block", "0", "input", "1_ids", "int64", "100000.000000", "0.000000"});
    writeRound(dir.path(), "0_100", 0, rows);
    const auto index = read(dir.path());
    EXPECT_TRUE(findOverflowBirths(index, {}).births.empty());
    OverflowOptions fp16;
    fp16.range = RangeLimit::Float16;
    const auto report = findOverflowBirths(index, fp16);
    ASSERT_EQ(report.births.size(), 1u);
    EXPECT_EQ(index.op(report.births[0].op).namePath, "L/b");
    EXPECT_EQ(report.births[0].why, "output 0: max=70000 beyond float16's 65504");
    // Within the range, not only finite, is what the inputs are said to be (said "finite").
    const std::string text = formatOverflowReport(index, report);
    EXPECT_NE(text.find("why: output 0: max=70000 beyond float16's 65504, every input finite, "
                        "the floating tensors within float16's range\n"),
              std::string::npos)
        << text;
    OverflowOptions bf16;
    bf16.range = RangeLimit::BFloat16;
    EXPECT_TRUE(findOverflowBirths(index, bf16).births.empty());
}

TEST(Overflow, AMaskFilledWithInfIsNoBirthAndInheritedValuesAreExplained) {
    test::TempDir dir;
    writeRound(dir.path(), "0_100", 0,
               {{"L", "Block", "0", "input", "0", "float", "1.000000", "-1.000000"},
                {"L/full", "aten::full", "0_0", "output", "0", "float", "0.000000", "-inf"},
                {"L/add", "aten::add", "0_1", "input", "0_self", "float", "1.000000", "-1.000000"},
                {"L/add", "aten::add", "0_1", "input", "1_other", "float", "0.000000", "-inf"},
                {"L/add", "aten::add", "0_1", "output", "0", "float", "1.000000", "-inf"},
                {"L", "Block", "0", "output", "0", "float", "1.000000", "-1.000000"}});
    // Another process whose NaN came in with the first op's inputs.
    writeRound(dir.path(), "0_200", 0, layerRound("nan", "nan", "nan"));
    const auto index = read(dir.path());
    const auto report = findOverflowBirths(index, {});
    EXPECT_TRUE(report.births.empty());
    // 0_100's -inf comes from the ignored full: deliberate, no note. 0_200's came in from outside.
    ASSERT_EQ(report.unexplained.size(), 1u);
    EXPECT_NE(report.unexplained[0].find(
                  "0_200: overflowed values (nan) first appear in input 0 of L (0)"),
              std::string::npos)
        << report.unexplained[0];
    OverflowOptions noIgnore;
    noIgnore.ignore.clear();
    const auto strict = findOverflowBirths(index, noIgnore);
    ASSERT_EQ(strict.births.size(), 1u);
    EXPECT_EQ(index.op(strict.births[0].op).namePath, "L/full");
    EXPECT_EQ(strict.births[0].why, "output 0: min=-inf");
    // Of two processes, the summary names the one whose NaN it means (rounds of two processes
    // do not say which ran first).
    const std::string summary = formatSummary(summarizeDump(index));
    EXPECT_NE(summary.find("first NaN: process 0_200, round 0, op L"), std::string::npos)
        << summary;
}

// A NaN weight read by a module's linear (an assignment, or an optimizer step that diverged):
// the module's input is finite, its output NaN, but the NaN came in with the weight inside it.
// The module was named the birth, "every input finite". In a later round an op makes its own Inf:
// that is a birth, and the NaN that came in before it is said too.
TEST(Overflow, ANanThatComesInWithAWeightInsideAModuleIsNoBirthOfTheModule) {
    test::TempDir dir;
    const auto fcRound = [](const std::string& weightMax, const std::string& outMax) {
        const std::string outMin = outMax == "nan" ? "nan" : "-1.000000";
        return std::vector<Row>{
            {"fc", "Linear", "0", "input", "0", "float", "1.000000", "-1.000000"},
            {"fc/linear", "aten::linear", "0_0", "input", "0_input", "float", "1.000000",
             "-1.000000"},
            {"fc/linear", "aten::linear", "0_0", "input", "1_weight", "float", weightMax,
             weightMax == "nan" ? "nan" : "-1.000000"},
            {"fc/linear", "aten::linear", "0_0", "output", "0", "float", outMax, outMin},
            {"fc", "Linear", "0", "output", "0", "float", outMax, outMin}};
    };
    writeRound(dir.path(), "0_100", 0, fcRound("1.000000", "2.000000"));
    // A mask's -inf first, made by an ignored op (it hid the NaN read after it).
    auto poisoned = fcRound("nan", "nan");
    poisoned.insert(poisoned.begin(),
                    {"mask", "aten::masked_fill", "1", "output", "0", "float", "0.000000", "-inf"});
    writeRound(dir.path(), "0_100", 1, poisoned);
    const auto index = read(dir.path());
    const auto report = findOverflowBirths(index, {});
    EXPECT_TRUE(report.births.empty()) << formatOverflowReport(index, report);
    ASSERT_EQ(report.unexplained.size(), 1u);
    EXPECT_NE(report.unexplained[0].find("0_100: overflowed values (nan) first appear in input "
                                         "1_weight of fc/linear (0_0) (round 1), but no dumped op "
                                         "turns finite inputs into them: they came in from "
                                         "outside the dumped ops: a parameter or buffer"),
              std::string::npos)
        << report.unexplained[0];
    const std::string summary = formatSummary(summarizeDump(index));
    EXPECT_NE(summary.find("overflow born: none found among the ops dumped: 0_100: overflowed "
                           "values (nan) first appear in input 1_weight of fc/linear"),
              std::string::npos)
        << summary;

    // An ignored fill's +Inf earlier in the round is another tensor than the weight's +Inf read
    // after it: the weight's still came in (by kind of overflow alone, the fill explained it,
    // and the Linear was named the birth again).
    test::TempDir filled;
    auto withFill = fcRound("inf", "inf");
    withFill.insert(withFill.begin(),
                    {"mask/fill_", "aten::fill_", "1", "output", "0", "float", "inf", "0.000000"});
    writeRound(filled.path(), "0_100", 0, withFill);
    const auto filledIndex = read(filled.path());
    const auto filledReport = findOverflowBirths(filledIndex, {});
    EXPECT_TRUE(filledReport.births.empty()) << formatOverflowReport(filledIndex, filledReport);
    ASSERT_EQ(filledReport.unexplained.size(), 1u);
    EXPECT_NE(filledReport.unexplained[0].find("first appear in input 1_weight of fc/linear"),
              std::string::npos)
        << filledReport.unexplained[0];

    // Made inside the module, not come in: a mask's -inf (an ignored op) into a softmax that
    // makes a NaN. The softmax, making a NaN of the -inf, is the birth, inside the module whose
    // input is finite (a review found it said as "no overflow" when any op inside read an
    // overflowed input).
    test::TempDir masked;
    writeRound(
        masked.path(), "0_100", 0,
        {{"attn", "Attention", "0", "input", "0", "float", "1.000000", "-1.000000"},
         {"attn/masked_fill", "aten::masked_fill", "0_0", "input", "0_self", "float", "1.000000",
          "-1.000000"},
         {"attn/masked_fill", "aten::masked_fill", "0_0", "output", "0", "float", "1.000000",
          "-inf"},
         {"attn/softmax", "aten::softmax", "0_1", "input", "0_self", "float", "1.000000", "-inf"},
         {"attn/softmax", "aten::softmax", "0_1", "output", "0", "float", "nan", "nan"},
         {"attn", "Attention", "0", "output", "0", "float", "nan", "nan"}});
    const auto maskedIndex = read(masked.path());
    const auto maskedReport = findOverflowBirths(maskedIndex, {});
    ASSERT_EQ(maskedReport.births.size(), 1u) << formatOverflowReport(maskedIndex, maskedReport);
    EXPECT_EQ(maskedIndex.op(maskedReport.births[0].op).namePath, "attn/softmax");
    EXPECT_TRUE(maskedReport.unexplained.empty());

    // A later round: another layer makes an Inf of finite inputs. It is the birth; the NaN
    // weight before it is said as well.
    writeRound(dir.path(), "0_100", 2, layerRound("inf"));
    const auto later = read(dir.path());
    const auto both = findOverflowBirths(later, {});
    ASSERT_EQ(both.births.size(), 1u);
    EXPECT_EQ(later.op(both.births[0].op).namePath, "L/b");
    ASSERT_EQ(both.unexplained.size(), 1u);
    EXPECT_NE(both.unexplained[0].find("1_weight of fc/linear (0_0) (round 1), but no dumped op "
                                       "turns finite inputs into them before the birth above"),
              std::string::npos)
        << both.unexplained[0];
}

// A backward op computes from what its forward saved: a forward that read a NaN weight makes its
// backward's outputs NaN from finite gradients. That is no birth (the pow backward of each later
// step was named one); a backward that overflows after a clean forward is.
TEST(Overflow, ABackwardOpWhoseForwardOverflowedInheritsItsValues) {
    const auto layer = [](const std::string& weightMax, const std::string& gradOutMax) {
        const std::string forwardOut = weightMax == "nan" ? "nan" : "2.000000";
        return std::vector<Row>{
            {"fc", "Linear", "0", "input", "0", "float", "1.000000", "-1.000000"},
            {"fc/linear", "aten::linear", "0_0", "input", "0_input", "float", "1.000000",
             "-1.000000"},
            {"fc/linear", "aten::linear", "0_0", "input", "1_weight", "float", weightMax,
             weightMax == "nan" ? "nan" : "-1.000000"},
            {"fc/linear", "aten::linear", "0_0", "output", "0", "float", forwardOut, "-1.000000"},
            {"fc", "Linear", "0", "output", "0", "float", forwardOut, "-1.000000"},
            {"fc.backward", "autograd::fc.backward", "1", "input", "0", "float", "1.000000",
             "-1.000000"},
            {"fc.backward/AddmmBackward0", "autograd::AddmmBackward0", "1_0", "input", "0", "float",
             "1.000000", "-1.000000"},
            {"fc.backward/AddmmBackward0", "autograd::AddmmBackward0", "1_0", "output", "0",
             "float", gradOutMax, gradOutMax == "nan" ? "nan" : "-1.000000"},
            {"fc.backward", "autograd::fc.backward", "1", "output", "0", "float", gradOutMax,
             gradOutMax == "nan" ? "nan" : "-1.000000"}};
    };
    test::TempDir dir;
    writeRound(dir.path(), "0_100", 0, layer("nan", "nan"));
    const auto index = read(dir.path());
    const auto report = findOverflowBirths(index, {});
    EXPECT_TRUE(report.births.empty()) << formatOverflowReport(index, report);
    ASSERT_EQ(report.unexplained.size(), 1u);
    EXPECT_NE(report.unexplained[0].find("first appear in input 1_weight of fc/linear"),
              std::string::npos)
        << report.unexplained[0];

    // After a clean forward the backward's node is where the Inf is born.
    test::TempDir clean;
    writeRound(clean.path(), "0_100", 0, layer("1.000000", "inf"));
    const auto cleanIndex = read(clean.path());
    const auto cleanReport = findOverflowBirths(cleanIndex, {});
    ASSERT_EQ(cleanReport.births.size(), 1u) << formatOverflowReport(cleanIndex, cleanReport);
    EXPECT_EQ(cleanIndex.op(cleanReport.births[0].op).namePath, "fc.backward/AddmmBackward0");

    // A mask's -inf inside the forward (none of the layer's own inputs or outputs) leaves its
    // backward's Inf a birth (every masked attention layer hid its backward's).
    test::TempDir masked;
    auto maskedRound = layer("1.000000", "inf");
    maskedRound.insert(maskedRound.begin() + 4, {"fc/masked_fill", "aten::masked_fill", "0_1",
                                                 "output", "0", "float", "1.000000", "-inf"});
    writeRound(masked.path(), "0_100", 0, maskedRound);
    const auto maskedIndex = read(masked.path());
    const auto maskedReport = findOverflowBirths(maskedIndex, {});
    ASSERT_EQ(maskedReport.births.size(), 1u) << formatOverflowReport(maskedIndex, maskedReport);
    EXPECT_EQ(maskedIndex.op(maskedReport.births[0].op).namePath, "fc.backward/AddmmBackward0");

    // The msprobe layout: Tensor.__pow__.0.backward after Tensor.__pow__.0.forward read a NaN.
    const auto entry = [](const std::string& inputKey, const std::string& in,
                          const std::string& out) {
        const auto tensor = [](const std::string& v) {
            return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": )" +
                   v + R"(, "Min": 0, "Mean": )" + v + R"(, "Norm": )" + v + "}";
        };
        return "{\"" + inputKey + "\": [" + tensor(in) + "], \"output\": [" + tensor(out) + "]}";
    };
    const auto step = [&](const std::string& forwardIn, const std::string& backwardOut) {
        const std::string forwardOut = forwardIn == "NaN" ? "NaN" : "1.0";
        return R"({"task": "statistics", "level": "L1", "data": {"Tensor.__pow__.0.forward": )" +
               entry("input_args", forwardIn, forwardOut) + R"(, "Tensor.__pow__.0.backward": )" +
               entry("input", "0.25", backwardOut) + "}}";
    };
    test::TempDir api;
    for (const auto& [number, json] :
         {std::pair{0, step("1.0", "Infinity")}, std::pair{1, step("NaN", "NaN")}}) {
        const std::string rank = api / ("step" + std::to_string(number) + "/rank0");
        makeDirs(rank);
        test::writeFile(rank + "/dump.json", json);
        test::writeFile(rank + "/construct.json", "{}");
        test::writeFile(rank + "/stack.json", "{}");
    }
    const auto apiIndex = read(api.path());
    OverflowOptions all;
    all.allBirths = true;
    const auto apiReport = findOverflowBirths(apiIndex, all);
    ASSERT_EQ(apiReport.births.size(), 1u) << formatOverflowReport(apiIndex, apiReport);
    EXPECT_EQ(apiIndex.op(apiReport.births[0].op).id, "Tensor.__pow__.0.backward");
    EXPECT_EQ(apiReport.births[0].round, 0);
}

TEST(Overflow, EachProcessHasItsBirthAndTheJsonHasMsprobesShape) {
    test::TempDir dir;
    writeRound(dir.path(), "0_100", 0, layerRound("inf"));
    writeRound(dir.path(), "1_101", 0, layerRound("3.000000"));
    writeRound(dir.path(), "1_101", 1, layerRound("nan", "nan"));
    const auto index = read(dir.path());
    const auto report = findOverflowBirths(index, {});
    ASSERT_EQ(report.births.size(), 2u);
    const auto text = anomalyAnalyzeJson(index, report);
    const auto json = nlohmann::json::parse(quoteNonFiniteJsonTokens(text));
    ASSERT_TRUE(json.contains("rank_0_100")) << text;
    ASSERT_TRUE(json.contains("rank_1_101")) << text;
    const auto& first = json["rank_0_100"][0];
    EXPECT_EQ(first["op_name"], "L/b");
    EXPECT_EQ(first["round"], 0);
    EXPECT_EQ(first["construct_info"], nlohmann::json::array({"L", "L/b"}));
    EXPECT_EQ(first["data_info"]["output"][0]["Max"], "Infinity");  // written as Python writes inf
    EXPECT_NE(text.find("\"Max\": Infinity"), std::string::npos);
    EXPECT_EQ(json["rank_1_101"][0]["op_name"], "L/a");
    EXPECT_EQ(json["rank_1_101"][0]["round"], 1);
    EXPECT_EQ(json["rank_1_101"][0]["reason"], "output 0: nan");
    const auto formatted = formatOverflowReport(index, report);
    EXPECT_NE(formatted.find("0_100: born in round 0, op L/b (0_1) [aten::exp]"), std::string::npos)
        << formatted;
    EXPECT_NE(formatted.find("1_101: born in round 1, op L/a (0_0) [aten::mul]"), std::string::npos)
        << formatted;
}

// ---------------------------------------------------------------------------------------------

void writeMonitor(const std::string& path, const std::string& rows) {
    makeDirs(path.substr(0, path.rfind('/')));
    test::writeFile(path, "vpp_stage,name,step,norm,max,min,mean,nans\n" + rows);
}

std::string series(const std::string& name, const std::vector<std::string>& norms,
                   int firstStep = 0) {
    std::string rows;
    for (size_t i = 0; i < norms.size(); ++i)
        rows += "0," + name + "," + std::to_string(firstStep + static_cast<int>(i)) + "," +
                norms[i] + ",1,-1,0," + (norms[i] == "nan" ? "3" : "0") + "\n";
    return rows;
}

TEST(GradMonitor, SpikesVanishingExplodingAndNanWithStepAndParameter) {
    test::TempDir dir;
    writeMonitor(dir / "rank0/grad_reduced_0-999.csv",
                 series("fc1.weight", {"1.0", "1.2", "0.9", "1.1", "1.0", "30.0", "1.0"}) +
                     series("fc2.weight", {"0.5", "0.5", "0.5", "0", "0", "0.6", "0.5"}) +
                     series("fc2.bias", {"1", "1", "1", "1", "nan", "1", "1"}));
    writeMonitor(dir / "rank1/grad_reduced_0-999.csv",
                 series("fc1.weight", {"1", "1", "1", "1", "1", "1", "5e4"}));
    std::string error;
    const auto data = readGradMonitor(dir.path(), &error);
    ASSERT_TRUE(data) << error;
    EXPECT_EQ(data->series.size(), 4u);
    GradThresholds thresholds;
    thresholds.explode = 1e4;
    const auto findings = analyzeGradients(*data, thresholds);
    std::vector<std::string> lines;
    for (const auto& f : findings) lines.push_back(formatGradFinding(f));
    const std::vector<std::string> expected = {
        "step 3  rank0  fc2.weight: vanishing, norm 0 below 1e-08 for 2 steps (to step 4)",
        "step 4  rank0  fc2.bias: nan, 3 NaN element(s)",
        "step 5  rank0  fc1.weight: spike, norm 30 is 30x its running median 1",
        "step 6  rank1  fc1.weight: spike, norm 5e+04 is 5e+04x its running median 1",
        "step 6  rank1  fc1.weight: exploding, norm 5e+04 above 1e+04",
    };
    EXPECT_EQ(lines, expected);
    const auto json = nlohmann::json::parse(gradFindingsJson(*data, findings));
    ASSERT_EQ(json["findings"].size(), expected.size());
    EXPECT_EQ(json["findings"][2]["kind"], "spike");
    EXPECT_EQ(json["findings"][2]["parameter"], "fc1.weight");
    EXPECT_EQ(json["findings"][2]["step"], 5);
}

// A file past the old whole-file limit of 16 MiB (150 parameters over 1000 steps write 32 MB): read
// a line at a time, its late NaN found (it was skipped, and "no NaN" said). Bad lines are
// problems, not samples: a step that is no count, a pipeline stage below 0, a line cut short.
// A link to a folder is not followed (a link to "." counted every file again at each level).
TEST(GradMonitor, ReadsBigFilesLineByLineAndSaysWhatItSkipped) {
    test::TempDir dir;
    std::string rows;
    constexpr int kParameters = 400, kSteps = 500;
    for (int step = 0; step < kSteps; ++step)
        for (int p = 0; p < kParameters; ++p)
            rows += "0,layers." + std::to_string(p) + ".mlp.down_proj.weight," +
                    std::to_string(step) + "," +
                    (step == 480 && p == 7 ? "nan" : "0.12345678901234567") +
                    ",0.1234567890123,-0.1234567890123,0.0000123456789," +
                    (step == 480 && p == 7 ? "5" : "0") + "\n";
    ASSERT_GT(rows.size(), size_t{16} << 20);
    writeMonitor(dir / "rank0/grad_reduced_0-999.csv", rows);
    writeMonitor(dir / "rank1/grad_reduced_0-999.csv",
                 "0,w,0,1,1,-1,0,0\n0,w,1e999,1,1,-1,0,0\n0,w,nan,1,1,-1,0,0\n"
                 "-1,w,2,1,1,-1,0,0\n0,w,3,1,1,-1,0,0\n0,w,4,1,1");
    ASSERT_EQ(::symlink(".", (dir / "rank1/loop").c_str()), 0);
    std::string error;
    const auto data = readGradMonitor(dir.path(), &error);
    ASSERT_TRUE(data) << error;
    EXPECT_EQ(data->files.size(), 2u);
    ASSERT_EQ(data->series.size(), static_cast<size_t>(kParameters) + 1);
    size_t samples = 0;
    for (const auto& series : data->series) samples += series.samples.size();
    EXPECT_EQ(samples, static_cast<size_t>(kParameters) * kSteps + 2);  // w at steps 0 and 3
    const auto findings = analyzeGradients(*data, GradThresholds{});
    ASSERT_FALSE(findings.empty());
    EXPECT_EQ(formatGradFinding(findings.front()),
              "step 480  rank0  layers.7.mlp.down_proj.weight: nan, 5 NaN element(s)");
    const std::string problems = [&] {
        std::string all;
        for (const auto& p : data->problems) all += p + "\n";
        return all;
    }();
    EXPECT_NE(problems.find("line 3: step 1e999 is not a whole number"), std::string::npos)
        << problems;
    EXPECT_NE(problems.find("line 4: step nan is not a whole number"), std::string::npos)
        << problems;
    EXPECT_NE(problems.find("line 5: vpp_stage -1 is not a whole number"), std::string::npos)
        << problems;
    EXPECT_NE(problems.find("line 7: cut short"), std::string::npos) << problems;
    EXPECT_NE(problems.find("loop: a link to a folder, not followed"), std::string::npos)
        << problems;
}

// A value that is no number was taken as none ("nans" of "abc": no NaN said), a folder named
// like a monitor file went unsaid, a file that could not be opened was counted as read, and a
// name that is no text reached the terminal raw (found by a new user's hostile-input pass).
TEST(GradMonitor, ValuesThatAreNoNumbersAndFilesThatAreNoneAreSaid) {
    test::TempDir dir;
    writeMonitor(dir / "rank0/grad_reduced_0-9.csv",
                 "0,w,0,1,1,-1,0,abc\n0,w,1,abc,1,-1,0,0\n0,w,2,1,1,-1,0,-2\n0,w,3,1,1,-1,0,0\n"
                 "0,w,4,1,1,-1,0,\n0,b\xff\xfe,0,nan,1,-1,0,\n");
    makeDirs(dir / "rank1/grad_reduced_0-9.csv");
    const std::string pipe = dir / "rank0/grad_reduced_1-9.csv";
    ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
    makeDirs(dir / "rank2");
    test::writeFile(dir / "rank2/grad_reduced_0-9.csv", "");
    makeDirs(dir / "rank3");
    test::writeFile(dir / "rank3/grad_reduced_0-9.csv", "vpp_stage,name,st");  // being written
    std::string error;
    const auto data = readGradMonitor(dir.path(), &error);
    ASSERT_TRUE(data) << error;
    EXPECT_EQ(data->files, (std::vector<std::string>{dir / "rank0/grad_reduced_0-9.csv",
                                                     dir / "rank2/grad_reduced_0-9.csv",
                                                     dir / "rank3/grad_reduced_0-9.csv"}));
    ASSERT_EQ(data->series.size(), 2u);
    std::vector<int64_t> steps;
    for (const auto& sample : data->series[0].samples) steps.push_back(sample.step);
    EXPECT_EQ(steps, (std::vector<int64_t>{3, 4}));  // an empty nans is one not monitored
    std::string problems;
    for (const auto& p : data->problems) problems += p + "\n";
    for (const std::string expected :
         {"grad_reduced_0-9.csv: line 2: nans abc is not a number",
          "grad_reduced_0-9.csv: line 3: norm abc is not a number",
          "grad_reduced_0-9.csv: line 4: nans -2 is not a whole number ≥ 0",
          "rank1/grad_reduced_0-9.csv: a folder, not a monitor file",
          "rank0/grad_reduced_1-9.csv: is a named pipe (FIFO)",
          "rank2/grad_reduced_0-9.csv: empty: no header line",
          "rank3/grad_reduced_0-9.csv: line 1: cut short"})
        EXPECT_NE(problems.find(expected), std::string::npos) << expected << "\n" << problems;
    EXPECT_EQ(problems.find("rank3/grad_reduced_0-9.csv: empty"), std::string::npos) << problems;
    const auto findings = analyzeGradients(*data, GradThresholds{});
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(formatGradFinding(findings[0]), "step 0  rank0  b\\xFF\\xFE: nan, norm=nan");
}

TEST(GradMonitor, ReadsMsprobeMonitorFoldersAndSaysWhenThereIsNothing) {
    test::TempDir dir;
    // msprobe: <time>-rank<R>-<id>/grad_reduced_<a>-<b>.csv, ops in the order configured.
    makeDirs(dir / "Jan01_10-00-00-rank3-abc");
    test::writeFile(dir / "Jan01_10-00-00-rank3-abc/grad_reduced_0-0.csv",
                    "vpp_stage,name,step,min,max,norm\n0,layer.weight,0,-1,1,2.5\n");
    std::string error;
    const auto data = readGradMonitor(dir.path(), &error);
    ASSERT_TRUE(data) << error;
    ASSERT_EQ(data->series.size(), 1u);
    EXPECT_EQ(data->series[0].rank, "rank3");
    EXPECT_EQ(data->series[0].samples[0].norm, 2.5);
    test::TempDir empty;
    EXPECT_FALSE(readGradMonitor(empty.path(), &error));
    EXPECT_NE(error.find("holds no grad_reduced_*.csv"), std::string::npos) << error;
    // What is there instead of a folder is said: a FIFO was "a file" (found by a hostile-input
    // pass).
    const std::string pipe = empty / "pipe";
    ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
    EXPECT_FALSE(readGradMonitor(pipe, &error));
    EXPECT_EQ(error, pipe + " is a named pipe (FIFO); give the monitor's output directory");
    const std::string file = empty / "file.csv";
    test::writeFile(file, "x\n");
    EXPECT_FALSE(readGradMonitor(file, &error));
    EXPECT_EQ(error, file + " is a regular file; give the monitor's output directory");
    EXPECT_FALSE(readGradMonitor(empty / "gone", &error));
    EXPECT_EQ(error, empty / "gone" + " does not exist");
}

}  // namespace
}  // namespace probe::analysis
