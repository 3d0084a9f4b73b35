// The data layer on real dumps of the demo model: written by `probe run` (followed live while
// the model runs, and complete), and by PrecisionDebugger (msprobe layout). Needs PyTorch.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <functional>

#include <QAbstractItemModelTester>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>
#include <gtest/gtest.h>

#include "dump_store.h"
#include "op_selection.h"
#include "op_tree_model.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "test_support.h"

namespace probe {
namespace {

using analysis::kNone;
using Tester = QAbstractItemModelTester;

bool waitFor(const std::function<bool()>& condition, int ms = 60000) {
    return QTest::qWaitFor(condition, ms);
}

// Starts `probe run` on the demo decoder with the planted overflow, dumping statistics of every op.
void startDemo(QProcess& process, const std::string& output, const std::string& configDir,
               int tokens) {
    test::writeFile(
        configDir + "/config.json",
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true})");
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral(PROBE_CLI),
                  {"run", "--output", QString::fromStdString(output), "--config",
                   QString::fromStdString(configDir + "/config.json"), "--", "/usr/bin/python3",
                   QStringLiteral(PROBE_DEMO), "--tokens", QString::number(tokens), "--nan-layer",
                   "1", "--nan-step", "2"});
    ASSERT_TRUE(process.waitForStarted(10000));
}

TEST(DemoDump, FollowedWhileTheModelRunsThenComplete) {
    test::TempDir dir("ui-torch");
    const std::string output = dir / "dump";
    QProcess demo;
    startDemo(demo, output, dir.path(), 120);
    // Open as soon as the probe has created the dump folder: the model is still running.
    ASSERT_TRUE(waitFor([&] { return format::isDirectory(output + "/atb_dump_data/data"); }, 60000))
        << demo.readAll().toStdString();
    data::DumpStore store;
    store.setIdlePollInterval(50);
    data::OpSelection selection;
    data::OpTreeModel model(&store, &selection);
    model.setUpdateDelay(0);
    Tester tester(&model, Tester::FailureReportingMode::Fatal);
    QStringList states;
    int growingUpdates = 0;
    QObject::connect(&store, &data::DumpStore::dumpStateChanged,
                     [&](const QString& state) { states << state; });
    QObject::connect(&store, &data::DumpStore::changed, [&](const analysis::IndexChange& change) {
        if (change.newRows > 0 && store.dumpState() == "running") ++growingUpdates;
    });
    store.open(QString::fromStdString(output));
    ASSERT_TRUE(waitFor([&] { return store.dumpState() == "complete"; }, 120000))
        << demo.readAll().toStdString();
    // The model may have ended, and its QProcess noticed, while the events of the wait above
    // were processed: waitForFinished() is false for a process already finished.
    ASSERT_TRUE(demo.state() == QProcess::NotRunning || demo.waitForFinished(60000));
    EXPECT_EQ(demo.exitCode(), 0) << demo.readAll().toStdString();
    EXPECT_TRUE(states.contains("running")) << states.join(',').toStdString();
    EXPECT_EQ(states.back(), "complete");
    EXPECT_GE(growingUpdates, 2) << "the tree should have grown while the model ran";
    // Everything the probe says it wrote is in the index.
    ASSERT_TRUE(
        waitFor([&] { return store.index().rowCount() == store.index().status()->rows; }, 10000));
    const auto& idx = store.index();
    EXPECT_TRUE(idx.problems().empty());
    EXPECT_EQ(model.rowCount(), 7);         // embed_tokens, four layers, norm, lm_head
    EXPECT_EQ(idx.rounds(0).size(), 121u);  // the prefill and 120 decoded tokens
    // The planted overflow in layer 1 at step 2 shows up as the first NaN of a layer-level op,
    // in layer 2. (Kernel-level rows are not checked: views such as expand may report
    // statistics of memory they do not own.)
    uint32_t firstNan = kNone;
    for (const auto& [round, rows] : idx.process(0).rounds) {
        for (uint32_t row : rows) {
            const auto& op = idx.op(idx.slot(idx.row(row).slot).op);
            if (op.depth == 0 && (idx.row(row).anomalies & analysis::kHasNan)) {
                firstNan = row;
                break;
            }
        }
        if (firstNan != kNone) break;
    }
    ASSERT_NE(firstNan, kNone);
    EXPECT_EQ(idx.row(firstNan).round, 2);
    EXPECT_EQ(idx.op(idx.slot(idx.row(firstNan).slot).op).name, "layers.2");
    // Layer 2 (id 3): NaN in its output, the overflowed +inf in its input.
    EXPECT_EQ(model.indexOfOp(idx.findOp(0, "3"))
                  .siblingAtColumn(data::OpTreeModel::AnomalyColumn)
                  .data()
                  .toString()
                  .toStdString(),
              "NaN Inf");

    // Layer 1's residual add after the MLP is 2_5, and 2_9 in round 2, where the planted
    // overflow ran four ops (arange, eq, where, mul) before it: one op and one tree row, with
    // round 2's Inf among its rows (it was two rows, and the add's plot lacked round 2).
    const uint32_t layer1 = idx.findOp(0, "2");
    ASSERT_NE(layer1, kNone);
    std::vector<uint32_t> adds;
    std::vector<std::string> onlyInRound2;
    for (uint32_t child : idx.op(layer1).children) {
        if (idx.op(child).name == "add") adds.push_back(child);
        if (idx.op(child).rounds == std::vector<int32_t>{2})
            onlyInRound2.push_back(idx.op(child).name);
    }
    std::sort(onlyInRound2.begin(), onlyInRound2.end());
    EXPECT_EQ(onlyInRound2, (std::vector<std::string>{"arange", "eq", "mul", "where"}));
    ASSERT_EQ(adds.size(), 2u);
    const uint32_t residual = adds[1];
    EXPECT_EQ(idx.op(residual).id, "2_5");
    EXPECT_EQ(idx.op(residual).rounds.size(), 121u);
    EXPECT_EQ(idx.idIn(residual, 1), "2_5");
    EXPECT_EQ(idx.idIn(residual, 2), "2_9");
    EXPECT_EQ(idx.describeOp(residual), "layers.1/add (2_5; 2_9 in round 2)");
    EXPECT_EQ(idx.op(residual).anomalies & analysis::kHasInf, analysis::kHasInf);
    EXPECT_EQ(model.rowCount(model.indexOfOp(layer1)), 10);
    model.setRound(2);
    EXPECT_EQ(model.indexOfOp(residual, data::OpTreeModel::IdColumn).data().toString(), "2_9");
}

TEST(DemoDump, PrecisionDebuggerDumpOpensAsAModuleTree) {
    test::TempDir dir("ui-torch");
    test::writeFile(dir / "config.json",
                    R"({"task": "statistics", "dump_path": "./dump_path", "level": "mix"})");
    test::writeFile(dir / "train.py", R"(
import torch, torch.nn as nn
from probe_studio.pytorch import PrecisionDebugger, seed_all
seed_all()
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
debugger = PrecisionDebugger(config_path="./config.json")
for step in range(3):
    debugger.start(model=model)
    loss = model(torch.randn(8, 16)).sum()
    loss.backward()
    debugger.stop()
    debugger.step()
)");
    QProcess python;
    python.setWorkingDirectory(QString::fromStdString(dir.path()));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("PYTHONPATH", QStringLiteral(PROBE_PYTHONPATH));
    python.setProcessEnvironment(env);
    python.setProcessChannelMode(QProcess::MergedChannels);
    python.start("/usr/bin/python3", {"train.py"});
    ASSERT_TRUE(python.waitForFinished(120000));
    ASSERT_EQ(python.exitCode(), 0) << python.readAll().toStdString();

    data::DumpStore store;
    data::OpTreeModel model(&store, nullptr);
    Tester tester(&model, Tester::FailureReportingMode::Fatal);
    QSignalSpy loaded(&store, &data::DumpStore::initialLoadFinished);
    store.open(
        QString::fromStdString(dir.path()));  // the script's folder: dump_path is found inside
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
    const auto& idx = store.index();
    EXPECT_EQ(store.layout(), analysis::DumpLayout::Msprobe);
    EXPECT_TRUE(idx.problems().empty());
    EXPECT_EQ(idx.rounds(0), (std::vector<int32_t>{0, 1, 2}));
    const uint32_t module = idx.findOp(0, "Module.0.Linear.forward.0");
    ASSERT_NE(module, kNone);
    const uint32_t linear = idx.findOp(0, "Functional.linear.0.forward");
    ASSERT_NE(linear, kNone);
    EXPECT_EQ(idx.op(linear).parent, module);
    EXPECT_EQ(idx.op(linear).rounds.size(), 3u);
    const QModelIndex moduleIndex = model.indexOfOp(module);
    ASSERT_TRUE(moduleIndex.isValid());
    EXPECT_GE(model.rowCount(moduleIndex), 1);
}

}  // namespace
}  // namespace probe
