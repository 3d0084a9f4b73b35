// Real sessions of the native test engine for the application's tests: a complete dump it wrote
// under the probe, the spec that launches it, and it running with its probe listening (to attach
// to). The including test target defines PROBE_NATIVE_ENGINE, PROBE_CLI and PROBE_DATADIR.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <sys/stat.h>

#include <string>

#include <QProcess>
#include <QString>
#include <QTest>
#include <gtest/gtest.h>

#include "context/app_context.h"
#include "dump_store.h"
#include "session/launch_session.h"
#include "session/live_probes.h"
#include "test_support.h"

namespace probe::test {

// The op-level config the engine runs with here: statistics of every op, every round.
inline void writeEngineConfig(const std::string& path) {
    writeFile(path, R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
}

// Sessions of this test only: probes' control sockets in `sockets` (private, mode 0700), the
// engine's config written to `config`, `context` launching with this build's probe and data and
// reading dumps often.
inline void prepareEngineSessions(context::AppContext& context, const TempDir& sockets,
                                  const std::string& config) {
    ::setenv("PROBE_CONTROL_DIR", sockets.path().c_str(), 1);
    ::chmod(sockets.path().c_str(), 0700);
    writeEngineConfig(config);
    context.setProbeExecutable(PROBE_CLI);
    context.setDataDirectory(PROBE_DATADIR);
    context.store()->setIdlePollInterval(100);
}

// A complete dump: `rounds` rounds of the engine under the probe, in <output>/atb_dump_data;
// `extra` engine arguments (--nudge-layer N). Returns `output`.
inline QString writeEngineDump(const std::string& output, const std::string& config, int rounds,
                               const QStringList& extra = {}) {
    QProcess run;
    run.start(PROBE_NATIVE_ENGINE,
              QStringList{"--output", QString::fromStdString(output), "--config",
                          QString::fromStdString(config), "--rounds", QString::number(rounds)} +
                  extra);
    EXPECT_TRUE(run.waitForFinished(60000));
    EXPECT_EQ(run.exitCode(), 0) << run.readAllStandardError().toStdString();
    return QString::fromStdString(output);
}

// What launches the engine for `rounds` rounds, `sleepMs` apart, dumping to <output>.
inline session::LaunchSpec engineLaunch(const std::string& output, const std::string& config,
                                        int rounds, int sleepMs) {
    session::LaunchSpec spec;
    spec.program = PROBE_NATIVE_ENGINE;
    spec.arguments = {"--rounds", QString::number(rounds), "--sleep-ms", QString::number(sleepMs)};
    spec.outputDirectory = QString::fromStdString(output);
    spec.configPath = QString::fromStdString(config);
    return spec;
}

// Starts the engine in `process`, running until it is killed, and waits for its probe to listen
// on its control socket; pid 0 when it did not.
inline session::LiveProbeInfo startEngineProbe(QProcess& process, const std::string& output,
                                               const std::string& config) {
    process.start(PROBE_NATIVE_ENGINE,
                  {"--output", QString::fromStdString(output), "--config",
                   QString::fromStdString(config), "--rounds", "100000", "--sleep-ms", "10"});
    session::LiveProbeInfo found;
    (void)QTest::qWaitFor(
        [&] {
            for (const auto& probe : session::liveProbes())
                if (probe.pid == process.processId()) found = probe;
            return found.pid != 0;
        },
        20000);
    return found;
}

}  // namespace probe::test
