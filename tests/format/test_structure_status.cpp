// SPDX-License-Identifier: GPL-3.0-or-later
#include <unistd.h>

#include <cerrno>
#include <thread>

#include <gtest/gtest.h>

#include "probe/format/dump_status.h"
#include "probe/format/structure_json.h"
#include "test_support.h"

using namespace probe::format;

TEST(StructureJson, LayerKeysInOrderAndRoundTrip) {
    StructureNode layer;
    layer.opName = "Prefill_layer_2";
    layer.opType = "Prefill_layer";
    layer.inTensors = {"Prefill_layer_2_input_0"};
    layer.outTensors = {"Prefill_layer_2_output_0"};
    StructureNode child;
    child.opName = "Attention_2_0";
    child.opType = "SelfAttention";
    child.param = nlohmann::ordered_json{{"headNum", 2}};
    child.inTensors = {"Prefill_layer_2_input_0"};
    child.outTensors = {"Prefill_layer_2_output_0"};
    layer.nodes.push_back(child);
    const std::string text = layer.toJson().dump();
    EXPECT_EQ(text.rfind("{\"opName\":\"Prefill_layer_2\",\"opType\":\"Prefill_layer\",\"param\":"
                         "\"\",\"inTensors\":",
                         0),
              0u);
    std::string error;
    auto parsed = StructureNode::fromJson(nlohmann::json::parse(text), &error);
    ASSERT_TRUE(parsed) << error;
    ASSERT_EQ(parsed->nodes.size(), 1u);
    EXPECT_EQ(parsed->nodes[0].param["headNum"], 2);
    EXPECT_EQ(parsed->nodes[0].inTensors, child.inTensors);
}

TEST(StructureJson, ModelKeysInOrder) {
    ModelStructure model;
    model.modelName = "DecoderModel";
    const std::string text = model.toJson().dump();
    EXPECT_EQ(
        text,
        "{\"modelName\":\"DecoderModel\",\"weightTensors\":[],\"inTensors\":[],\"outTensors\":[],"
        "\"internalTensors\":[],\"nodes\":[]}");
    std::string error;
    EXPECT_TRUE(ModelStructure::fromJson(nlohmann::json::parse(text), &error));
    EXPECT_FALSE(ModelStructure::fromJson(nlohmann::json::parse("[1]"), &error));
}

// A value of the wrong type is read as its default and said, naming its key (they were read
// silently: "state": [] made a finished process "running", and "pid": "x" a process 0).
TEST(DumpStatus, FieldsOfTheWrongTypeFallBackAndAreSaid) {
    probe::test::TempDir dir;
    probe::test::writeFile(
        dir / "probe_status.json",
        R"({"processes": [{"pid": 12, "state": 3, "rows": -1, "files": 5, "device": 1e300,
                           "ended_by": {"how": "left"}, "messages": [1, "x", {"text": []}]}, 7]})");
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    ASSERT_EQ(status->processes.size(), 1u);
    EXPECT_EQ(status->processes[0].pid, 12);
    EXPECT_EQ(status->processes[0].state, DumpState::Incomplete);  // not known: not running
    EXPECT_EQ(status->processes[0].device, -1);
    EXPECT_EQ(status->processes[0].rows, 0u);
    EXPECT_EQ(status->files, 5u);
    EXPECT_FALSE(status->processes[0].endedBy);
    EXPECT_EQ(status->processes[0].messages,
              (std::vector<StatusMessage>{{MessageLevel::Error, "x"}}));
    EXPECT_EQ(status->issues,
              (std::vector<std::string>{
                  "processes[0].device: 1e+300 is not a whole number; read as none",
                  "processes[0].state: 3 is not a string; read as none",
                  "processes[0].rows: -1 is not a whole number from 0; read as none",
                  "processes[0].ended_by.how: \"left\" is not one of \"exited\", \"signal\", "
                  "\"vanished\"",
                  "processes[0].messages[0]: 1 is neither a string nor an object; skipped",
                  "processes[0].messages[2].text: [] is not a string; read as none",
                  "processes[1]: 7 is not an object; skipped"}));

    // Thousands of bad values are said in a few lines: the first ten, then how many more.
    std::string many = R"({"processes": [)";
    for (int i = 0; i < 15; ++i)
        many += std::string(i ? ", " : "") + R"({"pid": )" + std::to_string(i + 1) +
                R"(, "state": "complete", "device": "x"})";
    probe::test::writeFile(dir / "probe_status.json", many + "]}");
    status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    ASSERT_EQ(status->issues.size(), 11u);
    EXPECT_EQ(status->issues[9], "processes[9].device: \"x\" is not a whole number; read as none");
    EXPECT_EQ(status->issues[10], "(5 more)");

    // A process without a state is none that runs (shown running for ever).
    probe::test::writeFile(dir / "probe_status.json", R"({"processes": [{"pid": 12}]})");
    status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->state, DumpState::Incomplete);
    EXPECT_EQ(status->issues,
              (std::vector<std::string>{"processes[0].state: missing; read as incomplete"}));

    // No process that can be read: no state to tell ("complete", of nothing).
    probe::test::writeFile(dir / "probe_status.json",
                           R"({"processes": [{"pid": "12", "state": "complete"}]})");
    EXPECT_FALSE(readStatusFile(dir.path(), &error));
    EXPECT_EQ(error,
              "no process in it can be read\n"
              "processes[0].pid: \"12\" is not a whole number; read as none\n"
              "processes[0]: no pid; skipped");
}

TEST(DumpStatus, ProcessesMergeUnderTheLock) {
    probe::test::TempDir dir;
    std::vector<std::thread> writers;
    for (int pid = 1; pid <= 8; ++pid) {
        writers.emplace_back([&, pid] {
            ProcessDumpStatus s;
            s.pid = pid;
            s.files = static_cast<uint64_t>(pid);
            s.rows = 10;
            s.state = pid == 3 ? DumpState::Running : DumpState::Complete;
            ASSERT_EQ(updateStatusFile(dir.path(), s), 0);
        });
    }
    for (auto& w : writers) w.join();
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->processes.size(), 8u);
    EXPECT_EQ(status->files, 36u);
    EXPECT_EQ(status->rows, 80u);
    EXPECT_EQ(status->state, DumpState::Running);
    ProcessDumpStatus three;
    three.pid = 3;
    three.state = DumpState::Complete;
    three.files = 3;
    ASSERT_EQ(updateStatusFile(dir.path(), three), 0);
    EXPECT_EQ(readStatusFile(dir.path(), &error)->state, DumpState::Complete);
    three.dumpStopped = "disk full";
    ASSERT_EQ(updateStatusFile(dir.path(), three), 0);
    EXPECT_EQ(readStatusFile(dir.path(), &error)->state, DumpState::Incomplete);
}

TEST(DumpStatus, StatesAndLevelsHaveOneNameEach) {
    for (auto state : {DumpState::Running, DumpState::Complete, DumpState::Incomplete})
        EXPECT_EQ(dumpStateFromString(toString(state)), state);
    for (auto state :
         {ProbeState::Sleeping, ProbeState::Dumping, ProbeState::Stopped, ProbeState::Exiting})
        EXPECT_EQ(probeStateFromString(toString(state)), state);
    for (auto level : {MessageLevel::Error, MessageLevel::Warning, MessageLevel::Info})
        EXPECT_EQ(messageLevelFromString(toString(level)), level);
    EXPECT_STREQ(toString(DumpState::Incomplete), "incomplete");
    EXPECT_STREQ(toString(ProbeState::Dumping), "dumping");
    EXPECT_FALSE(dumpStateFromString("Complete"));
    EXPECT_FALSE(messageLevelFromString("error: "));
}

TEST(DumpStatus, MessagesKeepTheirLevelAndTheEndIsRecorded) {
    probe::test::TempDir dir;
    ProcessDumpStatus s;
    s.pid = 7;
    s.state = DumpState::Complete;
    s.messages = {{MessageLevel::Warning, "config rejected"},
                  {MessageLevel::Error, "error: a text that starts so"}};
    s.endedBy = ProgramEnd{ProgramEnd::How::Signaled, 15, "the probe"};
    ASSERT_EQ(updateStatusFile(dir.path(), s), 0);
    const auto json = nlohmann::json::parse(probe::test::readFile(dir / "probe_status.json"));
    EXPECT_EQ(json["processes"][0]["messages"][0],
              (nlohmann::json{{"level", "warning"}, {"text", "config rejected"}}));
    EXPECT_EQ(json["processes"][0]["ended_by"]["signal"], "SIGTERM");
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->processes[0].messages, s.messages);
    EXPECT_EQ(status->processes[0].endedBy, s.endedBy);
}

TEST(DumpStatus, StatusFilesOfTheVersionBeforeAreRead) {
    probe::test::TempDir dir;
    probe::test::writeFile(dir / "probe_status.json",
                           R"({"state": "complete", "processes": [{"pid": 12,
        "state": "complete", "interrupted_by": "SIGINT", "messages": ["warning: config rejected", "cannot write x"]}]})");
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->state, DumpState::Complete);
    const auto& p = status->processes.at(0);
    EXPECT_EQ(p.messages, (std::vector<StatusMessage>{{MessageLevel::Warning, "config rejected"},
                                                      {MessageLevel::Error, "cannot write x"}}));
    ASSERT_TRUE(p.endedBy);
    EXPECT_EQ(p.endedBy->how, ProgramEnd::How::Signaled);
    EXPECT_EQ(p.endedBy->code, 2);
}

TEST(DumpStatus, TextThatIsNotUtf8IsWrittenNotThrown) {
    probe::test::TempDir dir;
    ProcessDumpStatus s;
    s.pid = 9;
    s.command = "python3 train.py --name \xff\xfe";
    EXPECT_EQ(updateStatusFile(dir.path(), s), 0);
    // The lock was let go: the next update does not wait for ever.
    s.state = DumpState::Complete;
    EXPECT_EQ(updateStatusFile(dir.path(), s), 0);
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->state, DumpState::Complete);
    EXPECT_EQ(status->processes.at(0).command.rfind("python3 train.py --name ", 0), 0u);
}

TEST(DumpStatus, TheParentRecordsHowTheProgramEnded) {
    probe::test::TempDir dir;
    EXPECT_EQ(recordProgramEnd(dir.path(), 12, "python3 train.py",
                               {ProgramEnd::How::Exited, 0, "probe run"}),
              ENOENT);
    // The program (12) was killed with its probe running; another process of its tree (a pid
    // that cannot exist) was too; a third stopped its probe normally.
    ProcessDumpStatus program, child, done;
    program.pid = 12;
    child.pid = 99999999;
    done.pid = 13;
    done.state = DumpState::Complete;
    for (const auto& p : {program, child, done}) ASSERT_EQ(updateStatusFile(dir.path(), p), 0);
    ASSERT_EQ(recordProgramEnd(dir.path(), 12, "python3 train.py",
                               {ProgramEnd::How::Signaled, 9, "probe run"}),
              0);
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_EQ(status->state, DumpState::Incomplete);
    ASSERT_EQ(status->processes.size(), 3u);
    const auto& p12 = status->processes[0];
    const auto& p13 = status->processes[1];
    const auto& gone = status->processes[2];
    EXPECT_EQ(p12.state, DumpState::Incomplete);
    EXPECT_TRUE(p12.cutOff);
    EXPECT_EQ(p12.endedBy, (ProgramEnd{ProgramEnd::How::Signaled, 9, "probe run"}));
    EXPECT_EQ(p13.state, DumpState::Complete);
    EXPECT_FALSE(p13.cutOff);
    EXPECT_FALSE(p13.endedBy);
    EXPECT_EQ(gone.state, DumpState::Incomplete);
    ASSERT_TRUE(gone.endedBy);
    EXPECT_EQ(gone.endedBy->how, ProgramEnd::How::Vanished);
    EXPECT_EQ(describeProgramEnd(*p12.endedBy), "killed by SIGKILL");
}

// A launcher (torchrun) runs no model and has no entry: its end was said nowhere, and a job
// whose rank exited with 5 (the launcher with 1), or whose launcher was killed, read complete.
TEST(DumpStatus, TheEndOfAProgramWithoutAnEntryIsKeptAcrossUpdates) {
    probe::test::TempDir dir;
    ProcessDumpStatus rank0, rank1;
    rank0.pid = 21;
    rank1.pid = 22;
    rank0.device = 0;
    rank1.device = 1;
    for (auto* p : {&rank0, &rank1}) p->state = DumpState::Complete;
    ASSERT_EQ(updateStatusFile(dir.path(), rank0), 0);
    ASSERT_EQ(recordProgramEnd(dir.path(), 20, "python3 -m torch.distributed.run train.py",
                               {ProgramEnd::How::Signaled, 9, "probe run"}),
              0);
    // A rank that finishes after its launcher was killed keeps the record as it updates.
    ASSERT_EQ(updateStatusFile(dir.path(), rank1), 0);
    std::string error;
    auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    EXPECT_TRUE(status->issues.empty());
    EXPECT_EQ(status->state, DumpState::Complete);  // the ranks' dumps are whole
    ASSERT_EQ(status->processes.size(), 2u);
    for (const auto& p : status->processes) EXPECT_FALSE(p.endedBy) << p.pid;
    ASSERT_EQ(status->programs.size(), 1u);
    const ProgramRecord& launcher = status->programs[0];
    EXPECT_EQ(launcher.pid, 20);
    EXPECT_EQ(launcher.command, "python3 -m torch.distributed.run train.py");
    EXPECT_EQ(launcher.host, localHostName());
    EXPECT_EQ(launcher.endedBy, (ProgramEnd{ProgramEnd::How::Signaled, 9, "probe run"}));
    // probe run --append: a second job's launcher is added, the first kept.
    ASSERT_EQ(recordProgramEnd(dir.path(), 30, "torchrun train.py",
                               {ProgramEnd::How::Exited, 1, "probe run"}),
              0);
    status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    ASSERT_EQ(status->programs.size(), 2u);
    EXPECT_EQ(status->programs[0].pid, 20);
    EXPECT_EQ(status->programs[1].endedBy, (ProgramEnd{ProgramEnd::How::Exited, 1, "probe run"}));
}

// The totals and state at the top are made again from the processes, but a value of the wrong
// type there (or among the programs) is damage, said naming its key.
TEST(DumpStatus, WrongTypesAtTheTopAreSaid) {
    const auto status = DumpStatus::fromJson(
        nlohmann::json::parse(R"({"state": [], "rows": -1, "processes": [{"pid": 5}],
                                  "programs": [{"pid": 7}, 3, {"pid": "x", "ended_by":
                                  {"how": "exited", "code": 0}}]})"),
        nullptr);
    ASSERT_TRUE(status);
    const std::string issues = [&] {
        std::string all;
        for (const auto& i : status->issues) all += i + "\n";
        return all;
    }();
    EXPECT_NE(issues.find("state: [] is not a string"), std::string::npos) << issues;
    EXPECT_NE(issues.find("rows: -1 is not a whole number from 0"), std::string::npos) << issues;
    EXPECT_NE(issues.find("programs[0]: no ended_by; skipped"), std::string::npos) << issues;
    EXPECT_NE(issues.find("programs[1]: 3 is not an object; skipped"), std::string::npos) << issues;
    EXPECT_NE(issues.find("programs[2].pid: \"x\""), std::string::npos) << issues;
    ASSERT_EQ(status->programs.size(), 1u);
    EXPECT_EQ(status->processes.size(), 1u);
}

// A dump folder shared by several machines (a cluster's file system): the pid probe run saw end,
// and pids gone here, are other processes on another machine or in another pid namespace.
// Before, probe run settled them by pid alone: a live process of another node read "killed".
TEST(DumpStatus, TheParentSettlesOnlyProcessesOfItsOwnMachine) {
    const std::string here = localHostName(), pids = localPidNamespace();
    ASSERT_FALSE(here.empty());
    ASSERT_FALSE(pids.empty());
    probe::test::TempDir dir;
    ProcessDumpStatus otherNodesProgram, otherNode, container, gone;
    otherNodesProgram.pid = 12;  // the pid probe run's program had
    otherNode.pid = 99999999;    // pids that cannot exist here
    container.pid = 99999998;
    gone.pid = 99999997;
    otherNodesProgram.host = otherNode.host = here + "-node2";
    container.host = gone.host = here;
    otherNodesProgram.pidNamespace = otherNode.pidNamespace = gone.pidNamespace = pids;
    container.pidNamespace = "pid:[1]";  // a container of this machine's name
    for (const auto& p : {otherNodesProgram, otherNode, container, gone})
        ASSERT_EQ(updateStatusFile(dir.path(), p), 0);
    ASSERT_EQ(recordProgramEnd(dir.path(), 12, "python3 train.py",
                               {ProgramEnd::How::Signaled, 9, "probe run"}),
              0);
    std::string error;
    const auto status = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(status) << error;
    ASSERT_EQ(status->processes.size(), 4u);
    for (const auto& p : status->processes) {
        if (p.pid == gone.pid) {
            EXPECT_EQ(p.state, DumpState::Incomplete);
            ASSERT_TRUE(p.endedBy);
            EXPECT_EQ(p.endedBy->how, ProgramEnd::How::Vanished);
        } else {
            EXPECT_EQ(p.state, DumpState::Running) << p.pid;
            EXPECT_FALSE(p.endedBy) << p.pid;
        }
    }
}

// probe run killed with its program (a job's time limit, kill -9 of the group): nobody recorded
// the end, and the dump read "running" for ever. A reader settles a process of this machine
// that is gone; one of another machine (a shared folder), or of a file without the host, is
// left as it says.
TEST(DumpStatus, AReaderSettlesAProcessOfThisMachineThatIsGone) {
    const std::string here = localHostName();
    ASSERT_FALSE(here.empty());
    ProcessDumpStatus gone, elsewhere, unknown, alive, container;
    gone.pid = elsewhere.pid = unknown.pid = container.pid = 99999999;  // a pid that cannot exist
    gone.host = alive.host = container.host = here;
    elsewhere.host = here + "-other";
    gone.pidNamespace = alive.pidNamespace = elsewhere.pidNamespace = localPidNamespace();
    container.pidNamespace = "pid:[1]";  // a container of this machine's name
    alive.pid = ::getpid();
    ASSERT_FALSE(gone.pidNamespace.empty());
    DumpStatus status = aggregateStatus({alive, elsewhere, unknown, container});
    EXPECT_FALSE(settleVanishedProcesses(status, "the reader"));
    EXPECT_EQ(status.state, DumpState::Running);
    status = aggregateStatus({gone, elsewhere, unknown, alive, container});
    EXPECT_TRUE(settleVanishedProcesses(status, "the reader"));
    EXPECT_EQ(status.state, DumpState::Running);  // the others still are
    ASSERT_EQ(status.processes.size(), 5u);
    for (const auto& p : status.processes) {
        if (p.host == here && p.pid != ::getpid() && p.pidNamespace == gone.pidNamespace) {
            EXPECT_EQ(p.state, DumpState::Incomplete);
            EXPECT_TRUE(p.cutOff);
            EXPECT_EQ(p.endedBy, (ProgramEnd{ProgramEnd::How::Vanished, 0, "the reader"}));
        } else {
            EXPECT_EQ(p.state, DumpState::Running) << p.pid << " " << p.host;
        }
    }
    status = aggregateStatus({gone});
    EXPECT_TRUE(settleVanishedProcesses(status, "the reader"));
    EXPECT_EQ(status.state, DumpState::Incomplete);
    // The host is written and read back.
    probe::test::TempDir dir;
    ASSERT_EQ(updateStatusFile(dir.path(), alive), 0);
    std::string error;
    const auto read = readStatusFile(dir.path(), &error);
    ASSERT_TRUE(read) << error;
    ASSERT_EQ(read->processes.size(), 1u);
    EXPECT_EQ(read->processes[0].host, here);
    EXPECT_EQ(read->processes[0].pidNamespace, gone.pidNamespace);
}

// probe run reads this file after the program ended: a half-written last line (the program
// was killed mid-write), fields of other types, bytes that are not UTF-8 or a line nested
// deeper than any we write are skipped, never thrown (nlohmann's value() threw on a number
// given as a string).
TEST(InjectionLog, ReadsGoodLinesAndSkipsTheRest) {
    probe::test::TempDir dir;
    std::string text;
    text += R"({"pid": 11, "status": "attached", "message": "", "python": "/usr/bin/python3"})"
            "\n";
    text += R"({"pid": "12", "status": "torch_mismatch"})"
            "\n";  // pid of another type
    text += R"({"pid": 13, "status": 5})"
            "\n";                          // status of another type
    text += "[1, 2, 3]\n";                 // not an object
    text += std::string(100, '[') + "\n";  // deep and cut
    text += "{\"pid\": 14, \"status\": \"no_adapter\", \"message\": \"bad \xff byte\"}\n";
    text += R"({"pid": 15, "status": "torch_mismatch", "message": "torch 2.0 is not 2.1"})"
            "\n";
    text += R"({"pid": 16, "status": "att)";  // killed mid-write
    probe::test::writeFile(dir / probe::format::kInjectionLogName, text);
    const auto records = probe::format::readInjectionLog(dir.path());
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].pid, 11);
    EXPECT_EQ(records[0].status, "attached");
    EXPECT_EQ(records[1].pid, 15);
    EXPECT_EQ(records[1].status, "torch_mismatch");
    EXPECT_EQ(records[1].message, "torch 2.0 is not 2.1");
    EXPECT_TRUE(probe::format::readInjectionLog(dir / "missing").empty());
}
