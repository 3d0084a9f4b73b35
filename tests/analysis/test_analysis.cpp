// Reading dumps back: the summary and the comparison of two runs, on dumps the runtime wrote
// from the native test engine.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "analysis/atb_dump.h"
#include "analysis/compare.h"
#include "analysis/compare_report.h"
#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "analysis/tensor_view.h"
#include "native_model.h"
#include "probe/format/dump_status.h"
#include "probe/format/tensor_bin.h"
#include "probe/probe.h"
#include "read_dump.h"
#include "test_support.h"

namespace probe::analysis {
namespace {

using probe::test::TempDir;

// Runs the native model for `rounds` under a config that dumps every op with its tensors (and
// statistics, unless `task` is "tensor").
std::string dumpModel(const TempDir& dir, const std::string& name,
                      probe::test::NativeModelOptions options, int rounds,
                      const std::string& task = "all") {
    const std::string out = dir / name;
    probe::test::writeFile(
        dir / (name + ".json"),
        R"({"task": ")" + task +
            R"(", "dump_enable": true, "exec_range": "all", "save_child": true, "filter_level": 1})");
    ::setenv("PROBE_QUIET", "1", 1);
    EXPECT_EQ(probe_start(out.c_str(), (dir / (name + ".json")).c_str()), PROBE_OK);
    probe::test::NativeModel model(options);
    for (int r = 0; r < rounds; ++r) model.run();
    EXPECT_EQ(probe_stop(), PROBE_OK);
    return out + "/atb_dump_data";
}

// Reports one float tensor (a vector) of the op begun on this thread: its first input or output.
void floatTensor(int io, const std::vector<float>& values) {
    const int64_t dims[1] = {static_cast<int64_t>(values.size())};
    probe_op_tensor(io, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1, values.data(),
                    values.size() * sizeof(float));
}

// Starts the probe writing a statistics dump of every op to <dir>/dump; returns that folder.
std::string startStatisticsDump(const TempDir& dir) {
    const std::string out = dir / "dump";
    probe::test::writeFile(
        dir / "config.json",
        R"({"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true})");
    ::setenv("PROBE_QUIET", "1", 1);
    EXPECT_EQ(probe_start(out.c_str(), (dir / "config.json").c_str()), PROBE_OK);
    return out;
}

TEST(Analysis, FindsTheDumpRootFromAnyLevel) {
    TempDir dir;
    const std::string root = dumpModel(dir, "run", {}, 1);
    EXPECT_EQ(findAtbDumpRoot(dir / "run"), root);
    EXPECT_EQ(findAtbDumpRoot(root), root);
    EXPECT_EQ(findAtbDumpRoot(root + "/data"), root);
    EXPECT_FALSE(findAtbDumpRoot(dir.path()));
}

// An attention mask's -inf comes first in every run, and "first Inf" names it: the summary also
// says where an overflow is born (finite inputs, an infinite output; masks and fills not
// counted), as probe overflow and the app's status bar do.
TEST(Analysis, SummarySaysWhereTheOverflowIsBornBesidesTheFirstInf) {
    TempDir dir;
    const std::string out = startStatisticsDump(dir);
    const auto op = [&](const char* name, const char* type, float in, float outValue) {
        probe_op_begin(name, type, nullptr);
        floatTensor(PROBE_INPUT, {in, in});
        floatTensor(PROBE_OUTPUT, {outValue, 1});
        probe_op_end();
    };
    for (int round = 0; round < 2; ++round) {
        probe_op_begin("L", "Layer", nullptr);
        op("masked_fill", "aten::masked_fill", 1, -INFINITY);
        op("mul", "aten::mul", 3e38f, round == 1 ? INFINITY : 2);
        probe_op_end();
    }
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const std::string text = formatSummary(summarizeDump(indexOf(out + "/atb_dump_data")));
    EXPECT_NE(text.find("  first Inf: round 0, op L/masked_fill (0_0) [aten::masked_fill]"),
              std::string::npos)
        << text;
    EXPECT_NE(
        text.find("  overflow born: round 1, op L/mul (0_1) [aten::mul], output 0: max=inf\n"),
        std::string::npos)
        << text;
}

// An Inf that came in with the inputs of the first op dumped is born nowhere in the dump: the
// summary says so, not that it is a mask's.
TEST(Analysis, SummarySaysWhenNoDumpedOpMadeTheOverflow) {
    TempDir dir;
    const std::string out = startStatisticsDump(dir);
    probe_op_begin("L", "Layer", nullptr);
    probe_op_begin("mul", "aten::mul", nullptr);
    floatTensor(PROBE_INPUT, {INFINITY, 1});
    floatTensor(PROBE_OUTPUT, {INFINITY, 1});
    probe_op_end();
    probe_op_end();
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const std::string text = formatSummary(summarizeDump(indexOf(out + "/atb_dump_data")));
    EXPECT_NE(text.find("  overflow born: none found among the ops dumped: "), std::string::npos)
        << text;
    EXPECT_NE(text.find("no dumped op turns finite inputs into them"), std::string::npos) << text;
}

TEST(Analysis, SummaryCountsAndFirstNan) {
    TempDir dir;
    probe::test::NativeModelOptions options;
    options.nanInLayer = 1;
    const std::string root = dumpModel(dir, "run", options, 3);
    const auto summary = summarizeDump(indexOf(root));
    EXPECT_EQ(summary.state, format::DumpState::Complete);
    EXPECT_EQ(summary.processes.size(), 1u);
    EXPECT_EQ(summary.layerOps, 4u);
    EXPECT_EQ(summary.ops, 24u);  // every op of the model
    // Those with rows: the distinct op ids of the statistic.csv files, read here.
    std::set<std::string> idsWithRows;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root + "/data")) {
        if (entry.path().filename() != "statistic.csv") continue;
        std::istringstream lines(probe::test::readFile(entry.path().string()));
        std::string line;
        std::getline(lines, line);  // the header
        while (std::getline(lines, line)) {
            std::istringstream fields(line);
            std::string field;
            for (int column = 0; column <= 4; ++column) std::getline(fields, field, ',');
            idsWithRows.insert(field);
        }
    }
    ASSERT_FALSE(idsWithRows.empty());
    EXPECT_EQ(summary.opsWithRows, idsWithRows.size());
    EXPECT_NE(formatSummary(summary).find("ops: 24 (4 layer-level, " +
                                          std::to_string(idsWithRows.size()) + " with rows)"),
              std::string::npos)
        << formatSummary(summary);
    EXPECT_EQ(summary.firstRound, 0);
    EXPECT_EQ(summary.lastRound, 2);
    EXPECT_GT(summary.rows, 100u);
    ASSERT_TRUE(summary.firstNan);
    EXPECT_EQ(summary.firstNan->round, 0);
    EXPECT_EQ(summary.firstNan->op, "Decoder_layer_1/Mlp/MatMulKernel (2_2_0)");
    EXPECT_EQ(summary.firstNan->tensor, "output 0");
    const std::string text = formatSummary(summary);
    EXPECT_NE(text.find("first NaN: round 0, op Decoder_layer_1/Mlp/MatMulKernel (2_2_0) "
                        "[MatMulKernel], output 0: max=nan"),
              std::string::npos)
        << text;
}

// A process or round folder is summarised alone: its rows, ops, files and first NaN, recounted
// here from its own statistic.csv files, and its process's state, not another's death.
TEST(Analysis, SummaryOfAPartIsOfThatPartAlone) {
    TempDir dir;
    probe::test::NativeModelOptions options;
    options.nanInLayer = 1;  // a NaN in every round
    const std::string root = dumpModel(dir, "run", options, 3);
    std::vector<std::string> processFolders;
    for (const auto& entry : std::filesystem::directory_iterator(root + "/data"))
        processFolders.push_back(entry.path().string());
    ASSERT_EQ(processFolders.size(), 1u);
    const std::string process = std::filesystem::path(processFolders[0]).filename().string();
    format::ProcessDumpStatus other;  // another process of the job, killed
    other.pid = 1;
    other.state = format::DumpState::Incomplete;
    other.endedBy = format::ProgramEnd{format::ProgramEnd::How::Signaled, SIGKILL, "probe run"};
    ASSERT_EQ(format::updateStatusFile(root, other), 0);
    const auto index = indexOf(root);

    const std::string roundFolder = processFolders[0] + "/2";
    const auto location = locateDump(roundFolder, nullptr);
    ASSERT_TRUE(location);
    EXPECT_EQ(location->scope.process, process);
    EXPECT_EQ(location->scope.round, 2);
    EXPECT_EQ(location->folder, roundFolder);
    const auto part = summarizeDumpPart(index, location->scope, location->folder);
    // Recounted from the round's files.
    uint64_t rows = 0, files = 0;
    std::set<std::string> ids;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(roundFolder)) {
        if (!entry.is_regular_file()) continue;
        ++files;
        if (entry.path().filename() != "statistic.csv") continue;
        std::istringstream lines(probe::test::readFile(entry.path().string()));
        std::string line;
        std::getline(lines, line);  // the header
        while (std::getline(lines, line)) {
            ++rows;
            std::istringstream fields(line);
            std::string field;
            for (int column = 0; column <= 4; ++column) std::getline(fields, field, ',');
            ids.insert(field);
        }
    }
    ASSERT_GT(rows, 0u);
    EXPECT_EQ(part.rows, rows);
    EXPECT_EQ(part.files, files);
    EXPECT_EQ(part.ops, ids.size());
    EXPECT_EQ(part.opsWithRows, ids.size());
    EXPECT_EQ(part.rounds, 1u);
    EXPECT_EQ(part.firstRound, 2);
    ASSERT_EQ(part.processes.size(), 1u);
    EXPECT_EQ(part.processes[0].rows, rows);
    ASSERT_TRUE(part.firstNan);
    EXPECT_EQ(part.firstNan->round, 2);
    EXPECT_EQ(part.part, process + ", round 2");
    const std::string text = formatSummary(part);
    EXPECT_NE(text.find("\n  only " + process + ", round 2 of it:\n"), std::string::npos) << text;
    EXPECT_NE(text.find("first NaN: round 2, op Decoder_layer_1/Mlp/MatMulKernel"),
              std::string::npos)
        << text;
    // Its process's state: the other's death is not this part's.
    EXPECT_EQ(part.state, format::DumpState::Complete);
    EXPECT_EQ(text.find("SIGKILL"), std::string::npos) << text;

    // The whole dump: every round, the first NaN in round 0, and the killed process said.
    const auto whole = summarizeDump(index);
    EXPECT_GT(whole.rows, rows);
    EXPECT_EQ(whole.rounds, 3u);
    ASSERT_TRUE(whole.firstNan);
    EXPECT_EQ(whole.firstNan->round, 0);
    EXPECT_TRUE(whole.part.empty());
    EXPECT_NE(formatSummary(whole).find("SIGKILL"), std::string::npos) << formatSummary(whole);

    // The process folder: all three rounds of it.
    const auto processLocation = locateDump(processFolders[0], nullptr);
    ASSERT_TRUE(processLocation);
    const auto ofProcess =
        summarizeDumpPart(index, processLocation->scope, processLocation->folder);
    EXPECT_EQ(ofProcess.rounds, 3u);
    EXPECT_EQ(ofProcess.rows, whole.rows);
    EXPECT_EQ(ofProcess.part, process);
    ASSERT_TRUE(ofProcess.firstNan);
    EXPECT_EQ(ofProcess.firstNan->round, 0);
}

// A dump of tensor data alone has no statistic to judge: its summary does not say "no NaN or
// Inf" of a run whose layer made NaN, it says there is nothing to say it from.
TEST(Analysis, SummaryOfTensorDataAloneMakesNoClaimAboutNaN) {
    TempDir dir;
    probe::test::NativeModelOptions options;
    options.nanInLayer = 1;
    const auto summary = summarizeDump(indexOf(dumpModel(dir, "run", options, 2, "tensor")));
    ASSERT_GT(summary.rows, 0u);
    EXPECT_EQ(summary.rowsWithoutStatistics, summary.rows);
    EXPECT_FALSE(summary.firstNan);
    const std::string text = formatSummary(summary);
    EXPECT_EQ(text.find("no NaN or Inf"), std::string::npos) << text;
    EXPECT_NE(text.find("no statistics in any row (tensor data only)"), std::string::npos) << text;
    // With statistics, the verdict stands.
    const auto clean = summarizeDump(indexOf(dumpModel(dir, "clean", {}, 1)));
    EXPECT_EQ(clean.rowsWithoutStatistics, 0u);
    EXPECT_NE(formatSummary(clean).find("no NaN or Inf in any statistic\n"), std::string::npos)
        << formatSummary(clean);
}

// Tensor files deleted from a dump: its summary said nothing of them, only its file count fell
// (found by a walk that deleted 616 of them). The rows' files that are gone are a problem now.
TEST(Analysis, SummarySaysTheTensorFilesTheRowsNameThatAreGone) {
    TempDir dir;
    const std::string root = dumpModel(dir, "run", {}, 1, "tensor");
    const auto whole = summarizeDump(indexOf(root));
    ASSERT_GT(whole.tensorFiles, 2u);
    EXPECT_TRUE(whole.problems.empty()) << formatSummary(whole);
    std::vector<std::string> bins;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
        if (entry.path().extension() == ".bin") bins.push_back(entry.path().string());
    std::sort(bins.begin(), bins.end());
    ASSERT_GT(bins.size(), 2u);
    ASSERT_EQ(::unlink(bins[0].c_str()), 0);
    ASSERT_EQ(::unlink(bins[1].c_str()), 0);
    const auto cut = summarizeDump(indexOf(root));
    const std::string text = formatSummary(cut);
    ASSERT_EQ(cut.problems.size(), 1u) << text;
    EXPECT_EQ(cut.problems[0].rfind("2 tensor files that the rows name are not in the dump (the "
                                    "first: ",
                                    0),
              0u)
        << text;
    EXPECT_TRUE(cut.problems[0].find(bins[0]) != std::string::npos ||
                cut.problems[0].find(bins[1]) != std::string::npos)
        << text;
}

TEST(Analysis, SummarySaysTheProbesMessagesWholeOnOneLineEach) {
    TempDir dir;
    const std::string root = dumpModel(dir, "a", {}, 1);
    format::ProcessDumpStatus other;
    other.pid = 1;
    other.state = format::DumpState::Complete;
    other.messages = {{format::MessageLevel::Warning,
                       "config rejected, the previous one stays in force:\nc.json: key \"ids\": "
                       "bad\nc.json: key \"task\": bad"},
                      {format::MessageLevel::Error, "cannot write x.bin: No space left on device"}};
    ASSERT_EQ(format::updateStatusFile(root, other), 0);
    const std::string text = formatSummary(summarizeDump(indexOf(root)));
    EXPECT_NE(text.find("  warning: config rejected, the previous one stays in force: c.json: key "
                        "\"ids\": bad; c.json: key "
                        "\"task\": bad\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  runtime error: cannot write x.bin: No space left on device\n"),
              std::string::npos)
        << text;

    // A status file is input like any other: control characters are shown escaped, and of
    // many messages the newest 20 (200,000 holding terminal escapes were printed whole).
    for (int i = 0; i < 30; ++i)
        other.messages.push_back(
            {format::MessageLevel::Error, "m" + std::to_string(i) + "\x1b[31m\r"});
    ASSERT_EQ(format::updateStatusFile(root, other), 0);
    const std::string many = formatSummary(summarizeDump(indexOf(root)));
    EXPECT_EQ(many.find('\x1b'), std::string::npos);
    EXPECT_EQ(many.find('\r'), std::string::npos);
    EXPECT_NE(many.find("  (12 earlier messages of the probe not shown)\n"), std::string::npos)
        << many;
    EXPECT_NE(many.find("  runtime error: m29\\x1B[31m\\x0D\n"), std::string::npos) << many;
    EXPECT_EQ(many.find("runtime error: m9\\"), std::string::npos) << many;
    EXPECT_NE(many.find("runtime error: m10\\"), std::string::npos) << many;
}

// probe run killed with its program: the status says running for ever. A reader on the same
// machine sees the process is gone and says how the dump ended.
TEST(Analysis, AProcessOfThisMachineThatIsGoneWithoutAWordIsSaidToHaveVanished) {
    TempDir dir;
    const std::string root = dumpModel(dir, "a", {}, 1);
    format::ProcessDumpStatus gone;
    gone.pid = 99999999;  // a pid that cannot exist
    gone.host = format::localHostName();
    gone.pidNamespace = format::localPidNamespace();
    ASSERT_EQ(format::updateStatusFile(root, gone), 0);
    const DumpIndex index = indexOf(root);
    ASSERT_TRUE(index.status());
    EXPECT_EQ(index.status()->state, format::DumpState::Incomplete);
    const std::string text = formatSummary(summarizeDump(index));
    EXPECT_NE(text.find("ended without stopping its probe (killed or crashed)"), std::string::npos)
        << text;
    gone.host += "-other";  // of another machine: as it says
    ASSERT_EQ(format::updateStatusFile(root, gone), 0);
    const DumpIndex elsewhere = indexOf(root);
    ASSERT_TRUE(elsewhere.status());
    EXPECT_EQ(elsewhere.status()->state, format::DumpState::Running);
}

// Processes that ended alike are said together: the header named one of them as if it were the
// only one ("process 1 exited with code 0" of three that did).
TEST(Analysis, SummarySaysProcessesThatEndedAlikeTogether) {
    TempDir dir;
    const std::string root = dumpModel(dir, "a", {}, 1);
    const auto ended = [&](int64_t pid, format::ProgramEnd::How how, int code, bool cutOff) {
        format::ProcessDumpStatus p;
        p.pid = pid;
        p.state = cutOff ? format::DumpState::Incomplete : format::DumpState::Complete;
        p.endedBy = format::ProgramEnd{how, code, "probe run"};
        p.cutOff = cutOff;
        ASSERT_EQ(format::updateStatusFile(root, p), 0);
    };
    const auto header = [&] {
        const std::string text = formatSummary(summarizeDump(indexOf(root)));
        return text.substr(0, text.find('\n'));
    };
    using How = format::ProgramEnd::How;
    ended(1, How::Exited, 0, false);
    ended(2, How::Exited, 0, false);
    EXPECT_NE(header().find("; processes 1, 2 exited with code 0)"), std::string::npos) << header();
    ended(::getpid(), How::Exited, 0, false);  // the process that wrote the rows
    EXPECT_NE(header().find("; all 3 processes exited with code 0)"), std::string::npos)
        << header();
    ended(3, How::Signaled, SIGKILL, true);  // the worst end is the one said
    EXPECT_NE(header().find("; process 3 was killed by SIGKILL before its probe could write out "
                            "what was queued: rows of its last 100 ms or so may be missing, more "
                            "if its disk was slower than the program)"),
              std::string::npos)
        << header();
    ended(4, How::Signaled, SIGKILL, true);
    EXPECT_NE(header().find("; processes 3, 4 were killed by SIGKILL before their probe could "
                            "write out what was queued: rows of their last 100 ms"),
              std::string::npos)
        << header();
}

// A dump stopped early (a full disk) is incomplete, but its process ended normally: it read
// "its probe wrote out what was queued (the op running then is cut short)", as a crash does.
// And when the process probed is not the program probe run started (a shell script, a
// launcher), each end is said of its own: "the program" was said of both.
TEST(Analysis, SummarySaysAStoppedDumpAndALaunchersEndOfWhomTheyAre) {
    TempDir dir;
    const std::string root = dumpModel(dir, "a", {}, 1);
    format::ProcessDumpStatus stopped;
    stopped.pid = ::getpid();  // the process that wrote the rows
    stopped.host = format::localHostName();
    stopped.pidNamespace = format::localPidNamespace();
    stopped.state = format::DumpState::Incomplete;
    stopped.dumpStopped = "only 12 MiB free on the disk";
    stopped.endedBy = format::ProgramEnd{format::ProgramEnd::How::Exited, 0, "probe run"};
    ASSERT_EQ(format::updateStatusFile(root, stopped), 0);
    const auto header = [&] {
        const std::string text = formatSummary(summarizeDump(indexOf(root)));
        return text.substr(0, text.find('\n'));
    };
    EXPECT_NE(header().find("(incomplete; the program exited with code 0)"), std::string::npos)
        << header();
    EXPECT_EQ(header().find("wrote out what was queued"), std::string::npos) << header();
    ASSERT_EQ(format::recordProgramEnd(root, 1, "sh -c run.sh",
                                       {format::ProgramEnd::How::Exited, 3, "probe run"}),
              0);
    EXPECT_NE(header().find("(incomplete; process " + std::to_string(::getpid()) +
                            " exited with code 0; the program (not probed itself) exited with code "
                            "3)"),
              std::string::npos)
        << header();
}

// A dump whose data/ was emptied (a copy cut short, a folder removed) read as a complete dump of
// no rows: "no overflow", exit 0. The status file says the process wrote rows: that is said,
// once, however often the dump is polled, and a process that wrote none is no problem.
TEST(Analysis, AProcessWhoseRowsAreAllGoneIsSaid) {
    TempDir dir;
    const std::string root = dumpModel(dir, "a", {}, 1);
    const auto status = format::readStatusFile(root, nullptr);
    ASSERT_TRUE(status);
    ASSERT_EQ(status->processes.size(), 1u);
    const uint64_t written = status->processes[0].rows;
    ASSERT_GT(written, 0u);
    EXPECT_TRUE(indexPolledRepeatedly(root).problems().empty());
    std::filesystem::remove_all(root + "/data");
    ASSERT_TRUE(std::filesystem::create_directory(root + "/data"));
    const std::string key = std::to_string(status->processes[0].pid);
    const DumpIndex index = indexPolledRepeatedly(root);
    ASSERT_EQ(index.problems().size(), 1u);
    EXPECT_EQ(index.problems()[0], root + "/data/" + key + ": no rows there, yet " +
                                       "probe_status.json says process " + key + " wrote " +
                                       std::to_string(written) +
                                       " rows into it: removed, or the dump was not copied whole");
    const std::string text = formatSummary(summarizeDump(index));
    EXPECT_NE(text.find("problem: " + root + "/data/" + key + ": no rows there"), std::string::npos)
        << text;

    auto json = nlohmann::json::parse(probe::test::readFile(root + "/probe_status.json"));
    json["processes"][0]["rows"] = 0;  // it dumped nothing: nothing is missing
    probe::test::writeFile(root + "/probe_status.json", json.dump());
    EXPECT_TRUE(indexPolledRepeatedly(root).problems().empty());
}

// A probe_status.json that is there and cannot be read is not "no probe_status.json": the
// header says it is unreadable, the problem line says why.
TEST(Analysis, SummaryOfAnUnreadableStatusFileDoesNotSayThereIsNone) {
    TempDir dir;
    const std::string root = dumpModel(dir, "a", {}, 1);
    const std::string status = root + "/probe_status.json";
    ASSERT_EQ(::unlink(status.c_str()), 0);
    ASSERT_EQ(::symlink("/dev/zero", status.c_str()), 0);
    const std::string text = formatSummary(summarizeDump(indexOf(root)));
    EXPECT_NE(text.find(" (probe_status.json unreadable; see the problems below)\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("no probe_status.json"), std::string::npos) << text;
    EXPECT_NE(text.find("probe_status.json: is a character device"), std::string::npos) << text;
    ASSERT_EQ(::unlink(status.c_str()), 0);  // none at all
    EXPECT_NE(formatSummary(summarizeDump(indexOf(root))).find(" (no probe_status.json)\n"),
              std::string::npos);
}

// Values of the wrong type in probe_status.json are problems naming the key (they were read as
// defaults without a word: the dump read as running, its process as "process (0)").
TEST(Analysis, SummarySaysTheStatusFilesValuesOfTheWrongType) {
    TempDir dir;
    const std::string root = dumpModel(dir, "a", {}, 1);
    auto status = format::readStatusFile(root, nullptr);
    ASSERT_TRUE(status);
    ASSERT_EQ(status->processes.size(), 1u);
    auto json = nlohmann::json::parse(probe::test::readFile(root + "/probe_status.json"));
    json["processes"][0]["state"] = nlohmann::json::array();
    json["processes"].push_back(7);
    probe::test::writeFile(root + "/probe_status.json", json.dump());
    const std::string text = formatSummary(summarizeDump(indexOf(root)));
    EXPECT_NE(text.find("probe_status.json: processes[0].state: [] is not a string; read as none"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("probe_status.json: processes[1]: 7 is not an object; skipped"),
              std::string::npos)
        << text;

    // None of its processes can be read: the file is unreadable, and each reason is a problem
    // of its own (one was said, "(and 2 more)" hidden; a GUI walk).
    probe::test::writeFile(root + "/probe_status.json",
                           R"({"processes": [{"pid": "x", "state": []}, 7]})");
    const DumpIndex unreadable = indexOf(root);
    const auto& problems = unreadable.problems();
    const auto has = [&](const std::string& line) {
        return std::find(problems.begin(), problems.end(), root + "/probe_status.json: " + line) !=
               problems.end();
    };
    EXPECT_TRUE(has("no process in it can be read"));
    EXPECT_TRUE(has("processes[0].pid: \"x\" is not a whole number; read as none"));
    EXPECT_TRUE(has("processes[0].state: [] is not a string; read as none"));
    EXPECT_TRUE(has("processes[1]: 7 is not an object; skipped"));
    EXPECT_NE(formatSummary(summarizeDump(unreadable))
                  .find(" (probe_status.json unreadable; see the problems below)\n"),
              std::string::npos);
}

TEST(Analysis, IdenticalRunsDoNotDiverge) {
    TempDir dir;
    const std::string a = dumpModel(dir, "a", {}, 2), b = dumpModel(dir, "b", {}, 2);
    const DumpIndex reference = indexOf(a), candidate = indexOf(b);
    const auto result = compareDumps(reference, candidate, {});
    EXPECT_GT(result.tensors.size(), 100u);
    EXPECT_FALSE(result.firstBornHere);
    EXPECT_FALSE(result.diverges());
    EXPECT_EQ(result.unpairedOps, 0u);
    EXPECT_EQ(result.tensorsOnlyInReference + result.tensorsOnlyInCandidate, 0u);
    for (uint32_t i = 0; i < result.tensors.size(); ++i) {
        const auto& t = result.tensors[i];
        ASSERT_TRUE(t.hasData) << result.tensorName(i);  // data compared, aliases followed
        const DataMeasures& m = result.data(i);
        EXPECT_TRUE(m.bytesEqual);
        EXPECT_EQ(m.maxAbsError, 0.0);
        if (m.cosine) {
            EXPECT_DOUBLE_EQ(*m.cosine, 1.0);
        }
    }
    EXPECT_NE(formatCompareReport(result).find("no tensor diverges"), std::string::npos);
}

TEST(Analysis, FirstDivergenceIsWhereTheNumbersChange) {
    TempDir dir;
    probe::test::NativeModelOptions broken;
    broken.nanInLayer = 1;
    const std::string a = dumpModel(dir, "a", {}, 2), b = dumpModel(dir, "b", broken, 2);
    const DumpIndex reference = indexOf(a), candidate = indexOf(b);
    const auto result = compareDumps(reference, candidate, {});
    ASSERT_TRUE(result.firstBornHere) << formatCompareReport(result);
    const auto& op = result.ops[*result.firstBornHere];
    EXPECT_EQ(op.referenceRound, 0);
    EXPECT_EQ(result.reference->op(op.referenceOp).namePath, "Decoder_layer_1/Mlp/MatMulKernel");
    const auto& first = result.tensors[op.cause];
    EXPECT_TRUE(first.isOutput);
    EXPECT_EQ(first.rule, DivergenceRule::NonFinite);
    EXPECT_GT(result.data(op.cause).nonFiniteMismatches, 0u);
    EXPECT_NE(result.explain(op.cause).find("NaN/Inf in one run only"), std::string::npos)
        << result.explain(op.cause);
    const std::string report = formatCompareReport(result);
    EXPECT_NE(report.find("first divergence, born here: round 0  Decoder_layer_1/Mlp/MatMulKernel "
                          "(MatMulKernel)"),
              std::string::npos)
        << report;
    // Every op that finished before it began matches (and there are such ops).
    size_t before = 0;
    for (const auto& other : result.ops)
        if (other.finished < op.began) {
            EXPECT_EQ(other.verdict, OpVerdict::Matches);
            ++before;
        }
    EXPECT_GT(before, 0u);
    const std::string csv = compareResultCsv(result);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "Execution Count,Op Name,Op Type,Input/Output,Index,Shape,Reference Max,Candidate "
              "Max,Reference Mean,"
              "Candidate Mean,Reference Norm,Candidate Norm,Cosine,Max Abs Error,Max Relative "
              "Error,Diverges,Why,"
              "Op Verdict,Rule,Worst Element,EucDist,One Thousandth Err Ratio,Five Thousandths Err "
              "Ratio,Max ULP Error,"
              "Scale,Reference Min,Candidate Min,Op Id,Process");
    EXPECT_NE(csv.find("Decoder_layer_1/Mlp/MatMulKernel,MatMulKernel,output,0,4x8,"),
              std::string::npos);
}

// A layer whose control flow changes in one round: ids are positions, so in round 1 its second
// child has the id its first child has in round 0. With `extraOpInRound1`, round 1 runs an
// arange (int64) before the add.
std::string dumpBranchingLayer(const TempDir& dir, const std::string& name, bool extraOpInRound1) {
    const std::string out = dir / name;
    probe::test::writeFile(
        dir / (name + ".json"),
        R"({"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true})");
    ::setenv("PROBE_QUIET", "1", 1);
    EXPECT_EQ(probe_start(out.c_str(), (dir / (name + ".json")).c_str()), PROBE_OK);
    int64_t steps[4] = {0, 1, 2, 3};
    const int64_t dims[1] = {4};
    for (int round = 0; round < 2; ++round) {
        probe_op_begin("L", "Layer", nullptr);
        if (round == 1 && extraOpInRound1) {
            probe_op_begin("arange", "aten::arange", nullptr);
            probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_INT64, PROBE_FORMAT_ND, dims, 1,
                            steps, sizeof steps);
            probe_op_end();
        }
        probe_op_begin("add", "aten::add", nullptr);
        floatTensor(PROBE_INPUT, {1, 2, 3, 4});
        floatTensor(PROBE_OUTPUT, {2, 3, 4, 5});
        probe_op_end();
        probe_op_end();
    }
    EXPECT_EQ(probe_stop(), PROBE_OK);
    return out + "/atb_dump_data";
}

TEST(Analysis, AnIdNamesAnotherOpWhenTheControlFlowChanges) {
    TempDir dir;
    const std::string a = dumpBranchingLayer(dir, "a", false),
                      b = dumpBranchingLayer(dir, "b", true);
    const DumpIndex index = indexOf(b);
    // "0_0" is the add in round 0 and the arange in round 1: two ops. The add ran as "0_1" in
    // round 1, shifted by the arange: one op with the rows of both rounds (it was two, and the
    // add's plot across rounds lacked the round that changed).
    std::vector<std::string> children;
    for (uint32_t op = 0; op < index.opCount(); ++op)
        if (index.op(op).depth == 1)
            children.push_back(index.op(op).id + " " + index.op(op).name + " rounds " +
                               std::to_string(index.op(op).rounds.size()));
    std::sort(children.begin(), children.end());
    EXPECT_EQ(children, (std::vector<std::string>{"0_0 add rounds 2", "0_0 arange rounds 1"}));
    const uint32_t add = index.findOp(0, "0_0");
    ASSERT_EQ(index.op(add).name, "add");
    EXPECT_EQ(index.idIn(add, 0), "0_0");
    EXPECT_EQ(index.idIn(add, 1), "0_1");
    EXPECT_EQ(index.describeOp(add), "L/add (0_0; 0_1 in round 1)");
    EXPECT_EQ(index.describeOp(add, 1), "L/add (0_1)");
    // The comparison pairs the adds by name, not the add with the arange.
    const DumpIndex reference = indexOf(a);
    const auto result = compareDumps(reference, index, {});
    EXPECT_FALSE(result.diverges()) << formatCompareReport(result);
    ASSERT_EQ(result.unpairedOps, 1u);  // the arange
    EXPECT_FALSE(result.unpaired[0].inReference);
    EXPECT_EQ(index.op(result.unpaired[0].op).name, "arange");
    ASSERT_FALSE(result.tensors.empty());  // the adds' tensors were paired
    for (const auto& t : result.tensors)
        EXPECT_EQ(reference.text(reference.row(t.referenceRow).dtype),
                  index.text(index.row(t.candidateRow).dtype));
}

// A layer whose control flow changes in some rounds, the ops after the change shifted: an op
// is one tree row whatever id it ran under, as long as the dump shows where it went. Round 1
// runs an arange and an eq before the module M and the second add; round 3 runs a third add.
TEST(Analysis, AnOpShiftedByOpsRunBeforeItStaysOneOpWithItsIdOfEachRound) {
    TempDir dir;
    const std::string out = startStatisticsDump(dir);
    const auto op = [&](const char* name, float value) {
        probe_op_begin(name, name, nullptr);
        floatTensor(PROBE_INPUT, {value, value, value, value});
        floatTensor(PROBE_OUTPUT, {value, value, value, value});
        probe_op_end();
    };
    for (int round = 0; round < 4; ++round) {
        probe_op_begin("L", "Layer", nullptr);
        op("add", 1);
        if (round == 1) {
            op("arange", 2);
            op("eq", 3);
        }
        probe_op_begin("M", "Module", nullptr);  // no rows of its own: named by its children's
        op("mm", 4);
        op("relu", 5);
        probe_op_end();
        op("add", 10.0f + static_cast<float>(round));
        if (round == 3) op("add", 7);
        probe_op_end();
    }
    ASSERT_EQ(probe_stop(), PROBE_OK);
    const DumpIndex index = indexOf(out + "/atb_dump_data");
    std::vector<std::string> ops;
    for (uint32_t o = 0; o < index.opCount(); ++o)
        if (index.op(o).depth > 0)
            ops.push_back(index.op(o).id + " " + index.op(o).namePath + " rounds " +
                          std::to_string(index.op(o).rounds.size()));
    std::sort(ops.begin(), ops.end());
    // Before, round 1's M, mm, relu and second add were ops of their own (0_3, 0_3_0, 0_3_1,
    // 0_4), each of one round. Round 3's third add is an op of its own: both adds ran there.
    EXPECT_EQ(ops, (std::vector<std::string>{"0_0 L/add rounds 4", "0_1 L/M rounds 0",
                                             "0_1 L/arange rounds 1", "0_1_0 L/M/mm rounds 4",
                                             "0_1_1 L/M/relu rounds 4", "0_2 L/add rounds 4",
                                             "0_2 L/eq rounds 1", "0_3 L/add rounds 1"}));
    const uint32_t layer = index.findOp(0, "0");
    ASSERT_NE(layer, kNone);
    uint32_t module = kNone, secondAdd = kNone;
    for (uint32_t child : index.op(layer).children) {
        if (index.op(child).name == "M") module = child;
        if (index.op(child).name == "add" && index.op(child).id == "0_2") secondAdd = child;
    }
    ASSERT_NE(module, kNone);
    ASSERT_NE(secondAdd, kNone);
    EXPECT_EQ(index.idIn(module, 0), "0_1");
    EXPECT_EQ(index.idIn(module, 1), "0_3");
    EXPECT_EQ(index.idIn(index.op(module).children.at(0), 1), "0_3_0");
    EXPECT_EQ(index.idIn(secondAdd, 1), "0_4");
    EXPECT_EQ(index.idIn(secondAdd, 2), "0_2");
    EXPECT_EQ(index.describeOp(secondAdd), "L/add (0_2; 0_4 in round 1)");
    // Its rows are its own in every round: the input it was given, round by round.
    std::vector<double> maxima;
    for (uint32_t slot : index.op(secondAdd).tensorSlots)
        if (!index.slot(slot).isOutput)
            for (uint32_t row : index.slot(slot).rows)
                maxima.push_back(index.row(row).get(Stat::Max));
    EXPECT_EQ(maxima, (std::vector<double>{10, 11, 12, 13}));
}

// Rounds of one layer's children ("M[pq]": a module M running p and q), dumped through the C
// API, statistics only. Every op's output says which op it is: ten times its name's first
// letter, plus its place among the round's ops of that name (the first b 981, the second 982).
DumpIndex dumpLayerRounds(const TempDir& dir, const std::vector<std::vector<std::string>>& rounds) {
    const std::string out = startStatisticsDump(dir);
    for (const auto& children : rounds) {
        std::map<std::string, int> seen;
        probe_op_begin("L", "Layer", nullptr);
        for (const std::string& child : children) {
            const std::string name = child.substr(0, child.find('['));
            const float x = static_cast<float>(10 * name[0] + ++seen[name]);
            probe_op_begin(name.c_str(), name.c_str(), nullptr);
            if (child.find('[') != std::string::npos)
                for (char inner : child.substr(child.find('[')))
                    if (std::isalpha(static_cast<unsigned char>(inner))) {
                        const std::string innerName(1, inner);
                        probe_op_begin(innerName.c_str(), innerName.c_str(), nullptr);
                        floatTensor(PROBE_OUTPUT, {x});
                        probe_op_end();
                    }
            floatTensor(PROBE_OUTPUT, {x});
            probe_op_end();
        }
        probe_op_end();
    }
    EXPECT_EQ(probe_stop(), PROBE_OK);
    return indexOf(out + "/atb_dump_data");
}

// Whether any tensor of any op has two rows in one round: one op given the rows of two.
std::string opsRunTwiceInARound(const DumpIndex& index) {
    std::string twice;
    for (uint32_t slot = 0; slot < index.slotCount(); ++slot) {
        std::set<int32_t> rounds;
        for (uint32_t row : index.slot(slot).rows)
            if (!rounds.insert(index.row(row).round).second)
                twice += index.describeOp(index.slot(slot).op) + " in round " +
                         std::to_string(index.row(row).round) + "; ";
    }
    return twice;
}

// Ops shifted along a chain: y ran first in round 1, x shifted onto b's id, b onto c's, c to a
// new one; c's own id is free in round 1 but its usual one is where b ran, shifted itself. Each
// op stays one tree row (before, c was two). Two ops swapped (round 2, c read first, at b's id)
// are told only in part: c, read before the op whose id it ran under, is an op of its own there
// (b, read after, is found): a reader that reads the dump as it is written cannot tell yet
// whether b will run at its own id, and guessing made one op of two runs a round.
TEST(Analysis, AnOpShiftedAlongAChainStaysOneOp) {
    TempDir dir;
    const DumpIndex index = dumpLayerRounds(dir, {{"a", "x", "b", "c"},
                                                  {"a", "y", "x", "b", "c"},
                                                  {"a", "x", "c", "b"},
                                                  {"a", "x", "b", "c"}});
    const uint32_t layer = index.findOp(0, "0");
    ASSERT_NE(layer, kNone);
    std::vector<std::string> children;
    for (uint32_t child : index.op(layer).children)
        children.push_back(index.op(child).name + " " + index.idsText(child) + ", rounds " +
                           std::to_string(index.op(child).rounds.size()));
    std::sort(children.begin(), children.end());
    EXPECT_EQ(children,
              (std::vector<std::string>{"a 0_0, rounds 4", "b 0_2; 0_3 in rounds 1 and 2, rounds 4",
                                        "c 0_2, rounds 1", "c 0_3; 0_4 in round 1, rounds 3",
                                        "x 0_1; 0_2 in round 1, rounds 4", "y 0_1, rounds 1"}));
    const uint32_t b = index.findOp(0, "0_2");
    ASSERT_EQ(index.op(b).name, "b");
    EXPECT_EQ(index.idIn(b, 1), "0_3");
    EXPECT_EQ(index.idIn(b, 3), "0_2");
    EXPECT_EQ(opsRunTwiceInARound(index), "");
    // Every row of an op is its own: the value it wrote is its name's.
    for (uint32_t child : index.op(layer).children)
        for (uint32_t slot : index.op(child).tensorSlots)
            for (uint32_t row : index.slot(slot).rows)
                EXPECT_EQ(index.row(row).get(Stat::Max), 10 * index.op(child).name[0] + 1)
                    << index.describeOp(child) << " round " << index.row(row).round;
}

// Two ops of one name in a layer (t, twice), shifted by two ops run before them in rounds 1 and
// 2: the first t then runs at the second's own id (0_5). It is the first t (the demo's two casts
// in self-attention, in a decode round); the second t is the one at 0_7. Before, the first t's
// rows of those rounds went to the second t, and the second t's to the first.
TEST(Analysis, AShiftedOpAtTheIdOfAnotherOfItsNameIsStillItself) {
    TempDir dir;
    const std::vector<std::string> plain = {"a", "b", "c", "t", "s", "t"},
                                   shifted = {"a", "x", "y", "b", "c", "t", "s", "t"};
    const DumpIndex index = dumpLayerRounds(dir, {plain, shifted, shifted, plain});
    const uint32_t first = index.findOp(0, "0_3"), second = index.findOp(0, "0_5");
    ASSERT_NE(first, kNone);
    ASSERT_NE(second, kNone);
    ASSERT_EQ(index.op(first).name, "t");
    ASSERT_EQ(index.op(second).name, "t");
    EXPECT_EQ(index.idsText(first), "0_3; 0_5 in rounds 1 and 2");
    EXPECT_EQ(index.idsText(second), "0_5; 0_7 in rounds 1 and 2");
    EXPECT_EQ(index.idsText(index.findOp(0, "0_4")), "0_4; 0_6 in rounds 1 and 2");
    // Each t's rows are its own (the first t's, the second's), in every round.
    for (const auto& [t, value] :
         {std::pair{first, 10.0 * 't' + 1}, std::pair{second, 10.0 * 't' + 2}}) {
        std::vector<int32_t> rounds;
        for (uint32_t slot : index.op(t).tensorSlots)
            for (uint32_t row : index.slot(slot).rows) {
                rounds.push_back(index.row(row).round);
                EXPECT_EQ(index.row(row).get(Stat::Max), value)
                    << index.describeOp(t) << " round " << index.row(row).round;
            }
        EXPECT_EQ(rounds, (std::vector<int32_t>{0, 1, 2, 3})) << index.describeOp(t);
    }
}

// Ops of one name repeated in a layer, with an op before them left out in some rounds (or a
// module of repeated children): each op keeps one run a round. Guessing that a new id stood
// for a known op shifted there (the known op's id another's) gave one op two runs of a round
// (the first b the rows of both b), its sibling none.
TEST(Analysis, RepeatedOpsOfOneNameAreNeverOneOpRunTwiceInARound) {
    const std::vector<std::vector<std::vector<std::string>>> cases = {
        {{"a", "x", "b", "b"}, {"a", "b", "b"}, {"a", "x", "b", "b"}},
        {{"x", "add"}, {"add", "add"}},
        {{"g", "e", "e", "c"}, {"g", "e", "e", "e", "c"}, {"g", "e", "c"}, {"e", "e", "c"}},
        {{"E", "M[pq]", "M[pq]"}, {"M[pq]", "M[pq]", "M[pq]"}},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE("case " + std::to_string(i));
        TempDir dir;
        const DumpIndex index = dumpLayerRounds(dir, cases[i]);
        ASSERT_GT(index.rowCount(), 0u);
        EXPECT_EQ(opsRunTwiceInARound(index), "");
    }
}

// One op with one float output, statistics only.
std::string dumpOneTensor(const TempDir& dir, const std::string& name, std::vector<float> values) {
    const std::string out = dir / name;
    probe::test::writeFile(dir / (name + ".json"),
                           R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    ::setenv("PROBE_QUIET", "1", 1);
    EXPECT_EQ(probe_start(out.c_str(), (dir / (name + ".json")).c_str()), PROBE_OK);
    probe_op_begin("op", "Op", nullptr);
    floatTensor(PROBE_OUTPUT, values);
    probe_op_end();
    EXPECT_EQ(probe_stop(), PROBE_OK);
    return out + "/atb_dump_data";
}

TEST(Analysis, AStatisticNearZeroIsMeasuredAgainstTheElementsSize) {
    TempDir dir;
    // Means 2.5e-7 and 5e-7 of elements of size 1: twice as large, yet a rounding difference
    // (8 float32 ulps of the elements).
    const std::string a = dumpOneTensor(dir, "a", {1, -1, 1, -1 + 1e-6f});
    const std::string b = dumpOneTensor(dir, "b", {1, -1, 1, -1 + 2e-6f});
    const DumpIndex reference = indexOf(a), same = indexOf(b);
    EXPECT_FALSE(compareDumps(reference, same, {}).diverges());
    // A mean that moves by 0.125 with the same max and min does diverge.
    const std::string c = dumpOneTensor(dir, "c", {1, -1, 0.5f, -1});
    const DumpIndex moved = indexOf(c);
    const auto result = compareDumps(reference, moved, {});
    ASSERT_TRUE(result.firstBornHere);
    const uint32_t cause = result.ops[*result.firstBornHere].cause;
    EXPECT_EQ(result.tensors[cause].rule, DivergenceRule::Statistic);
    EXPECT_EQ(result.explain(cause).rfind("mean", 0), 0u) << result.explain(cause);
}

TEST(Analysis, StatisticsAloneFindTheSameDivergence) {
    TempDir dir;
    probe::test::NativeModelOptions broken;
    broken.nanInLayer = 1;
    const std::string a = dumpModel(dir, "a", {}, 1), b = dumpModel(dir, "b", broken, 1);
    CompareOptions options;
    options.useTensorData = false;
    const DumpIndex reference = indexOf(a), candidate = indexOf(b);
    const auto result = compareDumps(reference, candidate, options);
    ASSERT_FALSE(result.tensors.empty());
    for (const auto& t : result.tensors) EXPECT_FALSE(t.hasData);
    ASSERT_TRUE(result.firstBornHere);
    const auto& op = result.ops[*result.firstBornHere];
    EXPECT_EQ(result.reference->op(op.referenceOp).namePath, "Decoder_layer_1/Mlp/MatMulKernel");
    EXPECT_NE(result.explain(op.cause).find(" vs nan"), std::string::npos)
        << result.explain(op.cause);
    // A looser floor does not hide a NaN.
    options.ulps.float32 = 1e12;
    EXPECT_EQ(compareDumps(reference, candidate, options).firstBornHere, result.firstBornHere);
}

bool startsWith(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The .bin files below `dir` that hold data (not de-duplicated ones) of dtype float, sorted.
std::vector<std::string> floatTensorFiles(const std::string& dir) {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        if (entry.path().extension() != ".bin") continue;
        std::string error;
        auto tensor = loadTensorFile(entry.path().string(), &error);
        if (tensor && tensor->hasValues() && tensor->dtype == format::DType::Float)
            files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

// Every row's tensor file, as the index resolves it.
std::vector<std::string> rowTensorPaths(const DumpIndex& index) {
    std::vector<std::string> paths;
    for (uint32_t row = 0; row < index.rowCount(); ++row)
        if (index.row(row).hasTensorFile) paths.push_back(index.tensorPath(row));
    return paths;
}

// Dumps are copied between machines: a copy is read from its own files, not from the folder the
// statistic.csv rows name (which still exists here, with other data).
TEST(Analysis, ACopiedDumpIsReadAndComparedFromItsOwnTensors) {
    TempDir dir;
    const std::string a = dumpModel(dir, "a", {}, 1), b = dumpModel(dir, "b", {}, 1);
    std::filesystem::copy(dir / "b", dir / "copy", std::filesystem::copy_options::recursive);
    const std::string copy = dir / "copy/atb_dump_data";
    const DumpIndex copyIndex = indexOf(copy);
    const auto paths = rowTensorPaths(copyIndex);
    ASSERT_FALSE(paths.empty());
    for (const auto& path : paths) EXPECT_TRUE(startsWith(path, copy + "/data/")) << path;

    // A NaN in one tensor of the copy only: the copy diverges from run a, the original does not.
    const auto files = floatTensorFiles(copy);
    ASSERT_FALSE(files.empty());
    std::string bytes = probe::test::readFile(files.front());
    const float nan = NAN;
    std::memcpy(&bytes[bytes.find("$End=1\n") + 7], &nan, sizeof nan);
    probe::test::writeFile(files.front(), bytes);
    const DumpIndex reference = indexOf(a), original = indexOf(b);
    EXPECT_FALSE(compareDumps(reference, original, {}).diverges());
    const auto result = compareDumps(reference, copyIndex, {});
    ASSERT_TRUE(result.firstDivergingTensor);
    const auto& first = result.tensors[*result.firstDivergingTensor];
    EXPECT_EQ(copyIndex.tensorPath(first.candidateRow), files.front());
    EXPECT_NE(result.explain(*result.firstDivergingTensor).find("NaN/Inf in one run only"),
              std::string::npos)
        << result.explain(*result.firstDivergingTensor);
}

// A dump moved away from where it was written still has all its tensors, aliases included.
TEST(Analysis, AMovedDumpIsReadAndComparedFromItsOwnTensors) {
    TempDir dir;
    const std::string a = dumpModel(dir, "a", {}, 2);
    dumpModel(dir, "b", {}, 2);
    std::filesystem::rename(dir / "b", dir / "moved");
    const std::string moved = dir / "moved/atb_dump_data";
    const DumpIndex movedIndex = indexOf(moved);
    const auto paths = rowTensorPaths(movedIndex);
    ASSERT_FALSE(paths.empty());
    for (const auto& path : paths) {
        EXPECT_TRUE(startsWith(path, moved + "/data/")) << path;
        EXPECT_TRUE(std::filesystem::exists(path)) << path;
    }
    const DumpIndex reference = indexOf(a);
    const auto result = compareDumps(reference, movedIndex, {});
    EXPECT_TRUE(result.problems.empty()) << result.problems.front();
    EXPECT_GT(result.tensors.size(), 100u);
    EXPECT_FALSE(result.diverges());
    for (const auto& t : result.tensors) {
        ASSERT_TRUE(t.hasData) << movedIndex.tensorPath(t.candidateRow);
        EXPECT_TRUE(startsWith(movedIndex.tensorPath(t.candidateRow), moved))
            << movedIndex.tensorPath(t.candidateRow);
    }
}

// A header-only .bin names its first copy by op id; in a real dump op directories nest, and the
// copy is found from the file's own path, as from its row.
TEST(Analysis, DeduplicatedFilesFindTheirFirstCopyFromTheirPath) {
    TempDir dir;
    const std::string root = dumpModel(dir, "run", {}, 2);
    const DumpIndex index = indexOf(root);
    int aliases = 0;
    for (uint32_t row = 0; row < index.rowCount(); ++row) {
        if (!index.row(row).hasTensorFile) continue;
        const std::string path = index.tensorPath(row);
        std::string error;
        auto header = format::readBinHeader(path, &error);
        ASSERT_TRUE(header) << path << ": " << error;
        if (!header->headerOnly()) continue;
        ++aliases;
        const std::string first = findFirstCopy(path, header->alias);
        ASSERT_FALSE(first.empty()) << path << " names " << header->alias;
        auto firstHeader = format::readBinHeader(first, &error);
        ASSERT_TRUE(firstHeader) << first << ": " << error;
        EXPECT_FALSE(firstHeader->headerOnly()) << first;
        EXPECT_EQ(index.resolveTensorAlias(row, header->alias), first);
        auto tensor = loadTensorFile(path, &error);
        ASSERT_TRUE(tensor);
        EXPECT_TRUE(loadAliasedData(*tensor, first, &error))
            << path << " -> " << first << ": " << error;
    }
    EXPECT_GT(aliases, 0);
}

// Links among op folders (two to the round folder itself) make many paths to one folder: an
// alias of many id parts was looked up along each of them, 2^parts searches, and a compare that
// read such a header never ended. Each folder is searched once per part; a real alias beside
// the links is still found.
TEST(Analysis, AFirstCopyIsLookedForOncePerFolderWhateverLinksLeadThere) {
    TempDir dir;
    const std::string round = dir.path() + "/atb_dump_data/data/0_1/0";
    const std::string file = round + "/1_relu_0/0_clamp_min/before/intensor0_self.bin";
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    probe::test::writeFile(file, "not read: only its name is looked for");
    std::filesystem::create_directory_symlink(".", round + "/1_x");
    std::filesystem::create_directory_symlink(".", round + "/1_y");
    std::string manyParts;
    for (int i = 0; i < 40; ++i) manyParts += "1_";
    EXPECT_EQ(findFirstCopy(file, manyParts + "7_intensor0_self.bin"), "");
    EXPECT_EQ(findFirstCopy(file, "1_0_intensor0_self.bin"), file);
}

}  // namespace
}  // namespace probe::analysis
