// Switching sessions in the window: a dump opened, a model launched, another dump opened, a
// running probe attached to, in any order. Each new session replaces the one before; every item
// model of the window is under QAbstractItemModelTester (Fatal), and no widget is painted and no
// cursor signal is sent while a model is between beginResetModel and endResetModel. The dumps are
// real: written by the native test engine under the probe.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>

#include <map>
#include <memory>
#include <vector>

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QFileInfo>
#include <QHeaderView>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QTableView>
#include <QTimer>
#include <QTreeView>
#include <gtest/gtest.h>

#include "context/app_context.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "elided_label.h"
#include "engine_runs.h"
#include "main_window.h"
#include "op_tensors_model.h"
#include "op_tensors_panel.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "session/live_probes.h"
#include "session/live_session.h"
#include "session_panel.h"
#include "statistics_plot.h"
#include "test_support.h"
#include "widget_checks.h"

namespace probe {
namespace {

using analysis::kNone;
using test::waitFor;
using widgets::MainWindow;

// Watches every item model of a window: each under QAbstractItemModelTester (Fatal), and the
// times a widget was painted or the cursor spoke while one of them was half reset counted.
class ModelGuard : public QObject {
public:
    explicit ModelGuard(QWidget* window, data::DumpCursor* cursor) {
        for (QAbstractItemModel* model : window->findChildren<QAbstractItemModel*>()) {
            testers_.push_back(std::make_unique<QAbstractItemModelTester>(
                model, QAbstractItemModelTester::FailureReportingMode::Fatal));
            connect(model, &QAbstractItemModel::modelAboutToBeReset, this,
                    [this, model] { resetting_[model] = true; });
            connect(model, &QAbstractItemModel::modelReset, this,
                    [this, model] { resetting_[model] = false; });
        }
        connect(cursor, &data::DumpCursor::changed, this,
                [this] { cursorSignalsMidReset_ += anyResetting() ? 1 : 0; });
        qApp->installEventFilter(this);
    }
    ~ModelGuard() override { qApp->removeEventFilter(this); }
    size_t models() const { return testers_.size(); }
    int paintsMidReset() const { return paintsMidReset_; }
    int cursorSignalsMidReset() const { return cursorSignalsMidReset_; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Paint && anyResetting()) ++paintsMidReset_;
        return QObject::eventFilter(watched, event);
    }

private:
    bool anyResetting() const {
        for (const auto& [model, resetting] : resetting_)
            if (resetting) return true;
        return false;
    }
    std::vector<std::unique_ptr<QAbstractItemModelTester>> testers_;
    std::map<QAbstractItemModel*, bool> resetting_;
    int paintsMidReset_ = 0, cursorSignalsMidReset_ = 0;
};

class SessionSwitchTest : public ::testing::Test {
protected:
    void SetUp() override {
        test::prepareEngineSessions(context_, sockets_, config_);
        window_.resize(1400, 900);
        window_.show();
        guard_ = std::make_unique<ModelGuard>(&window_, context_.cursor());
    }
    void TearDown() override {
        if (engine_.state() != QProcess::NotRunning) {
            engine_.kill();
            engine_.waitForFinished(5000);
        }
        EXPECT_EQ(guard_->paintsMidReset(), 0);
        EXPECT_EQ(guard_->cursorSignalsMidReset(), 0);
        guard_.reset();
        ::unsetenv("PROBE_CONTROL_DIR");
    }
    // A model started under its probe (engine_), attached to and shown.
    session::LiveProbeInfo attachToARunningModel() {
        const session::LiveProbeInfo probe =
            test::startEngineProbe(engine_, dir_ / "attached", config_);
        EXPECT_NE(probe.pid, 0);
        if (probe.pid == 0) return probe;
        context_.attach(probe);
        expectShows(QString::fromStdString(dir_ / "attached/atb_dump_data"), 3);
        return probe;
    }
    QString writeEngineDump(const std::string& name, int rounds) {
        return test::writeEngineDump(dir_ / name, config_, rounds);
    }
    session::LaunchSpec engineSpec(const std::string& output, int rounds, int sleepMs) {
        return test::engineLaunch(dir_ / output, config_, rounds, sleepMs);
    }
    size_t rounds() const {
        const auto& idx = context_.store()->index();
        return idx.processCount() > 0 ? idx.rounds(0).size() : 0;
    }
    // The window shows the dump at `root` read whole, an op selected, every model agreeing.
    void expectShows(const QString& root, size_t minRounds) {
        ASSERT_TRUE(waitFor([&] {
            return context_.store()->root() == root && context_.store()->initialLoadDone() &&
                   rounds() >= minRounds;
        })) << context_.store()->root().toStdString()
            << " " << rounds() << " rounds\n"
            << window_.sessionPanel()->log()->toPlainText().toStdString();
        ASSERT_TRUE(waitFor([&] { return context_.cursor()->op() != kNone; }));
        const auto& idx = context_.store()->index();
        EXPECT_EQ(window_.treePanel()->model()->rowCount(),
                  static_cast<int>(idx.process(0).topOps.size()));
        EXPECT_GT(window_.tensorsPanel()->model()->rowCount(), 0);
        EXPECT_FALSE(window_.grab().isNull());  // everything paints
    }

    test::TempDir dir_{"ui-switch"}, sockets_{"probe-sockets"};
    const std::string config_ = dir_ / "config.json";
    context::AppContext context_;
    MainWindow window_{&context_};
    std::unique_ptr<ModelGuard> guard_;
    QProcess engine_;
};

// A finished launch, then another (the demo, then File › Launch another script): the first dump
// goes, the second fills the tree and the plot.
TEST_F(SessionSwitchTest, ALaunchReplacesAFinishedOne) {
    window_.showView(MainWindow::View::Plot);
    ASSERT_TRUE(context_.launch(engineSpec("first", 30, 0)));
    ASSERT_TRUE(waitFor([&] {
        return context_.liveSession()->hasEnded() && context_.store()->dumpState() == "complete";
    }));
    expectShows(QString::fromStdString(dir_ / "first/atb_dump_data"), 30);
    window_.treePanel()->view()->expandAll();
    ASSERT_TRUE(context_.launch(engineSpec("second", 100000, 10)));
    expectShows(QString::fromStdString(dir_ / "second/atb_dump_data"), 3);
    EXPECT_EQ(window_.sessionPanel()->stateText(), "dumping");
}

// Opening a dump while a launched model runs asks whether to stop it; the model ending while
// the question is up answers it (the question stayed up, about a model that had finished, until
// the user answered).
TEST_F(SessionSwitchTest, TheQuestionToStopAModelGoesWhenTheModelEnds) {
    const QString other = writeEngineDump("other", 3);
    ASSERT_TRUE(context_.launch(engineSpec("running", 20, 50)));
    ASSERT_TRUE(waitFor([&] { return context_.modelRunning(); }));
    bool asked = false;
    QTimer::singleShot(0, [&] { asked = QApplication::activeModalWidget() != nullptr; });
    // Never left up for good: a question still there after a long while is answered No.
    QTimer::singleShot(120000, [] {
        if (auto* modal = QApplication::activeModalWidget()) modal->close();
    });
    EXPECT_TRUE(window_.openDumpAsked(other));
    EXPECT_TRUE(asked);
    EXPECT_TRUE(context_.liveSession() == nullptr || context_.liveSession()->hasEnded());
    expectShows(other + "/atb_dump_data", 3);
}

// The question before opening another dump while a model runs has buttons that say what they
// do: "Keep it running, go back" keeps the model and the session it shows, opening nothing ("No",
// then "Keep it running", cancelled the opening without saying so; GUI walks), "Stop it and go
// on" stops it and opens the dump.
TEST_F(SessionSwitchTest, TheQuestionToStopAModelSaysWhatEachAnswerDoes) {
    const QString other = writeEngineDump("other", 3);
    ASSERT_TRUE(context_.launch(engineSpec("running", 100000, 10)));
    ASSERT_TRUE(waitFor([&] { return context_.modelRunning(); }));
    QStringList buttons;
    const auto answer = [&](const QString& text) {
        QTimer::singleShot(0, [&buttons, text] {
            ASSERT_TRUE(waitFor([] { return QApplication::activeModalWidget() != nullptr; }));
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            ASSERT_NE(box, nullptr);
            buttons.clear();
            QAbstractButton* chosen = nullptr;
            for (QAbstractButton* button : box->buttons()) {
                buttons << button->text();
                if (button->text() == text) chosen = button;
            }
            if (!chosen) {  // failed, and never left up: the window waits on it
                ADD_FAILURE() << "no button " << text.toStdString();
                box->close();
                return;
            }
            chosen->click();
        });
    };
    answer("Keep it running, go back");
    EXPECT_FALSE(window_.openDumpAsked(other));
    EXPECT_EQ(buttons, (QStringList{"Stop it and go on", "Keep it running, go back"}));
    EXPECT_TRUE(context_.modelRunning());
    ASSERT_NE(context_.liveSession(), nullptr);  // still the session shown
    EXPECT_FALSE(context_.liveSession()->hasEnded());
    answer("Stop it and go on");
    EXPECT_TRUE(window_.openDumpAsked(other));
    EXPECT_FALSE(context_.modelRunning());
    expectShows(other + "/atb_dump_data", 3);
}

// A dump opened (its op's table scrolled to its last round), then a launch.
TEST_F(SessionSwitchTest, ALaunchReplacesAnOpenedDump) {
    const QString opened = writeEngineDump("opened", 60);
    context_.openDump(opened);
    expectShows(opened + "/atb_dump_data", 60);
    window_.showView(MainWindow::View::Tree);
    // Scrolled to the latest round.
    ASSERT_TRUE(waitFor(
        [&] { return window_.tensorsPanel()->view()->verticalHeader()->visualIndexAt(0) > 0; }));
    ASSERT_TRUE(context_.launch(engineSpec("launched", 100000, 10)));
    expectShows(QString::fromStdString(dir_ / "launched/atb_dump_data"), 3);
}

// A dump opened, then another.
TEST_F(SessionSwitchTest, ADumpReplacesAnother) {
    const QString first = writeEngineDump("a", 60), second = writeEngineDump("b", 5);
    context_.openDump(first);
    expectShows(first + "/atb_dump_data", 60);
    // The window settled on the first: its op's table scrolled to the latest round.
    ASSERT_TRUE(waitFor(
        [&] { return window_.tensorsPanel()->view()->verticalHeader()->visualIndexAt(0) > 0; }));
    context_.openDump(second);
    expectShows(second + "/atb_dump_data", 5);
    EXPECT_EQ(rounds(), 5u);
}

// A folder that holds no dump, or one that is gone (a recent entry), is refused with a message
// box before anything is replaced: the dump shown stays (the tree emptied and the title went),
// and a running model is neither asked about nor stopped.
TEST_F(SessionSwitchTest, AFolderThatHoldsNoDumpIsRefusedAndTheShownSessionStays) {
    const QString opened = writeEngineDump("opened", 10);
    context_.openDump(opened);
    expectShows(opened + "/atb_dump_data", 10);
    const QString notADump = QString::fromStdString(dir_ / "not-a-dump");
    ASSERT_EQ(::mkdir((dir_ / "not-a-dump").c_str(), 0755), 0);
    test::writeFile(dir_ / "not-a-dump/readme.txt", "x");
    QStringList said;
    // The message box is modal: read and closed as a user would.
    const auto closeNextMessage = [&] {
        QTimer::singleShot(0, [&] {
            ASSERT_TRUE(waitFor([] { return QApplication::activeModalWidget() != nullptr; }));
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            ASSERT_NE(box, nullptr);
            said << box->windowTitle() + ": " + box->text();
            box->accept();
        });
    };
    closeNextMessage();
    EXPECT_FALSE(window_.openDumpAsked(notADump));
    closeNextMessage();
    EXPECT_FALSE(window_.openDumpAsked(QString::fromStdString(dir_ / "gone")));
    ASSERT_EQ(said.size(), 2);
    EXPECT_TRUE(said[0].startsWith("Cannot open: " + notADump + " holds no dump"))
        << said[0].toStdString();
    EXPECT_TRUE(said[1].contains("gone does not exist")) << said[1].toStdString();
    EXPECT_EQ(context_.store()->root(), opened + "/atb_dump_data");
    expectShows(opened + "/atb_dump_data", 10);

    // A running model: not stopped for a choice that cannot be opened.
    ASSERT_TRUE(context_.launch(engineSpec("launched", 100000, 10)));
    expectShows(QString::fromStdString(dir_ / "launched/atb_dump_data"), 3);
    closeNextMessage();
    EXPECT_FALSE(window_.openDumpAsked(notADump));
    ASSERT_EQ(said.size(), 3);
    EXPECT_TRUE(said[2].startsWith("Cannot open: ")) << said[2].toStdString();
    EXPECT_TRUE(context_.modelRunning());
    EXPECT_EQ(context_.store()->root(), QString::fromStdString(dir_ / "launched/atb_dump_data"));
    QString error;
    EXPECT_FALSE(context_.openDump(notADump, &error));
    EXPECT_TRUE(error.contains("holds no dump")) << error.toStdString();
    EXPECT_TRUE(context_.modelRunning());
}

// Launch, open, launch again, attach: each replaces the one before, a running model is stopped.
TEST_F(SessionSwitchTest, OpenLaunchReopenAttachInSequence) {
    ASSERT_GE(guard_->models(),
              3u);  // the op tree, its filter, the op's tensors (and the widgets' own)
    const QString opened = writeEngineDump("opened", 40);
    context_.openDump(opened);
    expectShows(opened + "/atb_dump_data", 40);

    ASSERT_TRUE(context_.launch(engineSpec("launched", 100000, 10)));
    expectShows(QString::fromStdString(dir_ / "launched/atb_dump_data"), 3);
    const qint64 launchedPid = context_.liveSession()->probePid();

    context_.openDump(opened);
    expectShows(opened + "/atb_dump_data", 40);
    ASSERT_TRUE(waitFor([&] { return test::processHasEnded(launchedPid); }))  // stopped
        << "state " << test::processState(launchedPid);

    const session::LiveProbeInfo probe = attachToARunningModel();
    ASSERT_NE(probe.pid, 0);
    EXPECT_EQ(window_.sessionPanel()->stateText(), "dumping");

    context_.openDump(opened);
    EXPECT_TRUE(window_.statusMessage().startsWith(
        QString("Let go of pid %1 (").arg(probe.pid)))  // said: it went on silently
        << window_.statusMessage().toStdString();
    expectShows(opened + "/atb_dump_data", 40);
    EXPECT_EQ(engine_.state(), QProcess::Running);  // an attached program is let go, not stopped
}

// The attached probe let go when a dump is opened is said while that dump is read, then gives way
// to its state line: it hid "complete · 40 ops ..." for 15 s (found by a user walk).
TEST_F(SessionSwitchTest, TheLetGoMessageGivesWayToTheNextDumpsState) {
    const QString opened = writeEngineDump("opened", 40);
    const session::LiveProbeInfo probe = attachToARunningModel();
    ASSERT_NE(probe.pid, 0);

    context_.openDump(opened);
    EXPECT_TRUE(window_.statusMessage().startsWith(QString("Let go of pid %1 (").arg(probe.pid)))
        << window_.statusMessage().toStdString();
    expectShows(opened + "/atb_dump_data", 40);
    EXPECT_EQ(window_.statusMessage(), QString());
    EXPECT_TRUE(window_.statusText().startsWith("complete")) << window_.statusText().toStdString();
    auto* state = window_.findChild<widgets::ElidedLabel*>();
    ASSERT_NE(state, nullptr);
    EXPECT_TRUE(state->isVisible());  // a message in the status bar hides it
    EXPECT_EQ(state->fullText(), window_.statusText());
    EXPECT_EQ(engine_.state(), QProcess::Running);
}

// A program let go by opening a dump over it goes on: the Session panel, which still shows its
// run, says when it ends (it said "the program goes on running" ever after: found by a new
// user).
TEST_F(SessionSwitchTest, AProgramLetGoByOpeningADumpIsSaidToEndWhenItEnds) {
    const QString opened = writeEngineDump("opened", 40);
    const session::LiveProbeInfo probe = attachToARunningModel();
    ASSERT_NE(probe.pid, 0);
    context_.openDump(opened);
    expectShows(opened + "/atb_dump_data", 40);
    auto* panel = window_.sessionPanel();
    const auto logSays = [&](const QString& text) {
        return panel->log()->toPlainText().contains(text);
    };
    ASSERT_TRUE(waitFor([&] { return logSays("the program goes on running"); }))
        << panel->log()->toPlainText().toStdString();
    EXPECT_EQ(panel->stateText(), "last run: detached");
    EXPECT_FALSE(logSays("has ended since"));
    engine_.kill();
    ASSERT_TRUE(engine_.waitForFinished(30000));
    ASSERT_TRUE(waitFor([&] {
        return logSays(QString("the program (pid %1) has ended since").arg(probe.pid));
    })) << panel->log()->toPlainText().toStdString();
    EXPECT_EQ(panel->stateText(), "last run: detached");
    expectShows(opened + "/atb_dump_data", 40);  // the dump shown stays
}

// The run kept for the Session panel until its program ends goes when a new run takes the panel:
// a program that never ends (or whose pid was given to another) kept one session more each time.
TEST_F(SessionSwitchTest, ARunLetGoIsKeptOnlyUntilAnotherRunTakesThePanel) {
    const QString opened = writeEngineDump("opened", 40);
    const session::LiveProbeInfo probe =
        test::startEngineProbe(engine_, dir_ / "attached", config_);
    ASSERT_NE(probe.pid, 0);
    const auto sessions = [&] {
        return context_.findChildren<session::LiveSession*>(Qt::FindDirectChildrenOnly).size();
    };
    for (int attach = 0; attach < 3; ++attach) {
        context_.attach(probe);
        expectShows(QString::fromStdString(dir_ / "attached/atb_dump_data"), 3);
        context_.openDump(opened);
        expectShows(opened + "/atb_dump_data", 40);
        ASSERT_TRUE(waitFor([&] { return sessions() == 1; })) << sessions() << " sessions";
    }
    EXPECT_EQ(engine_.state(), QProcess::Running);
}

// Attach… to the model this window launched: it is followed already, and stays running (the
// window asked "Stop it?" and, answered yes, ended the very program the user meant to follow).
TEST_F(SessionSwitchTest, AttachingToTheModelThisWindowLaunchedKeepsIt) {
    ASSERT_TRUE(context_.launch(engineSpec("launched", 100000, 10)));
    expectShows(QString::fromStdString(dir_ / "launched/atb_dump_data"), 3);
    const session::LiveSession* launched = context_.liveSession();
    const qint64 pid = launched->probePid();
    const auto probe = session::probeOfProcess(pid);
    ASSERT_TRUE(probe);
    window_.attachTo(*probe);
    EXPECT_EQ(context_.liveSession(), launched);
    EXPECT_FALSE(launched->hasEnded());
    EXPECT_EQ(
        window_.statusMessage(),
        QString("Pid %1 is the model this window launched: it is followed already.").arg(pid));
    EXPECT_FALSE(test::processHasEnded(pid));
}

}  // namespace
}  // namespace probe
