// Launching a program the way the application does: through probe run, attached over the
// control socket, its output, state and exit followed.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QSignalSpy>
#include <QTest>
#include <gtest/gtest.h>

#include "probe/format/dump_status.h"
#include "session/launch_session.h"
#include "test_support.h"

namespace probe::session {
namespace {

class LaunchSessionTest : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("PROBE_CONTROL_DIR", sockets_.path().c_str(), 1);
        ::chmod(sockets_.path().c_str(), 0700);
    }
    void TearDown() override { ::unsetenv("PROBE_CONTROL_DIR"); }

    LaunchSpec engine(const QStringList& args) {
        LaunchSpec spec;
        spec.program = PROBE_NATIVE_ENGINE;
        spec.arguments = args;
        spec.outputDirectory = QString::fromStdString(dir_ / "out");
        spec.probeExecutable = PROBE_CLI;
        return spec;
    }
    // Waits until the session reaches `state` (or an end state).
    bool waitFor(LaunchSession& session, SessionState wanted, int ms = 20000) {
        QSignalSpy spy(&session, &LaunchSession::stateChanged);
        QElapsedTimer timer;
        timer.start();
        while (session.state() != wanted && timer.elapsed() < ms) {
            if (sessionHasEnded(session.state())) break;
            spy.wait(200);
        }
        return session.state() == wanted;
    }
    probe::test::TempDir dir_{"probe-launch"}, sockets_{"probe-sockets"};
};

TEST_F(LaunchSessionTest, LaunchAttachDumpFinish) {
    probe::test::writeFile(dir_ / "config.json",
                           R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    LaunchSession session;
    QSignalSpy attached(&session, &LaunchSession::attached);
    QString output;
    QObject::connect(&session, &LaunchSession::output,
                     [&](const QString& text, bool) { output += text; });
    LaunchSpec spec = engine({"--rounds", "30", "--sleep-ms", "20"});
    spec.configPath = QString::fromStdString(dir_ / "config.json");
    ASSERT_TRUE(session.start(spec));
    ASSERT_TRUE(attached.count() > 0 || attached.wait(15000)) << output.toStdString();
    EXPECT_EQ(session.state(), SessionState::Dumping);
    EXPECT_EQ(session.configPath(), spec.configPath);
    ASSERT_TRUE(session.control()->helloMessage());
    EXPECT_NE(session.control()->helloMessage()->command.find("probe_native_engine"),
              std::string::npos);
    ASSERT_TRUE(waitFor(session, SessionState::Finished))
        << sessionStateName(session.state()).toStdString();
    EXPECT_EQ(session.exitCode(), 0);
    EXPECT_TRUE(output.contains("engine done: 30 rounds"));  // the program's own output
    EXPECT_TRUE(output.contains("dump: "));                  // probe run's summary
    std::string error;
    auto status = format::readStatusFile(session.dumpRoot().toStdString(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->state, format::DumpState::Complete);
    EXPECT_EQ(status->rows,
              30u * 10u);  // 30 rounds; WordEmbedding 3 tensors, 2 decoder layers 2 each, LmHead 3
}

// A second launch into a folder that holds a dump, as the launch form sends it (appendToDump):
// it runs (probe run refused the folder without --append, and the launch failed) and its
// process is added beside the first. A folder whose atb_dump_data is a link is refused before.
TEST_F(LaunchSessionTest, ALaunchIntoAFolderHoldingADumpAddsItsProcess) {
    for (int run = 0; run < 2; ++run) {
        LaunchSession session;
        LaunchSpec spec = engine({"--rounds", "3", "--sleep-ms", "0"});
        spec.appendToDump = run == 1;
        EXPECT_EQ(spec.probeRunArguments().contains("--append"), run == 1);
        ASSERT_TRUE(session.start(spec));
        ASSERT_TRUE(waitFor(session, SessionState::Finished))
            << run << ": " << sessionStateName(session.state()).toStdString();
    }
    const QDir data(QString::fromStdString(dir_ / "out/atb_dump_data/data"));
    EXPECT_EQ(data.entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), 2)
        << data.entryList(QDir::Dirs | QDir::NoDotAndDotDot).join(' ').toStdString();

    ASSERT_TRUE(QDir().mkpath(QString::fromStdString(dir_ / "linked")));
    ASSERT_EQ(
        ::symlink((dir_ / "out/atb_dump_data").c_str(), (dir_ / "linked/atb_dump_data").c_str()),
        0);
    LaunchSpec linked = engine({});
    linked.outputDirectory = QString::fromStdString(dir_ / "linked");
    EXPECT_TRUE(linked.problem().contains("is a symbolic link")) << linked.problem().toStdString();
}

TEST_F(LaunchSessionTest, StopEndsTheModel) {
    LaunchSession session;
    QSignalSpy attached(&session, &LaunchSession::attached);
    ASSERT_TRUE(session.start(engine({"--rounds", "100000", "--sleep-ms", "5"})));
    ASSERT_TRUE(attached.count() > 0 || attached.wait(15000));
    session.stop();
    ASSERT_TRUE(waitFor(session, SessionState::StoppedByUser));  // what was asked for, not a crash
    EXPECT_EQ(session.exitCode(), 128 + 15);
    EXPECT_EQ(sessionStateName(session.state()), "stopped by you");
}

// probe run itself killed (here: the model ignores SIGTERM, so Stop kills it after the grace
// time): the session still has an exit code, the shell's 128 + the signal.
TEST_F(LaunchSessionTest, ASignalEndingProbeRunGivesAnExitCode) {
    LaunchSession session;
    LaunchSpec spec = engine({});
    spec.program = "/bin/sh";
    // Runs as long as probe run does: a fixed time could end first on a slow machine.
    spec.arguments = {"-c", "trap '' TERM; echo ready; while kill -0 $PPID; do sleep 0.2; done"};
    // The program's own output only: probe run's stderr repeats the command line, "ready"
    // included, before the shell has even set its trap.
    QString output;
    QObject::connect(&session, &LaunchSession::output, [&](const QString& text, bool isError) {
        if (!isError) output += text;
    });
    QString detail;
    QObject::connect(&session, &LaunchSession::stateChanged,
                     [&](SessionState, const QString& d) { detail = d; });
    ASSERT_TRUE(session.start(spec));
    ASSERT_TRUE(QTest::qWaitFor([&] { return output.contains("ready"); }, 20000))
        << output.toStdString();
    session.stop(300);
    ASSERT_TRUE(waitFor(session, SessionState::StoppedByUser));
    EXPECT_EQ(session.exitCode(), 128 + 9);
    EXPECT_EQ(detail,
              "stopped at your request: probe run itself was killed by signal 9 (exit code 137)");
}

TEST_F(LaunchSessionTest, RefusalsBeforeStarting) {
    LaunchSession session;
    LaunchSpec spec = engine({});
    spec.configPath = QString::fromStdString(dir_ / "absent.json");
    EXPECT_FALSE(session.start(spec));
    EXPECT_EQ(session.state(), SessionState::FailedToStart);
    // An invalid config is refused before probe run starts, in the format library's words.
    probe::test::writeFile(dir_ / "bad.json", R"({"task": "some"})");
    spec.configPath = QString::fromStdString(dir_ / "bad.json");
    QSignalSpy changed(&session, &LaunchSession::stateChanged);
    EXPECT_FALSE(session.start(spec));
    EXPECT_EQ(session.state(), SessionState::FailedToStart);
    ASSERT_FALSE(changed.isEmpty());
    EXPECT_TRUE(changed.last().at(1).toString().contains("\"task\""))
        << changed.last().at(1).toString().toStdString();
    // A program named by a path that is not there, or is a folder: refused, said.
    spec = engine({});
    spec.program = QString::fromStdString(dir_ / "no-such-engine");
    EXPECT_FALSE(session.start(spec));
    EXPECT_TRUE(spec.problem().contains("no-such-engine does not exist"))
        << spec.problem().toStdString();
    spec.program = QString::fromStdString(dir_.path());
    EXPECT_FALSE(session.start(spec));
    EXPECT_TRUE(spec.problem().contains("is a folder, not a program"))
        << spec.problem().toStdString();
    // A bare name found nowhere on the PATH, or a whole command line typed as the program
    // (it ran as one program's name, and probe run said 127).
    spec.program = QStringLiteral("probe-studio-no-such-engine");
    EXPECT_FALSE(session.start(spec));
    EXPECT_TRUE(
        spec.problem().contains("There is no program probe-studio-no-such-engine on the "
                                "PATH."))
        << spec.problem().toStdString();
    spec.program = QStringLiteral("python3 demo.py --tokens 8");
    EXPECT_FALSE(session.start(spec));
    EXPECT_TRUE(spec.problem().contains("Its arguments go in the Arguments field."))
        << spec.problem().toStdString();
    // The PATH the launch sets is where a bare name is looked for.
    spec.program = QStringLiteral("true");
    EXPECT_TRUE(spec.problem().isEmpty()) << spec.problem().toStdString();
    spec.environment = QStringList{QStringLiteral("PATH=") + QString::fromStdString(dir_.path())};
    EXPECT_TRUE(spec.problem().contains("There is no program true on the PATH."))
        << spec.problem().toStdString();
    spec.environment.clear();
    spec = engine({});
    spec.program.clear();
    EXPECT_FALSE(session.start(spec));
    EXPECT_TRUE(spec.problem().contains("program"));
}

}  // namespace
}  // namespace probe::session
