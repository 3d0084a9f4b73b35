// A real process under the probe: normal exit without probe_stop, SIGTERM and SIGINT in the
// middle of a run. Whatever was queued is written, every file is whole, the status says so.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <signal.h>
#include <sys/wait.h>

#include "probe/format/dump_status.h"
#include "probe/format/tensor_bin.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

class Process : public RuntimeTest {
protected:
    pid_t launch(std::vector<std::string> args) {
        pid_t pid = ::fork();
        if (pid == 0) {
            std::vector<char*> argv;
            argv.push_back(const_cast<char*>(PROBE_NATIVE_ENGINE));
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::setenv("PROBE_QUIET", "1", 1);
            ::setenv("PROBE_MEMORY_CAP_MB", "8",
                     1);  // bounds how much is left to drain at the signal
            ::execv(PROBE_NATIVE_ENGINE, argv.data());
            ::_exit(127);
        }
        return pid;
    }
    void waitForFile(const std::string& path) {
        ASSERT_TRUE(waitUntil([&] { return exists(path); })) << path;
    }
    // Whether some statistic.csv below data/ holds a row.
    bool someRowsOnDisk() const {
        const std::string data = root() + "/data";
        for (const auto& f : listFiles(data))
            if (f.size() > 13 && f.substr(f.size() - 13) == "statistic.csv" &&
                splitLines(readFile(data + "/" + f)).size() > 1)
                return true;
        return false;
    }
    // Every .bin parses with its full data, every csv row parses, no temporaries.
    void expectWholeFiles(const std::string& dumpRoot, bool expectTensors = true) {
        size_t bins = 0;
        for (const auto& f : listFiles(dumpRoot)) {
            EXPECT_EQ(f.find(".tmp"), std::string::npos) << f;
            if (f.size() > 4 && f.substr(f.size() - 4) == ".bin") {
                std::string error;
                EXPECT_TRUE(format::readBinFile(dumpRoot + "/" + f, &error)) << f << ": " << error;
                ++bins;
            }
            if (f.size() > 13 && f.substr(f.size() - 13) == "statistic.csv") {
                const auto lines = splitLines(readFile(dumpRoot + "/" + f));
                ASSERT_FALSE(lines.empty());
                EXPECT_EQ(lines[0], format::kStatisticCsvHeader);
                for (size_t i = 1; i < lines.size(); ++i) {
                    std::string error;
                    EXPECT_TRUE(format::parseStatRow(lines[i], &error)) << f << ": " << error;
                }
            }
        }
        if (expectTensors) {
            EXPECT_GT(bins, 0u);
        }
    }
};

TEST_F(Process, NormalExitWithoutStopDrainsEverything) {
    writeFile(
        configPath(),
        R"({"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true, "filter_level": 0})");
    ::setenv("PROBE_OUTPUT_DIR", dir_.path().c_str(), 1);
    ::setenv("PROBE_CONFIG", configPath().c_str(), 1);
    pid_t pid = launch({"--rounds", "3", "--no-stop", "--device", "1"});
    ::unsetenv("PROBE_OUTPUT_DIR");
    ::unsetenv("PROBE_CONFIG");
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    std::string error;
    auto dump = format::readStatusFile(root(), &error);
    ASSERT_TRUE(dump) << error;
    EXPECT_EQ(dump->state, format::DumpState::Complete);
    EXPECT_FALSE(dump->processes.at(0).endedBy);
    // 3 rounds of the whole model: 24 ops per round, all their tensors.
    const std::string data = root() + "/data/1_" + std::to_string(pid);
    EXPECT_EQ(listSubdirectories(data), (std::vector<std::string>{"0", "1", "2"}));
    expectWholeFiles(root());
    EXPECT_EQ(dump->rows, readRows().size());
}

TEST_F(Process, SigtermMidRunLeavesACompleteDumpAndTerminates) {
    writeFile(
        configPath(),
        R"({"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true, "filter_level": 0})");
    const std::string ready = dir_ / "ready";
    pid_t pid = launch({"--rounds", "100000", "--sleep-ms", "2", "--output", dir_.path(),
                        "--config", configPath(), "--ready-file", ready});
    waitForFile(ready);
    // Mid-run: once rows are on disk, with more being written.
    ASSERT_TRUE(waitUntil([&] { return someRowsOnDisk(); }));
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status;
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
    std::string error;
    auto dump = format::readStatusFile(root(), &error);
    ASSERT_TRUE(dump) << error;
    EXPECT_EQ(dump->state, format::DumpState::Complete);  // every file whole, writing over...
    ASSERT_EQ(dump->processes.size(), 1u);
    // ...but the program did not run to its end.
    ASSERT_TRUE(dump->processes[0].endedBy);
    EXPECT_EQ(dump->processes[0].endedBy->how, format::ProgramEnd::How::Signaled);
    EXPECT_EQ(dump->processes[0].endedBy->code, SIGTERM);
    expectWholeFiles(root());
    EXPECT_EQ(dump->rows, readRows().size());
}

TEST_F(Process, SigintIsHandedToThePreviousDisposition) {
    writeFile(configPath(), R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    const std::string ready = dir_ / "ready";
    pid_t pid = launch({"--rounds", "100000", "--sleep-ms", "2", "--output", dir_.path(),
                        "--config", configPath(), "--ready-file", ready});
    waitForFile(ready);
    ASSERT_EQ(::kill(pid, SIGINT), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGINT);
    std::string error;
    auto dump = format::readStatusFile(root(), &error);
    ASSERT_TRUE(dump) << error;
    EXPECT_EQ(dump->state, format::DumpState::Complete);
    EXPECT_GT(dump->rows, 0u);
    EXPECT_EQ(dump->rows, readRows().size());
}

TEST_F(Process, TwoProcessesStartedIntoOneFolderEachHaveTheirOwnEntry) {
    // As the ranks of a distributed job do (one probe run, or the load script): both dump, and
    // neither is refused or mixed with the other.
    writeFile(configPath(), R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    const pid_t first = launch(
        {"--rounds", "20", "--threads", "2", "--output", dir_.path(), "--config", configPath()});
    const pid_t second = launch(
        {"--rounds", "20", "--threads", "2", "--output", dir_.path(), "--config", configPath()});
    for (pid_t pid : {first, second}) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0);
    }
    std::string error;
    auto dump = format::readStatusFile(root(), &error);
    ASSERT_TRUE(dump) << error;
    EXPECT_EQ(dump->state, format::DumpState::Complete);
    ASSERT_EQ(dump->processes.size(), 2u);
    std::set<int64_t> pids;
    for (const auto& p : dump->processes) pids.insert(p.pid);
    EXPECT_EQ(pids, (std::set<int64_t>{first, second}));
    EXPECT_EQ(listSubdirectories(root() + "/data"),
              (std::vector<std::string>{std::to_string(std::min(first, second)),
                                        std::to_string(std::max(first, second))}));
    EXPECT_EQ(dump->rows, readRows().size());
    expectWholeFiles(root(), /*expectTensors=*/false);
}

TEST_F(Process, ForkedChildDoesNotInheritTheDump) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    pid_t pid = ::fork();
    if (pid == 0) {
        // In the child: the probe is off; ops are no-ops and exit (atexit handlers included)
        // does not wait for threads that do not exist here.
        const int wanted = probe_op_begin("ChildLayer", nullptr, nullptr);
        probe_op_end();
        std::exit(wanted == 0 && probe_is_started() == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(probe_op_begin("ParentLayer", nullptr, nullptr), 1);
    probe_op_end();
}

}  // namespace
}  // namespace probe::test
