// Launching a model from the application, exactly as `probe run` does it (the session runs
// `probe run`), following its output and state, and attaching to its probe once it is up.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

#include "session/control_client.h"

namespace probe::session {

struct LaunchSpec {
    QString interpreter;          // e.g. /usr/bin/python3; empty: `program` is run itself
    QString program;              // a script (with an interpreter) or an executable
    QStringList arguments;
    QString workingDirectory;     // empty: the application's
    QStringList environment;      // extra "NAME=value" entries
    QString outputDirectory;      // the dump goes to <outputDirectory>/atb_dump_data
    QString configPath;           // empty: probe run writes <outputDirectory>/probe_config.json
    QString probeExecutable;      // empty: `probe` next to this application

    // The `probe run ...` command line this spec stands for.
    QStringList probeRunArguments() const;
    // What is wrong with the spec for a person to fix, or "" (checked before starting).
    QString problem() const;
};

enum class SessionState {
    NotStarted,
    Starting,   // `probe run` started, the probe not heard from yet
    Sleeping,   // the probe is up, dumping disabled
    Dumping,
    Stopped,    // dumping stopped early (disk full...), the model goes on
    Finished,   // the model exited with 0
    Crashed,    // the model exited with another code, or was killed
    FailedToStart
};
QString sessionStateName(SessionState state);

class LaunchSession : public QObject {
    Q_OBJECT
public:
    explicit LaunchSession(QObject* parent = nullptr);
    ~LaunchSession() override;

    bool start(const LaunchSpec& spec);
    // Asks the model to stop (SIGTERM, passed on by probe run); kills it after `graceMs`.
    void stop(int graceMs = 5000);

    SessionState state() const { return state_; }
    int exitCode() const { return exitCode_; }
    const LaunchSpec& spec() const { return spec_; }
    QString dumpRoot() const;
    QString configPath() const;
    ControlClient* control() { return &control_; }
    qint64 probeRunPid() const { return process_.processId(); }

signals:
    void output(const QString& text, bool isError);
    void stateChanged(probe::session::SessionState state, const QString& detail);
    void attached(const QJsonObject& hello);

private:
    void setState(SessionState state, const QString& detail);
    void lookForProbe();
    void onFinished(int exitCode, QProcess::ExitStatus status);

    LaunchSpec spec_;
    QProcess process_;
    ControlClient control_;
    QTimer attachTimer_;
    SessionState state_ = SessionState::NotStarted;
    int exitCode_ = -1;
    QString stderrTail_;
};

}  // namespace probe::session
