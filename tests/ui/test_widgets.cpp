// The widgets (ui/widgets) and the probe-studio command line, rendered offscreen: what is drawn
// is checked in the rendered pixels, not only in the models behind them.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QTreeView>
#include <QWheelEvent>
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include "analysis/dump_reader.h"
#include "compare_panel.h"
#include "config_document.h"
#include "config_editor.h"
#include "context/app_context.h"
#include "dump_builder.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "elided_label.h"
#include "launch_form.h"
#include "main_window.h"
#include "non_finite_marks.h"
#include "op_filter_proxy.h"
#include "op_selection.h"
#include "op_tensors_model.h"
#include "op_tensors_panel.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "overflow_births.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/statistic_csv.h"
#include "round_spin_box.h"
#include "start_page.h"
#include "statistics_plot.h"
#include "synthetic_dump.h"
#include "tensor_document.h"
#include "tensor_preview.h"
#include "tensor_values_model.h"
#include "test_support.h"
#include "widget_checks.h"

namespace probe {
namespace {

using analysis::kNone;
using widgets::MainWindow;

using test::countPixels;
using test::runStudio;
using test::StudioRun;
using test::waitFor;

// Opens a dump in `context` and waits until it is read: whether it opened.
bool openAndWait(context::AppContext& context, const std::string& path) {
    QSignalSpy loaded(&context, &context::AppContext::sessionLoaded);
    context.openDump(QString::fromStdString(path));
    return waitFor([&] { return loaded.count() > 0; }) && loaded.front().front().toBool();
}

// The round box is named before any dump is open (a bare "latest" beside Compare… said
// nothing), and still once one is.
TEST(MainWindowRoundBox, IsNamedBeforeADumpIsOpen) {
    context::AppContext context;
    MainWindow window(&context);
    auto* label = window.findChild<QLabel*>(QStringLiteral("roundLabel"));
    ASSERT_NE(label, nullptr);
    EXPECT_EQ(label->text().trimmed(), QStringLiteral("Round"));
    test::TempDir dir("ui-widgets");
    test::writeSmallSyntheticDump(dir.path());
    ASSERT_TRUE(openAndWait(context, dir.path()));
    EXPECT_EQ(label->text().trimmed(), QStringLiteral("Round"));
}

// A config with no file yet is offered a place beside the open dump (the folder holding
// atb_dump_data), or in the working directory before one is open: the save dialog started in the
// installed configs folder, where typing demo.json overwrote the demo's config (a GUI walk).
TEST(MainWindowConfigSave, ANewConfigGoesBesideTheOpenDump) {
    context::AppContext context;
    MainWindow window(&context);
    auto* editor = window.configEditor();
    EXPECT_EQ(editor->suggestedNewFile(), QDir::current().absoluteFilePath("config.json"));
    test::TempDir dir("ui-widgets");
    test::writeSmallSyntheticDump(dir.path());
    ASSERT_TRUE(openAndWait(context, dir.path()));
    ASSERT_TRUE(context.store()->root().endsWith("atb_dump_data"))
        << context.store()->root().toStdString();
    EXPECT_EQ(editor->suggestedNewFile().toStdString(), dir / "config.json");
    EXPECT_FALSE(editor->suggestedNewFile().startsWith(context.configsDirectory()));
}

// Apply under the tree says what became of the config in the status bar, the Config tab (where
// the editor says it) being out of sight: after a run ended it rewrote the file and said nothing.
TEST(MainWindowConfigOfDump, ApplyUnderTheTreeSaysInTheStatusBarWhatItDid) {
    context::AppContext context;
    MainWindow window(&context);
    window.resize(1200, 800);
    window.show();
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir / "run");
    dump.addRow(0, "0", "embed", "Layer", true, {1.0f, 2.0f});
    dump.setStatus("complete");
    ASSERT_TRUE(openAndWait(context, dir / "run"));
    ASSERT_TRUE(window.configEditor()->apply(QString::fromStdString(dir / "mine.json")));
    window.showView(MainWindow::View::Tree);
    ASSERT_TRUE(waitFor([&] { return !window.configEditor()->isVisible(); }));
    emit window.treePanel()->applyConfigRequested();
    EXPECT_TRUE(window.statusMessage().startsWith(
        QString::fromStdString("Config: Written to " + dir / "mine.json")))
        << window.statusMessage().toStdString();
}

// An opened dump shows the config it was made with (the probe_config.json that `probe run` and
// the launch form write beside atb_dump_data) as a copy, so that Apply never rewrites that
// record: it showed a new config that dumps every layer-level op, whatever the dump held. A
// config the user chose stays.
TEST(MainWindowConfigOfDump, AnOpenedDumpShowsItsConfigAsACopyUnlessTheUserHasOne) {
    context::AppContext context;
    MainWindow window(&context);
    auto* editor = window.configEditor();
    auto* document = context.configDocument();
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir / "runA");
    dump.addRow(0, "0", "embed", "Layer", true, {1.0f, 2.0f});
    dump.addRow(0, "1", "decoder", "Layer", true, {1.0f, 2.0f});
    dump.setStatus("complete");
    const std::string configText =
        "{\n  \"task\": \"statistics\",\n  \"dump_enable\": true,\n  \"ids\": \"1\",\n  "
        "\"exec_range\": \"all\"\n}\n";
    test::writeFile(dir / "runA/probe_config.json", configText);
    ASSERT_TRUE(openAndWait(context, dir / "runA"));
    EXPECT_TRUE(document->filePath().isEmpty()) << document->filePath().toStdString();
    EXPECT_EQ(document->origin().toStdString(), dir / "runA/probe_config.json");
    EXPECT_EQ(document->text().toStdString(), configText);
    EXPECT_FALSE(document->isModified());
    EXPECT_TRUE(context.selection()->isTicked("1"));
    EXPECT_FALSE(context.selection()->isTicked("0"));
    EXPECT_TRUE(window.treePanel()->configText().startsWith(
        "Config: new config from runA/probe_config.json — 1 ticked op"))
        << window.treePanel()->configText().toStdString();
    EXPECT_EQ(editor->fileText(), "new config, not written yet: a copy of runA/probe_config.json");
    // Apply writes the file chosen, never the dump's.
    EXPECT_TRUE(editor->apply(QString::fromStdString(dir / "next.json")))
        << editor->applyStatus().toStdString();
    EXPECT_EQ(test::readFile(dir / "runA/probe_config.json"), configText);
    EXPECT_EQ(test::readFile(dir / "next.json"), configText);
    EXPECT_TRUE(document->origin().isEmpty());

    // The user's own config file (next.json, now the document's) stays when another dump opens.
    test::DumpBuilder other(dir / "runB");
    other.addRow(0, "0", "embed", "Layer", true, {1.0f, 2.0f});
    other.setStatus("complete");
    test::writeFile(dir / "runB/probe_config.json", "{\"task\": \"statistics\"}\n");
    ASSERT_TRUE(openAndWait(context, dir / "runB"));
    EXPECT_EQ(document->filePath().toStdString(), dir / "next.json");
    EXPECT_EQ(document->text().toStdString(), configText);
    // File › Open starts beside the dump shown, where its sibling runs are (it started in the
    // working directory).
    EXPECT_EQ(window.dumpDialogStart().toStdString(), dir.path());
}

// A dump's config, shown as a copy, is that dump's: opening another dump without one starts a
// new config. It stayed, with its ticks made on the ids of another model ("new config from
// runA/probe_config.json — 1 ticked op" over an unrelated dump).
TEST(MainWindowConfigOfDump, ADumpsConfigDoesNotFollowToAnotherDumpWithoutOne) {
    context::AppContext context;
    MainWindow window(&context);
    auto* document = context.configDocument();
    test::TempDir dir("ui-widgets");
    for (const char* run : {"runA", "runB", "runC"}) {
        test::DumpBuilder dump(dir / run);
        dump.addRow(0, "0", "embed", "Layer", true, {1.0f, 2.0f});
        dump.addRow(0, "1", "decoder", "Layer", true, {1.0f, 2.0f});
        dump.setStatus("complete");
    }
    const std::string configText =
        "{\"task\": \"statistics\", \"dump_enable\": true, \"ids\": \"1\"}\n";
    test::writeFile(dir / "runA/probe_config.json", configText);
    test::writeFile(dir / "runC/probe_config.json", configText);
    ASSERT_TRUE(openAndWait(context, dir / "runA"));
    ASSERT_EQ(document->origin().toStdString(), dir / "runA/probe_config.json");
    ASSERT_TRUE(context.selection()->isTicked("1"));
    ASSERT_TRUE(openAndWait(context, dir / "runB"));
    EXPECT_TRUE(document->origin().isEmpty()) << document->origin().toStdString();
    EXPECT_TRUE(document->filePath().isEmpty());
    EXPECT_FALSE(context.selection()->isTicked("1"));
    EXPECT_TRUE(window.treePanel()->configText().startsWith("Config: new config — "))
        << window.treePanel()->configText().toStdString();
    // A dump with its own config shows it again; edits made on it stay with the user.
    ASSERT_TRUE(openAndWait(context, dir / "runC"));
    EXPECT_EQ(document->origin().toStdString(), dir / "runC/probe_config.json");
    context.selection()->setTicked("0", true);
    ASSERT_TRUE(document->isModified());
    ASSERT_TRUE(openAndWait(context, dir / "runB"));
    EXPECT_EQ(document->origin().toStdString(), dir / "runC/probe_config.json");
    EXPECT_TRUE(document->isModified());
    EXPECT_TRUE(context.selection()->isTicked("0"));
}

// View › Where the overflow is born on a dump with none says so (it did nothing, unsaid): while
// the dump is still written, what the search found so far (it said "Still looking" for as long
// as the model ran: the dump grows, so the search is never done); once complete, that there is
// none.
TEST(MainWindowOverflowBirth, ADumpWithoutOverflowSaysThereIsNone) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    for (int round = 0; round < 3; ++round) {
        dump.addRow(round, "0", "embed", "Layer", false, {1.0f, 2.0f});
        dump.addRow(round, "0", "embed", "Layer", true, {0.5f, -3.0f});
    }
    dump.setStatus("running");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    QAction* birth = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
        if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O)) birth = action;
    ASSERT_NE(birth, nullptr);
    birth->trigger();  // nothing open yet
    EXPECT_TRUE(window.statusBar()->currentMessage().startsWith("No dump is open"))
        << window.statusBar()->currentMessage().toStdString();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    const auto says = [&](const char* start) {
        return waitFor([&] {
            birth->trigger();  // "Still looking…" until a search is done
            return window.statusBar()->currentMessage().startsWith(start);
        });
    };
    ASSERT_TRUE(says("No overflow is born in the 6 rows read so far"))
        << window.statusBar()->currentMessage().toStdString();
    EXPECT_TRUE(window.statusBar()->currentMessage().contains("still being written"));
    dump.setStatus("complete");
    ASSERT_TRUE(says("No overflow is born in this dump"))
        << window.statusBar()->currentMessage().toStdString();
}

// An op that ran under another id in a round: chosen by the id the tree shows there, and its
// parameters those of the round shown (op_param.json beside its tensors), not of the round its
// structure was taken from (a GUI walk: round 6's add showed round 0's alpha, and --op with the
// round's id fell back to another op).
TEST(MainWindowParams, AnOpsParametersAreThoseOfTheRoundShown) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    const auto layer = [&](int round, const std::vector<std::string>& children) {
        dump.addLayerRound(round, children);
    };
    layer(0, {"a", "b"});
    layer(1, {"a", "x", "y", "b"});
    test::writeFile(dump.roundDir(0) + "/0_1_b/op_param.json", R"({"alpha": 1})");
    test::writeFile(dump.roundDir(1) + "/0_3_b/op_param.json", R"({"alpha": 7})");
    test::writeFile(dump.roundDir(1) + "/0_0_a/op_param.json", "{not json");
    dump.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    const auto& idx = context.store()->index();
    const uint32_t b = idx.findOp(0, "0_1");
    ASSERT_NE(b, analysis::kNone);
    ASSERT_EQ(idx.idIn(b, 1), "0_3");  // the reader found it moved
    window.setRound(1);
    ASSERT_TRUE(window.selectOp("0_3"));
    EXPECT_EQ(context.cursor()->op(), b);
    const auto details = [&] { return window.tensorsPanel()->detailsText().toStdString(); };
    EXPECT_NE(details().find("parameters in round 1: <tt>{&quot;alpha&quot;:7}</tt>"),
              std::string::npos)
        << details();
    window.setRound(0);  // the header follows the round
    EXPECT_NE(details().find("parameters in round 0: <tt>{&quot;alpha&quot;:1}</tt>"),
              std::string::npos)
        << details();
    // x ran in round 1 under its own id, 0_1, which b's own id is too: the tree shows x there.
    window.setRound(1);
    ASSERT_TRUE(window.selectOp("0_1"));
    EXPECT_EQ(idx.op(context.cursor()->op()).name, "x");
    // Without a round chosen, the first op whose own id it is.
    window.setRound(-1);
    ASSERT_TRUE(window.selectOp("0_1"));
    EXPECT_EQ(context.cursor()->op(), b);
    // A round's file that is not JSON is said, not shown as the parameters.
    window.setRound(1);
    ASSERT_TRUE(window.selectOp("0_0"));
    EXPECT_NE(details().find("parameters in round 1 unreadable: "), std::string::npos) << details();
    EXPECT_NE(details().find("op_param.json"), std::string::npos) << details();
}

// Replay of an op whose tensors were not dumped says why it cannot run, before running probe
// replay (whose "found no op with tensor data" read as a failed replay).
TEST(MainWindowReplay, AnOpWithoutTensorsIsNotReplayedAndItSaysWhy) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    // A row of statistics only, as task "statistics" writes it: no tensor file named.
    test::TempDir scratch("ui-widgets");
    format::StatRow row = test::DumpBuilder(scratch.path()).addRow(0, "0", "embed", "Layer", true);
    row.tensorPath.clear();
    dump.appendRaw(0, format::formatStatRow(row));
    dump.addRow(0, "1", "head", "Linear", true, {1.0f, 2.0f});  // its tensor file written
    // An input with its file, an output without (metadata only): replayable.
    dump.addRow(0, "2", "mixed", "Linear", false, {1.0f, 2.0f});
    format::StatRow metadata =
        test::DumpBuilder(scratch.path()).addRow(0, "2", "mixed", "Linear", true);
    metadata.tensorPath.clear();
    dump.appendRaw(0, format::formatStatRow(metadata));
    dump.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    QPushButton* button = nullptr;
    for (auto* b : window.tensorsPanel()->findChildren<QPushButton*>())
        if (b->text() == "Replay this op") button = b;
    ASSERT_NE(button, nullptr);
    ASSERT_TRUE(window.selectOp("1"));
    EXPECT_TRUE(button->isEnabled());
    ASSERT_TRUE(window.selectOp("2"));
    EXPECT_TRUE(button->isEnabled());
    // Statistics only: the button is off, and says why (it was on, to say so once clicked).
    ASSERT_TRUE(window.selectOp("0"));
    EXPECT_FALSE(button->isEnabled());
    EXPECT_TRUE(button->toolTip().contains("tensors were not dumped"))
        << button->toolTip().toStdString();
    EXPECT_FALSE(window.tensorsPanel()->replayCurrentOp());
    const QString said = window.tensorsPanel()->replayText();
    EXPECT_TRUE(said.contains("cannot be replayed in round 0")) << said.toStdString();
    EXPECT_TRUE(said.contains("task \"tensor\" or \"all\"")) << said.toStdString();
    // An op with no row at all (known from the structure only) was not dumped at all.
    test::TempDir other("ui-widgets");
    test::DumpBuilder structured(other.path());
    format::ModelStructure model;
    model.modelName = "M";
    model.nodes.push_back(test::node("layer", "0", "Layer", {test::node("inner", "0_0", "Inner")}));
    structured.writeModel(model);
    structured.addRow(0, "0", "layer", "Layer", true);
    structured.setStatus("complete");
    ASSERT_TRUE(openAndWait(context, other.path()));
    ASSERT_TRUE(window.selectOp("0_0"));
    EXPECT_FALSE(window.tensorsPanel()->replayCurrentOp());
    EXPECT_TRUE(window.tensorsPanel()->replayText().contains("nothing of it was dumped"))
        << window.tensorsPanel()->replayText().toStdString();
}

// While the dump grows and the latest round is meant (Round "latest"), the op's table highlights
// its newest row as rows arrive (it stayed on the round that was latest when the op was chosen:
// found by a GUI walk, attached to a running model).
TEST(MainWindowLive, TheTensorsTableFollowsTheLatestRound) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    for (int round = 0; round < 2; ++round) dump.addRow(round, "0", "layer", "Layer", true);
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    ASSERT_TRUE(window.selectOp("0"));
    ASSERT_EQ(context.cursor()->round(), -1);
    QTableView* table = window.tensorsPanel()->view();
    // The round of the row highlighted in the table (-1: none).
    auto highlightedRound = [&] {
        const QModelIndex current = table->currentIndex();
        if (!current.isValid()) return -1;
        const uint32_t row = window.tensorsPanel()->model()->rowAt(current.row());
        return row == analysis::kNone ? -1 : context.store()->index().row(row).round;
    };
    ASSERT_TRUE(waitFor([&] { return highlightedRound() == 1; })) << highlightedRound();
    for (int round = 2; round < 5; ++round) dump.addRow(round, "0", "layer", "Layer", true);
    ASSERT_TRUE(waitFor([&] { return table->model()->rowCount() == 5; }));
    EXPECT_TRUE(waitFor([&] { return highlightedRound() == 4; }))
        << "the highlight stayed on round " << highlightedRound();
    EXPECT_EQ(context.cursor()->round(), -1);  // still the latest meant
    dump.setStatus("complete");
}

// A user who scrolls the op's table up to read, while rows come in the latest round: it stays
// where they scrolled (it jumped to the newest row at every batch while the highlight was in
// sight, and could not be browsed: a helper's GUI walk). Back at the end, it follows again.
TEST(MainWindowLive, TheTensorsTableStaysWhereTheUserScrolledWhileRowsCome) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    int rounds = 0;
    for (; rounds < 80; ++rounds) dump.addRow(rounds, "0", "layer", "Layer", true);
    context::AppContext context;
    MainWindow window(&context);
    window.resize(1400, 900);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    ASSERT_TRUE(window.selectOp("0"));
    ASSERT_EQ(context.cursor()->round(), -1);
    QTableView* table = window.tensorsPanel()->view();
    QScrollBar* bar = table->verticalScrollBar();
    auto highlightedRound = [&] {
        const QModelIndex current = table->currentIndex();
        if (!current.isValid()) return -1;
        const uint32_t row = window.tensorsPanel()->model()->rowAt(current.row());
        return row == analysis::kNone ? -1 : context.store()->index().row(row).round;
    };
    ASSERT_TRUE(waitFor([&] { return highlightedRound() == rounds - 1; })) << highlightedRound();
    ASSERT_GT(bar->maximum(), 0) << "the table must scroll for this test";
    ASSERT_TRUE(waitFor([&] { return bar->value() == bar->maximum(); }));

    // The wheel, one notch up: three rows, the newest still in sight.
    const QPoint middle = table->viewport()->rect().center();
    QWheelEvent wheel(middle, table->viewport()->mapToGlobal(middle), QPoint(), QPoint(0, 120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(table->viewport(), &wheel);
    QApplication::processEvents();
    const int reading = bar->value();
    ASSERT_LT(reading, bar->maximum());
    for (const int more : {3, 3}) {
        const int until = rounds + more;
        for (; rounds < until; ++rounds) dump.addRow(rounds, "0", "layer", "Layer", true);
        ASSERT_TRUE(waitFor([&] { return highlightedRound() == rounds - 1; }))
            << highlightedRound();
        EXPECT_EQ(bar->value(), reading) << "the table scrolled away from where the user reads";
    }

    // Back at the end: it follows again.
    bar->triggerAction(QAbstractSlider::SliderToMaximum);
    QApplication::processEvents();
    const int until = rounds + 3;
    for (; rounds < until; ++rounds) dump.addRow(rounds, "0", "layer", "Layer", true);
    ASSERT_TRUE(waitFor([&] { return highlightedRound() == rounds - 1; })) << highlightedRound();
    EXPECT_TRUE(waitFor([&] { return bar->value() == bar->maximum(); }));
    EXPECT_TRUE(table->viewport()->rect().intersects(table->visualRect(table->currentIndex())));
    dump.setStatus("complete");
}

// A live run opens at the first op, chosen by the app, and goes to the first NaN when the dump
// completes with one. An op the user picked in the tree stays picked, even the one the app had
// chosen (picking it changed nothing the app could see, and the end of the run moved the user's
// selection and round away).
TEST(MainWindow, AnOpTheUserPickedStaysPickedWhenTheRunEndsWithANaN) {
    enum class Pick { None, InTheTree, ARoundOnThePlot };
    for (const Pick pick : {Pick::None, Pick::InTheTree, Pick::ARoundOnThePlot}) {
        SCOPED_TRACE(static_cast<int>(pick));
        const bool picked = pick != Pick::None;
        test::TempDir dir("ui-widgets");
        test::DumpBuilder dump(dir.path());
        dump.setStatus("running");
        dump.addRow(0, "0", "embed", "Embedding", true, {1.0f});
        dump.addRow(0, "1", "layer", "Layer", true, {1.0f});
        context::AppContext context;
        MainWindow window(&context);
        window.resize(1200, 800);
        window.show();
        ASSERT_TRUE(openAndWait(context, dir.path()));
        QTreeView* tree = window.treePanel()->view();
        ASSERT_TRUE(waitFor([&] { return tree->currentIndex().isValid(); }));
        const auto& idx = context.store()->index();
        const uint32_t embed = idx.findOp(0, "0"), layer = idx.findOp(0, "1");
        ASSERT_EQ(context.cursor()->op(), embed);
        if (pick == Pick::InTheTree) {
            const QRect rect = tree->visualRect(tree->currentIndex());
            ASSERT_FALSE(rect.isEmpty());
            QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, rect.center());
            ASSERT_EQ(context.cursor()->op(), embed);
        } else if (pick == Pick::ARoundOnThePlot) {
            // A point of the app's op picked on the plot (its round 0), as the plot says it.
            const uint32_t slot = idx.op(embed).tensorSlots.at(0);
            emit window.statisticsPlot()->rowActivated(idx.slotRow(slot, 0));
            ASSERT_EQ(context.cursor()->op(), embed);
            ASSERT_EQ(context.cursor()->round(), 0);
        }
        dump.addRow(1, "0", "embed", "Embedding", true, {1.0f});
        dump.addRow(1, "1", "layer", "Layer", true, {std::nanf("")});
        dump.setStatus("complete");
        ASSERT_TRUE(waitFor([&] {
            return context.store()->dumpState() == "complete" && !window.firstNanText().isEmpty();
        }));
        if (picked) {
            QCoreApplication::processEvents();
            EXPECT_EQ(context.cursor()->op(), embed);
            EXPECT_EQ(context.cursor()->round(), pick == Pick::ARoundOnThePlot ? 0 : -1);
        } else {
            EXPECT_TRUE(waitFor(
                [&] { return context.cursor()->op() == layer && context.cursor()->round() == 1; }));
        }
    }
}

class MainWindowTest : public ::testing::Test {
protected:
    void SetUp() override {
        test::writeSmallSyntheticDump(dir_.path());
        window_.resize(1400, 900);
        window_.show();
        ASSERT_TRUE(openAndWait(context_, dir_.path()));
        // The window shows the dump: the cursor's op current in the tree, its rows in the table.
        ASSERT_TRUE(waitFor([&] {
            return window_.treePanel()->view()->currentIndex().isValid() &&
                   window_.tensorsPanel()->model()->rowCount() > 0;
        }));
    }

    test::TempDir dir_{"ui-widgets"};
    context::AppContext context_;
    MainWindow window_{&context_};
};

TEST_F(MainWindowTest, OpensAtTheFirstNaNAndDrawsTheTree) {
    const auto& idx = context_.store()->index();
    // The first NaN in execution order: layer 2's input in round 2 (after layer 1 overflowed).
    EXPECT_EQ(context_.cursor()->op(), idx.findOp(0, "2"));
    EXPECT_EQ(context_.cursor()->round(), 2);
    EXPECT_TRUE(window_.firstNanText().startsWith("⚠ First NaN: round 2, "))
        << window_.firstNanText().toStdString();
    QTreeView* tree = window_.treePanel()->view();
    const QModelIndex current = tree->currentIndex();
    ASSERT_TRUE(current.isValid());
    EXPECT_EQ(current.siblingAtColumn(data::OpTreeModel::IdColumn).data().toString(), "2");
    EXPECT_TRUE(window_.statusText().contains("60 ops")) << window_.statusText().toStdString();
    EXPECT_TRUE(window_.statusText().contains("complete")) << window_.statusText().toStdString();
    // The NaN mark beside the layer's name is drawn in its colour.
    const QImage tree_image = tree->viewport()->grab().toImage();
    EXPECT_GT(countPixels(tree_image, [](QColor c) { return c == QColor(200, 30, 30); }), 20);
    // The tensors table lists the op's rows: input and output in five rounds.
    EXPECT_EQ(window_.tensorsPanel()->model()->rowCount(), 10);
    const QTableView* table = window_.tensorsPanel()->view();
    EXPECT_EQ(window_.tensorsPanel()->model()->rowAt(table->currentIndex().row()),
              context_.cursor()->row());
    // Ticking an op in the tree is written to the config and shown in the config bar.
    window_.treePanel()->model()->setData(
        window_.treePanel()->model()->indexOfOp(idx.findOp(0, "1")), Qt::Checked,
        Qt::CheckStateRole);
    EXPECT_EQ(context_.selection()->config().ids, (std::vector<std::string>{"1"}));
    bool barSaysIt = false;
    for (auto* label : window_.treePanel()->findChildren<QLabel*>())
        barSaysIt = barSaysIt || label->text().contains("1 ticked op");
    EXPECT_TRUE(barSaysIt);
    // Search filters the drawn tree.
    window_.treePanel()->setSearchText("self_attn");
    ASSERT_EQ(tree->model()->rowCount(), 3);
    EXPECT_EQ(tree->model()->rowCount(tree->model()->index(0, 0)), 1);
    EXPECT_EQ(tree->model()->index(0, 0, tree->model()->index(0, 0)).data().toString(),
              "self_attn");
}

// In the smallest window the plot's controls read whole: in one row they were cut to "Ter",
// "Norr" and "lear pir".
TEST_F(MainWindowTest, TheStatisticsControlsReadWholeInTheSmallestWindow) {
    window_.resize(MainWindow::kMinimumWidth, MainWindow::kMinimumHeight);
    window_.showView(MainWindow::View::Plot);
    auto* plot = window_.statisticsPlot();
    for (const auto mode :
         {widgets::StatisticsPlot::Mode::Rounds, widgets::StatisticsPlot::Mode::RoundProfile}) {
        plot->setMode(mode);
        QApplication::processEvents();
        int shown = 0;
        for (QWidget* control : plot->findChildren<QWidget*>()) {
            if (!control->isVisible() ||
                (!qobject_cast<QAbstractButton*>(control) && !qobject_cast<QComboBox*>(control)))
                continue;
            ++shown;
            EXPECT_GE(control->width(), control->sizeHint().width())
                << control->metaObject()->className() << " "
                << (qobject_cast<QAbstractButton*>(control)
                        ? qobject_cast<QAbstractButton*>(control)->text().toStdString()
                        : qobject_cast<QComboBox*>(control)->currentText().toStdString());
        }
        EXPECT_GE(shown, 5);
    }
}

// The start page and the launch form in the smallest window: every text keeps the lines it wraps
// to and the page scrolls (the start page's descriptions were cut to their first line).
TEST_F(MainWindowTest, TheStartPageAndLaunchFormKeepTheirTextsInTheSmallestWindow) {
    window_.resize(MainWindow::kMinimumWidth, MainWindow::kMinimumHeight);
    for (const auto page : {MainWindow::Page::Start, MainWindow::Page::Launch}) {
        window_.showPage(page);
        QApplication::processEvents();
        QWidget* shown = page == MainWindow::Page::Start
                             ? static_cast<QWidget*>(window_.startPage())
                             : window_.launchForm();
        int checked = 0;
        for (QWidget* w : shown->findChildren<QWidget*>()) {
            if (!w->isVisibleTo(shown) || !w->hasHeightForWidth()) continue;
            if (auto* label = qobject_cast<QLabel*>(w); label && !label->wordWrap()) continue;
            ++checked;
            EXPECT_GE(w->height(), w->heightForWidth(w->width()))
                << w->metaObject()->className() << " " << w->objectName().toStdString();
        }
        EXPECT_GE(checked, page == MainWindow::Page::Start ? 5 : 1);
        auto* area = qobject_cast<QScrollArea*>(shown->parentWidget()->parentWidget());
        ASSERT_NE(area, nullptr) << "the page scrolls when the window is lower than it";
        EXPECT_EQ(area->horizontalScrollBar()->maximum(), 0) << "as wide as the window";
    }
}

TEST_F(MainWindowTest, StatisticsPlotDrawsMarksAndPicksPoints) {
    window_.showView(MainWindow::View::Plot);
    auto* plot = window_.statisticsPlot();
    plot->setMode(widgets::StatisticsPlot::Mode::Rounds);
    ASSERT_EQ(plot->series().size(), 4);  // Max, Min, Mean, Norm of layer 2's output
    for (const auto& series : plot->series()) EXPECT_EQ(series.x.size(), 5);
    EXPECT_EQ(plot->series()[0].markers.size(), 1);  // NaN in round 2
    // The NaN marks at the top edge, each in its line's colour (whose NaN it is).
    QCustomPlot* marked = plot->plot();
    QSet<QRgb> lineColours, markColours;
    int keys = 0;  // the legend's key of the NaN mark: no data, in no series' colour
    for (int g = 0; g < marked->graphCount(); ++g) {
        const QCPGraph* graph = marked->graph(g);
        if (graph->lineStyle() != QCPGraph::lsNone) lineColours.insert(graph->pen().color().rgb());
        if (graph->scatterStyle().shape() != QCPScatterStyle::ssCross) continue;
        if (graph->dataCount() == 0) {
            ++keys;
            EXPECT_EQ(graph->scatterStyle().pen().color(), widgets::kNonFiniteMarkKeyColor);
            EXPECT_EQ(graph->name(), "NaN (at the edge)");
            EXPECT_TRUE(graph->visible() && marked->legend->hasItemWithPlottable(graph));
            continue;
        }
        markColours.insert(graph->scatterStyle().pen().color().rgb());
        EXPECT_EQ(graph->dataCount(), 1);
    }
    EXPECT_EQ(keys, 1);
    QStringList legendOrder;  // the series, then the key of their marks
    for (int i = 0; i < marked->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(marked->legend->item(i)))
            legendOrder << item->plottable()->name();
    EXPECT_EQ(legendOrder, (QStringList{"Max", "Min", "Mean", "Norm", "NaN (at the edge)"}));
    EXPECT_EQ(markColours.size(), 4);  // NaN in all four statistics of round 2
    EXPECT_TRUE(lineColours.contains(markColours));
    EXPECT_FALSE(lineColours.contains(widgets::kNonFiniteMarkKeyColor.rgb()));
    // Each apart from the others (they were drawn on one spot: only Norm's showed), and
    // hovering each reads out its own statistic.
    qApp->processEvents();
    marked->replot();
    QList<double> markPixels;
    for (int g = 0; g < marked->graphCount(); ++g) {
        const QCPGraph* graph = marked->graph(g);
        if (graph->scatterStyle().shape() != QCPScatterStyle::ssCross || graph->dataCount() != 1)
            continue;
        markPixels << marked->yAxis->coordToPixel(graph->data()->begin()->value);
    }
    ASSERT_EQ(markPixels.size(), 4);
    std::sort(markPixels.begin(), markPixels.end());
    for (int i = 1; i < markPixels.size(); ++i)
        EXPECT_GE(markPixels[i] - markPixels[i - 1], 11) << "marks overlap: " << i;
    const char* statNames[] = {"Max", "Min", "Mean", "Norm"};
    QList<const QCPGraph*> lines;  // the series' lines, in their order
    for (int g = 0; g < marked->graphCount(); ++g)
        if (marked->graph(g)->lineStyle() != QCPGraph::lsNone) lines << marked->graph(g);
    ASSERT_GE(lines.size(), 4);
    for (int s = 0; s < 4; ++s) {
        const auto& series = plot->series()[s];
        ASSERT_EQ(series.markers.size(), 1);
        const double x = marked->xAxis->coordToPixel(series.markers[0].x);
        const QCPGraph* mark = nullptr;
        for (int g = 0; g < marked->graphCount() && !mark; ++g)
            if (marked->graph(g)->scatterStyle().shape() == QCPScatterStyle::ssCross &&
                marked->graph(g)->scatterStyle().pen().color() == lines[s]->pen().color())
                mark = marked->graph(g);
        ASSERT_NE(mark, nullptr) << statNames[s];
        const double y = marked->yAxis->coordToPixel(mark->data()->begin()->value);
        plot->hoverAt(QPoint(static_cast<int>(x), static_cast<int>(y)));
        EXPECT_TRUE(plot->readout().contains(QString::fromLatin1(statNames[s]) + " = nan"))
            << statNames[s] << ": " << plot->readout().toStdString();
    }

    // Hovering a point reads it out; clicking it selects that op and round.
    const auto& norm = plot->series()[3];
    QCustomPlot* qcp = plot->plot();
    const QPoint point(static_cast<int>(qcp->xAxis->coordToPixel(norm.x[4])),
                       static_cast<int>(qcp->yAxis->coordToPixel(norm.y[4])));
    plot->hoverAt(point);
    EXPECT_TRUE(plot->readout().contains("round 4")) << plot->readout().toStdString();
    EXPECT_TRUE(plot->readout().contains("Norm")) << plot->readout().toStdString();
    QSignalSpy activated(plot, &widgets::StatisticsPlot::rowActivated);
    QTest::mouseClick(qcp, Qt::LeftButton, Qt::NoModifier, point);
    ASSERT_EQ(activated.count(), 1);
    EXPECT_EQ(context_.cursor()->round(), 4);
    EXPECT_EQ(context_.cursor()->row(), norm.rows[4]);

    // One statistic of every layer-level op of the round, then of every op.
    window_.setRound(2);
    EXPECT_EQ(window_.treePanel()->model()->round(), 2);  // the tree's statistics follow
    plot->setMode(widgets::StatisticsPlot::Mode::RoundProfile);
    ASSERT_EQ(plot->series().size(), 1);
    EXPECT_EQ(plot->series()[0].x.size(), 3);
    // One series: a legend only for its NaN mark, which it had none for.
    ASSERT_FALSE(plot->series()[0].markers.isEmpty());
    EXPECT_TRUE(qcp->legend->visible());
    QStringList legendNames;
    for (int i = 0; i < qcp->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(qcp->legend->item(i)))
            legendNames << item->plottable()->name();
    EXPECT_TRUE(legendNames.contains("NaN (at the edge)")) << legendNames.join(", ").toStdString();
    plot->setProfileAllDepths(true);
    EXPECT_EQ(plot->series()[0].x.size(), 60);
    plot->pinCurrent();
    window_.setRound(1);
    EXPECT_EQ(plot->series().size(), 2);  // round 2 pinned, round 1 current
    plot->setLogScale(true);
    EXPECT_EQ(qcp->yAxis->scaleType(), QCPAxis::stLogarithmic);
    plot->clearPins();
    EXPECT_EQ(plot->series().size(), 1);
}

TEST_F(MainWindowTest, TensorPreviewRendersTheHeatmapAndExports) {
    window_.showView(MainWindow::View::Tensor);
    auto* preview = window_.tensorPreview();
    QSignalSpy image(preview->document(), &data::TensorDocument::imageReady);
    ASSERT_TRUE(window_.previewCurrentTensor());  // layer 2's input in round 2: NaN planted
    ASSERT_TRUE(waitFor([&] { return image.count() > 0 && preview->factsText().contains("NaN"); }))
        << preview->factsText().toStdString();
    EXPECT_TRUE(preview->factsText().contains("matches")) << preview->factsText().toStdString();
    EXPECT_TRUE(preview->factsText().contains("16 × 64")) << preview->factsText().toStdString();
    const QImage heat = preview->heatmap()->grab().toImage();
    const int red = countPixels(heat, [](QColor c) { return c == QColor(230, 20, 20); });
    EXPECT_GT(red, 100);
    EXPECT_EQ(
        countPixels(heat, [](QColor c) { return c.red() == 0 && c.green() == 0 && c.blue() > 90; }),
        0);
    image.clear();
    preview->setOverlay(true);
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    auto overlaid = [&] {
        return countPixels(preview->heatmap()->grab().toImage(), [](QColor c) {
            return c.red() == 0 && c.green() == 0 && c.blue() > 90;
        });
    };
    EXPECT_TRUE(waitFor([&] { return overlaid() > 100; })) << overlaid() << " overlay pixels";
    // Hover read-out of a heatmap cell.
    QCustomPlot* heatmap = preview->heatmap();
    preview->hoverHeatmap(QPoint(static_cast<int>(heatmap->xAxis->coordToPixel(0)),
                                 static_cast<int>(heatmap->yAxis->coordToPixel(0))));
    EXPECT_TRUE(preview->heatmapReadout().startsWith("row 0, column 0 (element 0): nan"))
        << preview->heatmapReadout().toStdString();
    // Values and histogram pages have content.
    EXPECT_EQ(preview->valuesModel()->rowCount(), 16);
    EXPECT_EQ(preview->valuesModel()->columnCount(), 64);
    EXPECT_GT(preview->histogramPlot()->plottable(0)->interface1D()->dataCount(), 10);
    // Export.
    QString error;
    const QString npy = QString::fromStdString(dir_ / "t.npy"),
                  csv = QString::fromStdString(dir_ / "t.csv");
    ASSERT_TRUE(preview->exportNpy(npy, &error)) << error.toStdString();
    ASSERT_TRUE(preview->exportCsv(csv, &error)) << error.toStdString();
    EXPECT_EQ(test::readFile(npy.toStdString()).substr(1, 5), "NUMPY");
    EXPECT_EQ(test::splitLines(test::readFile(csv.toStdString())).size(), 16u);
    // While shown, the preview follows the selection (a click on a plot point, a table row).
    const auto& idx = context_.store()->index();
    const uint32_t other = idx.slotRow(idx.representativeSlot(idx.findOp(0, "0")), 1);
    context_.cursor()->setRow(other);
    EXPECT_EQ(preview->row(), other);
    EXPECT_TRUE(preview->document()->path().endsWith("1/0_layers.0/after/outtensor0.bin"))
        << preview->document()->path().toStdString();

    // Open tensor… offers .pt files too (the msprobe layout's; it offered *.bin only), from the
    // shown tensor's folder.
    QPushButton* open = nullptr;
    for (auto* button : preview->findChildren<QPushButton*>())
        if (button->text() == "Open tensor…") open = button;
    ASSERT_NE(open, nullptr);
    QStringList filters;
    QString folder;
    QTimer::singleShot(0, [&] {
        ASSERT_TRUE(waitFor([] { return QApplication::activeModalWidget() != nullptr; }));
        auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
        ASSERT_NE(dialog, nullptr);
        filters = dialog->nameFilters();
        folder = dialog->directory().absolutePath();
        dialog->reject();
    });
    open->click();
    ASSERT_FALSE(filters.isEmpty());
    EXPECT_EQ(filters[0], "Tensor files (*.bin *.pt)");
    EXPECT_EQ(folder, QFileInfo(preview->document()->path()).absolutePath());
}

// Help › Documentation shows the README installed beside the application, rendered (no
// Markdown marks), and its links to docs/ open those pages in the same window.
TEST_F(MainWindowTest, HelpShowsTheDocumentationAndFollowsItsLinks) {
    QAction* documentation = nullptr;
    for (QAction* menu : window_.menuBar()->actions())
        if (menu->text() == "&Help")
            for (QAction* action : menu->menu()->actions())
                if (action->text() == "&Documentation") documentation = action;
    ASSERT_NE(documentation, nullptr);
    documentation->trigger();
    QTextBrowser* browser = window_.documentationBrowser();
    ASSERT_NE(browser, nullptr);
    EXPECT_TRUE(browser->window()->isVisible());
    const QString readme = browser->toPlainText();
    EXPECT_TRUE(readme.startsWith("Probe Studio\n")) << readme.left(200).toStdString();
    EXPECT_FALSE(readme.contains("\n## ")) << "Markdown shown as text";
    EXPECT_TRUE(readme.contains("probe compare"));
    // Its screenshots, two to a table row, fit half the page (at 1400 pixels each was cut).
    int pictures = 0;
    for (QTextBlock block = browser->document()->begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextCharFormat format = it.fragment().charFormat();
            if (!format.isImageFormat()) continue;
            const QImage image =
                browser->document()
                    ->resource(QTextDocument::ImageResource, QUrl(format.toImageFormat().name()))
                    .value<QImage>();
            ASSERT_FALSE(image.isNull()) << format.toImageFormat().name().toStdString();
            EXPECT_LE(image.width(), browser->viewport()->width() / 2);
            ++pictures;
        }
    EXPECT_GE(pictures, 4);
    browser->setSource(QUrl("docs/compare.md"));  // as a click on the README's link does
    EXPECT_TRUE(browser->toPlainText().startsWith("Comparing two runs: probe compare"))
        << browser->toPlainText().left(200).toStdString();
    browser->backward();
    EXPECT_TRUE(browser->toPlainText().startsWith("Probe Studio\n"));
}

// Help › Documentation's pages fit the window's width: their code blocks wrap, as the text does.
// A long command line in a code block made every page of the README scroll sideways (found by a
// GUI walk).
TEST_F(MainWindowTest, TheDocumentationsCodeBlocksFitThePage) {
    ASSERT_TRUE(window_.showDocumentation());
    QTextBrowser* browser = window_.documentationBrowser();
    ASSERT_NE(browser, nullptr);
    const QDir doc(context_.dataDirectory() + "/doc");
    QStringList pages{"README.md"};
    for (const QString& page : QDir(doc.filePath("docs")).entryList({"*.md"}, QDir::Files))
        pages << "docs/" + page;
    ASSERT_GE(pages.size(), 5);
    int codeBlocks = 0;
    for (const QString& page : pages) {
        browser->setSource(QUrl::fromLocalFile(doc.filePath(page)));
        QCoreApplication::processEvents();
        int longest = 0;  // the longest line of a code block, in pixels at its font
        for (QTextBlock block = browser->document()->begin(); block.isValid();
             block = block.next()) {
            if (!block.blockFormat().hasProperty(QTextFormat::BlockCodeFence)) continue;
            ++codeBlocks;
            const QFontMetrics metrics(block.charFormat().font());
            for (const QString& line : block.text().split(QChar::LineSeparator))
                longest = std::max(longest, metrics.horizontalAdvance(line));
        }
        EXPECT_EQ(browser->horizontalScrollBar()->maximum(), 0)
            << page.toStdString() << ": its longest code line is " << longest
            << " pixels wide, the page " << browser->viewport()->width();
    }
    EXPECT_GT(codeBlocks, 20);
    // The README's code is all there, wrapped.
    browser->setSource(QUrl::fromLocalFile(doc.filePath("README.md")));
    EXPECT_TRUE(browser->toPlainText().contains(
        "probe run --output out --config my_config.json -- /usr/bin/python3 train.py"));
}

TEST_F(MainWindowTest, StatisticsOnlyRowsExplainWhyThereIsNoTensor) {
    // Kernel rows of the synthetic dump have no tensor file.
    const auto& idx = context_.store()->index();
    context_.cursor()->setOp(idx.findOp(0, "0_1"));
    EXPECT_FALSE(window_.previewCurrentTensor());
    window_.tensorPreview()->openRow(context_.cursor()->row());
    EXPECT_TRUE(window_.tensorPreview()->factsText().contains("no tensor file"))
        << window_.tensorPreview()->factsText().toStdString();
}

// A dump of one layer-level op, running, open on the plot view; the tests add its rounds.
class GrowingDumpPlot : public ::testing::Test {
protected:
    void SetUp() override {
        dump_.setStatus("running");
        dump_.addRow(0, "0", "layer", "Layer", true, {1, 2, 3});
        context_.store()->setIdlePollInterval(40);
        window_.show();
        ASSERT_TRUE(openAndWait(context_, dir_.path()));
        window_.showView(MainWindow::View::Plot);
        plot_ = window_.statisticsPlot();
        ASSERT_EQ(plot_->series().size(), 4);
        EXPECT_EQ(plot_->series()[0].x.size(), 1);
    }

    test::TempDir dir_{"ui-widgets"};
    test::DumpBuilder dump_{dir_.path()};
    context::AppContext context_;
    MainWindow window_{&context_};
    widgets::StatisticsPlot* plot_ = nullptr;
};

TEST_F(GrowingDumpPlot, PlotsFollowAGrowingDump) {
    auto* plot = plot_;
    // The model runs on: two more rounds, the second with an overflow.
    dump_.addRow(1, "0", "layer", "Layer", true, {1, 2, 4});
    dump_.addRow(2, "0", "layer", "Layer", true, {1, INFINITY, 4});
    ASSERT_TRUE(waitFor([&] { return plot->series()[0].x.size() == 3; }));
    EXPECT_EQ(plot->series()[0].markers.size(), 1);  // Max = +inf at round 2
    EXPECT_TRUE(window_.statusText().contains("running")) << window_.statusText().toStdString();
    dump_.setStatus("complete");
    ASSERT_TRUE(waitFor([&] { return window_.statusText().contains("complete"); }));
}

// While the mouse is over the plot, a growing dump's redraw keeps the axes still (the point
// being read moved away under the mouse); they fit what came once it leaves.
TEST_F(GrowingDumpPlot, PlotsHoldStillUnderTheMouseWhileTheDumpGrows) {
    auto* plot = plot_;
    dump_.addRow(1, "0", "layer", "Layer", true, {1, 2, 4});
    ASSERT_TRUE(waitFor([&] { return plot->series()[0].x.size() == 2; }));
    QCustomPlot* drawing = plot->plot();
    const QCPRange before = drawing->xAxis->range();
    const QPoint middle(drawing->width() / 2, drawing->height() / 2);
    QMouseEvent move(QEvent::MouseMove, middle, drawing->mapToGlobal(middle), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(drawing, &move);
    for (int round = 2; round < 6; ++round)
        dump_.addRow(round, "0", "layer", "Layer", true, {1, 2, static_cast<float>(3 + round)});
    ASSERT_TRUE(waitFor([&] { return plot->series()[0].x.size() == 6; }));
    EXPECT_EQ(drawing->xAxis->range(), before) << drawing->xAxis->range().upper;
    QEvent leave(QEvent::Leave);
    QCoreApplication::sendEvent(drawing, &leave);
    EXPECT_TRUE(drawing->xAxis->range().contains(5)) << drawing->xAxis->range().upper;
    EXPECT_FALSE(drawing->xAxis->range().contains(6)) << drawing->xAxis->range().upper;

    // Ops across the latest round: the round drawn holds too (its points moved away, round
    // after round, under axes held still).
    plot->setMode(widgets::StatisticsPlot::Mode::RoundProfile);
    EXPECT_TRUE(plot->titleText().contains("round 5")) << plot->titleText().toStdString();
    QCoreApplication::sendEvent(drawing, &move);
    for (int round = 6; round < 8; ++round)
        dump_.addRow(round, "0", "layer", "Layer", true, {1, 2, static_cast<float>(3 + round)});
    ASSERT_TRUE(waitFor(
        [&] { return context_.store()->index().rounds(0).size() == 8 && !plot->redrawPending(); }));
    EXPECT_TRUE(plot->titleText().contains("round 5")) << plot->titleText().toStdString();
    QCoreApplication::sendEvent(drawing, &leave);
    EXPECT_TRUE(plot->titleText().contains("round 7")) << plot->titleText().toStdString();
}

// A task tensor dump: the plot of the selected tensor fills as its statistics come from the
// files, after the rows (it stayed at what was known when it was drawn); the status bar says
// where they came from.
TEST(MainWindow, ATensorDumpsPlotFillsAsItsStatisticsArrive) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    dump.setStatisticsPrinted(false);
    for (int round = 0; round < 3; ++round)
        dump.addRow(round, "0", "layer", "Layer", true, {1, 2, static_cast<float>(3 + round)});
    dump.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    window.showView(MainWindow::View::Plot);
    auto* plot = window.statisticsPlot();
    auto* table = window.tensorsPanel()->model();
    QSignalSpy tableChanged(table, &QAbstractItemModel::dataChanged);
    context.openDump(QString::fromStdString(dir.path()));
    ASSERT_TRUE(waitFor([&] { return context.cursor()->op() != analysis::kNone; }));
    ASSERT_TRUE(
        waitFor([&] { return context.store()->index().rowsWithStatisticsFromData() == 3; }));
    // Max, round by round (the plot is redrawn a moment after a change).
    EXPECT_TRUE(waitFor([&] {
        return !plot->series().empty() && plot->series()[0].y == QVector<double>{3, 4, 5};
    }));
    ASSERT_FALSE(plot->series().empty());
    EXPECT_EQ(plot->series()[0].y, (QVector<double>{3, 4, 5}));
    EXPECT_TRUE(window.statusText().contains("statistics computed from the tensor files"))
        << window.statusText().toStdString();
    // So does the op's table, its rows the same: told its cells changed (it kept showing N/A).
    ASSERT_EQ(table->rowCount(), 3);
    EXPECT_FALSE(tableChanged.isEmpty());
    QStringList maxima;
    for (int row = 0; row < 3; ++row)
        maxima << table->index(row, data::OpTensorsModel::MaxColumn).data().toString();
    EXPECT_EQ(maxima,
              (QStringList{data::OpTreeModel::formatValue(3), data::OpTreeModel::formatValue(4),
                           data::OpTreeModel::formatValue(5)}));
    // The preview of such a row says the dump records none: it said "Recorded in the dump ...
    // matches", the file's statistics compared with themselves.
    window.tensorPreview()->openRow(context.store()->index().slotRow(
        context.store()->index().representativeSlot(context.cursor()->op()), 1));
    ASSERT_TRUE(
        waitFor([&] { return window.tensorPreview()->factsText().contains("Recomputed"); }));
    EXPECT_FALSE(window.tensorPreview()->factsText().contains("Recorded in the dump"));
    EXPECT_TRUE(window.tensorPreview()->factsText().contains("records no statistics"))
        << window.tensorPreview()->factsText().toStdString();
}

// An op without rows selected: the plot says it has none (it said "Select an op or a tensor",
// as if the click had been lost: a GUI walk).
TEST(MainWindow, ThePlotOfAnOpWithoutRowsSaysSo) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0_0", "layer/kid", "aten::mul", true, {1, 2});
    dump.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    window.showView(MainWindow::View::Plot);
    ASSERT_TRUE(openAndWait(context, dir.path()));
    const uint32_t layer = context.store()->index().findOp(0, "0");
    ASSERT_NE(layer, analysis::kNone);
    ASSERT_TRUE(window.selectOp("0"));
    EXPECT_TRUE(waitFor([&] {
        return window.statisticsPlot()->titleText().contains("has no rows in this dump");
    })) << window.statisticsPlot()->titleText().toStdString();
    ASSERT_TRUE(window.selectOp("0_0"));
    EXPECT_TRUE(waitFor([&] { return !window.statisticsPlot()->titleText().contains("no rows"); }))
        << window.statisticsPlot()->titleText().toStdString();
}

TEST(MainWindow, ShowsProblemsOfABrokenDump) {
    test::TempDir dir("ui-widgets");
    test::writeSmallSyntheticDump(dir.path());
    // Cut a statistic.csv in the middle of a line and break the model file.
    const std::string csv = dir / "atb_dump_data/data/0_4242/1/statistic.csv";
    const std::string text = test::readFile(csv);
    test::writeFile(csv, text.substr(0, text.size() / 2));
    test::writeFile(dir / "atb_dump_data/info/model/0_4242/SyntheticModel.json", "{\"nodes\": [");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    const QString problems = context.problems().join("\n");
    EXPECT_TRUE(problems.contains("the last line is cut short")) << problems.toStdString();
    EXPECT_TRUE(problems.contains("SyntheticModel.json")) << problems.toStdString();
    EXPECT_GT(context.store()->index().rowCount(), 400u);  // everything else is there
}

TEST_F(MainWindowTest, TheFilterAndConfigLinesSayWhatIsInForce) {
    auto* tree = window_.treePanel();
    tree->setShow(data::OpFilterProxy::Show::NanOnly);  // as --show nan does
    EXPECT_EQ(tree->showText(), "NaN only");
    EXPECT_TRUE(tree->configText().contains("dumps every layer-level op"))
        << tree->configText().toStdString();
    context_.configDocument()->setText("{\"ids\": \"0,\"");  // not JSON
    EXPECT_TRUE(tree->configText().contains("invalid")) << tree->configText().toStdString();
    EXPECT_TRUE(tree->configText().contains("last valid config: dumps every layer-level op"))
        << tree->configText().toStdString();
    // A config that dumps nothing says so (it read "dumps every layer-level op": found by a GUI
    // walk, launching with such a config).
    EXPECT_FALSE(tree->configText().contains("dumping off")) << tree->configText().toStdString();
    context_.configDocument()->setText(R"({"task": "statistics", "dump_enable": false})");
    EXPECT_TRUE(tree->configText().contains(
        "dumping off (dump_enable is false); once on, dumps every layer-level op in round 0 only"))
        << tree->configText().toStdString();
    // The rounds, unless all.
    for (const auto& [range, said] : std::vector<std::pair<std::string, std::string>>{
             {"\"all\"", "dumps every layer-level op"},
             {"\"none\"", "dumps every layer-level op in no round"},
             {"\"2,5\"", "dumps every layer-level op in rounds 2 to 5"},
             {"\"0,1,4,4\"", "dumps every layer-level op in rounds 0 to 1, 4"}}) {
        context_.configDocument()->setText(QString::fromStdString(
            R"({"task": "statistics", "dump_enable": true, "exec_range": )" + range + "}"));
        EXPECT_TRUE(tree->configText().endsWith(QString::fromStdString(said)))
            << range << ": " << tree->configText().toStdString();
    }
}

// Back to every op after a show filter (which opened every branch it showed): the layers are
// laid out closed but for the way to the op selected, which stays selected. (Every branch stayed
// open, and the rows coming back into them were laid out one by one: tens of seconds on a big
// dump.)
TEST_F(MainWindowTest, BackToEveryOpTheTreeShowsTheOpSelectedInClosedLayers) {
    auto* tree = window_.treePanel();
    QTreeView* view = tree->view();
    const auto& idx = context_.store()->index();
    const auto shown = [&](uint32_t op) {
        return tree->proxy()->mapFromSource(tree->model()->indexOfOp(op));
    };
    uint32_t deep = analysis::kNone;
    for (uint32_t op = 0; op < idx.opCount() && deep == analysis::kNone; ++op)
        if (idx.op(op).process == 0 && idx.op(op).depth >= 2) deep = op;
    ASSERT_NE(deep, analysis::kNone);
    ASSERT_TRUE(window_.selectOp(QString::fromStdString(idx.op(deep).id)));
    tree->setShow(data::OpFilterProxy::Show::NanOnly);
    ASSERT_GT(tree->proxy()->rowCount(), 0);
    tree->setShow(data::OpFilterProxy::Show::All);
    EXPECT_EQ(tree->showText(), "All ops");
    const QModelIndex selected = shown(deep);
    ASSERT_TRUE(selected.isValid());
    EXPECT_EQ(view->currentIndex(), selected);
    for (QModelIndex p = selected.parent(); p.isValid(); p = p.parent())
        EXPECT_TRUE(view->isExpanded(p));
    uint32_t layerOfSelected = deep;
    while (idx.op(layerOfSelected).parent != analysis::kNone)
        layerOfSelected = idx.op(layerOfSelected).parent;
    int closedLayers = 0;
    for (uint32_t top : idx.process(0).topOps) {
        if (top == layerOfSelected || idx.op(top).children.empty()) continue;
        for (uint32_t child : idx.op(top).children) {
            if (idx.op(child).children.empty()) continue;
            EXPECT_FALSE(view->isExpanded(shown(child))) << idx.op(child).namePath;
            ++closedLayers;
        }
    }
    EXPECT_GT(closedLayers, 0);
}

// A window showing a dump the test builds: rows added to `dump`, then open().
struct BuiltDumpWindow {
    test::TempDir dir{"ui-widgets"};
    test::DumpBuilder dump{dir.path()};
    context::AppContext context;
    MainWindow window{&context};
    bool open() {
        dump.setStatus("complete");
        window.resize(1400, 900);
        window.show();
        return openAndWait(context, dir.path());
    }
};

// An op type of 100,000 characters (one unbreakable word) in the details above the tensors: it
// widened that pane and pushed the tree aside until another op was chosen (a GUI walk); and a
// type holding "<" was read as markup.
TEST(OpDetails, ALongOrMarkedUpTypeLeavesTheTreeItsRoom) {
    BuiltDumpWindow shown;
    shown.dump.addRow(0, "0", "L", "Layer", true, {1, 2}, {2});
    shown.dump.addRow(0, "1", "kid", "<i>x</i>" + std::string(100000, 'T'), true, {1, 2}, {2});
    ASSERT_TRUE(shown.open());
    MainWindow& window = shown.window;
    ASSERT_TRUE(window.selectOp("0"));
    QApplication::processEvents();
    const int treeWidth = window.treePanel()->width();
    ASSERT_TRUE(window.selectOp("1"));
    QApplication::processEvents();
    EXPECT_EQ(window.treePanel()->width(), treeWidth);
    const QString details = window.tensorsPanel()->detailsText();
    EXPECT_LT(details.size(), 1000) << details.left(300).toStdString();
    EXPECT_TRUE(details.contains("&lt;i&gt;x&lt;/i&gt;TTT")) << details.left(300).toStdString();
}

// A search opens the way to its matches however deep they are: the tree opened two levels, and a
// match five levels down stayed in a closed branch (a GUI walk: "copy_" showed no row named so).
// A match whose children match too is opened (a module "fc" of type Linear and its aten linear,
// searching "linear"); one whose children do not is left closed.
TEST(OpTreeSearch, OpensTheWayToDeepMatches) {
    BuiltDumpWindow shown;
    test::DumpBuilder& dump = shown.dump;
    const std::vector<std::pair<std::string, std::string>> chain = {
        {"0", "L"},
        {"0_0", "L/a"},
        {"0_0_0", "L/a/b"},
        {"0_0_0_0", "L/a/b/c"},
        {"0_0_0_0_0", "L/a/b/c/needle"},
        {"0_0_0_0_0_0", "L/a/b/c/needle/d"},
        {"0_0_0_0_0_1", "L/a/b/c/needle/needle2"}};
    for (const auto& [id, name] : chain) dump.addRow(0, id, name, "T", true, {1, 2}, {2});
    dump.addRow(0, "1", "other", "T", true, {1, 2}, {2});
    dump.addRow(0, "1_0", "other/x", "T", true, {1, 2}, {2});
    ASSERT_TRUE(shown.open());
    MainWindow& window = shown.window;
    context::AppContext& context = shown.context;
    auto* tree = window.treePanel();
    auto* search = tree->findChild<QLineEdit*>();
    ASSERT_NE(search, nullptr);
    search->setText("needle");
    ASSERT_TRUE(waitFor([&] { return tree->proxy()->searchText() == "needle"; }));
    const auto& idx = context.store()->index();
    const QModelIndex needle =
        tree->proxy()->mapFromSource(tree->model()->indexOfOp(idx.findOp(0, "0_0_0_0_0")));
    ASSERT_TRUE(needle.isValid());
    int levels = 0;
    for (QModelIndex p = needle.parent(); p.isValid(); p = p.parent(), ++levels)
        EXPECT_TRUE(tree->view()->isExpanded(p)) << p.data().toString().toStdString();
    EXPECT_EQ(levels, 4);
    EXPECT_TRUE(tree->view()->isExpanded(needle));  // for needle2
    EXPECT_EQ(tree->proxy()->rowCount(needle), 1);  // d does not match
    search->setText("c");                           // "L/a/b/c" alone
    ASSERT_TRUE(waitFor([&] { return tree->proxy()->searchText() == "c"; }));
    const QModelIndex c =
        tree->proxy()->mapFromSource(tree->model()->indexOfOp(idx.findOp(0, "0_0_0_0")));
    ASSERT_TRUE(c.isValid());
    EXPECT_FALSE(tree->view()->isExpanded(c));
    EXPECT_EQ(tree->proxy()->rowCount(), 1);  // "other" has no match
}

// A show filter opens the ops it shows as a search opens its matches, so many at most: "what
// the config dumps", with children included and no op ticked, is every op, and opening all of a
// big dump's branches took the GUI thread twice as long as opening the first of them.
TEST(OpTreeShowFilter, OpensTheOpsShownSoManyAtMost) {
    BuiltDumpWindow shown;
    constexpr int kLayers = 2500;
    for (int layer = 0; layer < kLayers; ++layer) {
        const std::string id = std::to_string(layer);
        shown.dump.addRow(0, id, "L" + id, "T", true, {1, 2}, {2});
        shown.dump.addRow(0, id + "_0", "L" + id + "/k", "T", true, {1, 2}, {2});
    }
    ASSERT_TRUE(shown.open());
    auto* tree = shown.window.treePanel();
    shown.context.selection()->setIncludesChildren(true);
    tree->setShow(data::OpFilterProxy::Show::Dumped);
    ASSERT_EQ(tree->proxy()->rowCount(), kLayers);
    int opened = 0;
    for (int row = 0; row < kLayers; ++row)
        opened += tree->view()->isExpanded(tree->proxy()->index(row, 0)) ? 1 : 0;
    EXPECT_TRUE(tree->view()->isExpanded(tree->proxy()->index(0, 0)));
    EXPECT_EQ(opened, 2000);
}

// Clearing the search clears the search only: the show filter the user chose stays, also when
// it hides the op selected (it went back to "All ops" to show that op: found by a GUI walk).
TEST_F(MainWindowTest, ClearingTheSearchKeepsTheShowFilter) {
    auto* tree = window_.treePanel();
    ASSERT_TRUE(window_.selectOp("0"));  // no NaN in it
    auto* search = tree->findChild<QLineEdit*>();
    ASSERT_NE(search, nullptr);
    // A search and the filter that together hide every op: the selection stays where it was.
    search->setText("no op is named like this");
    ASSERT_TRUE(waitFor([&] { return !tree->proxy()->searchText().isEmpty(); }));
    tree->setShow(data::OpFilterProxy::Show::NanOnly);
    ASSERT_EQ(tree->proxy()->rowCount(), 0);
    ASSERT_EQ(context_.cursor()->op(), context_.store()->index().findOp(0, "0"));
    search->clear();  // as its clear button does
    ASSERT_TRUE(waitFor([&] { return tree->proxy()->searchText().isEmpty(); }));
    EXPECT_EQ(tree->proxy()->show(), data::OpFilterProxy::Show::NanOnly);
    EXPECT_EQ(tree->showText(), "NaN only");
    EXPECT_GT(tree->proxy()->rowCount(), 0);  // the ops with a NaN
}

// Ctrl+F (View › Find op) puts the keyboard in the op search, whatever has focus: it went to the
// tree's type-ahead, which jumped to an op by its first letters (a GUI walk).
TEST_F(MainWindowTest, CtrlFFindsOps) {
    QApplication::setActiveWindow(&window_);
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window_));
    auto* tree = window_.treePanel();
    auto* search = tree->findChild<QLineEdit*>();
    ASSERT_NE(search, nullptr);
    search->setText("lay");
    tree->view()->setFocus();
    ASSERT_EQ(QApplication::focusWidget(), tree->view());
    QTest::keyClick(tree->view(), Qt::Key_F, Qt::ControlModifier);
    EXPECT_EQ(QApplication::focusWidget(), search);
    EXPECT_EQ(search->selectedText(), "lay");  // typing replaces it
    QTest::keyClicks(QApplication::focusWidget(), "add");
    EXPECT_EQ(search->text(), "add");
}

// The branches the user opened are open again once a search is cleared (the search's own
// expansion closed them all: found by a new user's walk).
TEST_F(MainWindowTest, ClearingTheSearchReopensTheBranchesOpenBefore) {
    auto* tree = window_.treePanel();
    QTreeView* view = tree->view();
    const auto& idx = context_.store()->index();
    const auto shown = [&](const std::string& id) {
        return tree->proxy()->mapFromSource(tree->model()->indexOfOp(idx.findOp(0, id)));
    };
    view->collapseAll();
    view->expand(shown("1"));
    view->expand(shown("1_1"));
    ASSERT_TRUE(view->isExpanded(shown("1_1")));
    ASSERT_FALSE(view->isExpanded(shown("2")));
    tree->setSearchText("mlp");
    tree->setSearchText("");
    EXPECT_TRUE(view->isExpanded(shown("1")));
    EXPECT_TRUE(view->isExpanded(shown("1_1")));
    EXPECT_FALSE(view->isExpanded(shown("2")));  // closed before, closed after
    // Typed: the search opens every match's branch; cleared, those it opened close again (all
    // but the way to the op selected).
    uint32_t layerOfSelected = context_.cursor()->op();
    while (idx.op(layerOfSelected).parent != analysis::kNone)
        layerOfSelected = idx.op(layerOfSelected).parent;
    std::string closed;
    for (uint32_t top : idx.process(0).topOps)
        if (top != layerOfSelected && idx.op(top).id != "1" && !idx.op(top).children.empty())
            closed = idx.op(top).id;
    ASSERT_FALSE(closed.empty());
    ASSERT_FALSE(view->isExpanded(shown(closed)));
    auto* search = tree->findChild<QLineEdit*>();
    search->setText("mlp");
    ASSERT_TRUE(waitFor([&] { return view->isExpanded(shown(closed)); }));
    search->clear();
    ASSERT_TRUE(waitFor([&] { return tree->proxy()->searchText().isEmpty(); }));
    EXPECT_FALSE(view->isExpanded(shown(closed)));
    EXPECT_TRUE(view->isExpanded(shown("1_1")));
}

TEST(MainWindow, AnUnreadableStatusFileIsSaidToBeOne) {
    test::TempDir dir("ui-widgets");
    test::writeSmallSyntheticDump(dir.path());
    test::writeFile(dir / "atb_dump_data/probe_status.json", "{\"state\": ");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    EXPECT_TRUE(window.statusText().contains("status file unreadable"))
        << window.statusText().toStdString();
    EXPECT_FALSE(window.statusText().contains("no status file"))
        << window.statusText().toStdString();
}

// Until the first read of a dump is handed over (tens of seconds for a dump of 100,000 rounds),
// its status is not known: the status bar said "no status file" over a folder that has one.
// A small dump whose one process has a status: complete, ended as `endedBy` says.
void writeCompleteDump(test::TempDir& dir, std::optional<format::ProgramEnd> endedBy = {}) {
    test::writeSmallSyntheticDump(dir.path());
    format::ProcessDumpStatus process;
    process.pid = 4242;
    process.state = format::DumpState::Complete;
    process.endedBy = endedBy;
    ASSERT_EQ(format::updateStatusFile(dir / "atb_dump_data", process), 0);
}

TEST(MainWindow, ADumpBeingOpenedIsNotSaidToHaveNoStatusFile) {
    test::TempDir dir("ui-widgets");
    writeCompleteDump(dir);
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    QString whileOpening;  // the window's slot on opened() ran first: it was made first
    QObject::connect(context.store(), &data::DumpStore::opened, &window,
                     [&] { whileOpening = window.statusText(); });
    ASSERT_TRUE(openAndWait(context, dir.path()));
    EXPECT_TRUE(whileOpening.contains("status not read yet")) << whileOpening.toStdString();
    EXPECT_FALSE(whileOpening.contains("no status file")) << whileOpening.toStdString();
    EXPECT_TRUE(window.statusText().startsWith("complete")) << window.statusText().toStdString();
}

TEST(MainWindow, ADumpOfAStoppedProgramSaysSo) {
    test::TempDir dir("ui-widgets");
    writeCompleteDump(dir,
                      format::ProgramEnd{format::ProgramEnd::How::Signaled, SIGTERM, "the probe"});
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    EXPECT_TRUE(
        window.statusText().contains("complete, whole up to where SIGTERM stopped the program"))
        << window.statusText().toStdString();
}

// A launcher (torchrun) runs no model: its end, recorded by probe run, is said beside the
// ranks' whole dumps (a job whose rank failed read "complete" alone).
TEST(MainWindow, ADumpWhoseLauncherFailedSaysSo) {
    test::TempDir dir("ui-widgets");
    writeCompleteDump(dir);
    ASSERT_EQ(format::recordProgramEnd(dir / "atb_dump_data", 1, "torchrun train.py",
                                       {format::ProgramEnd::How::Exited, 1, "probe run"}),
              0);
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    EXPECT_TRUE(window.statusText().startsWith(
        "complete, the program (not probed itself) exited with code 1 · "))
        << window.statusText().toStdString();
}

TEST(MainWindow, MsprobeDumpsSayStepAndPinnedStepsArePlacedByOp) {
    test::TempDir dir("ui-widgets");
    test::writeMsprobeStep(
        dir / "dump_path", 1,
        test::msprobeCalls({{"Torch.matmul.0.forward", 1}, {"Torch.relu.0.forward", 2}}));
    test::writeMsprobeStep(dir / "dump_path", 2,
                           test::msprobeCalls({{"Tensor.__mul__.0.forward", 10},
                                               {"Torch.matmul.0.forward", std::nan("")},
                                               {"Torch.relu.0.forward", 12}}));
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir / "dump_path"));
    EXPECT_TRUE(window.firstNanText().startsWith("⚠ First NaN: step 2, Torch.matmul.0.forward"))
        << window.firstNanText().toStdString();
    auto* plot = window.statisticsPlot();
    plot->setMode(widgets::StatisticsPlot::Mode::RoundProfile);
    window.setRound(1);
    plot->pinCurrent();
    window.setRound(2);
    ASSERT_EQ(plot->series().size(), 2);
    const auto& step1 = plot->series()[0];
    EXPECT_EQ(step1.label, "step 1");
    ASSERT_EQ(step1.x.size(), 3);         // on step 2's ops
    EXPECT_TRUE(std::isnan(step1.y[0]));  // step 1 did not multiply
    EXPECT_EQ(step1.y[1], 1);
    EXPECT_EQ(step1.y[2], 2);
    plot->setMode(widgets::StatisticsPlot::Mode::Rounds);
    EXPECT_EQ(plot->plot()->xAxis->label(), "step");
}

TEST(MainWindow, AFollowedDumpEndsAtItsFirstNanWhenItsLastRowsComeAfterItsStatus) {
    // The loader reads the status before the rows: "complete" can be known before the rows
    // holding the first NaN are. Where the window ends must not depend on that (nor on what
    // the views cost meanwhile).
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    context::AppContext context;
    MainWindow window(&context);
    context.store()->setIdlePollInterval(40);
    window.show();
    window.showView(MainWindow::View::Plot);
    ASSERT_TRUE(openAndWait(context, dir.path()));
    dump.addRow(0, "0", "embed", "Embedding", true);
    dump.addRow(0, "1", "layer", "Layer", true);
    ASSERT_TRUE(waitFor(
        [&] { return context.cursor()->op() != kNone; }));  // chosen by the window: the first op
    dump.setStatus("complete");
    ASSERT_TRUE(waitFor([&] { return context.store()->dumpState() == "complete"; }));
    dump.addRow(1, "0", "embed", "Embedding", true);
    dump.addRow(1, "1", "layer", "Layer", true, {1.0f, std::nanf("")});
    ASSERT_TRUE(waitFor([&] { return !window.firstNanText().isEmpty(); }));
    const auto& idx = context.store()->index();
    EXPECT_EQ(context.cursor()->op(), idx.findOp(0, "1"));
    EXPECT_EQ(context.cursor()->round(), 1);
    // The toolbar's round says so too (the cursor got there before the window heard of round 1).
    QSpinBox* roundBox = nullptr;
    for (auto* box : window.findChildren<QSpinBox*>())
        if (box->specialValueText() == "latest") roundBox = box;
    ASSERT_TRUE(roundBox);
    EXPECT_EQ(roundBox->value(), 1);
}

// The round box steps through the rounds the dump has, "latest" after the last: Up from
// "latest" went to round 0 and Down did nothing; a dump of rounds 0, 5 and 10 stepped to 1.
TEST(MainWindow, TheRoundBoxStepsThroughTheRoundsThereAreLatestAfterTheLast) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    for (int round : {0, 5, 10}) {
        dump.addRow(round, "0", "embed", "Embedding", true, {1, 2});
        dump.addRow(round, "1", "layer", "Layer", true, {1, float(round)});
    }
    dump.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    auto* box = window.findChild<widgets::RoundSpinBox*>();
    ASSERT_NE(box, nullptr);
    context.cursor()->setRound(-1);
    ASSERT_EQ(box->value(), widgets::RoundSpinBox::kLatest);
    ASSERT_EQ(box->text(), "latest");
    std::vector<int> seen;
    for (int i = 0; i < 4; ++i) {
        QTest::keyClick(box, Qt::Key_Down);
        seen.push_back(context.cursor()->round());
    }
    EXPECT_EQ(seen, (std::vector<int>{10, 5, 0, 0}));
    seen.clear();
    for (int i = 0; i < 4; ++i) {
        QTest::keyClick(box, Qt::Key_Up);
        seen.push_back(context.cursor()->round());
    }
    EXPECT_EQ(seen, (std::vector<int>{5, 10, -1, -1}));
    EXPECT_EQ(box->text(), "latest");
    // A round typed is taken as it is, and stepped from.
    box->setValue(7);
    EXPECT_EQ(context.cursor()->round(), 7);
    QTest::keyClick(box, Qt::Key_Up);
    EXPECT_EQ(context.cursor()->round(), 10);
}

// A status line longer than the room beside the first-NaN and problems buttons ends in "…" with
// the whole line as its tooltip, its state and counts first (the end was cut off unseen:
// "complete, the program stopped b").
TEST_F(MainWindowTest, AStatusLineTooLongIsElidedWithTheWholeLineAsItsTooltip) {
    auto* label = window_.findChild<widgets::ElidedLabel*>();
    ASSERT_NE(label, nullptr);
    EXPECT_TRUE(window_.statusText().startsWith("complete · 60 ops · 600 rows"))
        << window_.statusText().toStdString();
    EXPECT_TRUE(
        window_.statusText().endsWith(QString::fromStdString(dir_.path()) + "/atb_dump_data"));
    window_.resize(700, 900);
    ASSERT_TRUE(waitFor([&] { return label->text().endsWith(QChar(0x2026)); }))
        << label->text().toStdString();
    EXPECT_TRUE(label->text().startsWith("complete")) << label->text().toStdString();
    EXPECT_EQ(label->toolTip(), window_.statusText());
    EXPECT_LE(label->fontMetrics().horizontalAdvance(label->text()), label->width());
    window_.resize(2400, 900);
    ASSERT_TRUE(waitFor([&] { return label->text() == window_.statusText(); }));
    EXPECT_TRUE(label->toolTip().isEmpty());
}

// A notice of the status bar given less room than its text ends in "…", with its whole text
// first in its tooltip, then what it does; given its room, it is whole again.
TEST(ElidedButton, ShowsWhatFitsAndItsWholeTextInItsTooltip) {
    widgets::ElidedButton button;
    const QString text = "⚠ First NaN: round 12, layers.17/self_attn/softmax (17_1_4)";
    button.setFullText(text);
    button.setExplanation("Select that op and round");
    button.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&button));
    button.resize(button.sizeHint());
    ASSERT_TRUE(waitFor([&] { return button.text() == text; })) << button.text().toStdString();
    EXPECT_EQ(button.toolTip(), "Select that op and round");
    EXPECT_LT(button.minimumSizeHint().width(), button.sizeHint().width() / 3);
    button.resize(button.sizeHint().width() / 2, button.height());
    ASSERT_TRUE(waitFor([&] { return button.text().endsWith(QChar(0x2026)); }))
        << button.text().toStdString();
    EXPECT_TRUE(text.startsWith(button.text().chopped(1))) << button.text().toStdString();
    EXPECT_LT(button.fontMetrics().horizontalAdvance(button.text()), button.width());
    EXPECT_EQ(button.toolTip(), text + "\n\nSelect that op and round");
    EXPECT_EQ(button.fullText(), text);
}

// The first-NaN notice takes at most a third of the window: at the app's smallest size the
// notices took the whole status bar and left a comparison's verdict four words.
TEST_F(MainWindowTest, TheFirstNaNNoticeTakesAtMostAThirdOfTheWindow) {
    widgets::ElidedButton* notice = nullptr;
    for (auto* button : window_.findChildren<widgets::ElidedButton*>())
        if (button->isVisible() && button->fullText() == window_.firstNanText()) notice = button;
    ASSERT_NE(notice, nullptr);
    ASSERT_TRUE(window_.firstNanText().startsWith("⚠ First NaN: round 2, "));
    ASSERT_TRUE(waitFor([&] { return notice->text() == window_.firstNanText(); }))
        << notice->text().toStdString();
    for (const int width : {1055, 1400}) {
        window_.resize(width, 704);
        ASSERT_TRUE(waitFor([&] { return window_.width() == width; })) << window_.width();
        EXPECT_EQ(notice->maximumWidth(), width / 3);
        EXPECT_LE(notice->width(), width / 3);
    }
}

// At the app's smallest size the Config tab's file line is whole (it was cut to "nev" beside the
// buttons), its form is not cut off at the right (it scrolls when it must), and the plot's hint
// fits its line (it was cut at "double-click to"). Found by a GUI walk.
TEST_F(MainWindowTest, TheConfigTabAndThePlotHintFitTheSmallestWindow) {
    window_.resize(1055, 704);
    ASSERT_TRUE(waitFor([&] { return window_.width() == 1055; })) << window_.width();
    window_.showView(MainWindow::View::Config);
    auto* editor = window_.configEditor();
    ASSERT_TRUE(waitFor([&] { return editor->isVisible(); }));
    QCoreApplication::processEvents();
    QLabel* file = nullptr;
    for (QLabel* label : editor->findChildren<QLabel*>())
        if (label->isVisible() && label->text().startsWith("new config")) file = label;
    ASSERT_NE(file, nullptr);
    EXPECT_LE(file->fontMetrics().horizontalAdvance(file->text()), file->width())
        << file->text().toStdString() << " in " << file->width() << " px";
    auto* scroll = editor->findChild<QScrollArea*>();
    ASSERT_NE(scroll, nullptr);
    EXPECT_TRUE(scroll->widget()->width() <= scroll->viewport()->width() ||
                scroll->horizontalScrollBar()->isVisible())
        << scroll->widget()->width() << " px of form in " << scroll->viewport()->width();

    window_.showView(MainWindow::View::Plot);
    auto* plot = window_.statisticsPlot();
    ASSERT_TRUE(waitFor([&] { return plot->isVisible(); }));
    QCoreApplication::processEvents();
    QLabel* hint = nullptr;
    for (QLabel* label : plot->findChildren<QLabel*>())
        if (label->isVisible() && label->text().startsWith("Hover")) hint = label;
    ASSERT_NE(hint, nullptr);
    EXPECT_LE(hint->fontMetrics().horizontalAdvance(hint->text()), hint->width())
        << hint->text().toStdString() << " in " << hint->width() << " px";
}

// The config editor's JSON beside the form has 2 in 5 of the room: laid out by their size hints
// it had 200 px beside 770 of form in a window of 1600, too narrow to fix a config the form
// cannot show.
TEST_F(MainWindowTest, TheJsonBesideTheFormHasRoomToEditIn) {
    window_.showView(MainWindow::View::Config);
    auto* editor = window_.configEditor();
    ASSERT_TRUE(waitFor([&] { return editor->isVisible(); }));
    QCoreApplication::processEvents();
    auto* json = editor->findChild<QPlainTextEdit*>();
    auto* form = editor->findChild<QScrollArea*>();
    ASSERT_NE(json, nullptr);
    ASSERT_NE(form, nullptr);
    EXPECT_GE(json->width() * 3, form->width() * 2 - 30)
        << json->width() << " px beside " << form->width();
}

// A passing message is fitted again once the bar's buttons change: shown beside a progress bar
// that then went away (a comparison's, gone at its first answer), a verdict stayed four words
// long beside 200 empty pixels.
TEST_F(MainWindowTest, APassingMessageTakesTheRoomABarButtonLeaves) {
    window_.resize(1055, 704);
    // The window settled: the notices it shows for this dump are up.
    ASSERT_TRUE(waitFor(
        [&] { return !window_.firstNanText().isEmpty() && !window_.overflowBirths()->busy(); }));
    QCoreApplication::processEvents();
    auto* leaving = new QLabel(QString(40, QChar('x')));
    window_.statusBar()->addPermanentWidget(leaving);
    ASSERT_TRUE(waitFor([&] { return leaving->isVisible() && leaving->x() > 0; }));
    QCoreApplication::processEvents();
    const QString text = "First divergence, born here: " + QString(300, QChar('w'));
    const QString first = window_.showPassingMessage(text, 60000);
    ASSERT_TRUE(first.endsWith(QChar(0x2026)));
    leaving->hide();
    ASSERT_TRUE(waitFor([&] {
        return window_.statusBar()->currentMessage().size() > first.size() + 10;
    })) << window_.statusBar()->currentMessage().toStdString();
    EXPECT_TRUE(window_.statusBar()->currentMessage().startsWith("First divergence, born here: w"));
    EXPECT_TRUE(window_.statusBar()->currentMessage().endsWith(QChar(0x2026)));
    EXPECT_EQ(window_.statusBar()->toolTip(), text);
}

// A first NaN deep in a layer: the tree opens its layers down to it and shows it selected. The
// columns' first fit (expandToDepth) collapsed them again after the cursor had been revealed,
// leaving the op selected out of sight.
TEST(MainWindow, OpensWithTheFirstNaNShownDeepInTheTree) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder builder(dir.path());
    for (int round = 0; round < 3; ++round) {
        const float last = round == 2 ? std::nanf("") : 1.0f;
        builder.addRow(round, "0", "embed", "Embedding", true, {1, 2});
        builder.addRow(round, "1", "layers.0", "Layer", false, {1, 2});
        builder.addRow(round, "1_0", "layers.0/norm", "Norm", false, {1, 2});
        builder.addRow(round, "1_0_0", "layers.0/norm/mul", "aten::mul", false, {1, 2});
        builder.addRow(round, "1_0_0", "layers.0/norm/mul", "aten::mul", true, {1, last});
        builder.addRow(round, "1_0", "layers.0/norm", "Norm", true, {1, last});
        builder.addRow(round, "1", "layers.0", "Layer", true, {1, last});
        builder.addRow(round, "2", "head", "Linear", true, {1, last});
    }
    builder.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.resize(1400, 900);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    const uint32_t mul = context.store()->index().findOp(0, "1_0_0");
    ASSERT_NE(mul, analysis::kNone);
    ASSERT_TRUE(waitFor([&] { return context.cursor()->op() == mul; }));
    EXPECT_EQ(context.cursor()->round(), 2);
    QTreeView* tree = window.treePanel()->view();
    ASSERT_TRUE(waitFor(
        [&] { return tree->currentIndex().data(data::OpTreeModel::OpRole).toUInt() == mul; }));
    QApplication::processEvents();
    const QModelIndex current = tree->currentIndex();
    for (QModelIndex p = current.parent(); p.isValid(); p = p.parent())
        EXPECT_TRUE(tree->isExpanded(p)) << p.data().toString().toStdString();
    const QRect shown = tree->visualRect(current);
    EXPECT_FALSE(shown.isEmpty());
    EXPECT_TRUE(tree->viewport()->rect().intersects(shown));
    EXPECT_TRUE(tree->selectionModel()->isSelected(current));
}

// Deep ids cut to fit the Id column keep their ends, where siblings differ: "1_0_2_1_0_…" was
// drawn alike for every op of a deep parent. Names too ("resolve_c…" was every resolve_conj).
TEST(MainWindow, DeepIdsCutToFitKeepTheirEndsWhereSiblingsDiffer) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder builder(dir.path());
    const std::string deep = "1_0_2_1_0_0_3";
    builder.addRow(0, "1", "layer", "Layer", true, {1, 2});
    builder.addRow(0, "1_0", "layer/norm", "Norm", true, {1, 2});
    builder.addRow(0, "1_0_2", "layer/norm/mean", "aten::mean", true, {1, 2});
    builder.addRow(0, "1_0_2_1", "layer/norm/mean/div", "aten::div", true, {1, 2});
    builder.addRow(0, "1_0_2_1_0", "layer/norm/mean/div/to", "aten::to", true, {1, 2});
    builder.addRow(0, "1_0_2_1_0_0", "layer/norm/mean/div/to/copy", "aten::_to_copy", true, {1, 2});
    builder.addRow(0, deep + "_0", "layer/norm/mean/div/to/copy/a/resolve_conj_first",
                   "aten::resolve_conj", true, {1, 2});
    builder.addRow(0, deep + "_1", "layer/norm/mean/div/to/copy/a/resolve_conj_second",
                   "aten::resolve_conj", true, {1, 2});
    builder.addRow(0, "1_0_2_1_0_0_3", "layer/norm/mean/div/to/copy/a", "aten::copy_", true,
                   {1, 2});
    builder.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.resize(1400, 900);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    QTreeView* tree = window.treePanel()->view();
    tree->setAlternatingRowColors(false);  // the two rows drawn alike but for their text
    tree->expandAll();
    const auto& index = context.store()->index();
    const uint32_t first = index.findOp(0, deep + "_0"), second = index.findOp(0, deep + "_1");
    ASSERT_NE(first, analysis::kNone);
    ASSERT_NE(second, analysis::kNone);
    auto indexOf = [&](uint32_t op, int column) {
        for (QModelIndex i = tree->model()->index(0, 0); i.isValid(); i = tree->indexBelow(i))
            if (i.data(data::OpTreeModel::OpRole).toUInt() == op) return i.siblingAtColumn(column);
        return QModelIndex();
    };
    tree->setColumnWidth(data::OpTreeModel::IdColumn, 70);
    QApplication::processEvents();
    // Room for 80 pixels of the name beside its indentation.
    const QModelIndex name = indexOf(first, data::OpTreeModel::NameColumn);
    ASSERT_TRUE(name.isValid());
    tree->setColumnWidth(data::OpTreeModel::NameColumn,
                         tree->visualRect(name).left() -
                             tree->columnViewportPosition(data::OpTreeModel::NameColumn) + 80);
    tree->clearSelection();
    tree->setCurrentIndex({});
    QApplication::processEvents();
    auto cell = [&](uint32_t op, int column) {
        const QModelIndex i = indexOf(op, column);
        EXPECT_TRUE(i.isValid());
        tree->scrollTo(i);
        QApplication::processEvents();
        return tree->viewport()->grab(tree->visualRect(i)).toImage();
    };
    for (int column : {int(data::OpTreeModel::IdColumn), int(data::OpTreeModel::NameColumn)}) {
        const QModelIndex i = indexOf(first, column);
        ASSERT_TRUE(i.isValid());
        // Too narrow for the whole text: cut.
        EXPECT_GT(tree->fontMetrics().horizontalAdvance(i.data().toString()) + 8,
                  tree->visualRect(i).width())
            << column;
        const QImage a = cell(first, column), b = cell(second, column);
        ASSERT_FALSE(a.isNull());
        EXPECT_EQ(a.size(), b.size());
        EXPECT_NE(a, b) << "siblings drawn alike in column " << column;
    }
}

TEST(MainWindow, OnlySessionsThatOpenedAreRecent) {
    test::TempDir dir("ui-widgets");
    test::writeFile(dir / "a_file", "x");
    format::makeDirectories(dir / "empty");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    QSignalSpy loaded(&context, &context::AppContext::sessionLoaded);
    auto paths = [&] {
        QStringList out;
        for (const auto& recent : context.recentSessions()->list()) out << recent.path;
        return out;
    };
    const QStringList before = paths();
    for (const std::string& bad : {dir / "nonexistent", dir / "a_file", dir / "empty"})
        EXPECT_FALSE(context.openDump(QString::fromStdString(bad))) << bad;  // refused at once
    EXPECT_EQ(paths(), before);
    test::writeSmallSyntheticDump(dir / "good");
    loaded.clear();
    context.openDump(QString::fromStdString(dir / "good"));
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
    EXPECT_EQ(paths().value(0), QString::fromStdString(dir / "good"));
}

// --- the command line -------------------------------------------------------------------------

TEST(CommandLine, SettingsAreProbeStudiosOwn) {
    // The suite's main points XDG_CONFIG_HOME at a folder of this run: the probe-studio it
    // starts keeps its recent sessions there, under its organisation's name.
    test::TempDir dir("ui-cli");
    test::writeSmallSyntheticDump(dir.path());
    const QString png = QString::fromStdString(dir / "shot.png");
    const StudioRun run = runStudio({QString::fromStdString(dir.path()), "--screenshot", png});
    ASSERT_EQ(run.exitCode, 0) << run.err.toStdString();
    const QString config = qEnvironmentVariable("XDG_CONFIG_HOME");
    ASSERT_FALSE(config.isEmpty());
    ASSERT_FALSE(config.startsWith(QDir::homePath() + "/.config"));
    QFile settings(config + "/probe-studio/probe-studio.conf");
    ASSERT_TRUE(settings.open(QIODevice::ReadOnly)) << settings.fileName().toStdString();
    EXPECT_TRUE(settings.readAll().contains(QByteArray::fromStdString(dir.path())));
}

TEST(CommandLine, ScreenshotsOfEachView) {
    test::TempDir dir("ui-cli");
    test::writeSmallSyntheticDump(dir.path());
    struct Case {
        QStringList arguments;
        std::function<void(const QImage&)> check;
    };
    const std::vector<Case> cases = {
        {{"--view", "tree"},
         [](const QImage& image) {
             EXPECT_GT(countPixels(image, [](QColor c) { return c == QColor(200, 30, 30); }), 20);
         }},
        {{"--view", "plot", "--op", "1", "--stat", "max"},
         [](const QImage& image) {
             EXPECT_GT(countPixels(image, [](QColor c) { return c == QColor(31, 119, 180); }), 100);
         }},
        {{"--view", "tensor", "--op", "2", "--round", "2", "--overlay"},
         [](const QImage& image) {
             EXPECT_GT(countPixels(image, [](QColor c) { return c == QColor(230, 20, 20); }), 100);
         }},
    };
    for (const auto& c : cases) {
        const QString png = QString::fromStdString(dir / "shot.png");
        QFile::remove(png);
        const StudioRun run = runStudio(QStringList({QString::fromStdString(dir.path()),
                                                     "--screenshot", png, "--size", "1200x800"}) +
                                        c.arguments);
        ASSERT_EQ(run.exitCode, 0) << c.arguments.join(' ').toStdString() << "\n"
                                   << run.err.toStdString();
        EXPECT_TRUE(run.out.contains("saved")) << run.out.toStdString();
        QImage image(png);
        ASSERT_FALSE(image.isNull());
        EXPECT_EQ(image.size(), QSize(1200, 800));
        c.check(image);
    }
}

TEST(CommandLine, UsageErrorsAndMissingDumps) {
    test::TempDir dir("ui-cli");
    StudioRun run = runStudio({"--version"});
    EXPECT_EQ(run.exitCode, 0);
    EXPECT_TRUE(run.out.contains("probe-studio " PROBE_VERSION)) << run.out.toStdString();
    run = runStudio({"--help"});
    EXPECT_EQ(run.exitCode, 0);
    EXPECT_TRUE(run.out.contains("--screenshot")) << run.out.toStdString();
    // The options' column is narrow enough for their words: the longest broke mid-word
    // ("--view <tree|...|laun" / "ch>"), every description squeezed into a narrow column.
    EXPECT_TRUE(
        run.out.contains(QRegularExpression(QStringLiteral("\\n  --view <VIEW> +What to show"))))
        << run.out.toStdString();
    for (const QString& line : run.out.split(QLatin1Char('\n')))
        EXPECT_FALSE(line.startsWith(QStringLiteral("  ")) &&
                     line.trimmed().endsWith(QLatin1Char('>')) &&
                     !line.contains(QStringLiteral("  --")))
            << line.toStdString();
    run = runStudio({"--no-such-option"});
    EXPECT_EQ(run.exitCode, 64);
    run = runStudio({"--view", "sideways", "--screenshot", "x.png"});
    EXPECT_EQ(run.exitCode, 64);
    EXPECT_TRUE(run.err.contains("--view must be")) << run.err.toStdString();
    run = runStudio({"a", "b"});
    EXPECT_EQ(run.exitCode, 64);
    run = runStudio({QString::fromStdString(dir.path())});  // no display, no screenshot
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.err.contains("no display")) << run.err.toStdString();
    // Not a dump: the screenshot still shows why, and the exit code says it failed.
    const QString png = QString::fromStdString(dir / "empty.png");
    run = runStudio({"--open", QString::fromStdString(dir.path()), "--screenshot", png});
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.err.contains("holds no dump")) << run.err.toStdString();
    EXPECT_FALSE(QImage(png).isNull());
    test::writeSmallSyntheticDump(dir.path());
    run =
        runStudio({QString::fromStdString(dir.path()), "--screenshot", png, "--op", "no_such_op"});
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.err.contains("no op with id no_such_op")) << run.err.toStdString();
}

// Qt warns on every start when XDG_RUNTIME_DIR is unset (a terminal, ssh): it does not matter to
// the application, so it is not said (the attach dialog says when it matters).
TEST(CommandLine, NoWarningAboutTheRuntimeDirectoryOnStart) {
    test::TempDir dir("ui-cli");
    const QByteArray saved = qgetenv("XDG_RUNTIME_DIR");
    qunsetenv("XDG_RUNTIME_DIR");
    const StudioRun run =
        runStudio({"--view", "start", "--screenshot", QString::fromStdString(dir / "start.png")});
    if (!saved.isEmpty()) qputenv("XDG_RUNTIME_DIR", saved);
    ASSERT_EQ(run.exitCode, 0) << run.err.toStdString();
    EXPECT_FALSE(run.err.contains("XDG_RUNTIME_DIR")) << run.err.toStdString();
}

// Values an option does not know are usage errors, said as such, never ignored.
TEST(CommandLine, UnknownValuesAreRejected) {
    test::TempDir dir("ui-cli");
    const QString png = QString::fromStdString(dir / "x.png");
    // What is there instead of the file or folder asked for is said: a FIFO was "no file"
    // (found by a hostile-input pass).
    const QString pipe = QString::fromStdString(dir / "pipe.bin");
    ASSERT_EQ(::mkfifo(pipe.toLocal8Bit().constData(), 0600), 0);
    const QString folder = QString::fromStdString(dir.path());
    const std::vector<std::pair<QStringList, QString>> cases = {
        {{"--tensor-page", "foo"}, "--tensor-page must be heatmap, values or histogram"},
        {{"--show", "weird"}, "--show must be all, anomalies, nan, dumped or ticked"},
        {{"--size", "10x10"}, "--size must be at least 880x560"},
        {{"--size", "big"}, "--size must be WIDTHxHEIGHT"},
        {{"--output", "out", "--demo"},
         "--output goes with --launch (--demo writes to a fresh folder of its own)\n"},
        {{"--tensor", QString::fromStdString(dir / "none.bin")},
         "--tensor: " + QString::fromStdString(dir / "none.bin") + " does not exist\n"},
        {{"--tensor", pipe}, "--tensor: " + pipe + " is a named pipe (FIFO), not a regular file\n"},
        {{"--tensor", folder}, "--tensor: " + folder + " is a directory, not a regular file\n"},
        {{"--compare", pipe}, "--compare: " + pipe + " is a named pipe (FIFO), not a folder\n"},
        {{"--compare", QString::fromStdString(dir / "none")},
         "--compare: " + QString::fromStdString(dir / "none") + " does not exist\n"},
    };
    for (const auto& [arguments, message] : cases) {
        const StudioRun run = runStudio(arguments + QStringList{"--screenshot", png});
        EXPECT_EQ(run.exitCode, 64) << arguments.join(' ').toStdString();
        EXPECT_TRUE(run.err.contains(message))
            << arguments.join(' ').toStdString() << ": " << run.err.toStdString();
        EXPECT_FALSE(QFile::exists(png));
    }
    // A round the dump does not have: said, with the rounds it has.
    test::writeSmallSyntheticDump(dir.path());
    std::string error;
    const auto index = analysis::readDump(dir.path(), &error);
    ASSERT_TRUE(index) << error;
    const QString rounds =
        QStringLiteral("the dump's rounds are 0 to %1").arg(index->rounds(0).back());
    const StudioRun run =
        runStudio({QString::fromStdString(dir.path()), "--round", "999", "--screenshot", png});
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.err.contains("--round 999: " + rounds)) << run.err.toStdString();
}

// --tensor FILE shows that file in the tensor preview, with a dump open or without one, and a
// de-duplicated file opened by its path is followed to its first copy as from the tree.
TEST(MainWindow, ATensorFileOfTheOpenDumpSelectsItsOpAndRound) {
    test::TempDir dir("ui-widgets");
    test::writeSmallSyntheticDump(dir.path());
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    const auto& idx = context.store()->index();
    const uint32_t row = idx.slotRow(idx.representativeSlot(idx.findOp(0, "2")), 2);
    ASSERT_NE(row, kNone);
    window.selectOp("0");
    window.previewTensorFile(QString::fromStdString(idx.tensorPath(row)));
    EXPECT_EQ(context.cursor()->row(), row);        // op 2, round 2: where the file belongs
    EXPECT_EQ(window.tensorPreview()->row(), row);  // so the preview compares it with its row
    // A file from elsewhere is only previewed.
    const std::string elsewhere = dir / "copy.bin";
    std::filesystem::copy_file(idx.tensorPath(row), elsewhere);
    window.selectOp("0");
    window.previewTensorFile(QString::fromStdString(elsewhere));
    EXPECT_EQ(window.tensorPreview()->row(), kNone);
    EXPECT_EQ(idx.op(idx.slot(idx.row(context.cursor()->row()).slot).op).id, "0");
}

TEST(CommandLine, TensorFileOpensInThePreview) {
    test::TempDir dir("ui-cli");
    test::writeSmallSyntheticDump(dir.path());
    std::string error;
    const auto index = analysis::readDump(dir.path(), &error);
    ASSERT_TRUE(index) << error;
    const uint32_t nanRow = index->slotRow(index->representativeSlot(index->findOp(0, "2")), 2);
    ASSERT_NE(nanRow, kNone);
    const QString bin = QString::fromStdString(index->tensorPath(nanRow));
    const QString png = QString::fromStdString(dir / "tensor.png");
    for (const QStringList& dump :
         {QStringList(), QStringList{QString::fromStdString(dir.path()), "--op", "0"}}) {
        QFile::remove(png);
        const StudioRun run =
            runStudio(dump + QStringList{"--tensor", bin, "--overlay", "--screenshot", png,
                                         "--size", "1200x800"});
        ASSERT_EQ(run.exitCode, 0) << run.err.toStdString();
        // No plot was drawn into an empty buffer (plots in tabs never shown, as the window was
        // grabbed, printed QPainter warnings on every start).
        EXPECT_FALSE(run.err.contains("QPainter")) << run.err.toStdString();
        const QImage image(png);
        ASSERT_FALSE(image.isNull());
        // NaN elements in the heatmap (the op of --op 0 has none).
        EXPECT_GT(countPixels(image, [](QColor c) { return c == QColor(230, 20, 20); }), 100)
            << dump.join(' ').toStdString();
    }
    const StudioRun run = runStudio({"--tensor", bin, "--view", "plot", "--screenshot", png});
    EXPECT_EQ(run.exitCode, 64);
    EXPECT_TRUE(run.err.contains("--tensor opens the tensor view")) << run.err.toStdString();

    // A de-duplicated file, opened by path in a nested round directory.
    test::TempDir other("ui-cli");
    test::DumpBuilder builder(other.path());
    const auto first = builder.addRow(0, "2_1", "layer/mm", "aten::mm", true, {1, 2, 3, 4}, {2, 2});
    const std::string alias = builder.writeAliasBin(0, "2_Layer/2_2_add/before/intensor0.bin",
                                                    "2_1_outtensor0.bin", {2, 2});
    data::DumpStore store;
    widgets::TensorPreview preview(&store);
    // Before a tensor is opened: what to do, and no empty heatmap's axes.
    auto* pages = preview.findChild<QTabWidget*>();
    ASSERT_NE(pages, nullptr);
    EXPECT_TRUE(pages->isHidden());
    EXPECT_TRUE(preview.factsText().contains("Double-click")) << preview.factsText().toStdString();
    QSignalSpy image(preview.document(), &data::TensorDocument::imageReady);
    preview.openFile(QString::fromStdString(alias));
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    EXPECT_FALSE(pages->isHidden());
    EXPECT_TRUE(preview.document()->note().contains(QString::fromStdString(first.tensorPath)))
        << preview.document()->note().toStdString();
    EXPECT_EQ(preview.document()->tensor()->at(3), 4.0);
}

// While a big slice is drawn, the heatmap says so (four billion elements drew for minutes over
// empty axes); a small one is drawn without a word (the legend flickered at each slice).
TEST(TensorPreview, ABigSliceIsSaidWhileItIsDrawn) {
    test::TempDir dir("ui-widgets");
    const auto writeZeros = [&](const std::string& name, int64_t side) {
        format::BinHeader header;
        header.dims = {side, side};
        header.dataLength = static_cast<uint64_t>(side * side) * sizeof(float);
        std::string bytes = format::makeBinHeader(header);
        bytes.append(header.dataLength, '\0');
        const std::string path = dir.path() + "/" + name;
        test::writeFile(path, bytes);
        return QString::fromStdString(path);
    };
    data::DumpStore store;
    widgets::TensorPreview preview(&store);
    QSignalSpy image(preview.document(), &data::TensorDocument::imageReady);
    QStringList said;  // the legend as each drawing begins
    QObject::connect(preview.document(), &data::TensorDocument::imageStarted, &preview,
                     [&] { said << preview.heatmapLegendText(); });
    preview.openFile(writeZeros("big.bin", 2048));  // 4,194,304 elements
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    ASSERT_EQ(said.size(), 1);
    EXPECT_EQ(said[0], "Drawing the heatmap of " + QLocale().toString(2048 * 2048) + " elements…");
    EXPECT_TRUE(preview.heatmapLegendText().startsWith("grey: "))
        << preview.heatmapLegendText().toStdString();
    preview.openFile(writeZeros("small.bin", 4));
    ASSERT_TRUE(waitFor([&] { return image.count() > 1; }));
    EXPECT_EQ(said.size(), 1);
}

}  // namespace
}  // namespace probe

// --- defects users met (issue 9) ----------------------------------------------------------------
namespace probe {
namespace {

// The y range of the plot holds every drawn value, closely: a flat line is fitted to a small
// range around its value, not left in whatever range the plot had before.
void expectFitted(const widgets::StatisticsPlot& plot, double value) {
    const QCPRange y = plot.plot()->yAxis->range();
    EXPECT_LT(y.lower, value);
    EXPECT_GT(y.upper, value);
    EXPECT_LE(y.size(), std::max(1.0, std::abs(value)))
        << "[" << y.lower << ", " << y.upper << "] around " << value;
}

TEST(StatisticsPlot, AConstantSeriesIsFittedAroundItsValue) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    for (int round = 0; round < 4; ++round) {
        dump.addRow(round, "0", "big", "Layer", true, {-400.0f + 100 * round, 400.0f - 50 * round});
        dump.addRow(round, "1", "flat", "Layer", true, {3.0f, 3.0f});
    }
    dump.addRow(0, "2", "once", "Layer", true, {7.0f, 7.0f});
    dump.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    window.showView(MainWindow::View::Plot);
    auto* plot = window.statisticsPlot();
    for (int s = 1; s < analysis::kStatCount; ++s)
        plot->setStatEnabled(static_cast<analysis::Stat>(s), false);  // Max only
    ASSERT_TRUE(window.selectOp("0"));
    EXPECT_GT(plot->plot()->yAxis->range().size(), 100);  // spans the big op's values, 250 to 400
    ASSERT_TRUE(window.selectOp("1"));                    // Max 3 in every round
    ASSERT_EQ(plot->series().size(), 1);
    expectFitted(*plot, 3);
    // Double-click fits it the same.
    QTest::mouseDClick(plot->plot(), Qt::LeftButton, Qt::NoModifier, plot->plot()->rect().center());
    expectFitted(*plot, 3);
    ASSERT_TRUE(window.selectOp("2"));  // one point
    ASSERT_EQ(plot->series()[0].x.size(), 1);
    expectFitted(*plot, 7);
    // A dump with nothing to draw yet: not the last one's rounds on the x axis.
    ASSERT_TRUE(window.selectOp("0"));
    ASSERT_GT(plot->plot()->xAxis->range().upper, 3);
    test::TempDir empty("ui-widgets");
    test::DumpBuilder(empty.path()).setStatus("running");
    ASSERT_TRUE(openAndWait(context, empty.path()));
    ASSERT_TRUE(plot->series().empty());
    EXPECT_EQ(plot->plot()->xAxis->range(), QCPRange(0, 5));
}

// Log scale leaves out values at or below zero: the plot says which series lost points.
TEST(StatisticsPlot, LogScaleSaysWhatItCannotDraw) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    for (int round = 0; round < 3; ++round)
        dump.addRow(round, "0", "layer", "Layer", true, {-2.0f, 1.0f, 4.0f});
    dump.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    auto* plot = window.statisticsPlot();
    auto said = [&] {
        QString text;
        for (const auto* label : plot->findChildren<QLabel*>())
            if (label->isVisibleTo(plot)) text += label->text() + "\n";
        return text;
    };
    EXPECT_FALSE(said().contains("not drawn")) << said().toStdString();
    plot->setLogScale(true);  // Min is -2 in every round
    EXPECT_TRUE(said().contains("Min: 3 values at or below zero are not drawn on a log scale"))
        << said().toStdString();
    plot->setLogScale(false);
    EXPECT_FALSE(said().contains("not drawn")) << said().toStdString();
}

// Values beyond what QCustomPlot can draw (its axis range stops at 1e250): drawn at 1e249, their
// sign kept, and said (the axis stayed at 0..1 under a wedge for 1e300, nothing for 1e308).
TEST(StatisticsPlot, ValuesBeyondWhatAPlotCanDrawAreDrawnAtItsLimitAndSaid) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    const double huge[3] = {1e300, 1.0, 1.7e308};
    for (int round = 0; round < 3; ++round) {
        dump.addStatisticsRow(round, "0", "layer", "Layer", huge[round], -huge[round], 0,
                              huge[round]);
    }
    dump.setStatus("complete");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    ASSERT_TRUE(window.selectOp("0"));
    auto* plot = window.statisticsPlot();
    plot->setMode(widgets::StatisticsPlot::Mode::Rounds);
    const auto& series = plot->series();
    ASSERT_FALSE(series.empty());
    const auto& max = series[0];
    ASSERT_EQ(max.y.size(), 3);
    EXPECT_EQ(max.y[0], data::kLargestPlotted);
    EXPECT_EQ(max.y[1], 1.0);
    EXPECT_EQ(max.y[2], data::kLargestPlotted);
    const QCPRange shown = plot->plot()->yAxis->range();
    EXPECT_GE(shown.upper, data::kLargestPlotted);
    EXPECT_LE(shown.lower, -data::kLargestPlotted);  // Min's -1e300 and -1.7e308
    QString said;
    for (const auto* label : plot->findChildren<QLabel*>())
        if (label->isVisibleTo(plot)) said += label->text() + "\n";
    EXPECT_TRUE(
        said.contains("Values beyond ±1e249 are drawn at ±1e249, the most a plot can "
                      "show (hover one to read it): Max 2, Min 2, Norm 2"))
        << said.toStdString();
}

TEST_F(MainWindowTest, OnePinnedRoundIsSaidInTheSingular) {
    auto* plot = window_.statisticsPlot();
    plot->setMode(widgets::StatisticsPlot::Mode::RoundProfile);
    window_.setRound(1);
    plot->pinCurrent();
    window_.setRound(2);
    auto title = [&] {
        QString text;
        for (const auto* label : plot->findChildren<QLabel*>()) text += label->text() + "\n";
        return text;
    };
    EXPECT_TRUE(title().contains("1 other round pinned")) << title().toStdString();
    EXPECT_FALSE(title().contains("(s)")) << title().toStdString();
    window_.setRound(3);
    plot->pinCurrent();
    window_.setRound(4);
    EXPECT_TRUE(title().contains("2 other rounds pinned")) << title().toStdString();
}

TEST(TensorPreview, AllEqualValuesAreHistogrammedAroundTheirValue) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    const auto zeros = dump.addRow(0, "0", "zeros", "Layer", true, std::vector<float>(12, 0.0f));
    const auto fives = dump.addRow(0, "1", "fives", "Layer", true, std::vector<float>(12, -5.0f));
    data::DumpStore store;
    widgets::TensorPreview preview(&store);
    preview.resize(900, 700);
    preview.show();
    preview.showPage(widgets::TensorPreview::Page::Histogram);
    for (const auto& [path, value] :
         {std::pair{zeros.tensorPath, 0.0}, std::pair{fives.tensorPath, -5.0}}) {
        SCOPED_TRACE(path);
        QSignalSpy loaded(preview.document(), &data::TensorDocument::loaded);
        preview.openFile(QString::fromStdString(path));
        ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
        auto* bars = qobject_cast<QCPBars*>(preview.histogramPlot()->plottable(0));
        ASSERT_TRUE(bars);
        ASSERT_EQ(bars->dataCount(), 1);  // one bar, of every element
        EXPECT_EQ(bars->data()->begin()->key, value);
        EXPECT_EQ(bars->data()->begin()->value, 12);
        const QCPRange x = preview.histogramPlot()->xAxis->range();
        EXPECT_NEAR(x.center(), value, 1e-9);
        EXPECT_LT(x.lower + bars->width() / 2, value);
    }
}

// A header of a hundred dims, nearly all of size 1 (two thousand took the window 9 s to lay out
// a spin box for each, and the shape filled the pane): a spin box for each leading dim with
// something to choose, each setting its own dim of the slice; the shape written out in part.
TEST(TensorPreview, ManyDimsOfSizeOneGetNoSpinBoxes) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    std::vector<int64_t> dims(100, 1);
    dims[0] = 2;
    dims[96] = 3;
    dims[98] = 2;
    dims[99] = 2;
    std::vector<float> values(24);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    const auto row = dump.addRow(0, "0", "wide", "Layer", true, values, dims);
    data::DumpStore store;
    widgets::TensorPreview preview(&store);
    preview.resize(900, 700);
    preview.show();
    QSignalSpy loaded(preview.document(), &data::TensorDocument::loaded);
    preview.openFile(QString::fromStdString(row.tensorPath));
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
    QList<QSpinBox*> spins;
    for (auto* spin : preview.findChildren<QSpinBox*>())
        if (spin->suffix().startsWith(" / ")) spins << spin;
    ASSERT_EQ(spins.size(), 2);
    EXPECT_EQ(spins[0]->suffix(), " / 2");
    EXPECT_EQ(spins[1]->suffix(), " / 3");
    spins[1]->setValue(2);
    spins[0]->setValue(1);
    std::vector<int64_t> want(98, 0);
    want[0] = 1;
    want[96] = 2;
    EXPECT_EQ(preview.document()->sliceIndex(), want);
    // The slice [1, 0, ..., 2] of a [2, ..., 3, 2, 2] tensor starts at element 12 + 8.
    EXPECT_EQ(preview.document()->sliceStart(), 20u);
    EXPECT_TRUE(preview.factsText().contains("(100 dims)")) << preview.factsText().toStdString();
    EXPECT_LT(preview.factsText().size(), 600);
}

// A tensor without a finite value: its histogram says so before its NaN count (it read
// "· 64 NaN", a separator with nothing before it).
TEST(TensorPreview, AHistogramOfNothingFiniteSaysSo) {
    test::TempDir dir("ui-widgets");
    test::DumpBuilder dump(dir.path());
    const auto nans =
        dump.addRow(0, "0", "nans", "Layer", true, std::vector<float>(64, std::nanf("")));
    data::DumpStore store;
    widgets::TensorPreview preview(&store);
    preview.resize(900, 700);
    preview.show();
    preview.showPage(widgets::TensorPreview::Page::Histogram);
    QSignalSpy loaded(preview.document(), &data::TensorDocument::loaded);
    preview.openFile(QString::fromStdString(nans.tensorPath));
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
    EXPECT_TRUE(preview.histogramLegendText().startsWith("no finite value · "))
        << preview.histogramLegendText().toStdString();
    EXPECT_TRUE(preview.histogramLegendText().contains("64 NaN"))
        << preview.histogramLegendText().toStdString();
}

// A .pt file (msprobe's tensors) that is damaged: why it cannot be read is said, no empty heatmap.
// (Whole .pt files preview like .bin ones: test_ui_compare, with PyTorch to write them.)
TEST(TensorPreview, ADamagedPtFileSaysWhyItCannotBeRead) {
    test::TempDir dir("ui-widgets");
    test::writeMsprobeStep(dir / "dump_path", 0, test::kMsprobeDumpJson);
    const std::string pt =
        dir / "dump_path/step0/rank0/dump_tensor_data/Functional.linear.0.forward.input.0.pt";
    test::writeFile(pt, std::string("PK\x03\x04", 4) + "torch.save");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir / "dump_path"));
    window.showView(MainWindow::View::Tensor);
    auto* preview = window.tensorPreview();
    const auto& idx = context.store()->index();
    uint32_t row = kNone;
    for (uint32_t r = 0; r < idx.rowCount(); ++r)
        if (idx.tensorPath(r) == pt) row = r;
    ASSERT_NE(row, kNone);
    for (int way = 0; way < 2; ++way) {
        SCOPED_TRACE(way == 0 ? "its row" : "the file");
        if (way == 0)
            preview->openRow(row);
        else
            window.previewTensorFile(QString::fromStdString(pt));
        ASSERT_TRUE(waitFor([&] {
            return !preview->document()->isLoading() &&
                   preview->factsText().contains("Functional.linear.0.forward.input.0.pt");
        })) << preview->factsText().toStdString();
        EXPECT_FALSE(preview->heatmap()->isVisibleTo(preview));
        EXPECT_FALSE(preview->histogramPlot()->isVisibleTo(preview));
    }
}

TEST_F(MainWindowTest, AnExportSaysWhereItWrote) {
    window_.showView(MainWindow::View::Tensor);
    auto* preview = window_.tensorPreview();
    QSignalSpy image(preview->document(), &data::TensorDocument::imageReady);
    ASSERT_TRUE(window_.previewCurrentTensor());
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    QString error;
    const QString npy = QString::fromStdString(dir_ / "exported.npy");
    ASSERT_TRUE(preview->exportNpy(npy, &error)) << error.toStdString();
    EXPECT_TRUE(window_.statusBar()->currentMessage().contains(npy))
        << window_.statusBar()->currentMessage().toStdString();
}

// A corrupted layer file is a problem to show, also when the model file describes its layer.
TEST(MainWindow, ACorruptedLayerFileIsAProblem) {
    test::TempDir dir("ui-widgets");
    test::writeSmallSyntheticDump(dir.path());
    const std::string layer = dir / "atb_dump_data/info/layer/0_4242/layers.1_1.json";
    ASSERT_TRUE(test::exists(layer));
    test::writeFile(layer, "{\"opName\": \"layers.1_1\", \"nodes\": [");
    context::AppContext context;
    MainWindow window(&context);
    window.show();
    ASSERT_TRUE(openAndWait(context, dir.path()));
    EXPECT_TRUE(context.problems().join("\n").contains("layers.1_1.json"))
        << context.problems().join("\n").toStdString();
    EXPECT_EQ(context.store()->index().opCount(), 60u);  // the rest is there
}

// A search left from before hides the op the window opens at: the first-NaN button shows it
// anyway, clearing the filter (it did nothing, the cursor being on that op already), and
// clearing a search by hand goes back to the op selected. A search matching nothing says so;
// Escape clears it.
TEST_F(MainWindowTest, FirstNanShowsItsOpThroughASearchThatHidesIt) {
    QTreeView* tree = window_.treePanel()->view();
    const uint32_t firstNan = context_.cursor()->op();
    ASSERT_NE(firstNan, analysis::kNone);
    window_.treePanel()->setSearchText("no op is named like this");
    ASSERT_FALSE(tree->currentIndex().isValid());
    widgets::ElidedButton* button = nullptr;
    for (auto* b : window_.findChildren<widgets::ElidedButton*>())
        if (b->fullText().startsWith(QStringLiteral("⚠ First NaN"))) button = b;
    ASSERT_NE(button, nullptr);
    button->click();
    EXPECT_EQ(tree->currentIndex().data(data::OpTreeModel::OpRole).toUInt(), firstNan);
    EXPECT_TRUE(window_.treePanel()->findChild<QLineEdit*>()->text().isEmpty());

    // Typed, then cleared with the line's clear button: the op selected is shown again.
    auto* search = window_.treePanel()->findChild<QLineEdit*>();
    search->setText("no op is named like this");
    ASSERT_TRUE(waitFor([&] { return !tree->currentIndex().isValid(); }));
    search->clear();
    ASSERT_TRUE(waitFor(
        [&] { return tree->currentIndex().data(data::OpTreeModel::OpRole).toUInt() == firstNan; }));
    EXPECT_TRUE(window_.treePanel()->noMatchText().isEmpty());

    // A search matching nothing says so over the empty tree (it was blank), and Escape in the
    // search clears it (it did nothing).
    search->setText("no op is named like this");
    ASSERT_TRUE(waitFor([&] { return !window_.treePanel()->noMatchText().isEmpty(); }));
    EXPECT_EQ(window_.treePanel()->noMatchText(),
              "No op matches \"no op is named like this\" (name, id or type).");
    EXPECT_EQ(tree->model()->rowCount(), 0);
    QTest::keyClick(search, Qt::Key_Escape);
    EXPECT_TRUE(search->text().isEmpty());
    ASSERT_TRUE(waitFor([&] { return tree->model()->rowCount() > 0; }));
    EXPECT_TRUE(window_.treePanel()->noMatchText().isEmpty());
}

// A search that hides the selected op leaves it the cursor's (the view chose another row, and
// the comparison and plots followed it away for good), and clearing it selects it again.
TEST_F(MainWindowTest, ASearchHidingTheSelectedOpDoesNotMoveTheSelection) {
    QTreeView* tree = window_.treePanel()->view();
    const uint32_t selected = context_.cursor()->op();
    ASSERT_NE(selected, analysis::kNone);
    const auto& idx = context_.store()->index();
    // A layer-level op other than the selected one's, which the search shows alone.
    uint32_t layer = selected;
    while (idx.op(layer).parent != analysis::kNone) layer = idx.op(layer).parent;
    std::string other;
    for (uint32_t top : idx.process(0).topOps)
        if (top != layer && idx.op(selected).namePath.find(idx.op(top).name) == std::string::npos)
            other = idx.op(top).name;
    ASSERT_FALSE(other.empty());
    window_.treePanel()->setSearchText(QString::fromStdString(other));
    ASSERT_GT(tree->model()->rowCount(), 0);  // the other layer is shown
    EXPECT_EQ(context_.cursor()->op(), selected);
    EXPECT_FALSE(tree->selectionModel()->hasSelection());
    window_.treePanel()->setSearchText({});
    EXPECT_EQ(context_.cursor()->op(), selected);
    EXPECT_EQ(tree->currentIndex().data(data::OpTreeModel::OpRole).toUInt(), selected);
    // A search that shows it keeps it selected.
    window_.treePanel()->setSearchText(QString::fromStdString(idx.op(selected).name));
    EXPECT_EQ(tree->currentIndex().data(data::OpTreeModel::OpRole).toUInt(), selected);
    EXPECT_EQ(context_.cursor()->op(), selected);
}

// A dump whose folder is deleted while shown is not called "complete" any more: the status line
// says it is gone, and a notice put there is elided as the line is.
TEST_F(MainWindowTest, ADumpDeletedWhileShownIsNotCalledComplete) {
    ASSERT_TRUE(window_.statusText().startsWith("complete")) << window_.statusText().toStdString();
    std::filesystem::remove_all(dir_.path());
    ASSERT_TRUE(waitFor([&] { return window_.statusText().contains("the folder was deleted"); }))
        << window_.statusText().toStdString();
    EXPECT_FALSE(window_.statusText().startsWith("complete"));
    EXPECT_TRUE(context_.problems().join("\n").contains("no longer exists"));
    emit context_.notice(QString(400, QChar('x')));
    auto* label = window_.findChild<widgets::ElidedLabel*>();
    ASSERT_NE(label, nullptr);
    EXPECT_EQ(window_.statusText(), QString(400, QChar('x')));
    EXPECT_TRUE(label->text().endsWith(QChar(0x2026)));
}

// View › Statistics (Ctrl+2) and the others from the start page show the workspace at that view;
// they did nothing there, the start page staying up over the dump.
TEST_F(MainWindowTest, TheViewMenuShowsTheWorkspaceFromTheStartPage) {
    QAction* statistics = nullptr;
    for (QAction* action : window_.findChildren<QAction*>())
        if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_2)) statistics = action;
    ASSERT_NE(statistics, nullptr);
    window_.showPage(MainWindow::Page::Start);
    ASSERT_EQ(window_.page(), MainWindow::Page::Start);
    statistics->trigger();
    EXPECT_EQ(window_.page(), MainWindow::Page::Workspace);
    EXPECT_TRUE(window_.statisticsPlot()->isVisible());
}

// View › Comparison (Ctrl+5) shows the Comparison tab, as the others show theirs (it had no
// entry: a user found it only by its tab).
TEST_F(MainWindowTest, TheViewMenuHasTheComparison) {
    QAction* comparison = nullptr;
    for (QAction* action : window_.findChildren<QAction*>())
        if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_5)) comparison = action;
    ASSERT_NE(comparison, nullptr);
    EXPECT_EQ(comparison->text(), "Co&mparison");
    window_.showPage(MainWindow::Page::Start);
    comparison->trigger();
    EXPECT_EQ(window_.page(), MainWindow::Page::Workspace);
    EXPECT_TRUE(window_.comparePanel()->isVisible());
}

// The View menu's Ctrl+1, Ctrl+2, ... go down the menu in order, and each shows the tab at that
// place in the tab bar, from the start page too: Ctrl+5 was Gradients, the sixth tab, and Ctrl+6
// Comparison, the fifth (found by a user walk).
TEST_F(MainWindowTest, TheViewShortcutsFollowTheTabs) {
    QMenu* view = nullptr;
    for (QAction* menu : window_.menuBar()->actions())
        if (menu->text() == "&View") view = menu->menu();
    ASSERT_NE(view, nullptr);
    QTabWidget* tabs = nullptr;
    for (QTabWidget* candidate : window_.findChildren<QTabWidget*>())
        if (candidate->indexOf(window_.comparePanel()) >= 0) tabs = candidate;
    ASSERT_NE(tabs, nullptr);
    std::vector<std::pair<int, QAction*>> numbered;  // Ctrl+N, in the menu's order
    for (QAction* action : view->actions())
        for (int n = 1; n <= 9; ++n)
            if (action->shortcut() ==
                QKeySequence(QKeyCombination(Qt::CTRL, Qt::Key(Qt::Key_0 + n))))
                numbered.emplace_back(n, action);
    ASSERT_EQ(numbered.size(), 6u);
    for (size_t i = 0; i < numbered.size(); ++i) {
        const auto& [n, action] = numbered[i];
        EXPECT_EQ(n, static_cast<int>(i) + 1) << action->text().toStdString();
        window_.showPage(MainWindow::Page::Start);  // View › Gradients did nothing there
        action->trigger();
        EXPECT_EQ(window_.page(), MainWindow::Page::Workspace) << action->text().toStdString();
        ASSERT_LT(tabs->currentIndex(), tabs->count());
        EXPECT_EQ(tabs->currentIndex(), n - 1) << action->text().toStdString();
        // The tab shown is the one the menu names ("Tensors of the op" shows "Tensors").
        EXPECT_TRUE(QString(action->text()).remove('&').startsWith(tabs->tabText(n - 1)))
            << action->text().toStdString() << " showed " << tabs->tabText(n - 1).toStdString();
    }
}

// The tensors table's columns show their cells whole: the grid line takes a pixel of each cell,
// and columns fitted to their size hints exactly elided "output" to "out…", "1_other" and
// "1x12x64" too.
TEST_F(MainWindowTest, TheTensorsTableShowsItsCellsWhole) {
    const QTableView* table = window_.tensorsPanel()->view();
    const QAbstractItemModel* model = table->model();
    ASSERT_GT(model->rowCount(), 0);
    ASSERT_TRUE(table->showGrid());
    // What the delegate paints into: the cell less the grid line and its text margins.
    const int margins =
        2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
    int checked = 0;
    for (int r = 0; r < model->rowCount(); ++r)
        for (int c = 0; c + 1 < model->columnCount(); ++c) {  // the last one stretches
            const QString text = model->index(r, c).data().toString();
            const int room = table->columnWidth(c) - 1 - margins;
            EXPECT_GE(room, table->fontMetrics().horizontalAdvance(text))
                << "column " << c << ": '" << text.toStdString() << "'";
            ++checked;
        }
    EXPECT_GT(checked, 0);
}

// The tree's columns and the line under it fit a window of the default size: the statistics
// are on screen without scrolling, the config line is not cut.
TEST_F(MainWindowTest, ColumnsAndTheConfigLineFitTheDefaultWindow) {
    window_.resize(1500, 900);
    QTreeView* tree = window_.treePanel()->view();
    ASSERT_GT(tree->model()->rowCount(), 0);
    // What does not fit, once the window has laid itself out at its new size.
    auto misfits = [&] {
        QStringList found;
        if (window_.width() != 1500) found << QStringLiteral("window %1 wide").arg(window_.width());
        const int viewport = tree->viewport()->width();
        for (int c : {data::OpTreeModel::NameColumn, data::OpTreeModel::MaxColumn,
                      data::OpTreeModel::NormColumn}) {
            const int right = tree->header()->sectionViewportPosition(c) + tree->columnWidth(c);
            if (right > viewport)
                found
                    << QStringLiteral("column %1 ends at %2 of %3").arg(c).arg(right).arg(viewport);
            // Wide enough for what the visible rows show.
            for (int r = 0; r < tree->model()->rowCount(); ++r) {
                const QString text = tree->model()->index(r, c).data().toString();
                if (tree->columnWidth(c) < tree->fontMetrics().horizontalAdvance(text))
                    found << QStringLiteral("column %1 too narrow for '%2'").arg(c).arg(text);
            }
        }
        int configLines = 0;
        for (auto* label : window_.treePanel()->findChildren<QLabel*>()) {
            if (!label->text().startsWith("Config:")) continue;
            ++configLines;
            // All of it shown: on one line, or wrapped in a label tall enough for its lines.
            const bool cut =
                label->wordWrap()
                    ? label->height() < label->heightForWidth(label->width())
                    : label->width() < label->fontMetrics().horizontalAdvance(label->text());
            if (cut) found << QStringLiteral("cut: ") + label->text();
        }
        if (configLines != 1) found << QStringLiteral("%1 config lines").arg(configLines);
        return found;
    };
    EXPECT_TRUE(waitFor([&] { return misfits().isEmpty(); })) << misfits().join('\n').toStdString();
}

}  // namespace
}  // namespace probe
