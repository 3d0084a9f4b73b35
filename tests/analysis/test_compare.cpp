// Comparing two dumps: verdicts (born here, inherited), the noise floor at the scale of an op's
// inputs, exact comparison, ranks, nothing to compare, and the reports, on dumps written here
// through the C API (op-level) or as PrecisionDebugger writes them (msprobe).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zip.h>

#include "analysis/compare.h"
#include "analysis/compare_report.h"
#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "analysis/msprobe_dump.h"
#include "analysis/overflow_check.h"
#include "analysis/prefault.h"
#include "analysis/row_order_reader.h"
#include "api_run.h"
#include "probe/format/dump_status.h"
#include "probe/format/row_order.h"
#include "probe/format/statistic_csv.h"
#include "probe/format/tensor_bin.h"
#include "probe/probe.h"
#include "read_dump.h"
#include "synthetic_dump.h"
#include "test_support.h"

namespace probe::analysis {
namespace {

using probe::test::ApiRun;
using probe::test::TempDir;

std::vector<float> randomValues(size_t n, unsigned seed, float scale = 1) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = normal(rng);
    return v;
}

const std::string& nameOf(const CompareResult& r, uint32_t op) {
    return r.reference->op(r.ops[op].referenceOp).namePath;
}

uint32_t opNamed(const CompareResult& r, const std::string& name) {
    for (uint32_t o = 0; o < r.ops.size(); ++o)
        if (nameOf(r, o) == name) return o;
    ADD_FAILURE() << "no op " << name;
    return 0;
}

// msprobe: the entry name of comparison `o`'s reference op, and the comparison of an entry
// (process 0, its first round).
std::string entryOf(const DumpIndex& reference, const CompareResult& r, uint32_t o) {
    return reference.op(r.ops[o].referenceOp).id;
}
const OpComparison& comparisonOfEntry(const DumpIndex& reference, const CompareResult& r,
                                      const std::string& entry) {
    return r.ops[opNamed(r, reference.op(reference.findOp(0, entry)).namePath)];
}

// The issue's case: the second output of a layer norm is the mean of already normalised
// numbers, about 1e-8, and rounding alone moves it by 100% (cosine 0.45). Against the size of
// the op's input it is noise.
TEST(Compare, ANumberNearZeroIsJudgedAgainstTheOpsInputs) {
    TempDir dir;
    const auto x = randomValues(64, 1);
    auto write = [&](const char* name, std::vector<float> mean, bool withInput) {
        ApiRun run(dir, name);
        run.begin("native_layer_norm");
        if (withInput) run.input(0, x);
        run.output(0, x);
        run.output(1, mean);
        run.end();
        return run.finish();
    };
    const std::vector<float> refMean = {1e-8f, -2e-8f, 3e-8f, 1e-8f},
                             candMean = {2e-8f, 1e-8f, 2e-8f, -1e-8f};
    const DumpIndex a = indexOf(write("a", refMean, true)), b = indexOf(write("b", candMean, true));
    const auto result = compareDumps(a, b, {});
    ASSERT_EQ(result.tensors.size(), 3u);
    const auto& mean = result.tensors[2];
    ASSERT_TRUE(mean.hasData);
    // msprobe's cosine says "different"...
    long double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < 4; ++i) {
        dot += static_cast<long double>(refMean[i]) * candMean[i];
        na += static_cast<long double>(refMean[i]) * refMean[i];
        nb += static_cast<long double>(candMean[i]) * candMean[i];
    }
    EXPECT_NEAR(*result.data(2).cosine, static_cast<double>(dot / std::sqrt(na * nb)), 1e-9);
    EXPECT_LT(*result.data(2).cosine, 0.5);
    // ...the floor at the input's scale does not.
    long double squares = 0;
    for (float v : x) squares += static_cast<long double>(v) * v;
    EXPECT_NEAR(mean.scale, static_cast<double>(std::sqrt(squares / 64)), 1e-6);
    EXPECT_FALSE(mean.diverges);
    EXPECT_FALSE(result.diverges()) << formatCompareReport(result);
    // The same numbers judged against themselves (no input dumped) would diverge.
    const DumpIndex c = indexOf(write("c", refMean, false)),
                    d = indexOf(write("d", candMean, false));
    const auto alone = compareDumps(c, d, {});
    EXPECT_TRUE(alone.diverges());
}

// The last layer of each round uses a weight changed in the candidate, in its child too: the
// first op to inherit the first divergence is that child in the same round. It was the child of
// the next round, which inherits the next round's birth ("received from round 1 fc").
TEST(Compare, TheFirstOpToInheritTheFirstDivergenceMayBeAChildOfItsBirth) {
    TempDir dir;
    const auto x = randomValues(16, 2), w = randomValues(64, 3, 0.1f);
    const auto write = [&](const std::string& name, float factor) {
        std::vector<float> weight = w;
        weight[5] *= factor;
        std::vector<float> y(16, 0);
        for (int i = 0; i < 2; ++i)
            for (int o = 0; o < 8; ++o)
                for (int k = 0; k < 8; ++k) y[i * 8 + o] += x[i * 8 + k] * weight[o * 8 + k];
        ApiRun run(dir, name);
        for (int round = 0; round < 2; ++round) {
            run.begin("fc", "Linear");
            run.input(0, x, {2, 8});
            run.input(1, weight, {8, 8});
            run.begin("mm", "aten::mm");
            run.input(0, x, {2, 8});
            run.input(1, weight, {8, 8});
            run.output(0, y, {2, 8});
            run.end();
            run.output(0, y, {2, 8});
            run.end();
        }
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 1)), b = indexOf(write("b", 1.05f));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "fc") << report;
    EXPECT_EQ(result.ops[*result.firstBornHere].referenceRound, 0) << report;
    ASSERT_TRUE(result.firstInherited) << report;
    const OpComparison& inherited = result.ops[*result.firstInherited];
    EXPECT_EQ(nameOf(result, *result.firstInherited), "fc/mm") << report;
    EXPECT_EQ(inherited.referenceRound, 0) << report;
    EXPECT_EQ(inherited.inheritedFrom, *result.firstBornHere) << report;
    EXPECT_NE(report.find("first op that inherits it: round 0  fc/mm"), std::string::npos)
        << report;
}

// The comparison of an op named `name` of round `round`.
uint32_t opOfRound(const CompareResult& r, const std::string& name, int round) {
    for (uint32_t o = 0; o < r.ops.size(); ++o)
        if (nameOf(r, o) == name && r.ops[o].referenceRound == round) return o;
    ADD_FAILURE() << "no op " << name << " in round " << round;
    return 0;
}

// Two runs written by `write(name, changed)`, the reference unchanged, compared: the result (it
// points into the indexes, held here) and its report for the failure messages.
struct WrittenPair {
    std::unique_ptr<DumpIndex> reference, candidate;
    CompareResult result;
    std::string report;
    const OpComparison& op(const std::string& name, int round) const {
        return result.ops[opOfRound(result, name, round)];
    }
};
template <typename Write>
WrittenPair compareWritten(const std::string& name, const Write& write) {
    WrittenPair pair;
    pair.reference = std::make_unique<DumpIndex>(indexOf(write(name + "_reference", false)));
    pair.candidate = std::make_unique<DumpIndex>(indexOf(write(name + "_candidate", true)));
    pair.result = compareDumps(*pair.reference, *pair.candidate, {});
    pair.report = formatCompareReport(pair.result);
    return pair;
}

// A generation loop: each step's input is made outside the model from the last step's output
// (a token: no op of the dump makes it). After blk is born in step 0, fc1 of every later step
// receives that divergence through the program: inherited from the latest op of an earlier
// step that carried one (the model's output: blk's second call), not another birth in each
// step (step 3's token is step 1's again, first read by mix, which inherits emb's divergence:
// still fed back). blk is called twice a step, so its rounds run twice as fast as fc1's (a step is
// a pass: from one call of the first layer-level op called again to the next). The reference's
// input of step 3 is its input of step 1 again (a token that repeats): still fed back. A table that
// differs from the start and is read again each step stays born here; so does an input that differs
// for the first time when no earlier step diverged.
TEST(Compare, AnInputFedBackFromAnEarlierRoundsDivergenceIsInheritedNotBornAgain) {
    TempDir dir;
    const std::vector<std::vector<float>> inputs = {randomValues(8, 7), randomValues(8, 9),
                                                    randomValues(8, 10), randomValues(8, 9)};
    const auto table = randomValues(8, 8);
    // blk's bias changed at [3] (by `nudge`); the table at [1] (by `tableNudge`); the inputs
    // from `changedFrom` on at [2], as the candidate's own tokens would be.
    const auto write = [&](const std::string& name, float nudge, float tableNudge,
                           size_t changedFrom) {
        std::vector<float> t = table, e(8);
        t[1] += tableNudge;
        for (int k = 0; k < 8; ++k) e[k] = 3 * t[k];
        ApiRun run(dir, name);
        for (size_t step = 0; step < inputs.size(); ++step) {
            std::vector<float> x = inputs[step], h(8), y1(8), y2(8);
            if (step >= changedFrom) x[2] += 0.25f * static_cast<float>(step);
            for (int k = 0; k < 8; ++k) h[k] = 2 * x[k];
            for (int k = 0; k < 8; ++k) y1[k] = h[k] + 0.5f + (k == 3 ? nudge : 0.f);
            for (int k = 0; k < 8; ++k) y2[k] = y1[k] + 0.5f + (k == 3 ? nudge : 0.f);
            std::vector<float> mixed(8);
            for (int k = 0; k < 8; ++k) mixed[k] = x[k] + e[k];
            run.op("emb", {t}, {e});
            // The token's first reader takes the table's diverging embedding too: inherited
            // from emb, it is no fed-back op, yet the token it read was fed back.
            run.op("mix", {x, e}, {mixed});
            run.op("fc1", {x}, {h});
            run.op("blk", {h}, {y1});
            run.op("blk", {y1}, {y2});
        }
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 0, 0, 99)), b = indexOf(write("b", 0.25f, 0.5f, 1));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_EQ(result.ops.size(), 20u) << report;
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(*result.firstBornHere, opOfRound(result, "emb", 0)) << report;
    EXPECT_EQ(result.ops[opOfRound(result, "fc1", 0)].verdict, OpVerdict::Matches) << report;
    EXPECT_EQ(result.ops[opOfRound(result, "blk", 0)].verdict, OpVerdict::BornHere) << report;
    for (int step = 1; step < 4; ++step) {
        const OpComparison& fc1 = result.ops[opOfRound(result, "fc1", step)];
        EXPECT_EQ(fc1.verdict, OpVerdict::Inherited) << "step " << step << "\n" << report;
        EXPECT_TRUE(fc1.fedBack()) << report;
        // From the last op of the step before: blk's second call, its round 2 * step - 1.
        EXPECT_EQ(fc1.inheritedFrom, opOfRound(result, "blk", 2 * step - 1)) << report;
        for (const int round : {2 * step, 2 * step + 1}) {
            EXPECT_EQ(result.ops[opOfRound(result, "blk", round)].verdict, OpVerdict::Inherited)
                << report;
            EXPECT_FALSE(result.ops[opOfRound(result, "blk", round)].fedBack()) << report;
        }
    }
    for (int step = 0; step < 4; ++step)
        EXPECT_EQ(result.ops[opOfRound(result, "emb", step)].verdict, OpVerdict::BornHere)
            << "step " << step << "\n"
            << report;
    EXPECT_EQ(result.bornHereOps, 5u) << report;  // emb in each step, blk's first call
    EXPECT_EQ(result.fedBackOps, 3u) << report;
    // Listed all the same: data changed outside the model for another reason looks the same.
    EXPECT_NE(report.find("inputs from outside the model that differ after an earlier "
                          "divergence, taken as fed back by the program (inherited):\n"
                          "    round 1  fc1 (fc1): input 0 [float 8], after round 1  blk (blk)"),
              std::string::npos)
        << report;
    const auto json = nlohmann::json::parse(compareResultJson(result));
    EXPECT_EQ(json["summary"]["fedBackOps"], 3) << json["summary"].dump();
    EXPECT_NE(compareResultJson(result).find("\"fedBack\": true"), std::string::npos);

    // No earlier step diverged: step 2's input differing is where it starts (at both its
    // readers).
    const DumpIndex c = indexOf(write("c", 0, 0, 2));
    const auto alone = compareDumps(a, c, {});
    const std::string aloneReport = formatCompareReport(alone);
    ASSERT_TRUE(alone.firstBornHere) << aloneReport;
    EXPECT_EQ(*alone.firstBornHere, opOfRound(alone, "mix", 2)) << aloneReport;
    EXPECT_EQ(alone.ops[opOfRound(alone, "fc1", 2)].verdict, OpVerdict::BornHere) << aloneReport;
    EXPECT_FALSE(alone.ops[opOfRound(alone, "fc1", 2)].fedBack()) << aloneReport;
    EXPECT_EQ(alone.bornHereOps, 2u) << aloneReport;
    EXPECT_EQ(alone.fedBackOps, 2u) << aloneReport;  // step 3's readers, after step 2's
}

// A training run compared at layer level (probe run's default), whose dump holds no weights: the
// candidate's fc2 differs at step 1, its backward carries that back through fc1.backward, and
// the optimizer updates both layers' weights from gradients that differ. From step 2 on, fc1's
// output differs while its input matches: carried in its own state since its backward of step 1
// (it was born again at every step), listed as such. `side`, changed at step 2 with no earlier
// divergence through it, is born there; at step 3 it carries its own change on.
TEST(Compare, ALayerChangedByItsOwnStateAfterAnEarlierStepIsInheritedNotBornAgain) {
    TempDir dir;
    const auto x = randomValues(8, 3);
    const auto write = [&](const std::string& name, bool changed) {
        ApiRun run(dir, name);
        float w1 = 1.5f, w2 = 0.5f;  // the layers' weights
        for (int step = 0; step < 4; ++step) {
            std::vector<float> h(8), y(8), side(8), gh(8);
            for (int k = 0; k < 8; ++k) {
                h[k] = w1 * x[k];
                y[k] = w2 * h[k] + (changed && step == 1 && k == 2 ? 0.25f : 0.f);
                side[k] = 2 * x[k] + 1 + (changed && step >= 2 && k == 5 ? 0.5f : 0.f);
                gh[k] = w2 * y[k];  // the loss's gradient is y
            }
            run.op("fc1", {x}, {h});
            run.op("fc2", {h}, {y});
            run.op("side", {x}, {side});
            run.op("fc2.backward", {y}, {gh});
            // No output: the model's input needs no gradient (as torch dumps it).
            run.op("fc1.backward", {gh}, {});
            float d1 = 0, d2 = 0;  // an SGD step
            for (int k = 0; k < 8; ++k) {
                d2 += y[k] * h[k];
                d1 += gh[k] * x[k];
            }
            w1 -= 0.01f * d1;
            w2 -= 0.01f * d2;
        }
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", false)), b = indexOf(write("b", true));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_EQ(result.ops.size(), 20u) << report;
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(*result.firstBornHere, opOfRound(result, "fc2", 1)) << report;
    EXPECT_EQ(result.ops[opOfRound(result, "fc1.backward", 1)].verdict, OpVerdict::Inherited)
        << report;
    for (int step = 2; step < 4; ++step) {
        const OpComparison& fc1 = result.ops[opOfRound(result, "fc1", step)];
        EXPECT_EQ(fc1.verdict, OpVerdict::Inherited) << "step " << step << "\n" << report;
        EXPECT_TRUE(fc1.carriedInState()) << report;
        EXPECT_EQ(fc1.inheritedFrom, opOfRound(result, "fc1.backward", step - 1)) << report;
        // fc2 receives it from fc1, as any op does.
        const OpComparison& fc2 = result.ops[opOfRound(result, "fc2", step)];
        EXPECT_EQ(fc2.verdict, OpVerdict::Inherited) << report;
        EXPECT_FALSE(fc2.carriedInState()) << report;
        EXPECT_EQ(fc2.inheritedFrom, opOfRound(result, "fc1", step)) << report;
    }
    EXPECT_EQ(result.ops[opOfRound(result, "side", 2)].verdict, OpVerdict::BornHere) << report;
    EXPECT_TRUE(result.ops[opOfRound(result, "side", 3)].carriedInState()) << report;
    EXPECT_EQ(result.bornHereOps, 2u) << report;
    EXPECT_EQ(result.carriedInStateOps, 3u) << report;
    EXPECT_NE(report.find("ops whose output differs while their inputs match, after an earlier "
                          "step's divergence went through them, taken as carried in their own "
                          "state (parameters, a cache) (inherited):\n"
                          "    round 2  fc1 (fc1): output 0 [float 8], after round 1  "
                          "fc1.backward (fc1.backward)"),
              std::string::npos)
        << report;
    const auto json = nlohmann::json::parse(compareResultJson(result));
    EXPECT_EQ(json["summary"]["carriedInStateOps"], 3) << json["summary"].dump();
    EXPECT_NE(compareResultJson(result).find("\"carriedInState\": true"), std::string::npos);

    // An eval loop (no backward): batch 0's input differs, batches 1 to 3 match wholly, and
    // batch 4's head overflows. Its state showed as the reference's since: born there, not
    // carried from batch 0.
    const auto writeEval = [&](const std::string& name, bool changed) {
        ApiRun run(dir, name);
        for (int batch = 0; batch < 5; ++batch) {
            std::vector<float> in = x, out(8);
            if (changed && batch == 0) in[1] += 0.5f;
            for (int k = 0; k < 8; ++k)
                out[k] = changed && batch == 4 && k == 3 ? INFINITY : 0.5f * in[k];
            run.op("head", {in}, {out});
        }
        return run.finish();
    };
    const WrittenPair eval = compareWritten("eval", writeEval);
    EXPECT_EQ(eval.op("head", 0).verdict, OpVerdict::BornHere) << eval.report;
    EXPECT_EQ(eval.op("head", 4).verdict, OpVerdict::BornHere) << eval.report;
    EXPECT_EQ(eval.result.carriedInStateOps, 0u) << eval.report;

    // A module called twice in one forward, the first op of each (its calls begin the passes),
    // no backward: its first call's input differs, and its second call goes wrong by itself.
    // Born there, not carried from the first call (a call before is no step before).
    const auto writeShared = [&](const std::string& name, bool changed) {
        ApiRun run(dir, name);
        std::vector<float> first = x, second = x, ya(8), yb(8);
        for (float& v : second) v += 1;
        if (changed) first[0] += 0.5f;
        for (int k = 0; k < 8; ++k) {
            ya[k] = 2 * first[k];
            yb[k] = 2 * second[k] + (changed && k == 4 ? 0.5f : 0.f);
        }
        run.op("enc", {first}, {ya});
        run.op("enc", {second}, {yb});
        return run.finish();
    };
    const WrittenPair shared = compareWritten("shared", writeShared);
    EXPECT_EQ(shared.op("enc", 1).verdict, OpVerdict::BornHere) << shared.report;
    EXPECT_EQ(shared.result.bornHereOps, 2u) << shared.report;

    // A weight changed from the start, carried at every step, then a NaN at step 3 in that
    // layer's output: a new overflow, born there (it was taken as carried from step 0).
    const auto writeNan = [&](const std::string& name, bool changed) {
        ApiRun run(dir, name);
        for (int step = 0; step < 5; ++step) {
            std::vector<float> y(8);
            for (int k = 0; k < 8; ++k) y[k] = (changed && k == 2 ? 1.6f : 1.5f) * x[k];
            if (changed && step == 3) y[5] = NAN;
            run.op("emb", {{3, 1, 4}}, {x});
            run.op("layer", {x}, {y});
        }
        return run.finish();
    };
    const WrittenPair nan = compareWritten("nan", writeNan);
    EXPECT_EQ(nan.op("layer", 0).verdict, OpVerdict::BornHere) << nan.report;
    EXPECT_TRUE(nan.op("layer", 2).carriedInState()) << nan.report;
    EXPECT_EQ(nan.op("layer", 3).verdict, OpVerdict::BornHere) << nan.report;
    // After it, the NaN carried on is that birth's.
    EXPECT_EQ(nan.op("layer", 4).inheritedFrom, opOfRound(nan.result, "layer", 3)) << nan.report;
}

// A generation loop whose generated token takes, at step 3, the value a position had at step 1:
// the same numbers as an earlier output (the op that made the position) and as an earlier
// outside input (the position embedding's), by statistics. Neither is that token: it is fed
// back as the others are (it was born there, and so was step 2's).
TEST(Compare, ATokenWithTheNumbersOfAnEarlierPositionIsStillFedBack) {
    TempDir dir;
    const auto write = [&](const std::string& name, const std::vector<float>& tokens, float nudge) {
        ApiRun run(dir, name);
        for (size_t step = 0; step < tokens.size(); ++step) {
            const float position = 5.f + static_cast<float>(step);
            std::vector<float> e = {2 * tokens[step], tokens[step] + 1},
                               p = {position / 2, position / 3}, y(2);
            for (int k = 0; k < 2; ++k) y[k] = e[k] + p[k] + (k == 1 ? nudge : 0.f);
            run.op("unsqueeze", {{position - 1}}, {{position}});
            run.op("emb", {{tokens[step]}}, {e});
            run.op("pos", {{position}}, {p});
            run.op("head", {e, p}, {y});
        }
        return run.finish();
    };
    // The candidate's head differs at step 0, and its tokens from step 1 on; the reference's
    // token at step 3 is 6, step 1's position.
    const DumpIndex a = indexOf(write("a", {1, 9, 2, 6}, 0)),
                    b = indexOf(write("b", {1, 4, 3, 2}, 0.5f));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(*result.firstBornHere, opOfRound(result, "head", 0)) << report;
    for (int step = 1; step < 4; ++step)
        EXPECT_TRUE(result.ops[opOfRound(result, "emb", step)].fedBack()) << "step " << step << "\n"
                                                                          << report;
    EXPECT_EQ(result.bornHereOps, 1u) << report;
}

// A changed bias, read again at each step, that addmm's copy_ also writes into its output: the
// same data as last step's copy_ output, it is the bias again, born here at each step (it was
// said to come from last step's copy_, and the layer around it was born here over an inherited
// child: found by a new user).
TEST(Compare, AnInputFromOutsideUsedAgainIsNotTheEarlierOutputThatCopiedIt) {
    TempDir dir;
    const auto x = randomValues(4, 12), bias = randomValues(4, 13);
    const auto write = [&](const std::string& name, float nudge) {
        std::vector<float> b = bias, y(4);
        b[1] += nudge;
        for (int k = 0; k < 4; ++k) y[k] = x[k] * 2 + b[k];
        ApiRun run(dir, name);
        for (int step = 0; step < 3; ++step) {
            run.begin("head", "Linear");
            run.input(0, x);
            run.begin("linear", "aten::linear");
            run.input(0, x);
            run.input(1, b);
            run.begin("copy_", "aten::copy_");
            run.input(0, b);
            run.output(0, b);  // the bias written into the output before the product is added
            run.end();
            run.output(0, y);
            run.end();
            run.output(0, y);
            run.end();
        }
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 0)), b = indexOf(write("b", 0.5f));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    for (int step = 0; step < 3; ++step) {
        const OpComparison& linear = result.ops[opOfRound(result, "head/linear", step)];
        EXPECT_EQ(linear.verdict, OpVerdict::BornHere) << step << "\n" << report;
        ASSERT_NE(linear.cause, kNone);
        EXPECT_EQ(result.tensors[linear.cause].producer, kNone) << step << "\n" << report;
        const OpComparison& head = result.ops[opOfRound(result, "head", step)];
        EXPECT_EQ(head.verdict, OpVerdict::BornHere) << step << "\n" << report;
        EXPECT_TRUE(head.bornInChild) << step << "\n" << report;
    }
    EXPECT_EQ(result.bornHereOps, 3u) << report;
    EXPECT_EQ(result.fedBackOps, 0u) << report;
}

// A layer whose child reads data from outside the model, fed back by the program (a recurrent
// cell's state kept by the caller): the child and the layer inherit the earlier divergence; the
// layer, whose inputs match and whose output the child passed up, was called born here.
TEST(Compare, ALayerWhoseChildReadsAnInputFedBackInheritsWithIt) {
    TempDir dir;
    const auto h = randomValues(8, 11);
    const auto write = [&](const std::string& name, float nudge) {
        std::vector<float> state(8, 0.f);
        ApiRun run(dir, name);
        for (int step = 0; step < 3; ++step) {
            std::vector<float> c(8), y(8);
            for (int k = 0; k < 8; ++k) c[k] = h[k] + state[k];
            for (int k = 0; k < 8; ++k) y[k] = 2 * c[k] + (k == 3 ? nudge : 0.f);
            run.begin("cell", "Cell");
            run.input(0, h);
            run.begin("add", "aten::add");
            run.input(0, h);
            run.input(1, state);
            run.output(0, c);
            run.end();
            run.output(0, c);
            run.end();
            run.op("out", {c}, {y});
            for (int k = 0; k < 8; ++k) state[k] = std::tanh(y[k]);  // by the program
        }
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 0)), b = indexOf(write("b", 0.5f));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(*result.firstBornHere, opOfRound(result, "out", 0)) << report;
    EXPECT_EQ(result.bornHereOps, 1u) << report;
    for (int step = 1; step < 3; ++step)
        for (const char* name : {"cell", "cell/add"}) {
            const OpComparison& op = result.ops[opOfRound(result, name, step)];
            EXPECT_EQ(op.verdict, OpVerdict::Inherited) << name << " " << step << "\n" << report;
            EXPECT_TRUE(op.fedBack()) << name << " " << step << "\n" << report;
            EXPECT_EQ(op.inheritedFrom, opOfRound(result, "out", step - 1)) << report;
        }
    EXPECT_EQ(result.fedBackOps, 2u) << report;  // the children, where the state comes in
    EXPECT_NE(report.find("(an op inside it had an input from outside the model"),
              std::string::npos)
        << report;
}

// A kernel's child with no input compared (the fill_ with which min() writes its result, its
// value no tensor) computes from its aten parent's inputs: a divergence there is inherited, not
// born in it (every full min and max was called a birth). A module's child with no inputs
// (randn) may make values of its own: born there.
TEST(Compare, AKernelChildWithoutInputsInheritsItsAtenParentsDivergence) {
    TempDir dir;
    const std::vector<float> x = {0.5f, -0.2f, 1.0f, -1.5f, 0.3f, 0.7f, -0.9f, 0.1f};
    const auto write = [&](const std::string& name, float factor, float noise) {
        std::vector<float> y = x;
        y[3] *= factor;
        const float least = *std::min_element(y.begin(), y.end());
        ApiRun run(dir, name);
        run.op("src", {x}, {y});
        run.begin("min_0", "aten::min");
        run.input(0, y);
        run.begin("fill_", "aten::fill_");
        run.output(0, {least}, {1});
        run.end();
        run.output(0, {least}, {1});
        run.end();
        run.begin("blk", "Block");
        run.input(0, y);
        run.begin("randn", "aten::randn");
        run.output(0, randomValues(8, 5, noise));
        run.end();
        run.output(0, y);
        run.end();
        // An aten op's child drawing random numbers (dropout's mask) makes values of its own.
        run.begin("dropout_0", "aten::dropout");
        run.input(0, y);
        run.begin("bernoulli_", "aten::bernoulli_");
        run.output(0, randomValues(8, 6, noise));
        run.end();
        run.output(0, y);
        run.end();
        return run.finish();
    };
    // y[3] is the least element, made smaller: min changes.
    const DumpIndex a = indexOf(write("a", 1, 1)), b = indexOf(write("b", 1.5f, 1.5f));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    const OpComparison& fill = result.ops[opNamed(result, "min_0/fill_")];
    EXPECT_EQ(fill.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(fill.inheritedFrom, opNamed(result, "min_0")) << report;
    EXPECT_EQ(result.ops[opNamed(result, "blk/randn")].verdict, OpVerdict::BornHere) << report;
    EXPECT_EQ(result.ops[opNamed(result, "dropout_0/bernoulli_")].verdict, OpVerdict::BornHere)
        << report;
}

// Layer-level ops run in another order in the candidate (a ModuleDict's blocks called in another
// order): ops pair by name, so each input differs and was said to come from "no compared op".
// A note says the order changed, and from which op; runs in the same order have none.
TEST(Compare, LayerLevelOpsRunInAnotherOrderAreNoted) {
    TempDir dir;
    const std::vector<float> x = {0.5f, -0.2f, 1.0f, -1.5f};
    const auto write = [&](const std::string& name, const std::string& order) {
        ApiRun run(dir, name);
        for (int round = 0; round < 2; ++round) {
            std::vector<float> h = x;
            for (const char block : order) {
                std::vector<float> next = h;
                for (float& v : next) v = v * 0.5f + static_cast<float>(block - 'a');
                const std::string blockName(1, block);
                run.op(blockName.c_str(), {h}, {next});
                h = next;
            }
        }
        return run.finish();
    };
    const DumpIndex reference = indexOf(write("ref", "cab")), same = indexOf(write("same", "cab")),
                    other = indexOf(write("other", "acb"));
    const auto result = compareDumps(reference, other, {});
    const std::string report = formatCompareReport(result);
    const std::string expected =
        "the runs ran the layer-level ops in another order in round 0 (the reference c, a, b; "
        "the candidate a, c, b)";
    ASSERT_EQ(std::count_if(result.notes.begin(), result.notes.end(),
                            [&](const std::string& n) { return n.find(expected) == 0; }),
              1)
        << report;
    const auto unchanged = compareDumps(reference, same, {});
    for (const std::string& n : unchanged.notes)
        EXPECT_EQ(n.find("another order"), std::string::npos) << n;
}

// A block applied once more in one step of the candidate: an op's rounds number its own calls,
// so its later calls were each compared with another one, and births were named where nothing
// changed. A note says which op the runs called a different number of times; a run of more
// steps, calling every op more often, gets none (its extra rounds are said already).
TEST(Compare, ALayerLevelOpCalledMoreOftenIsNoted) {
    TempDir dir;
    const std::vector<float> x = {0.5f, -0.2f, 1.0f, -1.5f};
    const auto write = [&](const std::string& name, std::vector<int> applied) {
        ApiRun run(dir, name);
        for (const int times : applied) {
            run.op("inp", {x}, {x});
            for (int i = 0; i < times; ++i) run.op("blk", {x}, {x});
            run.op("out", {x}, {x});
        }
        return run.finish();
    };
    const DumpIndex reference = indexOf(write("ref", {2, 2, 2})),
                    oneMore = indexOf(write("more", {2, 3, 2})),
                    longer = indexOf(write("longer", {2, 2, 2, 2}));
    const auto result = compareDumps(reference, oneMore, {});
    const std::string report = formatCompareReport(result);
    EXPECT_NE(report.find("note: the runs called blk (1 more call in the candidate) a different "
                          "number of times"),
              std::string::npos)
        << report;
    const std::string longerReport = formatCompareReport(compareDumps(reference, longer, {}));
    EXPECT_EQ(longerReport.find("a different number of times"), std::string::npos) << longerReport;
    EXPECT_NE(longerReport.find("in the candidate only"), std::string::npos) << longerReport;
}

// A layer-level backward op computes from what its forward op saved: once "mul_0" diverged,
// the gradient "mul_0.backward" passes to one input (the gradient flowing in times the other
// input's forward value) diverges though the gradient flowing in matches. It inherits from its
// forward op; it was a second birth of every divergence before it.
TEST(Compare, ALayerLevelBackwardOpInheritsItsForwardOpsDivergence) {
    TempDir dir;
    const std::vector<float> x = {0.5f, -0.2f, 1.0f, -1.5f}, m = {0.3f, 0.7f, -0.9f, 0.1f},
                             g = {1, 1, 1, 1};
    const auto write = [&](const std::string& name, float factor) {
        std::vector<float> y = x, product(4), gradY(4), gradM(4);
        y[2] *= factor;
        for (int i = 0; i < 4; ++i) {
            product[i] = y[i] * m[i];
            gradY[i] = g[i] * m[i];
            gradM[i] = g[i] * y[i];
        }
        const std::vector<float> weight = {0.25f, 0.5f, 0.75f, factor};
        ApiRun run(dir, name);
        run.op("l1", {x}, {y});
        run.op("mul_0", {y, m, weight}, {product});
        run.begin("mul_0.backward", "aten::mulBackward");
        run.input(0, g);
        run.op("t", {weight}, {weight});  // inside it, reading a weight its forward read
        run.begin("mul", "aten::mul");    // and what the forward saved
        run.input(0, g);
        run.input(1, y);
        run.output(0, gradM);
        run.end();
        run.output(0, gradY);
        run.output(1, gradM);
        run.end();
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 1)), b = indexOf(write("b", 1.5f));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "l1") << report;
    const OpComparison& backward = result.ops[opNamed(result, "mul_0.backward")];
    EXPECT_EQ(backward.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(backward.inheritedFrom, opNamed(result, "mul_0")) << report;
    const OpComparison& inside = result.ops[opNamed(result, "mul_0.backward/mul")];
    EXPECT_EQ(inside.verdict, OpVerdict::Inherited) << report;
    const OpComparison& weightRead = result.ops[opNamed(result, "mul_0.backward/t")];
    EXPECT_EQ(weightRead.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(weightRead.inheritedFrom, opNamed(result, "mul_0")) << report;
    EXPECT_EQ(report.find("other ops where a divergence is born"), std::string::npos) << report;
}

// A block: linear(x, weight) -> relu -> a head. One weight element of the linear changed by 5%
// barely moves the weight's statistics; the comparison names the linear, where it is used.
std::string writeBlock(const TempDir& dir, const std::string& name, float factor, size_t element,
                       int rounds = 1) {
    const auto x = randomValues(16, 2), w = randomValues(64, 3, 0.1f);
    std::vector<float> weight = w;
    weight[element] *= factor;
    ApiRun run(dir, name);
    for (int r = 0; r < rounds; ++r) {
        std::vector<float> y(16, 0), z(16), out(2, 0);
        for (int i = 0; i < 2; ++i)
            for (int o = 0; o < 8; ++o)
                for (int k = 0; k < 8; ++k) y[i * 8 + o] += x[i * 8 + k] * weight[o * 8 + k];
        for (size_t i = 0; i < 16; ++i) z[i] = std::max(0.0f, y[i]);
        for (int i = 0; i < 2; ++i)
            for (int k = 0; k < 8; ++k) out[i] += z[i * 8 + k];
        run.begin("block", "Block");
        run.input(0, x, {2, 8});
        run.begin("linear", "aten::linear");
        run.input(0, x, {2, 8});
        run.input(1, weight, {8, 8});
        run.output(0, y, {2, 8});
        run.end();
        run.begin("relu", "aten::relu");
        run.input(0, y, {2, 8});
        run.output(0, z, {2, 8});
        run.end();
        run.output(0, z, {2, 8});
        run.end();
        run.begin("head", "Head");
        run.input(0, z, {2, 8});
        run.output(0, out, {2});
        run.end();
    }
    return run.finish();
}

// Runs without ranks whose process counts differ: the candidate ran a short helper (a check of
// torch) before the model. Its processes pair by the layer-level ops they share, not in order
// (the helper was compared with the model: "nothing to compare", exit 65).
TEST(Compare, ProcessesWithoutRanksPairByTheOpsTheyShare) {
    TempDir dir;
    const size_t element = 3 * 8 + 5;
    const std::string reference = writeBlock(dir, "a", 1, element),
                      model = writeBlock(dir, "b", 1.05f, element);
    ApiRun helper(dir, "helper");
    helper.op("linear_0", {randomValues(6, 4)}, {randomValues(6, 5)});
    const std::string candidate = helper.finish();
    const std::string own = std::to_string(::getpid());
    // The model as a second process of the candidate, after the helper (its rows saying so).
    std::filesystem::copy(model + "/data/" + own, candidate + "/data/99999999",
                          std::filesystem::copy_options::recursive);
    for (const std::string& csv :
         probe::test::filesNamed(candidate + "/data/99999999", "statistic.csv")) {
        std::string text = probe::test::readFile(csv);
        for (size_t at = 0; (at = text.find("\n" + own + ",", at)) != std::string::npos;)
            text.replace(at + 1, own.size(), "99999999");
        probe::test::writeFile(csv, text);
    }
    const DumpIndex a = indexOf(reference), b = indexOf(candidate);
    ASSERT_EQ(b.processCount(), 2u);
    ASSERT_EQ(b.process(0).key, own);
    ASSERT_EQ(b.process(1).key, "99999999");
    for (const bool swapped : {false, true}) {
        const auto result = swapped ? compareDumps(b, a, {}) : compareDumps(a, b, {});
        const std::string report = formatCompareReport(result);
        ASSERT_EQ(result.processPairs.size(), 1u) << report;
        EXPECT_EQ(result.processPairs[0], std::make_pair(swapped ? 1u : 0u, swapped ? 0u : 1u))
            << report;
        ASSERT_TRUE(result.firstBornHere) << report;
        EXPECT_EQ(result.reference->op(result.ops[*result.firstBornHere].referenceOp).namePath,
                  "block/linear")
            << report;
        EXPECT_NE(report.find("paired by the layer-level ops they share: " +
                              (swapped ? "99999999 with " + own : own + " with 99999999")),
                  std::string::npos)
            << report;
        // The helper's process, paired with none, ran in one run only: its op is listed as
        // such, on its side, and counted.
        EXPECT_NE(report.find("; " + own + " with none: its ops are ops of one run only"),
                  std::string::npos)
            << report;
        const auto& helperRun = swapped ? *result.reference : *result.candidate;
        std::vector<std::string> helperOps;
        for (const auto& u : result.unpaired)
            if (u.inReference == swapped && u.process == 0)
                helperOps.push_back(helperRun.op(u.op).namePath);
        EXPECT_EQ(helperOps, std::vector<std::string>{"linear_0"}) << report;
        EXPECT_EQ(result.unpairedOps, 1u) << report;
        EXPECT_EQ(result.unpairedInReference, swapped ? 1u : 0u) << report;
    }
}

// Where a difference below the floor that an op was given starts: in the innermost op that made
// it, checked level by level. A layer norm whose inputs are the same in both runs computes its
// output differently (a naive variance at mean 30), below the floor at its inputs' scale; the
// next op's output diverges. The report named the module, not its op, and not that the op's
// inputs were the same. A weight nudged inside a layer, amplified by the next op: the report
// named the layer's output, not the weight its child read.
TEST(Compare, ADifferenceGivenIsFollowedIntoTheOpThatMadeIt) {
    TempDir dir;
    std::vector<float> x = randomValues(64, 11);
    for (float& v : x) v += 30;
    const std::vector<float> y = randomValues(64, 12);
    const auto writeNorm = [&](const std::string& name, float nudge) {
        std::vector<float> normalised = y;
        normalised[7] += nudge;
        std::vector<float> doubled = normalised;
        for (float& v : doubled) v *= 2;
        ApiRun run(dir, name);
        run.begin("ln", "LayerNorm");
        run.input(0, x);
        run.begin("norm", "aten::native_layer_norm");
        run.input(0, x);
        run.output(0, normalised);
        run.end();
        run.output(0, normalised);
        run.end();
        run.op("head", {normalised}, {doubled});
        return run.finish();
    };
    const DumpIndex a = indexOf(writeNorm("a", 0)), b = indexOf(writeNorm("b", 4e-4f));
    auto result = compareDumps(a, b, {});
    std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "head") << report;
    auto given = result.differenceGiven(*result.firstBornHere);
    ASSERT_TRUE(given) << report;
    EXPECT_EQ(nameOf(result, result.tensors[given->start].op), "ln/norm") << report;
    EXPECT_TRUE(result.tensors[given->start].isOutput);
    EXPECT_NE(
        report.find("that difference starts at\n    round 0  ln/norm (aten::native_layer_norm)"
                    "  output 0 [float 64]\n  (its inputs are the same in both runs: the op "
                    "itself computes differently)"),
        std::string::npos)
        << report;

    const std::vector<float> weight = randomValues(64, 13, 0.1f);
    const auto writeLayer = [&](const std::string& name, bool nudged) {
        std::vector<float> w = weight;
        if (nudged) w[5] = std::nextafter(w[5], 1.0f);
        // amp: how far the product is from the reference's, a million times over (1 + that).
        std::vector<float> product(64), amplified(64);
        for (size_t i = 0; i < 64; ++i) {
            product[i] = y[i] * w[i];
            amplified[i] = 1 + 1e6f * (product[i] - y[i] * weight[i]);
        }
        ApiRun run(dir, name);
        run.begin("layer", "Layer");
        run.input(0, y);
        run.begin("fc", "aten::mul");
        run.input(0, y);
        run.input(1, w, {}, "weight");
        run.output(0, product);
        run.end();
        run.output(0, product);
        run.end();
        run.op("amp", {product}, {amplified});
        return run.finish();
    };
    const DumpIndex c = indexOf(writeLayer("c", false)), d = indexOf(writeLayer("d", true));
    result = compareDumps(c, d, {});
    report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "amp") << report;
    given = result.differenceGiven(*result.firstBornHere);
    ASSERT_TRUE(given) << report;
    const TensorComparison& start = result.tensors[given->start];
    EXPECT_EQ(nameOf(result, start.op), "layer/fc") << report;
    EXPECT_FALSE(start.isOutput);
    EXPECT_EQ(c.slot(c.row(start.referenceRow).slot).index, "1_weight") << report;
    EXPECT_NE(report.find("that difference starts at\n    round 0  layer/fc (aten::mul)  input "
                          "1_weight [float 64]\n  (no compared op produced it"),
              std::string::npos)
        << report;
}

// A block that adds three times: the second add differs. The report, the JSON and the CSV tell
// the three "block/add" apart by their ids (all three read "round 0  block/add (aten::add)").
// Against a candidate with an op more before them, whose adds have other ids, both are named
// (the app shows the candidate's tree, where the reference's id was another op).
TEST(Compare, OpsOfOneNameInOneModuleAreToldApartByTheirIds) {
    TempDir dir;
    const auto x = randomValues(8, 6);
    const auto write = [&](const std::string& name, float nudge, bool opBefore = false) {
        ApiRun run(dir, name);
        run.begin("block", "Block");
        run.input(0, x);
        if (opBefore) run.op("arange", {}, {{0, 1, 2, 3}});
        std::vector<float> y = x;
        for (int k = 0; k < 3; ++k) {
            std::vector<float> sum = y;
            for (float& v : sum) v += k == 1 ? 1 + nudge : 1;
            run.begin("add", "aten::add");
            run.input(0, y);
            run.output(0, sum);
            run.end();
            y = sum;
        }
        run.output(0, y);
        run.end();
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 0)), b = indexOf(write("b", 0.5f));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    const std::string id = a.op(result.ops[*result.firstBornHere].referenceOp).id;
    std::vector<std::string> adds;
    for (uint32_t o = 0; o < a.opCount(); ++o)
        if (a.op(o).namePath == "block/add") adds.push_back(a.op(o).id);
    ASSERT_EQ(adds.size(), 3u);
    EXPECT_EQ(id, adds[1]);
    EXPECT_NE(
        report.find("first divergence, born here: round 0  block/add (aten::add, id " + id + ")"),
        std::string::npos)
        << report;
    EXPECT_NE(report.find("round 0  block/add (aten::add, id " + adds[0] + "): matches"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("round 0  block (Block)"), std::string::npos) << report;  // no id
    const auto json = nlohmann::json::parse(compareResultJson(result));
    EXPECT_EQ(json["firstBornHere"]["id"], id);
    const std::string csv = compareResultCsv(result);
    EXPECT_NE(csv.find(",Op Id,Process\n"), std::string::npos);
    EXPECT_NE(csv.find("," + id + "," + std::to_string(::getpid()) + "\n"), std::string::npos)
        << csv;
    EXPECT_EQ(json["firstBornHere"].count("candidateId"), 0u);  // the same

    const DumpIndex c = indexOf(write("c", 0.5f, true));
    const auto shifted = compareDumps(a, c, {});
    const std::string shiftedReport = formatCompareReport(shifted);
    ASSERT_TRUE(shifted.firstBornHere) << shiftedReport;
    const std::string candidateId = c.op(shifted.ops[*shifted.firstBornHere].candidateOp).id;
    ASSERT_NE(candidateId, id);
    EXPECT_NE(shiftedReport.find("first divergence, born here: round 0  block/add (aten::add, id " +
                                 id + ", " + candidateId + " in the candidate)"),
              std::string::npos)
        << shiftedReport;
    EXPECT_EQ(nlohmann::json::parse(compareResultJson(shifted))["firstBornHere"]["candidateId"],
              candidateId);

    // The op more in one round only (a cast inserted at one step): the adds ran under other ids
    // in that round alone, which are named (the ids of their other rounds were).
    const auto writeRounds = [&](const std::string& name, bool changed) {
        ApiRun run(dir, name);
        for (int round = 0; round < 2; ++round) {
            run.begin("block", "Block");
            run.input(0, x);
            if (changed && round == 1) run.op("arange", {}, {{0, 1, 2, 3}});
            std::vector<float> y = x;
            for (int k = 0; k < 3; ++k) {
                for (float& v : y) v += k == 1 && changed && round == 1 ? 1.5f : 1;
                run.begin("add", "aten::add");
                run.input(0, x);
                run.output(0, y);
                run.end();
            }
            run.output(0, y);
            run.end();
        }
        return run.finish();
    };
    const DumpIndex d = indexOf(writeRounds("d", false)), e = indexOf(writeRounds("e", true));
    const auto inRound = compareDumps(d, e, {});
    const std::string inRoundReport = formatCompareReport(inRound);
    ASSERT_TRUE(inRound.firstBornHere) << inRoundReport;
    const OpComparison& born = inRound.ops[*inRound.firstBornHere];
    ASSERT_EQ(born.candidateRound, 1) << inRoundReport;
    const std::string idThere = e.idIn(born.candidateOp, 1);
    ASSERT_NE(idThere, e.op(born.candidateOp).id);  // another id in round 1 only
    EXPECT_EQ(d.op(born.referenceOp).id, e.op(born.candidateOp).id);
    EXPECT_NE(inRoundReport.find("first divergence, born here: round 1  block/add (aten::add, id " +
                                 d.op(born.referenceOp).id + ", " + idThere + " in the candidate)"),
              std::string::npos)
        << inRoundReport;
    EXPECT_EQ(nlohmann::json::parse(compareResultJson(inRound))["firstBornHere"]["candidateId"],
              idThere);
}

// Op names are input: one holding a terminal escape, and 6,000 bytes long, is printed escaped and
// cut in the report (it went to the terminal as it was).
TEST(Compare, TheReportPrintsHostileOpNamesEscapedAndCut) {
    TempDir dir;
    // The runtime writes no such name (it escapes and shortens them): a dump edited by hand.
    const std::string name = "block/evil\x1b[2J" + std::string(6000, 'x');
    const size_t element = 3 * 8 + 5;
    std::vector<std::string> roots = {writeBlock(dir, "a", 1, element),
                                      writeBlock(dir, "b", 1.05f, element)};
    for (const std::string& root : roots)
        for (const std::string& csv : probe::test::filesNamed(root, "statistic.csv")) {
            std::string text = probe::test::readFile(csv);
            for (size_t at = 0; (at = text.find(",block/linear,", at)) != std::string::npos;
                 at += name.size())
                text.replace(at + 1, std::string("block/linear").size(), name);
            probe::test::writeFile(csv, text);
        }
    const DumpIndex a = indexOf(roots[0]), b = indexOf(roots[1]);
    const auto result = compareDumps(a, b, {});
    ASSERT_TRUE(result.firstBornHere);
    EXPECT_EQ(nameOf(result, *result.firstBornHere), name);  // the data keeps it whole
    const std::string report = formatCompareReport(result);
    EXPECT_EQ(report.find('\x1b'), std::string::npos);
    EXPECT_NE(report.find("block/evil\\x1B[2J"), std::string::npos) << report.substr(0, 300);
    size_t lines = 0;
    for (size_t at = 0, end; at < report.size(); at = end + 1, ++lines) {
        end = report.find('\n', at);
        ASSERT_NE(end, std::string::npos);
        EXPECT_LE(end - at, 4100u);
    }
    EXPECT_GT(lines, 2u);
}

TEST(Compare, AWeightChangedInOneElementIsBornWhereItIsUsed) {
    TempDir dir;
    const size_t element = 3 * 8 + 5;
    const DumpIndex a = indexOf(writeBlock(dir, "a", 1, element)),
                    b = indexOf(writeBlock(dir, "b", 1.05f, element));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    const uint32_t linear = *result.firstBornHere;
    EXPECT_EQ(nameOf(result, linear), "block/linear");
    EXPECT_EQ(result.ops[linear].verdict, OpVerdict::BornHere);
    const TensorComparison& weight = result.tensors[result.ops[linear].cause];
    const DataMeasures& measures = result.data(result.ops[linear].cause);
    EXPECT_FALSE(weight.isOutput);
    EXPECT_EQ(a.slot(a.row(weight.referenceRow).slot).index, "1");
    EXPECT_TRUE(weight.source);
    EXPECT_EQ(weight.rule, DivergenceRule::Elements);
    EXPECT_EQ(result.elementIndex(result.ops[linear].cause, measures.worstElement), "[3, 5]");
    const auto w = randomValues(64, 3, 0.1f);
    const long double changed = static_cast<long double>(w[element] * 1.05f);
    EXPECT_NEAR(measures.maxRelativeError,
                static_cast<double>(std::fabs((changed - w[element]) / w[element])), 1e-12);
    EXPECT_NEAR(measures.maxRelativeError, 0.05, 1e-6);
    EXPECT_FALSE(measures.bytesEqual);
    // Born at an input beyond the floor: no difference below it was given (the app said the
    // weight both diverged and differed below the floor, starting at the linear itself).
    EXPECT_FALSE(result.differenceGiven(linear));
    EXPECT_FALSE(compareResultJson(result).find("differenceGiven") != std::string::npos);
    // The block surfaces it; the relu and the head inherit it.
    EXPECT_EQ(result.bornHereAncestors(linear), std::vector<uint32_t>{opNamed(result, "block")});
    EXPECT_TRUE(result.ops[opNamed(result, "block")].bornInChild);
    EXPECT_EQ(result.bornHereOps, 1u);
    ASSERT_TRUE(result.firstInherited);
    EXPECT_EQ(nameOf(result, *result.firstInherited), "block/relu");
    EXPECT_EQ(result.ops[*result.firstInherited].inheritedFrom, linear);
    EXPECT_EQ(result.ops[opNamed(result, "head")].verdict, OpVerdict::Inherited);
    EXPECT_NE(report.find("first divergence, born here: round 0  block/linear (aten::linear)"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("input 1 [float 8x8]: element [3, 5]"), std::string::npos) << report;
    EXPECT_NE(report.find("first op that inherits it: round 0  block/relu (aten::relu)"),
              std::string::npos)
        << report;
    // Identical runs: nothing.
    const DumpIndex again = indexOf(writeBlock(dir, "again", 1, element));
    const auto same = compareDumps(a, again, {});
    EXPECT_FALSE(same.diverges());
    EXPECT_FALSE(same.firstBornHere);
    EXPECT_EQ(same.tensorsWithData, same.tensors.size());
}

// Every round uses the weight: it is born again in each, and the first is round 0.
TEST(Compare, AWeightDivergesInEveryRoundAndTheFirstIsNamed) {
    TempDir dir;
    const DumpIndex a = indexOf(writeBlock(dir, "a", 1, 7, 3)),
                    b = indexOf(writeBlock(dir, "b", 0.9f, 7, 3));
    const auto result = compareDumps(a, b, {});
    ASSERT_TRUE(result.firstBornHere);
    EXPECT_EQ(result.ops[*result.firstBornHere].referenceRound, 0);
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "block/linear");
    EXPECT_EQ(result.bornHereOps, 3u);
}

// A difference that has become smaller than the floor is still part of the divergence: the
// mean of a changed tensor (judged at the scale of its large input) feeds an op with a small
// scale, whose output then differs beyond its own floor. That op inherits; it is not born there.
TEST(Compare, ADifferenceBelowTheFloorDownstreamOfADivergenceIsInherited) {
    TempDir dir;
    auto write = [&](const char* name, float last, float mean) {
        ApiRun run(dir, name);
        const std::vector<float> w = {1000, 1000, 1000, last};
        run.op("copy", {w}, {w});
        run.op("mean", {w}, {{mean}});
        run.op("add_eps", {{mean}}, {{mean + 1e-6f}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 1000, 0.5f)), b = indexOf(write("b", 1002, 0.501f));
    const auto result = compareDumps(a, b, {});
    ASSERT_TRUE(result.firstBornHere) << formatCompareReport(result);
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "copy");
    const uint32_t mean = opNamed(result, "mean"), addEps = opNamed(result, "add_eps");
    EXPECT_EQ(result.ops[mean].verdict, OpVerdict::Inherited);
    EXPECT_FALSE(result.tensors[result.ops[mean].firstTensor + 1]
                     .diverges);  // its output is within its floor
    EXPECT_TRUE(result.tensors[result.ops[mean].firstTensor + 1].carriesDivergence);
    EXPECT_EQ(result.ops[addEps].verdict, OpVerdict::Inherited);
    EXPECT_TRUE(result.tensors[result.ops[addEps].firstTensor + 1].diverges);  // beyond its own
    EXPECT_EQ(result.ops[addEps].inheritedFrom, mean);
    EXPECT_EQ(result.bornHereOps, 1u);
}

// An op that one run computes on rounded inputs (a cast the other run does not have, not
// dumped as an op of the reference): its inputs differ from the tensors they came from, which
// match. The divergence is born there.
// The same inside layers, by statistics alone: a layer whose output is an inherited op's output
// passed up, differing below the floor, matches itself but hands the divergence on; the next
// layer, whose output then diverges beyond its own floor, inherits (it was called born here).
TEST(Compare, ALayerHandsOnADifferenceBelowTheFloorItsChildInherited) {
    TempDir dir;
    auto write = [&](const char* name, float last, float mean) {
        ApiRun run(dir, name, "statistics");
        const std::vector<float> w = {1000, 1000, 1000, last};
        run.begin("layer1", "Layer");
        run.input(0, {1, 2});
        run.op("copy", {w}, {w});
        run.op("mean", {w}, {{mean}});
        run.output(0, {mean});
        run.end();
        run.begin("layer2", "Layer");
        run.input(0, {mean});
        run.op("add_eps", {{mean}}, {{mean + 1e-6f}});
        run.output(0, {mean + 1e-6f});
        run.end();
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 1000, 0.5f)), b = indexOf(write("b", 1002, 0.501f));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "layer1/copy") << report;
    const uint32_t layer1 = opNamed(result, "layer1"), layer2 = opNamed(result, "layer2");
    EXPECT_EQ(result.ops[layer1].verdict, OpVerdict::Matches) << report;
    EXPECT_TRUE(result.tensors[result.ops[layer1].firstTensor + 1].carriesDivergence) << report;
    EXPECT_EQ(result.ops[layer2].verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(result.ops[opNamed(result, "layer2/add_eps")].verdict, OpVerdict::Inherited);
    EXPECT_EQ(result.bornHereOps, 1u) << report;
}

TEST(Compare, AnOpOnRoundedInputsIsBornHere) {
    TempDir dir;
    const auto x = randomValues(32, 4);
    std::vector<float> rounded = x;
    for (auto& v : rounded) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        bits &= 0xffff0000u;  // bfloat16, truncated
        std::memcpy(&v, &bits, 4);
    }
    auto write = [&](const char* name, bool cast) {
        ApiRun run(dir, name);
        run.op("producer", {}, {x});
        if (cast) run.op("to_bf16", {x}, {rounded});
        const auto& in = cast ? rounded : x;
        std::vector<float> doubled(in.size());
        for (size_t i = 0; i < in.size(); ++i) doubled[i] = 2 * in[i];
        run.op("scale", {in}, {doubled});
        run.op("consumer", {doubled}, {doubled});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", false)), b = indexOf(write("b", true));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "scale");
    const auto& input = result.tensors[result.ops[*result.firstBornHere].cause];
    EXPECT_FALSE(input.isOutput);
    EXPECT_TRUE(input.source);
    ASSERT_NE(input.producer, kNone);  // it came from the producer's output, which matches
    EXPECT_EQ(nameOf(result, result.tensors[input.producer].op), "producer");
    EXPECT_FALSE(result.tensors[input.producer].diverges);
    EXPECT_NE(report.find("which matches: an op in between changed it: one that ran in one run "
                          "only (below), or one that was not dumped)\n"
                          "  ops that ran in one run only, just before it:\n"
                          "    candidate round 0  to_bf16 (to_bf16)\n"),
              std::string::npos)
        << report;
    EXPECT_EQ(result.ops[opNamed(result, "consumer")].verdict, OpVerdict::Inherited);
    ASSERT_EQ(result.unpairedOps, 1u);
    EXPECT_FALSE(result.unpaired[0].inReference);
    EXPECT_EQ(b.op(result.unpaired[0].op).name, "to_bf16");
}

TEST(Compare, ExactFindsTheFirstTensorWhoseBytesDiffer) {
    TempDir dir;
    auto write = [&](const char* name, float last) {
        ApiRun run(dir, name);
        run.op("first", {{1, 2}}, {{1, 2}});
        run.op("second", {{1, 2}}, {{3, last}});
        run.op("third", {{3, last}}, {{5, last}});
        return run.finish();
    };
    const float four = 4, nextToFour = std::nextafter(4.0f, 5.0f);
    const DumpIndex a = indexOf(write("a", four)), b = indexOf(write("b", nextToFour));
    // One ulp: noise, said as differences below the floor (said as nothing at all: a nudged
    // weight read as "no tensor diverges"): second's output, third's input and output.
    const auto noise = compareDumps(a, b, {});
    EXPECT_FALSE(noise.diverges());
    EXPECT_EQ(noise.differingTensors, 3u);
    EXPECT_NE(formatCompareReport(noise).find(
                  "no tensor diverges\n  3 tensors differ below the floor: rounding by the rule "
                  "(another summation order, another library), or a change too small for it; "
                  "--exact names the first\n"),
              std::string::npos)
        << formatCompareReport(noise);
    CompareOptions exact;
    exact.exact = true;
    const auto result = compareDumps(a, b, exact);
    ASSERT_TRUE(result.firstDivergingTensor);
    const uint32_t t = *result.firstDivergingTensor;
    EXPECT_EQ(nameOf(result, result.tensors[t].op), "second");
    EXPECT_TRUE(result.tensors[t].isOutput);
    EXPECT_EQ(result.tensors[t].rule, DivergenceRule::Bytes);
    EXPECT_EQ(result.data(t).largestErrorElement, 1u);
    EXPECT_EQ(result.data(t).maxUlpError, 1.0);
    ASSERT_TRUE(result.firstBornHere);
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "second");
    EXPECT_EQ(result.ops[opNamed(result, "third")].verdict, OpVerdict::Inherited);
    const std::string report = formatCompareReport(result);
    EXPECT_NE(report.find("first tensor whose bytes differ: round 0  second (second), output 0 "
                          "[float 2]: bytes differ, "
                          "the most at element [1]: 4 vs 4.0000005 (1 ulp)"),
              std::string::npos)
        << report;
}

// --exact names the element with the largest absolute error; the ulps beside it were the
// tensor's most, found at another element (5 ulp at 1000 read "(576 ulp)", 576 being a small
// number's).
TEST(Compare, ExactGivesTheUlpsOfTheElementItShows) {
    TempDir dir;
    const float big = 1000, small = 0.001f;
    float bigMoved = big, smallMoved = small;
    for (int k = 0; k < 5; ++k) bigMoved = std::nextafter(bigMoved, 2000.0f);
    for (int k = 0; k < 576; ++k) smallMoved = std::nextafter(smallMoved, 1.0f);
    auto write = [&](const char* name, float first, float second) {
        ApiRun run(dir, name);
        run.op("op", {{1, 2}}, {{first, second}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", big, small)),
                    b = indexOf(write("b", bigMoved, smallMoved));
    CompareOptions exact;
    exact.exact = true;
    const auto result = compareDumps(a, b, exact);
    ASSERT_TRUE(result.firstDivergingTensor);
    const uint32_t t = *result.firstDivergingTensor;
    EXPECT_EQ(result.data(t).largestErrorElement, 0u);
    EXPECT_EQ(result.data(t).maxUlpError, 576.0);
    EXPECT_EQ(result.explain(t),
              "bytes differ, the most at element [0]: 1000 vs 1000.0003 (5 ulp; up to 576 ulp "
              "at another element)");
    // A NaN against a number: no ulps between them (it said "(nan ulp)").
    const DumpIndex c = indexOf(write("c", std::nanf(""), small));
    const auto withNan = compareDumps(a, c, exact);
    ASSERT_TRUE(withNan.firstDivergingTensor);
    const std::string said = withNan.explain(*withNan.firstDivergingTensor);
    EXPECT_EQ(said.find("ulp"), std::string::npos) << said;
    EXPECT_NE(said.find("bytes differ"), std::string::npos) << said;
}

TEST(Compare, ShapesAndNonFiniteValuesAlwaysDiverge) {
    TempDir dir;
    auto write = [&](const char* name, std::vector<float> out, float value) {
        ApiRun run(dir, name);
        run.op("reshape", {{1, 2, 3, 4}}, {out});
        run.op("log", {{1, 2}}, {{0, value}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", {1, 2, 3, 4}, 0.5f)),
                    b = indexOf(write("b", {1, 2, 3}, -INFINITY));
    CompareOptions loose;
    loose.ulps.float32 = 1e30;  // no floor hides these
    const auto result = compareDumps(a, b, loose);
    const uint32_t reshaped = result.ops[opNamed(result, "reshape")].firstTensor + 1;
    EXPECT_EQ(result.tensors[reshaped].rule, DivergenceRule::Shape);
    EXPECT_EQ(result.explain(reshaped), "shape differs: 4 vs 3");  // it said only "shape differs"

    // Rows that agree, a file that does not: its header says 2x2 where its row says 4 (its
    // values differ too, so that the files are read).
    const DumpIndex c = indexOf(write("c", {1, 2, 3, 5}, 0.5f));
    const auto same = compareDumps(a, c, loose);
    const uint32_t row =
        same.tensors[same.ops[opNamed(same, "reshape")].firstTensor + 1].candidateRow;
    std::string error;
    const std::string path = c.tensorPath(row, &error);
    ASSERT_FALSE(path.empty()) << error;
    auto file = probe::format::readBinFile(path, &error);
    ASSERT_TRUE(file) << error;
    file->header.dims = {2, 2};
    std::string bytes = probe::format::makeBinHeader(file->header);
    bytes.append(reinterpret_cast<const char*>(file->data.data()), file->data.size());
    probe::test::writeFile(path, bytes);
    const auto disagreeing = compareDumps(a, c, loose);
    const uint32_t output = disagreeing.ops[opNamed(disagreeing, "reshape")].firstTensor + 1;
    EXPECT_EQ(disagreeing.tensors[output].rule, DivergenceRule::Shape);
    EXPECT_EQ(disagreeing.explain(output),
              "the tensor files' shapes differ, though both rows say 4: a file does not hold what "
              "its row describes");
    const uint32_t logOutput = result.ops[opNamed(result, "log")].firstTensor + 1;
    const auto& log = result.tensors[logOutput];
    EXPECT_EQ(log.rule, DivergenceRule::NonFinite);
    EXPECT_EQ(result.data(logOutput).nonFiniteMismatches, 1u);
    EXPECT_EQ(result.bornHereOps, 2u);
}

TEST(Compare, NothingToCompareIsSaid) {
    TempDir dir;
    auto write = [&](const char* name, const char* op) {
        ApiRun run(dir, name);
        run.op(op, {{1, 2}}, {{3, 4}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", "conv")), b = indexOf(write("b", "embedding"));
    const auto result = compareDumps(a, b, {});
    EXPECT_TRUE(result.nothingCompared());
    EXPECT_FALSE(result.diverges());
    EXPECT_EQ(result.unpairedOps, 2u);
    const std::string report = formatCompareReport(result);
    EXPECT_EQ(report.rfind("nothing to compare", 0), 0u) << report;
    EXPECT_NE(report.find("reference round 0  conv (conv)"), std::string::npos) << report;
    EXPECT_NE(report.find("candidate round 0  embedding (embedding)"), std::string::npos) << report;
    EXPECT_EQ(report.find("no tensor diverges"), std::string::npos) << report;
    EXPECT_TRUE(result.problems.empty()) << report;  // the same layout: no word of layouts
}

TEST(Compare, ThreadsAndProgressDoNotChangeTheResult) {
    TempDir dir;
    const DumpIndex a = indexOf(writeBlock(dir, "a", 1, 9, 4)),
                    b = indexOf(writeBlock(dir, "b", 1.5f, 9, 4));
    CompareOptions one, many;
    one.threads = 1;
    many.threads = 3;
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    many.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
    const auto r1 = compareDumps(a, b, one), r3 = compareDumps(a, b, many);
    EXPECT_EQ(compareResultCsv(r1), compareResultCsv(r3));
    EXPECT_EQ(compareResultJson(r1), compareResultJson(r3));
    ASSERT_FALSE(calls.empty());
    EXPECT_EQ(calls.back().first, r3.tensors.size());
    EXPECT_EQ(calls.back().second, r3.tensors.size());
    for (size_t i = 1; i < calls.size(); ++i) EXPECT_LE(calls[i - 1].first, calls[i].first);
}

// Thousands of tensors (statistics only, in batches of 256): the walk judges each op as soon
// as its tensors are measured, while the rest are measured beside it. Whatever the threads,
// every tensor is judged as by one thread; the diverging tensors are the candidate's rows with
// the planted NaN/Inf (the reference has none), and the first born-here op is in the planted
// layer and round.
TEST(Compare, TheWalkBesideTheMeasuringJudgesAsOneThreadDoes) {
    TempDir dir;
    synthetic::SyntheticDumpOptions options;
    options.ops = 2000;
    options.rows = 24000;
    options.layers = 12;
    const auto dumps = synthetic::writeSyntheticPair(options, dir.path(), 5, 3);
    const DumpIndex a = indexOf(dumps.reference.root), b = indexOf(dumps.candidate.root);
    uint64_t anomalous = 0;
    for (uint32_t r = 0; r < b.rowCount(); ++r) {
        ASSERT_EQ(a.row(r).anomalies, 0) << r;
        anomalous += b.row(r).anomalies ? 1 : 0;
    }
    ASSERT_GT(anomalous, 0u);
    CompareOptions one;
    one.useTensorData = false;
    one.threads = 1;
    const auto serial = compareDumps(a, b, one);
    ASSERT_EQ(serial.tensors.size(), a.rowCount());
    EXPECT_EQ(serial.divergingTensors, anomalous);
    ASSERT_TRUE(serial.firstBornHere);
    const OpComparison& born = serial.ops[*serial.firstBornHere];
    EXPECT_EQ(born.referenceRound, 3);
    uint32_t top = born.referenceOp;
    while (a.op(top).parent != kNone) top = a.op(top).parent;
    EXPECT_EQ(a.op(top).name, "layers.5") << a.describeOp(born.referenceOp);
    const std::string csv = compareResultCsv(serial), report = formatCompareReport(serial);
    for (unsigned threads : {2u, 4u}) {
        CompareOptions many = one;
        many.threads = threads;
        for (int run = 0; run < 2; ++run) {
            const auto parallel = compareDumps(a, b, many);
            EXPECT_EQ(compareResultCsv(parallel), csv) << threads;  // every tensor's verdict
            EXPECT_EQ(formatCompareReport(parallel), report) << threads;
            ASSERT_EQ(parallel.ops.size(), serial.ops.size());
            for (size_t o = 0; o < serial.ops.size(); ++o) {
                const OpComparison &x = parallel.ops[o], &y = serial.ops[o];
                ASSERT_EQ(x.verdict, y.verdict) << o;
                ASSERT_EQ(x.cause, y.cause) << o;
                ASSERT_EQ(x.inheritedFrom, y.inheritedFrom) << o;
            }
        }
    }
}

// Tensor files gone from one run: each is noted, in the order of the compared tensors whichever
// thread met it first, so that the report is the same from run to run.
TEST(Compare, UnreadableTensorsAreNotedInTheirOrderWhateverTheThreads) {
    TempDir dir;
    const std::string aRoot = writeBlock(dir, "a", 1, 9, 6), bRoot = writeBlock(dir, "b", 1, 9, 6);
    size_t removed = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(bRoot))
        if (entry.path().extension() == ".bin" && removed < 12 &&
            std::filesystem::remove(entry.path()))
            ++removed;
    ASSERT_EQ(removed, 12u);
    const DumpIndex a = indexOf(aRoot), b = indexOf(bRoot);
    CompareOptions one, many;
    one.threads = 1;
    many.threads = 4;
    const auto serial = compareDumps(a, b, one);
    ASSERT_EQ(serial.problems.size(), 12u);
    for (const auto& p : serial.problems) EXPECT_NE(p.find(".bin"), std::string::npos) << p;
    for (int run = 0; run < 5; ++run) {
        const auto parallel = compareDumps(a, b, many);
        EXPECT_EQ(parallel.problems, serial.problems) << "run " << run;
        EXPECT_EQ(formatCompareReport(parallel), formatCompareReport(serial)) << "run " << run;
    }
}

// A file that cannot be read is noted once, however many tensors were de-duplicated into it
// (filter_level 1: the same bytes seen again are a header naming the first copy). It was noted
// for each of them, the same line up to 16 times (found by a hostile-input pass).
TEST(Compare, AnUnreadableFileIsNotedOnceForAllTheTensorsThatShareIt) {
    TempDir dir;
    const std::string aRoot = writeBlock(dir, "a", 1, 9), bRoot = writeBlock(dir, "b", 1, 9);
    // Every first copy cut short; the files naming one of them (`data=`) are left as they are.
    size_t cut = 0, sharing = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(bRoot)) {
        if (entry.path().extension() != ".bin") continue;
        const std::string text = probe::test::readFile(entry.path().string());
        if (text.find("\ndata=") != std::string::npos) {
            ++sharing;
            continue;
        }
        std::filesystem::resize_file(entry.path(), text.size() - 4);
        ++cut;
    }
    ASSERT_GT(sharing, 0u);
    ASSERT_GT(cut, 0u);
    const DumpIndex a = indexOf(aRoot), b = indexOf(bRoot);
    for (unsigned threads : {1u, 4u}) {
        CompareOptions options;
        options.threads = threads;
        const auto result = compareDumps(a, b, options);
        ASSERT_EQ(result.problems.size(), cut) << formatCompareReport(result);
        const std::set<std::string> distinct(result.problems.begin(), result.problems.end());
        EXPECT_EQ(distinct.size(), result.problems.size()) << formatCompareReport(result);
        for (const auto& p : result.problems)
            EXPECT_NE(p.find("truncated"), std::string::npos) << p;
    }
}

// Cancelled from another thread (the application replaced a dump): it stops, and says so.
TEST(Compare, ACancelledComparisonSaysSoAndHoldsNothing) {
    TempDir dir;
    const DumpIndex a = indexOf(writeBlock(dir, "a", 1, 9, 4)),
                    b = indexOf(writeBlock(dir, "b", 1.5f, 9, 4));
    std::atomic<bool> cancel{false};
    CompareOptions options;
    options.cancel = &cancel;
    options.threads = 2;
    uint64_t calls = 0;
    // Cancelled while it measures: the first progress report sets the flag.
    options.progress = [&](uint64_t, uint64_t) {
        ++calls;
        cancel = true;
    };
    const auto stopped = compareDumps(a, b, options);
    EXPECT_GE(calls, 1u);
    EXPECT_TRUE(stopped.cancelled);
    EXPECT_TRUE(stopped.ops.empty());
    EXPECT_FALSE(stopped.firstBornHere);
    // Not cancelled: the same dumps give the whole answer.
    cancel = false;
    options.progress = {};
    const auto whole = compareDumps(a, b, options);
    EXPECT_FALSE(whole.cancelled);
    EXPECT_TRUE(whole.firstBornHere);
}

// ---- msprobe dumps and ranks -----------------------------------------------------------------

std::string item(double max, double min, double mean, double norm, const char* shape = "[4, 8]") {
    char text[400];
    std::snprintf(
        text, sizeof text,
        R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": %s, "Max": %.17g, "Min": %.17g, "Mean": %.17g, "Norm": %.17g, "requires_grad": false})",
        shape, max, min, mean, norm);
    return text;
}

// An entry of dump.json: "name": {"input_args": [inputs], "input_kwargs": {}, "output":
// [outputs]}, and a module's "parameters": {parameters} when given.
std::string entry(const std::string& name, const std::string& inputs, const std::string& outputs,
                  const std::string& parameters = {}) {
    return "\"" + name + R"(": {"input_args": [)" + inputs +
           R"(], "input_kwargs": {}, "output": [)" + outputs + "]" +
           (parameters.empty() ? "" : R"(, "parameters": {)" + parameters + "}") + "}";
}

// One rank's files of an msprobe dump of statistics (FORMATS.md section 2): dump.json at
// `level` holding `entries` (entry()s joined by commas), construct.json (`construct`: the
// entries' parents) and an empty stack.json.
void writeMsprobeRank(const std::string& rankDir, const char* level, const std::string& entries,
                      const std::string& construct = "{}") {
    std::filesystem::create_directories(rankDir);
    probe::test::writeFile(rankDir + "/dump.json",
                           std::string(R"({"task": "statistics", "level": ")") + level +
                               R"(", "framework": "pytorch", "dump_data_dir": null, "data": {)" +
                               entries + "}}");
    probe::test::writeFile(rankDir + "/construct.json", construct);
    probe::test::writeFile(rankDir + "/stack.json", "{}");
}

// Two ranks of one step of a data-parallel job: different inputs; `weightMax` the fc weight's
// Max on rank 1 (rank 0's is 0.5).
std::string writeRanks(const TempDir& dir, double weightMax) {
    const std::string root = dir / "dump";
    for (int rank = 0; rank < 2; ++rank) {
        const double in = rank == 0 ? 1.0 : 2.0;
        const std::string x = item(in, -in, 0.1 * in, 3 * in),
                          y = item(4 * in, -4 * in, in, 9 * in),
                          weight = item(rank ? weightMax : 0.5, -0.5, 0, 2);
        writeMsprobeRank(
            root + "/step0/rank" + std::to_string(rank), "mix",
            entry("Functional.linear.0.forward", x + ", " + weight, y) + ", " +
                entry("Module.fc.Linear.forward.0", x, y, R"("weight": )" + weight),
            R"({"Functional.linear.0.forward": "Module.fc.Linear.forward.0", "Module.fc.Linear.forward.0": null})");
    }
    return root;
}

// One step of an msprobe dump of statistics: `entries` (name, then the items of its input and
// output) in this order.
std::string writeStep(
    const TempDir& dir, const std::string& name,
    const std::vector<std::pair<std::string, std::pair<std::string, std::string>>>& entries) {
    const std::string root = dir / name;
    std::string data;
    for (const auto& [entryName, items] : entries)
        data += (data.empty() ? "" : ", ") + entry(entryName, items.first, items.second);
    writeMsprobeRank(root + "/step0/rank0", "L1", data);
    return root;
}

std::string typedItem(const char* dtype, const char* shape, double max, double norm = 2) {
    char text[400];
    std::snprintf(
        text, sizeof text,
        R"({"type": "torch.Tensor", "dtype": "%s", "shape": %s, "Max": %.17g, "Min": -1, "Mean": 0.25, "Norm": %.17g, "requires_grad": false})",
        dtype, shape, max, norm);
    return text;
}

// msprobe records a module's inputs as it returns: `x.add_(h)` inside a block changed the input
// its entry holds. The report blamed "an op that was not dumped, a cast for example", where the
// in-place call inside the module (dumped, in one run only) is named.
TEST(Compare, AModuleInputChangedByAnInPlaceCallInsideItIsSaid) {
    const std::string x = item(1, -1, 0, 2), a = item(1.15, -1, 0.1, 3), b = item(2.0, -1, 0.2, 4);
    // `x.add_(h)` in the block itself, and `x[:, 0] = 5` in a module inside it.
    for (const char* call : {"Tensor.add_.0.forward", "Tensor.__setitem__.0.forward"}) {
        TempDir dir;
        const bool nested = std::string(call).find("setitem") != std::string::npos;
        for (const bool inPlace : {false, true}) {
            const std::string add = inPlace ? call : "Tensor.__add__.0.forward";
            const std::string construct =
                R"({"Module.inp.Linear.forward.0": null, ")" + add + R"(": ")" +
                (nested ? "Module.blk.sub.Sub.forward.0" : "Module.blk.Block.forward.0") +
                R"(", "Module.blk.sub.Sub.forward.0": "Module.blk.Block.forward.0",)"
                R"( "Module.blk.Block.forward.0": null})";
            writeMsprobeRank(dir / (inPlace ? "candidate" : "reference") + "/step0/rank0", "mix",
                             entry("Module.inp.Linear.forward.0", x, a) + ", " + entry(add, a, b) +
                                 ", " + entry("Module.blk.sub.Sub.forward.0", a, b) + ", " +
                                 entry("Module.blk.Block.forward.0", inPlace ? b : a, b),
                             construct);
        }
        const DumpIndex reference = indexOf(dir / "reference"),
                        candidate = indexOf(dir / "candidate");
        const auto result = compareDumps(reference, candidate, CompareOptions{});
        const std::string report = formatCompareReport(result);
        EXPECT_NE(report.find("first divergence, born here: round 0  Module.blk.Block.forward.0"),
                  std::string::npos)
            << report;
        EXPECT_NE(report.find("which matches: msprobe records a module's inputs as it returns, and "
                              "an in-place call inside it may have changed this one: candidate " +
                              std::string(call) + ")"),
                  std::string::npos)
            << report;
        EXPECT_EQ(report.find("an op that was not dumped changed it"), std::string::npos) << report;
    }
}

// Calls of one count made in different places (msprobe names a call by its count): the first
// divergence says so, and so does each other op where a divergence is born (they did not).
TEST(Compare, EachPairOfDifferentCallsIsSaid) {
    TempDir dir;
    for (const bool candidate : {false, true}) {
        const std::string in = candidate ? item(5, -5, 1, 9) : item(1, -1, 0, 2),
                          out = candidate ? item(6, -6, 1, 9) : item(2, -2, 0, 3);
        const std::string first = candidate ? R"("Module.m.M.forward.0")" : "null",
                          second = candidate ? "null" : R"("Module.m.M.forward.0")";
        writeMsprobeRank(dir / (candidate ? "candidate" : "reference") + "/step0/rank0", "mix",
                         entry("Tensor.__add__.0.forward", in, out) + ", " +
                             entry("Tensor.__add__.1.forward", in, out) + ", " +
                             entry("Module.m.M.forward.0", out, out),
                         R"({"Tensor.__add__.0.forward": )" + first +
                             R"(, "Tensor.__add__.1.forward": )" + second +
                             R"(, "Module.m.M.forward.0": null})");
    }
    const DumpIndex reference = indexOf(dir / "reference"), candidate = indexOf(dir / "candidate");
    const std::string report = formatCompareReport(compareDumps(reference, candidate, {}));
    EXPECT_NE(report.find("(these are two different calls: the reference made it outside any "
                          "module, the candidate in Module.m.M.forward.0:"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("Tensor.__add__.1.forward: input 0 [torch.float32 4x8] (two different "
                          "calls: the reference made it in Module.m.M.forward.0, the candidate "
                          "outside any module)"),
              std::string::npos)
        << report;
}

// A tensor's dtype and shape are judged by their texts, whatever number each dump gave the text
// (here the candidate's extra first op takes the first numbers): the same text is the same dtype
// or shape, another text differs; a dtype no one knows is judged exactly.
TEST(Compare, DTypesAndShapesAreComparedByTheirTexts) {
    TempDir dir;
    const std::string f32 = typedItem("torch.float32", "[4, 8]", 1);
    auto write = [&](const std::string& name, bool candidate) {
        std::vector<std::pair<std::string, std::pair<std::string, std::string>>> entries;
        if (candidate)
            entries.push_back(
                {"Functional.extra.0.forward",
                 {typedItem("torch.int8", "[7]", 3), typedItem("torch.float16", "[2]", 4)}});
        entries.push_back(
            {"Functional.same.0.forward", {f32, typedItem("torch.float32", "[4, 8]", 2)}});
        entries.push_back({"Functional.shape.0.forward",
                           {f32, typedItem("torch.float32", candidate ? "[3]" : "[2]", 2)}});
        entries.push_back(
            {"Functional.dtype.0.forward",
             {f32, typedItem(candidate ? "torch.float16" : "torch.float32", "[2]", 2)}});
        entries.push_back({"Functional.unknown.0.forward",
                           {f32, typedItem("torch.frob", "[2]", 2, candidate ? 2 + 1e-12 : 2)}});
        // Its input is the output of "same" (same dtype text, shape and statistics).
        entries.push_back(
            {"Functional.next.0.forward",
             {typedItem("torch.float32", "[4, 8]", 2), typedItem("torch.float32", "[4, 8]", 5)}});
        return writeStep(dir, name, entries);
    };
    const DumpIndex a = indexOf(write("a", false)), b = indexOf(write("b", true));
    ASSERT_NE(a.text(0), b.text(0));  // the string numbers differ between the dumps
    const auto result = compareDumps(a, b, CompareOptions{});
    auto output = [&](const char* name) -> const TensorComparison& {
        const OpComparison& op = result.ops[opNamed(result, name)];
        return result.tensors[op.firstTensor + op.tensorCount - 1];
    };
    const auto& same = output("Functional.same.0.forward");
    EXPECT_FALSE(same.differs);
    EXPECT_EQ(same.rule, DivergenceRule::None);
    EXPECT_EQ(same.referenceDType(), format::DType::Float);
    EXPECT_EQ(same.ulps, 256);
    EXPECT_EQ(output("Functional.shape.0.forward").rule, DivergenceRule::Shape);
    const auto& dtype = output("Functional.dtype.0.forward");
    EXPECT_TRUE(dtype.differs);  // the dtype, though not one statistic
    EXPECT_EQ(dtype.rule, DivergenceRule::None);
    EXPECT_EQ(dtype.candidateDType(), format::DType::Float16);
    EXPECT_EQ(dtype.judgedDType(), format::DType::Float);
    const auto& unknown = output("Functional.unknown.0.forward");
    EXPECT_FALSE(unknown.judgedDType().has_value());
    EXPECT_EQ(unknown.ulps, 0);
    EXPECT_EQ(unknown.rule, DivergenceRule::Statistic);  // 1e-12 apart: no floor for it
    const OpComparison& next = result.ops[opNamed(result, "Functional.next.0.forward")];
    EXPECT_EQ(result.tensors[next.firstTensor].producer,
              result.ops[opNamed(result, "Functional.same.0.forward")].firstTensor + 1);
    EXPECT_EQ(result.divergingTensors, 2u);
}

// A tensor item whose dtype is not a string or whose shape is not a list of whole numbers is a
// damaged item, said as one, not a tensor that diverges ("shape differs: 4x8 vs \"x\"").
TEST(Compare, ATensorItemOfTheWrongTypesIsDamagedNotDivergent) {
    TempDir dir;
    const std::string good = typedItem("torch.float32", "[4, 8]", 1);
    auto write = [&](const std::string& name, const std::string& input) {
        return writeStep(
            dir, name,
            {{"Functional.a.0.forward", {input, good}}, {"Functional.b.0.forward", {good, good}}});
    };
    const DumpIndex a = indexOf(write("a", good));
    for (const std::string& damaged :
         {typedItem("torch.float32", "\"x\"", 1), typedItem("torch.float32", "[4, -8]", 1),
          std::string(R"({"type": "torch.Tensor", "dtype": 7, "shape": [4, 8], "Max": 1})")}) {
        const DumpIndex b = indexOf(write("b" + std::to_string(damaged.size()), damaged));
        ASSERT_FALSE(b.problems().empty()) << damaged;
        EXPECT_NE(b.problems().front().find("1 item is"), std::string::npos)
            << b.problems().front();
        const auto result = compareDumps(a, b, CompareOptions{});
        EXPECT_EQ(result.divergingTensors, 0u) << damaged << "\n" << formatCompareReport(result);
        EXPECT_EQ(result.tensorsOnlyInReference, 1u) << damaged;
        const std::string report = formatCompareReport(result);
        EXPECT_NE(report.find("no tensor diverges of those that could be read (see the notes "
                              "below), but some tensors are in one run only (some could not be "
                              "read)\n"),
                  std::string::npos)
            << report;
    }
}

TEST(Compare, APathBelowTheRootComparesThatPart) {
    TempDir dir;
    const std::string root = writeRanks(dir, 0.5);
    std::string error;
    auto rank1 = locateDump(root + "/step0/rank1/", &error);
    ASSERT_TRUE(rank1) << error;
    EXPECT_EQ(rank1->root, root);
    EXPECT_EQ(rank1->scope.process, "rank1");
    EXPECT_EQ(rank1->scope.round, 0);
    auto step = locateDump(root + "/step0", &error);
    ASSERT_TRUE(step);
    EXPECT_EQ(step->scope.process, "");
    EXPECT_EQ(step->scope.round, 0);
    auto whole = locateDump(root, &error);
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->scope.process, "");
    EXPECT_FALSE(whole->scope.round);
    EXPECT_FALSE(locateDump(dir / "nothing", &error));
    // Op-level: data/<dev_pid>/<round>.
    ApiRun run(dir, "atb");
    run.op("op", {{1}}, {{2}});
    const std::string atb = run.finish();
    const std::string process = probe::test::listSubdirectories(atb + "/data").at(0);
    auto round = locateDump(atb + "/data/" + process + "/0", &error);
    ASSERT_TRUE(round) << error;
    EXPECT_EQ(round->root, atb);
    EXPECT_EQ(round->scope.process, process);
    EXPECT_EQ(round->scope.round, 0);
    auto top = locateDump(dir / "atb", &error);
    ASSERT_TRUE(top);
    EXPECT_EQ(top->scope.process, "");
}

// One side's round folder compares that round of both: the other side's rounds left out are
// said (they went unmentioned, and "no tensor diverges" read as the runs agreeing), whichever
// side names it; both naming rounds leave nothing out to say.
TEST(Compare, ARoundFolderOfOneSideSaysWhatItLeavesOutOfTheOther) {
    TempDir dir;
    const auto write = [&](const std::string& name, float nudge) {
        ApiRun run(dir, name);
        for (int round = 0; round < 4; ++round)
            run.op("op", {{1, 2}}, {{3, round == 2 ? 4 + nudge : 4}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 0)), b = indexOf(write("b", 1));
    const std::string process = b.process(0).key;
    CompareOptions options;
    options.candidateScope = {process, 1};
    const auto candidateNames = compareDumps(a, b, options);
    const std::string report = formatCompareReport(candidateNames);
    EXPECT_FALSE(candidateNames.diverges()) << report;
    EXPECT_NE(report.find("note: round 1 only, as the candidate's folder names: the "
                          "reference's rounds 0, 2, 3 left out"),
              std::string::npos)
        << report;
    options.candidateScope = {};
    options.referenceScope = {process, 2};
    const auto referenceNames = compareDumps(a, b, options);
    const std::string referenceReport = formatCompareReport(referenceNames);
    EXPECT_TRUE(referenceNames.diverges()) << referenceReport;
    EXPECT_NE(referenceReport.find("note: round 2 only, as the reference's folder names: the "
                                   "candidate's rounds 0, 1, 3 left out"),
              std::string::npos)
        << referenceReport;
    options.candidateScope = {process, 2};
    EXPECT_EQ(formatCompareReport(compareDumps(a, b, options)).find("left out"), std::string::npos);
}

TEST(Compare, ReplicasAreJudgedOnTheirParameters) {
    TempDir dir;
    const DumpIndex same = indexOf(writeRanks(dir, 0.5));
    CompareOptions options;
    options.referenceScope.process = "0";  // rank numbers work too
    options.candidateScope.process = "rank1";
    // Everything judged: the inputs differ (by design), so the first op is "born here".
    const auto everything = compareDumps(same, same, options);
    ASSERT_TRUE(everything.firstBornHere) << formatCompareReport(everything);
    EXPECT_EQ(everything.processPairs,
              (std::vector<std::pair<uint32_t, uint32_t>>{
                  {same.findProcess("rank0"), same.findProcess("rank1")}}));
    // As replicas: their parameters agree, so nothing diverges.
    options.replicas = true;
    const auto replicas = compareDumps(same, same, options);
    EXPECT_FALSE(replicas.diverges()) << formatCompareReport(replicas);
    EXPECT_FALSE(replicas.nothingCompared());
    // Their activations differ, and are not judged: not counted as differing below the floor.
    EXPECT_EQ(replicas.differingTensors, 0u);
    EXPECT_EQ(formatCompareReport(replicas).find("below the floor"), std::string::npos)
        << formatCompareReport(replicas);
    // A weight that differs on rank 1: the module whose parameter it is.
    TempDir other;
    const DumpIndex skewed = indexOf(writeRanks(other, 0.75));
    const auto result = compareDumps(skewed, skewed, options);
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(entryOf(skewed, result, *result.firstBornHere), "Module.fc.Linear.forward.0");
    const auto& cause = result.tensors[result.ops[*result.firstBornHere].cause];
    EXPECT_EQ(skewed.slot(skewed.row(cause.referenceRow).slot).index, "parameters.weight");
    EXPECT_EQ(cause.rule, DivergenceRule::Statistic);
    EXPECT_EQ(result.divergingTensors, 1u);  // the API's weight input is an activation to replicas
    EXPECT_NE(report.find("round 0  rank0 vs rank1  Module.fc.Linear.forward.0"), std::string::npos)
        << report;
    EXPECT_NE(report.find("a parameter of the module"), std::string::npos) << report;
    // That alone: no other account of where it came from.
    EXPECT_EQ(report.find("no compared op produced it"), std::string::npos) << report;
    // A rank that is not there.
    options.candidateScope.process = "rank7";
    const auto missing = compareDumps(skewed, skewed, options);
    EXPECT_TRUE(missing.nothingCompared());
    ASSERT_FALSE(missing.problems.empty());
    EXPECT_NE(missing.problems[0].find("no process (rank) rank7; it has rank0, rank1"),
              std::string::npos)
        << missing.problems[0];
}

// Replicas compared on an msprobe L1 dump, which records no parameters: nothing they must agree
// on is there, so no verdict (exit 65), and the advice fits the dump. It said "no tensor
// diverges" (exit 0) with advice for op-level dumps, while a weight differed on rank 1.
TEST(Compare, ReplicasWithNothingTheyMustShareGetNoVerdict) {
    TempDir dir;
    const std::string root = dir / "dump";
    for (int rank = 0; rank < 2; ++rank) {
        const double in = rank == 0 ? 1.0 : 2.0;
        writeMsprobeRank(
            root + "/step0/rank" + std::to_string(rank), "L1",
            entry("Functional.linear.0.forward",
                  item(in, -in, 0.1 * in, 3 * in) + ", " + item(rank ? 0.75 : 0.5, -0.5, 0, 2),
                  item(4 * in, -4 * in, in, 9 * in)),
            R"({"Functional.linear.0.forward": null})");
    }
    const DumpIndex index = indexOf(root);
    CompareOptions options;
    options.referenceScope.process = "rank0";
    options.candidateScope.process = "rank1";
    options.replicas = true;
    const auto result = compareDumps(index, index, options);
    const std::string report = formatCompareReport(result);
    EXPECT_FALSE(result.nothingCompared()) << report;
    EXPECT_TRUE(result.replicasJudgedNothing()) << report;
    EXPECT_FALSE(result.diverges()) << report;
    EXPECT_EQ(report.find("no tensor diverges"), std::string::npos) << report;
    EXPECT_NE(report.find("no verdict: nothing the replicas must agree on was compared"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("records parameters at levels L0 and mix only"), std::string::npos)
        << report;
    // The replicas of writeRanks (level mix) are judged: a verdict.
    const DumpIndex mix = indexOf(writeRanks(dir, 0.5));
    EXPECT_FALSE(compareDumps(mix, mix, options).replicasJudgedNothing());
}

// A candidate cut short (a truncated statistic.csv) is said at the top, beside the counts, with
// the first problem: it was a note after the whole report, under a verdict read as complete.
TEST(Compare, RunsThatCouldNotBeReadWholeAreSaidAtTheTop) {
    TempDir dir;
    auto write = [&](const char* name) {
        ApiRun run(dir, name);
        run.op("fc1", {{1, 2}}, {{-1, 3}});
        run.op("fc2", {{-1, 3}}, {{7}});
        run.op("fc3", {{7}}, {{8}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a"));
    const std::string cut = write("b");
    const auto files = probe::test::filesNamed(cut, "statistic.csv");
    ASSERT_EQ(files.size(), 1u);
    const std::string text = probe::test::readFile(files[0]);
    ASSERT_GT(text.size(), 20u);
    probe::test::writeFile(files[0], text.substr(0, text.size() - 10));  // the last line cut
    const DumpIndex b = indexOf(cut);
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_FALSE(result.problems.empty()) << report;
    const size_t said =
        report.find("  1 problem reading or pairing the runs (the notes at the end), the first: " +
                    result.problems.front() + "\n");
    EXPECT_NE(said, std::string::npos) << report;
    EXPECT_LT(said, report.find("\n", report.find("compared ")) + 200) << report;
}

// Four ops of one run only before the first divergence (the demo's planted overflow: arange,
// eq, where, mul): the three nearest are named, in the order they ran (they were listed nearest
// first, which read as the reverse of what ran).
TEST(Compare, OpsOfOneRunOnlyJustBeforeTheFirstDivergenceAreListedInTheOrderTheyRan) {
    TempDir dir;
    auto write = [&](const char* name, bool planted) {
        ApiRun run(dir, name);
        run.op("fc1", {{1, 2}}, {{-1, 3}});
        if (planted)
            for (const char* extra : {"p", "q", "r", "s"}) run.op(extra, {{1, 2}}, {{1, 2}});
        run.op("add", {{planted ? 9.0f : -1.0f, 3}}, {{7}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", false)), b = indexOf(write("b", true));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_NE(report.find("  ops that ran in one run only, just before it:\n"
                          "    candidate round 0  q (q)\n"
                          "    candidate round 0  r (r)\n"
                          "    candidate round 0  s (s)\n"),
              std::string::npos)
        << report;
}

// One of two ops of the same name missing from the candidate (the first mul of an RMSNorm): the
// other paired with the reference's first by their order, and a divergence "born here" was made
// up of two different ops (found by a walk that deleted an op's rows). Ops of a name that one run
// ran more often pair by their order after the nearest op both ran alike.
TEST(Compare, AnOpMissingAmongOpsOfTheSameNameLeavesTheOthersPaired) {
    TempDir dir;
    auto write = [&](const char* name, bool withFirstMul) {
        ApiRun run(dir, name, "statistics");
        for (int round = 0; round < 2; ++round) {  // round 0 alike in both runs
            run.begin("norm");
            run.input(0, {1, 2});
            run.op("to", {{1, 2}}, {{1, 2}});
            if (withFirstMul || round == 0) run.op("mul", {{1, 2}}, {{5, 6}});
            run.op("to", {{3, 4}}, {{3, 4}});
            run.op("mul", {{3, 4}}, {{-7, 8}});
            run.op("mul", {{-7, 8}}, {{9}});  // a third, after the second: paired by order again
            run.output(0, {9});
            run.end();
        }
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", true)), b = indexOf(write("b", false));
    // Either run may be the one with the op (the candidate's extra op pairs alike).
    for (const bool referenceHasIt : {true, false}) {
        const DumpIndex& reference = referenceHasIt ? a : b;
        const DumpIndex& candidate = referenceHasIt ? b : a;
        const auto result = compareDumps(reference, candidate, {});
        const std::string report = formatCompareReport(result);
        EXPECT_FALSE(result.firstBornHere) << report;
        EXPECT_EQ(result.unpairedOps, 1u) << report;
        ASSERT_EQ(result.unpaired.size(), 1u) << report;
        EXPECT_EQ(result.unpaired[0].inReference, referenceHasIt) << report;
        EXPECT_EQ(result.unpaired[0].round, 1) << report;
        EXPECT_EQ(a.op(result.unpaired[0].op).id, "0_1") << report;  // the first mul
        EXPECT_EQ(result.ops.size(), 6u + 5u) << report;  // norm and its ops, in both rounds
        for (const auto& op : result.ops)
            EXPECT_EQ(reference.op(op.referenceOp).name, candidate.op(op.candidateOp).name)
                << report;
    }
}

// A reference of many more rounds than the candidate (17 decode rounds against 5): the ops of
// one run only just before the first divergence are still named (more than 5,000 op executions
// of rounds the candidate lacks hid them, and "an op that was not dumped" was blamed), the
// unpaired ones are split by run, and the rounds of one run only are said.
TEST(Compare, OpsJustBeforeTheDivergenceAreNamedBesideRoundsOfOneRunOnly) {
    TempDir dir;
    auto write = [&](const char* name, bool planted, int rounds) {
        ApiRun run(dir, name, "statistics");
        for (int round = 0; round < rounds; ++round) {
            run.begin("layer");
            run.input(0, {1, 2});
            if (round == 0) {
                run.op("fc1", {{1, 2}}, {{-1, 3}});
                if (planted)
                    for (const char* extra : {"p", "q", "r"}) run.op(extra, {{1, 2}}, {{1, 2}});
                run.op("add", {{planted ? 9.0f : -1.0f, 3}}, {{7}});
            } else {
                for (int i = 0; i < 50; ++i)
                    run.op(("x" + std::to_string(i)).c_str(), {}, {{static_cast<float>(i)}});
            }
            run.output(0, {7});
            run.end();
        }
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", false, 102)), b = indexOf(write("b", true, 1));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "layer/add");
    ASSERT_GT(result.unpairedOps, result.unpaired.size()) << "the list is cut, as the test needs";
    EXPECT_FALSE(result.unpairedCutInPairedRound);
    EXPECT_EQ(result.unpairedOps, 101u * 51 + 3);
    EXPECT_NE(report.find("  ops that ran in one run only, just before it:\n"
                          "    candidate round 0  layer/p (p)\n"
                          "    candidate round 0  layer/q (q)\n"
                          "    candidate round 0  layer/r (r)\n"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("not paired: 5154 op executions (5151 only in the reference, 3 only in "
                          "the candidate)"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("note: rounds 1..101 are in the reference only: the candidate has "
                          "round 0; their ops are not paired"),
              std::string::npos)
        << report;
    const auto json = nlohmann::json::parse(compareResultJson(result));
    EXPECT_EQ(json["summary"]["unpairedInReference"], 5151);
    EXPECT_EQ(json["firstBornHere"]["unpairedJustBefore"].size(), 3u) << json["firstBornHere"];
}

// An op of one run only just before the first divergence (a gelu in place of a relu): named
// there, outermost first, rather than left to "an op that was not dumped". They were counted
// only ("not paired: 2 op executions").
TEST(Compare, OpsOfOneRunOnlyJustBeforeTheFirstDivergenceAreNamed) {
    TempDir dir;
    auto write = [&](const char* name, const char* activation) {
        ApiRun run(dir, name);
        // A layer both runs have, with an extra op in the candidate's (same values): not beside
        // fc2 nor around it, so no cause of its input.
        run.begin("layer0");
        run.input(0, {1, 2});
        if (std::strcmp(activation, "gelu") == 0) run.op("extra", {{1, 2}}, {{1, 2}});
        run.output(0, {1, 2});
        run.end();
        run.op("fc1", {{1, 2}}, {{-1, 3}});
        run.begin(activation);
        run.input(0, {-1, 3});
        run.op("inner", {{-1, 3}}, {{0, 3}});  // inside it: told by the outer op
        run.output(0, {std::strcmp(activation, "relu") == 0 ? 0.0f : -0.159f, 3});
        run.end();
        run.op("fc2", {{std::strcmp(activation, "relu") == 0 ? 0.0f : -0.159f, 3}}, {{7}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", "relu")), b = indexOf(write("b", "gelu"));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "fc2");
    const auto before = result.unpairedBefore(*result.firstBornHere, 3);
    std::vector<std::string> named;
    for (size_t i : before) named.push_back(result.describeUnpaired(result.unpaired[i]));
    EXPECT_EQ(named, (std::vector<std::string>{"reference round 0  relu (relu)",
                                               "candidate round 0  gelu (gelu)"}))
        << report;
    EXPECT_NE(report.find("  ops that ran in one run only, just before it:\n"
                          "    reference round 0  relu (relu)\n"
                          "    candidate round 0  gelu (gelu)\n"),
              std::string::npos)
        << report;
    const auto json = nlohmann::json::parse(compareResultJson(result));
    EXPECT_EQ(json["firstBornHere"]["unpairedJustBefore"],
              nlohmann::json::array(
                  {"reference round 0  relu (relu)", "candidate round 0  gelu (gelu)"}));
}

// An input that differs from the output it came from, with no op of one run only in between to
// blame: an op that was not dumped changed it. With one (AnOpOnRoundedInputsIsBornHere's
// to_bf16), the note names those below it instead (it blamed an op not dumped above the list).
TEST(Compare, AnInputChangedWhereNoDumpedOpRanIsBlamedOnAnOpNotDumped) {
    TempDir dir;
    auto write = [&](const char* name, bool changed) {
        ApiRun run(dir, name);
        run.op("fc1", {{1, 2}}, {{-1, 3}});
        run.op("fc2", {{changed ? -2.0f : -1.0f, changed ? 6.0f : 3.0f}}, {{7}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", false)), b = indexOf(write("b", true));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "fc2");
    EXPECT_NE(report.find("which matches: an op that was not dumped changed it, a cast for "
                          "example)\n"),
              std::string::npos)
        << report;
    EXPECT_EQ(report.find("ran in one run only"), std::string::npos) << report;
}

// msprobe numbers an API's calls in order: runs that called one a different number of times
// pair calls made in different places from there on, which is said (a layer skipped was
// reported as a changed weight, without a word).
TEST(Compare, APIsCalledADifferentNumberOfTimesAreNoted) {
    TempDir dir;
    const std::string x = item(1, -1, 0, 2), y = item(2, -2, 0, 4);
    const DumpIndex three = indexOf(writeStep(dir, "three",
                                              {{"Functional.linear.0.forward", {x, y}},
                                               {"Functional.linear.1.forward", {y, x}},
                                               {"Functional.linear.2.forward", {x, y}},
                                               {"Tensor.add.0.forward", {y, y}}}));
    const DumpIndex two = indexOf(writeStep(dir, "two",
                                            {{"Functional.linear.0.forward", {x, y}},
                                             {"Functional.linear.1.forward", {y, x}},
                                             {"Tensor.add.0.forward", {y, y}}}));
    const auto result = compareDumps(three, two, {});
    const std::string report = formatCompareReport(result);
    ASSERT_EQ(result.notes.size(), 1u) << report;
    EXPECT_EQ(result.notes[0].rfind("the runs called Functional.linear (1 more calls in the "
                                    "reference, over the steps compared) a different number of "
                                    "times: msprobe numbers an API's calls in order",
                                    0),
              0u)
        << result.notes[0];
    EXPECT_TRUE(compareDumps(three, three, {}).notes.empty());
}

// Several ranks: the first divergence is the earliest round's, whichever rank it is on (the
// ranks are walked one after another: rank 0's round 1 came first, and rank 1's round 0, the
// real birth, fifth), and the ops around it are its rank's and round's.
TEST(Compare, TheFirstDivergenceOfSeveralRanksIsTheEarliestRounds) {
    TempDir dir;
    // (step, rank) differing in the candidate: none in the reference.
    auto write = [&](const std::string& name, std::set<std::pair<int, int>> differing) {
        const std::string root = dir / name;
        for (int step = 0; step < 2; ++step)
            for (int rank = 0; rank < 2; ++rank) {
                const double w = differing.count({step, rank}) ? 0.75 : 0.5;
                writeMsprobeRank(
                    root + "/step" + std::to_string(step) + "/rank" + std::to_string(rank), "L1",
                    entry("Functional.linear.0.forward",
                          item(1, -1, 0, 2) + ", " + item(w, -0.5, 0, 2), item(4 * w, -4, 0, 9)),
                    R"({"Functional.linear.0.forward": null})");
            }
        return root;
    };
    const DumpIndex reference = indexOf(write("a", {})),
                    candidate = indexOf(write("b", {{1, 0}, {0, 1}}));
    const auto result = compareDumps(reference, candidate, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    const OpComparison& first = result.ops[*result.firstBornHere];
    EXPECT_EQ(first.referenceRound, 0) << report;
    EXPECT_EQ(reference.process(first.referenceProcess).key, "rank1") << report;
    const std::string around = report.substr(report.find("around the first divergence"));
    EXPECT_EQ(around.find("rank0"), std::string::npos) << around;
}

// A run killed part way, or still being written, lacks what it did not reach: the report says
// so (it read as "the runs did not run the same ops", nothing more).
TEST(Compare, ARunKilledOrStillRunningIsSaid) {
    TempDir dir;
    auto write = [&](const char* name, int rounds) {
        ApiRun run(dir, name);
        for (int round = 0; round < rounds; ++round) run.op("op", {{1, 2}}, {{3}});
        return run.finish();
    };
    const std::string whole = write("whole", 3), killed = write("killed", 2);
    // probe_status.json as probe run leaves it for a program killed by SIGKILL, or running.
    const auto status = [&](const char* state, const char* endedBy, bool cutOff = true) {
        probe::test::writeFile(
            killed + "/probe_status.json",
            std::string(R"({"state": ")") + state +
                R"(", "files": 2, "bytes": 10, "rows": 4, "errors": 0, "processes": [{"pid": 7, "device": -1, "state": ")" +
                state +
                R"(", "command": "python3 x.py", "started": "2026-12-04T08:26:02Z", "updated": "2026-12-04T08:26:02Z", "files": 2, "bytes": 10, "rows": 4, "errors": 0, "dropped_rows": 0, "dump_stopped": "", )" +
                endedBy + R"("cut_off": )" + (cutOff ? "true" : "false") +
                R"(, "messages": []}]})");
    };
    status(
        "incomplete",
        R"("ended_by": {"how": "signal", "code": 9, "signal": "SIGKILL", "seen_by": "probe run"}, )");
    const DumpIndex reference = indexOf(whole), candidate = indexOf(killed);
    const auto result = compareDumps(reference, candidate, {});
    const std::string report = formatCompareReport(result);
    EXPECT_FALSE(result.diverges()) << report;
    EXPECT_FALSE(result.pairsEverything()) << report;
    ASSERT_EQ(result.notes.size(), 2u) << report;
    EXPECT_EQ(result.notes[0],
              "the candidate is not a whole run (incomplete; the program was killed by SIGKILL "
              "before its probe could write out what was queued: rows of its last 100 ms or so "
              "may be missing, more if its disk was slower than the program): what it lacks is "
              "missing, not different");
    EXPECT_EQ(result.notes[1],
              "round 2 is in the reference only: the candidate has rounds 0, 1; their ops are not "
              "paired");
    // Still being written.
    status("running", "");
    const DumpIndex stillRunning = indexOf(killed);
    const auto running = compareDumps(stillRunning, reference, {});
    ASSERT_EQ(running.notes.size(), 2u) << formatCompareReport(running);
    EXPECT_EQ(running.notes[0],
              "the reference is still being written (running): its last rounds "
              "may be missing or partial");
    EXPECT_EQ(running.notes[1],
              "round 2 is in the candidate only: the reference has rounds 0, 1; their ops are not "
              "paired");
    // Dumped whole by a program that failed (an exception at step 1): said too (it was not).
    status("complete", R"("ended_by": {"how": "exited", "code": 1, "seen_by": "probe run"}, )",
           false);
    const DumpIndex failed = indexOf(killed);
    const auto afterFailure = compareDumps(reference, failed, {});
    ASSERT_EQ(afterFailure.notes.size(), 2u) << formatCompareReport(afterFailure);
    EXPECT_EQ(afterFailure.notes[0],
              "in the candidate, the program exited with code 1: what it did not run is missing, "
              "not different");
    // Whole runs: no note.
    EXPECT_TRUE(compareDumps(reference, reference, {}).notes.empty());
}

// msprobe backward entries after a forward divergence inherit it: a backward computes from what
// its forward saved, none of its inputs, and from gradients that pass through ops msprobe does
// not record (a training run listed every backward after the divergence as born there).
TEST(Compare, BackwardEntriesAfterAForwardDivergenceInheritIt) {
    TempDir dir;
    auto write = [&](const char* name, double weight) {
        const std::string x = item(1, -1, 0, 2), w = item(weight, -0.5, 0, 2),
                          y = item(2 * weight, -1, 0, 4), g = item(0.5 * weight, 0, 0, 1),
                          gx = item(weight, 0, 0, 3);
        // The relu runs before the change and matches; its backward is given gradients that
        // differ all the same, through ops msprobe does not record (no entry produced them).
        return writeStep(dir, name,
                         {{"Functional.relu.0.forward", {x, x}},
                          {"Functional.linear.0.forward", {x + ", " + w, y}},
                          {"Tensor.mean.0.forward", {y, item(weight, weight, weight, weight)}},
                          {"Tensor.mean.0.backward", {g, g}},
                          {"Functional.linear.0.backward", {item(3 * weight, 0, 0, 5), gx}},
                          {"Functional.relu.0.backward",
                           {item(2 * weight, 0, 0, 7), item(2 * weight, 0, 0, 6)}}});
    };
    const DumpIndex a = indexOf(write("a", 0.5)), b = indexOf(write("b", 0.75));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(entryOf(a, result, *result.firstBornHere), "Functional.linear.0.forward");
    EXPECT_EQ(result.bornHereOps, 1u) << report;
    // The relu's backward: from the step's first forward divergence, its own forward matching.
    const auto& relu = result.ops[opNamed(result, "Functional.relu.0.backward")];
    EXPECT_EQ(relu.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(entryOf(a, result, relu.inheritedFrom), "Functional.linear.0.forward");
    for (const char* backward : {"Tensor.mean.0.backward", "Functional.linear.0.backward"}) {
        const auto& op = result.ops[opNamed(result, backward)];
        EXPECT_EQ(op.verdict, OpVerdict::Inherited) << backward << "\n" << report;
        EXPECT_EQ(
            entryOf(a, result, op.inheritedFrom),
            std::string(backward).replace(std::string(backward).rfind("backward"), 8, "forward"))
            << report;
    }
}

// The same in a later step, whose forward inherits the divergence from the step before (a
// weight the optimizer updated differently): its backward entries inherit too, not only those
// of a step where a divergence is born.
TEST(Compare, BackwardEntriesOfALaterStepInheritItsForwardDivergence) {
    TempDir dir;
    auto write = [&](const char* name, double update) {
        const std::string w0 = item(0.5, -0.5, 0, 2), w1 = item(0.5 + update, -0.5, 0, 2.5),
                          x = item(1, -1, 0, 2);
        const std::string root = writeStep(dir, name, {{"Tensor.add_.0.forward", {w0, w1}}});
        writeMsprobeRank(
            root + "/step1/rank0", "L1",
            entry("Functional.relu.0.forward", x, x) + ", " +
                entry("Functional.linear.0.forward", x + ", " + w1, item(1 + update, -1, 0, 3)) +
                ", " +
                entry("Functional.relu.0.backward", item(0.25 + update, 0, 0, 1),
                      item(0.25 + update, 0, 0, 1.5)));
        return root;
    };
    const DumpIndex a = indexOf(write("a", 0.25)), b = indexOf(write("b", 0.5));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(entryOf(a, result, *result.firstBornHere), "Tensor.add_.0.forward");
    const auto& linear = result.ops[opNamed(result, "Functional.linear.0.forward")];
    EXPECT_EQ(linear.referenceRound, 1);
    EXPECT_EQ(linear.verdict, OpVerdict::Inherited) << report;
    const auto& relu = result.ops[opNamed(result, "Functional.relu.0.backward")];
    EXPECT_EQ(relu.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(entryOf(a, result, relu.inheritedFrom), "Functional.linear.0.forward");
    EXPECT_EQ(result.bornHereOps, 1u) << report;
}

// Several ranks, one round: the birth earliest into its rank's round comes first (rank 1's
// forward, not rank 0's backward that DDP's allreduce gave rank 1's difference; rank 0 is
// walked first).
TEST(Compare, WithinARoundTheBirthEarliestIntoItsRanksRoundComesFirst) {
    TempDir dir;
    auto write = [&](const std::string& name, bool changed) {
        const std::string root = dir / name;
        for (int rank = 0; rank < 2; ++rank) {
            const std::string x = item(1, -1, 0, 2);
            // Rank 1's early linear, and rank 0's late one, differ in the candidate.
            const double early = changed && rank == 1 ? 0.75 : 0.5,
                         late = changed && rank == 0 ? 0.75 : 0.5;
            writeMsprobeRank(
                root + "/step0/rank" + std::to_string(rank), "L1",
                entry("Functional.linear.0.forward", x + ", " + item(early, -0.5, 0, 2),
                      item(4 * early, -4, 0, 9)) +
                    ", " +
                    entry("Functional.linear.1.forward", x + ", " + item(late, -0.5, 0, 3),
                          item(5 * late, -4, 0, 9)));
        }
        return root;
    };
    const DumpIndex reference = indexOf(write("a", false)), candidate = indexOf(write("b", true));
    const auto result = compareDumps(reference, candidate, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    const OpComparison& first = result.ops[*result.firstBornHere];
    EXPECT_EQ(reference.process(first.referenceProcess).key, "rank1") << report;
    EXPECT_EQ(reference.op(first.referenceOp).id, "Functional.linear.0.forward") << report;
}

// A layer op's round counts its own calls: with a block called twice per step and a branch taken
// in odd steps only, round after round is not the order the ops ran in. A weight of the block
// changed from step 2 on (its round 4) was named at the branch of step 3 (round 1), whose input
// came from the block's round 7: the probe's row order file puts them back in order.
// Four steps of a model whose block runs twice a step and whose branch runs on odd steps only:
// rounds counted per op interleave. From step `changedFrom` on, one weight of the block is
// multiplied by `factor`. The ops `infAt` names output an infinity, from finite inputs, in their
// first call of the step it names.
std::string writeSharedBlockRun(const TempDir& dir, const std::string& name, int changedFrom,
                                float factor,
                                const std::vector<std::pair<std::string, int>>& infAt = {}) {
    ApiRun run(dir, name, "statistics");
    const auto w = randomValues(8, 1, 0.5f);
    for (int step = 0; step < 4; ++step) {
        auto weight = w;
        if (step >= changedFrom) weight[3] *= factor;
        std::vector<float> h = randomValues(8, 10 + step);
        std::set<std::string> called;
        const auto layer = [&](const char* op, std::vector<float> out, bool weighted = false) {
            run.begin(op);
            run.input(0, h);
            if (weighted) run.input(1, weight, {}, "weight");
            const std::pair<std::string, int> here{op, step};
            if (called.insert(op).second &&
                std::find(infAt.begin(), infAt.end(), here) != infAt.end())
                out[3] = std::numeric_limits<float>::infinity();
            run.output(0, out);
            run.end();
            h = out;
        };
        const auto shared = [&] {
            std::vector<float> out(h.size());
            for (size_t i = 0; i < h.size(); ++i) out[i] = std::tanh(h[i] * weight[i]);
            layer("shared", out, true);
        };
        shared();
        shared();
        std::vector<float> out = h;
        if (step % 2 == 1) {
            for (float& x : out) x *= 1.5f;
            layer("branch", out);
        }
        for (float& x : out) x += 1;
        layer("head", out);
    }
    return run.finish();
}

TEST(Compare, OpsOfRoundsThatInterleaveAreWalkedInTheOrderTheyRan) {
    TempDir dir;
    const auto write = [&](const char* name, int changedFrom) {
        return writeSharedBlockRun(dir, name, changedFrom, 1.05f);
    };
    const std::string a = write("a", 99), b = write("b", 2);
    const DumpIndex reference = indexOf(a), candidate = indexOf(b);
    const auto result = compareDumps(reference, candidate, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    const OpComparison& first = result.ops[*result.firstBornHere];
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "shared") << report;
    EXPECT_EQ(first.referenceRound, 4) << report;
    EXPECT_EQ(reference.slot(reference.row(result.tensors[first.cause].referenceRow).slot).index,
              "1_weight");
    ASSERT_TRUE(result.firstInherited) << report;
    EXPECT_EQ(nameOf(result, *result.firstInherited), "shared") << report;
    EXPECT_EQ(result.ops[*result.firstInherited].referenceRound, 5) << report;
    EXPECT_NE(report.find("first divergence, born here: round 4  shared (shared)"),
              std::string::npos)
        << report;
    EXPECT_TRUE(result.notes.empty()) << report;
    // The ops are listed in the order they ran: step 1 is the block's rounds 2 and 3, the
    // branch's round 0 and the head's round 1.
    std::vector<std::pair<std::string, int32_t>> ran;
    for (uint32_t o = 0; o < result.ops.size(); ++o)
        ran.emplace_back(nameOf(result, o), result.ops[o].referenceRound);
    const std::vector<std::pair<std::string, int32_t>> expected{
        {"shared", 0}, {"shared", 1}, {"head", 0},                  // step 0
        {"shared", 2}, {"shared", 3}, {"branch", 0}, {"head", 1},   // step 1
        {"shared", 4}, {"shared", 5}, {"head", 2},                  // step 2
        {"shared", 6}, {"shared", 7}, {"branch", 1}, {"head", 3}};  // step 3
    EXPECT_EQ(ran, expected);
    EXPECT_NE(report.find("    round 1  head (head): matches\n  > round 4  shared (shared): born "
                          "here\n    round 5  shared (shared): inherited\n"),
              std::string::npos)
        << report;
    // A reference without the file (dumped by another tool): the candidate's says the order.
    const std::string bare = dir / "a-bare/atb_dump_data";
    std::filesystem::create_directories(bare);
    std::filesystem::copy(a, bare, std::filesystem::copy_options::recursive);
    std::filesystem::remove_all(bare + "/" + format::kRowOrderDirectory);
    const DumpIndex bareIndex = indexOf(bare);
    const auto byCandidate = compareDumps(bareIndex, candidate, {});
    ASSERT_TRUE(byCandidate.firstBornHere);
    EXPECT_EQ(nameOf(byCandidate, *byCandidate.firstBornHere), "shared");
    EXPECT_EQ(byCandidate.ops[*byCandidate.firstBornHere].referenceRound, 4);
    ran.clear();
    for (uint32_t o = 0; o < byCandidate.ops.size(); ++o)
        ran.emplace_back(nameOf(byCandidate, o), byCandidate.ops[o].referenceRound);
    EXPECT_EQ(ran, expected);

    // A row order file cut short (by a crash): what it covers is in order, the rest comes
    // after, round by round, and the reader says so. One damaged is said to be.
    const std::string orderFile =
        a + "/" + format::kRowOrderDirectory + "/" + reference.process(0).key + ".csv";
    std::string kept = std::string(format::kRowOrderHeader) + "\n";
    uint64_t rows = 0;
    std::string error;
    for (const auto& run : format::parseRowOrder(probe::test::readFile(orderFile), &error)) {
        if (rows >= 26) break;  // steps 0 to 2: 8 + 10 + 8 rows
        const uint64_t take = std::min<uint64_t>(run.rows, 26 - rows);
        format::appendRowOrderLine(kept, {run.round, take});
        rows += take;
    }
    ASSERT_EQ(rows, 26u);
    // Copied through Windows (CR LF): read as it was.
    std::string crlf;
    for (char c : probe::test::readFile(orderFile)) crlf += c == '\n' ? "\r\n" : std::string(1, c);
    probe::test::writeFile(orderFile, crlf);
    const DumpIndex copied = indexOf(a);
    EXPECT_TRUE(copied.problems().empty()) << copied.problems()[0];
    const auto fromCopy = compareDumps(copied, candidate, {});
    EXPECT_TRUE(fromCopy.notes.empty()) << formatCompareReport(fromCopy);
    ASSERT_TRUE(fromCopy.firstBornHere);
    EXPECT_EQ(fromCopy.ops[*fromCopy.firstBornHere].referenceRound, 4);
    for (const char* tail : {"3,", "3,x\n1,2\n"}) {
        probe::test::writeFile(orderFile, kept + tail);
        const DumpIndex damaged = indexOf(a);
        const auto again = compareDumps(damaged, candidate, {});
        ASSERT_TRUE(again.firstBornHere);
        EXPECT_EQ(nameOf(again, *again.firstBornHere), "shared");
        EXPECT_EQ(again.ops[*again.firstBornHere].referenceRound, 4);
        EXPECT_TRUE(again.notes.empty()) << formatCompareReport(again);
        const auto lines = std::count(kept.begin(), kept.end(), '\n');
        ASSERT_EQ(damaged.problems().size(), 1u);
        EXPECT_EQ(damaged.problems()[0],
                  tail[2] == 'x'
                      ? orderFile + ":" + std::to_string(lines + 1) +
                            ": not \"<round>,<rows>\" with a round from 0 to 2147483647; the "
                            "rows after it are taken round by round"
                      : orderFile + ": line " + std::to_string(lines + 1) +
                            " is cut short (no line end): its runs place 26 of the process's 36 "
                            "rows; the rest are taken round by round, after them");
        ASSERT_EQ(again.problems.size(), 1u) << formatCompareReport(again);
        EXPECT_EQ(again.problems[0], "the reference: " + damaged.problems()[0]);
    }
}

// The row order file's runs, as the reader keeps them: zero-row runs dropped, runs of one round
// in a row merged.
std::vector<std::pair<int64_t, uint64_t>> keptRuns(const std::vector<format::RowOrderRun>& runs) {
    std::vector<std::pair<int64_t, uint64_t>> kept;
    for (const auto& run : runs) {
        if (run.rows == 0) continue;
        if (!kept.empty() && kept.back().first == run.round)
            kept.back().second += run.rows;
        else
            kept.emplace_back(run.round, run.rows);
    }
    return kept;
}

// Marks the process that wrote the rows (this one) as ended without writing every row (killed:
// the probe writes a batch's runs before its rows), or as running still.
void setMyDumpState(const std::string& root, format::DumpState state, bool cutOff) {
    std::string error;
    const auto status = format::readStatusFile(root, &error);
    ASSERT_TRUE(status) << error;
    for (auto p : status->processes) {
        if (p.pid != ::getpid()) continue;
        p.state = state;
        p.cutOff = cutOff;
        ASSERT_EQ(format::updateStatusFile(root, p), 0);
        return;
    }
    FAIL() << "no status of this process";
}

// Runs are kept whole, also those placing rows not read yet: the probe writes a batch's runs
// before its rows, and a dump read while it is copied gets its rows later. Once the process has
// ended, rows placed that the dump does not have are said when it wrote every row (a round
// removed, the file of another run), not when it did not (killed). Runs beyond one per row (and
// room for a batch) wait for more rows, or once none will come, stop the reading. A process
// that writes again (its probe started again) is read on.
TEST(RowOrderFile, RunsAreKeptWholeBoundedByTheRowsAndWhatDoesNotFitIsSaidOnce) {
    TempDir dir;
    const std::string path = dir / "0_1.csv";
    const std::string header = std::string(format::kRowOrderHeader) + "\n";
    probe::test::writeFile(path, header + "0,3\n1,0\n1,1\n0,2\n");
    RowOrderReader reader(path);
    std::map<int64_t, uint64_t> lines{{0, 2}};
    RowOrderReader::Rows rows;
    rows.ofRound = &lines;
    rows.lines = rows.rows = 2;
    std::vector<format::RowOrderRun> runs;
    std::vector<std::string> problems;
    reader.poll(rows, runs, problems);  // round 0 has 2 rows read of the 5 placed: kept whole
    using Runs = std::vector<std::pair<int64_t, uint64_t>>;
    EXPECT_EQ(keptRuns(runs), (Runs{{0, 3}, {1, 1}, {0, 2}}));
    lines = {{0, 5}, {1, 1}};
    rows.lines = rows.rows = 6;
    rows.final = rows.allThere = true;
    runs.clear();
    reader.poll(rows, runs, problems);
    EXPECT_TRUE(runs.empty());
    EXPECT_TRUE(problems.empty()) << problems[0];

    // The process wrote again: runs of 7 rows of round 1 and one of round 0 it does not have.
    probe::test::writeFile(path, header + "0,3\n1,0\n1,1\n0,2\n1,2\n1,5\n0,1\n");
    rows.final = rows.allThere = false;
    reader.poll(rows, runs, problems);
    EXPECT_EQ(keptRuns(runs), (Runs{{1, 7}, {0, 1}}));
    EXPECT_TRUE(problems.empty()) << problems[0];
    rows.final = true;  // killed: runs of rows that never arrived
    reader.poll(rows, runs, problems);
    EXPECT_TRUE(problems.empty()) << problems[0];
    rows.allThere = true;  // wrote them all: said, once
    for (int poll = 0; poll < 2; ++poll) reader.poll(rows, runs, problems);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0], path +
                               ": its runs place 8 rows the dump does not have (round 0 (5 of 6), "
                               "1 (1 of 8)): a round removed, a copy not finished, or the file of "
                               "another run; the order of the rest may be off");
    EXPECT_FALSE(reader.done());

    // A file of more runs than rows: a batch's worth ahead of the rows, then waiting.
    std::string many = header;
    for (int i = 0; i < 70000; ++i) format::appendRowOrderLine(many, {i % 2, 1});
    probe::test::writeFile(path, many);
    RowOrderReader ahead(path);
    rows.final = rows.allThere = false;
    runs.clear();
    problems.clear();
    ahead.poll(rows, runs, problems);
    EXPECT_EQ(runs.size(), 6u + (1u << 16));
    EXPECT_TRUE(problems.empty()) << problems[0];
    rows.final = true;
    runs.clear();
    ahead.poll(rows, runs, problems);
    EXPECT_TRUE(runs.empty());
    EXPECT_TRUE(ahead.done());
    ASSERT_FALSE(problems.empty());
    EXPECT_EQ(problems[0], path + ":" + std::to_string(2 + 6 + (1 << 16)) +
                               ": more runs than the process has rows (6): the file of another "
                               "run?; the rows after it are taken round by round");
}

// Whatever the file holds, the reader keeps no more runs than the rows it places, and a file
// that places none of them, or not all, is said to (the reviewer's 200 MB file took 2.3 GB).
TEST(RowOrderFile, TheReaderKeepsRunsInProportionToTheRowsAndSaysWhatDoesNotFit) {
    TempDir dir;
    const std::string a = writeSharedBlockRun(dir, "a", 99, 1.05f);
    const std::string b = writeSharedBlockRun(dir, "b", 2, 1.05f);
    const DumpIndex candidate = indexOf(b);
    const std::string orderFile =
        a + "/" + format::kRowOrderDirectory + "/" + indexOf(a).process(0).key + ".csv";
    const std::string original = probe::test::readFile(orderFile);
    std::string error;
    const auto runs = keptRuns(format::parseRowOrder(original, &error));
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_GT(runs.size(), 5u);
    const auto keptOf = [](const DumpIndex& index) {
        std::vector<std::pair<int64_t, uint64_t>> kept;
        for (const auto& run : index.process(0).rowOrder) kept.emplace_back(run.round, run.rows);
        return kept;
    };
    const auto firstDivergence = [&](const DumpIndex& reference) {
        const auto result = compareDumps(reference, candidate, {});
        if (!result.firstBornHere) return std::string("none");
        const OpComparison& first = result.ops[*result.firstBornHere];
        return nameOf(result, *result.firstBornHere) + " " + std::to_string(first.referenceRound);
    };
    EXPECT_EQ(firstDivergence(indexOf(a)), "shared 4");

    // Every run cut into runs of one row, with zero-row runs between: kept as the runs they
    // make up. Lines with CR alone as their end (old Mac OS) read as well.
    std::string split = std::string(format::kRowOrderHeader) + "\n";
    for (const auto& [round, rows] : runs)
        for (uint64_t r = 0; r < rows; ++r) {
            format::appendRowOrderLine(split, {round, 1});
            format::appendRowOrderLine(split, {round + 1, 0});
        }
    std::string crOnly = split;
    std::replace(crOnly.begin(), crOnly.end(), '\n', '\r');
    for (const std::string& text : {split, crOnly}) {
        probe::test::writeFile(orderFile, text);
        const DumpIndex index = indexOf(a);
        EXPECT_TRUE(index.problems().empty()) << index.problems()[0];
        EXPECT_EQ(keptOf(index), runs);
        EXPECT_EQ(firstDivergence(index), "shared 4");
    }

    // Runs after the last row: of rows that never arrived when the process was killed (nothing
    // said), else of rows the dump does not have (said). The order of the rows there are stays.
    probe::test::writeFile(orderFile, original + "0,5\n99,1\n");
    {
        const DumpIndex complete = indexOf(a);
        ASSERT_EQ(complete.problems().size(), 1u);
        EXPECT_EQ(complete.problems()[0],
                  orderFile +
                      ": its runs place 6 rows the dump does not have (round 0 (7 of 12), 99 (0 "
                      "of 1)): a round removed, a copy not finished, or the file of another run; "
                      "the order of the rest may be off");
        EXPECT_EQ(firstDivergence(complete), "shared 4");
    }
    setMyDumpState(a, format::DumpState::Incomplete, true);
    {
        const DumpIndex killed = indexOf(a);
        EXPECT_TRUE(killed.problems().empty()) << killed.problems()[0];
        EXPECT_EQ(firstDivergence(killed), "shared 4");
    }
    // While the process runs, nothing is said.
    setMyDumpState(a, format::DumpState::Running, false);
    {
        const DumpIndex running = indexPolledRepeatedly(a);
        EXPECT_TRUE(running.problems().empty()) << running.problems()[0];
        EXPECT_EQ(firstDivergence(running), "shared 4");
    }
    setMyDumpState(a, format::DumpState::Complete, false);
    // Runs by the hundred thousand, of rows that are not there: a batch's worth is kept.
    std::string tail;
    for (int i = 0; i < 100000; ++i) format::appendRowOrderLine(tail, {i % 2 ? 99 : 0, 1});
    probe::test::writeFile(orderFile, original + tail);
    {
        const DumpIndex complete = indexOf(a);
        ASSERT_EQ(complete.problems().size(), 1u);
        EXPECT_NE(complete.problems()[0].find(
                      ": more runs than the process has rows (36): the file of another run?"),
                  std::string::npos)
            << complete.problems()[0];
        EXPECT_LE(complete.process(0).rowOrder.size(), 36u + (1u << 16));
        EXPECT_EQ(firstDivergence(complete), "shared 4");
    }

    // Files that place none of the rows.
    const std::string placeNone =
        ": its runs place 0 of the process's 36 rows; the rest are "
        "taken round by round, after them";
    const std::vector<std::pair<std::string, std::string>> cases{
        {"", orderFile + ": empty (not even its header)" + placeNone},
        {format::kRowOrderHeader, orderFile + ": line 1 is cut short (no line end)" + placeNone},
        {std::string(format::kRowOrderHeader) + "\n", orderFile + ": the header alone" + placeNone},
        // Its lines end in CR alone: nothing after the CR says so, but the file is final.
        {std::string(format::kRowOrderHeader) + "\r", orderFile + ": the header alone" + placeNone},
    };
    for (const auto& [text, problem] : cases) {
        probe::test::writeFile(orderFile, text);
        const DumpIndex index = indexOf(a);
        ASSERT_EQ(index.problems().size(), 1u) << text;
        EXPECT_EQ(index.problems()[0], problem);
        EXPECT_TRUE(index.process(0).rowOrder.empty());
    }
    ASSERT_EQ(::unlink(orderFile.c_str()), 0);
    ASSERT_EQ(::symlink((dir / "gone.csv").c_str(), orderFile.c_str()), 0);
    const DumpIndex dangling = indexOf(a);
    ASSERT_EQ(dangling.problems().size(), 1u);
    EXPECT_EQ(dangling.problems()[0], orderFile +
                                          ": a symbolic link to a file that does not exist; the "
                                          "process's rows are taken round by round");
    // No file at all (a dump of another tool): nothing to say.
    ASSERT_EQ(::unlink(orderFile.c_str()), 0);
    EXPECT_TRUE(indexOf(a).problems().empty());
}

// Where rounds interleave, the first infinity and the first overflow birth are the ones that ran
// first: step 2's block call (round 4), not step 3's branch call (round 1).
TEST(Summary, TheFirstInfinityAndBirthAreTheOnesThatRanFirstWhenRoundsInterleave) {
    TempDir dir;
    const DumpIndex index =
        indexOf(writeSharedBlockRun(dir, "run", 99, 1, {{"shared", 2}, {"branch", 3}}));
    const auto summary = summarizeDump(index);
    ASSERT_TRUE(summary.firstInf);
    EXPECT_EQ(summary.firstInf->round, 4);
    EXPECT_EQ(summary.firstInf->op.rfind("shared", 0), 0u) << summary.firstInf->op;
    EXPECT_EQ(summary.firstInf->tensor, "output 0");
    EXPECT_FALSE(summary.firstNan);

    const auto births = findOverflowBirths(index, {});
    ASSERT_EQ(births.births.size(), 1u);
    EXPECT_EQ(index.op(births.births[0].op).namePath, "shared");
    EXPECT_EQ(births.births[0].round, 4);
    OverflowOptions all;
    all.allBirths = true;
    std::vector<std::pair<std::string, int32_t>> every;
    for (const auto& birth : findOverflowBirths(index, all).births)
        every.emplace_back(index.op(birth.op).namePath, birth.round);
    const std::vector<std::pair<std::string, int32_t>> expected{{"shared", 4}, {"branch", 1}};
    EXPECT_EQ(every, expected);
}

// A module's backward entry (Module.fc.Linear.backward.0, msprobe L0 and mix) after its forward
// diverged inherits it too (a training run at L0 still listed 46 births).
TEST(Compare, ModuleBackwardEntriesInheritTheirForward) {
    TempDir dir;
    auto write = [&](const char* name, double weight) {
        const std::string root = dir / name;
        writeMsprobeRank(
            root + "/step0/rank0", "L0",
            entry("Module.fc.Linear.forward.0", item(1, -1, 0, 2), item(2 * weight, -1, 0, 4),
                  R"("weight": )" + item(weight, -0.5, 0, 2)) +
                ", " +
                entry("Module.fc.Linear.backward.0", item(0.5 * weight, 0, 0, 1),
                      item(weight, 0, 0, 3)),
            R"({"Module.fc.Linear.forward.0": null, )"
            R"("Module.fc.Linear.backward.0": null})");
        return root;
    };
    const DumpIndex a = indexOf(write("a", 0.5)), b = indexOf(write("b", 0.75));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    EXPECT_EQ(result.bornHereOps, 1u) << report;
    const auto& backward = result.ops[opNamed(result, "Module.fc.Linear.backward.0")];
    EXPECT_EQ(backward.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(entryOf(a, result, backward.inheritedFrom), "Module.fc.Linear.forward.0");
}

// A wrong backward alone (a custom autograd Function): born in the backward entry where it
// shows, and the backward entries after it inherit it (two more were born).
TEST(Compare, BackwardEntriesAfterABackwardOnlyDivergenceInheritIt) {
    TempDir dir;
    auto write = [&](const char* name, double scale) {
        const std::string x = item(1, -1, 0, 2), w = item(0.5, -0.5, 0, 2), y = item(1, -1, 0, 4);
        return writeStep(
            dir, name,
            {{"Functional.linear.0.forward", {x + ", " + w, y}},
             {"Functional.linear.1.forward", {y + ", " + w, y}},
             {"Functional.linear.1.backward", {item(0.5, 0, 0, 1), item(0.5 * scale, 0, 0, 2)}},
             {"Functional.linear.0.backward",
              {item(0.25 * scale, 0, 0, 3), item(0.125 * scale, 0, 0, 4)}}});
    };
    const DumpIndex a = indexOf(write("a", 1)), b = indexOf(write("b", 1.5));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(entryOf(a, result, *result.firstBornHere), "Functional.linear.1.backward") << report;
    const auto& later = result.ops[opNamed(result, "Functional.linear.0.backward")];
    EXPECT_EQ(later.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(entryOf(a, result, later.inheritedFrom), "Functional.linear.1.backward");
    EXPECT_EQ(result.bornHereOps, 1u) << report;
}

// A module's backward entry whose input (a gradient) differs, with an API's backward inside it
// (mix): the entry is born at its input; the child, closing first, inherits from it. The entry
// was said to inherit from its child, which inherited from the entry (a cycle, no birth).
TEST(Compare, ABackwardEntryBornAtItsInputIsNotInheritedFromItsChild) {
    TempDir dir;
    auto write = [&](const char* name, double scale) {
        const std::string root = dir / name;
        const std::string x = item(1, -1, 0, 2), g = item(0.5 * scale, 0, 0, 1),
                          gx = item(0.25 * scale, 0, 0, 3);
        writeMsprobeRank(
            root + "/step0/rank0", "mix",
            entry("Module.fc.Linear.forward.0", x, x) + ", " +
                entry("Module.fc.Linear.backward.0", g, gx) + ", " +
                entry("Functional.linear.0.backward", g, gx),
            R"({"Module.fc.Linear.forward.0": null, "Module.fc.Linear.backward.0": null, )"
            R"("Functional.linear.0.backward": "Module.fc.Linear.backward.0"})");
        return root;
    };
    const DumpIndex a = indexOf(write("a", 1)), b = indexOf(write("b", 1.5));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(entryOf(a, result, *result.firstBornHere), "Module.fc.Linear.backward.0") << report;
    const auto& child = comparisonOfEntry(a, result, "Functional.linear.0.backward");
    EXPECT_EQ(child.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(entryOf(a, result, child.inheritedFrom), "Module.fc.Linear.backward.0");
}

// An API call that msprobe gives no parent, run inside a module's backward (a custom autograd
// Function's backward multiplies the gradient; mix): it is where the divergence is born, the
// backward entry after it inherits it, and the module's backward entry it ran in surfaces it.
// The walk followed construct.json's tree, which put the multiply after the whole backward
// pass, and named the linear's backward, "changed by an op that was not dumped".
TEST(Compare, AnEntryWithoutParentComesWhereItRan) {
    TempDir dir;
    auto write = [&](const char* name, double scale) {
        const std::string root = dir / name;
        const std::string in = item(0.75, 0, 0, 2), g = item(0.5, 0, 0, 1),
                          scaled = item(0.5 * scale, 0, 0, scale),
                          gx = item(0.25 * scale, 0, 0, 3 * scale);
        writeMsprobeRank(root + "/step0/rank0", "mix",
                         entry("Functional.relu.0.backward", in, g) + ", " +
                             entry("Tensor.__mul__.0.forward", g, scaled) + ", " +
                             entry("Functional.linear.0.backward", scaled, gx) + ", " +
                             entry("Module.blk.Block.backward.0", in, gx),
                         R"({"Functional.relu.0.backward": "Module.blk.Block.backward.0", )"
                         R"("Tensor.__mul__.0.forward": null, )"
                         R"("Functional.linear.0.backward": "Module.blk.Block.backward.0", )"
                         R"("Module.blk.Block.backward.0": null})");
        return root;
    };
    const DumpIndex a = indexOf(write("a", 1)), b = indexOf(write("b", 1.5));
    const auto result = compareDumps(a, b, {});
    const std::string report = formatCompareReport(result);
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(entryOf(a, result, *result.firstBornHere), "Tensor.__mul__.0.forward") << report;
    const auto& linear = comparisonOfEntry(a, result, "Functional.linear.0.backward");
    EXPECT_EQ(linear.verdict, OpVerdict::Inherited) << report;
    EXPECT_EQ(entryOf(a, result, linear.inheritedFrom), "Tensor.__mul__.0.forward");
    EXPECT_EQ(result.bornHereOps, 1u) << report;
    EXPECT_EQ(report.find("not dumped"), std::string::npos) << report;
    const auto enclosing = result.bornHereAncestors(*result.firstBornHere);
    ASSERT_EQ(enclosing.size(), 1u) << report;
    EXPECT_EQ(a.op(result.ops[enclosing[0]].referenceOp).id, "Module.blk.Block.backward.0");
}

// An op-level dump against an msprobe one: the layouts are named (it said "different models,
// layouts, rounds or ranks?").
TEST(Compare, DumpsOfDifferentLayoutsAreSaidToBe) {
    TempDir dir;
    ApiRun run(dir, "a");
    run.op("conv", {{1, 2}}, {{3, 4}});
    const DumpIndex a = indexOf(run.finish());
    const DumpIndex msprobe = indexOf(writeStep(
        dir, "msprobe", {{"Functional.conv2d.0.forward", {item(1, 2, 3, 4), item(3, 4, 3, 4)}}}));
    const auto layouts = compareDumps(a, msprobe, {});
    EXPECT_TRUE(layouts.nothingCompared());
    ASSERT_EQ(layouts.problems.size(), 1u) << formatCompareReport(layouts);
    EXPECT_EQ(layouts.problems[0].rfind("the reference is an op-level dump (atb_dump_data, probe "
                                        "run), the candidate an msprobe dump",
                                        0),
              0u)
        << layouts.problems[0];
}

// A dump without rows against one with: the empty one is named, not "different models".
TEST(Compare, AnEmptyDumpIsSaidToHoldNoRows) {
    TempDir dir;
    ApiRun run(dir, "a");
    run.op("conv", {{1, 2}}, {{3, 4}});
    const DumpIndex full = indexOf(run.finish());
    std::filesystem::create_directories(dir / "empty/atb_dump_data");
    const DumpIndex empty = indexOf(dir / "empty");
    for (const bool emptyFirst : {true, false}) {
        const auto result =
            emptyFirst ? compareDumps(empty, full, {}) : compareDumps(full, empty, {});
        const std::string report = formatCompareReport(result);
        EXPECT_NE(report.find(std::string("with one of the candidate: the ") +
                              (emptyFirst ? "reference" : "candidate") +
                              " holds no rows (nothing was dumped there, or not yet)"),
                  std::string::npos)
            << report;
        EXPECT_EQ(report.find("different models"), std::string::npos) << report;
    }
}

// Runs dumped on different sets of ranks (a config's "rank": [1], a rank that crashed): ranks
// are paired by name, and a rank in one run only is ops of one run only. They were paired in
// order: rank0 against rank1, "75 tensors diverge"; and a missing rank gave "no tensor
// diverges", exit 0.
TEST(Compare, RunsOnDifferentRanksArePairedByRank) {
    TempDir dir;
    const std::string both = writeRanks(dir, 0.5);
    std::filesystem::copy(both, dir / "only1", std::filesystem::copy_options::recursive);
    std::filesystem::remove_all(dir / "only1/step0/rank0");
    const DumpIndex all = indexOf(both), only1 = indexOf(dir / "only1");
    ASSERT_EQ(only1.processCount(), 1u);
    for (const bool reversed : {false, true}) {
        const DumpIndex& reference = reversed ? only1 : all;
        const DumpIndex& candidate = reversed ? all : only1;
        const auto result = compareDumps(reference, candidate, {});
        const std::string report = formatCompareReport(result);
        EXPECT_FALSE(result.diverges()) << report;
        EXPECT_EQ(result.processPairs,
                  (std::vector<std::pair<uint32_t, uint32_t>>{
                      {reference.findProcess("rank1"), candidate.findProcess("rank1")}}))
            << report;
        EXPECT_FALSE(result.pairsEverything()) << report;  // probe compare exits 1
        EXPECT_EQ(result.unpairedOps, 2u) << report;       // rank0's linear and module
        ASSERT_FALSE(result.unpaired.empty());
        for (const auto& u : result.unpaired) {
            EXPECT_EQ(u.inReference, !reversed);
            EXPECT_EQ((reversed ? candidate : reference).process(u.process).key, "rank0");
        }
        EXPECT_TRUE(result.problems.empty()) << report;  // nothing went unread
        ASSERT_EQ(result.notes.size(), 1u) << report;
        EXPECT_EQ(result.notes[0], std::string(reversed ? "the candidate" : "the reference") +
                                       " has rank 0 (rank0) and the other run has none: its ops "
                                       "are ops of one run only");
        EXPECT_NE(report.find("no tensor diverges, but the runs did not run the same ops"),
                  std::string::npos)
            << report;
    }
    // No rank in common (rank 0 in one run, rank 1 in the other): nothing pairs up, said; it
    // compared rank 0 with rank 1, unsaid.
    std::filesystem::copy(both, dir / "only0", std::filesystem::copy_options::recursive);
    std::filesystem::remove_all(dir / "only0/step0/rank1");
    const DumpIndex only0 = indexOf(dir / "only0");
    const auto disjoint = compareDumps(only0, only1, {});
    EXPECT_TRUE(disjoint.nothingCompared()) << formatCompareReport(disjoint);
    ASSERT_EQ(disjoint.notes.size(), 3u) << formatCompareReport(disjoint);
    EXPECT_EQ(disjoint.notes[2],
              "the runs have no rank in common (the reference: rank0; the "
              "candidate: rank1): to compare one rank with another, name both "
              "(--rank R --against-rank S)");
}

// Op-level dumps name no parameters: as replicas, inputs named weight or bias are judged.
TEST(Compare, OpLevelReplicasAreJudgedOnInputsNamedWeight) {
    TempDir dir;
    auto write = [&](const char* name, float input, float weight) {
        ApiRun run(dir, name);
        run.begin("linear");
        run.input(0, {input, 2 * input}, {}, "input");
        run.input(1, {weight, 0.5f}, {}, "weight");
        run.output(0, {input * weight, input});
        run.end();
        return run.finish();
    };
    const DumpIndex rank0 = indexOf(write("r0", 1, 0.25f)), rank1 = indexOf(write("r1", 3, 0.25f)),
                    skewed = indexOf(write("skewed", 3, 0.5f));
    CompareOptions replicas;
    replicas.replicas = true;
    EXPECT_TRUE(compareDumps(rank0, rank1, {}).diverges());  // their data differ
    EXPECT_FALSE(compareDumps(rank0, rank1, replicas).diverges());
    const auto result = compareDumps(rank0, skewed, replicas);
    ASSERT_TRUE(result.firstBornHere) << formatCompareReport(result);
    const auto& cause = result.tensors[result.ops[*result.firstBornHere].cause];
    EXPECT_EQ(rank0.slot(rank0.row(cause.referenceRow).slot).index, "1_weight");
    EXPECT_EQ(result.divergingTensors, 1u);
}

// ---- reports ---------------------------------------------------------------------------------

// The text of every cell of row `row` (1-based) of a worksheet written by writeCompareXlsx.
std::vector<std::string> xlsxRow(const std::string& path, const std::string& sheet, int row) {
    int code = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &code);
    EXPECT_TRUE(z) << path;
    if (!z) return {};
    zip_stat_t st;
    zip_stat_init(&st);
    std::string xml;
    if (zip_stat(z, ("xl/worksheets/" + sheet).c_str(), 0, &st) == 0) {
        xml.resize(st.size);
        zip_file_t* f = zip_fopen(z, ("xl/worksheets/" + sheet).c_str(), 0);
        zip_fread(f, xml.data(), xml.size());
        zip_fclose(f);
    }
    zip_discard(z);
    const std::string open = "<row r=\"" + std::to_string(row) + "\"";
    const size_t from = xml.find(open), to = xml.find("</row>", from);
    std::vector<std::string> cells;
    if (from == std::string::npos) return cells;
    const std::string part = xml.substr(from, to - from);
    for (size_t at = part.find("<c "); at != std::string::npos; at = part.find("<c ", at + 1)) {
        const size_t end = part.find("</c>", at);
        const std::string cell = part.substr(at, end - at);
        const size_t t = cell.find("<t"), v = cell.find("<v>");
        if (t != std::string::npos) {
            const size_t start = cell.find('>', t) + 1;
            cells.push_back(cell.substr(start, cell.find("</t>", start) - start));
        } else if (v != std::string::npos) {
            cells.push_back(cell.substr(v + 3, cell.find("</v>", v) - v - 3));
        } else {
            cells.push_back("");
        }
    }
    return cells;
}

TEST(Compare, ReportsForScripts) {
    TempDir dir;
    const size_t element = 3 * 8 + 5;
    const DumpIndex a = indexOf(writeBlock(dir, "a", 1, element)),
                    b = indexOf(writeBlock(dir, "b", 1.05f, element));
    const auto result = compareDumps(a, b, {});
    // JSON
    const auto json = nlohmann::json::parse(compareResultJson(result));
    EXPECT_EQ(json["summary"]["tensors"], result.tensors.size());
    EXPECT_EQ(json["summary"]["bornHereOps"], 1);
    EXPECT_EQ(json["firstBornHere"]["name"], "block/linear");
    EXPECT_EQ(json["firstBornHere"]["verdict"], "born here");
    EXPECT_EQ(json["firstBornHere"]["tensor"]["rule"], "elements");
    EXPECT_EQ(json["firstBornHere"]["tensor"]["data"]["worstElement"], "[3, 5]");
    EXPECT_EQ(json["firstBornHere"]["enclosingOpsBornHereToo"].size(), 1u);
    EXPECT_EQ(json["firstInherited"]["name"], "block/relu");
    EXPECT_EQ(json["ops"].size(), result.ops.size());
    // CSV: a header and a line per tensor.
    const auto lines = probe::test::splitLines(compareResultCsv(result));
    EXPECT_EQ(lines.size(), result.tensors.size() + 1);
    // XLSX in msprobe's layout: the tensor columns, NPU = candidate, Bench = reference.
    const std::string xlsx = dir / "out.xlsx";
    std::string error;
    ASSERT_TRUE(writeCompareXlsx(result, xlsx, &error)) << error;
    EXPECT_EQ(xlsxRow(xlsx, "sheet1.xml", 1), msprobeCompareHeader(true));
    const auto header = msprobeCompareHeader(true);
    const std::vector<std::string> expectedStart = {"NPU Name",
                                                    "Bench Name",
                                                    "NPU Dtype",
                                                    "Bench Dtype",
                                                    "NPU Tensor Shape",
                                                    "Bench Tensor Shape",
                                                    "NPU Requires_grad",
                                                    "Bench Requires_grad",
                                                    "Cosine",
                                                    "EucDist",
                                                    "MaxAbsErr",
                                                    "MaxRelativeErr",
                                                    "One Thousandth Err Ratio",
                                                    "Five Thousandths Err Ratio",
                                                    "NPU max"};
    EXPECT_TRUE(std::equal(expectedStart.begin(), expectedStart.end(), header.begin()));
    EXPECT_EQ(header.back(), "Err_message");
    EXPECT_EQ(header.size(), 25u);
    const uint32_t cause = result.ops[*result.firstBornHere].cause;
    const auto row = xlsxRow(xlsx, "sheet1.xml", static_cast<int>(cause) + 2);
    ASSERT_EQ(row.size(), header.size());
    EXPECT_EQ(row[0], "block/linear.0.input.1");
    EXPECT_EQ(row[2], "float");
    EXPECT_EQ(row[4], "[8, 8]");
    EXPECT_DOUBLE_EQ(std::stod(row[11]), result.data(cause).maxRelativeError);
    EXPECT_EQ(row[23], "error");
    EXPECT_EQ(xlsxRow(xlsx, "sheet2.xml", 1).at(4), "Verdict");
    // Statistics only: msprobe's statistics columns.
    CompareOptions statsOnly;
    statsOnly.useTensorData = false;
    const auto summary = compareDumps(a, b, statsOnly);
    ASSERT_TRUE(writeCompareXlsx(summary, xlsx, &error)) << error;
    EXPECT_EQ(xlsxRow(xlsx, "sheet1.xml", 1), msprobeCompareHeader(false));
    EXPECT_EQ(msprobeCompareHeader(false)[8], "Max diff");
    EXPECT_EQ(msprobeCompareHeader(false)[15], "NormRelativeErr");
    EXPECT_FALSE(writeCompareXlsx(summary, dir / "no/such/dir/out.xlsx", &error));
    EXPECT_NE(error.find("cannot"), std::string::npos) << error;
}

// A dump of statistics against one of task "tensor" (its statistics N/A): the tensor run's data
// gives the statistics it left out, printed as an op-level dump prints them, and the tensors are
// judged by statistics (999 against 2 diverges; the same values match, to the bit). Without
// the data (--no-data), nothing is left to judge them by, which is said, never "no tensor
// diverges": they were counted as compared by statistics and matching, whatever the values.
TEST(Compare, ATensorRunIsJudgedAgainstStatisticsByItsDatasStatistics) {
    TempDir dir;
    auto write = [&](const char* name, const char* task, float x) {
        ApiRun run(dir, name, task);
        run.op("relu", {{-1, x / 3}}, {{-1, x / 3}});
        return run.finish();
    };
    const DumpIndex statistics = indexOf(write("s", "statistics", 2)),
                    same = indexOf(write("t", "tensor", 2)),
                    other = indexOf(write("t2", "tensor", 999));
    // As the app reads them, with statistics from their files: judged the same (the app said
    // "nothing to compare": the statistics it computed hid the run's lack of its own).
    const DumpIndex sameInApp = indexAsTheAppReadsIt(same.root()),
                    otherInApp = indexAsTheAppReadsIt(other.root());
    CompareOptions exact;
    exact.exact = true;
    for (const DumpIndex* tensors : {&same, &other, &sameInApp, &otherInApp}) {
        const bool inApp = tensors == &sameInApp || tensors == &otherInApp;
        ASSERT_EQ(tensors->rowCount(), 2u);
        for (uint32_t row = 0; row < tensors->rowCount(); ++row) {
            EXPECT_EQ(tensors->row(row).present, inApp ? 0xf : 0)
                << "task tensor writes no statistics";
            EXPECT_EQ(tensors->row(row).statsFromData, inApp);
        }
        const bool isSame = tensors == &same || tensors == &sameInApp;
        const auto result = compareDumps(statistics, *tensors, isSame ? exact : CompareOptions{});
        ASSERT_EQ(result.tensors.size(), 2u);
        EXPECT_EQ(result.tensorsUnmeasured, 0u);
        EXPECT_EQ(result.tensorsWithData, 0u);  // by statistics: one run kept no data
        EXPECT_EQ(result.diverges(), !isSame);
        for (uint32_t t = 0; t < 2; ++t) {
            EXPECT_EQ(result.candidateStats(t).present, 0xf) << t;
            EXPECT_EQ(result.candidateStats(t).value[0],
                      format::parseStatValue(
                          format::formatStatValue(double((isSame ? 2 : 999) / 3.0f)), nullptr)
                          .value())
                << t;
        }
    }

    CompareOptions noData;
    noData.useTensorData = false;
    const auto result = compareDumps(statistics, same, noData);
    ASSERT_EQ(result.tensors.size(), 2u);
    EXPECT_EQ(result.tensorsUnmeasured, 2u);
    EXPECT_TRUE(result.nothingCompared());
    EXPECT_FALSE(result.diverges());
    const std::string report = formatCompareReport(result);
    EXPECT_EQ(report.rfind("nothing to compare: the 2 tensors that pair up have no statistic in "
                           "both runs and no data in both",
                           0),
              0u)
        << report;
    EXPECT_EQ(report.find("no tensor diverges"), std::string::npos) << report;
    // Nor is an op of them said to match (the app's tree was green all over).
    ASSERT_FALSE(result.ops.empty());
    for (const auto& op : result.ops) {
        EXPECT_FALSE(op.judged);
        EXPECT_STREQ(verdictName(op), "not judged");
    }
}

TEST(Compare, StatisticsAreTheRowsOrWhereTheDumpLeftThemOutTheDatas) {
    TempDir dir;
    const std::vector<float> in = {1.5f, -2.0f, 3.0f, 0.25f}, out = {1.5f, 0.0f, 3.0f, 0.25f};
    const std::vector<float> candidateOut = {1.5f, 0.0f, 3.5f, 0.25f};
    auto write = [&](const char* name, const char* task, const std::vector<float>& output) {
        ApiRun run(dir, name, task);
        run.op("relu", {in}, {output});
        return run.finish();
    };
    // max, min, mean, norm of the values, worked out here.
    auto expected = [](const std::vector<float>& v) {
        double max = v[0], min = v[0], sum = 0, squares = 0;
        for (float x : v) {
            max = std::max<double>(max, x);
            min = std::min<double>(min, x);
            sum += x;
            squares += double(x) * x;
        }
        return std::vector<double>{max, min, sum / double(v.size()), std::sqrt(squares)};
    };
    auto check = [&](const StatValues& stats, const std::vector<float>& v) {
        ASSERT_EQ(stats.present, 0xf);
        const auto want = expected(v);
        for (int k = 0; k < 4; ++k)
            EXPECT_NEAR(stats.value[k], want[k], 1e-6 * std::max(1.0, std::fabs(want[k]))) << k;
    };
    const DumpIndex tensorA = indexOf(write("ta", "tensor", out)),
                    tensorB = indexOf(write("tb", "tensor", candidateOut));
    const DumpIndex allA = indexOf(write("aa", "all", out)),
                    allB = indexOf(write("ab", "all", candidateOut));
    for (uint32_t row = 0; row < tensorA.rowCount(); ++row)
        ASSERT_EQ(tensorA.row(row).present, 0) << "task tensor writes no statistics";
    // From the data: the rows have none.
    const auto fromData = compareDumps(tensorA, tensorB, CompareOptions{});
    ASSERT_EQ(fromData.tensors.size(), 2u);
    for (uint32_t t = 0; t < 2; ++t) {
        ASSERT_TRUE(fromData.tensors[t].hasData) << t;
        const bool output = fromData.tensors[t].isOutput;
        check(fromData.referenceStats(t), output ? out : in);
        check(fromData.candidateStats(t), output ? candidateOut : in);
    }
    const auto diffs = fromData.statisticDiffs(1);
    ASSERT_TRUE(diffs.diff[0].has_value());
    EXPECT_DOUBLE_EQ(*diffs.diff[0], 0.5);  // max 3.5 vs 3
    // Statistics only: none on either side.
    CompareOptions statsOnly;
    statsOnly.useTensorData = false;
    const auto noData = compareDumps(tensorA, tensorB, statsOnly);
    ASSERT_EQ(noData.tensors.size(), 2u);
    EXPECT_EQ(noData.referenceStats(1).present, 0);
    EXPECT_EQ(noData.candidateStats(1).present, 0);
    // The rows': equal to what the dump wrote, with or without the data.
    for (const bool data : {true, false}) {
        CompareOptions options;
        options.useTensorData = data;
        const auto fromRows = compareDumps(allA, allB, options);
        ASSERT_EQ(fromRows.tensors.size(), 2u);
        for (uint32_t t = 0; t < 2; ++t) {
            const StatRecord& r = allA.row(fromRows.tensors[t].referenceRow);
            const StatRecord& c = allB.row(fromRows.tensors[t].candidateRow);
            const StatValues rs = fromRows.referenceStats(t), cs = fromRows.candidateStats(t);
            ASSERT_EQ(rs.present, r.present);
            ASSERT_EQ(cs.present, c.present);
            for (int k = 0; k < 4; ++k) {
                EXPECT_EQ(rs.value[k], r.value[k]) << t << " " << k;
                EXPECT_EQ(cs.value[k], c.value[k]) << t << " " << k;
            }
            check(rs, fromRows.tensors[t].isOutput ? out : in);
        }
    }
    EXPECT_EQ(fromData.referenceStats(99).present, 0);  // no such tensor
}

// Tensors bigger than the pieces a comparison reads at a time (8 MiB): measured as a whole, bit
// for bit, with their statistics (task tensor leaves them out) from every piece, the output of
// one op recognised as the next op's input, and a de-duplicated file followed to its data.
TEST(Compare, TensorsOfManyPiecesAreMeasuredWhole) {
    TempDir dir;
    constexpr size_t kCount = 3'000'000, kChanged = 2'500'000;  // 12 MB; the change in piece 2
    const std::vector<float> x = randomValues(kCount, 5);
    std::vector<float> y(kCount);
    for (size_t i = 0; i < kCount; ++i) y[i] = 2 * x[i];
    auto write = [&](const char* name, float change) {
        std::vector<float> out = y;
        out[kChanged] += change;
        ApiRun run(dir, name, "tensor");
        run.op("scale", {x}, {out});
        run.op("consume", {out}, {{1.0f}});
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 0)), b = indexOf(write("b", 0.5f));
    const auto result = compareDumps(a, b, {});
    ASSERT_EQ(result.tensors.size(), 4u);
    EXPECT_EQ(result.tensorsWithData, 4u);
    ASSERT_TRUE(result.firstBornHere);
    EXPECT_EQ(nameOf(result, *result.firstBornHere), "scale");
    EXPECT_EQ(result.ops[opNamed(result, "consume")].verdict, OpVerdict::Inherited);
    EXPECT_EQ(result.ops[opNamed(result, "consume")].inheritedFrom, *result.firstBornHere);
    bool outputSeen = false;
    for (uint32_t t = 0; t < result.tensors.size(); ++t) {
        const TensorComparison& tensor = result.tensors[t];
        const auto path = [](const DumpIndex& index, uint32_t row) {
            std::string error;
            return index.tensorPath(row, &error);
        };
        std::string error;
        const auto wholeA = loadTensorValues(path(a, tensor.referenceRow), true, &error);
        const auto wholeB = loadTensorValues(path(b, tensor.candidateRow), true, &error);
        ASSERT_TRUE(wholeA && wholeB) << error;
        if (wholeA->count != kCount) continue;  // consume's output
        const DataMeasures& m = result.data(t);
        const DataMeasures whole = measureData(*wholeA, *wholeB, format::DType::Float, 256);
        ASSERT_TRUE(m.cosine && whole.cosine) << t;
        EXPECT_EQ(*m.cosine, *whole.cosine) << t;
        EXPECT_EQ(*m.euclideanDistance, *whole.euclideanDistance) << t;
        EXPECT_EQ(*m.oneThousandthErrRatio, *whole.oneThousandthErrRatio) << t;
        EXPECT_EQ(m.maxRelativeError, whole.maxRelativeError) << t;
        EXPECT_EQ(m.requiredScale, whole.requiredScale) << t;
        EXPECT_EQ(m.referenceRms, whole.referenceRms) << t;
        EXPECT_EQ(m.bytesEqual, whole.bytesEqual) << t;
        // The statistics, from the data, against sums in long double here.
        const bool scaleInput = nameOf(result, tensor.op) == "scale" && !tensor.isOutput;
        const std::vector<float>& values = scaleInput ? x : y;
        long double sum = 0, squares = 0;
        for (float v : values) {
            sum += v;
            squares += static_cast<long double>(v) * v;
        }
        const StatValues stats = result.referenceStats(t);
        ASSERT_EQ(stats.present, 0xf);
        EXPECT_EQ(stats.value[0], *std::max_element(values.begin(), values.end()));
        EXPECT_EQ(stats.value[1], *std::min_element(values.begin(), values.end()));
        EXPECT_NEAR(stats.value[2], static_cast<double>(sum / kCount), 1e-12);
        EXPECT_NEAR(stats.value[3], static_cast<double>(std::sqrt(squares)), 1e-9);
        if (!tensor.isOutput || nameOf(result, tensor.op) != "scale") continue;
        outputSeen = true;
        EXPECT_TRUE(tensor.differs);
        EXPECT_EQ(m.worstElement, kChanged);
        const float changed = y[kChanged] + 0.5f;  // as the candidate holds it
        EXPECT_EQ(m.maxAbsError,
                  std::fabs(static_cast<double>(changed) - static_cast<double>(y[kChanged])));
        EXPECT_FALSE(m.bytesEqual);
    }
    EXPECT_TRUE(outputSeen);
    // Identical runs: the bytes are equal in every piece.
    const DumpIndex again = indexOf(write("again", 0));
    const auto same = compareDumps(a, again, {});
    EXPECT_FALSE(same.diverges());
    for (uint32_t t = 0; t < same.tensors.size(); ++t) EXPECT_TRUE(same.data(t).bytesEqual) << t;
}

// Pages of [start, start + bytes) that the kernel holds in memory (mincore).
size_t residentPages(const char* start, size_t bytes) {
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> resident((bytes + page - 1) / page);
    if (::mincore(const_cast<char*>(start), bytes, resident.data()) != 0) return SIZE_MAX;
    return static_cast<size_t>(
        std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }));
}

// The pairing's prefault thread faults in a buffer from its start, never more than its window
// past what the filler said it wrote, and leaves what the buffer holds as it was.
TEST(PrefaultAhead, FaultsInPagesAheadOfTheFillerOnlyAndKeepsTheContents) {
    const size_t mib = size_t{1} << 20, size = 64 * mib;
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    void* mapped =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapped, MAP_FAILED);
    char* buffer = static_cast<char*>(mapped);
    ASSERT_EQ(residentPages(buffer, size), 0u);
    // The filler has written into the first pages already.
    for (size_t i = 0; i < 3 * page; ++i) buffer[i] = static_cast<char>(i % 251 + 1);
    {
        PrefaultAhead prefault(buffer, size, 8 * mib);
        prefault.waitIdle();
        EXPECT_EQ(prefault.faulted(), 8 * mib);
        EXPECT_EQ(residentPages(buffer, 8 * mib), 8 * mib / page);
        EXPECT_EQ(residentPages(buffer + 8 * mib, size - 8 * mib), 0u);
        prefault.reached(20 * mib);
        prefault.waitIdle();
        EXPECT_EQ(prefault.faulted(), 28 * mib);
        EXPECT_EQ(residentPages(buffer, 28 * mib), 28 * mib / page);
        EXPECT_EQ(residentPages(buffer + 28 * mib, size - 28 * mib), 0u);
        prefault.reached(size - 4 * mib);  // the window reaches past the end: up to the end
        prefault.waitIdle();
        EXPECT_EQ(prefault.faulted(), size);
        EXPECT_EQ(residentPages(buffer, size), size / page);
    }
    size_t changed = 0;
    for (size_t i = 0; i < size; ++i)
        changed += buffer[i] != (i < 3 * page ? static_cast<char>(i % 251 + 1) : 0);
    EXPECT_EQ(changed, 0u);
    ::munmap(mapped, size);

    // A start inside a page: only whole pages inside the buffer, counted from its start.
    mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapped, MAP_FAILED);
    buffer = static_cast<char*>(mapped);
    {
        PrefaultAhead prefault(buffer + 100, size - 100, 8 * mib);
        prefault.waitIdle();
        EXPECT_EQ(residentPages(buffer, page), 0u);
        EXPECT_EQ(residentPages(buffer + page, 8 * mib - page), 8 * mib / page - 1);
        EXPECT_EQ(residentPages(buffer + 8 * mib, size - 8 * mib), 0u);
    }
    // Too small to be worth a thread: nothing done, nothing waited for.
    {
        PrefaultAhead prefault(buffer + 32 * mib, mib / 2, 8 * mib);
        prefault.waitIdle();
        EXPECT_EQ(prefault.faulted(), 0u);
        EXPECT_EQ(residentPages(buffer + 32 * mib, mib / 2), 0u);
    }
    ::munmap(mapped, size);
}

// A file of either dump that cannot be read is named in the result, and the verdict on the rest
// says it covers only what was read: a candidate whose statistic.csv was a FIFO compared as "no
// tensor diverges", without a word.
TEST(Compare, WhatCouldNotBeReadOfEitherDumpIsSaid) {
    TempDir dir;
    const std::string reference = writeBlock(dir, "a", 1, 9, 2);
    const std::string candidate = writeBlock(dir, "b", 1, 9, 2);
    const std::vector<std::string> files = probe::test::filesNamed(candidate, "statistic.csv");
    ASSERT_FALSE(files.empty());
    ASSERT_EQ(::unlink(files.back().c_str()), 0);
    ASSERT_EQ(::mkfifo(files.back().c_str(), 0600), 0);

    const DumpIndex a = indexOf(reference), b = indexOf(candidate);
    ASSERT_FALSE(b.problems().empty());
    const auto result = compareDumps(a, b, {});
    ASSERT_FALSE(result.nothingCompared());
    EXPECT_FALSE(result.diverges());
    ASSERT_FALSE(result.problems.empty());
    EXPECT_EQ(result.problems[0].rfind("the candidate: ", 0), 0u) << result.problems[0];
    const std::string report = formatCompareReport(result);
    EXPECT_NE(report.find("no tensor diverges of those that could be read"), std::string::npos)
        << report;
    EXPECT_NE(report.find("note: the candidate: "), std::string::npos) << report;
    EXPECT_NE(compareResultJson(result).find("the candidate: "), std::string::npos);
}

// A round's statistic.csv that is a symlink loop is a problem, as a FIFO there is: its rows
// were dropped without a word (the round was taken for one with no file).
TEST(Compare, ASymlinkLoopInPlaceOfARoundsFileIsSaid) {
    TempDir dir;
    const std::string root = writeBlock(dir, "a", 1, 9, 2);
    const std::vector<std::string> files = probe::test::filesNamed(root, "statistic.csv");
    ASSERT_EQ(files.size(), 2u);
    ASSERT_EQ(::unlink(files.back().c_str()), 0);
    ASSERT_EQ(::symlink("statistic.csv", files.back().c_str()), 0);  // itself
    const DumpIndex index = indexOf(root);
    ASSERT_EQ(index.problems().size(), 1u);
    EXPECT_NE(index.problems()[0].find(files.back()), std::string::npos) << index.problems()[0];
    EXPECT_NE(index.problems()[0].find("symbolic links"), std::string::npos) << index.problems()[0];
    EXPECT_GT(index.rowCount(), 0u);  // the other round's rows are read
}

// Token ids given to an embedding are positions, not magnitudes: they do not set the precision
// its float output is judged at. With ids in the hundreds, the output was judged at their root
// mean square (121 on the demo), and a change of values near 1 by 0.2% passed as noise.
TEST(Compare, IntegerInputsDoNotSetTheScaleOfAnOpsOutputs) {
    TempDir dir;
    const std::vector<int64_t> ids = {100, 150, 200, 250};
    std::vector<float> rows(16);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.5f + 0.01f * static_cast<float>(i);
    auto write = [&](const char* name, float nudge) {
        ApiRun run(dir, name);
        run.begin("embedding", "aten::embedding");
        run.inputInt64(0, ids);
        std::vector<float> out = rows;
        out[5] *= nudge;
        run.output(0, out);
        run.end();
        return run.finish();
    };
    const DumpIndex a = indexOf(write("a", 1.0f)), b = indexOf(write("b", 1.002f));
    const auto result = compareDumps(a, b, {});
    ASSERT_EQ(result.tensors.size(), 2u);
    const auto& out = result.tensors[1];
    ASSERT_TRUE(out.isOutput);
    ASSERT_TRUE(out.hasData);
    // Judged at its own size (its root mean square), not the ids' (about 185).
    long double squares = 0;
    for (float v : rows) squares += static_cast<long double>(v) * v;
    EXPECT_NEAR(out.scale, static_cast<double>(std::sqrt(squares / 16)), 1e-6);
    EXPECT_TRUE(out.diverges) << formatCompareReport(result);
    ASSERT_EQ(result.ops.size(), 1u);
    EXPECT_EQ(result.ops[0].verdict, OpVerdict::BornHere);
    // The ids themselves are judged exactly, and equal.
    EXPECT_FALSE(result.tensors[0].diverges);
    // Ids that differ: said as integers that must be equal (it read "beyond the int64 must be
    // equal").
    auto writeIds = [&](const char* name, int64_t last) {
        ApiRun run(dir, name);
        run.begin("embedding", "aten::embedding");
        run.inputInt64(0, {100, 150, 200, last});
        run.output(0, rows);
        run.end();
        return run.finish();
    };
    const DumpIndex c = indexOf(writeIds("c", 250)), d = indexOf(writeIds("d", 251));
    const auto moved = compareDumps(c, d, {});
    ASSERT_TRUE(moved.tensors.size() == 2u && moved.tensors[0].diverges)
        << formatCompareReport(moved);
    EXPECT_EQ(moved.explain(0),
              "element [3]: 250 vs 251, error 1 (0.4%), and int64 values must be equal");
}

// A process's or a round's folder replaced by something else (a link to /dev/zero, a link to
// itself, a plain file) is a problem, said once however often the dump is read again: the
// process's rows were dropped without a word ("rows: 0", exit 0).
TEST(Compare, WhatStandsInPlaceOfAProcessOrRoundFolderIsSaid) {
    TempDir dir;
    const std::string root = writeBlock(dir, "a", 1, 9, 2);
    const std::vector<std::string> files = probe::test::filesNamed(root, "statistic.csv");
    ASSERT_EQ(files.size(), 2u);
    const std::string roundDir = files.back().substr(0, files.back().rfind('/'));
    const std::string processDir = roundDir.substr(0, roundDir.rfind('/'));
    const std::string dataDir = processDir.substr(0, processDir.rfind('/'));
    ASSERT_EQ(std::system(("rm -r '" + roundDir + "'").c_str()), 0);
    probe::test::writeFile(roundDir, "not a round");
    ASSERT_EQ(::symlink("/dev/zero", (dataDir + "/0_4242").c_str()), 0);
    ASSERT_EQ(::symlink("1_4343", (dataDir + "/1_4343").c_str()), 0);     // itself
    ASSERT_EQ(::symlink("/dev/zero", (dataDir + "/README").c_str()), 0);  // not named as a process

    const DumpIndex index = indexPolledRepeatedly(root);
    const auto& problems = index.problems();
    ASSERT_EQ(problems.size(), 3u);
    const auto said = [&](const std::string& path, const std::string& what) {
        return std::any_of(problems.begin(), problems.end(), [&](const std::string& p) {
            return p.rfind(path + ": ", 0) == 0 && p.find(what) != std::string::npos &&
                   p.find("not a folder") != std::string::npos;
        });
    };
    EXPECT_TRUE(said(roundDir, "is a regular file"));
    EXPECT_TRUE(said(dataDir + "/0_4242", "is a character device"));
    EXPECT_TRUE(said(dataDir + "/1_4343", "symbolic link that cannot be followed"));
    EXPECT_GT(index.rowCount(), 0u);  // the first round's rows are read
}

// A round folder copied beside itself with a leading zero ("01" beside "1") was read as round 1
// again: that round's rows twice, and a row-order problem. It is no round folder, and said.
TEST(Compare, ARoundFolderWithALeadingZeroIsNoSecondCopyOfItsRound) {
    TempDir dir;
    const std::string root = writeBlock(dir, "a", 1, 9, 3);
    const DumpIndex before = indexPolledRepeatedly(root);
    ASSERT_TRUE(before.problems().empty());
    const std::vector<std::string> files = probe::test::filesNamed(root, "statistic.csv");
    ASSERT_EQ(files.size(), 3u);
    const std::string roundDir = files[1].substr(0, files[1].rfind('/'));
    const std::string processDir = roundDir.substr(0, roundDir.rfind('/'));
    const std::string round = roundDir.substr(roundDir.rfind('/') + 1);
    const std::string copy = processDir + "/0" + round;
    std::filesystem::copy(roundDir, copy, std::filesystem::copy_options::recursive);
    const DumpIndex index = indexPolledRepeatedly(root);
    EXPECT_EQ(index.rowCount(), before.rowCount());
    ASSERT_EQ(index.problems().size(), 1u);
    EXPECT_EQ(index.problems()[0], copy +
                                       ": not a round folder (its name is not a number from 0 to "
                                       "2147483647 without leading zeros); its statistic.csv is "
                                       "not read");
}

// A tensor holding +Inf and -Inf alone: its mean is NaN (their sum), its max, min and norm are
// not. It is an Inf, not the first NaN ("first NaN" named it, and the tensor had none); a tensor
// with a NaN element (all four NaN) still is one.
TEST(Compare, AMeanThatIsNaNBesideInfinitiesIsNoNaNOfTheTensor) {
    TempDir dir;
    const std::string root = writeBlock(dir, "a", 1, 9, 2);
    const std::vector<std::string> files = probe::test::filesNamed(root, "statistic.csv");
    ASSERT_EQ(files.size(), 2u);
    // The first row's Max, Min, Mean and Norm (fields 10..13; no field of these rows is quoted).
    const auto setStatistics = [](const std::string& file, const std::vector<std::string>& values) {
        std::string text = probe::test::readFile(file);
        const size_t begin = text.find('\n') + 1, end = text.find('\n', begin);
        std::vector<std::string> fields;
        std::stringstream row(text.substr(begin, end - begin));
        for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
        ASSERT_EQ(fields.size(), 15u);
        std::copy(values.begin(), values.end(), fields.begin() + 10);
        std::string joined;
        for (const std::string& field : fields) joined += (joined.empty() ? "" : ",") + field;
        text.replace(begin, end - begin, joined);
        probe::test::writeFile(file, text);
    };
    setStatistics(files[0], {"inf", "-inf", "nan", "inf"});
    const DumpSummary infinities = summarizeDump(indexOf(root));
    EXPECT_FALSE(infinities.firstNan);
    ASSERT_TRUE(infinities.firstInf);
    EXPECT_EQ(infinities.firstInf->round, 0);
    setStatistics(files[1], {"nan", "nan", "nan", "nan"});
    const DumpSummary nan = summarizeDump(indexOf(root));
    ASSERT_TRUE(nan.firstNan);
    EXPECT_EQ(nan.firstNan->round, 1);
}

// Rounds of one run only, with gaps (a live run read while written): the note names eight ranges,
// then how many there are in all (a hundred ranges filled the app's summary).
TEST(Compare, ManyRoundsOfOneRunOnlyAreNamedInShort) {
    TempDir dir;
    const std::string reference = writeBlock(dir, "a", 1, 9, 2),
                      candidate = writeBlock(dir, "b", 1, 9, 26);
    for (const std::string& csv : probe::test::filesNamed(candidate, "statistic.csv")) {
        const std::string roundDir = csv.substr(0, csv.rfind('/'));
        const int round = std::stoi(roundDir.substr(roundDir.rfind('/') + 1));
        if (round >= 2 && round % 2 == 0) std::filesystem::remove_all(roundDir);
    }
    const DumpIndex a = indexOf(reference), b = indexOf(candidate);
    const auto result = compareDumps(a, b, {});
    const auto& notes = result.notes;
    EXPECT_NE(
        std::find(notes.begin(), notes.end(),
                  "rounds 3, 5, 7, 9, 11, 13, 15, 17, ... (12 rounds in all, the last 25) are "
                  "in the candidate only: the reference has rounds 0, 1; their ops are not "
                  "paired"),
        notes.end())
        << ::testing::PrintToString(notes);
}

// The same of msprobe's layout: "step01" beside "step1" was read as step 1 again (its entries
// twice). It is no step folder, and said once, however often the dump is read.
TEST(Compare, AStepFolderWithALeadingZeroIsNoSecondCopyOfItsStep) {
    TempDir dir;
    const std::string root = writeStep(
        dir, "a", {{"Functional.relu.0.forward", {item(1, -1, 0, 2), item(1, 0, 0.5, 1.5)}}});
    writeMsprobeRank(root + "/step1/rank0", "L1",
                     entry("Functional.relu.0.forward", item(2, -2, 0, 4), item(2, 0, 1, 3)));
    const DumpIndex before = indexPolledRepeatedly(root);
    ASSERT_TRUE(before.problems().empty());
    ASSERT_EQ(before.rowCount(), 4u);
    std::filesystem::copy(root + "/step1", root + "/step01",
                          std::filesystem::copy_options::recursive);
    std::filesystem::create_directories(root + "/step02/notes");  // holds no rank: nothing to say
    const DumpIndex index = indexPolledRepeatedly(root);
    EXPECT_EQ(index.rowCount(), before.rowCount());
    ASSERT_EQ(index.problems().size(), 1u);
    EXPECT_EQ(index.problems()[0],
              root +
                  "/step01: not a step folder (its name is not step followed by a number from 0 "
                  "to 2147483647 without leading zeros); its dump.json files are not read");
    EXPECT_EQ(stepNumber("step0"), 0);
    EXPECT_EQ(stepNumber("step10"), 10);
    EXPECT_EQ(stepNumber("step01"), -1);
}

// A row belongs to the round and process of its folder: rows saying round 7 in round 3's file,
// or another pid, were read as round 7's ("rounds 0..7 (5)") or the folder's, without a word. They
// are skipped and said, as malformed rows are.
TEST(Compare, RowsThatSayAnotherRoundOrProcessThanTheirFolderAreSkippedAndSaid) {
    TempDir dir;
    const std::string root = writeBlock(dir, "a", 1, 9, 3);
    const std::vector<std::string> files = probe::test::filesNamed(root, "statistic.csv");
    ASSERT_EQ(files.size(), 3u);
    const DumpIndex before = indexOf(root);
    const std::string own = std::to_string(::getpid());
    const auto rewrite = [&](const std::string& file, const std::string& from,
                             const std::string& to) {
        std::string text = probe::test::readFile(file);
        const size_t at = text.find("\n" + from);  // the first row's
        ASSERT_NE(at, std::string::npos);
        text.replace(at + 1, from.size(), to);
        probe::test::writeFile(file, text);
    };
    rewrite(files[1], own + ",1,", own + ",7,");
    rewrite(files[2], own + ",2,", "99999,2,");
    const DumpIndex index = indexPolledRepeatedly(root);
    EXPECT_EQ(index.rowCount(), before.rowCount() - 2);
    int32_t lastRound = -1;
    for (uint32_t r = 0; r < index.rowCount(); ++r)
        lastRound = std::max(lastRound, index.row(r).round);
    EXPECT_EQ(lastRound, 2);
    EXPECT_EQ(index.processCount(), 1u);
    const auto& problems = index.problems();
    EXPECT_NE(std::find(problems.begin(), problems.end(),
                        files[1] + ":2: row skipped: Execution Count 7 is not the round of its "
                                   "folder (1)"),
              problems.end())
        << ::testing::PrintToString(problems);
    EXPECT_NE(std::find(problems.begin(), problems.end(),
                        files[2] +
                            ":2: row skipped: Device and PID 99999 is not the process of "
                            "its folder (" +
                            own + ")"),
              problems.end())
        << ::testing::PrintToString(problems);
}

// A round folder whose name is no round (renamed "abc", or a number past 2^31-1), a
// statistic.csv that cannot be read or is empty and a `data` that is a plain file are said: their
// rows were dropped without a word ("rows: 0").
TEST(Compare, RowsInAFolderThatIsNoRoundAndADataFileAreSaid) {
    TempDir dir;
    const std::string root = writeBlock(dir, "a", 1, 9, 3);
    const std::vector<std::string> files = probe::test::filesNamed(root, "statistic.csv");
    ASSERT_EQ(files.size(), 3u);
    const auto parentOf = [](const std::string& path) { return path.substr(0, path.rfind('/')); };
    const std::string processDir = parentOf(parentOf(files[0]));
    const auto renamed = [&](const std::string& from, const std::string& to) {
        ASSERT_EQ(::rename(parentOf(from).c_str(), (processDir + "/" + to).c_str()), 0);
    };
    renamed(files[1], "abc");
    renamed(files[2], "2147483648");
    ASSERT_EQ(::mkdir((processDir + "/notes").c_str(), 0755), 0);  // no rows: nothing to say
    const DumpIndex index = indexPolledRepeatedly(root);
    const auto& problems = index.problems();
    ASSERT_EQ(problems.size(), 2u);
    for (const std::string name : {"abc", "2147483648"})
        EXPECT_TRUE(std::any_of(problems.begin(), problems.end(), [&](const std::string& p) {
            return p == processDir + "/" + name +
                            ": not a round folder (its name is not a number from 0 to "
                            "2147483647 without leading zeros); its statistic.csv is not read";
        })) << name;
    EXPECT_GT(index.rowCount(), 0u);  // round 0's

    // A statistic.csv that cannot be read (EIO) is said too: its round was dropped unsaid.
    ASSERT_EQ(::unlink(files[0].c_str()), 0);
    ASSERT_EQ(::symlink("/proc/self/mem", files[0].c_str()), 0);
    const DumpIndex unreadable = indexPolledRepeatedly(root);
    EXPECT_EQ(unreadable.problems().size(), 3u);
    EXPECT_TRUE(std::any_of(
        unreadable.problems().begin(), unreadable.problems().end(), [&](const std::string& p) {
            return p == files[0] +
                            ": cannot be read from byte 0: Input/output error; the rows "
                            "from there on are not read";
        }));

    // So is an empty one (0 bytes: the runtime writes the header as it creates the file).
    ASSERT_EQ(::unlink(files[0].c_str()), 0);
    probe::test::writeFile(files[0], "");
    const DumpIndex empty = indexPolledRepeatedly(root);
    EXPECT_EQ(empty.problems().size(), 3u);
    EXPECT_EQ(std::count(empty.problems().begin(), empty.problems().end(),
                         files[0] + ": empty (0 bytes, not even the header); no rows"),
              1);

    TempDir other;
    const std::string second = writeBlock(other, "b", 1, 9, 1);
    ASSERT_EQ(std::system(("rm -r '" + second + "/data'").c_str()), 0);
    probe::test::writeFile(second + "/data", "rows?");
    const DumpIndex flat = indexPolledRepeatedly(second);
    ASSERT_EQ(flat.problems().size(), 1u);
    EXPECT_EQ(flat.problems()[0], second +
                                      "/data: is a regular file, not a folder; the rows it "
                                      "should hold are not read");
}

// A round folder that is a link to its process folder, or to a folder above, holds the rounds
// again, not a round's files: it is a problem, said once, and not read (it was a round with no
// rows, said nowhere). A round folder linked elsewhere (a dump put together from several) is read.
// So for a process folder linked to data/ (it was said as data/99999/99999, the link seen
// through itself).
TEST(Compare, ARoundFolderLinkedToAFolderHoldingItIsSaidAndNotRead) {
    TempDir dir;
    const std::string root = writeBlock(dir, "a", 1, 9, 3);
    const std::vector<std::string> files = probe::test::filesNamed(root, "statistic.csv");
    ASSERT_EQ(files.size(), 3u);
    const std::string roundDir = files[1].substr(0, files[1].rfind('/'));
    const std::string processDir = roundDir.substr(0, roundDir.rfind('/'));
    const std::string lastRound = files[2].substr(0, files[2].rfind('/'));
    const std::string moved = dir.path() + "/kept-elsewhere";
    ASSERT_EQ(::rename(lastRound.c_str(), moved.c_str()), 0);
    ASSERT_EQ(::symlink(moved.c_str(), lastRound.c_str()), 0);  // read as it is
    ASSERT_EQ(std::system(("rm -r '" + roundDir + "'").c_str()), 0);
    ASSERT_EQ(::symlink(".", (processDir + "/7").c_str()), 0);      // the process folder
    ASSERT_EQ(::symlink("../..", (processDir + "/8").c_str()), 0);  // data/'s parent
    ASSERT_EQ(::symlink(processDir.c_str(), roundDir.c_str()), 0);  // by its whole path
    const std::string data = processDir.substr(0, processDir.rfind('/'));
    ASSERT_EQ(::symlink(".", (data + "/99999").c_str()), 0);  // a process folder: data/

    const DumpIndex index = indexPolledRepeatedly(root);
    const auto& problems = index.problems();
    ASSERT_EQ(problems.size(), 4u);
    EXPECT_EQ(std::count(problems.begin(), problems.end(),
                         data + "/99999: a symbolic link to the folder that holds it, not a "
                                "process folder; not read"),
              1);
    for (const std::string& link : {roundDir, processDir + "/7", processDir + "/8"})
        EXPECT_TRUE(std::any_of(problems.begin(), problems.end(), [&](const std::string& p) {
            return p.rfind(link + ": a symbolic link to ", 0) == 0 &&
                   p.find("not a round folder; not read") != std::string::npos;
        })) << link;
    // The first and the last round's rows are read, the last through its link.
    const DumpIndex whole = indexOf(writeBlock(dir, "b", 1, 9, 3));
    ASSERT_GT(whole.rowCount(), 0u);
    EXPECT_EQ(index.rowCount(), whole.rowCount() * 2 / 3);
}

// A dump replaced while it is followed (deleted and copied anew, or a link turned to another
// dump) is another run: said once, and not read on into the old index (two runs' processes were
// mixed in one tree). Both layouts; the first run's rows stay.
TEST(Compare, ADumpReplacedWhileFollowedIsSaidAndNotMixedIn) {
    TempDir dir;
    const std::string first = writeBlock(dir, "a", 1, 9, 2), second = writeBlock(dir, "b", 1, 9, 3);
    const std::string firstRun = first.substr(0, first.rfind('/')),
                      secondRun = second.substr(0, second.rfind('/'));
    const auto followThroughReplacement = [](const std::string& root,
                                             const std::function<void()>& replace) {
        auto reader = openDumpReader(root, nullptr);
        EXPECT_TRUE(reader) << root;
        DumpIndex index;
        if (!reader) return index;
        for (int poll = 0; poll < 3; ++poll) index.apply(reader->poll(kDefaultPollBudget));
        const uint64_t rowsBefore = index.rowCount();
        const size_t processesBefore = index.processCount();
        EXPECT_GT(rowsBefore, 0u);
        replace();
        for (int poll = 0; poll < 4; ++poll) index.apply(reader->poll(kDefaultPollBudget));
        EXPECT_EQ(index.rowCount(), rowsBefore);
        EXPECT_EQ(index.processCount(), processesBefore);
        return index;
    };
    const auto replacedSaidOnce = [](const DumpIndex& index) {
        return std::count_if(
            index.problems().begin(), index.problems().end(), [](const std::string& p) {
                return p.find(": replaced by another folder since it was opened") !=
                       std::string::npos;
            });
    };
    // Deleted, and another run copied in its place.
    const std::string copied = dir / "copied";
    std::filesystem::copy(firstRun, copied, std::filesystem::copy_options::recursive);
    const DumpIndex afterCopy = followThroughReplacement(copied + "/atb_dump_data", [&] {
        std::filesystem::remove_all(copied + "/atb_dump_data");
        std::filesystem::copy(secondRun + "/atb_dump_data", copied + "/atb_dump_data",
                              std::filesystem::copy_options::recursive);
    });
    EXPECT_EQ(replacedSaidOnce(afterCopy), 1) << ::testing::PrintToString(afterCopy.problems());
    // Moved aside, a link to another run's dump in its place.
    const std::string linked = dir / "linked";
    std::filesystem::copy(firstRun, linked, std::filesystem::copy_options::recursive);
    const DumpIndex afterLink = followThroughReplacement(linked + "/atb_dump_data", [&] {
        std::filesystem::rename(linked + "/atb_dump_data", linked + "/old");
        ASSERT_EQ(::symlink(second.c_str(), (linked + "/atb_dump_data").c_str()), 0);
    });
    EXPECT_EQ(replacedSaidOnce(afterLink), 1) << ::testing::PrintToString(afterLink.problems());
    // msprobe: the dump_path made anew.
    const std::string msprobe = writeRanks(dir, 0.5);
    const DumpIndex afterMsprobe = followThroughReplacement(msprobe, [&] {
        std::filesystem::rename(msprobe, dir / "old-msprobe");
        std::filesystem::create_directories(msprobe);
        std::filesystem::copy(dir / "old-msprobe/step0", msprobe + "/step3",
                              std::filesystem::copy_options::recursive);
    });
    EXPECT_EQ(replacedSaidOnce(afterMsprobe), 1)
        << ::testing::PrintToString(afterMsprobe.problems());
    // Followed without a change: nothing said.
    EXPECT_EQ(replacedSaidOnce(indexPolledRepeatedly(first)), 0);
    // Moved away and back, polled while it was gone: the same folder, read on (a review found
    // it said replaced, and reading stopped for good).
    const std::string moved = dir / "moved";
    std::filesystem::copy(firstRun, moved, std::filesystem::copy_options::recursive);
    auto reader = openDumpReader(moved + "/atb_dump_data", nullptr);
    ASSERT_TRUE(reader);
    DumpIndex back;
    back.apply(reader->poll(kDefaultPollBudget));
    std::filesystem::rename(moved + "/atb_dump_data", moved + "/away");
    back.apply(reader->poll(kDefaultPollBudget));
    std::filesystem::rename(moved + "/away", moved + "/atb_dump_data");
    for (int poll = 0; poll < 3; ++poll) back.apply(reader->poll(kDefaultPollBudget));
    EXPECT_EQ(replacedSaidOnce(back), 0) << ::testing::PrintToString(back.problems());
}

// msprobe: a file where a step or rank folder should be is said (its step was lost without a
// word, "no overflow", exit 0), as the op-level reader says it.
TEST(Compare, AFileInAStepOrRankFoldersPlaceIsSaid) {
    TempDir dir;
    const std::string root = writeRanks(dir, 0.5);
    probe::test::writeFile(root + "/step3", "x");
    probe::test::writeFile(root + "/step0/rank9", "x");
    const DumpIndex index = indexOf(root);
    const auto& problems = index.problems();
    for (const std::string& path : {root + "/step3", root + "/step0/rank9"})
        EXPECT_NE(std::find(problems.begin(), problems.end(),
                            path + ": is a regular file, not a folder; what it should hold is not "
                                   "read"),
                  problems.end())
            << path << ": " << ::testing::PrintToString(problems);
    EXPECT_GT(index.rowCount(), 0u);  // the ranks that are folders are read
}

// A folder the user may not read, a round's or a process's, is said with the reason (a round
// vanished without a word, in the app and in probe summary; its NaN was named in a later round).
// Root reads everything: then the dump is read as nobody, in a child process.
TEST(Compare, FoldersTheUserMayNotReadAreSaidWithTheReason) {
    TempDir dir;
    const std::string roundRoot = writeBlock(dir, "a", 1, 9, 3),
                      processRoot = writeBlock(dir, "b", 1, 9, 2);
    const std::vector<std::string> files = probe::test::filesNamed(roundRoot, "statistic.csv");
    ASSERT_EQ(files.size(), 3u);
    const std::string hiddenRound = files[1].substr(0, files[1].rfind('/'));
    const std::string anyRound = probe::test::filesNamed(processRoot, "statistic.csv").at(0);
    const std::string roundOf = anyRound.substr(0, anyRound.rfind('/'));
    const std::string hiddenProcess = roundOf.substr(0, roundOf.rfind('/'));
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);  // nobody may come in
    // Closed folders are opened again however the test ends, for TempDir's removal.
    struct OpenAgain {
        std::vector<std::string> paths;
        ~OpenAgain() {
            for (const std::string& path : paths) ::chmod(path.c_str(), 0755);
        }
    } closed;
    const auto close = [&](const std::string& path) {
        closed.paths.push_back(path);
        return ::chmod(path.c_str(), 0);
    };
    ASSERT_EQ(close(hiddenRound), 0);
    ASSERT_EQ(close(hiddenProcess), 0);
    // The problems of each dump, and its rows, as the reader says them: "|"-separated.
    const auto readAsAnotherUser = [](const std::string& root) {
        int pipeEnds[2];
        if (::pipe(pipeEnds) != 0) return std::string("no pipe");
        const bool asRoot = ::geteuid() == 0;
        const pid_t child = ::fork();
        if (child == 0) {
            ::close(pipeEnds[0]);
            if (asRoot &&
                (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
                ::_exit(3);
            std::string error, text;
            const auto index = readDump(root, &error);
            if (!index) text = "unreadable: " + error;
            for (const std::string& problem :
                 index ? index->problems() : std::vector<std::string>{})
                text += problem + "|";
            if (index) text += "rows " + std::to_string(index->rowCount());
            const bool written =
                ::write(pipeEnds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size());
            ::_exit(written ? 0 : 4);
        }
        ::close(pipeEnds[1]);
        std::string text;
        char buffer[4096];
        for (ssize_t n; (n = ::read(pipeEnds[0], buffer, sizeof buffer)) > 0;)
            text.append(buffer, static_cast<size_t>(n));
        ::close(pipeEnds[0]);
        int status = 0;
        ::waitpid(child, &status, 0);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0
                   ? text
                   : "the child failed: " + std::to_string(status);
    };
    const std::string round = readAsAnotherUser(roundRoot);
    EXPECT_NE(round.find(hiddenRound + ": Permission denied; the round's rows are not read|"),
              std::string::npos)
        << round;
    const std::string process = readAsAnotherUser(processRoot);
    EXPECT_NE(process.find(hiddenProcess +
                           ": Permission denied; the folder cannot be listed, what it holds is "
                           "not read|"),
              std::string::npos)
        << process;
    // The dump folder itself closed: its status file is out of reach, not missing (it was said
    // to be a dump without one).
    const std::string closedRoot = writeBlock(dir, "c", 1, 9, 1);
    ASSERT_EQ(close(closedRoot), 0);
    const std::string whole = readAsAnotherUser(closedRoot);
    EXPECT_NE(whole.find(closedRoot + "/probe_status.json: Permission denied|"), std::string::npos)
        << whole;
    // msprobe: a step folder that cannot be listed, a rank folder that cannot be entered.
    const std::string msprobe = writeRanks(dir, 0.5);
    std::filesystem::copy(msprobe + "/step0", msprobe + "/step1",
                          std::filesystem::copy_options::recursive);
    ASSERT_EQ(close(msprobe + "/step1"), 0);
    ASSERT_EQ(close(msprobe + "/step0/rank1"), 0);
    const std::string ranks = readAsAnotherUser(msprobe);
    EXPECT_NE(ranks.find(msprobe + "/step1: Permission denied; the folder cannot be listed, what "
                                   "it holds is not read|"),
              std::string::npos)
        << ranks;
    EXPECT_NE(ranks.find(msprobe +
                         "/step0/rank1/dump.json: Permission denied; the rank's step is not read|"),
              std::string::npos)
        << ranks;
}

}  // namespace
}  // namespace probe::analysis
