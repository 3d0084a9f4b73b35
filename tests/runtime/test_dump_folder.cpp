// The writer never leaves its folder: links planted inside the dump (a statistic.csv, a round
// folder, the dump root itself) are not followed, a hard link is not appended to, and the
// refusal is reported. Names of any bytes become safe path components and CSV fields, and two
// ops whose names differ only in a replaced character stay two ops.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "runtime_fixture.h"

namespace probe::test {
namespace {

class DumpFolder : public RuntimeTest {
protected:
    // Runs one layer op named `name` with one input tensor, in a round of its own.
    static void layer(const char* name, const char* argName = nullptr) {
        const int64_t dims[] = {2};
        const float values[] = {1.5f, -2.0f};
        ASSERT_GE(probe_op_begin(name, nullptr, nullptr), 0) << probe_last_error();
        probe_op_tensor(PROBE_INPUT, 0, argName, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                        values, sizeof values);
        probe_op_end();
    }

    std::string roundDir(int round) const {
        return root() + "/data/" + pidDir() + "/" + std::to_string(round);
    }

    format::DumpStatus status() const {
        std::string error;
        auto s = format::readStatusFile(root(), &error);
        EXPECT_TRUE(s) << error;
        return s ? *s : format::DumpStatus{};
    }

    bool saidOnce(const std::string& what) const {
        int times = 0;
        for (const auto& p : status().processes)
            for (const auto& m : p.messages)
                times += m.text.find(what) != std::string::npos ? 1 : 0;
        return times == 1;
    }

    // Every entry below `dir`, links not followed: a planted link leads nowhere from here.
    static void listTree(const std::string& dir, std::vector<std::string>& paths) {
        DIR* d = ::opendir(dir.c_str());
        if (!d) return;
        while (dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            paths.push_back(dir + "/" + name);
            struct stat st;
            if (::lstat((dir + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
                listTree(dir + "/" + name, paths);
        }
        ::closedir(d);
    }

    TempDir outside_{"probe-outside"};
};

TEST_F(DumpFolder, APlantedStatisticCsvLinkIsNotFollowed) {
    const std::string target = outside_ / "precious.txt";
    writeFile(target, "precious\n");
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(format::makeDirectories(roundDir(0)), 0);
    ASSERT_EQ(::symlink(target.c_str(), (roundDir(0) + "/statistic.csv").c_str()), 0);
    layer("Planted");  // round 0: its statistic.csv is the link
    layer("Planted");  // round 1: a folder of its own
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(readFile(target), "precious\n");
    struct stat st;
    ASSERT_EQ(::lstat((roundDir(0) + "/statistic.csv").c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));  // left as it was
    ::unlink((roundDir(0) + "/statistic.csv").c_str());
    EXPECT_EQ(readRows().size(), 1u);  // round 1's row, in its own file
    const auto s = status();
    EXPECT_EQ(s.state, format::DumpState::Incomplete);
    EXPECT_TRUE(saidOnce("statistic.csv is a symbolic link")) << s.toJson().dump(1);
    EXPECT_GE(s.processes.at(0).droppedRows, 1u);
}

TEST_F(DumpFolder, APlantedHardLinkIsNotAppendedTo) {
    const std::string target = outside_ / "precious.csv";
    writeFile(target, std::string(format::kStatisticCsvHeader) + "\n");
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(format::makeDirectories(roundDir(0)), 0);
    if (::link(target.c_str(), (roundDir(0) + "/statistic.csv").c_str()) != 0)
        GTEST_SKIP() << "no hard link between " << outside_.path() << " and " << dir_.path();
    layer("Planted");
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_EQ(readFile(target), std::string(format::kStatisticCsvHeader) + "\n");
    EXPECT_TRUE(saidOnce("statistic.csv has another name elsewhere")) << status().toJson().dump(1);
}

TEST_F(DumpFolder, APlantedRoundFolderLinkReceivesNothing) {
    start(R"({"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true})");
    ASSERT_EQ(format::makeDirectories(root() + "/data/" + pidDir()), 0);
    ASSERT_EQ(::symlink(outside_.path().c_str(), roundDir(1).c_str()), 0);
    NativeModel model({});
    for (int r = 0; r < 3; ++r) model.run();  // round 1 of every layer op goes to the link
    ASSERT_EQ(probe_stop(), PROBE_OK);
    EXPECT_TRUE(listFiles(outside_.path()).empty())
        << listFiles(outside_.path()).size() << " files outside the dump";
    std::set<int64_t> rounds;
    for (const auto& r : readRows()) rounds.insert(r.row.round);
    EXPECT_EQ(rounds, (std::set<int64_t>{0, 2}));
    EXPECT_TRUE(saidOnce("/data/" + pidDir() + "/1 is a symbolic link"))
        << status().toJson().dump(1);
    EXPECT_GT(status().errors, 1u);  // every refused file counted, said once
}

// The writer makes a round's folder before looking into it, and takes a folder it made as
// empty. A folder someone made before it (empty, or holding a statistic.csv of an earlier run)
// is looked into: its statistic.csv is appended to, not replaced. Every file is whole (header
// and rows), and no temporary file stays behind.
TEST_F(DumpFolder, ARoundFolderMadeBeforehandIsLookedIntoAndANewOneIsMadeWhole) {
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ASSERT_EQ(format::makeDirectories(roundDir(0)), 0);  // empty
    ASSERT_EQ(format::makeDirectories(roundDir(1)), 0);
    const std::string header = std::string(format::kStatisticCsvHeader) + "\n";
    const std::string earlierRow = "1,1,0,Earlier,0,input,0,float,nd,2,1,1,1,1,N/A\n";
    writeFile(roundDir(1) + "/statistic.csv", header + earlierRow);
    for (int r = 0; r < 4; ++r) layer("Made");
    ASSERT_EQ(probe_stop(), PROBE_OK);
    for (int r = 0; r < 4; ++r) {
        const std::string text = readFile(roundDir(r) + "/statistic.csv");
        ASSERT_EQ(text.compare(0, header.size(), header), 0) << "round " << r << ": " << text;
        const std::string rows = text.substr(header.size());
        if (r == 1) {
            ASSERT_EQ(rows.compare(0, earlierRow.size(), earlierRow), 0) << rows;
            EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 2) << rows;
        } else {
            EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 1) << rows;
        }
        EXPECT_NE(rows.find(",Made,"), std::string::npos) << rows;
    }
    std::vector<std::string> paths;
    listTree(root(), paths);
    ASSERT_FALSE(paths.empty());
    for (const auto& path : paths)
        EXPECT_EQ(path.find(".tmp"), std::string::npos) << path << " left behind";
    EXPECT_EQ(readRows().size(), 5u);  // the earlier row and one per round
}

// probe run --append in a container: the pids start over at each run, and the new process has
// the pid of one the dump already holds. Their rows go to one folder and read as one process;
// that is said (it was silent). A start again in the same process says nothing.
TEST_F(DumpFolder, AnEarlierProcessWithThisPidIsSaid) {
    format::ProcessDumpStatus earlier;
    earlier.pid = ::getpid();
    earlier.state = format::DumpState::Complete;
    earlier.command = "python3 train.py";
    earlier.started = "2020-01-02T03:04:05Z";
    ASSERT_EQ(format::makeDirectories(root()), 0);
    ASSERT_EQ(format::updateStatusFile(root(), earlier), 0);
    start(R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    layer("Again");
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const std::string said = "this dump already holds a process " + pidDir() +
                             " (\"python3 train.py\", started 2020-01-02T03:04:05Z): an earlier "
                             "program whose pid was used again (as in a container)";
    EXPECT_TRUE(saidOnce(said));
    start("");
    ASSERT_EQ(probe_stop(), PROBE_OK);
    ASSERT_EQ(status().processes.size(), 1u);
    EXPECT_FALSE(saidOnce(said));
}

TEST_F(DumpFolder, ADumpRootThatIsALinkIsRefused) {
    ASSERT_EQ(::symlink(outside_.path().c_str(), root().c_str()), 0);
    writeFile(configPath(), R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    EXPECT_EQ(probe_start(dir_.path().c_str(), configPath().c_str()), PROBE_E_IO);
    EXPECT_NE(std::string(probe_last_error()).find("is a symbolic link"), std::string::npos)
        << probe_last_error();
    EXPECT_TRUE(listFiles(outside_.path()).empty());
}

TEST_F(DumpFolder, NamesOfAnyBytesStayInsideTheDumpAndApart) {
    start(R"({"task": "all", "dump_enable": true, "exec_range": "all"})");
    const std::string longName(300, 'n');
    const std::vector<std::string> names = {"a/b",
                                            "a_b",
                                            "../../escape",
                                            "..",
                                            "line\nbreak",
                                            "tab\tand\x01"
                                            "control",
                                            "caf\xc3\xa9",
                                            "bad\xff\xfe",
                                            "lone\xed\xa0\x80surrogate",
                                            "quote\",comma",
                                            longName,
                                            longName + "x"};
    for (const auto& name : names) layer(name.c_str(), "arg/../..");
    ASSERT_EQ(probe_stop(), PROBE_OK);

    // One op per name: none merged because of a replaced character.
    const auto rows = readRows();
    ASSERT_EQ(rows.size(), names.size());
    std::set<std::string> ids, opNames;
    for (const auto& r : rows) {
        ids.insert(r.row.opId);
        opNames.insert(r.row.opName);
        for (unsigned char c : r.row.opName) EXPECT_GE(c, 0x20) << r.row.opName;
        EXPECT_EQ(r.row.opName.find('/'), std::string::npos)
            << r.row.opName;  // one level: '/' is the separator
        EXPECT_LE(r.row.opName.size(), 220u);
    }
    EXPECT_EQ(ids.size(), names.size());
    EXPECT_EQ(opNames.size(), names.size() - 1);  // only "a/b" and "a_b" read alike...
    EXPECT_TRUE(opNames.count("a_b"));
    EXPECT_TRUE(opNames.count("bad\\xFF\\xFE"));
    EXPECT_TRUE(opNames.count("quote\",comma"));  // quoted in the CSV, read back whole

    // Every file inside the dump, every name a short, plain path component.
    char real[PATH_MAX];
    ASSERT_TRUE(::realpath(root().c_str(), real));
    const std::string rootReal = real;
    std::vector<std::string> paths;
    listTree(root(), paths);
    size_t bins = 0;
    for (const auto& path : paths) {
        ASSERT_TRUE(::realpath(path.c_str(), real)) << path;
        EXPECT_EQ(std::string(real).rfind(rootReal + "/", 0), 0u) << path;
        const std::string name = path.substr(path.rfind('/') + 1);
        EXPECT_LE(name.size(), 255u);
        EXPECT_NE(name, "..");
        for (unsigned char c : name) EXPECT_GE(c, 0x20) << path;
        bins += name.size() > 4 && name.substr(name.size() - 4) == ".bin";
    }
    EXPECT_EQ(bins, names.size());
    for (const auto& r : rows) EXPECT_TRUE(exists(r.row.tensorPath)) << r.row.tensorPath;
    EXPECT_TRUE(listFiles(outside_.path()).empty());
    // The layer files are JSON that parses (names that are not UTF-8 written \xNN).
    size_t layerFiles = 0;
    for (const auto& f : listFiles(root() + "/info/layer")) {
        EXPECT_FALSE(nlohmann::json::parse(readFile(root() + "/info/layer/" + f), nullptr, false)
                         .is_discarded())
            << f;
        ++layerFiles;
    }
    EXPECT_EQ(layerFiles, names.size());
    EXPECT_EQ(status().state, format::DumpState::Complete);
}

// Ops inside a layer op take their names as views when plain and sanitized copies otherwise:
// each name and type reads back as the layer path would write it, and arguments alike.
TEST_F(DumpFolder, NamesOfOpsInsideLayersAreMadeSafeAsLayerNamesAre) {
    start(
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true})");
    const std::string longName(300, 'n');
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"plain", "plain"},
        {"a/b", "a_b"},
        {"line\nbreak", "line_break"},
        {"bad\xff\xfe", "bad\\xFF\\xFE"},
        {"quote\",comma", "quote\",comma"},
        {longName, ""}};  // cut, with a hash
    ASSERT_GE(probe_op_begin("outer", nullptr, nullptr), 0) << probe_last_error();
    const int64_t dims[] = {2};
    const float values[] = {1.5f, -2.0f};
    for (const auto& [raw, safe] : expected) {
        ASSERT_GE(probe_op_begin(raw.c_str(), raw.c_str(), nullptr), 0) << probe_last_error();
        probe_op_tensor(PROBE_INPUT, 0, raw.c_str(), PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                        values, sizeof values);
        probe_op_end();
    }
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);

    const auto rows = readRows();
    ASSERT_EQ(rows.size(), expected.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i].row;
        const std::string& safe = expected[i].second;
        const std::string own = row.opName.substr(row.opName.find('/') + 1);
        EXPECT_EQ(row.opName.rfind("outer/", 0), 0u) << row.opName;
        EXPECT_EQ(row.opType, own) << "the type is sanitized as the name is";
        EXPECT_EQ(row.index, "0_" + own) << "the argument name too";
        if (safe.empty()) {
            EXPECT_LT(own.size(), 220u);
            EXPECT_EQ(own.rfind(std::string(100, 'n'), 0), 0u);
            EXPECT_NE(own.find('~'), std::string::npos) << own;
        } else {
            EXPECT_EQ(own, safe);
        }
    }
}

}  // namespace
}  // namespace probe::test
