// The application's live sessions: a model launched through probe run and a probe attached
// to, behind one interface (state, dump folder, config in force, pushes); recent sessions; the
// launch helpers (command lines, the demo).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <signal.h>
#include <sys/stat.h>

#include <utility>
#include <vector>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <gtest/gtest.h>

#include "session/live_session.h"
#include "session/recent_sessions.h"
#include "test_support.h"

namespace probe::session {
namespace {

bool waitFor(const std::function<bool()>& condition, int ms = 20000) {
    return QTest::qWaitFor(condition, ms);
}

class LiveSessionTest : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("PROBE_CONTROL_DIR", sockets_.path().c_str(), 1);
        ::chmod(sockets_.path().c_str(), 0700);
        probe::test::writeFile(
            dir_ / "config.json",
            R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    }
    void TearDown() override {
        if (engine_.state() != QProcess::NotRunning) {
            engine_.kill();
            engine_.waitForFinished(5000);
        }
        ::unsetenv("PROBE_CONTROL_DIR");
    }
    // Starts the native engine with the probe in it (no probe run), as a program that was
    // started elsewhere; returns its live probe once its socket is up.
    LiveProbeInfo startEngine(int rounds, int sleepMs, const QStringList& more = {}) {
        engine_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        engine_.start(PROBE_NATIVE_ENGINE,
                      QStringList{"--output", QString::fromStdString(dir_ / "engine"), "--config",
                                  QString::fromStdString(dir_ / "config.json"), "--rounds",
                                  QString::number(rounds), "--sleep-ms", QString::number(sleepMs)} +
                          more);
        LiveProbeInfo found;
        waitFor([&] {
            for (const auto& probe : liveProbes())
                if (probe.pid == engine_.processId()) found = probe;
            return found.pid != 0;
        });
        return found;
    }
    probe::test::TempDir dir_{"probe-live"}, sockets_{"probe-sockets"};
    QProcess engine_;
};

TEST_F(LiveSessionTest, LaunchedModelOpensItsDumpAndTakesPushes) {
    LiveSession session;
    QSignalSpy ready(&session, &LiveSession::dumpFolderReady);
    QSignalSpy hello(&session, &LiveSession::helloReceived);
    QString output;
    QObject::connect(&session, &LiveSession::output,
                     [&](const QString& text, bool) { output += text; });
    LaunchSpec spec;
    spec.program = PROBE_NATIVE_ENGINE;
    spec.arguments = {"--rounds", "400", "--sleep-ms", "10"};
    spec.outputDirectory = QString::fromStdString(dir_ / "out");
    spec.configPath = QString::fromStdString(dir_ / "config.json");
    spec.probeExecutable = PROBE_CLI;
    ASSERT_TRUE(session.launch(spec));
    EXPECT_EQ(session.origin(), LiveSession::Origin::Launched);
    EXPECT_EQ(session.state(), SessionState::Starting);
    ASSERT_TRUE(waitFor([&] { return ready.count() > 0 && hello.count() > 0; }))
        << output.toStdString();
    EXPECT_EQ(ready.at(0).at(0).toString(), session.dumpRoot());
    EXPECT_EQ(session.dumpRoot().toStdString(), dir_ / "out/atb_dump_data");
    EXPECT_EQ(session.state(), SessionState::Dumping);
    EXPECT_EQ(session.configPath(), spec.configPath);
    EXPECT_EQ(session.configInForce().value("exec_range", ""), "all");
    EXPECT_GT(session.probePid(), 0);
    EXPECT_TRUE(session.command().contains("probe_native_engine"));

    // A push is answered with its request id; the config in force follows.
    QSignalSpy applied(&session, &LiveSession::configApplied);
    const qint64 request =
        session.pushConfig({{"task", "statistics"}, {"dump_enable", false}, {"exec_range", "all"}});
    ASSERT_GE(request, 0);
    ASSERT_TRUE(waitFor([&] {
        for (const auto& signal : applied)
            if (signal.at(2).toLongLong() == request) return true;
        return false;
    }));
    EXPECT_FALSE(session.configInForce().value("dump_enable", true));
    ASSERT_TRUE(waitFor([&] { return session.state() == SessionState::Sleeping; }));

    // Stop ends the model (SIGTERM passed on by probe run).
    session.stop();
    ASSERT_TRUE(waitFor([&] { return session.hasEnded(); }));
    EXPECT_EQ(session.state(), SessionState::StoppedByUser);
    EXPECT_EQ(session.exitCode(), 128 + 15);
    EXPECT_EQ(session.pushConfig({{"dump_enable", true}}), -1);  // nobody to push to
}

TEST_F(LiveSessionTest, LaunchFoundItsDumpWithoutTheSocket) {
    // PROBE_CONTROL=0: no socket, no hello; the dump folder is found by its fresh status file.
    LiveSession session;
    QSignalSpy ready(&session, &LiveSession::dumpFolderReady);
    LaunchSpec spec;
    spec.program = PROBE_NATIVE_ENGINE;
    spec.arguments = {"--rounds", "5"};
    spec.environment = {"PROBE_CONTROL=0"};
    spec.outputDirectory = QString::fromStdString(dir_ / "quiet");
    spec.probeExecutable = PROBE_CLI;
    ASSERT_TRUE(session.launch(spec));
    ASSERT_TRUE(waitFor([&] { return session.hasEnded(); }));
    EXPECT_EQ(session.state(), SessionState::Finished);
    EXPECT_EQ(session.exitCode(), 0);
    ASSERT_EQ(ready.count(), 1);
    EXPECT_EQ(ready.at(0).at(0).toString(), session.dumpRoot());
    EXPECT_FALSE(session.canPushConfig());
}

TEST_F(LiveSessionTest, AttachedProbeFollowedUntilItEnds) {
    const LiveProbeInfo probe = startEngine(100000, 5);
    ASSERT_GT(probe.pid, 0);
    LiveSession session;
    QSignalSpy ready(&session, &LiveSession::dumpFolderReady);
    session.attach(probe);
    EXPECT_EQ(session.origin(), LiveSession::Origin::Attached);
    ASSERT_TRUE(waitFor([&] { return ready.count() > 0; }));
    EXPECT_EQ(ready.at(0).at(0).toString().toStdString(), dir_ / "engine/atb_dump_data");
    EXPECT_EQ(session.state(), SessionState::Dumping);
    EXPECT_EQ(session.probePid(), probe.pid);
    EXPECT_EQ(session.configPath().toStdString(), dir_ / "config.json");

    // A refused config says why, and leaves the one in force.
    QSignalSpy rejected(&session, &LiveSession::configRejected);
    const qint64 bad = session.pushConfig({{"exec_range", "sometimes"}});
    ASSERT_TRUE(waitFor([&] { return rejected.count() > 0; }));
    EXPECT_EQ(rejected.at(0).at(2).toLongLong(), bad);
    EXPECT_TRUE(rejected.at(0).at(0).toString().contains("exec_range"));
    EXPECT_EQ(session.configInForce().value("exec_range", ""), "all");

    // The program ends: the session says so.
    engine_.terminate();
    ASSERT_TRUE(waitFor([&] { return session.hasEnded(); }));
    EXPECT_EQ(session.state(), SessionState::Detached);
    EXPECT_TRUE(session.stateDetail().contains("ended")) << session.stateDetail().toStdString();
}

// A program that finishes by itself, its probe stopped a moment before its process ends (an
// interpreter's teardown), is said to have stopped its probe, then to have ended: not "the probe
// closed the connection" (what a new user's walk saw of the demo ending normally).
TEST_F(LiveSessionTest, AnAttachedProgramThatFinishesIsSaidToHaveEnded) {
    const LiveProbeInfo probe = startEngine(300, 5, {"--linger-ms", "1500"});
    ASSERT_GT(probe.pid, 0);
    LiveSession session;
    session.attach(probe);
    ASSERT_TRUE(waitFor([&] { return session.state() == SessionState::Dumping; }));
    ASSERT_TRUE(waitFor([&] { return session.hasEnded(); }, 60000));
    EXPECT_EQ(session.state(), SessionState::Detached);
    EXPECT_EQ(session.stateDetail(), QStringLiteral("the probe stopped (pid %1)").arg(probe.pid));
    ASSERT_TRUE(waitFor([&] { return engine_.state() == QProcess::NotRunning; }, 60000));
    EXPECT_TRUE(waitFor([&] {
        return session.stateDetail() == QStringLiteral("the program ended (pid %1)").arg(probe.pid);
    })) << session.stateDetail().toStdString();
}

TEST_F(LiveSessionTest, ProbeFoundFromTheProcessTheUserKnows) {
    // The user knows the pid of a wrapper (probe run, a shell script): its child's probe is found.
    QProcess wrapper;
    wrapper.setProcessChannelMode(QProcess::ForwardedChannels);
    wrapper.start(
        "/bin/sh",
        {"-c", QStringLiteral("'%1' --output '%2' --config '%3' --rounds 100000 --sleep-ms 5; true")
                   .arg(PROBE_NATIVE_ENGINE, QString::fromStdString(dir_ / "engine"),
                        QString::fromStdString(dir_ / "config.json"))});
    ASSERT_TRUE(wrapper.waitForStarted());
    std::optional<LiveProbeInfo> found;
    EXPECT_TRUE(waitFor([&] { return (found = probeOfProcess(wrapper.processId())).has_value(); }));
    ASSERT_TRUE(found);
    EXPECT_NE(found->pid, wrapper.processId());
    EXPECT_EQ(found->parentPid, wrapper.processId());
    EXPECT_EQ(probeOfProcess(found->pid)->pid, found->pid);
    // A process with no probe in it or below it has none.
    QProcess unrelated;
    unrelated.start("/bin/sleep", {"30"});
    ASSERT_TRUE(unrelated.waitForStarted());
    EXPECT_FALSE(probeOfProcess(unrelated.processId()));
    unrelated.kill();
    unrelated.waitForFinished();
    ::kill(static_cast<pid_t>(found->pid), SIGTERM);
    EXPECT_TRUE(wrapper.waitForFinished(10000));
}

TEST_F(LiveSessionTest, DetachLeavesTheProgramRunningAndBadSocketsAreReported) {
    const LiveProbeInfo probe = startEngine(100000, 5);
    ASSERT_GT(probe.pid, 0);
    {
        LiveSession session;
        QSignalSpy hello(&session, &LiveSession::helloReceived);
        session.attach(probe);
        ASSERT_TRUE(waitFor([&] { return hello.count() > 0; }));
        session.stop();
        ASSERT_TRUE(waitFor([&] { return session.hasEnded(); }));
        EXPECT_EQ(session.state(), SessionState::Detached);
        EXPECT_TRUE(session.stateDetail().contains("goes on running"))
            << session.stateDetail().toStdString();
        {
            // It does: its probe still answers a new connection.
            ControlClient again;
            QSignalSpy greeted(&again, &ControlClient::hello);
            again.connectToProbe(probe.socketPath);
            ASSERT_TRUE(waitFor([&] { return greeted.count() > 0; }));
            EXPECT_EQ(engine_.state(), QProcess::Running);
        }
        // When it ends later, the session let go of it says so.
        engine_.terminate();
        ASSERT_TRUE(engine_.waitForFinished(10000));
        ASSERT_TRUE(waitFor([&] { return session.stateDetail().contains("has ended since"); }))
            << session.stateDetail().toStdString();
        EXPECT_EQ(session.state(), SessionState::Detached);
    }

    LiveSession lost;
    LiveProbeInfo gone = probe;
    gone.socketPath = QString::fromStdString(sockets_ / "probe-1.sock");
    lost.attach(gone);
    ASSERT_TRUE(waitFor([&] { return lost.hasEnded(); }));
    EXPECT_EQ(lost.state(), SessionState::Detached);
    // The engine has ended: that is what is said (Qt's "QLocalSocket::connectToServer: Invalid
    // name" was, for a probe that went between the listing and the click).
    EXPECT_EQ(lost.stateDetail(),
              QStringLiteral("could not attach to the probe of pid %1: the program has ended")
                  .arg(probe.pid));

    // A program still running whose socket is not there (removed by hand) is told apart.
    LiveSession missing;
    LiveProbeInfo alive = gone;
    alive.pid = QCoreApplication::applicationPid();
    missing.attach(alive);
    ASSERT_TRUE(waitFor([&] { return missing.hasEnded(); }));
    EXPECT_EQ(missing.stateDetail(),
              QStringLiteral("could not attach to the probe of pid %1: its socket %2 is gone")
                  .arg(alive.pid)
                  .arg(alive.socketPath));
}

TEST(LaunchHelpers, CommandLinesDemoAndOutputFolders) {
    LaunchSpec python = launchSpecFromCommand({"/usr/bin/python3", "train.py", "--epochs", "2"});
    EXPECT_EQ(python.interpreter, "/usr/bin/python3");
    EXPECT_EQ(python.program, "train.py");
    EXPECT_EQ(python.arguments, QStringList({"--epochs", "2"}));
    LaunchSpec native = launchSpecFromCommand({"./engine", "--rounds", "3"});
    EXPECT_TRUE(native.interpreter.isEmpty());
    EXPECT_EQ(native.program, "./engine");
    LaunchSpec module = launchSpecFromCommand({"python3", "-m", "torch.utils.collect_env"});
    EXPECT_TRUE(module.interpreter.isEmpty());  // not a script: run as given
    EXPECT_EQ(module.arguments.size(), 2);
    EXPECT_EQ(defaultInterpreterFor("model.py"), "/usr/bin/python3");
    EXPECT_TRUE(defaultInterpreterFor("./engine").isEmpty());

    // Each launch gets a folder of its own, named after what it runs: the script behind the
    // interpreter too (they were named python3-...; found by a user walk), python -m's module.
    const QString first = freshOutputDirectory({"/x/train.py"});
    EXPECT_TRUE(QFileInfo(first).fileName().startsWith("train-"));
    EXPECT_TRUE(
        first.startsWith(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
                         "/probe-studio/runs/"))
        << first.toStdString();
    ASSERT_TRUE(QDir().mkpath(first));
    EXPECT_NE(freshOutputDirectory({"/x/train.py"}), first);
    for (const auto& [command, name] : std::vector<std::pair<QStringList, QString>>{
             {{"python3", "train.py"}, "train-"},
             {{"/usr/bin/python3", "-u", "-X", "dev", "/x/train.py", "--epochs", "2"}, "train-"},
             {{"python3.11", "-m", "torch.utils.collect_env"}, "torch.utils.collect_env-"},
             {{"python3", "-c", "print(1)"}, "python3-"},
             {{"./engine", "--rounds", "3"}, "engine-"},
             {{""}, "run-"}}) {
        const QString folder = QFileInfo(freshOutputDirectory(command, "/data/runs")).fileName();
        EXPECT_TRUE(folder.startsWith(name))
            << command.join(' ').toStdString() << ": " << folder.toStdString();
    }
    QDir(first).removeRecursively();
    // In a folder of the user's: there, by the same name.
    const QString mine = freshOutputDirectory({"/x/train.py"}, "/data/runs/");
    EXPECT_EQ(QFileInfo(mine).absolutePath(), "/data/runs");
    EXPECT_TRUE(QFileInfo(mine).fileName().startsWith("train-")) << mine.toStdString();

    // The demo as installed (the build tree stages the same layout), its config a copy.
    LaunchSpec demo;
    QString error;
    ASSERT_TRUE(prepareDemoLaunch(PROBE_DATADIR, &demo, &error)) << error.toStdString();
    EXPECT_EQ(demo.interpreter, "/usr/bin/python3");
    EXPECT_TRUE(demo.program.endsWith("demo/llama_demo.py"));
    EXPECT_TRUE(demo.arguments.contains("--nan-layer"));
    EXPECT_TRUE(demo.problem().isEmpty()) << demo.problem().toStdString();
    EXPECT_TRUE(demo.configPath.startsWith(demo.outputDirectory));
    EXPECT_EQ(test::readFile(demo.configPath.toStdString()),
              test::readFile(std::string(PROBE_DATADIR) + "/configs/demo.json"));
    EXPECT_TRUE(QFileInfo(demo.configPath).isWritable());
    QDir(demo.outputDirectory).removeRecursively();
    EXPECT_FALSE(prepareDemoLaunch("/nonexistent", &demo, &error));
    EXPECT_TRUE(error.contains("/nonexistent/demo/llama_demo.py")) << error.toStdString();
}

TEST(RecentSessions, MostRecentFirstWithoutRepeats) {
    test::TempDir dir("probe-recent");
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                       QString::fromStdString(dir.path()));
    RecentSessions recent(nullptr, 3);
    recent.clear();
    QSignalSpy changed(&recent, &RecentSessions::changed);
    RecentSession launch;
    launch.kind = RecentSession::Kind::Launch;
    launch.launch.interpreter = "/usr/bin/python3";
    launch.launch.program = "train.py";
    launch.launch.arguments = {"--epochs", "2"};
    launch.launch.environment = {"A=1"};
    launch.launch.outputDirectory = "/runs/a";
    launch.path = "/runs/a/atb_dump_data";
    recent.add(launch);
    RecentSession attach;
    attach.kind = RecentSession::Kind::Attach;
    attach.pid = 1234;
    attach.command = "python3 serve.py";
    attach.path = "/srv/atb_dump_data";
    recent.add(attach);
    RecentSession open;
    open.kind = RecentSession::Kind::Open;
    open.path = "/dumps/one";
    recent.add(open);
    EXPECT_EQ(changed.count(), 3);
    QList<RecentSession> list = recent.list();
    ASSERT_EQ(list.size(), 3);
    EXPECT_EQ(list[0].kind, RecentSession::Kind::Open);
    EXPECT_EQ(list[1].title(), "pid 1234: python3 serve.py");
    EXPECT_EQ(list[2].title(), "python3 train.py --epochs 2");
    EXPECT_EQ(list[2].launch.environment, QStringList{"A=1"});
    EXPECT_EQ(list[2].launch.outputDirectory, "/runs/a");
    EXPECT_TRUE(list[2].when.isValid());
    // The same launch again (into another folder) moves up instead of repeating.
    launch.launch.outputDirectory = "/runs/b";
    recent.add(launch);
    list = recent.list();
    ASSERT_EQ(list.size(), 3);
    EXPECT_EQ(list[0].launch.outputDirectory, "/runs/b");
    // Beyond the capacity the oldest goes.
    RecentSession other = open;
    other.path = "/dumps/two";
    recent.add(other);
    list = recent.list();
    ASSERT_EQ(list.size(), 3);
    EXPECT_EQ(list[0].path, "/dumps/two");
    EXPECT_EQ(list[1].kind, RecentSession::Kind::Launch);
    EXPECT_EQ(list[2].path, "/dumps/one");  // the attached probe, oldest, went
    recent.clear();
    EXPECT_TRUE(recent.list().isEmpty());
}

}  // namespace
}  // namespace probe::session
