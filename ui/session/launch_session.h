// Launching a model from the application, exactly as `probe run` does it (the session runs
// `probe run`), following its output and state, and attaching to its probe once it is up.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

#include "probe/format/op_config.h"
#include "session/control_client.h"

namespace probe::session {

struct LaunchSpec {
    QString interpreter;  // e.g. /usr/bin/python3; empty: `program` is run itself
    QString program;      // a script (with an interpreter) or an executable
    QStringList arguments;
    QString workingDirectory;  // empty: the application's
    QStringList environment;   // extra "NAME=value" entries
    QString outputDirectory;   // the dump goes to <outputDirectory>/atb_dump_data
    QString configPath;        // empty: probe run writes <outputDirectory>/probe_config.json
    QString probeExecutable;   // empty: `probe` next to this application
    // probe run --append: <outputDirectory> holds a dump already, and this run's process goes
    // beside the earlier ones (without it, probe run refuses the folder).
    bool appendToDump = false;

    // The `probe run ...` command line this spec stands for.
    QStringList probeRunArguments() const;
    // Where probe run writes the dump: <outputDirectory>/atb_dump_data.
    QString dumpRoot() const;
    // What is wrong with the spec for a person to fix, a line each, or "" (checked before
    // starting): files that are missing, an output folder that cannot be created or written, a
    // config's problems as the format library words them (as `probe config validate`).
    QString problem() const;
};

// The op-level config file a launch runs with, read and judged as `probe run` and `probe config
// validate` do: none when it is missing, unreadable (a FIFO is refused, never read) or not valid,
// and then why in `problem`, the format library's words.
std::optional<format::OpConfig> readLaunchConfig(const QString& path, QString* problem = nullptr);

enum class SessionState {
    NotStarted,
    Starting,  // `probe run` started, the probe not heard from yet
    Sleeping,  // the probe is up, dumping disabled
    Dumping,
    Stopped,        // dumping stopped early (disk full...), the model goes on
    Finished,       // the model exited with 0
    Failed,         // the model exited with another code, or was killed
    StoppedByUser,  // ended because the user stopped it (Stop): not a crash, whatever the exit code
    FailedToStart,
    Detached  // an attached probe went away, could not be reached, or was let go
};
QString sessionStateName(SessionState state);
// The session state a probe's own state stands for (hello's and state events' `state`:
// sleeping, dumping, stopped); `fallback` for exiting.
SessionState sessionStateFromProbe(format::ProbeState probeState, SessionState fallback);
// Whether the model of a session in this state is gone (nothing more will happen).
bool sessionHasEnded(SessionState state);

// The spec of a command line ("/usr/bin/python3 train.py --epochs 2"): a Python interpreter
// followed by a script becomes interpreter and program, so the launch form shows them apart.
LaunchSpec launchSpecFromCommand(const QStringList& command);

// The interpreter a script is run with when none is given (/usr/bin/python3 for .py: Debian's
// torch belongs to it), or "" for other programs.
QString defaultInterpreterFor(const QString& program);

// The bundled demo (<dataDirectory>/demo/llama_demo.py, a LLaMA-style decoder with a planted
// overflow in layer 1 at step 6) with configs/demo.json copied into a fresh output folder: a
// probe writes pushed configs to its config file, and the shipped one must stay as it is.
// False with the reason when the demo is not there or the folder cannot be made.
bool prepareDemoLaunch(const QString& dataDirectory, LaunchSpec* spec, QString* error);

// A new folder name for a launch's dump, <parent>/<name>-<date>-<time>, so that launches never
// add their processes to an earlier dump by accident. `command` is the program and its arguments
// (an interpreter given apart not included); the name is what it runs (format::runName): a
// script's, also behind `python3` ("python3 -u train.py": train), or python -m's module.
// `parent` empty: <app data>/runs.
QString freshOutputDirectory(const QStringList& command, const QString& parent = {});

class LaunchSession : public QObject {
    Q_OBJECT
public:
    explicit LaunchSession(QObject* parent = nullptr);
    ~LaunchSession() override;

    bool start(const LaunchSpec& spec);
    // Asks the model to stop (SIGTERM, passed on by probe run); kills it after `graceMs`.
    static constexpr int kStopGraceMs = 5000;
    void stop(int graceMs = kStopGraceMs);

    SessionState state() const { return state_; }
    // probe run's exit code once it ended (128 + the signal when a signal ended it), else -1.
    int exitCode() const { return exitCode_; }
    const LaunchSpec& spec() const { return spec_; }
    QString dumpRoot() const;
    QString configPath() const;
    ControlClient* control() { return &control_; }
    const ControlClient* control() const { return &control_; }
    qint64 probeRunPid() const { return process_.processId(); }

signals:
    void output(const QString& text, bool isError);
    void stateChanged(probe::session::SessionState state, const QString& detail);
    void attached(const probe::format::control::Hello& hello);

private:
    void killEverything();
    void setState(SessionState state, const QString& detail);
    void lookForProbe();
    void onFinished(int exitCode, QProcess::ExitStatus status);

    LaunchSpec spec_;
    QProcess process_;
    ControlClient control_;
    QTimer attachTimer_;
    SessionState state_ = SessionState::NotStarted;
    int exitCode_ = -1;
    bool stopRequested_ = false;
    QString stderrTail_;
};

}  // namespace probe::session
