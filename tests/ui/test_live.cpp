// End to end with PyTorch: the bundled demo launched from the application's own session code
// (the main window, LaunchSession through LiveSession, DumpStore following the folder), the
// tree and the plots filling while it runs; a config pushed from the editor to the running
// model, applied, and the dump following it.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>

#include <algorithm>

#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimer>
#include <gtest/gtest.h>

#include "config_document.h"
#include "config_editor.h"
#include "context/app_context.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "main_window.h"
#include "op_selection.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "probe/format/op_config.h"
#include "session/live_session.h"
#include "session_panel.h"
#include "statistics_plot.h"
#include "test_support.h"
#include "widget_checks.h"

namespace probe {
namespace {

using analysis::kNone;
using test::countPixels;
using test::waitFor;
using widgets::MainWindow;

class LiveDemoTest : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("PROBE_CONTROL_DIR", sockets_.path().c_str(), 1);
        ::chmod(sockets_.path().c_str(), 0700);
        context_.setProbeExecutable(PROBE_CLI);
        context_.setDataDirectory(PROBE_DATADIR);
        context_.store()->setIdlePollInterval(100);
        window_.resize(1400, 900);
        window_.show();
    }
    void TearDown() override { ::unsetenv("PROBE_CONTROL_DIR"); }

    const analysis::DumpIndex& index() const { return context_.store()->index(); }
    size_t rounds() const { return index().processCount() > 0 ? index().rounds(0).size() : 0; }
    QString log() const { return window_.sessionPanel()->log()->toPlainText(); }

    test::TempDir sockets_{"probe-sockets"};
    context::AppContext context_;
    MainWindow window_{&context_};
};

TEST_F(LiveDemoTest, DemoLaunchedFromTheAppFillsTheTreeAndPlots) {
    QString error;
    ASSERT_TRUE(context_.launchDemo(&error)) << error.toStdString();
    window_.showView(MainWindow::View::Plot);  // as the start page's Launch the demo does
    auto* live = context_.liveSession();
    ASSERT_TRUE(live);
    EXPECT_TRUE(live->launchSpec().program.endsWith("demo/llama_demo.py"));
    // While it runs: the tree grows to the decoder's layer-level modules, the plot draws the
    // selected op's statistics round after round. The window is sampled on its own thread as it
    // updates (a loaded machine may let the model finish before the window has read much, so
    // what it showed while running is recorded rather than raced).
    struct Seen {
        QString state;
        size_t rounds = 0;
        int treeRows = 0;
        int plotted = 0;
        bool ended = false;
        bool dumpRunning = false;
    };
    std::vector<Seen> seen;
    auto* plot = window_.statisticsPlot();
    QTimer sampler;
    QObject::connect(&sampler, &QTimer::timeout, [&] {
        const auto& series = plot->series();
        seen.push_back({window_.sessionPanel()->stateText(), rounds(),
                        window_.treePanel()->model()->rowCount(),
                        series.isEmpty() ? 0 : static_cast<int>(series[0].x.size()),
                        live->hasEnded(), context_.store()->dumpState() == "running"});
    });
    sampler.start(10);
    ASSERT_TRUE(waitFor([&] { return live->hasEnded(); }, 180000)) << log().toStdString();
    sampler.stop();
    ASSERT_FALSE(seen.empty());
    const auto whileDumping = [&](const Seen& s) {
        return !s.ended && s.dumpRunning && s.treeRows == 7 && s.rounds >= 2 && s.rounds < 17 &&
               s.plotted >= 2;
    };
    EXPECT_TRUE(
        std::any_of(seen.begin(), seen.end(), [](const Seen& s) { return s.state == "dumping"; }));
    EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), whileDumping))
        << "the window never showed the tree and a growing plot while the model ran; last seen: "
        << seen.back().state.toStdString() << ", " << seen.back().rounds << " rounds";
    const QString treeName =
        window_.treePanel()->model()->index(1, data::OpTreeModel::NameColumn).data().toString();
    EXPECT_EQ(treeName, "layers.0");
    ASSERT_NE(context_.cursor()->op(), kNone);

    // To the end: finished, the dump complete, the planted overflow where it was put.
    EXPECT_EQ(live->state(), session::SessionState::Finished) << log().toStdString();
    EXPECT_EQ(window_.sessionPanel()->stateText(), "finished, exit code 0");
    ASSERT_TRUE(waitFor([&] { return context_.store()->dumpState() == "complete"; }));
    ASSERT_TRUE(waitFor([&] { return index().rowCount() == index().status()->rows; }));
    EXPECT_EQ(rounds(), 17u);  // the prompt and 16 tokens
    ASSERT_TRUE(
        waitFor([&] { return !plot->series().isEmpty() && plot->series()[0].x.size() >= 3; }));
    ASSERT_TRUE(waitFor([&] {
        const QImage drawn = plot->grab().toImage();
        return countPixels(drawn, [](QColor c) { return c == QColor(31, 119, 180); }) >
               40;  // the Max line, blue
    }));
    EXPECT_TRUE(log().contains("dump: ")) << log().toStdString();  // probe run's summary
    uint32_t firstNan = kNone;
    for (const auto& [round, rows] : index().process(0).rounds) {
        for (uint32_t row : rows) {
            const auto& op = index().op(index().slot(index().row(row).slot).op);
            if (op.depth == 0 && (index().row(row).anomalies & analysis::kHasNan)) {
                firstNan = row;
                break;
            }
        }
        if (firstNan != kNone) break;
    }
    ASSERT_NE(firstNan, kNone);
    EXPECT_EQ(index().row(firstNan).round, 6);
    EXPECT_EQ(index().op(index().slot(index().row(firstNan).slot).op).name, "layers.2");
    // The window says where the first NaN is, and went there once the dump was complete.
    EXPECT_TRUE(window_.firstNanText().startsWith("⚠ First NaN: round 6, layers.2/"))
        << window_.firstNanText().toStdString();
    const auto atTheFirstNan = [&] {
        return context_.cursor()->round() == 6 && context_.cursor()->op() != kNone &&
               index().op(context_.cursor()->op()).namePath.rfind("layers.2/", 0) == 0;
    };
    EXPECT_TRUE(waitFor(atTheFirstNan))
        << "the cursor is at round " << context_.cursor()->round() << ", op "
        << (context_.cursor()->op() == kNone ? std::string("none")
                                             : index().op(context_.cursor()->op()).namePath);
}

TEST_F(LiveDemoTest, ConfigPushedFromTheEditorIsAppliedAndTheDumpFollowsIt) {
    test::TempDir dir("ui-live");
    test::writeFile(dir / "config.json",
                    R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    session::LaunchSpec spec;
    spec.interpreter = "/usr/bin/python3";
    spec.program = QString::fromStdString(std::string(PROBE_DATADIR) + "/demo/llama_demo.py");
    spec.arguments = {"--tokens", "60", "--delay", "0.05"};
    spec.outputDirectory = QString::fromStdString(dir / "out");
    spec.configPath = QString::fromStdString(dir / "config.json");
    ASSERT_TRUE(context_.launch(spec));
    ASSERT_TRUE(waitFor([&] { return rounds() >= 3; }, 120000)) << log().toStdString();
    auto* editor = window_.configEditor();
    ASSERT_TRUE(waitFor([&] { return context_.configDocument()->filePath() == spec.configPath; }));

    // Only layers.2 (id 3), with its children, from now on.
    window_.showView(MainWindow::View::Config);
    auto* ids = qobject_cast<QLineEdit*>(editor->field("ids"));
    ids->selectAll();
    QTest::keyClicks(ids, "3");
    context_.selection()->setIncludesChildren(true);  // "Include children" under the tree
    EXPECT_EQ(context_.configDocument()->value("save_child"), true);
    QTest::mouseClick(editor->applyButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] { return editor->applyStatus().startsWith("Applied by the probe"); }))
        << editor->applyStatus().toStdString();
    const auto written = format::loadOpConfigFile(dir / "config.json");
    ASSERT_TRUE(written.ok());
    EXPECT_EQ(written.config->ids, (std::vector<std::string>{"3"}));
    EXPECT_TRUE(written.config->saveChild);
    // The program's own output says so too; it comes by another way (its stderr) than the
    // probe's answer, so it may come later.
    EXPECT_TRUE(waitFor([&] { return log().contains("[probe] config applied (client)"); }))
        << log().toStdString();

    // The dump follows: the embedding's rows stop (the probe may be some rounds ahead of what
    // the window has read when its answer comes); layers.2 and its children go on.
    const int32_t readAtApply = static_cast<int32_t>(rounds()) - 1;
    // Fetched afresh each time: the index's ops may move as it grows (children appear).
    auto opOf = [&](const std::string& id) { return index().op(index().findOp(0, id)); };
    auto lastRound = [&] { return index().rounds(0).back(); };
    ASSERT_TRUE(waitFor([&] { return lastRound() >= opOf("0").rounds.back() + 3; }, 60000))
        << "rows of embed_tokens still written after the config dropped it\n"
        << log().toStdString();
    const int32_t embeddingLast = opOf("0").rounds.back();
    EXPECT_GE(embeddingLast, readAtApply);
    const auto layer = opOf("3");
    for (int32_t r = embeddingLast + 1; r <= lastRound(); ++r)
        EXPECT_TRUE(std::binary_search(layer.rounds.begin(), layer.rounds.end(), r))
            << "no row of layers.2 in round " << r;
    ASSERT_FALSE(layer.children.empty());
    const auto child = index().op(layer.children.front());
    ASSERT_FALSE(child.rounds.empty()) << "save_child: the children of layers.2 are dumped";
    EXPECT_GE(child.rounds.front(), embeddingLast);  // from the change on

    QTest::mouseClick(window_.sessionPanel()->stopButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }, 30000));
    ASSERT_TRUE(waitFor([&] { return context_.store()->dumpState() == "complete"; }));
}

}  // namespace
}  // namespace probe
