// Test helpers: temporary directories, file listing and reading, waiting for a condition.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace probe::test {

// A fresh directory under $TMPDIR, removed (recursively) at destruction unless
// PROBE_KEEP_TEST_DIRS is set.
class TempDir {
public:
    explicit TempDir(const std::string& tag = "probe-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& relative) const { return path_ + "/" + relative; }

private:
    std::string path_;
};

// Regular files below `root`, as paths relative to it, sorted.
std::vector<std::string> listFiles(const std::string& root);
// The files below `root` named `name` (the last part of their path), as full paths, sorted.
std::vector<std::string> filesNamed(const std::string& root, const std::string& name);
// Directories directly below `dir`, sorted.
std::vector<std::string> listSubdirectories(const std::string& dir);
std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& content);
// Writes under a temporary name and renames: how tools (and people with care) replace a file.
void replaceFile(const std::string& path, const std::string& content);
std::vector<std::string> splitLines(const std::string& text);
bool exists(const std::string& path);

// Waits until `condition` holds, checking it every few milliseconds, for at most `timeoutMs`
// (generous: a shared machine may be slow; a test never waits for a fixed time instead).
// Returns whether it held. Tests with a Qt event loop use QTest::qWaitFor.
bool waitUntil(const std::function<bool()>& condition, int timeoutMs = 60000);

// `depth` times `open`, then `inner`, then `depth` times `close`: JSON nested that deep.
std::string nested(size_t depth, const std::string& open, const std::string& close,
                   const std::string& inner = "1");
// The most memory this process has held so far, in KiB.
long maxResidentKb();

// The state letter of process `pid` in /proc/<pid>/stat ('R', 'S', 'Z', ...), or 0 when there
// is no such process.
char processState(long pid);
// True once process `pid` has ended. A zombie has ended too: a program whose parent (probe run)
// went first is reparented to this container's PID 1, which need not reap it at once.
bool processHasEnded(long pid);

}  // namespace probe::test
