// The application's control client against a real runtime in this process.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>

#include <QLocalServer>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTest>
#include <gtest/gtest.h>

#include "native_model.h"
#include "probe/probe.h"
#include "session/control_client.h"
#include "session/live_probes.h"
#include "test_support.h"

namespace probe::session {
namespace {

class ControlClientTest : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("PROBE_QUIET", "1", 1);
        ::setenv("PROBE_CONTROL_DIR", sockets_.path().c_str(), 1);
        ::chmod(sockets_.path().c_str(), 0700);
        probe::test::writeFile(
            dir_ / "config.json",
            R"({"task": "statistics", "dump_enable": false, "exec_range": "all"})");
        ASSERT_EQ(probe_start(dir_.path().c_str(), (dir_ / "config.json").c_str()), PROBE_OK);
    }
    void TearDown() override {
        probe_stop();
        ::unsetenv("PROBE_CONTROL_DIR");
    }
    probe::test::TempDir dir_{"probe-client"}, sockets_{"probe-sockets"};
};

TEST_F(ControlClientTest, AttachesFollowsAndPushes) {
    probe::test::NativeModel model({});
    model.run();
    const auto probes = liveProbes();
    ASSERT_EQ(probes.size(), 1u);
    EXPECT_EQ(probes[0].pid, QCoreApplication::applicationPid());
    EXPECT_TRUE(probes[0].command.contains("test_ui_session"));

    ControlClient client;
    QSignalSpy hello(&client, &ControlClient::hello);
    QSignalSpy layers(&client, &ControlClient::layerDiscovered);
    client.connectToProbe(probes[0].socketPath);
    ASSERT_TRUE(hello.wait(20000));
    ASSERT_TRUE(client.helloMessage());
    EXPECT_EQ(client.helloMessage()->state, format::ProbeState::Sleeping);
    EXPECT_EQ(client.helloMessage()->dumpRoot, dir_ / "atb_dump_data");
    ASSERT_TRUE(QTest::qWaitFor([&] { return layers.count() >= 4; }, 20000));
    ASSERT_EQ(layers.count(), 4);  // WordEmbedding, two decoder layers, LmHead
    EXPECT_EQ(layers.at(3).at(1).toString(), "LmHead");

    std::vector<std::pair<nlohmann::json, qint64>> applied;
    QObject::connect(&client, &ControlClient::configApplied,
                     [&](const nlohmann::json& config, const QString&, qint64 request) {
                         applied.push_back({config, request});
                     });
    std::vector<format::ProbeState> states;
    QObject::connect(&client, &ControlClient::stateChanged,
                     [&](format::ProbeState s, const QString&) { states.push_back(s); });
    const qint64 request = client.pushConfig(
        {{"task", "statistics"}, {"dump_enable", true}, {"exec_range", "all"}, {"ids", "0"}});
    ASSERT_TRUE(QTest::qWaitFor([&] { return !applied.empty() && !states.empty(); }, 10000));
    EXPECT_EQ(applied[0].second, request);
    EXPECT_EQ(applied[0].first["ids"], "0");
    EXPECT_EQ(states[0], format::ProbeState::Dumping);

    // The doorbell: rows are in the file, which has them all.
    uint64_t rowsRung = 0;
    QObject::connect(&client, &ControlClient::rowsWritten,
                     [&](const format::control::RowsWritten& written) {
                         EXPECT_EQ(written.round, 1);  // the second run of the model
                         rowsRung += written.rows;
                     });
    model.run();
    ASSERT_TRUE(QTest::qWaitFor([&] { return rowsRung >= 3; }, 10000));
    EXPECT_EQ(rowsRung, 3u);  // WordEmbedding: two inputs and an output

    QSignalSpy rejected(&client, &ControlClient::configRejected);
    const qint64 bad = client.pushConfig({{"exec_range", "sometimes"}});
    ASSERT_TRUE(rejected.wait(20000));
    EXPECT_EQ(rejected.at(0).at(2).toLongLong(), bad);
    EXPECT_TRUE(rejected.at(0).at(0).toString().contains("exec_range"));

    QSignalSpy gone(&client, &ControlClient::disconnected);
    probe_stop();
    ASSERT_TRUE(gone.wait(20000));
    EXPECT_TRUE(liveProbes().isEmpty());
}

TEST_F(ControlClientTest, NoSuchSocketIsReported) {
    ControlClient client;
    QSignalSpy failed(&client, &ControlClient::failed);
    client.connectToProbe(QString::fromStdString(sockets_ / "probe-1.sock"));
    ASSERT_TRUE(failed.count() > 0 || failed.wait(20000));
    EXPECT_FALSE(failed.at(0).at(0).toString().isEmpty());
}

TEST(ControlClientHostile, LinesThatAreNotMessagesAreSaidAndSkipped) {
    // A process posing as a probe sends what a probe never would; the client says so for each
    // line and goes on reading.
    probe::test::TempDir dir{"probe-fake"};
    QLocalServer server;
    const QString path = QString::fromStdString(dir / "probe-1.sock");
    ASSERT_TRUE(server.listen(path));
    ControlClient client;
    QSignalSpy hello(&client, &ControlClient::hello);
    QSignalSpy messages(&client, &ControlClient::messageReceived);
    QSignalSpy layers(&client, &ControlClient::layerDiscovered);
    client.connectToProbe(path);
    ASSERT_TRUE(server.waitForNewConnection(20000));
    QLocalSocket* peer = server.nextPendingConnection();
    const QByteArray deep(100000, '[');
    peer->write("{\"type\": \"hello\", \"protocol\": 2, \"output_dir\": \"/tmp/x\"}\n");
    peer->write("\xff\n");
    peer->write("{\"type\": \"layer\", \"id\": " + deep + "\n");
    peer->write("{\"type\": \"rows_written\", \"rows\": 1e999}\n");
    peer->write("[\"not an object\"]\n");
    peer->write(
        "{\"type\": \"layer\", \"id\": \"7\", \"name\": \"Decoder\", \"op_type\": \"T\"}\n");
    peer->flush();
    ASSERT_TRUE(layers.count() > 0 || layers.wait(20000));
    ASSERT_EQ(hello.count(), 1);
    EXPECT_EQ(client.helloMessage()->outputDir, "/tmp/x");
    ASSERT_EQ(messages.count(), 4);
    for (const auto& m : messages)
        EXPECT_EQ(m.at(0).value<format::MessageLevel>(), format::MessageLevel::Error);
    EXPECT_TRUE(messages.at(0).at(1).toString().contains("not valid JSON"))
        << messages.at(0).at(1).toString().toStdString();
    EXPECT_TRUE(messages.at(1).at(1).toString().contains("nested deeper than 32 levels"));
    EXPECT_TRUE(messages.at(2).at(1).toString().contains("out of range"));
    EXPECT_TRUE(messages.at(3).at(1).toString().contains("not a JSON object"));
    EXPECT_EQ(layers.at(0).at(0).toString(), "7");
    EXPECT_TRUE(client.isConnected());
}

TEST(ControlClientHostile, SaysHelloAndRefusesAProbeOfAnotherProtocol) {
    probe::test::TempDir dir{"probe-fake"};
    QLocalServer server;
    const QString path = QString::fromStdString(dir / "probe-1.sock");
    ASSERT_TRUE(server.listen(path));
    ControlClient client;
    QSignalSpy failed(&client, &ControlClient::failed);
    client.connectToProbe(path);
    ASSERT_TRUE(server.waitForNewConnection(20000));
    QLocalSocket* peer = server.nextPendingConnection();
    // The client's first line says which protocol it speaks.
    ASSERT_TRUE(QTest::qWaitFor([&] { return peer->canReadLine(); }, 20000));
    const QByteArray first = peer->readLine();
    const auto said = format::control::parseClientMessage(first.trimmed().toStdString());
    ASSERT_TRUE(said.message) << said.problem;
    ASSERT_TRUE(std::holds_alternative<format::control::ClientHello>(*said.message))
        << first.toStdString();
    EXPECT_EQ(std::get<format::control::ClientHello>(*said.message).protocol,
              format::control::kProtocolVersion);
    // A probe of protocol 1: refused, with which versions meet.
    peer->write("{\"type\": \"hello\", \"protocol\": 1, \"pid\": 7}\n");
    peer->flush();
    ASSERT_TRUE(failed.count() > 0 || failed.wait(20000));
    const QString reason = failed.at(0).at(0).toString();
    EXPECT_TRUE(reason.contains("control protocol 1, this application 2")) << reason.toStdString();
    EXPECT_FALSE(client.helloMessage());
    EXPECT_FALSE(client.isConnected());
}

}  // namespace
}  // namespace probe::session
