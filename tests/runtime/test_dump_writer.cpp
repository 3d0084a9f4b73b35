// White-box tests of the writer thread.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dump_writer.h"
#include "probe/format/row_order.h"
#include "probe/format/statistic_csv.h"
#include "test_support.h"

namespace probe::runtime {
namespace {

using probe::test::TempDir;

// Watches the writer's queued bytes from another thread while a test fills the queue: the most
// it saw, once stopped.
class QueuedPeak {
public:
    explicit QueuedPeak(const DumpWriter& writer)
        : sampler_([this, &writer] {
              while (!done_) {
                  peak_ = std::max<uint64_t>(peak_, writer.queuedBytes());
                  std::this_thread::yield();
              }
          }) {}
    ~QueuedPeak() { stop(); }
    uint64_t stop() {
        done_ = true;
        if (sampler_.joinable()) sampler_.join();
        return peak_;
    }

private:
    std::atomic<bool> done_{false};
    std::atomic<uint64_t> peak_{0};
    std::thread sampler_;
};

TEST(DumpWriter, RowsAppendWholeLinesAfterTheHeader) {
    TempDir dir;
    DumpWriter writer({dir.path(), 1 << 20, 0}, nullptr);
    writer.start();
    for (int i = 0; i < 100; ++i) {
        WriteJob job;
        job.kind = WriteJob::Kind::Row;
        job.path = dir / "a/b/statistic.csv";
        job.head = "row " + std::to_string(i) + "\n";
        ASSERT_TRUE(writer.enqueue(std::move(job)));
    }
    writer.stop();
    const auto lines = probe::test::splitLines(probe::test::readFile(dir / "a/b/statistic.csv"));
    ASSERT_EQ(lines.size(), 101u);
    EXPECT_EQ(lines[0], format::kStatisticCsvHeader);
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(lines[static_cast<size_t>(i) + 1], "row " + std::to_string(i));
    EXPECT_EQ(writer.counters().rows, 100u);
    EXPECT_FALSE(writer.enqueue(WriteJob{}));  // stopped
}

// A written batch's row buffer comes back for the next batch (takeRowBuffer): memory with room
// for a whole batch already, not fresh pages for the op's thread to fault in as rows come, and
// empty, so that the file holds the next batch's own rows after the first's, nothing twice.
TEST(DumpWriter, RowBuffersComeBackEmptyForTheNextBatch) {
    TempDir dir;
    DumpWriter writer({dir.path(), 1 << 20, 0}, nullptr);
    writer.start();
    const std::string path = dir / "data/7/0/statistic.csv";
    auto queueBatch = [&](std::string packed, const std::string& opName, int rows) {
        for (int i = 0; i < rows; ++i) {
            format::StatRowCodes row;
            row.devicePid = "7";
            row.opName = opName;
            row.opType = "aten::add";
            row.opId = std::to_string(i);
            row.max = i;
            row.min = row.mean = row.norm = 0;  // all four or none, as the readers take rows
            format::packStatRow(packed, row, false);
        }
        WriteJob job;
        job.kind = WriteJob::Kind::PackedRows;
        job.path = path;
        job.head = std::move(packed);
        job.rows = static_cast<uint64_t>(rows);
        return writer.enqueue(std::move(job));
    };
    constexpr size_t kRoom = 64 * 1024;
    std::string first = writer.takeRowBuffer(kRoom);
    ASSERT_TRUE(first.empty());
    ASSERT_GE(first.capacity(), kRoom);
    ASSERT_TRUE(queueBatch(std::move(first), "first", 50));
    writer.drain();
    std::string second = writer.takeRowBuffer(1024);
    EXPECT_TRUE(second.empty());
    EXPECT_GE(second.capacity(), kRoom);  // the first batch's
    ASSERT_TRUE(queueBatch(std::move(second), "second", 3));
    writer.stop();
    const auto lines = probe::test::splitLines(probe::test::readFile(path));
    ASSERT_EQ(lines.size(), 1u + 50u + 3u);
    EXPECT_EQ(lines[0], format::kStatisticCsvHeader);
    for (size_t i = 1; i < lines.size(); ++i) {
        std::string error;
        const auto row = format::parseStatRow(lines[i], &error);
        ASSERT_TRUE(row) << lines[i] << ": " << error;
        const bool ofFirst = i <= 50;
        const size_t id = ofFirst ? i - 1 : i - 51;
        EXPECT_EQ(row->opName, ofFirst ? "first" : "second") << lines[i];
        EXPECT_EQ(row->opId, std::to_string(id));
        ASSERT_TRUE(row->max);
        EXPECT_EQ(*row->max, static_cast<double>(id));
    }
}

int openDescriptors() {
    int count = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d)) ++count;
        ::closedir(d);
    }
    return count;
}

// One round folder per training step, thousands of them: the folders the writer keeps open
// stay bounded (a round's parent folder, found again on every walk, was never marked used, so
// it stayed the oldest, was never closed, and kept every newer folder open beside it).
TEST(DumpWriter, ManyRoundFoldersKeepFewDescriptorsOpen) {
    TempDir dir;
    DumpWriter writer({dir.path(), 1 << 20, 0}, nullptr);
    writer.start();
    const int before = openDescriptors();
    ASSERT_GT(before, 0);
    for (int round = 0; round < 400; ++round) {
        WriteJob job;
        job.kind = WriteJob::Kind::Row;
        job.path = dir / ("data/123/" + std::to_string(round) + "/statistic.csv");
        job.head = "row\n";
        ASSERT_TRUE(writer.enqueue(std::move(job)));
        if (round % 50 == 49) writer.drain();
    }
    writer.drain();
    // At most 64 folders and 32 statistic.csv files open at once, whatever the rounds.
    EXPECT_LE(openDescriptors() - before, 64 + 32);
    writer.stop();
    for (int round = 0; round < 400; round += 57)
        EXPECT_EQ(
            probe::test::readFile(dir / ("data/123/" + std::to_string(round) + "/statistic.csv")),
            std::string(format::kStatisticCsvHeader) + "\nrow\n");
    EXPECT_EQ(writer.counters().errors, 0u);
}

// Tensor buffers handed out by takeBuffer are counted against the cap from the copy on, and a
// written tensor's buffer is reused for the next of its size: the memory held (queued, handed
// out, kept) never exceeds the cap, and every file holds its own bytes.
TEST(DumpWriter, TakenBuffersStayWithinTheCapAndAreReused) {
    TempDir dir;
    constexpr uint64_t kCap = 8u << 20, kJob = 2u << 20;
    DumpWriter writer({dir.path(), kCap, 0}, nullptr);
    writer.start();
    QueuedPeak queued(writer);
    for (int i = 0; i < 40; ++i) {
        WriteJob job;
        job.kind = WriteJob::Kind::Tensor;
        job.path = dir / ("t/" + std::to_string(i) + ".bin");
        job.data = writer.takeBuffer(kJob, &job.charged);
        ASSERT_EQ(job.charged, kJob);
        EXPECT_LE(writer.queuedBytes(), kCap);
        std::memset(job.data.get(), i, kJob);
        job.size = kJob;
        ASSERT_TRUE(writer.enqueue(std::move(job)));
    }
    writer.drain();
    EXPECT_LE(writer.queuedBytes(), kCap / 4);  // what is kept for reuse, nothing queued
    writer.stop();
    EXPECT_LE(queued.stop(), kCap);
    EXPECT_EQ(writer.queuedBytes(), 0u);
    EXPECT_EQ(writer.counters().files, 40u);
    for (int i : {0, 1, 7, 39}) {
        const std::string content =
            probe::test::readFile(dir / ("t/" + std::to_string(i) + ".bin"));
        ASSERT_EQ(content.size(), kJob);
        EXPECT_EQ(static_cast<uint8_t>(content[0]), i);
        EXPECT_EQ(static_cast<uint8_t>(content[kJob - 1]), i);
    }
}

// A tensor job for `path` in a buffer from takeBuffer, its `size` bytes all `fill`.
WriteJob filledTensor(DumpWriter& writer, const std::string& path, uint64_t size, int fill) {
    WriteJob job;
    job.kind = WriteJob::Kind::Tensor;
    job.path = path;
    job.data = writer.takeBuffer(size, &job.charged);
    std::memset(job.data.get(), fill, size);
    job.size = size;
    return job;
}

// Fresh memory is taken only while what is held stays within 1/32 of the cap or two buffers of
// the size asked for (and 2 MiB for headers and rows): beyond that an op waits for a written
// tensor's buffer rather than fault in new pages (costly on a virtual machine). Forty tensors
// then go through two buffers, far below the cap, each file with its header and own bytes.
TEST(DumpWriter, FreshBuffersStayWithinASmallPartOfTheCap) {
    TempDir dir;
    constexpr uint64_t kHuge = 2u << 20, kCap = 64u << 20, kJob = 2 * kHuge + 5;
    DumpWriter writer({dir.path(), kCap, 0}, nullptr);
    writer.start();
    QueuedPeak queued(writer);
    std::vector<const uint8_t*> seen;
    for (int i = 0; i < 40; ++i) {
        WriteJob job = filledTensor(writer, dir / ("t/" + std::to_string(i) + ".bin"), kJob, i);
        job.head = "head" + std::to_string(i) + "\n";
        ASSERT_EQ(job.charged, 3 * kHuge);
        if (std::find(seen.begin(), seen.end(), job.data.get()) == seen.end())
            seen.push_back(job.data.get());
        ASSERT_TRUE(writer.enqueue(std::move(job)));
    }
    writer.stop();
    EXPECT_LE(queued.stop(), 2 * 3 * kHuge + kHuge);
    EXPECT_LE(seen.size(), 2u);
    EXPECT_EQ(writer.counters().files, 40u);
    for (int i = 0; i < 40; ++i)
        EXPECT_EQ(probe::test::readFile(dir / ("t/" + std::to_string(i) + ".bin")),
                  "head" + std::to_string(i) + "\n" + std::string(kJob, static_cast<char>(i)));
}

// A kept buffer in huge pages serves a smaller tensor too (charged for all its pages): memory
// already faulted in is used again rather than new memory mapped beside it.
TEST(DumpWriter, AKeptBiggerBufferServesASmallerTensor) {
    TempDir dir;
    constexpr uint64_t kHuge = 2u << 20, kCap = 256u << 20;
    DumpWriter writer({dir.path(), kCap, 0}, nullptr);
    writer.start();
    const uint64_t sizes[] = {3 * kHuge, 2 * kHuge + 5, 3 * kHuge - 1, kHuge};
    const uint8_t* first = nullptr;
    for (int i = 0; i < 4; ++i) {
        WriteJob job =
            filledTensor(writer, dir / ("t/" + std::to_string(i) + ".bin"), sizes[i], 0x30 + i);
        if (i == 0) first = job.data.get();
        EXPECT_EQ(job.data.get(), first) << i;  // the first buffer, back from the writer
        EXPECT_EQ(job.charged, 3 * kHuge) << i;
        ASSERT_TRUE(writer.enqueue(std::move(job)));
        writer.drain();
        EXPECT_EQ(writer.queuedBytes(), 3 * kHuge);  // kept, nothing queued
    }
    writer.stop();
    EXPECT_EQ(writer.queuedBytes(), 0u);
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(probe::test::readFile(dir / ("t/" + std::to_string(i) + ".bin")),
                  std::string(sizes[i], static_cast<char>(0x30 + i)));
}

// A buffer of 2 MiB or more is mapped in whole huge pages and charged for all of them: a size
// that is not a multiple is rounded up against the cap, the file still holds exactly its bytes,
// and a written buffer of the same size comes back for the next tensor. new[] buffers (the
// overflow watch's) go through the same jobs and are released as they were made.
TEST(DumpWriter, LargeBuffersAreWholeHugePagesChargedAsSuch) {
    TempDir dir;
    constexpr uint64_t kHuge = 2u << 20, kCap = 64u << 20, kJob = 5 * kHuge + 123;
    DumpWriter writer({dir.path(), kCap, 0}, nullptr);
    writer.start();
    QueuedPeak queued(writer);
    const uint8_t* first = nullptr;
    bool reused = false;
    for (int i = 0; i < 12; ++i) {
        WriteJob job;
        job.kind = WriteJob::Kind::Tensor;
        job.path = dir / ("t/" + std::to_string(i) + ".bin");
        job.head = "head" + std::to_string(i) + "\n";
        if (i % 4 == 3) {
            job.data.reset(new uint8_t[kJob]);  // as the overflow watch hands over its copies
        } else {
            job.data = writer.takeBuffer(kJob, &job.charged);
            ASSERT_EQ(job.charged, 6 * kHuge);
            EXPECT_EQ(reinterpret_cast<uintptr_t>(job.data.get()) % kHuge, 0u);
            if (!first) first = job.data.get();
            reused = reused || (i > 0 && job.data.get() == first);
        }
        std::memset(job.data.get(), i, kJob);
        job.data[kJob - 1] = static_cast<uint8_t>(0xa0 + i);
        job.size = kJob;
        ASSERT_TRUE(writer.enqueue(std::move(job)));
        if (i % 2 == 1) writer.drain();  // written, so its buffer can be taken again
    }
    writer.stop();
    EXPECT_TRUE(reused);
    EXPECT_LE(queued.stop(), kCap);
    EXPECT_EQ(writer.queuedBytes(), 0u);
    EXPECT_EQ(writer.counters().files, 12u);
    for (int i = 0; i < 12; ++i) {
        const std::string content =
            probe::test::readFile(dir / ("t/" + std::to_string(i) + ".bin"));
        const std::string head = "head" + std::to_string(i) + "\n";
        ASSERT_EQ(content.size(), head.size() + kJob);
        EXPECT_EQ(content.substr(0, head.size()), head);
        EXPECT_EQ(static_cast<uint8_t>(content[head.size()]), i);
        EXPECT_EQ(static_cast<uint8_t>(content[head.size() + kJob - 2]), i);
        EXPECT_EQ(static_cast<uint8_t>(content.back()), 0xa0 + i);
    }
}

TEST(DumpWriter, LatestFileWritesOnlyTheNewestContent) {
    TempDir dir;
    DumpWriter writer({dir.path(), 1 << 20, 0}, nullptr);
    writer.start();
    for (int i = 0; i < 50; ++i) {
        WriteJob job;
        job.kind = WriteJob::Kind::LatestFile;
        job.path = dir / "model.json";
        job.head = "version " + std::to_string(i);
        writer.enqueue(std::move(job));
    }
    writer.drain();
    EXPECT_EQ(probe::test::readFile(dir / "model.json"), "version 49");
    writer.stop();
}

TEST(DumpWriter, MemoryCapBoundsWhatIsQueued) {
    TempDir dir;
    constexpr uint64_t kCap = 64 * 1024, kJob = 10 * 1024;
    DumpWriter writer({dir.path(), kCap, 0}, nullptr);
    writer.start();
    QueuedPeak queued(writer);
    for (int i = 0; i < 300; ++i) {
        WriteJob job;
        job.kind = WriteJob::Kind::Tensor;
        job.path = dir / ("t/" + std::to_string(i) + ".bin");
        job.data.reset(new uint8_t[kJob]);
        std::memset(job.data.get(), i & 0xff, kJob);
        job.size = kJob;
        ASSERT_TRUE(writer.enqueue(std::move(job)));
    }
    writer.stop();
    EXPECT_LE(queued.stop(), kCap);
    EXPECT_EQ(writer.counters().files, 300u);
    for (int i : {0, 150, 299}) {
        const std::string content =
            probe::test::readFile(dir / ("t/" + std::to_string(i) + ".bin"));
        ASSERT_EQ(content.size(), kJob);
        EXPECT_EQ(static_cast<uint8_t>(content[0]), i & 0xff);
    }
}

TEST(DumpWriter, DiskGuardStopsTensorsAndReportsOnce) {
    TempDir dir;
    std::vector<std::string> errors;
    DumpWriter writer({dir.path(), 1 << 20, ~0ull >> 2},
                      [&](const std::string& e) { errors.push_back(e); });
    writer.start();
    for (int i = 0; i < 5; ++i) {
        WriteJob job;
        job.kind = WriteJob::Kind::Tensor;
        job.path = dir / ("t" + std::to_string(i) + ".bin");
        job.head = "header";
        writer.enqueue(std::move(job));
    }
    writer.drain();
    EXPECT_TRUE(writer.diskStopped());
    EXPECT_NE(writer.diskStoppedReason().find("free"), std::string::npos);
    WriteJob row;
    row.kind = WriteJob::Kind::Row;
    row.path = dir / "statistic.csv";
    row.head = "x\n";
    EXPECT_FALSE(writer.enqueue(std::move(row)));
    writer.stop();
    EXPECT_EQ(errors.size(), 1u);
    EXPECT_EQ(writer.counters().files, 0u);
    EXPECT_TRUE(probe::test::listFiles(dir.path()).empty());
}

TEST(DumpWriter, UnwritableDirectoryIsAnErrorNotACrash) {
    TempDir dir;
    probe::test::writeFile(dir / "file", "x");
    std::vector<std::string> errors;
    DumpWriter writer({dir.path(), 1 << 20, 0}, [&](const std::string& e) { errors.push_back(e); });
    writer.start();
    WriteJob job;
    job.kind = WriteJob::Kind::File;
    job.path = dir / "file/sub/x.json";
    job.head = "{}";
    writer.enqueue(std::move(job));
    writer.stop();
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find(dir / "file is not what the dump has there"), std::string::npos)
        << errors[0];
    EXPECT_EQ(writer.counters().errors, 1u);
}

// A batch's row order lines are written before its rows, whether those reach their files or
// not: written after, a kill or a full disk during a long batch left the rows already in their
// files without lines (a third of a dump killed while the writer was behind).
TEST(DumpWriter, RowOrderLinesComeBeforeTheRowsWhetherTheyArriveOrNot) {
    TempDir dir;
    std::filesystem::create_directories(dir / "data/0_7");
    probe::test::writeFile(dir / "data/0_7/1", "in the way of round 1's folder");
    std::vector<std::string> errors;
    DumpWriter writer({dir.path(), 1 << 20, 0}, [&](const std::string& e) { errors.push_back(e); });
    writer.start();
    for (const int round : {0, 1, 0}) {
        WriteJob job;
        job.kind = WriteJob::Kind::Row;
        job.round = round;
        job.path = dir / ("data/0_7/" + std::to_string(round) + "/statistic.csv");
        job.head = "row of round " + std::to_string(round) + "\n";
        ASSERT_TRUE(writer.enqueue(std::move(job)));
    }
    writer.stop();
    EXPECT_FALSE(errors.empty());
    EXPECT_EQ(probe::test::readFile(dir / "probe_row_order/0_7.csv"),
              std::string(format::kRowOrderHeader) + "\n0,1\n1,1\n0,1\n");
    EXPECT_EQ(
        probe::test::splitLines(probe::test::readFile(dir / "data/0_7/0/statistic.csv")).size(),
        3u);
}

}  // namespace
}  // namespace probe::runtime
