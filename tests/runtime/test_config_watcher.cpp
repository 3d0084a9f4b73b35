// SPDX-License-Identifier: GPL-3.0-or-later
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include <gtest/gtest.h>

#include "config_watcher.h"
#include "test_support.h"

namespace probe::runtime {
namespace {

TEST(ConfigWatcher, SeesReplacementsAndInPlaceWritesAtTheNextSync) {
    probe::test::TempDir dir;
    const std::string path = dir / "config.json";
    std::atomic<int> written{0}, removed{0};
    ConfigWatcher watcher(path, [&](ConfigWatcher::Change c) {
        (c == ConfigWatcher::Change::Written ? written : removed)++;
    });
    watcher.start();
    ASSERT_TRUE(watcher.usesInotify());
    probe::test::replaceFile(path, "{}");
    watcher.syncPending();
    EXPECT_EQ(written.load(), 1);  // no sleep: the sync waited for the watcher
    probe::test::writeFile(path, "{\"a\":1}");
    watcher.syncPending();
    EXPECT_EQ(written.load(), 2);
    probe::test::writeFile(dir / "other.json", "{}");  // another file: ignored
    watcher.syncPending();
    EXPECT_EQ(written.load(), 2);
    ::unlink(path.c_str());
    watcher.syncPending();
    EXPECT_EQ(removed.load(), 1);
    watcher.stop();
}

// Asking the kernel is a system call (3-4 us on a virtual machine): a layer-level op boundary
// asks it at each round's first boundary, and at most once an interval at the others.
TEST(ConfigWatcher, ABoundaryAsksTheKernelOncePerRoundOrInterval) {
    probe::test::TempDir dir;
    ConfigWatcher watcher(dir / "config.json", [](ConfigWatcher::Change) {});
    watcher.start();
    ASSERT_TRUE(watcher.usesInotify());
    using std::chrono::microseconds;
    const auto interval = ConfigWatcher::kBoundaryCheckInterval;
    ConfigWatcher::Clock::time_point lastCheck{};
    const auto start = ConfigWatcher::Clock::now();
    const uint64_t before = watcher.queueChecks();
    watcher.syncAtBoundary(lastCheck, false, start);  // the thread's first: asks
    EXPECT_EQ(watcher.queueChecks(), before + 1);
    for (auto t = microseconds(1); t < interval; t += microseconds(7))
        watcher.syncAtBoundary(lastCheck, false, start + t);
    EXPECT_EQ(watcher.queueChecks(), before + 1);
    watcher.syncAtBoundary(lastCheck, true, start + interval - microseconds(1));  // a round
    EXPECT_EQ(watcher.queueChecks(), before + 2);
    watcher.syncAtBoundary(lastCheck, false, start + interval);  // counted from the round's
    EXPECT_EQ(watcher.queueChecks(), before + 2);
    watcher.syncAtBoundary(lastCheck, false, start + 2 * interval - microseconds(1));
    EXPECT_EQ(watcher.queueChecks(), before + 3);
    watcher.stop();
}

// A sleeping probe counts a layer-level op rather than begin it while no change of the config
// can be waiting for it (boundaryMayBeCounted). Once an interval has passed since any boundary
// asked the kernel, the question asks it itself: nothing queued, and counting goes on for
// another interval; a change made before the question is applied there, whether the watcher had
// handled it already (counted) or not (begun, and syncAtBoundary waits for it).
TEST(ConfigWatcher, ABoundaryIsCountedOnlyWhileNoChangeCanBeWaitingForIt) {
    probe::test::TempDir dir;
    const std::string path = dir / "config.json";
    std::atomic<int> written{0};
    std::mutex mutex;
    std::condition_variable changed;
    bool handling = false, release = true;
    ConfigWatcher watcher(path, [&](ConfigWatcher::Change c) {
        std::unique_lock<std::mutex> lock(mutex);
        handling = true;
        changed.notify_all();
        changed.wait(lock, [&] { return release; });
        handling = false;
        if (c == ConfigWatcher::Change::Written) written++;
    });
    watcher.start();
    ASSERT_TRUE(watcher.usesInotify());
    EXPECT_FALSE(watcher.boundaryMayBeCounted());  // every round asks (the default)
    watcher.askEveryRound(false);
    const auto interval = ConfigWatcher::kBoundaryCheckInterval;
    auto now = ConfigWatcher::Clock::now();
    ConfigWatcher::Clock::time_point lastCheck{};
    watcher.syncAtBoundary(lastCheck, true, now);  // the thread's first: asks
    uint64_t asked = watcher.queueChecks();
    for (auto t = std::chrono::microseconds(0); t < interval; t += std::chrono::microseconds(7))
        ASSERT_TRUE(watcher.boundaryMayBeCounted(now + t));
    EXPECT_EQ(watcher.queueChecks(), asked);  // within the interval: nobody asks
    now += interval;
    EXPECT_TRUE(watcher.boundaryMayBeCounted(now));  // asks: nothing queued
    EXPECT_EQ(watcher.queueChecks(), ++asked);
    EXPECT_TRUE(watcher.boundaryMayBeCounted(now + interval / 2));  // the interval starts again
    EXPECT_EQ(watcher.queueChecks(), asked);

    // Changes written while the model runs: at the question an interval later, either handled
    // already, or waiting to be (begun: its boundary applies the change).
    int begun = 0;
    for (int i = 1; i <= 20; ++i) {
        probe::test::replaceFile(path, "{\"change\": " + std::to_string(i) + "}");
        now += interval;
        if (!watcher.boundaryMayBeCounted(now)) {
            ++begun;
            watcher.syncAtBoundary(lastCheck, false, now);
        }
        ASSERT_EQ(written.load(), i);
    }
    // While the watcher handles a change (its handler held here), a boundary is begun.
    {
        std::unique_lock<std::mutex> lock(mutex);
        release = false;
    }
    probe::test::writeFile(path, "{\"held\": 1}");
    {
        std::unique_lock<std::mutex> lock(mutex);
        ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(60), [&] { return handling; }));
    }
    EXPECT_FALSE(watcher.boundaryMayBeCounted(now));  // within the interval, yet busy
    {
        std::lock_guard<std::mutex> lock(mutex);
        release = true;
    }
    changed.notify_all();
    watcher.syncAtBoundary(lastCheck, false, now + interval);
    EXPECT_EQ(written.load(), 21);
    // A write the program noted waits for its round: not counted.
    EXPECT_TRUE(watcher.noteWrite(path.c_str(), now));
    EXPECT_FALSE(watcher.boundaryMayBeCounted(now));
    watcher.stop();
    RecordProperty("begun", begun);
}

TEST(ConfigWatcher, AChangeIsAppliedAtTheNextRoundOrAnIntervalAfterItWasMade) {
    probe::test::TempDir dir;
    const std::string path = dir / "config.json";
    std::atomic<int> written{0};
    ConfigWatcher watcher(path, [&](ConfigWatcher::Change c) {
        if (c == ConfigWatcher::Change::Written) written++;
    });
    watcher.start();
    ASSERT_TRUE(watcher.usesInotify());
    ConfigWatcher::Clock::time_point lastCheck{};
    watcher.syncAtBoundary(lastCheck, false);
    // Written between rounds, a microsecond after the last check: the round's first boundary
    // has it, every time (no sleep: the boundary waits for the watcher).
    for (int i = 1; i <= 20; ++i) {
        probe::test::writeFile(path, "{\"round\": " + std::to_string(i) + "}");
        watcher.syncAtBoundary(lastCheck, true);
        ASSERT_EQ(written.load(), i);
    }
    // Written during a round: any boundary an interval after the write has it. The boundaries'
    // clock moves an interval on at each (given now() + interval each time, a boundary would be
    // less than an interval after the one before, and the test would pass only when the watcher
    // happened to be quick).
    auto now = lastCheck;
    for (int i = 21; i <= 30; ++i) {
        probe::test::replaceFile(path, "{\"change\": " + std::to_string(i) + "}");
        now += ConfigWatcher::kBoundaryCheckInterval;
        watcher.syncAtBoundary(lastCheck, false, now);
        ASSERT_EQ(written.load(), i);
    }
    watcher.stop();
}

// A program that reports its own writes of the config: rounds ask the kernel only while such a
// write is noted and its change not yet handled, and every such change applies at the next round.
TEST(ConfigWatcher, WithItsOwnWritesReportedOnlyARoundAfterOneAsks) {
    probe::test::TempDir dir;
    const std::string path = dir / "config.json";
    std::atomic<int> written{0};
    ConfigWatcher watcher(path, [&](ConfigWatcher::Change c) {
        if (c == ConfigWatcher::Change::Written) written++;
    });
    watcher.askEveryRound(false);
    watcher.start();
    ASSERT_TRUE(watcher.usesInotify());
    auto now = ConfigWatcher::Clock::now();
    ConfigWatcher::Clock::time_point lastCheck{};
    watcher.syncAtBoundary(lastCheck, true, now);  // the thread's first: asks
    const uint64_t before = watcher.queueChecks();
    // Rounds within an interval, nothing noted: nobody asks.
    for (int i = 0; i < 10; ++i) watcher.syncAtBoundary(lastCheck, true, now);
    EXPECT_EQ(watcher.queueChecks(), before);
    // Noted, then written in place or replaced: the next round has it, every time (no sleep:
    // the boundary waits for the watcher), and the round after asks no more.
    for (int i = 1; i <= 20; ++i) {
        EXPECT_TRUE(watcher.noteWrite(path.c_str(), now));
        EXPECT_TRUE(watcher.writeNoted());
        if (i % 2)
            probe::test::writeFile(path, "{\"round\": " + std::to_string(i) + "}");
        else
            probe::test::replaceFile(path, "{\"change\": " + std::to_string(i) + "}");
        watcher.syncAtBoundary(lastCheck, false, now);  // within a round: not yet
        watcher.syncAtBoundary(lastCheck, true, now);
        ASSERT_EQ(written.load(), i);
        EXPECT_FALSE(watcher.writeNoted());
    }
    EXPECT_EQ(watcher.queueChecks(), before + 20);
    watcher.syncAtBoundary(lastCheck, true, now);
    EXPECT_EQ(watcher.queueChecks(), before + 20);
    // A note made while the file is open for writing holds until its change has come.
    EXPECT_TRUE(watcher.noteWrite(path.c_str(), now));
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    watcher.syncAtBoundary(lastCheck, true, now);
    EXPECT_TRUE(watcher.writeNoted());
    ASSERT_EQ(::write(fd, "{}", 2), 2);
    ::close(fd);
    watcher.syncAtBoundary(lastCheck, true, now);
    EXPECT_EQ(written.load(), 21);
    EXPECT_FALSE(watcher.writeNoted());
    // A note whose write never comes (it failed) lapses.
    EXPECT_TRUE(watcher.noteWrite(path.c_str(), now));
    watcher.syncAtBoundary(lastCheck, true, now);
    EXPECT_TRUE(watcher.writeNoted());
    watcher.syncAtBoundary(lastCheck, true, now + ConfigWatcher::kSuspicionLifetime);
    EXPECT_FALSE(watcher.writeNoted());
    // Only the config is noted: another name, or the same name in another folder, is not.
    probe::test::TempDir other;
    EXPECT_FALSE(watcher.noteWrite((dir / "other.json").c_str(), now));
    EXPECT_FALSE(watcher.noteWrite((other / "config.json").c_str(), now));
    EXPECT_FALSE(watcher.noteWrite("config.json", now));  // relative: this folder's
    EXPECT_TRUE(watcher.noteWrite((dir / "./config.json").c_str(), now));
    watcher.stop();
}

TEST(ConfigWatcher, PollingFallbackSeesChangesWithinAFewTenthsOfASecond) {
    probe::test::TempDir dir;
    const std::string path = dir / "config.json";
    probe::test::writeFile(path, "{}");
    ::setenv("PROBE_CONFIG_WATCH", "poll", 1);
    std::atomic<int> written{0}, removed{0};
    ConfigWatcher watcher(path, [&](ConfigWatcher::Change c) {
        (c == ConfigWatcher::Change::Written ? written : removed)++;
    });
    watcher.start();
    ::unsetenv("PROBE_CONFIG_WATCH");
    EXPECT_FALSE(watcher.usesInotify());
    auto waitFor = [](std::atomic<int>& counter, int value) {
        return probe::test::waitUntil([&] { return counter.load() >= value; });
    };
    probe::test::replaceFile(path, "{\"task\": \"all\"}");  // a new inode and size
    EXPECT_TRUE(waitFor(written, 1));
    ::unlink(path.c_str());
    EXPECT_TRUE(waitFor(removed, 1));
    watcher.stop();
}

TEST(ConfigWatcher, SomethingOtherThanAFileInItsPlaceIsReportedAsAChange) {
    // A directory, FIFO or link made where the config was: read (and refused) by the handler,
    // not taken for a removal. Creating a regular file alone waits for its content.
    probe::test::TempDir dir;
    const std::string path = dir / "config.json";
    std::atomic<int> written{0}, removed{0};
    ConfigWatcher watcher(path, [&](ConfigWatcher::Change c) {
        (c == ConfigWatcher::Change::Written ? written : removed)++;
    });
    watcher.start();
    ASSERT_TRUE(watcher.usesInotify());
    ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
    watcher.syncPending();
    EXPECT_EQ(written.load(), 1);
    ASSERT_EQ(::rmdir(path.c_str()), 0);
    watcher.syncPending();
    EXPECT_EQ(removed.load(), 1);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    watcher.syncPending();
    EXPECT_EQ(written.load(), 2);
    ASSERT_EQ(::unlink(path.c_str()), 0);
    watcher.syncPending();
    ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
    watcher.syncPending();
    EXPECT_EQ(written.load(), 3);
    ASSERT_EQ(::unlink(path.c_str()), 0);
    watcher.syncPending();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);  // created: no change yet
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "{}", 2), 2);
    ::close(fd);  // written: one change
    watcher.syncPending();
    EXPECT_EQ(written.load(), 4);
    watcher.stop();
}

TEST(ConfigWatcher, AHandlerThatThrowsDoesNotEndTheProcess) {
    probe::test::TempDir dir;
    const std::string path = dir / "config.json";
    std::atomic<int> calls{0};
    ConfigWatcher watcher(path, [&](ConfigWatcher::Change) {
        if (++calls == 1) throw std::runtime_error("the handler failed");
    });
    watcher.start();
    probe::test::replaceFile(path, "{}");
    watcher.syncPending();
    probe::test::replaceFile(path, "{\"a\": 1}");
    watcher.syncPending();
    EXPECT_EQ(calls.load(), 2);
    watcher.stop();
}

}  // namespace
}  // namespace probe::runtime
