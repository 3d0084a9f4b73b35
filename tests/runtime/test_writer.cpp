// The writer through the C API: back-pressure under a small memory cap loses nothing; the disk
// guard stops dumping with a message and the model goes on.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <thread>

#include "probe/format/dump_status.h"
#include "probe/format/tensor_bin.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

class Writer : public RuntimeTest {
protected:
    void TearDown() override {
        RuntimeTest::TearDown();
        ::unsetenv("PROBE_MEMORY_CAP_MB");
        ::unsetenv("PROBE_MIN_FREE_MB");
    }

    // Runs the native model under `config` with a disk guard no disk meets: the first write
    // trips it, the probe sleeps and the model runs on. The status the probe wrote, which says
    // the dump (and its process) incomplete and why.
    format::DumpStatus runTrippingTheDiskGuard(const std::string& config) {
        ::setenv("PROBE_MIN_FREE_MB", "1000000000", 1);  // more than any disk has
        start(config);
        NativeModel model({});
        model.run();
        EXPECT_TRUE(waitUntil([] { return probe_is_awake() == 0; }));
        model.run();
        EXPECT_EQ(model.begins().back().wanted, 0);
        EXPECT_EQ(probe_stop(), PROBE_OK);
        std::string error;
        auto status = format::readStatusFile(root(), &error);
        EXPECT_TRUE(status) << error;
        if (!status) return {};
        EXPECT_EQ(status->state, format::DumpState::Incomplete);
        EXPECT_EQ(status->processes.size(), 1u);
        if (status->processes.size() == 1) {
            EXPECT_EQ(status->processes[0].state, format::DumpState::Incomplete);
            EXPECT_NE(status->processes[0].dumpStopped.find("PROBE_MIN_FREE_MB"),
                      std::string::npos);
        }
        return *status;
    }
};

TEST_F(Writer, BackPressureUnderATinyMemoryCapLosesNothing) {
    ::setenv("PROBE_MEMORY_CAP_MB", "1", 1);
    start(R"({"task": "tensor", "dump_enable": true, "exec_range": "all"})");
    constexpr int kOps = 40, kThreads = 2;
    constexpr int64_t kElements = 256 * 1024;  // 1 MiB per tensor: every op waits for the writer
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([t] {
            std::vector<float> data(kElements);
            const int64_t dims[] = {kElements};
            const std::string name = "Layer_t" + std::to_string(t);
            for (int i = 0; i < kOps; ++i) {
                for (int64_t k = 0; k < kElements; k += 1024)
                    data[static_cast<size_t>(k)] = static_cast<float>(i * 1000 + t);
                ASSERT_EQ(probe_op_begin(name.c_str(), nullptr, nullptr), 1);
                ASSERT_EQ(probe_op_tensor(PROBE_INPUT, 0, nullptr, PROBE_DTYPE_FLOAT,
                                          PROBE_FORMAT_ND, dims, 1, data.data(), data.size() * 4),
                          1);
                probe_op_end();
            }
        });
    for (auto& t : threads) t.join();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    // Which thread's layer got which id depends on who came first: find each by its rows.
    std::map<std::pair<std::string, int64_t>, std::string> paths;
    for (const auto& r : readRows()) paths[{r.row.opName, r.row.round}] = r.row.tensorPath;
    for (int t = 0; t < kThreads; ++t) {
        for (int i = 0; i < kOps; ++i) {
            const std::string path = paths[{"Layer_t" + std::to_string(t), i}];
            std::string error;
            auto file = format::readBinFile(path, &error);
            ASSERT_TRUE(file) << path << ": " << error;
            float first;
            std::memcpy(&first, file->data.data(), 4);
            EXPECT_EQ(first, static_cast<float>(i * 1000 + t));
        }
    }
    std::string error;
    auto status = format::readStatusFile(root(), &error);
    ASSERT_TRUE(status);
    EXPECT_EQ(status->state, format::DumpState::Complete);
    EXPECT_EQ(status->rows, static_cast<uint64_t>(kOps * kThreads));
}

TEST_F(Writer, DiskGuardStopsDumpingAndTheModelGoesOn) {
    runTrippingTheDiskGuard(R"({"task": "all", "dump_enable": true, "exec_range": "all"})");
    const auto files = listFiles(root());
    ASSERT_FALSE(files.empty());  // the status file, at least
    for (const auto& f : files) EXPECT_EQ(f.find(".bin"), std::string::npos) << f;
}

// Statistics alone (probe run's default) fill a disk more slowly, but they fill it.
TEST_F(Writer, DiskGuardStopsAStatisticsOnlyDumpToo) {
    const auto status = runTrippingTheDiskGuard(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(status.processes.size(), 1u);
    EXPECT_EQ(status.rows, 0u);
    EXPECT_GT(status.processes[0].droppedRows, 0u);
}

// A setting that is no number of megabytes (or milliseconds) is said, and its default used: "-5"
// was read as 2^64 - 5 MB, and the dump stopped at once for want of that much free disk.
TEST_F(Writer, ABadSettingIsSaidAndTheDefaultUsed) {
    ::setenv("PROBE_MIN_FREE_MB", "-5", 1);
    ::setenv("PROBE_MEMORY_CAP_MB", "99999999999999999999", 1);
    ::setenv("PROBE_FATAL_DRAIN_MS", "-1", 1);  // was dropped without a word
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ::unsetenv("PROBE_FATAL_DRAIN_MS");
    NativeModel model({});
    model.run();
    EXPECT_EQ(probe_is_awake(), 1);
    ASSERT_EQ(probe_stop(), PROBE_OK);
    std::string error;
    const auto status = format::readStatusFile(root(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->state, format::DumpState::Complete);
    ASSERT_EQ(status->processes.size(), 1u);
    EXPECT_TRUE(status->processes[0].dumpStopped.empty()) << status->processes[0].dumpStopped;
    EXPECT_GT(status->rows, 0u);
    std::string said;
    for (const auto& message : status->processes[0].messages) said += message.text + "\n";
    EXPECT_NE(said.find("PROBE_MIN_FREE_MB=-5 is not a number of megabytes"), std::string::npos)
        << said;
    EXPECT_NE(said.find("the default 512 is used"), std::string::npos) << said;
    EXPECT_NE(said.find("PROBE_FATAL_DRAIN_MS=-1 is not a number of milliseconds (0 to 60000): "
                        "the default 3000 is used"),
              std::string::npos)
        << said;
}

}  // namespace
}  // namespace probe::test
