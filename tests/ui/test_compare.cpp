// Comparing two runs in the application, on real dumps: the native test engine run twice under
// the probe, once with one weight element of decoder layer 1 nudged by 5%. The context compares
// them off the GUI thread; the op that uses the weight is born here and the jump lands on it;
// identical runs show no divergence; the comparison's item model and the coloured op tree stay
// consistent under QAbstractItemModelTester while results come and go; replacing either dump
// while a comparison runs drops it safely; a run followed live is compared again as its rounds
// arrive; the window's Compare menu, F8, the comparison panel's plots, and probe-studio --compare;
// a big table of compared ops filled in slices and sorted off the GUI thread, as a stable sort
// of the recomputed values orders it, the selection kept.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFileInfo>
#include <QImage>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSemaphore>
#include <QSignalSpy>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QThreadPool>
#include <QTreeView>
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include "analysis/dump_reader.h"
#include "api_run.h"
#include "compare_dialog.h"
#include "compare_ops_model.h"
#include "compare_panel.h"
#include "compare_runs.h"
#include "compare_series.h"
#include "compare_tensor_pair.h"
#include "compare_tensor_view.h"
#include "context/app_context.h"
#include "dump_builder.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "engine_runs.h"
#include "main_window.h"
#include "non_finite_marks.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "probe/format/statistic_csv.h"
#include "start_page.h"
#include "synthetic_dump.h"
#include "tensor_document.h"
#include "tensor_preview.h"
#include "tensor_values_model.h"
#include "test_support.h"
#include "unpaired_ops_model.h"
#include "widget_checks.h"

namespace probe {
namespace {

using analysis::kNone;
using data::RunComparison;
using test::waitFor;
using widgets::MainWindow;
using Verdict = RunComparison::Verdict;

// The op whose input is the nudged weight (decoder layer 1's query projection).
constexpr const char* kNudgedOp = "Decoder_layer_1/Attention/MatMulKernel";

class CompareTest : public ::testing::Test {
protected:
    void SetUp() override {
        test::prepareEngineSessions(context_, sockets_, config_);
        // Every op's tensors kept, the ops inside the layers too: the comparison measures the
        // data, not only statistics, down to the op that uses the weight.
        test::writeFile(
            config_,
            R"({"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true})");
        context_.reference()->setIdlePollInterval(100);
    }
    void TearDown() override {
        if (engine_.state() != QProcess::NotRunning) {
            engine_.kill();
            engine_.waitForFinished(5000);
        }
        ::unsetenv("PROBE_CONTROL_DIR");
    }
    QString dump(const std::string& name, int rounds, const QStringList& extra = {}) {
        return test::writeEngineDump(dir_ / name, config_, rounds, extra);
    }
    RunComparison* comparison() const { return context_.comparison(); }
    // Waits for a comparison's result (one more than `before` finished).
    bool compared(int before = 0) {
        return waitFor(
            [&] { return comparison()->finishedCount() > before && comparison()->result(); },
            60000);
    }
    uint32_t candidateOpNamed(const std::string& namePath) const {
        const auto& idx = context_.store()->index();
        for (uint32_t op = 0; op < idx.opCount(); ++op)
            if (idx.op(op).namePath == namePath) return op;
        return kNone;
    }

    test::TempDir dir_{"ui-compare"}, sockets_{"probe-sockets"};
    const std::string config_ = dir_ / "config.json";
    context::AppContext context_;
    QProcess engine_;
};

// The nudged weight: its op is born here, in round 0, and the jump selects it, its weight
// tensor and its round; what comes after inherits. The result's numbers are the store's.
TEST_F(CompareTest, ANudgedWeightIsBornWhereItIsUsedAndTheJumpLandsOnIt) {
    const QString reference = dump("reference", 3),
                  nudged = dump("nudged", 3, {"--nudge-layer", "1"});
    QString error;
    ASSERT_TRUE(context_.compare(reference, nudged, &error)) << error.toStdString();
    ASSERT_TRUE(compared());
    const analysis::CompareResult& r = *comparison()->result();
    ASSERT_FALSE(r.cancelled);
    ASSERT_TRUE(r.firstBornHere) << comparison()->summary().toStdString();
    const auto& born = r.ops[*r.firstBornHere];
    const auto& idx = context_.store()->index();
    EXPECT_EQ(idx.op(born.candidateOp).namePath, kNudgedOp);
    EXPECT_EQ(born.candidateRound, 0);
    ASSERT_NE(born.cause, kNone);
    const auto& weight = r.tensors[born.cause];
    EXPECT_FALSE(weight.isOutput);
    EXPECT_EQ(idx.slot(idx.row(weight.candidateRow).slot).index, "1");  // the weight input
    ASSERT_TRUE(weight.hasData);
    EXPECT_NEAR(r.data(born.cause).maxRelativeError, 0.05, 1e-6);
    // Decoder layer 0 and the embedding match; the op is born here; the layer's later ops inherit.
    const uint32_t nudgedOp = candidateOpNamed(kNudgedOp);
    ASSERT_NE(nudgedOp, kNone);
    EXPECT_EQ(comparison()->verdictOf(nudgedOp), Verdict::BornHere);
    EXPECT_EQ(comparison()->verdictOf(candidateOpNamed("Decoder_layer_0/Attention/MatMulKernel")),
              Verdict::Matches);
    EXPECT_EQ(comparison()->verdictOf(candidateOpNamed("WordEmbedding")), Verdict::Matches);
    EXPECT_EQ(comparison()->verdictOf(candidateOpNamed("Decoder_layer_1/Attention/SoftmaxKernel")),
              Verdict::Inherited);
    EXPECT_EQ(comparison()->verdictOf(candidateOpNamed("LmHead")), Verdict::Inherited);
    EXPECT_NE(comparison()->summary().indexOf(QStringLiteral("born here")), -1)
        << comparison()->summary().toStdString();
    // How far it goes, counted as probe compare's report counts it.
    EXPECT_TRUE(comparison()->summary().contains(
        QStringLiteral("; %1 of %2 tensors diverge: born in %3, inherited by %4")
            .arg(r.divergingTensors)
            .arg(r.tensors.size())
            .arg(r.bornHereOps == 1 ? QStringLiteral("1 op")
                                    : QStringLiteral("%1 ops").arg(r.bornHereOps))
            .arg(r.inheritedOps == 1 ? QStringLiteral("1 op")
                                     : QStringLiteral("%1 ops").arg(r.inheritedOps))))
        << comparison()->summary().toStdString();
    EXPECT_GT(r.divergingTensors, 0u);

    context_.cursor()->setOp(candidateOpNamed("WordEmbedding"));
    ASSERT_TRUE(context_.goToFirstDivergence());
    EXPECT_EQ(context_.cursor()->op(), nudgedOp);
    EXPECT_EQ(context_.cursor()->round(), 0);
    EXPECT_EQ(context_.cursor()->row(), weight.candidateRow);

    // The plots' data: the error of every compared op in execution order, the first
    // divergence at the nudged op; the weight's statistic in both runs, round by round.
    const auto profile = data::errorProfile(r, RunComparison::Measure::MaxRelativeError, 0);
    ASSERT_GE(profile.firstDivergenceX, 0);
    const int at = static_cast<int>(profile.firstDivergenceX);
    EXPECT_EQ(r.ops[profile.comparedOps[at]].candidateOp, nudgedOp);
    // The op's worst tensor: its output, or the weight (5%), in percent as the reports say it.
    double worst = 0;
    for (uint32_t t = born.firstTensor; t < born.firstTensor + born.tensorCount; ++t)
        worst = std::max(worst, r.data(t).maxRelativeError);
    EXPECT_GE(worst, 0.05 - 1e-6);
    EXPECT_EQ(profile.series.y[at], worst * 100);
    // Before it only the ops around it differ (they begin before it and surface its output).
    const auto around = r.bornHereAncestors(*r.firstBornHere);
    ASSERT_FALSE(around.empty());
    for (int i = 0; i < at; ++i) {
        const uint32_t op = profile.comparedOps[i];
        const bool encloses = std::find(around.begin(), around.end(), op) != around.end();
        if (!encloses) {
            EXPECT_EQ(profile.series.y[i], 0.0) << idx.op(r.ops[op].candidateOp).namePath;
        }
    }
    const auto pair =
        data::statisticPair(*comparison(), idx.row(weight.candidateRow).slot, analysis::Stat::Max);
    ASSERT_EQ(pair.candidate.x.size(), 3);
    ASSERT_EQ(pair.reference.x.size(), 3);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(pair.candidate.x[i], i);
        const auto& ref = context_.reference()->index();
        const uint32_t refRow =
            r.tensors[comparison()->comparedTensor(pair.candidate.rows[i])].referenceRow;
        EXPECT_EQ(pair.reference.y[i], ref.row(refRow).get(analysis::Stat::Max));
        EXPECT_EQ(pair.candidate.y[i], idx.row(pair.candidate.rows[i]).get(analysis::Stat::Max));
    }
}

// A generation loop: each step's token is made by the program from the last step's output.
// After the head is born in step 0, the tokens that follow are inherited, not births; the
// summary says how many such inputs there are (other data given later would look the same), and
// the tree's Round "latest" marks the embedding inherited, as after the jump (it said born here).
TEST_F(CompareTest, TokensFedBackAfterADivergenceAreInheritedAndCounted) {
    const auto write = [&](const std::string& name, float nudge) {
        test::ApiRun run(dir_, name);
        std::vector<float> token = {0.5f, -1.f, 2.f, 0.25f};
        for (int step = 0; step < 3; ++step) {
            std::vector<float> e(4), y(4);
            for (int k = 0; k < 4; ++k) e[k] = 2 * token[k] + 1;
            for (int k = 0; k < 4; ++k) y[k] = e[k] - 3 + (k == 1 ? nudge : 0.f);
            run.op("emb", {token}, {e});
            run.op("head", {e}, {y});
            for (int k = 0; k < 4; ++k) token[k] = std::tanh(y[k]);  // by the program
        }
        return QString::fromStdString(run.finish());
    };
    const QString reference = write("reference", 0), candidate = write("candidate", 0.5f);
    ASSERT_TRUE(context_.compare(reference, candidate));
    ASSERT_TRUE(compared());
    const auto& r = *comparison()->result();
    ASSERT_TRUE(r.firstBornHere);
    EXPECT_EQ(r.bornHereOps, 1u);
    EXPECT_EQ(r.fedBackOps, 2u);  // emb of steps 1 and 2
    EXPECT_TRUE(comparison()->summary().contains(
        "born in 1 op, inherited by 4 ops (2 of them at an input from outside the model, taken as "
        "fed back by the program: other data given at a later step would look the same)"))
        << comparison()->summary().toStdString();
    const uint32_t emb = candidateOpNamed("emb");
    ASSERT_NE(emb, kNone);
    context_.cursor()->setRound(-1);  // latest: over every round
    EXPECT_EQ(comparison()->verdictOf(emb), Verdict::Inherited);
    ASSERT_TRUE(context_.goToFirstDivergence());
    EXPECT_EQ(comparison()->verdictOf(emb), Verdict::Inherited);
}

// A layer whose weight differs (a layer-level dump holds no weights), given the same input at
// every step: born once, at step 0; at the later steps the divergence is carried in its own
// state, counted apart in the summary (it was a birth at every step), and step 1's verdict in
// the tree says so.
TEST_F(CompareTest, ALayerCarryingItsOwnDivergenceOnIsBornOnceAndCounted) {
    const auto write = [&](const std::string& name, float nudge) {
        test::ApiRun run(dir_, name);
        const std::vector<float> tokens = {3, 1, 4, 1}, x = {0.5f, -1.f, 2.f, 0.25f};
        for (int step = 0; step < 3; ++step) {
            std::vector<float> y(4);
            for (int k = 0; k < 4; ++k) y[k] = (1.5f + (k == 2 ? nudge : 0.f)) * x[k];
            run.op("emb", {tokens}, {x});  // the op each step begins with
            run.op("layer", {x}, {y});
        }
        return QString::fromStdString(run.finish());
    };
    const QString reference = write("reference", 0), candidate = write("candidate", 0.5f);
    ASSERT_TRUE(context_.compare(reference, candidate));
    ASSERT_TRUE(compared());
    const auto& r = *comparison()->result();
    EXPECT_EQ(r.bornHereOps, 1u);
    EXPECT_EQ(r.carriedInStateOps, 2u);
    EXPECT_TRUE(comparison()->summary().contains(
        "born in 1 op, inherited by 2 ops (2 of them at an output whose inputs match, after an "
        "earlier step's divergence went through the op, taken as carried in its own state (its "
        "parameters, a cache): a parameter changed for another reason would look the same)"))
        << comparison()->summary().toStdString();
    const uint32_t layer = candidateOpNamed("layer");
    ASSERT_NE(layer, kNone);
    EXPECT_EQ(comparison()->verdictOf(layer, 0), Verdict::BornHere);
    EXPECT_EQ(comparison()->verdictOf(layer, 1), Verdict::Inherited);
}

TEST_F(CompareTest, IdenticalRunsShowNoDivergence) {
    const QString a = dump("a", 2), b = dump("b", 2);
    ASSERT_TRUE(context_.compare(a, b));
    ASSERT_TRUE(compared());
    const auto& r = *comparison()->result();
    EXPECT_FALSE(r.nothingCompared());
    EXPECT_FALSE(r.diverges());
    EXPECT_EQ(r.tensorsWithData, r.tensors.size());
    EXPECT_FALSE(context_.goToFirstDivergence());
    EXPECT_EQ(comparison()->firstDivergenceRow(), kNone);
    const auto& idx = context_.store()->index();
    ASSERT_GT(idx.opCount(), 0u);
    for (uint32_t op = 0; op < idx.opCount(); ++op)
        if (idx.op(op).rowCount) {
            EXPECT_EQ(comparison()->verdictOf(op), Verdict::Matches) << idx.op(op).namePath;
        }
    EXPECT_TRUE(comparison()->summary().startsWith("The runs agree: "))
        << comparison()->summary().toStdString();
    EXPECT_EQ(comparison()->summary().indexOf(QStringLiteral("one run only")), -1);
    // Nothing diverges, every error 0: the error plot's axis starts at 0, not at -1e-12.
    MainWindow window(&context_);
    window.showView(MainWindow::View::Compare);
    ASSERT_TRUE(waitFor([&] { return window.comparePanel()->errorPlot()->graphCount() > 0; }));
    const QCPRange shown = window.comparePanel()->errorPlot()->yAxis->range();
    EXPECT_GE(shown.lower, -0.1);
    EXPECT_GE(shown.upper, 0.5);
    EXPECT_LT(shown.upper, 5);  // not the range before any comparison
}

// Rounds in one run only are no agreement: the verdict says how many executions did not pair
// (the app said "The runs agree … none diverges" where probe compare listed 44,955 unpaired).
TEST_F(CompareTest, ExecutionsInOneRunOnlyAreSaidWithTheVerdict) {
    const QString a = dump("a", 2), b = dump("b", 3);
    ASSERT_TRUE(context_.compare(a, b));
    ASSERT_TRUE(compared());
    const auto& r = *comparison()->result();
    EXPECT_FALSE(r.diverges());
    ASSERT_GT(r.unpairedOps, 1u);
    const QString summary = comparison()->summary();
    // Agreement only where both ran, said first (a live run's NaN beyond its reference's last
    // round read as "The runs agree").
    EXPECT_TRUE(summary.startsWith("The runs agree where both ran: ")) << summary.toStdString();
    EXPECT_TRUE(summary.contains(QLocale().toString(static_cast<qulonglong>(r.unpairedOps)) +
                                 " op executions are in one run only (0 in the reference, " +
                                 QLocale().toString(static_cast<qulonglong>(r.unpairedOps)) +
                                 " in this run); round 2 is in the candidate only: the "
                                 "reference has rounds 0, 1"))
        << summary.toStdString();
}

// The op executions of one run only are listed on a tab of their own, which says how many: the
// run, the round and the op of each, a click selecting it in the tree. The compared-ops table
// lists pairs only, and the README said it listed these too; the summary only counted them.
TEST_F(CompareTest, TheOpsOfOneRunOnlyAreListedOnTheirOwnTab) {
    MainWindow window(&context_);
    window.resize(1500, 950);
    window.show();
    window.showView(MainWindow::View::Compare);
    const QString a = dump("a", 2), b = dump("b", 3);
    ASSERT_TRUE(context_.compare(a, b));
    ASSERT_TRUE(compared());
    QTableView* view = window.comparePanel()->unpairedTable();
    QAbstractItemModel* rows = view->model();
    QAbstractItemModelTester tester(rows, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const auto& r = *comparison()->result();
    ASSERT_GT(r.unpairedOps, 0u);
    ASSERT_EQ(rows->rowCount(), static_cast<int>(r.unpairedOps));  // few: every one listed
    auto* pages = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget()->parentWidget());
    ASSERT_NE(pages, nullptr);
    const int tab = pages->indexOf(view->parentWidget());
    ASSERT_GE(tab, 0);
    EXPECT_TRUE(pages->isTabEnabled(tab));
    EXPECT_EQ(pages->tabText(tab),
              QStringLiteral("In one run only (%1)")
                  .arg(QLocale().toString(static_cast<qulonglong>(r.unpairedOps))));

    // The candidate ran a round the reference did not: its ops are the ones listed, each once,
    // found here from the candidate's own rows of that round.
    const auto& idx = context_.store()->index();
    std::set<uint32_t> ranInRound2;
    for (uint32_t row : idx.process(0).rounds.at(2))
        ranInRound2.insert(idx.slot(idx.row(row).slot).op);
    ASSERT_FALSE(ranInRound2.empty());
    std::set<uint32_t> listed;
    for (int i = 0; i < rows->rowCount(); ++i) {
        EXPECT_EQ(rows->index(i, data::UnpairedOpsModel::RunColumn).data().toString(),
                  QStringLiteral("this run"));
        EXPECT_EQ(rows->index(i, data::UnpairedOpsModel::RoundColumn).data().toInt(), 2);
        const uint32_t row =
            rows->index(i, 0).data(data::UnpairedOpsModel::CandidateRowRole).toUInt();
        ASSERT_LT(row, idx.rowCount());
        EXPECT_EQ(idx.row(row).round, 2);
        const uint32_t op = idx.slot(idx.row(row).slot).op;
        EXPECT_EQ(rows->index(i, data::UnpairedOpsModel::OpColumn).data().toString().toStdString(),
                  idx.op(op).namePath);
        EXPECT_EQ(
            rows->index(i, data::UnpairedOpsModel::TypeColumn).data().toString().toStdString(),
            idx.op(op).type);
        EXPECT_TRUE(listed.insert(op).second) << idx.op(op).namePath;
    }
    EXPECT_EQ(listed, ranInRound2);

    // A click on one selects it, in its round.
    pages->setCurrentIndex(tab);
    const int last = rows->rowCount() - 1;
    const uint32_t clicked =
        idx.slot(
               idx.row(rows->index(last, 0).data(data::UnpairedOpsModel::CandidateRowRole).toUInt())
                   .slot)
            .op;
    context_.cursor()->setOp(candidateOpNamed("LmHead"));
    view->scrollTo(rows->index(last, data::UnpairedOpsModel::OpColumn));
    QTest::mouseClick(
        view->viewport(), Qt::LeftButton, {},
        view->visualRect(rows->index(last, data::UnpairedOpsModel::OpColumn)).center());
    EXPECT_EQ(context_.cursor()->op(), clicked);
    EXPECT_EQ(context_.cursor()->round(), 2);

    // Runs that pair up whole: the tab says none, and is off.
    const QString c = dump("c", 2);
    const int before = comparison()->finishedCount();
    ASSERT_TRUE(context_.compare(a, c));
    ASSERT_TRUE(compared(before));
    ASSERT_EQ(comparison()->result()->unpairedOps, 0u);
    EXPECT_EQ(rows->rowCount(), 0);
    EXPECT_FALSE(pages->isTabEnabled(tab));
    EXPECT_EQ(pages->tabText(tab), QStringLiteral("In one run only (0)"));
}

// A candidate round that cannot be read (its statistic.csv a FIFO): the verdict says it covers
// only what was read, and names the file (it said "the runs agree" without a word).
TEST_F(CompareTest, WhatCouldNotBeReadIsSaidWithTheVerdict) {
    MainWindow window(&context_);
    const QString a = dump("a", 2), b = dump("b", 2);
    const std::vector<std::string> files = test::filesNamed(b.toStdString(), "statistic.csv");
    ASSERT_FALSE(files.empty());
    ASSERT_EQ(::unlink(files.back().c_str()), 0);
    ASSERT_EQ(::mkfifo(files.back().c_str(), 0600), 0);
    // One in the reference too: the panel's summary names the first problem only.
    const std::vector<std::string> referenceFiles =
        test::filesNamed(a.toStdString(), "statistic.csv");
    ASSERT_FALSE(referenceFiles.empty());
    ASSERT_EQ(::unlink(referenceFiles.back().c_str()), 0);
    ASSERT_EQ(::mkfifo(referenceFiles.back().c_str(), 0600), 0);
    ASSERT_TRUE(context_.compare(a, b));
    ASSERT_TRUE(compared());
    EXPECT_FALSE(comparison()->result()->diverges());
    const QString summary = comparison()->summary();
    EXPECT_NE(summary.indexOf(QStringLiteral("of what could be read only")), -1)
        << summary.toStdString();
    EXPECT_NE(summary.indexOf(QStringLiteral("named pipe")), -1) << summary.toStdString();
    // The panel counts the problems of both dumps, and says so (the status bar, the shown one's).
    ASSERT_TRUE(waitFor([&] {
        return window.comparePanel()->summaryText().contains(
            "2 problems of the two dumps (files unread): see Notes");
    })) << window.comparePanel()->summaryText().toStdString();
    // Each of them on the Notes tab, with its file (the summary, the first alone: a truncated
    // tensor file was said nowhere in the window).
    QTabWidget* tabs = nullptr;
    int notesTab = -1;
    for (auto* t : window.comparePanel()->findChildren<QTabWidget*>())
        for (int i = 0; i < t->count(); ++i)
            if (t->tabText(i).startsWith("Notes")) {
                tabs = t;
                notesTab = i;
            }
    ASSERT_NE(tabs, nullptr);
    EXPECT_EQ(tabs->tabText(notesTab), QStringLiteral("Notes (2)"));
    EXPECT_TRUE(tabs->isTabVisible(notesTab));
    const auto* notes = qobject_cast<QPlainTextEdit*>(tabs->widget(notesTab));
    ASSERT_NE(notes, nullptr);
    for (const std::string& fifo : {files.back(), referenceFiles.back()})
        EXPECT_TRUE(notes->toPlainText().contains(QString::fromStdString(fifo) +
                                                  ": is a named pipe (FIFO)"))
            << fifo << "\n"
            << notes->toPlainText().toStdString();
    // A comparison with nothing to note hides the tab.
    ASSERT_TRUE(context_.compare(dump("c", 2), dump("d", 2)));
    ASSERT_TRUE(compared());
    ASSERT_TRUE(waitFor([&] { return !tabs->isTabVisible(notesTab); }));
}

// The comparison's table and the op tree coloured by it, under the model tester while results
// arrive, the filter changes, and the comparison goes.
TEST_F(CompareTest, TheComparisonModelsStayConsistent) {
    data::CompareOpsModel table(comparison());
    data::OpTreeModel tree(context_.store(), nullptr);
    tree.setComparison(comparison());
    QAbstractItemModelTester tableTester(&table,
                                         QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester treeTester(&tree,
                                        QAbstractItemModelTester::FailureReportingMode::Fatal);
    const QString reference = dump("reference", 2),
                  nudged = dump("nudged", 2, {"--nudge-layer", "1"});
    ASSERT_TRUE(context_.compare(reference, nudged));
    ASSERT_TRUE(compared());
    const auto& r = *comparison()->result();
    ASSERT_EQ(table.rowCount(), static_cast<int>(r.ops.size()));
    int bornHere = 0;
    for (int row = 0; row < table.rowCount(); ++row) {
        const QModelIndex verdict = table.index(row, data::CompareOpsModel::VerdictColumn);
        const uint32_t op = verdict.data(data::CompareOpsModel::ComparedOpRole).toUInt();
        EXPECT_EQ(op, static_cast<uint32_t>(row));  // execution order
        if (r.ops[op].verdict == analysis::OpVerdict::BornHere) {
            ++bornHere;
            EXPECT_EQ(verdict.data().toString(),
                      r.ops[op].bornInChild ? "born below" : "born here");
            EXPECT_EQ(verdict.data(Qt::BackgroundRole).value<QColor>(),
                      RunComparison::verdictColor(r.ops[op].bornInChild ? Verdict::BornBelow
                                                                        : Verdict::BornHere));
        }
    }
    EXPECT_GE(bornHere, 2);  // the op and the layer around it, in each of the two rounds
    // Sorted by the model itself: by the largest relative error first, a persistent index on a
    // born-here row follows it; by name; back to execution order. Inline, then on a worker
    // thread as a big table is (the order arrives with sortApplied; a sort overtaken by a
    // newer one is never applied).
    const uint32_t bornOp = *r.firstBornHere;
    QSignalSpy applied(&table, &data::CompareOpsModel::sortApplied);
    auto sortAndWait = [&](int column, Qt::SortOrder order) {
        applied.clear();
        table.sort(column, order);
        if (!(applied.count() > 0 || applied.wait(20000))) return false;
        // A sort overtaken by a newer one may still be running when the newest is applied (its
        // order is dropped when it ends): the checks below want none left.
        return QTest::qWaitFor([&] { return !table.sorting(); }, 20000);
    };
    for (const size_t inlineRows : {table.inlineSortRows(), size_t{0}}) {
        SCOPED_TRACE(inlineRows ? "sorted inline" : "sorted off the GUI thread");
        table.setInlineSortRows(inlineRows);
        const QPersistentModelIndex followed = table.index(static_cast<int>(bornOp), 1);
        ASSERT_TRUE(
            sortAndWait(data::CompareOpsModel::MaxRelativeErrorColumn, Qt::DescendingOrder));
        EXPECT_FALSE(table.sorting());
        ASSERT_EQ(table.rowCount(), static_cast<int>(r.ops.size()));
        // The worst first: NaN as bad as an infinite error, then the errors from the largest.
        const auto severity = [](double v) { return std::isnan(v) ? INFINITY : v; };
        for (int row = 1; row < table.rowCount(); ++row) {
            const QVariant a = table.index(row - 1, data::CompareOpsModel::MaxRelativeErrorColumn)
                                   .data(data::CompareOpsModel::SortRole),
                           b = table.index(row, data::CompareOpsModel::MaxRelativeErrorColumn)
                                   .data(data::CompareOpsModel::SortRole);
            EXPECT_GE(severity(a.toDouble()), severity(b.toDouble())) << row;
            const uint32_t
                opA = table.index(row - 1, 0).data(data::CompareOpsModel::ComparedOpRole).toUInt(),
                opB = table.index(row, 0).data(data::CompareOpsModel::ComparedOpRole).toUInt();
            if (severity(a.toDouble()) == severity(b.toDouble())) {
                EXPECT_LT(opA, opB) << "ties in execution order";
            }
        }
        const double worst = table.index(0, data::CompareOpsModel::MaxRelativeErrorColumn)
                                 .data(data::CompareOpsModel::SortRole)
                                 .toDouble();
        EXPECT_TRUE(std::isnan(worst) || worst > 0.0) << worst;
        ASSERT_TRUE(followed.isValid());
        EXPECT_EQ(followed.data(data::CompareOpsModel::ComparedOpRole).toUInt(), bornOp);
        EXPECT_EQ(followed.column(), 1);
        // Two sorts in a row: the table ends in the order of the second.
        applied.clear();
        table.sort(data::CompareOpsModel::CosineColumn, Qt::AscendingOrder);
        ASSERT_TRUE(sortAndWait(data::CompareOpsModel::OpColumn, Qt::AscendingOrder));
        EXPECT_FALSE(table.sorting());
        for (int row = 1; row < table.rowCount(); ++row)
            EXPECT_LE(table.index(row - 1, data::CompareOpsModel::OpColumn).data().toString(),
                      table.index(row, data::CompareOpsModel::OpColumn).data().toString());
        EXPECT_EQ(followed.data(data::CompareOpsModel::ComparedOpRole).toUInt(), bornOp);
        ASSERT_TRUE(sortAndWait(-1, Qt::AscendingOrder));
        for (int row = 0; row < table.rowCount(); ++row)
            ASSERT_EQ(table.index(row, 0).data(data::CompareOpsModel::ComparedOpRole).toUInt(),
                      static_cast<uint32_t>(row));
        EXPECT_EQ(followed.row(), static_cast<int>(bornOp));
    }
    table.setDivergingOnly(true);
    ASSERT_GT(table.rowCount(), 0);
    for (int row = 0; row < table.rowCount(); ++row)
        EXPECT_NE(table.index(row, 0).data(data::CompareOpsModel::VerdictRole).toInt(),
                  static_cast<int>(Verdict::Matches));
    // The tree: the op's row coloured and its verdict column filled.
    const QModelIndex nudgedItem =
        tree.indexOfOp(candidateOpNamed(kNudgedOp), data::OpTreeModel::VerdictColumn);
    ASSERT_TRUE(nudgedItem.isValid());
    EXPECT_EQ(nudgedItem.data().toString(), QStringLiteral("born here"));
    EXPECT_EQ(nudgedItem.data(Qt::BackgroundRole).value<QColor>(),
              RunComparison::verdictColor(Verdict::BornHere));
    EXPECT_FALSE(nudgedItem.data(Qt::ToolTipRole).toString().isEmpty());
    // Stopping: both models let go of the result.
    context_.closeReference();
    EXPECT_EQ(comparison()->result(), nullptr);
    EXPECT_EQ(table.rowCount(), 0);
    EXPECT_FALSE(nudgedItem.data().isValid());
}

// The comparison panel's plots as before any comparison: hidden (not two empty plots under its
// "No comparison" line), no legend, no measure, no ranges of the last comparison.
void expectEmptyPlots(MainWindow& window) {
    for (QCustomPlot* plot :
         {window.comparePanel()->errorPlot(), window.comparePanel()->statisticPlot()}) {
        EXPECT_FALSE(plot->isVisibleTo(window.comparePanel()));
        EXPECT_FALSE(plot->legend->visible());
        EXPECT_EQ(plot->graphCount(), 0);
        EXPECT_EQ(plot->yAxis->label(), QString());
        // QCustomPlot's own ranges, as before any comparison.
        EXPECT_EQ(plot->xAxis->range(), QCPRange(0, 5)) << plot->xAxis->range().upper;
        EXPECT_EQ(plot->yAxis->range(), QCPRange(0, 5)) << plot->yAxis->range().upper;
    }
}

// Replacing either dump while a comparison runs: it is cancelled, its result never shown, and
// the comparison of the new pair is right. The window is up, every model under the tester.
TEST_F(CompareTest, ReplacingEitherDumpWhileComparingIsSafe) {
    context::AppContext& context = context_;
    MainWindow window(&context);
    window.resize(1400, 900);
    window.show();
    std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
    for (QAbstractItemModel* model : window.findChildren<QAbstractItemModel*>())
        testers.push_back(std::make_unique<QAbstractItemModelTester>(
            model, QAbstractItemModelTester::FailureReportingMode::Fatal));
    ASSERT_FALSE(testers.empty());
    const QString big = dump("big", 40), bigNudged = dump("big-nudged", 40, {"--nudge-layer", "0"}),
                  small = dump("small", 2),
                  smallNudged = dump("small-nudged", 2, {"--nudge-layer", "1"});
    QSignalSpy started(comparison(), &RunComparison::started);
    expectEmptyPlots(window);  // before any comparison
    for (int attempt = 0; attempt < 3; ++attempt) {
        // The candidate replaced mid-comparison, then the reference.
        ASSERT_TRUE(context.compare(big, bigNudged));
        ASSERT_TRUE(waitFor([&] { return comparison()->running(); }, 60000));
        context.openDump(small);  // a new session: the reference goes, the comparison with it
        EXPECT_FALSE(comparison()->running());
        EXPECT_EQ(comparison()->result(), nullptr);
        EXPECT_TRUE(window.comparePanel()->summaryText().startsWith("No comparison."))
            << window.comparePanel()->summaryText().toStdString();
        expectEmptyPlots(window);
        EXPECT_EQ(window.statusBar()->currentMessage(), QString());  // not "Comparison cancelled"
        ASSERT_TRUE(context.compare(big, bigNudged));
        ASSERT_TRUE(waitFor([&] { return comparison()->running(); }, 60000));
        context.openReference(small);  // the reference replaced
        ASSERT_TRUE(waitFor([&] {
            return context.reference()->initialLoadDone() &&
                   context.reference()->root() == small + "/atb_dump_data";
        }));
    }
    const int before = comparison()->finishedCount();
    ASSERT_TRUE(context.compare(small, smallNudged));
    ASSERT_TRUE(compared(before));
    const auto& r = *comparison()->result();
    ASSERT_TRUE(r.firstBornHere);
    EXPECT_EQ(context.store()->index().op(r.ops[*r.firstBornHere].candidateOp).namePath, kNudgedOp);
    EXPECT_TRUE(window.comparePanel()->errorPlot()->isVisibleTo(window.comparePanel()));
    EXPECT_EQ(r.reference->rowCount(), context.reference()->index().rowCount());
    EXPECT_FALSE(window.grab().isNull());
    // File › Stop comparing, as a user does: the verdict in the status bar goes with the
    // comparison, and the plots show nothing of it.
    ASSERT_FALSE(window.statusBar()->currentMessage().isEmpty());
    QAction* stop = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
        if (action->text() == "Stop comparing") stop = action;
    ASSERT_NE(stop, nullptr);
    ASSERT_TRUE(stop->isEnabled());
    ASSERT_FALSE(window.comparePanel()->errorPlot()->yAxis->label().isEmpty());
    stop->trigger();
    EXPECT_EQ(comparison()->result(), nullptr);
    EXPECT_EQ(window.statusBar()->currentMessage(), QString());
    EXPECT_FALSE(stop->isEnabled());
    expectEmptyPlots(window);
}

// A launched run compared against a reference while it runs: the comparison is run again as
// rounds arrive, each time over more rounds, off the GUI thread.
// The window says the verdict once, not again at each run of the same verdict: that put it
// back over the session's "dumping … rows" every few seconds, for as long as the model ran.
TEST_F(CompareTest, ALiveRunIsComparedAsItsRoundsArrive) {
    const QString reference = dump("reference", 30, {"--nudge-layer", "1"});
    MainWindow window(&context_);
    // At the smallest size, where the verdict ends in "…" and is fitted again as the progress
    // bar goes: its counts stayed the first run's.
    window.resize(window.minimumSize());
    window.show();
    ASSERT_TRUE(context_.launch(test::engineLaunch(dir_ / "live", config_, 30, 150)));
    QString error;
    ASSERT_TRUE(context_.compare(reference, {}, &error)) << error.toStdString();
    auto comparedRounds = [&] {
        const auto* r = comparison()->result();
        return r && !r->ops.empty() ? r->ops.back().candidateRound + 1 : 0;
    };
    ASSERT_TRUE(waitFor([&] { return comparedRounds() >= 1; }, 60000));
    EXPECT_TRUE(window.statusMessage().startsWith("First divergence, born here"))
        << window.statusMessage().toStdString();
    // While it is up, its counts follow the runs (it kept the first run's).
    const auto shownWhole = [&] {
        return window.statusBar()->toolTip().isEmpty() ? window.statusMessage()
                                                       : window.statusBar()->toolTip();
    };
    ASSERT_FALSE(window.statusBar()->toolTip().isEmpty()) << "the verdict fits whole";
    // Fitted again to a wider bar (as when a NaN button comes or goes): its counts still follow.
    const QString fitted = window.statusMessage();
    window.resize(window.width() + 150, window.height());
    ASSERT_TRUE(waitFor([&] { return window.statusMessage() != fitted; })) << fitted.toStdString();
    const int shownAt = comparison()->finishedCount();
    ASSERT_TRUE(waitFor([&] { return comparison()->finishedCount() > shownAt; }, 60000));
    EXPECT_EQ(shownWhole().toStdString(), comparison()->summary().toStdString());
    window.statusBar()->clearMessage();  // as its time running out does
    QProgressBar* progress = nullptr;
    for (auto* bar : window.findChildren<QProgressBar*>())
        if (bar->format().startsWith("comparing")) progress = bar;
    ASSERT_NE(progress, nullptr);
    int runsAgain = 0, progressShownAgain = 0;  // seen after the window's own handler
    QObject::connect(comparison(), &RunComparison::started, &window, [&] {
        ++runsAgain;
        progressShownAgain += progress->isVisible() ? 1 : 0;
    });
    const int first = comparedRounds();
    const int runs = comparison()->finishedCount();
    ASSERT_TRUE(waitFor(
        [&] { return comparedRounds() > first && comparison()->finishedCount() > runs; }, 60000));
    const auto& r = *comparison()->result();
    ASSERT_TRUE(r.firstBornHere);  // the reference had the nudge; the live run has not
    EXPECT_EQ(context_.store()->index().op(r.ops[*r.firstBornHere].candidateOp).namePath,
              kNudgedOp);
    EXPECT_EQ(window.statusMessage(), QString());  // the same verdict: not said again
    // Nor is progress shown for the runs again: it stayed up ("comparing 91%") all along.
    EXPECT_GT(runsAgain, 0);
    EXPECT_EQ(progressShownAgain, 0);
    EXPECT_TRUE(context_.modelRunning() || context_.liveSession()->hasEnded());
}

// A live run killed while compared: compared again, though no row came since, and its notes
// say it is not a whole run (they said "still being written" long after it had died).
TEST_F(CompareTest, ALiveRunKilledWhileComparedIsSaidToBeNoWholeRun) {
    const QString reference = dump("reference", 4);
    MainWindow window(&context_);
    window.show();
    // One round, then asleep: after the kill, no row comes (the rows that came last prompted a
    // comparison that ran before the run's end was known).
    ASSERT_TRUE(context_.launch(test::engineLaunch(dir_ / "live", config_, 2, 600000)));
    QString error;
    ASSERT_TRUE(context_.compare(reference, {}, &error)) << error.toStdString();
    const auto notesSay = [&](const char* text) {
        const auto* r = comparison()->result();
        return r && std::any_of(r->notes.begin(), r->notes.end(), [&](const std::string& note) {
                   return note.find(text) != std::string::npos;
               });
    };
    // Compared over every row of the first round, and nothing more to do.
    ASSERT_TRUE(waitFor(
        [&] {
            const auto* r = comparison()->result();
            const uint64_t rows = context_.store()->index().rowCount();
            return r && rows > 0 && r->candidate->rowCount() == rows && !comparison()->running();
        },
        60000));
    ASSERT_TRUE(notesSay("still being written"));
    const auto& status = context_.store()->index().status();
    ASSERT_TRUE(status && !status->processes.empty());
    ASSERT_EQ(::kill(static_cast<pid_t>(status->processes[0].pid), SIGKILL), 0);
    ASSERT_TRUE(waitFor([&] { return notesSay("not a whole run"); }, 60000))
        << comparison()->summary().toStdString();
    EXPECT_FALSE(notesSay("still being written"));
}

// A verdict longer than the status bar's room ends in "…", the whole of it as the bar's tooltip
// while it shows (QStatusBar clipped it mid-path).
TEST_F(CompareTest, ALongVerdictInTheStatusBarIsElidedWithItsWholeTextAsTooltip) {
    MainWindow window(&context_);
    window.resize(900, 700);
    window.show();
    const QString a = dump("a", 2), b = dump("b", 3, {"--nudge-layer", "1"});
    ASSERT_TRUE(context_.compare(a, b));
    ASSERT_TRUE(compared());
    ASSERT_TRUE(waitFor([&] { return !window.statusMessage().isEmpty(); }));
    const QString summary = comparison()->summary();
    ASSERT_GT(window.statusBar()->fontMetrics().horizontalAdvance(summary), window.width());
    EXPECT_TRUE(window.statusMessage().endsWith(QChar(0x2026)))
        << window.statusMessage().toStdString();
    EXPECT_TRUE(summary.startsWith(window.statusMessage().chopped(1)));
    EXPECT_EQ(window.statusBar()->toolTip(), summary);
    EXPECT_LT(window.statusBar()->fontMetrics().horizontalAdvance(window.statusMessage()),
              window.width());
    window.statusBar()->clearMessage();
    EXPECT_TRUE(window.statusBar()->toolTip().isEmpty());
}

// The window: the comparison tab fills, the tree's verdict column shows, F8 jumps, and a click
// on the error plot's marked point selects that op.
TEST_F(CompareTest, TheWindowShowsTheComparisonAndJumps) {
    MainWindow window(&context_);
    window.resize(1500, 950);
    window.show();
    window.activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window));  // F8 is a window shortcut
    auto* tree = window.treePanel()->view();
    EXPECT_TRUE(tree->isColumnHidden(data::OpTreeModel::VerdictColumn));
    EXPECT_FALSE(window.jumpToDivergenceAction()->isEnabled());
    const QString reference = dump("reference", 3),
                  nudged = dump("nudged", 3, {"--nudge-layer", "1"});
    ASSERT_TRUE(context_.compare(reference, nudged));
    ASSERT_TRUE(compared());
    ASSERT_TRUE(waitFor([&] { return window.jumpToDivergenceAction()->isEnabled(); }));
    EXPECT_FALSE(tree->isColumnHidden(data::OpTreeModel::VerdictColumn));
    auto* panel = window.comparePanel();
    EXPECT_NE(panel->summaryText().indexOf(QString::fromLatin1(kNudgedOp)), -1)
        << panel->summaryText().toStdString();
    EXPECT_GT(panel->model()->rowCount(), 0);

    const uint32_t nudgedOp = candidateOpNamed(kNudgedOp);
    context_.cursor()->setOp(candidateOpNamed("LmHead"));
    QTest::keyClick(&window, Qt::Key_F8);
    EXPECT_EQ(context_.cursor()->op(), nudgedOp);
    EXPECT_EQ(context_.cursor()->round(), 0);
    EXPECT_EQ(window.treePanel()->view()->currentIndex().data(data::OpTreeModel::OpRole).toUInt(),
              nudgedOp);
    // Both runs of the selected tensor are drawn (the reference dashed).
    ASSERT_EQ(panel->statisticPlot()->graphCount(), 2);
    EXPECT_EQ(panel->statisticPlot()->graph(1)->pen().style(), Qt::DashLine);
    EXPECT_EQ(panel->statisticPair().candidate.x.size(), 3);

    // Click the first divergence's point on the error plot: from elsewhere, it selects the op.
    context_.cursor()->setOp(candidateOpNamed("LmHead"));
    ASSERT_EQ(context_.cursor()->op(), candidateOpNamed("LmHead"));
    const auto& profile = panel->errorProfile();
    ASSERT_GE(profile.firstDivergenceX, 0);
    const int at = static_cast<int>(profile.firstDivergenceX);
    auto* plot = panel->errorPlot();
    plot->replot();
    const QPoint point(static_cast<int>(plot->xAxis->coordToPixel(profile.series.x[at])),
                       static_cast<int>(plot->yAxis->coordToPixel(profile.series.y[at])));
    QTest::mouseClick(plot, Qt::LeftButton, {}, point);
    EXPECT_EQ(context_.cursor()->op(), nudgedOp);
    // The weight in both runs: the difference is at the nudged element, nothing else differs.
    ASSERT_TRUE(context_.goToFirstDivergence());
    panel->showTensorPair();
    auto* pairDoc = panel->pairView()->document();
    ASSERT_TRUE(waitFor([&] { return pairDoc->candidate() != nullptr; }));
    const auto& diff = pairDoc->difference();
    EXPECT_EQ(diff.largestAt, 8u + 3u);  // hidden + 3: the element the engine nudged
    EXPECT_NEAR(diff.largest,
                std::fabs(pairDoc->candidate()->at(11) - pairDoc->reference()->at(11)), 0);
    EXPECT_EQ(diff.nonFiniteMismatches, 0u);
    const QImage d = panel->pairView()->image(2);
    ASSERT_EQ(d.width(), 8);
    ASSERT_EQ(d.height(), 8);
    int white = 0;
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) white += d.pixel(x, y) == qRgb(255, 255, 255) ? 1 : 0;
    EXPECT_EQ(white, 63);
    EXPECT_NE(d.pixel(3, 1), qRgb(255, 255, 255));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(panel->pairView()->shownSize(i), QSize(260, 260)) << i;
    // In a short window the images shrink to their frames: every row stays in view (a 32×32
    // slice showed its first 12 rows, cut without a word, beside "First 32×32 slice").
    window.resize(1500, 480);
    ASSERT_TRUE(waitFor([&] { return panel->pairView()->shownFrame(1).height() < 200; }))
        << panel->pairView()->shownFrame(1).height();
    ASSERT_TRUE(waitFor([&] {
        return panel->pairView()->shownSize(1).height() <=
               panel->pairView()->shownFrame(1).height();
    })) << panel->pairView()->shownSize(1).height()
        << " in " << panel->pairView()->shownFrame(1).height();
    for (int i = 0; i < 3; ++i) {
        const QSize shown = panel->pairView()->shownSize(i);
        const QRect frame = panel->pairView()->shownFrame(i);
        EXPECT_GE(shown.height(), 32) << i;  // drawn still
        EXPECT_LE(shown.height(), frame.height()) << i;
        EXPECT_LE(shown.width(), frame.width()) << i;
    }
    window.resize(1500, 950);
    panel->pairView()->setRelative(true);
    EXPECT_NEAR(pairDoc->difference().largest, 0.05, 1e-6);
    // The born-here op is painted in its colour in the tree.
    tree->scrollTo(tree->currentIndex());
    const QImage shot = window.grab().toImage();
    const QColor born = RunComparison::verdictColor(Verdict::BornHere);
    EXPECT_GT(test::countPixels(shot, [&](QColor c) { return c == born; }), 200);
}

// The ops, rows and layers of a synthetic dump.
struct SyntheticSize {
    uint64_t ops, rows;
    int layers;
    bool tensors = false;  // .bin files of the layer-level ops' tensors
};

// A synthetic pair of that size written below `dir`: a reference, and a candidate with an
// overflow planted in layer `nanLayer` at round `nanRound`.
synthetic::SyntheticPair writeSyntheticPairOfSize(const std::string& dir, SyntheticSize size,
                                                  int nanLayer, int nanRound) {
    synthetic::SyntheticDumpOptions options;
    options.ops = size.ops;
    options.rows = size.rows;
    options.layers = size.layers;
    options.tensors = size.tensors;
    return synthetic::writeSyntheticPair(options, dir, nanLayer, nanRound);
}

// Shows `window` (1500x950) and compares in it a synthetic pair written below `dir`: a
// reference, and a candidate with an overflow planted in layer `nanLayer` at round `nanRound`.
void compareSyntheticPairIn(MainWindow& window, const std::string& dir, SyntheticSize size,
                            int nanLayer, int nanRound) {
    const auto dumps = writeSyntheticPairOfSize(dir, size, nanLayer, nanRound);
    window.resize(1500, 950);
    window.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
    ASSERT_TRUE(window.context()->compare(QString::fromStdString(dumps.reference.root),
                                          QString::fromStdString(dumps.candidate.root)));
}

// A run compared with itself agrees, and the summary says that it is one folder twice (a user
// who picked the same folder twice read "The runs agree" as two runs agreeing).
TEST(CompareInApp, ARunComparedWithItselfIsSaidToBe) {
    test::TempDir dir("ui-compare-self");
    const auto dumps = writeSyntheticPairOfSize(dir.path(), {40, 200, 2}, 1, 2);
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    const QString root = QString::fromStdString(dumps.reference.root);
    // The same folder, once by another spelling of its path.
    ASSERT_TRUE(context.compare(root, root + "/./"));
    ASSERT_TRUE(waitFor([&] { return context.comparison()->result() != nullptr; }));
    EXPECT_TRUE(context.comparison()->summary().startsWith("The runs agree"))
        << context.comparison()->summary().toStdString();
    EXPECT_TRUE(context.comparison()->summary().contains("same dump folder"))
        << context.comparison()->summary().toStdString();
    // Two runs that agree are not said to be one.
    ASSERT_TRUE(context.compare(root, QString::fromStdString(dumps.candidate.root)));
    ASSERT_TRUE(waitFor([&] {
        return context.comparison()->result() != nullptr &&
               !context.comparison()->summary().startsWith("Comparing");
    }));
    EXPECT_FALSE(context.comparison()->summary().contains("same dump folder"))
        << context.comparison()->summary().toStdString();
}

// A pair of dumps to compare, in an application with no recent sessions yet.
struct RecentComparison {
    test::TempDir dir{"ui-compare-recent"};
    synthetic::SyntheticPair dumps = writeSyntheticPairOfSize(dir.path(), {40, 200, 2}, 1, 2);
    QString reference = QString::fromStdString(dumps.reference.root),
            candidate = QString::fromStdString(dumps.candidate.root);
    context::AppContext context;
    RecentComparison() { context.recentSessions()->clear(); }
    // Compares the pair and waits for the result.
    bool compareToTheEnd() {
        const int before = context.comparison()->finishedCount();
        return context.compare(reference, candidate) && waitFor([&] {
                   return context.comparison()->finishedCount() > before &&
                          context.comparison()->result() != nullptr;
               });
    }
    // How many comparisons (pairs) the recent sessions hold.
    long comparedPairs() const {
        const auto recent = context.recentSessions()->list();
        return std::count_if(recent.begin(), recent.end(), [](const auto& s) {
            return s.kind == session::RecentSession::Kind::Compare;
        });
    }
};

// A comparison is among the recent sessions (it was not: comparing again meant finding both
// folders again), once for a pair however often it is compared, and taken up from the start
// page it opens the candidate and compares it with the reference again.
TEST(CompareInApp, AComparisonIsARecentSessionComparedAgainFromTheStartPage) {
    RecentComparison pair;
    const QString &reference = pair.reference, &candidate = pair.candidate;
    context::AppContext& context = pair.context;
    MainWindow window(&context);
    window.show();
    for (int time = 0; time < 2; ++time) ASSERT_TRUE(pair.compareToTheEnd());
    EXPECT_EQ(pair.comparedPairs(), 1);
    window.showPage(MainWindow::Page::Start);
    auto* list = window.startPage()->recentList();
    ASSERT_GE(list->count(), 1);
    const QString text = list->item(0)->text();
    EXPECT_TRUE(text.startsWith(candidate + "\ncompared ")) << text.toStdString();
    EXPECT_TRUE(text.endsWith("with the reference " + reference)) << text.toStdString();
    // Another dump shown meanwhile, nothing compared: the start page compares the pair again.
    context.closeReference();
    context.openDump(reference);
    ASSERT_TRUE(waitFor([&] {
        return context.store()->isOpen() && context.store()->requestedPath() == reference;
    }));
    ASSERT_EQ(context.comparison()->result(), nullptr);
    const int before = context.comparison()->finishedCount();
    window.showPage(MainWindow::Page::Start);
    int row = 0;  // the dump opened is a recent session too, listed first now
    while (row < list->count() && !list->item(row)->text().contains("\ncompared ")) ++row;
    ASSERT_LT(row, list->count());
    window.startPage()->activateRecent(row);
    ASSERT_TRUE(waitFor([&] {
        return context.comparison()->finishedCount() > before &&
               context.comparison()->result() != nullptr;
    }));
    EXPECT_EQ(window.page(), MainWindow::Page::Workspace);
    EXPECT_EQ(QFileInfo(context.store()->requestedPath()).absoluteFilePath(),
              QFileInfo(candidate).absoluteFilePath());
    EXPECT_EQ(context.reference()->requestedPath(), reference);
    EXPECT_FALSE(context.comparison()->summary().contains("same dump folder"))
        << context.comparison()->summary().toStdString();
}

// A comparison cut short by the user's next step (another dump opened before it finished) is no
// recent session: it was listed at once, and the start page offered a pair never compared.
TEST(CompareInApp, AComparisonCutShortIsNoRecentSession) {
    RecentComparison pair;
    const QString &reference = pair.reference, &candidate = pair.candidate;
    context::AppContext& context = pair.context;
    QSignalSpy loaded(&context, &context::AppContext::sessionLoaded);
    // No event is handled between the two calls: the comparison cannot have finished.
    ASSERT_TRUE(context.compare(reference, candidate));
    context.openDump(reference);
    ASSERT_TRUE(waitFor([&] {
        return !loaded.isEmpty() && context.store()->isOpen() &&
               context.store()->requestedPath() == reference && !context.comparison()->running();
    }));
    EXPECT_EQ(context.comparison()->result(), nullptr);
    EXPECT_EQ(pair.comparedPairs(), 0);
    // Compared to the end, the pair is one.
    ASSERT_TRUE(pair.compareToTheEnd());
    EXPECT_EQ(pair.comparedPairs(), 1);
}

// Compare with a folder that holds no dump keeps the dialog open, saying why under the fields
// (it closed behind a message box, and what was typed went with it) until a path is changed; the
// reference filled in from the last comparison is selected, so that typing replaces it (it was
// appended to).
TEST(CompareDialog, ABadFolderIsSaidInTheDialogWhichStays) {
    test::TempDir dir("ui-compare-dialog");
    const auto dumps = writeSyntheticPairOfSize(dir.path(), {20, 60, 2}, 1, 2);
    const QString shown = QString::fromStdString(dumps.candidate.root);
    widgets::CompareDialog dialog(shown);
    dialog.setReference(QString::fromStdString(dumps.reference.root));
    auto* reference = dialog.findChild<QLineEdit*>(QStringLiteral("reference"));
    ASSERT_NE(reference, nullptr);
    EXPECT_EQ(reference->selectedText(), reference->text());
    dialog.show();
    reference->setText(QString::fromStdString(dir / "no-such-run"));
    dialog.accept();
    EXPECT_EQ(dialog.result(), QDialog::Rejected);
    EXPECT_TRUE(dialog.isVisible());
    EXPECT_TRUE(dialog.problem().startsWith("The reference: ")) << dialog.problem().toStdString();
    EXPECT_EQ(reference->text().toStdString(), dir / "no-such-run");  // kept, to be corrected
    // Corrected: the problem was the old text's, and goes (it stayed, red, until Compare).
    reference->setText(QString::fromStdString(dumps.reference.root));
    EXPECT_TRUE(dialog.problem().isEmpty()) << dialog.problem().toStdString();
    dialog.accept();
    EXPECT_EQ(dialog.result(), QDialog::Accepted);
    EXPECT_TRUE(dialog.problem().isEmpty()) << dialog.problem().toStdString();
}

// A small pair (an overflow in layer 1 at round 2) compared in a window, which is at its first
// divergence.
class SmallComparedPair : public ::testing::Test {
protected:
    void SetUp() override {
        compareSyntheticPairIn(window_, dir_.path(), {60, 600, 3, true}, 1, 2);
        ASSERT_TRUE(waitFor([&] { return context_.comparison()->result() != nullptr; }));
        ASSERT_TRUE(context_.goToFirstDivergence());
    }
    test::TempDir dir_{"ui-compare-small"};
    context::AppContext context_;
    MainWindow window_{&context_};
    widgets::ComparePanel* panel_ = window_.comparePanel();
};

// At the app's smallest size the comparison's plots keep their legends beside the axes, off the
// points (inside, they hid the ops after the first divergence), and a measure's name too long for
// a short plot's axis ends in "…" within it (it was cut off at both ends).
TEST_F(SmallComparedPair, SmallPlotsKeepLegendsOffThePointsAndLabelsWithinTheirAxes) {
    ASSERT_TRUE(waitFor([&] { return panel_->isVisible(); }));
    window_.resize(1055, 704);
    for (QCustomPlot* plot : {panel_->errorPlot(), panel_->statisticPlot()}) {
        ASSERT_TRUE(waitFor([&] { return plot->width() < 800 && plot->graphCount() > 0; }));
        plot->replot();
        ASSERT_TRUE(plot->legend->visible());
        ASSERT_GT(plot->legend->itemCount(), 0);
        EXPECT_FALSE(plot->legend->outerRect().intersects(plot->axisRect()->rect()));
        const QString full = plot->yAxis->property("probeFullLabel").toString();
        const QString shown = plot->yAxis->label();
        ASSERT_FALSE(full.isEmpty());
        EXPECT_LE(QFontMetrics(plot->yAxis->labelFont()).horizontalAdvance(shown),
                  plot->axisRect()->height())
            << shown.toStdString();
        if (shown != full) {
            EXPECT_TRUE(shown.endsWith(QChar(0x2026))) << shown.toStdString();
            EXPECT_TRUE(full.startsWith(shown.chopped(1))) << shown.toStdString();
        }
    }
    // The panel's Jump button keeps room for its text there (beside the legend it was squeezed
    // to "ump to first divergence").
    QPushButton* jump = nullptr;
    for (auto* button : panel_->findChildren<QPushButton*>())
        if (button->text() == QStringLiteral("Jump to first divergence")) jump = button;
    ASSERT_NE(jump, nullptr);
    ASSERT_TRUE(waitFor([&] { return jump->isVisible() && panel_->width() < 700; }));
    EXPECT_GE(jump->width(), jump->sizeHint().width()) << panel_->width();
    // The error plot made shorter by its splitter: its measure's name does not fit whole, and
    // ends in "…" within the axis.
    auto* plots = qobject_cast<QSplitter*>(panel_->errorPlot()->parentWidget());
    ASSERT_NE(plots, nullptr);
    plots->setSizes({90, 200, 300});
    ASSERT_TRUE(waitFor([&] { return panel_->errorPlot()->height() < 130; }))
        << panel_->errorPlot()->height();
    panel_->errorPlot()->replot();
    const QString shortLabel = panel_->errorPlot()->yAxis->label();
    EXPECT_NE(shortLabel, panel_->errorPlot()->yAxis->property("probeFullLabel").toString());
    EXPECT_TRUE(shortLabel.endsWith(QChar(0x2026))) << shortLabel.toStdString();
    EXPECT_LE(QFontMetrics(panel_->errorPlot()->yAxis->labelFont()).horizontalAdvance(shortLabel),
              panel_->errorPlot()->axisRect()->height());
    // Given room, the name is whole again.
    window_.resize(1500, 1400);
    plots->setSizes({500, 300, 300});
    ASSERT_TRUE(waitFor([&] { return panel_->errorPlot()->height() > 300; }));
    panel_->errorPlot()->replot();
    EXPECT_EQ(panel_->errorPlot()->yAxis->label(),
              panel_->errorPlot()->yAxis->property("probeFullLabel").toString());
}

// The tensor of an op in one run only (child ops dumped in the candidate, the reference dumped
// layer-level ops only): the pair plot says why the reference has no line, and draws this run's
// values (it was an empty grid).
// Marks the two dumps built in dir/ref and dir/cand complete, shows `window` (1500x950) and
// compares them in it until the result is there.
bool compareBuiltPair(MainWindow& window, const test::TempDir& dir, test::DumpBuilder& reference,
                      test::DumpBuilder& candidate) {
    reference.setStatus("complete");
    candidate.setStatus("complete");
    window.resize(1500, 950);
    window.show();
    auto* context = window.context();
    return QTest::qWaitForWindowExposed(&window) &&
           context->compare(QString::fromStdString(dir / "ref"),
                            QString::fromStdString(dir / "cand")) &&
           waitFor([&] { return context->comparison()->result() != nullptr; });
}

// An op whose tensor file one run could not read (truncated) is judged by its statistics; the
// compared-ops table says so in its Rule column and tooltip (it read "matches" with nothing
// beside it, and the file was named in the notes only).
TEST(CompareTable, AnOpJudgedWithoutItsUnreadableDataSaysSo) {
    test::TempDir dir("ui-compare-unread");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    for (test::DumpBuilder* dump : {&reference, &candidate}) {
        dump->addRow(0, "0", "layer", "Layer", false, {1, 2, 3, 4}, {2, 2});
        dump->addRow(0, "0", "layer", "Layer", true, {2, 4, 6, 8}, {2, 2});
    }
    const std::vector<std::string> bins = test::filesNamed(dir / "cand", "outtensor0.bin");
    ASSERT_EQ(bins.size(), 1u);
    ::truncate(bins.front().c_str(), 40);
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    data::CompareOpsModel table(context.comparison());
    ASSERT_TRUE(waitFor([&] { return table.rowCount() == 1; })) << table.rowCount();
    EXPECT_EQ(table.index(0, data::CompareOpsModel::VerdictColumn).data().toString(),
              QStringLiteral("matches"));
    EXPECT_EQ(table.index(0, data::CompareOpsModel::RuleColumn).data().toString(),
              QStringLiteral("data unread"));
    EXPECT_TRUE(table.index(0, data::CompareOpsModel::RuleColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("output 0 [float 2x2]: its data could not be read (see Notes), "
                              "judged by its statistics"))
        << table.index(0, data::CompareOpsModel::RuleColumn)
               .data(Qt::ToolTipRole)
               .toString()
               .toStdString();
}

TEST(ComparePanelPlot, ATensorInOneRunOnlyIsSaidNotDrawnAsNothing) {
    test::TempDir dir("ui-compare-one-run");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    for (int round = 0; round < 2; ++round) {
        for (test::DumpBuilder* dump : {&reference, &candidate}) {
            dump->addRow(round, "0", "layer", "Layer", false, {1, 2});
            dump->addRow(round, "0", "layer", "Layer", true, {1, 2});
        }
        candidate.addRow(round, "0_0", "layer/mul", "aten::mul", true, {1, 2});
    }
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    const auto& idx = context.store()->index();
    const uint32_t onlyHere = idx.findOp(0, "0_0");
    ASSERT_NE(onlyHere, kNone);
    context.cursor()->setOp(onlyHere);
    ASSERT_NE(context.cursor()->slot(), kNone);
    QCustomPlot* plot = window.comparePanel()->statisticPlot();
    auto said = [&] {
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)))
                if (text->text().startsWith("No round of this tensor pairs with one of the "
                                            "reference (an op in one run only): this run's "
                                            "values alone") &&
                    plot->graph(0)->dataCount() == 2 && plot->graph(1)->dataCount() == 0)
                    return true;
        return false;
    };
    ASSERT_TRUE(waitFor(said));
    // A tensor both runs have: drawn, the words gone.
    context.cursor()->setOp(idx.findOp(0, "0"));
    ASSERT_TRUE(waitFor([&] { return !said() && plot->graph(0)->dataCount() > 0; }));
}

// A candidate whose first process is a helper (a check of torch run first) and whose second is
// the model: the comparison pairs the model's, and the tree shows it, where it showed the helper
// with nothing compared.
TEST(ComparePanelPlot, TheTreeShowsTheCandidatesProcessThatWasCompared) {
    test::TempDir dir("ui-compare-paired-process");
    test::DumpBuilder reference(dir / "ref", "777"), helper(dir / "cand", "100"),
        model(dir / "cand", "900");
    helper.addRow(0, "0", "linear_0", "aten::linear", true, {1, 2});
    for (test::DumpBuilder* dump : {&reference, &model}) {
        dump->addRow(0, "0", "encoder", "Encoder", true, {1, 2});
        dump->addRow(0, "1", "head", "Head", true, {3, 4});
    }
    helper.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, model));
    const auto& idx = context.store()->index();
    ASSERT_EQ(idx.processCount(), 2u);
    const auto* r = context.comparison()->result();
    ASSERT_EQ(r->processPairs.size(), 1u);
    EXPECT_EQ(idx.process(r->processPairs[0].second).key, "900");
    ASSERT_TRUE(waitFor([&] {
        const uint32_t op = context.cursor()->op();
        return op < idx.opCount() && idx.process(idx.op(op).process).key == "900";
    }));
}

// Two runs of which no op pairs up (another model): the error plot says so; it was an empty
// grid on an axis of -0.4..0.4.
TEST(ComparePanelPlot, RunsThatPairNowhereAreSaidOnTheErrorPlot) {
    test::TempDir dir("ui-compare-nothing-pairs");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    reference.addRow(0, "0", "encoder", "Encoder", true, {1, 2});
    candidate.addRow(0, "0", "decoder", "Decoder", true, {1, 2});
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    window.showView(MainWindow::View::Compare);
    QCustomPlot* plot = window.comparePanel()->errorPlot();
    const auto said = [&] {
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)))
                if (text->text().startsWith("Nothing to plot: no op of this run pairs with one "
                                            "of the reference"))
                    return true;
        return false;
    };
    ASSERT_TRUE(waitFor(said));
    EXPECT_FALSE(plot->xAxis->ticks());
    EXPECT_FALSE(plot->legend->visible());
}

// A candidate that ran on past the reference's last round, into NaN: its rounds are drawn
// beyond the reference's, NaN marked (the plot stopped at the reference's last round).
TEST(ComparePanelPlot, RoundsOfThisRunBeyondTheReferencesAreDrawn) {
    test::TempDir dir("ui-compare-longer-run");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    for (int round = 0; round < 4; ++round)
        for (test::DumpBuilder* dump : {&reference, &candidate}) {
            if (dump == &reference && round >= 2) continue;
            const std::optional<double> max =
                round >= 2 ? std::optional<double>(std::nan("")) : std::nullopt;
            dump->addRow(round, "0", "layer", "Layer", true, {1, 2}, {}, max);
        }
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    context.cursor()->setOp(context.store()->index().findOp(0, "0"));
    ASSERT_NE(context.cursor()->slot(), kNone);
    const auto pair =
        data::statisticPair(*context.comparison(), context.cursor()->slot(), analysis::Stat::Max);
    EXPECT_EQ(pair.candidate.x, QVector<double>({0, 1, 2, 3}));
    EXPECT_EQ(pair.reference.x, QVector<double>({0, 1}));
    ASSERT_EQ(pair.candidate.markers.size(), 2);
    EXPECT_EQ(pair.candidate.markers[0].x, 2);
    EXPECT_EQ(pair.candidate.markers[1].x, 3);
    EXPECT_EQ(pair.candidate.y[1], 2);  // Max of {1, 2}
    ASSERT_TRUE(
        waitFor([&] { return window.comparePanel()->statisticPair().candidate.x.size() == 4; }));
    EXPECT_GE(window.comparePanel()->statisticPlot()->xAxis->range().upper, 3);
}

// Both runs' values beyond what a plot can draw: drawn at its limit, and said atop it with the
// legend kept (1e300 against 1.7e308 read as one line at the limit).
TEST(ComparePanelPlot, ValuesBeyondWhatAPlotCanDrawAreSaidOnThePairPlot) {
    test::TempDir dir("ui-compare-huge");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    for (int round = 0; round < 2; ++round)
        for (test::DumpBuilder* dump : {&reference, &candidate}) {
            // Every statistic of that size, whichever the plot shows.
            const double value = dump == &reference ? 1e300 : round ? 1.7e308 : 1.0;
            dump->addStatisticsRow(round, "0", "layer", "Layer", value, -value, value, value);
        }
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    window.showView(MainWindow::View::Compare);
    context.cursor()->setOp(context.store()->index().findOp(0, "0"));
    ASSERT_TRUE(
        waitFor([&] { return window.comparePanel()->statisticPair().candidate.x.size() == 2; }));
    const auto& pair = window.comparePanel()->statisticPair();
    EXPECT_EQ(pair.reference.beyondPlot + pair.candidate.beyondPlot, 3);
    QCustomPlot* plot = window.comparePanel()->statisticPlot();
    const auto said = [&] {
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)))
                if (text->text().startsWith("Values beyond ±1e249 are drawn at ±1e249"))
                    return text->text();
        return QString();
    };
    ASSERT_TRUE(waitFor([&] { return !said().isEmpty(); }));
    EXPECT_TRUE(said().endsWith("this run 1, the reference 2")) << said().toStdString();
    EXPECT_TRUE(plot->legend->visible());
}

// A tensor of this run alone: its values are drawn and the plot says why there is no reference,
// along its top on a ground of its own (drawn in the middle over 2,000 points it could not be
// read: a GUI walk).
TEST(ComparePanelPlot, ATensorOfOneRunIsSaidAboveItsPoints) {
    test::TempDir dir("ui-compare-one-run-plot");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    for (int round = 0; round < 3; ++round) {
        reference.addRow(round, "0", "layer", "Layer", true, {1, 2});
        candidate.addRow(round, "0", "layer", "Layer", true, {1, 2});
        candidate.addRow(round, "1", "extra", "Extra", true, {1, 2, static_cast<float>(round)});
    }
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    window.showView(MainWindow::View::Compare);
    context.cursor()->setOp(context.store()->index().findOp(0, "1"));
    ASSERT_TRUE(
        waitFor([&] { return window.comparePanel()->statisticPair().candidate.x.size() == 3; }));
    QCustomPlot* plot = window.comparePanel()->statisticPlot();
    QCPItemText* said = nullptr;
    ASSERT_TRUE(waitFor([&] {
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)))
                if (text->text().endsWith("this run's values alone")) said = text;
        return said != nullptr;
    }));
    EXPECT_EQ(said->positionAlignment(), Qt::AlignHCenter | Qt::AlignTop);
    EXPECT_NE(said->brush().style(), Qt::NoBrush);
}

// Runs of statistics only, compared while the comparison was not in view: "Tensor in both runs"
// says why it has nothing to draw, whatever is selected (it showed three blank strips).
TEST(ComparePanelPlot, RunsOfStatisticsOnlySayWhyNoTensorPairIsDrawn) {
    test::TempDir dir("ui-compare-statistics-only");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    for (int round = 0; round < 2; ++round)
        for (test::DumpBuilder* dump : {&reference, &candidate})  // statistics, no tensor file
            for (const char* io : {"input", "output"})
                dump->appendRaw(round, "0_777," + std::to_string(round) + ",layer,Layer,0," + io +
                                           ",0,float,nd,3,3.000000,-2.000000,0.666667,3.741657,"
                                           "N/A\n");
    context::AppContext context;
    MainWindow window(&context);
    auto* panel = window.comparePanel();
    auto* pairView = panel->pairView();
    panel->findChild<QTabWidget*>()->setCurrentWidget(pairView);  // the tab chosen before
    window.showView(MainWindow::View::Tensor);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    EXPECT_EQ(context.comparison()->result()->tensorsWithData, 0u);
    window.showView(MainWindow::View::Compare);
    ASSERT_TRUE(waitFor([&] { return panel->isVisible(); }));
    // Of the runs, or of the tensor the cursor is on.
    const auto saysWhy = [&] {
        return pairView->factsText().startsWith("No tensor has its data in both runs") ||
               pairView->factsText().startsWith("Both runs kept only statistics of this tensor");
    };
    EXPECT_TRUE(waitFor(saysWhy)) << pairView->factsText().toStdString();
    context.cursor()->setOp(context.store()->index().findOp(0, "0"));
    EXPECT_TRUE(waitFor(saysWhy)) << pairView->factsText().toStdString();
}

// Jump to first divergence selects its row in the table of compared ops and scrolls it into
// view, also with the table sorted; the table stayed where it was (found by a GUI walk).
// An op's name is a path: cut to fit the Op column, it keeps its end, the op's own name (cut at
// the end it read "shared.backward_1/…" for every op of a layer), and its tooltip holds it whole,
// then why the op diverges.
TEST_F(SmallComparedPair, LongOpNamesKeepTheirEndAndAreWholeInTheTooltip) {
    QTableView* table = panel_->table();
    const QAbstractItemModel* rows = table->model();
    ASSERT_TRUE(waitFor([&] { return rows->rowCount() > 0; }));
    bool sawCause = false;
    int cut = 0;  // names cut
    for (int i = 0; i < rows->rowCount(); ++i) {
        const QModelIndex op = rows->index(i, data::CompareOpsModel::OpColumn);
        const QString name = op.data().toString();
        const QString tip = op.data(Qt::ToolTipRole).toString();
        ASSERT_TRUE(tip.startsWith(name)) << tip.toStdString() << " / " << name.toStdString();
        const QString cause =
            rows->index(i, data::CompareOpsModel::CauseColumn).data(Qt::ToolTipRole).toString();
        EXPECT_EQ(tip, cause.isEmpty() ? name : name + "\n" + cause);
        sawCause = sawCause || !cause.isEmpty();
        // Cut to a column with room for its own name twice over: the end is that name (on one
        // line: a wrapped name is cut after its first line, whatever the elide mode).
        ASSERT_FALSE(table->wordWrap());
        const QString own = name.section(QLatin1Char('/'), -1);
        const QFontMetrics metrics = table->fontMetrics();
        const int narrow =
            2 * metrics.horizontalAdvance(own + "/") + metrics.horizontalAdvance("…");
        if (metrics.horizontalAdvance(name) <= narrow) continue;
        ++cut;
        const QString shown = metrics.elidedText(name, table->textElideMode(), narrow);
        EXPECT_TRUE(shown.endsWith("/" + own))
            << shown.toStdString() << " for " << name.toStdString();
    }
    EXPECT_TRUE(sawCause);
    EXPECT_GT(cut, 0);
}

// Each verdict and each measure's header fit their columns (they were cut at 110 pixels: "born
// here ...", "Max rel. err (%").
TEST_F(SmallComparedPair, VerdictsAndHeadersFitTheirColumns) {
    QTableView* table = panel_->table();
    const QAbstractItemModel* rows = table->model();
    ASSERT_TRUE(waitFor([&] { return rows->rowCount() > 0; }));
    const QFontMetrics metrics = table->fontMetrics();
    bool sawInside = false;
    for (int i = 0; i < rows->rowCount(); ++i) {
        const QString verdict =
            rows->index(i, data::CompareOpsModel::VerdictColumn).data().toString();
        sawInside = sawInside || verdict == "born below";
        EXPECT_LT(metrics.horizontalAdvance(verdict),
                  table->columnWidth(data::CompareOpsModel::VerdictColumn))
            << verdict.toStdString();
    }
    EXPECT_TRUE(sawInside);  // the longest verdict is there to fit
    const QFontMetrics header = table->horizontalHeader()->fontMetrics();
    for (int column = data::CompareOpsModel::RuleColumn;
         column < data::CompareOpsModel::MaxAbsoluteErrorColumn; ++column) {
        const QString title = rows->headerData(column, Qt::Horizontal).toString();
        EXPECT_LT(header.horizontalAdvance(title) + 16, table->columnWidth(column))
            << title.toStdString();
    }
}

// A layer whose divergence is born inside it is no birth in the error plot: drawn as one, at the
// layer's start, it sat left of the first-divergence line and read as a divergence born before
// it (found trying the app as a new user). No born-here disc or mark is left of the line. It is
// born below, in that colour, in the plot, the table and the tree ("born here (inside)" was in
// born here's red in the table, born here in the tree, and had no point: found by new users).
TEST_F(SmallComparedPair, ALayerWhoseDivergenceIsBornInsideIsNoBirthInThePlot) {
    ASSERT_TRUE(waitFor([&] { return panel_->isVisible(); }));
    const auto& r = *context_.comparison()->result();
    const auto& profile = panel_->errorProfile();  // the one drawn
    ASSERT_GE(profile.firstDivergenceX, 0);
    std::vector<double> insideX;
    for (int i = 0; i < profile.comparedOps.size(); ++i) {
        const auto& op = r.ops[profile.comparedOps[i]];
        if (op.verdict == analysis::OpVerdict::BornHere && op.bornInChild) {
            insideX.push_back(profile.series.x[i]);
            EXPECT_EQ(profile.verdicts[i], static_cast<int>(RunComparison::Verdict::BornBelow));
        }
        if (profile.verdicts[i] == static_cast<int>(RunComparison::Verdict::BornHere)) {
            EXPECT_GE(profile.series.x[i], profile.firstDivergenceX) << i;
        }
    }
    ASSERT_FALSE(insideX.empty());  // the planted overflow's layer
    // Drawn: the line, then discs of matches, born below, inherited and born here, then each
    // one's marks of errors not finite (NaN, +Inf, -Inf). Born here's discs and marks (graphs 4
    // and 14-16) are all at or right of the line; born below's (2, 8-10) hold the layer's point.
    QCustomPlot* plot = panel_->errorPlot();
    plot->replot();
    ASSERT_EQ(plot->graph(2)->name(),
              RunComparison::verdictText(RunComparison::Verdict::BornBelow));
    ASSERT_EQ(plot->graph(4)->name(), RunComparison::verdictText(RunComparison::Verdict::BornHere));
    int drawn = 0;
    for (int g : {4, 14, 15, 16})
        for (auto p = plot->graph(g)->data()->constBegin(); p != plot->graph(g)->data()->constEnd();
             ++p, ++drawn)
            EXPECT_GE(p->key, profile.firstDivergenceX) << "graph " << g;
    EXPECT_GT(drawn, 0);
    for (const double x : insideX) {
        bool drawnBelow = false;
        for (int g : {2, 8, 9, 10})
            for (auto p = plot->graph(g)->data()->constBegin();
                 p != plot->graph(g)->data()->constEnd(); ++p)
                drawnBelow = drawnBelow || p->key == x;
        EXPECT_TRUE(drawnBelow) << "the layer at " << x;
    }
    // The table: its row in born below's colour, "born below"; the tree says so in its round.
    const auto* rows = panel_->model();
    int insideRows = 0;
    for (int i = 0; i < rows->rowCount(); ++i) {
        const auto& op =
            r.ops[rows->index(i, 0).data(data::CompareOpsModel::ComparedOpRole).toUInt()];
        if (op.verdict != analysis::OpVerdict::BornHere) continue;
        const QModelIndex verdict = rows->index(i, data::CompareOpsModel::VerdictColumn);
        const QColor color = verdict.data(Qt::BackgroundRole).value<QColor>();
        EXPECT_EQ(color,
                  RunComparison::verdictColor(op.bornInChild ? RunComparison::Verdict::BornBelow
                                                             : RunComparison::Verdict::BornHere))
            << verdict.data().toString().toStdString();
        EXPECT_EQ(verdict.data().toString(), op.bornInChild ? "born below" : "born here");
        insideRows += op.bornInChild;
        EXPECT_EQ(
            context_.comparison()->shownVerdictOf(op.candidateOp, op.candidateRound),
            op.bornInChild ? RunComparison::Verdict::BornBelow : RunComparison::Verdict::BornHere);
    }
    EXPECT_EQ(insideRows, static_cast<int>(insideX.size()));
}

TEST_F(SmallComparedPair, TheTableFollowsTheJumpToTheFirstDivergence) {
    ASSERT_TRUE(waitFor([&] { return panel_->isVisible(); }));
    const auto& r = *context_.comparison()->result();
    ASSERT_TRUE(r.firstBornHere);
    QTableView* table = nullptr;
    for (QTableView* view : panel_->findChildren<QTableView*>())
        if (view->model() && view->model()->columnCount() > data::CompareOpsModel::OpColumn)
            table = view;
    ASSERT_NE(table, nullptr);
    auto selectedOp = [&] {
        return table->currentIndex().data(data::CompareOpsModel::ComparedOpRole).toUInt();
    };
    auto shown = [&] {
        return table->viewport()->rect().intersects(table->visualRect(table->currentIndex()));
    };
    ASSERT_TRUE(waitFor([&] { return selectedOp() == *r.firstBornHere; }))
        << selectedOp() << " vs " << *r.firstBornHere;
    EXPECT_TRUE(shown());
    // Elsewhere, then the jump again with the table sorted by another column.
    context_.cursor()->setRow(0);
    ASSERT_TRUE(waitFor([&] { return selectedOp() != *r.firstBornHere; }));
    table->sortByColumn(data::CompareOpsModel::VerdictColumn, Qt::DescendingOrder);
    ASSERT_TRUE(context_.goToFirstDivergence());
    ASSERT_TRUE(waitFor([&] { return selectedOp() == *r.firstBornHere; }))
        << selectedOp() << " vs " << *r.firstBornHere;
    EXPECT_TRUE(shown());
    // A table narrower than its columns, scrolled to its right end: the jump shows the row with
    // its round (scrolled to the op's column, the rounds to its left were hidden).
    window_.resize(1055, 704);
    context_.cursor()->setRow(0);
    ASSERT_TRUE(waitFor([&] { return selectedOp() != *r.firstBornHere; }));
    QScrollBar* sideways = table->horizontalScrollBar();
    ASSERT_TRUE(waitFor([&] { return sideways->maximum() > 0; }));
    sideways->setValue(sideways->maximum());
    ASSERT_TRUE(context_.goToFirstDivergence());
    ASSERT_TRUE(waitFor([&] { return selectedOp() == *r.firstBornHere; }));
    // The current cell is the round's: the view scrolls to it by itself as it changes (the
    // first comparison shown scrolled to the op's column).
    EXPECT_EQ(table->currentIndex().column(), data::CompareOpsModel::RoundColumn);
    EXPECT_GE(table->visualRect(table->currentIndex()).left(), 0);
    EXPECT_TRUE(shown());
}

// The tree's verdicts are those of the round chosen, as its statistics are: the op where the
// overflow is born said "born here" in the rounds before it too, where it matches.
TEST_F(SmallComparedPair, TheTreesVerdictsAreThoseOfTheRoundChosen) {
    const auto& r = *context_.comparison()->result();
    ASSERT_TRUE(r.firstBornHere);
    const auto& born = r.ops[*r.firstBornHere];
    ASSERT_GT(born.candidateRound, 0);
    const data::OpTreeModel* tree = window_.treePanel()->model();
    const auto verdict = [&] {
        return tree->indexOfOp(born.candidateOp, data::OpTreeModel::VerdictColumn)
            .data()
            .toString();
    };
    ASSERT_EQ(context_.cursor()->round(), born.candidateRound);  // where the jump went
    EXPECT_EQ(verdict(), QStringLiteral("born here"));
    context_.cursor()->setRound(0);  // before the overflow
    EXPECT_EQ(verdict(), QStringLiteral("matches"));
    EXPECT_EQ(tree->indexOfOp(born.candidateOp).data(data::OpTreeModel::VerdictRole).toInt(),
              static_cast<int>(Verdict::Matches));
    context_.cursor()->setRound(-1);  // latest: over every round
    EXPECT_EQ(verdict(), QStringLiteral("born here"));
}

// The arrow keys in the compared-ops table select the op of the row they move to, as a click
// does: only the highlight moved, the tree and the plots stayed (found by a GUI walk).
// The legend's colours say what they mean, "born here (inside)" included (the table shows it,
// no legend named it).
TEST_F(SmallComparedPair, TheLegendSaysWhatEachVerdictMeans) {
    int swatches = 0;
    for (QLabel* label : panel_->findChildren<QLabel*>()) {
        const QString text = label->text();
        if (text != "born here" && text != "born below" && text != "inherited" &&
            text != "matches" && text != "only in one run")
            continue;
        ++swatches;
        EXPECT_FALSE(label->toolTip().isEmpty()) << text.toStdString();
        if (text == "born below") {  // also an op whose divergence is born inside it
            EXPECT_TRUE(label->toolTip().contains("or its divergence is the one born inside"));
        }
    }
    EXPECT_EQ(swatches, 5);
}

TEST_F(SmallComparedPair, TheArrowKeysInTheTableSelectTheirOpAsAClickDoes) {
    window_.show();
    window_.activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window_));
    window_.showView(MainWindow::View::Compare);
    QTableView* table = panel_->table();
    const int all = static_cast<int>(context_.comparison()->result()->ops.size());
    ASSERT_TRUE(waitFor([&] { return table->model()->rowCount() == all; }));
    const int start = table->currentIndex().row();  // the first divergence's, after the jump
    ASSERT_GE(start, 0);
    ASSERT_LT(start + 2, all);
    table->setFocus();
    ASSERT_TRUE(waitFor([&] { return table->hasFocus(); }));
    for (int step = 1; step <= 2; ++step) {
        QTest::keyClick(table, Qt::Key_Down);
        ASSERT_EQ(table->currentIndex().row(), start + step);
        const QModelIndex current = table->currentIndex();
        EXPECT_EQ(context_.cursor()->op(),
                  current.data(data::CompareOpsModel::CandidateOpRole).toUInt());
        EXPECT_EQ(context_.cursor()->row(),
                  current.data(data::CompareOpsModel::CandidateRowRole).toUInt());
    }
    // The table follows a selection made elsewhere without taking it over.
    const uint32_t elsewhere = context_.store()->index().findOp(0, "0");
    ASSERT_NE(elsewhere, kNone);
    context_.cursor()->setOp(elsewhere);
    EXPECT_EQ(context_.cursor()->op(), elsewhere);
}

// An op that ran in one run only, in one round (a cast the candidate added at round 1): the tree
// says "only in one run" in that round, and nothing in the rounds it did not run in (they were
// blue too, as if it had run there unpaired), nor in the rounds where nothing is unpaired.
TEST(CompareTree, AnOpOfOneRunOnlyIsSoOnlyInTheRoundsItRanIn) {
    test::TempDir dir("ui-compare-one-round");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    for (int round = 0; round < 3; ++round) {
        for (test::DumpBuilder* dump : {&reference, &candidate}) {
            dump->addRow(round, "0", "layer", "Layer", false, {1, 2});
            dump->addRow(round, "0", "layer", "Layer", true, {1, 2});
        }
        if (round == 1) candidate.addRow(round, "0_0", "layer/to", "aten::to", true, {1, 2});
    }
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    ASSERT_EQ(context.comparison()->result()->unpairedOps, 1u);
    const auto& idx = context.store()->index();
    const uint32_t cast = idx.findOp(0, "0_0"), layer = idx.findOp(0, "0");
    ASSERT_NE(cast, kNone);
    ASSERT_NE(layer, kNone);
    RunComparison* comparison = context.comparison();
    EXPECT_EQ(comparison->verdictOf(cast), Verdict::OnlyInOneRun);  // over every round
    EXPECT_EQ(comparison->verdictOf(cast, 1), Verdict::OnlyInOneRun);
    EXPECT_EQ(comparison->verdictOf(cast, 0), Verdict::NotCompared);
    EXPECT_EQ(comparison->verdictOf(cast, 2), Verdict::NotCompared);
    EXPECT_EQ(comparison->verdictOf(layer, 0), Verdict::Matches);
    // As the tree shows it in the round chosen.
    const data::OpTreeModel* tree = window.treePanel()->model();
    const auto shown = [&] {
        return tree->indexOfOp(cast, data::OpTreeModel::VerdictColumn).data().toString();
    };
    context.cursor()->setRound(1);
    EXPECT_EQ(shown(), QStringLiteral("only in one run"));
    context.cursor()->setRound(0);
    EXPECT_EQ(shown(), QString());
    EXPECT_FALSE(tree->indexOfOp(cast).data(Qt::BackgroundRole).isValid());
    context.cursor()->setRound(-1);
    EXPECT_EQ(shown(), QStringLiteral("only in one run"));

    // A candidate that went on past the reference: the layer's rounds 3 and 4 ran in it alone,
    // and show so (they showed nothing, while the tree said "matches" at the latest round).
    for (int round = 3; round < 5; ++round) {
        candidate.addRow(round, "0", "layer", "Layer", false, {1, 2});
        candidate.addRow(round, "0", "layer", "Layer", true, {1, 10.0f + round});
    }
    context::AppContext longer;
    MainWindow longerWindow(&longer);
    ASSERT_TRUE(compareBuiltPair(longerWindow, dir, reference, candidate));
    const uint32_t longerLayer = longer.store()->index().findOp(0, "0");
    EXPECT_EQ(longer.comparison()->verdictOf(longerLayer, 1), Verdict::Matches);
    EXPECT_EQ(longer.comparison()->verdictOf(longerLayer, 4), Verdict::OnlyInOneRun);
    EXPECT_EQ(longer.comparison()->verdictOf(longerLayer, 7), Verdict::NotCompared);

    // Round "latest": the values beside the verdict are round 4's, which only this run has. The
    // verdict is that round's, in its colour, not the green "matches" of rounds 0..2 (new users
    // read it as those values matching: NaN of a live run gone on past its reference); the
    // header and the verdict's tooltip say which rounds were compared.
    const data::OpTreeModel* longerTree = longerWindow.treePanel()->model();
    const auto header = [&] {
        return longerTree->headerData(data::OpTreeModel::VerdictColumn, Qt::Horizontal).toString();
    };
    const auto verdictTip = [&] {
        return longerTree->indexOfOp(longerLayer, data::OpTreeModel::VerdictColumn)
            .data(Qt::ToolTipRole)
            .toString();
    };
    QSignalSpy headerChanged(longerTree, &QAbstractItemModel::headerDataChanged);
    longer.cursor()->setRound(-1);
    EXPECT_EQ(longerTree->indexOfOp(longerLayer, data::OpTreeModel::VerdictColumn).data(),
              QStringLiteral("only in one run"));
    EXPECT_EQ(longerTree->indexOfOp(longerLayer).data(Qt::BackgroundRole).value<QColor>(),
              RunComparison::verdictColor(Verdict::OnlyInOneRun));
    EXPECT_EQ(longerTree->indexOfOp(longerLayer, data::OpTreeModel::MaxColumn).data().toString(),
              QStringLiteral("14"));  // round 4's
    EXPECT_EQ(header(), QStringLiteral("Compared (all)"));
    EXPECT_EQ(verdictTip(), QStringLiteral("Over the 3 rounds compared (0..2); the values beside "
                                           "it are round 4's, which was not compared (the "
                                           "reference has no such execution)"));
    longer.cursor()->setRound(1);
    EXPECT_EQ(header(), QStringLiteral("Compared"));
    EXPECT_EQ(verdictTip(), QString());
    EXPECT_GE(headerChanged.count(), 1);
}

// An op born here inside an op that matches, in a round: the op above says "born below" (a
// decoder's changed weight left its layer's outputs within the tolerance in the later rounds, and
// the layer, closed, read "matches" above its red linear: a GUI walk). Not in the rounds where
// nothing inside is born here, nor on the op born here itself.
TEST(CompareTree, AnOpAboveABirthSaysItIsBornBelow) {
    test::TempDir dir("ui-compare-born-below");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    for (int round = 0; round < 2; ++round) {
        for (test::DumpBuilder* dump : {&reference, &candidate}) {
            dump->addRow(round, "0", "layer", "Layer", false, {1, 2});
            dump->addRow(round, "0", "layer", "Layer", true, {1, 2});
            dump->addRow(round, "0_0", "layer/mlp", "MLP", false, {1, 2});
            dump->addRow(round, "0_0_0", "layer/mlp/linear", "aten::linear", false, {1, 2});
        }
        reference.addRow(round, "0_0_0", "layer/mlp/linear", "aten::linear", true, {1, 2});
        candidate.addRow(round, "0_0_0", "layer/mlp/linear", "aten::linear", true,
                         {1, round == 1 ? 2.5f : 2.0f});
    }
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    const auto& idx = context.store()->index();
    const uint32_t layer = idx.findOp(0, "0"), mlp = idx.findOp(0, "0_0"),
                   linear = idx.findOp(0, "0_0_0");
    ASSERT_NE(linear, kNone);
    RunComparison* comparison = context.comparison();
    ASSERT_EQ(comparison->verdictOf(linear, 1), Verdict::BornHere);
    ASSERT_EQ(comparison->verdictOf(layer, 1), Verdict::Matches);
    ASSERT_EQ(comparison->verdictOf(mlp, 1), Verdict::Matches);  // its inputs
    EXPECT_EQ(comparison->shownVerdictOf(layer, 1), Verdict::BornBelow);
    EXPECT_EQ(comparison->shownVerdictOf(mlp, 1), Verdict::BornBelow);
    EXPECT_EQ(comparison->shownVerdictOf(linear, 1), Verdict::BornHere);
    EXPECT_EQ(comparison->shownVerdictOf(layer, 0), Verdict::Matches);
    EXPECT_EQ(comparison->shownVerdictOf(layer, -1), Verdict::BornBelow);  // in some round
    const data::OpTreeModel* tree = window.treePanel()->model();
    const auto shown = [&](uint32_t op) {
        return tree->indexOfOp(op, data::OpTreeModel::VerdictColumn).data().toString();
    };
    context.cursor()->setRound(1);
    EXPECT_EQ(shown(layer), QStringLiteral("born below"));
    EXPECT_EQ(tree->indexOfOp(layer).data(Qt::BackgroundRole).value<QColor>(),
              RunComparison::verdictColor(Verdict::BornBelow));
    context.cursor()->setRound(0);
    EXPECT_EQ(shown(layer), QStringLiteral("matches"));
}

// "Diverging ops only" sits beside the table it filters, on its tab's bar (among the plots'
// controls it read as a filter of the error plot, which keeps every op), and goes with the table:
// hidden while the tensor-in-both-runs page is shown.
TEST_F(SmallComparedPair, DivergingOpsOnlyStandsByTheTableItFilters) {
    ASSERT_TRUE(waitFor([&] { return panel_->isVisible(); }));
    QCheckBox* divergingOnly = nullptr;
    for (QCheckBox* box : panel_->findChildren<QCheckBox*>())
        if (box->text() == QStringLiteral("Diverging ops only")) divergingOnly = box;
    ASSERT_NE(divergingOnly, nullptr);
    auto* pages = qobject_cast<QTabWidget*>(panel_->table()->parentWidget()->parentWidget());
    ASSERT_NE(pages, nullptr);
    EXPECT_EQ(pages->cornerWidget(Qt::TopRightCorner), divergingOnly);
    ASSERT_TRUE(divergingOnly->isVisible());
    // The rows whose verdict is not "matches" (born here, inherited, in one run only).
    QAbstractItemModel* rows = panel_->table()->model();
    auto divergingRows = [&] {
        int count = 0;
        for (int i = 0; i < rows->rowCount(); ++i) {
            const QString verdict =
                rows->index(i, data::CompareOpsModel::VerdictColumn).data().toString();
            count += verdict != QStringLiteral("matches");
        }
        return count;
    };
    const int all = static_cast<int>(context_.comparison()->result()->ops.size());
    ASSERT_TRUE(waitFor([&] { return rows->rowCount() == all; }));  // filled in slices
    const int expected = divergingRows();
    ASSERT_GT(expected, 0);
    ASSERT_LT(expected, all);
    divergingOnly->click();
    ASSERT_TRUE(waitFor([&] { return rows->rowCount() >= expected; }));
    EXPECT_EQ(rows->rowCount(), expected);
    EXPECT_EQ(divergingRows(), expected);
    pages->setCurrentIndex(1);
    EXPECT_FALSE(divergingOnly->isVisible());
    pages->setCurrentIndex(0);
    EXPECT_TRUE(divergingOnly->isVisible());
}

// A comparison made while its tab is hidden: once the tab is shown, both plots have their axis
// labels, with room for them. Laid out while hidden, a few pixels high, the labels were emptied,
// and the plots were drawn without them until the window was resized (found by a GUI walk).
TEST_F(SmallComparedPair, PlotsComparedWhileHiddenShowTheirAxisLabels) {
    window_.showView(MainWindow::View::Tensor);
    ASSERT_TRUE(waitFor([&] { return !panel_->isVisible(); }));
    // Laid out while hidden at the size a page not yet shown has: a label too long for that
    // still keeps its first letter (an axis without a label has no margin for one).
    for (QCustomPlot* plot : {panel_->errorPlot(), panel_->statisticPlot()}) {
        plot->resize(100, 30);
        plot->replot();
        EXPECT_FALSE(plot->yAxis->label().isEmpty());
    }
    window_.showView(MainWindow::View::Compare);
    ASSERT_TRUE(waitFor([&] { return panel_->isVisible(); }));
    for (QCustomPlot* plot : {panel_->errorPlot(), panel_->statisticPlot()}) {
        const QString full = plot->yAxis->property("probeFullLabel").toString();
        ASSERT_FALSE(full.isEmpty());
        // Drawn as the screen shows it: the queued replots a tab's showing causes, done.
        ASSERT_TRUE(waitFor(
            [&] { return !plot->yAxis->label().isEmpty() && plot->axisRect()->height() > 40; }));
        QCoreApplication::processEvents();
        EXPECT_TRUE(full.startsWith(plot->yAxis->label().remove(QChar(0x2026))))
            << plot->yAxis->label().toStdString();
        // Room left of the axis for the label beside the tick labels.
        EXPECT_GT(plot->axisRect()->left() - plot->yAxis->tickLabelPadding(),
                  QFontMetrics(plot->yAxis->labelFont()).height())
            << plot->axisRect()->left();
    }
    // The tensor is named along the rounds, its statistic on the short axis.
    EXPECT_TRUE(panel_->statisticPlot()->xAxis->label().startsWith("round · "))
        << panel_->statisticPlot()->xAxis->label().toStdString();
    // Ticks on rounds that exist: 2.5 and 7.5 read as rounds.
    panel_->statisticPlot()->replot();
    const QVector<double> ticks = panel_->statisticPlot()->xAxis->tickVector();
    ASSERT_FALSE(ticks.isEmpty());
    for (double tick : ticks) EXPECT_EQ(tick, std::round(tick));
}

// The error plot names each kind of mark it shows at its edge (an error that is not finite), as
// the statistics plots do: NaN/Inf ops sat on a band at the top with no legend entry.
TEST_F(SmallComparedPair, TheErrorPlotsMarksAreNamedInItsLegend) {
    ASSERT_TRUE(
        waitFor([&] { return panel_->isVisible() && panel_->errorPlot()->graphCount() > 0; }));
    QCustomPlot* plot = panel_->errorPlot();
    plot->replot();
    QStringList named;
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            named << item->plottable()->name();
    const std::pair<QCPScatterStyle::ScatterShape, const char*> kinds[] = {
        {QCPScatterStyle::ssCross, "NaN (at the edge)"},
        {QCPScatterStyle::ssTriangle, "+Inf (at the edge)"},
        {QCPScatterStyle::ssTriangleInverted, "-Inf (at the edge)"}};
    int shownKinds = 0;
    for (const auto& [shape, name] : kinds) {
        bool shown = false;
        for (int g = 0; g < plot->graphCount(); ++g)
            shown = shown || (plot->graph(g)->scatterStyle().shape() == shape &&
                              plot->graph(g)->dataCount() > 0);
        shownKinds += shown ? 1 : 0;
        EXPECT_EQ(named.count(name), shown ? 1 : 0)
            << name << ": " << named.join(", ").toStdString();
    }
    EXPECT_GT(shownKinds, 0) << "the pair has an error that is not finite";
}

// The selected tensor in both runs: a value that is not finite in one run is drawn as the
// statistics plot draws it, a mark at the plot's edge in that run's colour, and the other run's
// values as points of their own (the plot was empty for an Inf against one finite reference).
TEST_F(SmallComparedPair, NonFiniteValuesOfTheSelectedTensorAreMarkedAtTheEdge) {
    ASSERT_TRUE(waitFor([&] {
        return panel_->isVisible() && !panel_->statisticPair().candidate.markers.isEmpty();
    }));
    const auto& pair = panel_->statisticPair();
    QCustomPlot* plot = panel_->statisticPlot();
    plot->replot();  // lays out, and so places the marks
    // The two lines, then one graph per kind of mark the candidate has (the reference: none).
    ASSERT_GT(plot->graphCount(), 2);
    EXPECT_NE(plot->graph(1)->scatterStyle().shape(), QCPScatterStyle::ssNone);
    int marks = 0;
    for (int g = 2; g < plot->graphCount(); ++g) {
        const QCPGraph* graph = plot->graph(g);
        EXPECT_EQ(graph->lineStyle(), QCPGraph::lsNone);
        if (graph->dataCount() == 0) {  // a kind's key in the legend, in no run's colour
            EXPECT_EQ(graph->scatterStyle().pen().color(), widgets::kNonFiniteMarkKeyColor);
            continue;
        }
        EXPECT_EQ(graph->scatterStyle().pen().color(), plot->graph(0)->pen().color());
        // Over what the plot says on itself, along its top (a note on a ground of its own hid
        // them).
        EXPECT_GT(graph->layer()->index(), plot->layer("main")->index());
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
            ++marks;
            const double edgeDistance = std::min(
                std::abs(plot->yAxis->coordToPixel(it->value) - plot->axisRect()->rect().top()),
                std::abs(plot->yAxis->coordToPixel(it->value) - plot->axisRect()->rect().bottom()));
            EXPECT_LT(edgeDistance, 12) << it->key;
            EXPECT_TRUE(plot->xAxis->range().contains(it->key)) << it->key;
        }
    }
    EXPECT_EQ(marks, pair.candidate.markers.size());
    // Each kind of mark shown is named in the legend, once: an Inf's triangle on the top edge read
    // as a value there (found by a GUI walk).
    QStringList named;
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            named << item->plottable()->name();
    for (int g = 2; g < plot->graphCount(); ++g)
        if (plot->graph(g)->dataCount() > 0) {
            const QString shape =
                plot->graph(g)->scatterStyle().shape() == QCPScatterStyle::ssCross
                    ? "NaN (at the edge)"
                : plot->graph(g)->scatterStyle().shape() == QCPScatterStyle::ssTriangle
                    ? "+Inf (at the edge)"
                    : "-Inf (at the edge)";
            EXPECT_EQ(named.count(shape), 1) << shape.toStdString();
        }
    // The tensor in both runs: elements not finite in one run only, and no largest difference
    // of 0 beside them ("the largest absolute difference …, 0 at element [0, 0]").
    const auto& idx = context_.store()->index();
    uint32_t infinite = analysis::kNone;  // a row with its tensor's data, not all finite
    for (uint32_t row = 0; row < idx.rowCount() && infinite == analysis::kNone; ++row)
        if (idx.row(row).hasTensorFile && !std::isfinite(idx.row(row).get(analysis::Stat::Max)))
            infinite = row;
    ASSERT_NE(infinite, analysis::kNone);
    context_.cursor()->setRow(infinite);
    auto* pairView = panel_->pairView();
    panel_->findChild<QTabWidget*>()->setCurrentWidget(pairView);
    ASSERT_TRUE(waitFor([&] { return pairView->factsText().contains("in one run only"); }))
        << pairView->factsText().toStdString();
    EXPECT_FALSE(pairView->factsText().contains(", 0 at element"))
        << pairView->factsText().toStdString();
    EXPECT_FALSE(pairView->factsText().contains(QRegularExpression("(^|\\D)1 elements")))
        << pairView->factsText().toStdString();
    // The colours of the runs' own slices are said, as they are drawn (an Inf drawn green was
    // explained nowhere).
    const QString legend = QStringLiteral(
                               "<span style='color:%1'>■</span> NaN, <span "
                               "style='color:%2'>■</span> ±Inf")
                               .arg(QColor(data::kNanRgb).name(), QColor(data::kInfRgb).name());
    EXPECT_TRUE(pairView->factsText().contains(legend)) << pairView->factsText().toStdString();
    const QImage drawn = pairView->image(1);
    bool nonFiniteDrawn = false;
    for (int y = 0; y < drawn.height(); ++y)
        for (int x = 0; x < drawn.width(); ++x)
            nonFiniteDrawn = nonFiniteDrawn || drawn.pixel(x, y) == data::kNanRgb ||
                             drawn.pixel(x, y) == data::kInfRgb;
    EXPECT_TRUE(nonFiniteDrawn);
    // A tensor both runs kept statistics of only: said of both ("one of the runs" was said).
    uint32_t statisticsOnly = analysis::kNone;
    for (uint32_t row = 0; row < idx.rowCount() && statisticsOnly == analysis::kNone; ++row)
        if (!idx.row(row).hasTensorFile) statisticsOnly = row;
    ASSERT_NE(statisticsOnly, analysis::kNone);
    context_.cursor()->setRow(statisticsOnly);
    ASSERT_TRUE(waitFor([&] {
        return pairView->factsText().startsWith("Both runs kept only statistics of this tensor");
    })) << pairView->factsText().toStdString();
    // Everything changes with another tensor; the marks do not outlive their graphs.
    context_.cursor()->setRow(0);
    plot->replot();
    EXPECT_FALSE(window_.grab().isNull());
}

// A big comparison (30,000 compared ops: a synthetic dump against itself with an overflow
// planted in layer 8 of round 2): the error plot draws what can be seen, in each pixel column
// the lowest and highest point of the line and of each verdict; the first divergence (its value
// not finite) is ringed at the top and a click there selects it; zoomed in, every op in view is
// drawn as it is. Through the window, with its real plot.
TEST(ComparePanelPlot, ABigComparisonDrawsWhatCanBeSeenAndRingsTheFirstDivergence) {
    test::TempDir dir("ui-compare-big");
    context::AppContext context;
    MainWindow window(&context);
    compareSyntheticPairIn(window, dir.path(), {6000, 60000, 20}, 8, 2);
    RunComparison* comparison = context.comparison();
    ASSERT_TRUE(waitFor([&] { return comparison->result() != nullptr; }, 120000));
    const auto& r = *comparison->result();
    ASSERT_TRUE(r.firstBornHere);
    ASSERT_GT(r.ops.size(), 20000u);

    auto* panel = window.comparePanel();
    ASSERT_TRUE(waitFor([&] { return panel->isVisible(); }));
    QCustomPlot* plot = panel->errorPlot();
    plot->replot();
    // The profiles made with the result are those errorProfile makes, for every measure.
    for (int m = 0; m < RunComparison::kMeasureCount; ++m) {
        const auto measure = static_cast<RunComparison::Measure>(m);
        const auto made = data::errorProfile(r, measure, -1);
        const auto& kept = comparison->errorProfile(measure);
        ASSERT_EQ(kept.series.y.size(), made.series.y.size());
        for (int i = 0; i < made.series.y.size(); ++i)
            ASSERT_TRUE(kept.series.y[i] == made.series.y[i] ||
                        (std::isnan(kept.series.y[i]) && std::isnan(made.series.y[i])))
                << "measure " << m << " point " << i;
        EXPECT_EQ(kept.series.markers.size(), made.series.markers.size());
        EXPECT_EQ(kept.firstDivergenceX, made.firstDivergenceX);
    }
    const auto& profile = panel->errorProfile();
    const auto& s = profile.series;
    ASSERT_EQ(s.x.size(), static_cast<int>(r.ops.size()));
    const int at = static_cast<int>(profile.firstDivergenceX);
    ASSERT_EQ(static_cast<uint32_t>(at), *r.firstBornHere);
    EXPECT_FALSE(std::isfinite(s.y[at]));  // the overflow

    // Graphs: the line; matches, born below ("born here (inside)"), inherited, born here; the
    // marks of each of those verdicts' errors that are not finite (NaN, +Inf, -Inf); the legend's
    // key of each kind of mark; the first divergence's ring.
    const Verdict dotVerdicts[] = {Verdict::Matches, Verdict::BornBelow, Verdict::Inherited,
                                   Verdict::BornHere};
    constexpr int kinds = 4;
    ASSERT_EQ(plot->graphCount(), 1 + kinds + kinds * 3 + 3 + 1);
    EXPECT_TRUE(plot->legend->visible());
    const double lower = plot->xAxis->range().lower;
    const double unitsPerPixel = plot->xAxis->range().size() / plot->axisRect()->width();
    ASSERT_GT(unitsPerPixel, 5);  // many ops per pixel column
    auto column = [&](double x) {
        return static_cast<int>(std::floor((x - lower) / unitsPerPixel));
    };
    int drawn = 0;
    for (int g = 0; g < 1 + kinds; ++g) drawn += plot->graph(g)->dataCount();
    EXPECT_LT(drawn, s.x.size() / 4);
    // The line: in each column, the lowest and highest finite value are among its points.
    std::map<int, std::pair<double, double>> lineExtremes, drawnLine;
    for (int i = 0; i < s.x.size(); ++i) {
        if (!std::isfinite(s.y[i])) continue;
        auto [it, added] = lineExtremes.try_emplace(column(s.x[i]), s.y[i], s.y[i]);
        it->second.first = std::min(it->second.first, s.y[i]);
        it->second.second = std::max(it->second.second, s.y[i]);
    }
    ASSERT_FALSE(lineExtremes.empty());
    for (auto p = plot->graph(0)->data()->constBegin(); p != plot->graph(0)->data()->constEnd();
         ++p) {
        if (std::isnan(p->value)) continue;
        auto [it, added] = drawnLine.try_emplace(column(p->key), p->value, p->value);
        it->second.first = std::min(it->second.first, p->value);
        it->second.second = std::max(it->second.second, p->value);
    }
    EXPECT_EQ(drawnLine, lineExtremes);
    // The points of each verdict: each column's lowest and highest has a disc of its verdict
    // drawn within half a disc's size.
    int checked = 0;
    for (int k = 0; k < kinds; ++k) {
        std::map<int, std::pair<int, int>> extremes;  // column -> lowest, highest point
        for (int i = 0; i < s.x.size(); ++i) {
            if (profile.verdicts[i] != static_cast<int>(dotVerdicts[k]) || !std::isfinite(s.y[i]))
                continue;
            auto [it, added] = extremes.try_emplace(column(s.x[i]), i, i);
            if (s.y[i] < s.y[it->second.first]) it->second.first = i;
            if (s.y[i] > s.y[it->second.second]) it->second.second = i;
        }
        const double size = plot->graph(k + 1)->scatterStyle().size();
        for (const auto& [c, ends] : extremes)
            for (const int i : {ends.first, ends.second}) {
                const double px = plot->xAxis->coordToPixel(s.x[i]),
                             py = plot->yAxis->coordToPixel(s.y[i]);
                bool near = false;
                for (auto p = plot->graph(k + 1)->data()->constBegin();
                     !near && p != plot->graph(k + 1)->data()->constEnd(); ++p)
                    near = std::fabs(plot->xAxis->coordToPixel(p->key) - px) <= size / 2 + 1 &&
                           std::fabs(plot->yAxis->coordToPixel(p->value) - py) <= size / 2 + 1;
                EXPECT_TRUE(near) << "verdict " << k << " op " << i;
                ++checked;
            }
    }
    EXPECT_GT(checked, 100);
    // Errors that are not finite (they were gaps): each pixel column holding one of a verdict
    // has its mark of that verdict and kind, at the plot's top edge (NaN, +Inf) or bottom (-Inf).
    int marked = 0;
    for (int k = 0; k < kinds; ++k)
        for (int m = 0; m < 3; ++m) {
            std::set<int> columns, drawnColumns;
            for (int i = 0; i < s.x.size(); ++i) {
                // The op's error itself (the series holds NaN for any value not finite).
                const auto error = RunComparison::opMeasure(
                    r, profile.comparedOps[i], RunComparison::Measure::MaxRelativeError);
                if (profile.verdicts[i] != static_cast<int>(dotVerdicts[k]) || !error ||
                    std::isfinite(*error))
                    continue;
                if ((std::isnan(*error) ? 0 : *error > 0 ? 1 : 2) == m)
                    columns.insert(column(s.x[i]));
            }
            const QCPGraph* marks = plot->graph(1 + kinds + 3 * k + m);
            for (auto p = marks->data()->constBegin(); p != marks->data()->constEnd(); ++p) {
                drawnColumns.insert(column(p->key));
                const double py = plot->yAxis->coordToPixel(p->value);
                const double edge = m == 2 ? plot->axisRect()->bottom() : plot->axisRect()->top();
                EXPECT_LE(std::fabs(py - edge), widgets::kNonFiniteMarkInset + 1) << py;
            }
            EXPECT_EQ(drawnColumns, columns) << "verdict " << k << " mark " << m;
            marked += static_cast<int>(columns.size());
        }
    EXPECT_GT(marked, 0);
    // The ring: one point, at the first divergence, at the top of the plot; rendered in red.
    QCPGraph* ring = plot->graph(plot->graphCount() - 1);
    ASSERT_EQ(ring->dataCount(), 1);
    EXPECT_EQ(ring->data()->constBegin()->key, s.x[at]);
    const QPoint ringAt(
        static_cast<int>(plot->xAxis->coordToPixel(s.x[at])),
        static_cast<int>(plot->yAxis->coordToPixel(ring->data()->constBegin()->value)));
    EXPECT_LT(ringAt.y() - plot->axisRect()->top(), plot->axisRect()->height() / 10);
    const QImage shot = plot->grab().toImage();
    int red = 0;
    for (int y = ringAt.y() - 8; y <= ringAt.y() + 8; ++y)
        for (int x = ringAt.x() - 8; x <= ringAt.x() + 8; ++x) {
            if (std::abs(x - ringAt.x()) <= 2) continue;  // the dashed line's
            const QColor c = shot.pixelColor(x, y);
            red += c.red() > 150 && c.green() < 90 && c.blue() < 90 ? 1 : 0;
        }
    EXPECT_GT(red, 10);
    // The mark inside the ring is whole (a new user could not tell NaN from Inf there): the ring
    // leaves a gap around it, and the dashed line runs behind it. Both crossed it out.
    const QCPGraph* markGraph = nullptr;  // the born-here mark at the first divergence
    for (int g = 0; g + 1 < plot->graphCount() && !markGraph; ++g) {
        const QCPGraph* graph = plot->graph(g);
        const auto shape = graph->scatterStyle().shape();
        if (shape != QCPScatterStyle::ssCross && shape != QCPScatterStyle::ssTriangle &&
            shape != QCPScatterStyle::ssTriangleInverted)
            continue;
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
            if (it->key == s.x[at]) markGraph = graph;
    }
    ASSERT_NE(markGraph, nullptr);
    const QCPScatterStyle markStyle = markGraph->scatterStyle(), ringStyle = ring->scatterStyle();
    const double markReach = markStyle.size() / 2 * std::sqrt(2.0) + markStyle.pen().widthF() / 2;
    EXPECT_GT(ringStyle.size() / 2 - ringStyle.pen().widthF() / 2, markReach);
    const auto distance = [](const QColor& a, const QColor& b) {
        return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) +
               std::abs(a.blue() - b.blue());
    };
    const QColor centre = shot.pixelColor(ringAt), markColour = markStyle.pen().color();
    EXPECT_LT(distance(centre, markColour), distance(centre, ringStyle.pen().color()))
        << centre.name().toStdString() << " at the mark of colour "
        << markColour.name().toStdString();
    // Its label below the marks along the top (it was written over the NaN before it).
    QCPItemText* label = nullptr;
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot->item(i));
            text && text->text() == "first divergence")
            label = text;
    ASSERT_NE(label, nullptr);
    EXPECT_GE(label->topLeft->pixelPosition().y(),
              plot->axisRect()->top() + widgets::kNonFiniteMarkInset + markStyle.size() / 2 +
                  markStyle.pen().widthF() / 2);
    // A click on the ring selects the first divergence's op and round.
    context.cursor()->setRow(s.rows[0]);
    QTest::mouseClick(plot, Qt::LeftButton, {}, ringAt);
    EXPECT_EQ(context.cursor()->row(), s.rows[at]);
    EXPECT_EQ(context.cursor()->op(), r.ops[*r.firstBornHere].candidateOp);

    // Zoomed in: every op in view (and one beyond each side) as it is.
    plot->xAxis->setRange(at - 20.5, at + 20.5);
    plot->replot();
    const auto line = plot->graph(0)->data();
    ASSERT_EQ(line->size(), 43);
    int i = at - 21;
    for (auto p = line->constBegin(); p != line->constEnd(); ++p, ++i) {
        EXPECT_EQ(p->key, s.x[i]);
        EXPECT_TRUE(p->value == s.y[i] || (std::isnan(p->value) && std::isnan(s.y[i])));
    }
}

// Ranks: the dialog lists the rank folders of a dump, and a rank chosen is compared with a rank.
TEST_F(CompareTest, RanksAreListedAndComparedRankAgainstRank) {
    // Two ranks of one msprobe step: rank 1's weight differs.
    const std::string root = dir_ / "ranks";
    auto item = [](double max) {
        return "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4, 8], "
               "\"Max\": " +
               std::to_string(max) +
               ", \"Min\": -0.5, \"Mean\": 0.0, \"Norm\": 2.0, \"requires_grad\": false}";
    };
    for (int rank = 0; rank < 2; ++rank) {
        const std::string dir = root + "/step0/rank" + std::to_string(rank);
        std::filesystem::create_directories(dir);
        test::writeFile(
            dir + "/dump.json",
            R"({"task": "statistics", "level": "mix", "framework": "pytorch", "dump_data_dir": null, "data": {)"
            R"("Module.fc.Linear.forward.0": {"input_args": [)" +
                item(1.0) + R"(], "input_kwargs": {}, "output": [)" + item(4.0) +
                R"(], "parameters": {"weight": )" + item(rank ? 0.75 : 0.5) + "}}}}");
        test::writeFile(dir + "/construct.json", R"({"Module.fc.Linear.forward.0": null})");
        test::writeFile(dir + "/stack.json", "{}");
    }
    const QString dumpRoot = QString::fromStdString(root);
    const QStringList ranks = widgets::rankFolders(dumpRoot);
    ASSERT_EQ(ranks.size(), 2);
    EXPECT_TRUE(ranks[0].endsWith(QStringLiteral("step0/rank0")));
    EXPECT_TRUE(ranks[1].endsWith(QStringLiteral("step0/rank1")));
    widgets::CompareDialog dialog(dumpRoot);
    dialog.setReference(dumpRoot);
    ASSERT_EQ(dialog.referenceRanks()->count(), 3);  // all ranks, rank0, rank1
    dialog.referenceRanks()->setCurrentIndex(1);
    dialog.candidateRanks()->setCurrentIndex(2);
    EXPECT_EQ(dialog.referencePath(), ranks[0]);
    EXPECT_EQ(dialog.candidatePath(), ranks[1]);

    ASSERT_TRUE(context_.compare(dialog.referencePath(), dialog.candidatePath()));
    ASSERT_TRUE(compared());
    const auto& r = *comparison()->result();
    ASSERT_TRUE(r.firstBornHere) << comparison()->summary().toStdString();
    const auto& idx = context_.store()->index();
    const auto& born = r.ops[*r.firstBornHere];
    EXPECT_EQ(idx.process(born.candidateProcess).key, "rank1");
    EXPECT_EQ(r.reference->process(born.referenceProcess).key, "rank0");
    EXPECT_EQ(idx.op(born.candidateOp).id, "Module.fc.Linear.forward.0");
    // The candidate was opened by its rank's folder: it opened at that rank.
    ASSERT_NE(context_.cursor()->op(), kNone);
    EXPECT_EQ(idx.process(idx.op(context_.cursor()->op()).process).key, "rank1");
    ASSERT_TRUE(context_.goToFirstDivergence());
    EXPECT_EQ(context_.cursor()->op(), born.candidateOp);
}

// probe-studio --compare REF CAND: the comparison shown, the jump made, the window saved.
TEST_F(CompareTest, TheCommandLineComparesAndJumps) {
    const QString reference = dump("reference", 2),
                  nudged = dump("nudged", 2, {"--nudge-layer", "1"});
    const QString png = QString::fromStdString(dir_ / "compare.png");
    const auto run = test::runStudio(
        {"--compare", reference, nudged, "--jump", "--view", "compare", "--screenshot", png});
    ASSERT_EQ(run.exitCode, 0) << run.err.toStdString();
    EXPECT_TRUE(QFileInfo(png).size() > 0);
    const auto usage = test::runStudio({"--compare", reference});
    EXPECT_EQ(usage.exitCode, 64);
    EXPECT_NE(usage.err.indexOf(QStringLiteral("--compare REF CAND")), -1)
        << usage.err.toStdString();
}

// A big result's table: its rows are added a slice at a time (each slice appended, the model
// tester watching), a sort asked for before the result is applied once every row is in, and
// each order is the one std::stable_sort gives over the rows' values recomputed here from the
// result (the measures by RunComparison::opMeasure, names from the reference's index). The
// selected row, and the current one, stay on their op through every sort and back.
TEST(CompareTable, ABigTableFillsInSlicesAndSortsLikeAStableSortKeepingTheSelection) {
    test::TempDir dir("ui-compare-table");
    const auto dumps = writeSyntheticPairOfSize(dir.path(), {3000, 30000, 12}, 7, 2);

    context::AppContext context;
    RunComparison* comparison = context.comparison();
    data::CompareOpsModel table(comparison);
    QAbstractItemModelTester tester(&table, QAbstractItemModelTester::FailureReportingMode::Fatal);
    constexpr int kSlice = 1000;
    table.setRowSlice(kSlice);
    table.setInlineSortRows(0);  // every sort on a worker thread
    QTableView view;
    view.setModel(&table);
    view.setSortingEnabled(true);
    view.setSelectionBehavior(QAbstractItemView::SelectRows);
    view.setSelectionMode(QAbstractItemView::SingleSelection);

    // What the model does, in order: the reset's rows, each slice, the sort's order.
    std::vector<std::string> events;
    int rowsAtReset = -1;
    QObject::connect(&table, &QAbstractItemModel::modelReset, [&] {
        rowsAtReset = table.rowCount();
        events.push_back("reset");
    });
    QObject::connect(&table, &QAbstractItemModel::rowsInserted,
                     [&](const QModelIndex& parent, int first, int last) {
                         EXPECT_FALSE(parent.isValid());
                         EXPECT_EQ(last, table.rowCount() - 1);  // appended
                         EXPECT_LE(last - first + 1, kSlice);
                         events.push_back("slice");
                     });
    QObject::connect(&table, &data::CompareOpsModel::filled, [&] { events.push_back("filled"); });
    QObject::connect(&table, &data::CompareOpsModel::sortApplied,
                     [&] { events.push_back("sorted"); });
    // Sorted by the largest relative error before there is a result: the result takes it.
    view.sortByColumn(data::CompareOpsModel::MaxRelativeErrorColumn, Qt::DescendingOrder);
    events.clear();
    ASSERT_TRUE(context.compare(QString::fromStdString(dumps.reference.root),
                                QString::fromStdString(dumps.candidate.root)));
    ASSERT_TRUE(waitFor([&] { return comparison->result() != nullptr; }, 120000));
    ASSERT_TRUE(waitFor([&] { return !table.filling() && !table.sorting(); }, 60000));
    const auto& r = *comparison->result();
    const uint32_t n = static_cast<uint32_t>(r.ops.size());
    ASSERT_GT(n, 10u * kSlice);
    ASSERT_TRUE(r.firstBornHere);
    EXPECT_EQ(rowsAtReset, kSlice);
    ASSERT_EQ(table.rowCount(), static_cast<int>(n));
    ASSERT_GE(events.size(), 4u);
    EXPECT_EQ(events.front(), "reset");
    const auto filledAt = std::find(events.begin(), events.end(), "filled");
    ASSERT_NE(filledAt, events.end());
    EXPECT_EQ(std::count(events.begin(), filledAt, "slice"), (n - 1) / kSlice);
    EXPECT_EQ(std::count(events.begin(), filledAt, "sorted"), 0) << "sorted before every row";
    EXPECT_EQ(std::count(filledAt, events.end(), "sorted"), 1);

    auto shownOps = [&] {
        std::vector<uint32_t> ops;
        for (int row = 0; row < table.rowCount(); ++row)
            ops.push_back(table.index(row, 0).data(data::CompareOpsModel::ComparedOpRole).toUInt());
        return ops;
    };
    // The listed ops ordered by a measure as the table promises: stable, NaN where the worst
    // goes (errors: before every number descending, after them ascending), no value as -1.
    auto byMeasure = [&](std::vector<uint32_t> ops, RunComparison::Measure measure,
                         Qt::SortOrder order) {
        std::vector<double> key(n);
        for (uint32_t i = 0; i < n; ++i)
            key[i] = RunComparison::opMeasure(r, i, measure).value_or(-1.0);
        // NaN as bad as the worst infinity (an error's +Inf, a cosine's -Inf), ties kept.
        const double nanKey = measure == RunComparison::Measure::Cosine ? -INFINITY : INFINITY;
        for (double& k : key)
            if (std::isnan(k)) k = nanKey;
        std::stable_sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
            return order == Qt::DescendingOrder ? key[b] < key[a] : key[a] < key[b];
        });
        return ops;
    };
    auto byName = [&](std::vector<uint32_t> ops, Qt::SortOrder order) {
        auto name = [&](uint32_t i) -> const std::string& {
            const auto& op = r.reference->op(r.ops[i].referenceOp);
            return op.namePath.empty() ? op.id : op.namePath;
        };
        std::stable_sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
            return order == Qt::DescendingOrder ? name(b) < name(a) : name(a) < name(b);
        });
        return ops;
    };
    std::vector<uint32_t> all(n);
    for (uint32_t i = 0; i < n; ++i) all[i] = i;
    const auto expected =
        byMeasure(all, RunComparison::Measure::MaxRelativeError, Qt::DescendingOrder);
    ASSERT_NE(expected, all);  // the sort moved rows
    ASSERT_EQ(shownOps(), expected);
    // The worst on top: an op whose error is not finite (a NaN or Inf in one run), not at the
    // bottom; the earliest of them, the first divergence, before those that inherit it.
    EXPECT_FALSE(std::isfinite(table.index(0, data::CompareOpsModel::MaxRelativeErrorColumn)
                                   .data(data::CompareOpsModel::SortRole)
                                   .toDouble()));

    // Select the first born-here op's row (current too), then sort by name through the header.
    const uint32_t chosen = *r.firstBornHere;
    auto rowOf = [&](uint32_t op) {
        const auto ops = shownOps();
        return static_cast<int>(std::find(ops.begin(), ops.end(), op) - ops.begin());
    };
    view.selectionModel()->setCurrentIndex(
        table.index(rowOf(chosen), data::CompareOpsModel::VerdictColumn),
        QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    auto selectionOnChosen = [&] {
        const QModelIndexList rows = view.selectionModel()->selectedRows();
        return rows.size() == 1 &&
               rows[0].data(data::CompareOpsModel::ComparedOpRole).toUInt() == chosen &&
               view.selectionModel()->currentIndex().data(data::CompareOpsModel::ComparedOpRole) ==
                   chosen &&
               view.selectionModel()->currentIndex().column() ==
                   data::CompareOpsModel::VerdictColumn;
    };
    ASSERT_TRUE(selectionOnChosen());
    QSignalSpy applied(&table, &data::CompareOpsModel::sortApplied);
    auto sortAndWait = [&](int column, Qt::SortOrder order) {
        applied.clear();
        view.sortByColumn(column, order);
        return waitFor([&] { return applied.count() > 0 && !table.sorting(); }, 60000);
    };
    ASSERT_TRUE(sortAndWait(data::CompareOpsModel::OpColumn, Qt::AscendingOrder));
    EXPECT_EQ(shownOps(), byName(all, Qt::AscendingOrder));
    EXPECT_TRUE(selectionOnChosen());
    ASSERT_TRUE(sortAndWait(data::CompareOpsModel::MaxAbsoluteErrorColumn, Qt::AscendingOrder));
    EXPECT_EQ(shownOps(),
              byMeasure(all, RunComparison::Measure::MaxAbsoluteError, Qt::AscendingOrder));
    EXPECT_TRUE(selectionOnChosen());
    ASSERT_TRUE(sortAndWait(-1, Qt::AscendingOrder));  // execution order
    EXPECT_EQ(shownOps(), all);
    EXPECT_TRUE(selectionOnChosen());
    EXPECT_EQ(view.selectionModel()->currentIndex().row(), static_cast<int>(chosen));

    // Only the diverging ops: listed in execution order, then sorted like the rest.
    std::vector<uint32_t> diverging;
    for (uint32_t i = 0; i < n; ++i)
        if (r.ops[i].verdict != analysis::OpVerdict::Matches) diverging.push_back(i);
    ASSERT_GT(diverging.size(), static_cast<size_t>(kSlice));
    ASSERT_LT(diverging.size(), all.size());
    table.setDivergingOnly(true);
    ASSERT_TRUE(waitFor([&] { return !table.filling() && !table.sorting(); }, 60000));
    EXPECT_EQ(shownOps(), diverging);
    ASSERT_TRUE(sortAndWait(data::CompareOpsModel::MaxRelativeErrorColumn, Qt::AscendingOrder));
    EXPECT_EQ(shownOps(),
              byMeasure(diverging, RunComparison::Measure::MaxRelativeError, Qt::AscendingOrder));
    // A sort asked for while the rows are still being added is applied when they are all in.
    table.setDivergingOnly(false);
    ASSERT_TRUE(table.filling());
    events.clear();
    view.sortByColumn(data::CompareOpsModel::OpColumn, Qt::DescendingOrder);
    ASSERT_TRUE(waitFor([&] { return !table.filling() && !table.sorting(); }, 60000));
    ASSERT_TRUE(waitFor([&] { return !events.empty() && events.back() == "sorted"; }, 60000));
    EXPECT_EQ(std::count(events.begin(), events.end(), "sorted"), 1);
    EXPECT_NE(std::find(events.begin(), events.end(), "filled"), events.end());
    // Equal names (an op in every round) keep execution order: not the ascending order reversed.
    const auto ascending = byName(all, Qt::AscendingOrder);
    const auto descending = byName(all, Qt::DescendingOrder);
    EXPECT_EQ(shownOps(), descending);
    EXPECT_NE(descending, std::vector<uint32_t>(ascending.rbegin(), ascending.rend()));
}

// Qt's raster engine draws big fills on Qt's global thread pool and the GUI thread waits for
// them: our long jobs run on a pool of their own, or a sort held up painting (a 60 ms stall).
// With every thread of the global pool busy, a comparison still runs and its table still sorts.
TEST(CompareTable, ComparesAndSortsWhileQtsGlobalPoolIsBusy) {
    test::TempDir dir("ui-compare-pool");
    const auto dumps = writeSyntheticPairOfSize(dir.path(), {300, 3000, 4}, 2, 1);

    QThreadPool* global = QThreadPool::globalInstance();
    const int threads = global->maxThreadCount();
    ASSERT_GT(threads, 0);
    QSemaphore started, release;
    for (int i = 0; i < threads; ++i)
        global->start([&] {
            started.release();
            release.acquire();
        });
    ASSERT_TRUE(started.tryAcquire(threads, 60000));
    struct Release {  // whatever happens below, the global pool is let go
        QSemaphore& release;
        int threads;
        ~Release() {
            release.release(threads);
            // Its jobs still wake inside `release` (and `started`): they end before the two
            // semaphores go with this function's stack. Gone first, a job could wait for ever on
            // the freed memory, and the process hung at exit once the test had passed (seen once
            // in a fresh-clone .ci/run on a loaded machine: 300 s timeout after "[ OK ]").
            QThreadPool::globalInstance()->waitForDone();
        }
    } releaseAtEnd{release, threads};

    context::AppContext context;
    RunComparison* comparison = context.comparison();
    data::CompareOpsModel table(comparison);
    table.setInlineSortRows(0);  // every sort on a worker thread
    ASSERT_TRUE(context.compare(QString::fromStdString(dumps.reference.root),
                                QString::fromStdString(dumps.candidate.root)));
    ASSERT_TRUE(waitFor([&] { return comparison->result() != nullptr; }, 60000));
    ASSERT_TRUE(waitFor([&] { return !table.filling() && !table.sorting(); }, 60000));
    const uint32_t n = static_cast<uint32_t>(comparison->result()->ops.size());
    ASSERT_GT(n, 1000u);
    ASSERT_EQ(table.rowCount(), static_cast<int>(n));
    QSignalSpy applied(&table, &data::CompareOpsModel::sortApplied);
    table.sort(data::CompareOpsModel::OpColumn, Qt::DescendingOrder);
    ASSERT_TRUE(waitFor([&] { return applied.count() > 0 && !table.sorting(); }, 60000));
    const auto& r = *comparison->result();
    auto name = [&](int row) {
        const auto& op = r.reference->op(
            r.ops[table.index(row, 0).data(data::CompareOpsModel::ComparedOpRole).toUInt()]
                .referenceOp);
        return op.namePath.empty() ? op.id : op.namePath;
    };
    EXPECT_GE(name(0), name(static_cast<int>(n) - 1));
    EXPECT_GT(name(0), name(static_cast<int>(n) - 1)) << "the sort ordered nothing";
}

// The difference image: white where equal, the largest difference darkest, NaN/Inf in one run
// only in its own colour (and alike NaN/Inf in both is no difference).
// Slices far from square are drawn with cells at least kMinCellSide across (a 1×64 slice was a
// strip 4 pixels high, its elements hard to tell apart), within the square; square ones fill it.
// The tensor pair reads each file as the preview does (one loader): a header-only file naming
// itself by its op's id as its first copy is said to be damaged (it read "...is itself
// header-only"), and one whose data the dump did not keep is said to have no values.
TEST(TensorPair, ATensorFileNamingItselfIsSaidToBeDamaged) {
    test::TempDir dir("ui-compare-pair");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    const auto kept =
        reference.addRow(0, "2_3", "layer/mul", "aten::mul", false, {1, 2, 3, 4}, {2, 2});
    format::StatRow self = kept;
    self.tensorPath =
        candidate.writeAliasBin(0, "2_3_mul/before/intensor0.bin", "2_3_intensor0.bin", {2, 2});
    candidate.appendRaw(0, format::formatStatRow(self));
    reference.setStatus("complete");
    candidate.setStatus("complete");
    auto indexOf = [](const std::string& path) {
        std::string error;
        auto reader = analysis::openDumpReader(path, &error);
        EXPECT_TRUE(reader) << error;
        analysis::DumpIndex index(reader->layout(), reader->root());
        for (bool more = true; more;) {
            auto delta = reader->poll(analysis::kDefaultPollBudget);
            more = delta.more;
            index.apply(std::move(delta));
        }
        return index;
    };
    const analysis::DumpIndex ref = indexOf(dir / "ref"), cand = indexOf(dir / "cand");
    auto rowOf = [](const analysis::DumpIndex& index) {
        return index.slotRow(index.op(index.findOp(0, "2_3")).tensorSlots.at(0), 0);
    };
    data::TensorPairDocument pair;
    QSignalSpy failed(&pair, &data::TensorPairDocument::failed);
    pair.open(ref, rowOf(ref), cand, rowOf(cand));
    ASSERT_TRUE(waitFor([&] { return failed.count() > 0; }));
    EXPECT_TRUE(pair.error().contains("names itself (2_3_intensor0.bin) as the first copy"))
        << pair.error().toStdString();
}

TEST(TensorPair, SlicesOfOneRowOrColumnAreDrawnTallOrWideEnoughToRead) {
    using widgets::TensorPairView;
    const int cell = TensorPairView::kMinCellSide;
    EXPECT_EQ(TensorPairView::drawnSize({64, 1}, 260), QSize(260, cell));
    EXPECT_EQ(TensorPairView::drawnSize({1, 64}, 260), QSize(cell, 260));
    EXPECT_EQ(TensorPairView::drawnSize({64, 3}, 260), QSize(260, 3 * cell));
    EXPECT_EQ(TensorPairView::drawnSize({8, 8}, 260), QSize(260, 260));
    EXPECT_EQ(TensorPairView::drawnSize({64, 32}, 260), QSize(260, 260));  // rows of 8 pixels
    EXPECT_EQ(TensorPairView::drawnSize({1000, 10}, 260), QSize(260, 160));
    EXPECT_EQ(TensorPairView::drawnSize({3, 2}, 260), QSize(260, 173));  // square cells already
    EXPECT_EQ(TensorPairView::drawnSize({}, 260), QSize());
}

// A slice far wider than tall (a 1x64 output) is three strips one above the other, as wide as
// the view, each element of one run above the same element of the other (it was a strip 16
// pixels high atop each of three tall empty frames side by side); a square one stays side by
// side; the strips follow the view's width.
TEST(TensorPair, AFlatSliceIsStackedAsWideAsTheViewElementAboveElement) {
    test::TempDir dir("ui-compare-flat");
    test::DumpBuilder reference(dir / "ref"), candidate(dir / "cand");
    std::vector<float> values(64), square(64);
    for (size_t i = 0; i < values.size(); ++i) values[i] = square[i] = 0.5f * float(i);
    std::vector<float> changed = values;
    changed[37] += 3;
    reference.addRow(0, "0", "layer", "Layer", true, values, {1, 64});
    candidate.addRow(0, "0", "layer", "Layer", true, changed, {1, 64});
    reference.addRow(0, "1", "square", "Layer", true, square, {8, 8});
    candidate.addRow(0, "1", "square", "Layer", true, square, {8, 8});
    context::AppContext context;
    MainWindow window(&context);
    ASSERT_TRUE(compareBuiltPair(window, dir, reference, candidate));
    auto* panel = window.comparePanel();
    auto* view = panel->pairView();
    const auto& idx = context.store()->index();
    auto show = [&](const char* id) {
        context.cursor()->setOp(idx.findOp(0, id));
        panel->showTensorPair();
        return waitFor([&] {
            return view->document()->candidate() != nullptr &&
                   view->document()->candidate()->header.dims.size() == 2 &&
                   view->document()->candidate()->header.dims[0] ==
                       (std::string(id) == "0" ? 1 : 8);
        });
    };
    ASSERT_TRUE(show("0"));
    QApplication::processEvents();
    EXPECT_TRUE(view->stacked());
    for (int i = 0; i < 3; ++i) {
        EXPECT_GT(view->shownSize(i).width(), view->width() / 2) << i;
        EXPECT_GE(view->shownSize(i).height(), widgets::TensorPairView::kMinCellSide) << i;
        if (i > 0) {  // one above the other, element above element
            EXPECT_EQ(view->shownFrame(i).left(), view->shownFrame(0).left()) << i;
            EXPECT_GT(view->shownFrame(i).top(), view->shownFrame(i - 1).bottom()) << i;
            EXPECT_EQ(view->shownSize(i), view->shownSize(0)) << i;
        }
    }
    EXPECT_EQ(view->document()->difference().largestAt, 37u);
    // The tooltip of each strip: the element under the mouse in both runs.
    auto centreOf = [&](int which, int row, int col, int rows, int cols) {
        const QRect drawn = view->imageRect(which);
        return QPoint(drawn.left() + (2 * col + 1) * drawn.width() / (2 * cols),
                      drawn.top() + (2 * row + 1) * drawn.height() / (2 * rows));
    };
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(view->describeAt(i, centreOf(i, 0, 37, 1, 64)),
                  "element [0, 37]: reference 18.5, this run 21.5, difference 3 (16.2162%)")
            << i;
    EXPECT_TRUE(view->describeAt(0, centreOf(0, 0, 0, 1, 64)).startsWith("element [0, 0]: "));
    EXPECT_EQ(view->describeAt(0, view->imageRect(0).bottomRight() + QPoint(5, 5)), "");
    // Narrower: the strips follow.
    const int wide = view->shownSize(0).width();
    window.resize(1100, 950);
    ASSERT_TRUE(waitFor([&] { return view->shownSize(0).width() < wide; }));
    EXPECT_GT(view->shownSize(0).width(), view->width() / 2);
    // A square slice: side by side, as before.
    ASSERT_TRUE(show("1"));
    QApplication::processEvents();
    EXPECT_FALSE(view->stacked());
    // Drawn again to fit the frames once the layout has placed them side by side: square, as
    // large as the frame holds up to 260 pixels, every row and column in view.
    EXPECT_TRUE(waitFor([&] {
        const QSize shown = view->shownSize(0);
        const QRect frame = view->shownFrame(0);
        return shown.width() == shown.height() && shown.height() <= frame.height() &&
               shown.width() <= frame.width() &&
               shown.height() + 4 >= std::min({260, frame.height(), frame.width()});
    })) << view->shownSize(0).width()
        << "x" << view->shownSize(0).height() << " in " << view->shownFrame(0).width() << "x"
        << view->shownFrame(0).height();
    EXPECT_GE(view->shownSize(0).height(), 8 * widgets::TensorPairView::kMinCellSide);
    EXPECT_GT(view->shownFrame(1).left(), view->shownFrame(0).right());
    EXPECT_EQ(view->shownFrame(1).top(), view->shownFrame(0).top());
    EXPECT_EQ(view->describeAt(1, centreOf(1, 3, 5, 8, 8)),
              "element [3, 5]: reference 14.5, this run 14.5, difference 0 (0%)");
}

TEST(TensorPair, TheDifferenceMarksNanAndInfInOneRunOnly) {
    auto tensor = [](std::vector<float> v) {
        analysis::TensorData t;
        t.dtype = format::DType::Float;
        t.header.dims = {2, 3};
        t.count = v.size();
        const auto* bytes = reinterpret_cast<const uint8_t*>(v.data());
        t.bytes.assign(bytes, bytes + v.size() * sizeof(float));
        return t;
    };
    const float nan = std::nanf(""), inf = INFINITY;
    const auto ref = tensor({1, 2, 4, nan, inf, 8}), cand = tensor({1, 2.6f, 3, nan, 7, 8});
    const auto abs = data::renderDifference(ref, cand, 0, 2, 3, false);
    ASSERT_EQ(abs.image.size(), QSize(3, 2));
    EXPECT_EQ(abs.largest, 1.0);  // |3 - 4|
    EXPECT_EQ(abs.largestAt, 2u);
    EXPECT_EQ(abs.nonFiniteMismatches, 1u);  // inf vs 7; NaN in both is alike
    EXPECT_EQ(abs.finitePairs, 4u);
    // A run all NaN: nothing finite in both, which the caption says (it said "equal").
    const auto allNan =
        data::renderDifference(ref, tensor({nan, nan, nan, nan, nan, nan}), 0, 2, 3, false);
    EXPECT_EQ(allNan.finitePairs, 0u);
    EXPECT_EQ(allNan.largest, 0.0);
    EXPECT_EQ(allNan.nonFiniteMismatches, 5u);
    EXPECT_EQ(abs.image.pixel(0, 0), qRgb(255, 255, 255));
    EXPECT_EQ(abs.image.pixel(0, 1), qRgb(255, 255, 255));  // NaN and NaN
    EXPECT_EQ(abs.image.pixel(2, 1), qRgb(255, 255, 255));
    EXPECT_EQ(abs.image.pixel(1, 1), data::kNonFiniteMismatchRgb);
    EXPECT_EQ(abs.image.pixel(2, 0), qRgb(160, 0, 0));  // the largest: darkest
    const QColor part(abs.image.pixel(1, 0));           // 0.6 of the largest
    EXPECT_GT(part.green(), 0);
    EXPECT_LT(part.green(), 255);
    const auto rel = data::renderDifference(ref, cand, 0, 2, 3, true);
    EXPECT_NEAR(rel.largest, 0.3, 1e-6);  // |2.6 - 2| / 2 = 0.3 > |3 - 4| / 4
    EXPECT_EQ(rel.largestAt, 1u);
}

#ifdef PROBE_TEST_PYTHON
// msprobe's .pt tensors preview like .bin ones: heatmap (NaN marked), values, histogram, export.
TEST(PtPreview, APtTensorPreviewsLikeABinOne) {
    test::TempDir dir("ui-pt");
    const QString pt = QString::fromStdString(dir / "Functional.linear.0.forward.output.0.pt");
    QProcess python;
    python.start(QStringLiteral(PROBE_TEST_PYTHON),
                 {"-c",
                  "import sys, torch; torch.save(torch.tensor([[1.0, -2.0, float('nan')], [3.0, "
                  "4.0, 5.0]]), sys.argv[1])",
                  pt});
    ASSERT_TRUE(python.waitForFinished(120000));
    ASSERT_EQ(python.exitCode(), 0) << python.readAllStandardError().toStdString();
    data::DumpStore store;
    widgets::TensorPreview preview(&store);
    preview.resize(900, 700);
    preview.show();
    QSignalSpy image(preview.document(), &data::TensorDocument::imageReady);
    preview.openFile(pt);
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    ASSERT_TRUE(preview.document()->tensor());
    EXPECT_TRUE(preview.heatmap()->isVisibleTo(&preview));
    EXPECT_TRUE(preview.factsText().contains(QStringLiteral("shape [2 × 3]")))
        << preview.factsText().toStdString();
    // The values, as torch wrote them.
    auto* values = preview.valuesModel();
    ASSERT_EQ(values->rowCount(), 2);
    ASSERT_EQ(values->columnCount(), 3);
    EXPECT_EQ(values->index(1, 2).data().toString(), QStringLiteral("5"));
    EXPECT_EQ(values->index(0, 1).data().toString(), QStringLiteral("-2"));
    EXPECT_EQ(values->index(0, 2).data().toString().toLower(), QStringLiteral("nan"));
    preview.showPage(widgets::TensorPreview::Page::Histogram);
    EXPECT_GT(preview.histogramPlot()->plottableCount(), 0);
    QString error;
    const QString npy = QString::fromStdString(dir / "out.npy");
    ASSERT_TRUE(preview.exportNpy(npy, &error)) << error.toStdString();
    EXPECT_GT(QFileInfo(npy).size(), 6 * 4);
}
#endif

}  // namespace
}  // namespace probe
