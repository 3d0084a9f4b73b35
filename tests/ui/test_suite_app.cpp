// The precision suite in the application: where an overflow is born (found off the GUI thread,
// shown in the status bar, a click selects it), "Replay this op" (probe replay in a QProcess,
// its verdict shown), and the Gradients tab (the monitor's CSV as a checkable table beside a
// log-scale plot with alerts marked). The data models run under QAbstractItemModelTester. With
// PyTorch, on real dumps written by probe run with planted defects.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cmath>
#include <fstream>

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include "context/app_context.h"
#include "dump_builder.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "elided_label.h"
#include "gradient_series_model.h"
#include "gradients_panel.h"
#include "main_window.h"
#include "op_replay.h"
#include "op_tensors_panel.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "overflow_births.h"
#include "test_support.h"
#include "widget_checks.h"

namespace probe {
namespace {

using test::waitFor;

bool openAndWait(context::AppContext& context, const std::string& path) {
    QSignalSpy loaded(&context, &context::AppContext::sessionLoaded);
    context.openDump(QString::fromStdString(path));
    return waitFor([&] { return loaded.count() > 0; }) && loaded.front().front().toBool();
}

// A monitor file as probe_studio.grad_monitor writes it: three parameters over 10 steps; "b"
// jumps 1000-fold at step 6, "c" has a NaN gradient at step 8.
void writeGradients(const std::string& dir) {
    QDir().mkpath(QString::fromStdString(dir + "/rank0"));
    std::ofstream out(dir + "/rank0/grad_reduced_0-999.csv");
    out << "vpp_stage,name,step,norm,max,min,mean,nans\n";
    for (int step = 0; step < 10; ++step) {
        out << "0,a," << step << "," << 1.0 + step * 0.01 << ",0.1,-0.1,0,0\n";
        out << "0,b," << step << "," << (step == 6 ? 2000.0 : 2.0) << ",0.1,-0.1,0,0\n";
        out << "0,c," << step << "," << (step == 8 ? "nan" : "0.5") << ",0.1,-0.1,0,"
            << (step == 8 ? 3 : 0) << "\n";
    }
}

TEST(GradientSeriesModel, ReadsTheMonitorFilesOffTheGuiThreadWithTheirAlerts) {
    test::TempDir dir("ui-suite");
    writeGradients(dir / "grads");
    data::GradientSeriesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy loaded(&model, &data::GradientSeriesModel::loaded);
    model.load(QString::fromStdString(dir / "grads"));
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
    ASSERT_EQ(model.rowCount(), 3);
    auto text = [&](int row, int column) {
        return model.data(model.index(row, column)).toString();
    };
    EXPECT_EQ(text(0, data::GradientSeriesModel::ParameterColumn), "a");
    EXPECT_EQ(text(1, data::GradientSeriesModel::StepsColumn), "10");
    EXPECT_EQ(text(1, data::GradientSeriesModel::MaxNormColumn), "2000");
    EXPECT_EQ(text(2, data::GradientSeriesModel::LastNormColumn), "0.5");
    EXPECT_EQ(text(0, data::GradientSeriesModel::AlertsColumn), "0");
    EXPECT_EQ(text(1, data::GradientSeriesModel::AlertsColumn), "1");
    EXPECT_EQ(text(2, data::GradientSeriesModel::AlertsColumn), "1");
    const auto spike = model.findingsOf(1);
    ASSERT_EQ(spike.size(), 1u);
    EXPECT_EQ(spike[0].kind, analysis::GradFinding::Kind::Spike);
    EXPECT_EQ(spike[0].step, 6);
    ASSERT_EQ(model.findingsOf(2).size(), 1u);
    EXPECT_EQ(model.findingsOf(2)[0].kind, analysis::GradFinding::Kind::Nan);
    EXPECT_TRUE(model.data(model.index(1, 0), Qt::ToolTipRole).toString().contains("spike"));
    // Few parameters: all are checked; unchecking one says so.
    EXPECT_EQ(model.checkedRows(), (std::vector<int>{0, 1, 2}));
    QSignalSpy checked(&model, &data::GradientSeriesModel::checkedChanged);
    EXPECT_TRUE(model.setData(model.index(0, 0), Qt::Unchecked, Qt::CheckStateRole));
    EXPECT_EQ(checked.count(), 1);
    EXPECT_EQ(model.checkedRows(), (std::vector<int>{1, 2}));
    // A folder without monitor files: a problem, no rows.
    model.load(QString::fromStdString(dir / "nothing"));
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 1; }));
    EXPECT_EQ(model.rowCount(), 0);
    EXPECT_FALSE(model.problem().isEmpty());
}

TEST(GradientsPanel, PlotsTheCheckedParametersOnALogScaleWithAlertsMarked) {
    test::TempDir dir("ui-suite");
    writeGradients(dir / "grads");
    widgets::GradientsPanel panel;
    panel.resize(900, 600);
    panel.show();
    // Nothing loaded: it says how to get gradients (it was an empty plot, unsaid).
    EXPECT_TRUE(panel.noneText().contains("probe run --grads")) << panel.noneText().toStdString();
    EXPECT_FALSE(panel.plot()->isVisible());  // no empty axes under it
    // The title and the note sit at the top, one under the other (the title floated mid-panel).
    panel.layout()->activate();
    QLabel *title = nullptr, *note = nullptr;
    for (QLabel* label : panel.findChildren<QLabel*>()) {
        if (label->text() == "Gradient norms") title = label;
        if (label->text() == panel.noneText()) note = label;
    }
    ASSERT_TRUE(title && note);
    EXPECT_LT(title->geometry().top(), 10);
    EXPECT_LT(title->geometry().height(), 3 * title->fontMetrics().height());
    EXPECT_LT(note->geometry().top() - title->geometry().bottom(), 20);
    QSignalSpy loaded(panel.model(), &data::GradientSeriesModel::loaded);
    panel.model()->load(QString::fromStdString(dir / "grads"));
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
    EXPECT_TRUE(panel.noneText().isEmpty()) << panel.noneText().toStdString();
    EXPECT_TRUE(panel.plot()->isVisible());
    EXPECT_EQ(panel.lineCount(), 3);
    EXPECT_EQ(panel.alertCount(), 2);  // b's spike, c's NaN
    EXPECT_EQ(panel.plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    // b's line holds its spike; c's NaN is a gap in its line, marked at the top instead.
    const QCPGraph* b = panel.plot()->graph(1);
    EXPECT_EQ(b->name(), "b");
    EXPECT_EQ(b->data()->at(6)->value, 2000);
    EXPECT_TRUE(std::isnan(panel.plot()->graph(2)->data()->at(8)->value));
    EXPECT_EQ(panel.plot()->graphCount(), 5);  // 3 lines, spike marks, NaN marks
    EXPECT_GT(panel.plot()->yAxis->range().upper, 2000);
    // Drawn: red alert marks are on screen.
    const QImage image = panel.grab().toImage();
    EXPECT_GT(test::countPixels(
                  image, [](QColor c) { return c.red() > 180 && c.green() < 60 && c.blue() < 60; }),
              20);
    panel.model()->setData(panel.model()->index(1, 0), Qt::Unchecked, Qt::CheckStateRole);
    EXPECT_EQ(panel.lineCount(), 2);
    EXPECT_EQ(panel.alertCount(), 1);
}

TEST(OverflowBirths, FindsTheInnermostOpWhereTheInfIsBornAndTheWindowJumpsThere) {
    // Round 0 clean; round 1: layer 0's child 0_1 turns finite inputs into inf, 0_2 inherits it.
    test::TempDir dir("ui-suite");
    test::DumpBuilder dump(dir.path());
    for (int round = 0; round < 2; ++round) {
        dump.addRow(round, "0", "layer", "Layer", false);
        dump.addRow(round, "0_0", "layer/a", "aten::add", false);
        dump.addRow(round, "0_0", "layer/a", "aten::add", true);
        dump.addRow(round, "0_1", "layer/b", "aten::mul", false);
        dump.addRow(round, "0_1", "layer/b", "aten::mul", true, {}, {},
                    round == 1 ? std::optional<double>(INFINITY) : std::nullopt);
        dump.addRow(round, "0_2", "layer/c", "aten::exp", false, {}, {},
                    round == 1 ? std::optional<double>(INFINITY) : std::nullopt);
        dump.addRow(round, "0_2", "layer/c", "aten::exp", true, {}, {},
                    round == 1 ? std::optional<double>(INFINITY) : std::nullopt);
        dump.addRow(round, "0", "layer", "Layer", true, {}, {},
                    round == 1 ? std::optional<double>(INFINITY) : std::nullopt);
    }
    dump.setStatus("complete");
    context::AppContext context;
    widgets::MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    ASSERT_TRUE(waitFor([&] { return !window.overflowText().isEmpty(); }));
    const auto& idx = context.store()->index();
    EXPECT_TRUE(window.overflowText().startsWith("⚠ Overflow born: round 1, layer/b (0_1)"))
        << window.overflowText().toStdString();
    const data::BornOverflow* born = window.overflowBirths()->first();
    ASSERT_TRUE(born);
    EXPECT_EQ(born->op, idx.findOp(0, "0_1"));
    EXPECT_EQ(born->why, "output 0: max=inf");
    context.cursor()->setOp(idx.findOp(0, "0"));
    widgets::ElidedButton* button = nullptr;
    for (auto* b : window.findChildren<widgets::ElidedButton*>())
        if (b->fullText() == window.overflowText()) button = b;
    ASSERT_TRUE(button);
    button->click();
    EXPECT_EQ(context.cursor()->op(), idx.findOp(0, "0_1"));
    EXPECT_EQ(context.cursor()->round(), 1);
    // Clicked again while a search hides the op the cursor is on: the tree shows it, as the
    // first-NaN notice and the jump to the first divergence do (it did nothing).
    window.treePanel()->setSearchText("no op is named like this");
    ASSERT_FALSE(window.treePanel()->view()->currentIndex().isValid());
    button->click();
    EXPECT_EQ(window.treePanel()->view()->currentIndex().data(data::OpTreeModel::OpRole).toUInt(),
              idx.findOp(0, "0_1"));
    EXPECT_EQ(idx.slot(idx.row(context.cursor()->row()).slot).isOutput, true);
    // The tensors panel says it is born there.
    ASSERT_TRUE(waitFor([&] { return window.tensorsPanel()->findChildren<QLabel*>().size() > 0; }));
    bool marked = false;
    for (auto* label : window.tensorsPanel()->findChildren<QLabel*>())
        if (label->text().contains("overflow born here")) marked = true;
    EXPECT_TRUE(marked);
    // A line that could not be read may have held an earlier birth: the headline says what it
    // rests on, from the moment the problem is known (a line appended after the birth was found).
    EXPECT_TRUE(window.problemsText().isEmpty()) << window.problemsText().toStdString();
    EXPECT_FALSE(window.overflowText().contains("could be read"))
        << window.overflowText().toStdString();
    dump.appendRaw(0, "a line cut short,0\n");
    ASSERT_TRUE(waitFor([&] { return !window.problemsText().isEmpty(); }));
    EXPECT_TRUE(window.overflowText().endsWith(" (of what could be read)"))
        << window.overflowText().toStdString();
    // A new session forgets it.
    context.closeSession();
    EXPECT_TRUE(window.overflowText().isEmpty());
}

// A live run's rows come more often than the search's pause: the overflow's birth is found while
// they keep coming. Each change restarted the pause, so the birth was found only when rows
// stopped, mostly at the run's end (the demo at 0.3 s a token: 20 rounds after it, no notice).
TEST(OverflowBirths, AreFoundWhileALiveDumpKeepsGrowing) {
    test::TempDir dir("ui-suite");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    auto addRound = [&](int round, bool overflow) {
        const auto inf = overflow ? std::optional<double>(INFINITY) : std::nullopt;
        dump.addRow(round, "0", "layer", "Layer", false);
        dump.addRow(round, "0_0", "layer/a", "aten::add", false);
        dump.addRow(round, "0_0", "layer/a", "aten::add", true, {}, {}, inf);
        dump.addRow(round, "0", "layer", "Layer", true, {}, {}, inf);
    };
    addRound(0, false);
    context::AppContext context;
    context.store()->setIdlePollInterval(20);
    data::OverflowBirths births(context.store());
    births.setPause(300);
    ASSERT_TRUE(openAndWait(context, dir.path()));
    ASSERT_TRUE(waitFor([&] { return !births.busy(); }));
    ASSERT_EQ(births.first(), nullptr);
    addRound(1, true);
    // A round every 60 ms or so, for up to 300 rounds: the birth must be found before they stop.
    int round = 2;
    for (; round < 300 && births.first() == nullptr; ++round) {
        addRound(round, false);
        waitFor([&] { return births.first() != nullptr; }, 60);
    }
    ASSERT_NE(births.first(), nullptr) << "not found while rows kept coming";
    EXPECT_LT(round, 300);
    EXPECT_EQ(births.first()->op, context.store()->index().findOp(0, "0_0"));
    EXPECT_EQ(births.first()->round, 1);
}

TEST(OpReplay, SaysWhyWhenTheToolIsMissingOrPrintsNoResult) {
    data::OpReplay replay;
    replay.setProbeExecutable(QStringLiteral("/nonexistent/probe"));
    QSignalSpy finished(&replay, &data::OpReplay::finished);
    replay.start(QStringLiteral("/tmp"), QStringLiteral("0_1"), 0);
    ASSERT_EQ(finished.count(), 1);
    EXPECT_FALSE(replay.last().ran);
    EXPECT_TRUE(replay.last().error.contains("missing")) << replay.last().error.toStdString();
    const auto none = data::OpReplay::parse(R"({"dump": "/x", "results": []})", "0_1", 2);
    EXPECT_FALSE(none.ran);
    EXPECT_TRUE(none.error.contains("no op 0_1")) << none.error.toStdString();
}

#ifdef PROBE_HAVE_TORCH_TESTS
// probe run of a test model (tests/suite) with a config; the dump's output folder.
std::string runProbe(const test::TempDir& dir, const std::string& name,
                     const std::string& configJson, const QStringList& program) {
    const std::string config = dir / (name + ".json");
    std::ofstream(config) << configJson;
    QProcess process;
    QStringList args{QStringLiteral("run"),      QStringLiteral("--quiet"),
                     QStringLiteral("--output"), QString::fromStdString(dir / name),
                     QStringLiteral("--config"), QString::fromStdString(config),
                     QStringLiteral("--"),       QStringLiteral("/usr/bin/python3")};
    process.start(QStringLiteral(PROBE_CLI), args + program);
    EXPECT_TRUE(process.waitForFinished(240000));
    EXPECT_EQ(process.exitCode(), 0) << process.readAllStandardError().toStdString();
    return dir / name;
}

// The demo decoder generating 3 tokens, with `flags` (a planted NaN or overflow), for runProbe.
QStringList demoOfThreeTokens(const QStringList& flags) {
    return QStringList{QStringLiteral(PROBE_DATADIR "/demo/llama_demo.py"),
                       QStringLiteral("--tokens"), QStringLiteral("3")} +
           flags;
}

TEST(SuiteWithTorch, ReplayThisOpShowsTheVerdictOfTheWrongGeluAndItsNeighbour) {
    test::TempDir dir("ui-suite");
    const std::string out = runProbe(
        dir, "replay",
        R"({"task": "tensor", "dump_enable": true, "exec_range": "all", "save_child": true})",
        {QStringLiteral(PROBE_SUITE_MODELS "/replay_model.py"), QStringLiteral("--wrong-gelu")});
    context::AppContext context;
    widgets::MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, out));
    window.tensorsPanel()->replayer()->setProbeExecutable(QStringLiteral(PROBE_CLI));
    // The op of that name path, or the last one of that type.
    auto replay = [&](const std::string& nameOrType) -> data::ReplayVerdict {
        // The index of now: a task tensor dump's statistics arrive after it opens, and the store
        // may then swap in a copy of its index (a snapshot shares the old one).
        const auto& idx = context.store()->index();
        uint32_t op = analysis::kNone;
        for (uint32_t i = 0; i < idx.opCount(); ++i)
            if (idx.op(i).namePath == nameOrType || idx.op(i).type == nameOrType) op = i;
        EXPECT_NE(op, analysis::kNone) << nameOrType;
        context.cursor()->setOp(op);
        QSignalSpy finished(window.tensorsPanel()->replayer(), &data::OpReplay::finished);
        EXPECT_TRUE(window.tensorsPanel()->replayCurrentOp());
        EXPECT_TRUE(window.tensorsPanel()->replayText().contains("Replaying"));
        EXPECT_TRUE(waitFor([&] { return finished.count() > 0; }, 120000));
        return window.tensorsPanel()->replayer()->last();
    };
    const auto gelu = replay("act/gelu");
    EXPECT_TRUE(gelu.ran) << gelu.error.toStdString();
    EXPECT_EQ(gelu.verdict, "WRONG");
    EXPECT_GT(gelu.maxAbsErr, 1e-3);
    EXPECT_TRUE(window.tensorsPanel()->replayText().contains("WRONG"))
        << window.tensorsPanel()->replayText().toStdString();
    const auto linear = replay("aten::addmm");
    EXPECT_TRUE(linear.ran) << linear.error.toStdString();
    EXPECT_EQ(linear.verdict, "ok");
    EXPECT_TRUE(window.tensorsPanel()->replayText().contains(">ok<"));
}

// The demo's NaN run: layer 1's residual add after the MLP is 2_5, and 2_9 in round 2 (the
// planted overflow ran four ops before it there). Replaying it in round 2 replays the add, not
// what ran at 2_5 in that round (an arange).
TEST(SuiteWithTorch, ReplayOfAnOpShiftedInOneRoundReplaysItsRunOfThatRound) {
    test::TempDir dir("ui-suite");
    const std::string out = runProbe(
        dir, "shifted",
        R"({"task": "tensor", "dump_enable": true, "exec_range": "all", "save_child": true})",
        demoOfThreeTokens({"--nan-layer", "1", "--nan-step", "2"}));
    context::AppContext context;
    widgets::MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, out));
    window.tensorsPanel()->replayer()->setProbeExecutable(QStringLiteral(PROBE_CLI));
    const auto& idx = context.store()->index();
    uint32_t residual = analysis::kNone;
    for (uint32_t op = 0; op < idx.opCount(); ++op)
        if (idx.op(op).namePath == "layers.1/add" && idx.op(op).id == "2_5") residual = op;
    ASSERT_NE(residual, analysis::kNone);
    ASSERT_EQ(idx.idIn(residual, 2), "2_9");
    context.cursor()->setRound(2);
    context.cursor()->setOp(residual);
    QSignalSpy finished(window.tensorsPanel()->replayer(), &data::OpReplay::finished);
    ASSERT_TRUE(window.tensorsPanel()->replayCurrentOp());
    EXPECT_TRUE(
        window.tensorsPanel()->replayText().contains("Replaying layers.1/add (2_9) of round 2"))
        << window.tensorsPanel()->replayText().toStdString();
    ASSERT_TRUE(waitFor([&] { return finished.count() > 0; }, 120000));
    const auto verdict = window.tensorsPanel()->replayer()->last();
    EXPECT_TRUE(verdict.ran) << verdict.error.toStdString();
    EXPECT_EQ(verdict.opId, "2_9");
    EXPECT_EQ(verdict.opType, "aten::add");
    EXPECT_EQ(verdict.round, 2);
}

TEST(SuiteWithTorch, TheLiveOverflowDumpAndTheGradientMonitorAreShown) {
    test::TempDir dir("ui-suite");
    const std::string overflow = runProbe(
        dir, "overflow",
        R"({"task": "overflow_check", "dump_enable": true, "exec_range": "all", "save_child": true})",
        demoOfThreeTokens({"--fp16-layer", "1", "--fp16-step", "2"}));
    context::AppContext context;
    widgets::MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, overflow));
    ASSERT_TRUE(waitFor([&] { return !window.overflowText().isEmpty(); }));
    EXPECT_TRUE(window.overflowText().startsWith("⚠ Overflow born: round 2, layers.1/mul"))
        << window.overflowText().toStdString();

    const std::string grads = runProbe(
        dir, "grads",
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "grad_monitor": true})",
        {QStringLiteral(PROBE_SUITE_MODELS "/grad_model.py"),
         QString::fromStdString(dir / "result.pt"), QStringLiteral("--blowup"),
         QStringLiteral("5")});
    ASSERT_TRUE(openAndWait(context, grads));
    auto* tabs = window.findChild<QTabWidget*>();
    ASSERT_TRUE(tabs);
    ASSERT_TRUE(waitFor([&] { return window.gradientsPanel()->model()->rowCount() == 4; }));
    EXPECT_GE(tabs->indexOf(window.gradientsPanel()), 0);
    EXPECT_EQ(window.gradientsPanel()->lineCount(), 4);
    const auto& findings = window.gradientsPanel()->model()->findings();
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].parameter, "fc2.weight");
    EXPECT_EQ(findings[0].step, 5);
}
#endif

}  // namespace
}  // namespace probe
