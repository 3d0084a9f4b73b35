// SPDX-License-Identifier: GPL-3.0-or-later
#include "session/launch_session.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include "session/live_probes.h"

namespace probe::session {

QString sessionStateName(SessionState state) {
    switch (state) {
        case SessionState::NotStarted: return QObject::tr("not started");
        case SessionState::Starting: return QObject::tr("starting");
        case SessionState::Sleeping: return QObject::tr("sleeping");
        case SessionState::Dumping: return QObject::tr("dumping");
        case SessionState::Stopped: return QObject::tr("dump stopped");
        case SessionState::Finished: return QObject::tr("finished");
        case SessionState::Crashed: return QObject::tr("crashed");
        case SessionState::FailedToStart: return QObject::tr("failed to start");
    }
    return {};
}

QStringList LaunchSpec::probeRunArguments() const {
    QStringList args{QStringLiteral("run"), QStringLiteral("--output"), outputDirectory};
    if (!configPath.isEmpty()) args << QStringLiteral("--config") << configPath;
    args << QStringLiteral("--");
    if (!interpreter.isEmpty()) args << interpreter;
    args << program << arguments;
    return args;
}

QString LaunchSpec::problem() const {
    if (program.trimmed().isEmpty()) return QObject::tr("Choose the program (or script) to run.");
    if (outputDirectory.trimmed().isEmpty()) return QObject::tr("Choose where the dump goes.");
    if (!interpreter.isEmpty() && !QFileInfo(interpreter).isExecutable())
        return QObject::tr("The interpreter %1 does not exist or is not executable.").arg(interpreter);
    if (!interpreter.isEmpty() && !QFileInfo::exists(QDir(workingDirectory).absoluteFilePath(program)))
        return QObject::tr("The script %1 does not exist.").arg(program);
    if (!workingDirectory.isEmpty() && !QFileInfo(workingDirectory).isDir())
        return QObject::tr("The working directory %1 does not exist.").arg(workingDirectory);
    if (!configPath.isEmpty() && !QFileInfo::exists(configPath))
        return QObject::tr("The config file %1 does not exist.").arg(configPath);
    for (const QString& entry : environment)
        if (!entry.contains('=') || entry.startsWith('='))
            return QObject::tr("Environment entries are NAME=value; \"%1\" is not.").arg(entry);
    return {};
}

LaunchSession::LaunchSession(QObject* parent) : QObject(parent) {
    connect(&process_, &QProcess::readyReadStandardOutput, this,
            [this] { emit output(QString::fromLocal8Bit(process_.readAllStandardOutput()), false); });
    connect(&process_, &QProcess::readyReadStandardError, this, [this] {
        const QString text = QString::fromLocal8Bit(process_.readAllStandardError());
        stderrTail_ = (stderrTail_ + text).right(4000);
        emit output(text, true);
    });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            setState(SessionState::FailedToStart, tr("cannot run %1: %2").arg(process_.program(), process_.errorString()));
    });
    connect(&process_, qOverload<int, QProcess::ExitStatus>(&QProcess::finished), this, &LaunchSession::onFinished);
    attachTimer_.setInterval(200);
    connect(&attachTimer_, &QTimer::timeout, this, &LaunchSession::lookForProbe);
    connect(&control_, &ControlClient::hello, this, [this](const QJsonObject& hello) {
        attachTimer_.stop();
        const QString state = hello.value("state").toString();
        setState(state == "dumping" ? SessionState::Dumping : state == "stopped" ? SessionState::Stopped : SessionState::Sleeping,
                 tr("probe attached (pid %1)").arg(hello.value("pid").toInteger()));
        emit attached(hello);
    });
    connect(&control_, &ControlClient::stateChanged, this, [this](const QString& state, const QString& reason) {
        if (state_ == SessionState::Finished || state_ == SessionState::Crashed) return;
        if (state == "dumping") setState(SessionState::Dumping, reason);
        else if (state == "sleeping") setState(SessionState::Sleeping, reason);
        else if (state == "stopped") setState(SessionState::Stopped, reason);
    });
}

LaunchSession::~LaunchSession() {
    if (process_.state() != QProcess::NotRunning) {
        process_.terminate();
        if (!process_.waitForFinished(3000)) process_.kill();
        process_.waitForFinished(1000);
    }
}

QString LaunchSession::dumpRoot() const { return QDir(spec_.outputDirectory).absoluteFilePath("atb_dump_data"); }

QString LaunchSession::configPath() const {
    const QString fromProbe = control_.helloMessage().value("config_path").toString();
    if (!fromProbe.isEmpty()) return fromProbe;
    return spec_.configPath.isEmpty() ? QDir(spec_.outputDirectory).absoluteFilePath("probe_config.json") : spec_.configPath;
}

bool LaunchSession::start(const LaunchSpec& spec) {
    spec_ = spec;
    exitCode_ = -1;
    stderrTail_.clear();
    if (const QString problem = spec.problem(); !problem.isEmpty()) {
        setState(SessionState::FailedToStart, problem);
        return false;
    }
    const QString probe = spec.probeExecutable.isEmpty()
                              ? QDir(QCoreApplication::applicationDirPath()).absoluteFilePath("probe")
                              : spec.probeExecutable;
    if (!QFileInfo(probe).isExecutable()) {
        setState(SessionState::FailedToStart, tr("the probe command line tool is missing: %1").arg(probe));
        return false;
    }
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const QString& entry : spec.environment) {
        const qsizetype eq = entry.indexOf('=');
        environment.insert(entry.left(eq), entry.mid(eq + 1));
    }
    process_.setProcessEnvironment(environment);
    if (!spec.workingDirectory.isEmpty()) process_.setWorkingDirectory(spec.workingDirectory);
    process_.setProgram(probe);
    process_.setArguments(spec.probeRunArguments());
    setState(SessionState::Starting, tr("running %1 %2").arg(probe, spec.probeRunArguments().join(' ')));
    process_.start();
    attachTimer_.start();
    return true;
}

void LaunchSession::stop(int graceMs) {
    if (process_.state() == QProcess::NotRunning) return;
    process_.terminate();  // probe run passes SIGTERM on to the model
    QTimer::singleShot(graceMs, this, [this] {
        if (process_.state() != QProcess::NotRunning) process_.kill();
    });
}

void LaunchSession::lookForProbe() {
    if (control_.isConnected() || process_.state() != QProcess::Running) return;
    const qint64 runner = process_.processId();
    for (const auto& probe : liveProbes()) {
        if (probe.pid != runner && isDescendantOf(probe.pid, runner)) {
            control_.connectToProbe(probe.socketPath);
            return;
        }
    }
}

void LaunchSession::onFinished(int exitCode, QProcess::ExitStatus status) {
    attachTimer_.stop();
    exitCode_ = status == QProcess::CrashExit ? -1 : exitCode;
    if (state_ == SessionState::FailedToStart) return;
    // probe run's own refusals (bad config, no torch, ...) end it before the model started.
    const bool refused = !control_.isConnected() && control_.helloMessage().isEmpty() &&
                         (exitCode == 64 || exitCode == 65 || exitCode == 66 || exitCode == 69 || exitCode == 73 ||
                          exitCode == 76 || exitCode == 127);
    if (refused) {
        const QString why = stderrTail_.section(QStringLiteral("probe run: "), -1).trimmed();
        setState(SessionState::FailedToStart, why.isEmpty() ? tr("probe run refused (exit code %1)").arg(exitCode) : why);
    } else if (status == QProcess::NormalExit && exitCode == 0) {
        setState(SessionState::Finished, tr("the program exited normally"));
    } else if (status == QProcess::CrashExit) {
        setState(SessionState::Crashed, tr("probe run itself crashed"));
    } else if (exitCode > 128) {
        setState(SessionState::Crashed, tr("killed by signal %1 (exit code %2)").arg(exitCode - 128).arg(exitCode));
    } else {
        setState(SessionState::Crashed, tr("exited with code %1").arg(exitCode));
    }
}

void LaunchSession::setState(SessionState state, const QString& detail) {
    state_ = state;
    emit stateChanged(state, detail);
}

}  // namespace probe::session
