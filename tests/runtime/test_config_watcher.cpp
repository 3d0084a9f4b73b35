// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

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
        for (int i = 0; i < 100 && counter.load() < value; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return counter.load() >= value;
    };
    probe::test::replaceFile(path, "{\"task\": \"all\"}");  // a new inode and size
    EXPECT_TRUE(waitFor(written, 1));
    ::unlink(path.c_str());
    EXPECT_TRUE(waitFor(removed, 1));
    watcher.stop();
}

}  // namespace
}  // namespace probe::runtime
