// SPDX-License-Identifier: GPL-3.0-or-later
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "probe/format/file_util.h"
#include "test_support.h"

using namespace probe::format;

namespace {

std::vector<std::string> entriesOf(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return names;
    while (dirent* e = ::readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
            names.push_back(e->d_name);
    ::closedir(d);
    return names;
}

}  // namespace

// A file written again (a step's dump.json at each stop()) is replaced whole: the new content
// under the name, no temporary left, and a reader that opened the old one still reads it all.
TEST(WriteFileAtomically, AFileWrittenAgainIsReplacedWholeAndNoTemporaryIsLeft) {
    probe::test::TempDir dir;
    const std::string path = dir / "dump.json";
    ASSERT_EQ(writeFileAtomically(path, "{}"), 0);
    const int reader = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(reader, 0);
    ASSERT_EQ(writeFileAtomically(path, "{\"data\": {\"a\": 1}}"), 0);
    EXPECT_EQ(probe::test::readFile(path), "{\"data\": {\"a\": 1}}");
    char old[8] = {};
    EXPECT_EQ(::read(reader, old, sizeof old), 2);
    EXPECT_EQ(std::string(old), "{}");
    ::close(reader);
    ASSERT_EQ(writeFileAtomically(path, "third"), 0);
    EXPECT_EQ(probe::test::readFile(path), "third");
    EXPECT_EQ(entriesOf(dir.path()), std::vector<std::string>{"dump.json"});
}

// Something planted under the name: a symbolic link is replaced, never followed (its target
// keeps its content); a directory is an error, left as it was, with no temporary left.
TEST(WriteFileAtomically, ALinkInTheWayIsReplacedNotFollowedAndADirectoryIsAnError) {
    probe::test::TempDir dir;
    const std::string target = dir / "target.txt";
    ASSERT_EQ(writeFileAtomically(target, "precious"), 0);
    const std::string link = dir / "statistic.json";
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
    ASSERT_EQ(writeFileAtomically(link, "new"), 0);
    struct stat st;
    ASSERT_EQ(::lstat(link.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(probe::test::readFile(link), "new");
    EXPECT_EQ(probe::test::readFile(target), "precious");

    const std::string folder = dir / "in_the_way";
    ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
    EXPECT_NE(writeFileAtomically(folder, "x"), 0);
    ASSERT_EQ(::lstat(folder.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    auto names = entriesOf(dir.path());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"in_the_way", "statistic.json", "target.txt"}));
}

// A file the user named (`probe compare --csv FILE`, a tensor exported) is written as the shell's
// `>` writes it: through a link (kept), into a FIFO or device in place (they were renamed over:
// /dev/full became a regular file, a FIFO's reader got nothing), a dangling link's target made.
TEST(WriteUserFile, ALinkIsFollowedAndAFifoOrDeviceIsWrittenInPlace) {
    probe::test::TempDir dir;
    const std::string target = dir / "target.csv", link = dir / "link.csv";
    ASSERT_EQ(writeUserFile(target, "old"), 0);
    ASSERT_EQ(::symlink("target.csv", link.c_str()), 0);
    ASSERT_EQ(writeUserFile(link, "new"), 0);
    struct stat st;
    ASSERT_EQ(::lstat(link.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    EXPECT_EQ(probe::test::readFile(target), "new");

    const std::string dangling = dir / "dangling.csv";
    ASSERT_EQ(::symlink("made.csv", dangling.c_str()), 0);
    ASSERT_EQ(writeUserFile(dangling, "made"), 0);
    EXPECT_EQ(probe::test::readFile(dir / "made.csv"), "made");

    const std::string fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string received;
    std::thread reader([&] { received = probe::test::readFile(fifo); });
    EXPECT_EQ(writeUserFile(fifo, "through the pipe"), 0);
    reader.join();
    EXPECT_EQ(received, "through the pipe");
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));

    // A file made under a name of its own (an .xlsx) goes through the FIFO the same way.
    const std::string temporary = userFileTemporary(fifo);
    ASSERT_EQ(writeFileAtomically(temporary, "made elsewhere"), 0);
    reader = std::thread([&] { received = probe::test::readFile(fifo); });
    EXPECT_EQ(moveIntoUserFile(temporary, fifo), 0);
    reader.join();
    EXPECT_EQ(received, "made elsewhere");
    EXPECT_FALSE(fileExists(temporary));

    if (::stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
        EXPECT_EQ(writeUserFile("/dev/full", "nowhere"), ENOSPC);
        EXPECT_EQ(checkUserFileWritable("/dev/full"), 0);
        ASSERT_EQ(::stat("/dev/full", &st), 0);
        EXPECT_TRUE(S_ISCHR(st.st_mode));
    }
    EXPECT_EQ(writeUserFile(dir.path(), "x"), EISDIR);
    EXPECT_EQ(checkUserFileWritable(dir.path()), EISDIR);
    EXPECT_EQ(checkUserFileWritable(dir / "missing/x.csv"), ENOENT);
    EXPECT_EQ(checkUserFileWritable(dir / "new.csv"), 0);
    auto names = entriesOf(dir.path());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"dangling.csv", "link.csv", "made.csv", "pipe",
                                               "target.csv"}));
}

// "-", and the file standard output goes to (/dev/stdout), are written through standard output
// at its place: after what was printed, not over it (the file was renamed away from the shell).
TEST(WriteUserFile, StandardOutputIsWrittenThroughItsDescriptor) {
    probe::test::TempDir dir;
    const std::string captured = dir / "stdout.txt";
    std::fflush(stdout);
    const int saved = ::dup(STDOUT_FILENO);
    const int file = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(file, 0);
    ASSERT_EQ(::dup2(file, STDOUT_FILENO), STDOUT_FILENO);
    std::fputs("report\n", stdout);
    const int dash = writeUserFile("-", "first\n");
    const int named = writeUserFile(captured, "second\n");
    std::fflush(stdout);
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    ::close(file);
    EXPECT_EQ(dash, 0);
    EXPECT_EQ(named, 0);
    EXPECT_EQ(probe::test::readFile(captured), "report\nfirst\nsecond\n");
}

// A listing says what each entry is without a stat for most (a dump of ten thousand rounds was a
// system call a round at every poll), as stat would: links followed, and a link that cannot be
// (a loop, a dangling one) said so; the kinds listDirectory filters by agree.
TEST(ListDirectory, EntriesSayWhatTheyAreLinksFollowed) {
    probe::test::TempDir dir;
    ASSERT_EQ(::mkdir((dir / "sub").c_str(), 0755), 0);
    probe::test::writeFile(dir / "file", "x");
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
    ASSERT_EQ(::symlink("sub", (dir / "to_sub").c_str()), 0);
    ASSERT_EQ(::symlink("file", (dir / "to_file").c_str()), 0);
    ASSERT_EQ(::symlink("nowhere", (dir / "dangling").c_str()), 0);
    ASSERT_EQ(::symlink("loop", (dir / "loop").c_str()), 0);
    const auto entries = listDirectoryEntries(dir.path());
    std::vector<std::string> seen;
    for (const auto& e : entries) {
        seen.push_back(e.name + (e.isDirectory ? " dir" : "") + (e.isLink ? " link" : "") +
                       (e.unfollowed ? " unfollowed" : ""));
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"dangling link unfollowed", "fifo", "file",
                                              "loop link unfollowed", "sub dir", "to_file link",
                                              "to_sub dir link"}));
    EXPECT_EQ(listDirectory(dir.path(), EntryKind::Directories),
              (std::vector<std::string>{"sub", "to_sub"}));
    EXPECT_EQ(listDirectory(dir.path(), EntryKind::Files),
              (std::vector<std::string>{"fifo", "file", "to_file"}));
    EXPECT_EQ(listDirectory(dir.path(), EntryKind::NotDirectories),
              (std::vector<std::string>{"dangling", "fifo", "file", "loop", "to_file"}));
    EXPECT_TRUE(listDirectoryEntries(dir / "file").empty());
    EXPECT_TRUE(listDirectoryEntries(dir / "missing").empty());
}

// "." and ".." are taken by their text, slashes doubled or at the end dropped: a rank folder's
// "../0_1335" is the other rank's folder (the dump readers took it for this one's).
TEST(NormalizedPath, DotsAndSlashesAreTakenByTheirText) {
    EXPECT_EQ(normalizedPath("/a/b/../c//"), "/a/c");
    EXPECT_EQ(normalizedPath("/a/./b/./"), "/a/b");
    EXPECT_EQ(normalizedPath("/a/b/c/../../d"), "/a/d");
    EXPECT_EQ(normalizedPath("/.."), "/");
    EXPECT_EQ(normalizedPath("/"), "/");
    EXPECT_EQ(normalizedPath("//a//b"), "/a/b");
    char cwd[4096];
    ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
    const std::string here = cwd;
    EXPECT_EQ(normalizedPath("."), here);
    EXPECT_EQ(normalizedPath("x/../y"), here + "/y");
    EXPECT_EQ(normalizedPath(".."), here.substr(0, std::max<size_t>(1, here.rfind('/'))));
}
