// Programs that end badly, in real processes: a fatal signal (the probe drains what is queued,
// then the program dies of it as it would have), kill -9 (the parent says so), arguments that
// are not UTF-8, SIGINT ignored by the program, a disk that fills up. What was lost is measured
// and printed; rows of the steps that completed are all there.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/tensor_bin.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

const char* const kStatistics =
    R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})";

// The exit status of `pid`, or nullopt (the process killed) when it does not end in time.
std::optional<int> waitForExit(pid_t pid, int timeoutMs = 60000) {
    int status = 0;
    if (waitUntil([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeoutMs))
        return status;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return std::nullopt;
}

int64_t monotonicNs() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

class Crash : public RuntimeTest {
protected:
    struct Launch {
        std::vector<std::string> args;
        bool ignoreSigint = false;
        bool underProbeRun =
            false;  // the engine started by `probe run`, which records how it ended
    };

    pid_t launch(Launch spec) {
        writeFile(configPath(), kStatistics);
        pid_t pid = ::fork();
        if (pid == 0) {
            std::vector<std::string> argv;
            if (spec.underProbeRun)
                argv = {PROBE_CLI,  "run",        "--quiet", "--output",         dir_.path(),
                        "--config", configPath(), "--",      PROBE_NATIVE_ENGINE};
            else
                argv = {PROBE_NATIVE_ENGINE, "--output", dir_.path(), "--config", configPath()};
            argv.insert(argv.end(), spec.args.begin(), spec.args.end());
            std::vector<char*> raw;
            for (auto& a : argv) raw.push_back(a.data());
            raw.push_back(nullptr);
            ::setenv("PROBE_QUIET", "1", 1);
            if (spec.ignoreSigint) ::signal(SIGINT, SIG_IGN);  // as nohup or `trap '' INT` leave it
            ::execv(raw[0], raw.data());
            ::_exit(127);
        }
        return pid;
    }

    // Rows of statistic.csv per round, each row parsed.
    std::map<int64_t, size_t> rowsPerRound() const {
        std::map<int64_t, size_t> rounds;
        for (const auto& r : readRows()) ++rounds[r.row.round];
        return rounds;
    }

    format::DumpStatus status() const {
        std::string error;
        auto status = format::readStatusFile(root(), &error);
        EXPECT_TRUE(status) << error;
        return status ? *status : format::DumpStatus{};
    }

    // A program that went on after a signal: the probe went on dumping to its end, and says
    // nothing of it being stopped.
    void expectDumpedToTheEnd(size_t rounds, size_t perRound) {
        const auto dump = status();
        EXPECT_EQ(dump.state, format::DumpState::Complete);
        ASSERT_EQ(dump.processes.size(), 1u);
        EXPECT_FALSE(dump.processes[0].endedBy) << "the probe says the program was stopped";
        EXPECT_EQ(rowsPerRound().size(), rounds);
        EXPECT_EQ(readRows().size(), rounds * perRound);
    }

    // The rows one round of the engine's model writes (task statistics, every layer-level op).
    size_t rowsOfOneRound() {
        TempDir reference("probe-reference");
        writeFile(reference / "config.json", kStatistics);
        pid_t pid = ::fork();
        if (pid == 0) {
            ::setenv("PROBE_QUIET", "1", 1);
            ::execl(PROBE_NATIVE_ENGINE, PROBE_NATIVE_ENGINE, "--rounds", "1", "--output",
                    reference.path().c_str(), "--config", (reference / "config.json").c_str(),
                    nullptr);
            ::_exit(127);
        }
        const auto status = waitForExit(pid);
        EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
        size_t rows = 0;
        for (const auto& f : listFiles(reference / "atb_dump_data/data"))
            if (f.find("statistic.csv") != std::string::npos)
                rows += splitLines(readFile(reference / "atb_dump_data/data/" + f)).size() - 1;
        EXPECT_GT(rows, 0u);
        return rows;
    }
};

struct FatalCase {
    const char* how;
    int signal;
};

class FatalSignal : public Crash, public ::testing::WithParamInterface<FatalCase> {};

TEST_P(FatalSignal, DrainsWhatIsQueuedThenDiesOfIt) {
    const size_t perRound = rowsOfOneRound();
    // Five quick steps, no pause, then the fault: the writer has had no time to write them.
    const pid_t pid =
        launch({{"--rounds", "100", "--crash-after", "5", "--crash-with", GetParam().how}});
    const auto exit = waitForExit(pid);
    ASSERT_TRUE(exit) << "the program did not end";
    ASSERT_TRUE(WIFSIGNALED(*exit)) << "exit status " << *exit;
    EXPECT_EQ(WTERMSIG(*exit), GetParam().signal);  // the signal it would have died of

    const auto dump = status();
    ASSERT_EQ(dump.processes.size(), 1u);
    const auto& process = dump.processes[0];
    EXPECT_EQ(dump.state, format::DumpState::Incomplete);
    ASSERT_TRUE(process.endedBy);
    EXPECT_EQ(process.endedBy->how, format::ProgramEnd::How::Signaled);
    EXPECT_EQ(process.endedBy->code, GetParam().signal);
    EXPECT_FALSE(process.cutOff);  // the probe drained: only the step that crashed is missing
    const auto rounds = rowsPerRound();
    EXPECT_EQ(rounds,
              (std::map<int64_t, size_t>{
                  {0, perRound}, {1, perRound}, {2, perRound}, {3, perRound}, {4, perRound}}));
    EXPECT_EQ(process.rows, 5 * perRound);
    std::printf("[ figures  ] %s after 5 steps: %zu of %zu rows of the completed steps on disk\n",
                GetParam().how, readRows().size(), 5 * perRound);
}

INSTANTIATE_TEST_SUITE_P(Crash, FatalSignal,
                         ::testing::Values(FatalCase{"segv", SIGSEGV}, FatalCase{"abort", SIGABRT},
                                           FatalCase{"fpe", SIGFPE}, FatalCase{"ill", SIGILL},
                                           FatalCase{"bus", SIGBUS}),
                         [](const auto& test) { return std::string(test.param.how); });

TEST_F(Crash, KilledOutrightTheParentRecordsItAndOnlyTheLastMomentsAreLost) {
    const size_t perRound = rowsOfOneRound();
    const std::string journal = dir_ / "journal", ready = dir_ / "ready";
    const pid_t probeRun = launch(
        {{"--rounds", "100000000", "--sleep-ms", "1", "--journal", journal, "--ready-file", ready},
         false,
         true});
    // The engine's pid is its process entry's; wait until it has run a while, and until the
    // rows of a step it has done are on disk while it runs on (they do not wait for its end).
    constexpr int64_t kStepOnDisk = 100;
    int64_t engine = 0;
    ASSERT_TRUE(waitUntil([&] {
        std::string error;
        auto s = format::readStatusFile(root(), &error);
        if (s && !s->processes.empty()) engine = s->processes[0].pid;
        if (engine <= 0 || !exists(journal) || splitLines(readFile(journal)).size() < 200)
            return false;
        const std::string csv = root() + "/data/" + std::to_string(engine) + "/" +
                                std::to_string(kStepOnDisk) + "/statistic.csv";
        // Whole lines only: the header, then the step's rows.
        const std::string text = exists(csv) ? readFile(csv) : std::string();
        return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) >= 1 + perRound;
    })) << "the rows of step "
        << kStepOnDisk << " are not on disk while the program runs";
    const int64_t killedAt = monotonicNs();
    ASSERT_EQ(::kill(static_cast<pid_t>(engine), SIGKILL), 0);
    const auto exit = waitForExit(probeRun);
    ASSERT_TRUE(exit && WIFEXITED(*exit));
    EXPECT_EQ(WEXITSTATUS(*exit), 128 + SIGKILL);  // probe run passes it on

    // probe run saw it and says so: incomplete, killed by SIGKILL, cut off.
    const auto dump = status();
    ASSERT_EQ(dump.processes.size(), 1u);
    EXPECT_EQ(dump.state, format::DumpState::Incomplete);
    ASSERT_TRUE(dump.processes[0].endedBy);
    EXPECT_EQ(*dump.processes[0].endedBy,
              (format::ProgramEnd{format::ProgramEnd::How::Signaled, SIGKILL, "probe run"}));
    EXPECT_TRUE(dump.processes[0].cutOff);

    // Every step the journal says was done has its rows, except the last moments before the
    // kill: what was lost is measured.
    std::map<int64_t, int64_t> doneAt;  // round -> CLOCK_MONOTONIC ns
    for (const auto& line : splitLines(readFile(journal))) {
        std::istringstream in(line);
        int64_t round = 0, ns = 0;
        if (in >> round >> ns) doneAt[round] = ns;
    }
    const auto rounds = rowsPerRound();
    ASSERT_FALSE(rounds.empty());
    int64_t firstMissing = -1;
    for (const auto& [round, ns] : doneAt) {
        auto it = rounds.find(round);
        if (it == rounds.end() || it->second != perRound) {
            firstMissing = round;
            break;
        }
    }
    for (const auto& [round, rows] : rounds) EXPECT_TRUE(doneAt.count(round)) << round;
    const double lostMs =
        firstMissing < 0 ? 0.0 : static_cast<double>(killedAt - doneAt[firstMissing]) / 1e6;
    std::printf(
        "[ figures  ] kill -9: %zu steps done, %zu with all their rows on disk; rows lost: the "
        "steps of the "
        "last %.1f ms before the kill\n",
        doneAt.size(), rounds.size(), lostMs);
    // Nothing that was on disk before the kill is lost (rows that wait for the end of the
    // program were ruled out above, without a bound on time).
    EXPECT_TRUE(firstMissing < 0 || firstMissing > kStepOnDisk) << firstMissing;
}

TEST_F(Crash, RowsOfALongLayerOpReachTheFileWhileItRuns) {
    start(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true})");
    const int64_t dims[] = {4};
    const float values[] = {1, 2, 3, 4};
    ASSERT_EQ(probe_op_begin("WholeModel", nullptr, nullptr), 1);
    const std::string csv = root() + "/data/" + pidDir() + "/0/statistic.csv";
    // The layer op never ends during the test: its children's rows must still reach the file,
    // long before they fill a batch (256 KiB, some 2500 rows) and with no op boundary to
    // carry them. One child's row is enough, the op thread doing nothing more.
    EXPECT_EQ(probe_op_begin("Step", nullptr, nullptr), 1);
    probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1, values,
                    sizeof values);
    probe_op_end();
    EXPECT_TRUE(waitUntil([&] { return exists(csv) && splitLines(readFile(csv)).size() > 1; }))
        << "the child's row is not on disk while its layer op runs";
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(readRows().size(), 1u);
}

TEST_F(Crash, ArgumentsThatAreNotUtf8StartTheProbeAndTheProgramEnds) {
    const pid_t pid = launch({{"--rounds", "2", "--tag", "caf\xe9-\xff"}});
    const auto exit = waitForExit(pid);
    ASSERT_TRUE(exit) << "the program never ended";
    ASSERT_TRUE(WIFEXITED(*exit));
    EXPECT_EQ(WEXITSTATUS(*exit), 0);
    const auto dump = status();
    EXPECT_EQ(dump.state, format::DumpState::Complete);
    ASSERT_EQ(dump.processes.size(), 1u);
    EXPECT_NE(dump.processes[0].command.find("--tag caf\\xE9-\\xFF"), std::string::npos)
        << dump.processes[0].command;
    EXPECT_FALSE(readRows().empty());
}

TEST_F(Crash, AProgramThatIgnoresSigintIsNeitherStoppedNorSaidToBe) {
    const size_t perRound = rowsOfOneRound();
    const std::string ready = dir_ / "ready";
    const pid_t pid = launch({{"--rounds", "200", "--sleep-ms", "2", "--ready-file", ready}, true});
    ASSERT_TRUE(waitUntil([&] { return exists(ready); }));
    ASSERT_EQ(::kill(pid, SIGINT), 0);
    const auto exit = waitForExit(pid);
    ASSERT_TRUE(exit);
    ASSERT_TRUE(WIFEXITED(*exit)) << "the program was stopped by the signal it ignores";
    EXPECT_EQ(WEXITSTATUS(*exit), 0);
    expectDumpedToTheEnd(200, perRound);
}

// A program with a SIGINT handler of its own (Python's, which raises KeyboardInterrupt): the
// handler runs when the signal comes, as without the probe, and the probe goes on dumping while
// the program lives. It ran only after the probe had drained and stopped: the KeyboardInterrupt
// came tens of steps late (the results changed), and the rounds after it were not dumped while
// the status said "complete".
TEST_F(Crash, AProgramsOwnSigintHandlerRunsAtOnceAndTheProbeGoesOn) {
    const size_t perRound = rowsOfOneRound();
    const std::string ready = dir_ / "ready", handled = dir_ / "handled";
    const pid_t pid = launch(
        {{"--rounds", "200", "--sleep-ms", "2", "--ready-file", ready, "--own-sigint", handled}});
    ASSERT_TRUE(waitUntil([&] { return exists(ready); }));
    ASSERT_EQ(::kill(pid, SIGINT), 0);
    const auto exit = waitForExit(pid);
    ASSERT_TRUE(exit);
    ASSERT_TRUE(WIFEXITED(*exit));
    EXPECT_EQ(WEXITSTATUS(*exit), 0);
    EXPECT_EQ(readFile(handled), "SIGINT\n");
    expectDumpedToTheEnd(200, perRound);
}

// A one-shot handler of the program's (SA_RESETHAND: "press Ctrl-C again to force quit"): the
// first SIGINT goes to it, the second to the default action behind it, which ends the program
// (the probe drained first). Chained, the handler ran at every SIGINT and the program never ended.
TEST_F(Crash, AProgramsOneShotSigintHandlerRunsOnceThenTheDefaultEndsIt) {
    const std::string ready = dir_ / "ready", handled = dir_ / "handled";
    const pid_t pid = launch({{"--rounds", "100000", "--sleep-ms", "2", "--ready-file", ready,
                               "--own-sigint-once", handled}});
    ASSERT_TRUE(waitUntil([&] { return exists(ready); }));
    ASSERT_EQ(::kill(pid, SIGINT), 0);
    ASSERT_TRUE(waitUntil([&] { return exists(handled) && readFile(handled) == "SIGINT\n"; }));
    ASSERT_EQ(::kill(pid, SIGINT), 0);
    const auto exit = waitForExit(pid);
    ASSERT_TRUE(exit) << "the second SIGINT did not end the program";
    ASSERT_TRUE(WIFSIGNALED(*exit));
    EXPECT_EQ(WTERMSIG(*exit), SIGINT);
    EXPECT_EQ(readFile(handled), "SIGINT\n");
    const auto dump = status();
    EXPECT_EQ(dump.state, format::DumpState::Complete);
    ASSERT_EQ(dump.processes.size(), 1u);
    ASSERT_TRUE(dump.processes[0].endedBy);
    EXPECT_EQ(dump.processes[0].endedBy->code, SIGINT);
}

TEST_F(Crash, AfterStopTheSignalsAreTheProgramsAgain) {
    struct sigaction before {};
    ASSERT_EQ(::sigaction(SIGINT, nullptr, &before), 0);
    start(kStatistics);
    struct sigaction during {};
    ::sigaction(SIGINT, nullptr, &during);
    EXPECT_NE(during.sa_handler, before.sa_handler);  // the probe's, to drain at Ctrl-C
    ASSERT_EQ(probe_stop(), PROBE_OK);
    struct sigaction after {};
    ::sigaction(SIGINT, nullptr, &after);
    // A Ctrl-C after probe_stop() must not go to a probe that no longer listens.
    EXPECT_EQ(after.sa_handler, before.sa_handler);
}

// A disk that fills up while the program runs: a small tmpfs in a mount namespace of its own.
TEST_F(Crash, ADiskThatFillsUpEndsTheDumpIncompleteWithItsReason) {
    int toParent[2];
    ASSERT_EQ(::pipe(toParent), 0);
    const std::string mountPoint = dir_ / "small-disk";
    ASSERT_EQ(::mkdir(mountPoint.c_str(), 0755), 0);
    writeFile(configPath(),
              R"({"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true,
                               "filter_level": 0})");
    pid_t child = ::fork();
    if (child == 0) {
        ::close(toParent[0]);
        auto say = [&](const std::string& text) {
            if (::write(toParent[1], text.data(), text.size()) < 0) ::_exit(3);
        };
        const bool inNamespace =
            ::unshare(CLONE_NEWNS) == 0 || ::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0;
        if (!inNamespace || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", mountPoint.c_str(), "tmpfs", 0, "size=512k") != 0) {
            say(std::string("SKIP cannot mount a small tmpfs here: ") + std::strerror(errno));
            ::_exit(0);
        }
        pid_t engine = ::fork();
        if (engine == 0) {
            ::setenv("PROBE_QUIET", "1", 1);
            ::setenv("PROBE_MIN_FREE_MB", "0", 1);  // no guard: the disk really fills up
            ::execl(PROBE_NATIVE_ENGINE, PROBE_NATIVE_ENGINE, "--rounds", "400", "--output",
                    mountPoint.c_str(), "--config", configPath().c_str(), nullptr);
            ::_exit(127);
        }
        int status = 0;
        ::waitpid(engine, &status, 0);
        // The mount goes with this process: hand the status file over.
        say("EXIT " + std::to_string(status) + "\n" +
            readFile(mountPoint + "/atb_dump_data/probe_status.json"));
        ::_exit(0);
    }
    ::close(toParent[1]);
    std::string reply;
    char buffer[4096];
    for (ssize_t n; (n = ::read(toParent[0], buffer, sizeof buffer)) > 0;)
        reply.append(buffer, static_cast<size_t>(n));
    ::close(toParent[0]);
    ASSERT_TRUE(waitForExit(child));
    if (reply.rfind("SKIP", 0) == 0) GTEST_SKIP() << reply;
    ASSERT_EQ(reply.rfind("EXIT 0\n", 0), 0u) << reply;  // the model went on to its end
    ASSERT_EQ(format::makeDirectories(root()), 0);
    writeFile(root() + "/probe_status.json", reply.substr(7));
    const auto dump = status();
    EXPECT_EQ(dump.state, format::DumpState::Incomplete) << reply;
    ASSERT_EQ(dump.processes.size(), 1u);
    const auto& process = dump.processes[0];
    // Drained to its end, but its dump stopped early: the process's own state says so too.
    EXPECT_EQ(process.state, format::DumpState::Incomplete);
    EXPECT_NE(process.dumpStopped.find("no space left"), std::string::npos) << process.dumpStopped;
    bool said = false;
    for (const auto& m : process.messages)
        said = said || (m.level == format::MessageLevel::Error &&
                        m.text.find("no space left") != std::string::npos);
    EXPECT_TRUE(said) << reply;
    EXPECT_GT(process.droppedRows, 0u);
}

}  // namespace
}  // namespace probe::test
