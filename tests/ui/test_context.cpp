// The application context alone, without a window (a QGuiApplication: no widgets in it): each
// session replaces the one before through one path (a running model stopped without waiting
// for it, the cursor cleared while the old data is still there, the dumps closed), the second
// dump for comparing, what it gathers about a dump (problems, the first NaN), the recent
// sessions. Real dumps: the native test engine under the probe.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>

#include <csignal>
#include <functional>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTest>
#include <gtest/gtest.h>

#include "config_document.h"
#include "context/app_context.h"
#include "dump_builder.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "engine_runs.h"
#include "probe/format/op_config.h"
#include "session/live_probes.h"
#include "session/live_session.h"
#include "test_support.h"

namespace probe {
namespace {

using analysis::kNone;
using context::AppContext;
using Kind = AppContext::SessionKind;

bool waitFor(const std::function<bool()>& condition, int ms = 20000) {
    return QTest::qWaitFor(condition, ms);
}

class ContextTest : public ::testing::Test {
protected:
    void SetUp() override { test::prepareEngineSessions(context_, sockets_, config_); }
    void TearDown() override {
        if (engine_.state() != QProcess::NotRunning) {
            engine_.kill();
            engine_.waitForFinished(5000);
        }
        ::unsetenv("PROBE_CONTROL_DIR");
    }
    QString writeEngineDump(const std::string& name, int rounds) {
        return test::writeEngineDump(dir_ / name, config_, rounds);
    }
    session::LaunchSpec engineSpec(const std::string& output, int rounds, int sleepMs) {
        return test::engineLaunch(dir_ / output, config_, rounds, sleepMs);
    }
    size_t rounds(const data::DumpStore* store) const {
        const auto& idx = store->index();
        return idx.processCount() > 0 ? idx.rounds(0).size() : 0;
    }
    bool loaded(const data::DumpStore* store, const QString& root) const {
        return store->root() == root && store->initialLoadDone();
    }

    test::TempDir dir_{"ui-context"}, sockets_{"probe-sockets"};
    const std::string config_ = dir_ / "config.json";
    AppContext context_;
    QProcess engine_;
};

// The cursor lets go of the old dump while it is still there: whoever follows the cursor reads
// old data that is whole, never a half-replaced index.
TEST_F(ContextTest, ADumpReplacesAnotherAndTheCursorGoesFirst) {
    test::writeSmallSyntheticDump(dir_ / "nan");
    const QString plain = writeEngineDump("plain", 6);
    QSignalSpy loadedSpy(&context_, &AppContext::sessionLoaded);
    context_.openDump(QString::fromStdString(dir_ / "nan"));
    ASSERT_TRUE(waitFor([&] { return loadedSpy.count() == 1; }));
    EXPECT_TRUE(loadedSpy.front().front().toBool());
    EXPECT_EQ(context_.sessionKind(), Kind::Dump);
    EXPECT_EQ(context_.liveSession(), nullptr);
    // It starts at the first NaN, and knows where that is.
    ASSERT_NE(context_.firstNanRow(), kNone);
    EXPECT_EQ(context_.cursor()->row(), context_.firstNanRow());
    const size_t oldOps = context_.store()->index().opCount();

    std::vector<size_t> opsSeenByCursor;
    QObject::connect(context_.cursor(), &data::DumpCursor::changed,
                     [&] { opsSeenByCursor.push_back(context_.store()->index().opCount()); });
    QSignalSpy replaced(&context_, &AppContext::sessionReplaced);
    QSignalSpy nan(&context_, &AppContext::firstNanChanged);
    context_.openDump(plain);
    ASSERT_EQ(replaced.count(), 1);
    ASSERT_FALSE(opsSeenByCursor.empty());
    EXPECT_EQ(opsSeenByCursor.front(), oldOps);  // cleared while the old index was whole
    EXPECT_EQ(context_.cursor()->op(), kNone);
    EXPECT_EQ(context_.firstNanRow(), kNone);  // what was gathered about the old dump is gone
    ASSERT_FALSE(nan.isEmpty());
    EXPECT_EQ(nan.back().front().toUInt(), kNone);
    ASSERT_TRUE(waitFor([&] {
        return loaded(context_.store(), plain + "/atb_dump_data") &&
               context_.cursor()->op() != kNone;
    }));
    EXPECT_EQ(rounds(context_.store()), 6u);
    // Both are recent sessions, the last first.
    const auto recent = context_.recentSessions()->list();
    ASSERT_GE(recent.size(), 2);
    EXPECT_EQ(recent[0].path, plain);
    EXPECT_EQ(recent[1].path, QString::fromStdString(dir_ / "nan"));
}

// A task tensor dump's NaN is known only once its statistics come from its files, after the rows
// are shown, over several polls when the files are big: it is still named the first NaN, and the
// window still starts there (both were decided with the rows alone, before a NaN was known).
TEST_F(ContextTest, ATensorDumpsFirstNanIsFoundInItsFiles) {
    test::DumpBuilder dump(dir_ / "tensors");
    dump.setStatisticsPrinted(false);
    // Three 4 MiB tensors: more than one poll's budget (8 MiB) of files; the NaN in the last.
    std::vector<float> big(1u << 20, 0.5f);
    dump.addRow(0, "0", "layer", "Layer", true, big);
    dump.addRow(0, "1", "mid", "Layer", true, big);
    big[77] = std::nanf("");
    dump.addRow(0, "2", "head", "Linear", true, big);
    dump.setStatus("complete");
    QSignalSpy loadedSpy(&context_, &AppContext::sessionLoaded);
    context_.openDump(QString::fromStdString(dir_ / "tensors"));
    ASSERT_TRUE(waitFor([&] { return loadedSpy.count() == 1; }));
    ASSERT_TRUE(
        waitFor([&] { return context_.store()->index().rowsWithStatisticsFromData() == 3; }));
    const auto& idx = context_.store()->index();
    const uint32_t head = idx.findOp(0, "2");
    ASSERT_NE(head, kNone);
    ASSERT_NE(context_.firstNanRow(), kNone);
    EXPECT_EQ(idx.slot(idx.row(context_.firstNanRow()).slot).op, head);
    EXPECT_EQ(context_.cursor()->op(), head);
}

// A dump opened while a model runs: the model is stopped, in the background.
TEST_F(ContextTest, OpeningADumpStopsALaunchedModelWithoutWaitingForIt) {
    const QString opened = writeEngineDump("opened", 4);
    ASSERT_TRUE(context_.launch(engineSpec("launched", 100000, 10)));
    EXPECT_EQ(context_.sessionKind(), Kind::Launch);
    ASSERT_TRUE(
        waitFor([&] { return rounds(context_.store()) >= 3 && context_.cursor()->op() != kNone; }));
    EXPECT_TRUE(context_.modelRunning());
    QPointer<session::LiveSession> launched = context_.liveSession();
    const qint64 pid = launched->probePid();
    ASSERT_GT(pid, 0);
    context_.openDump(opened);
    // It returned without waiting for the model to end (waiting would have seen it finish).
    ASSERT_FALSE(launched.isNull());
    EXPECT_FALSE(launched->hasEnded())
        << session::sessionStateName(launched->state()).toStdString();
    EXPECT_EQ(context_.sessionKind(), Kind::Dump);
    EXPECT_EQ(context_.liveSession(), nullptr);
    EXPECT_FALSE(context_.modelRunning());
    ASSERT_TRUE(waitFor([&] { return loaded(context_.store(), opened + "/atb_dump_data"); }));
    ASSERT_TRUE(waitFor([&] { return test::processHasEnded(pid); }))
        << "state " << test::processState(pid);
    ASSERT_TRUE(waitFor([&] { return launched.isNull(); }));  // the ended session is gone too
    // The last launch is remembered, for the launch form.
    EXPECT_EQ(context_.lastLaunch().program, PROBE_NATIVE_ENGINE);
    EXPECT_EQ(context_.lastLaunch().arguments, engineSpec("launched", 100000, 10).arguments);
}

// Attaching replaces a launch; closing the session lets the attached probe go, its program runs on.
TEST_F(ContextTest, AttachReplacesALaunchAndClosingLetsTheProbeGo) {
    ASSERT_TRUE(context_.launch(engineSpec("launched", 100000, 10)));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->canPushConfig(); }));
    const qint64 launchedPid = context_.liveSession()->probePid();
    const session::LiveProbeInfo probe =
        test::startEngineProbe(engine_, dir_ / "attached", config_);
    ASSERT_NE(probe.pid, 0);
    context_.attach(probe);
    EXPECT_EQ(context_.sessionKind(), Kind::Attach);
    ASSERT_TRUE(waitFor([&] {
        return loaded(context_.store(), QString::fromStdString(dir_ / "attached/atb_dump_data")) &&
               rounds(context_.store()) >= 2;
    })) << context_.liveSession()->stateDetail().toStdString();
    ASSERT_TRUE(waitFor([&] { return test::processHasEnded(launchedPid); }))
        << "state " << test::processState(launchedPid);
    // The config document holds what the probe has in force, from its file.
    EXPECT_EQ(context_.configDocument()->filePath().toStdString(), config_);
    EXPECT_EQ(context_.recentSessions()->list().value(0).kind,
              session::RecentSession::Kind::Attach);

    context_.closeSession();
    EXPECT_EQ(context_.sessionKind(), Kind::None);
    EXPECT_FALSE(context_.store()->isOpen());
    EXPECT_EQ(context_.store()->index().opCount(), 0u);
    // Let go, not stopped: its probe still answers a new connection.
    session::ControlClient again;
    QSignalSpy greeted(&again, &session::ControlClient::hello);
    again.connectToProbe(probe.socketPath);
    ASSERT_TRUE(waitFor([&] { return greeted.count() > 0; }));
    EXPECT_EQ(engine_.state(), QProcess::Running);
}

// An attached program that dies of a signal: its probe closes the connection before the program
// is gone; the session says the program's end once it is (it said only "the probe closed the
// connection").
TEST_F(ContextTest, AnAttachedProgramDyingOfASignalIsSaidToHaveEnded) {
    const session::LiveProbeInfo probe =
        test::startEngineProbe(engine_, dir_ / "attached", config_);
    ASSERT_NE(probe.pid, 0);
    context_.attach(probe);
    ASSERT_TRUE(waitFor([&] { return rounds(context_.store()) >= 1; }))
        << context_.liveSession()->stateDetail().toStdString();
    ASSERT_EQ(::kill(static_cast<pid_t>(probe.pid), SIGSEGV), 0);
    ASSERT_TRUE(waitFor([&] {
        return context_.liveSession()->stateDetail().startsWith("the program ended (pid");
    })) << context_.liveSession()->stateDetail().toStdString();
    // And how, once its dump's status says it (the panel said only that it ended, the status
    // bar "stopped by SIGSEGV").
    const QString how =
        QStringLiteral("the program ended (pid %1): killed by SIGSEGV").arg(probe.pid);
    EXPECT_TRUE(waitFor([&] { return context_.liveSession()->stateDetail() == how; }))
        << context_.liveSession()->stateDetail().toStdString();
}

// A reference dump beside the one shown, for comparing: it opens and follows like the first,
// and goes with the session.
TEST_F(ContextTest, AReferenceDumpOpensBesideTheShownOneAndGoesWithTheSession) {
    const QString shown = writeEngineDump("shown", 5), reference = writeEngineDump("reference", 7),
                  other = writeEngineDump("other", 3);
    context_.openDump(shown);
    context_.openReference(reference);
    ASSERT_TRUE(waitFor([&] {
        return loaded(context_.store(), shown + "/atb_dump_data") &&
               loaded(context_.reference(), reference + "/atb_dump_data");
    }));
    EXPECT_EQ(rounds(context_.store()), 5u);
    EXPECT_EQ(rounds(context_.reference()), 7u);
    // The cursor follows the shown dump only.
    EXPECT_NE(context_.cursor()->op(), kNone);
    context_.closeReference();
    EXPECT_FALSE(context_.reference()->isOpen());
    EXPECT_TRUE(context_.store()->isOpen());

    context_.openReference(reference);
    ASSERT_TRUE(
        waitFor([&] { return loaded(context_.reference(), reference + "/atb_dump_data"); }));
    context_.openDump(other);
    EXPECT_FALSE(context_.reference()->isOpen());
    EXPECT_TRUE(context_.reference()->requestedPath().isEmpty());
    ASSERT_TRUE(waitFor([&] { return loaded(context_.store(), other + "/atb_dump_data"); }));
}

// The reference last compared against is offered again after its comparison closed with the
// session, in this run of the app and the next (File › Compare forgot it, and the user had to
// browse to it again for every candidate). A refused reference is not remembered.
TEST_F(ContextTest, TheLastReferenceIsRememberedAcrossSessionsAndRuns) {
    const QString shown = writeEngineDump("shown", 3), reference = writeEngineDump("reference", 3),
                  other = writeEngineDump("other", 3);
    context_.openDump(shown);
    ASSERT_TRUE(context_.compare(reference));
    EXPECT_EQ(context_.lastReference(), reference);
    QString error;
    EXPECT_FALSE(context_.compare(QString::fromStdString(dir_ / "missing"), {}, &error));
    EXPECT_FALSE(error.isEmpty());
    EXPECT_EQ(context_.lastReference(), reference);

    context_.openDump(other);
    EXPECT_FALSE(context_.reference()->isOpen());
    EXPECT_EQ(context_.lastReference(), reference);
    AppContext nextRun;
    EXPECT_EQ(nextRun.lastReference(), reference);
}

// File › Compare offers as reference the run the user had before: open A, then B, and B is
// compared with A (the dialog's reference was empty: found trying the app as a new user). After
// a comparison, the reference it had stays the one offered for the next dump.
TEST_F(ContextTest, TheReferenceOfferedIsTheRunBeforeThisOne) {
    const QString a = writeEngineDump("a", 3), b = writeEngineDump("b", 3),
                  c = writeEngineDump("c", 3), d = writeEngineDump("d", 3);
    QSettings().remove("compare/lastReference");
    EXPECT_EQ(context_.suggestedReference(), "");
    context_.openDump(a);
    EXPECT_EQ(context_.suggestedReference(), "");  // never the dump shown
    context_.openDump(b);
    EXPECT_EQ(context_.suggestedReference(), a);
    ASSERT_TRUE(context_.compare(context_.suggestedReference()));
    EXPECT_EQ(context_.suggestedReference(), a);
    context_.openDump(c);  // the comparison closes; its reference is offered again
    EXPECT_EQ(context_.suggestedReference(), a);
    context_.openDump(d);
    EXPECT_EQ(context_.suggestedReference(), c);
    ASSERT_TRUE(QDir(c).removeRecursively());
    EXPECT_EQ(context_.suggestedReference(), a);  // c, gone, is not offered: the last reference
    context_.openDump(d);  // the dump before is the one shown: the last reference too
    EXPECT_EQ(context_.suggestedReference(), a);
}

// Problems met reading a dump belong to it: a new session starts without them.
TEST_F(ContextTest, ProblemsBelongToTheirSession) {
    test::writeSmallSyntheticDump(dir_ / "broken");
    test::writeFile(dir_ / "broken/atb_dump_data/info/model/0_4242/SyntheticModel.json",
                    "{\"nodes\": [");
    QSignalSpy added(&context_, &AppContext::problemsAdded);
    QSignalSpy cleared(&context_, &AppContext::problemsCleared);
    context_.openDump(QString::fromStdString(dir_ / "broken"));
    ASSERT_TRUE(waitFor([&] { return context_.store()->initialLoadDone(); }));
    ASSERT_FALSE(context_.problems().isEmpty());
    EXPECT_TRUE(context_.problems().join("\n").contains("SyntheticModel.json"))
        << context_.problems().join("\n").toStdString();
    EXPECT_FALSE(added.isEmpty());
    const QString fine = writeEngineDump("fine", 2);
    context_.openDump(fine);
    EXPECT_TRUE(context_.problems().isEmpty());
    EXPECT_EQ(cleared.count(), 1);
    // A folder that is not a dump: said, and refused before anything is replaced (the dump
    // shown and its problems stay).
    QSignalSpy notices(&context_, &AppContext::notice);
    QString error;
    EXPECT_FALSE(context_.openDump(QString::fromStdString(dir_ / "nowhere"), &error));
    EXPECT_TRUE(error.contains("nowhere does not exist")) << error.toStdString();
    ASSERT_EQ(notices.size(), 1);
    EXPECT_EQ(notices[0][0].toString(), "Could not open: " + error);
    EXPECT_EQ(context_.store()->requestedPath(), fine);
    EXPECT_TRUE(context_.problems().isEmpty());
    EXPECT_EQ(cleared.count(), 1);
}

// A launch refused before anything runs is still the session (its reason is its state).
TEST_F(ContextTest, ARefusedLaunchSaysWhy) {
    session::LaunchSpec spec = engineSpec("refused", 1, 0);
    spec.configPath = QString::fromStdString(dir_ / "missing.json");
    QSignalSpy notices(&context_, &AppContext::notice);
    EXPECT_FALSE(context_.launch(spec));
    ASSERT_NE(context_.liveSession(), nullptr);
    EXPECT_EQ(context_.liveSession()->state(), session::SessionState::FailedToStart);
    EXPECT_TRUE(context_.liveSession()->stateDetail().contains("missing.json does not exist"))
        << context_.liveSession()->stateDetail().toStdString();
    ASSERT_FALSE(notices.isEmpty());
    EXPECT_TRUE(notices.back().front().toString().startsWith("Could not launch: "));
    EXPECT_FALSE(context_.modelRunning());
}

}  // namespace
}  // namespace probe
