// SPDX-License-Identifier: GPL-3.0-or-later
#include "session/launch_session.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>

#include "probe/format/config_issue.h"
#include "probe/format/op_config.h"
#include "probe/format/python_command.h"
#include "probe/format/states.h"
#include "session/live_probes.h"

namespace probe::session {

QString sessionStateName(SessionState state) {
    switch (state) {
        case SessionState::NotStarted:
            return QObject::tr("not started");
        case SessionState::Starting:
            return QObject::tr("starting");
        case SessionState::Sleeping:
            return QObject::tr("sleeping");
        case SessionState::Dumping:
            return QObject::tr("dumping");
        case SessionState::Stopped:
            return QObject::tr("dump stopped");
        case SessionState::Finished:
            return QObject::tr("finished");
        case SessionState::Failed:
            return QObject::tr("failed");
        case SessionState::StoppedByUser:
            return QObject::tr("stopped by you");
        case SessionState::FailedToStart:
            return QObject::tr("failed to start");
        case SessionState::Detached:
            return QObject::tr("detached");
    }
    return {};
}

SessionState sessionStateFromProbe(format::ProbeState probeState, SessionState fallback) {
    switch (probeState) {
        case format::ProbeState::Dumping:
            return SessionState::Dumping;
        case format::ProbeState::Sleeping:
            return SessionState::Sleeping;
        case format::ProbeState::Stopped:
            return SessionState::Stopped;
        case format::ProbeState::Exiting:
            break;
    }
    return fallback;
}

bool sessionHasEnded(SessionState state) {
    return state == SessionState::Finished || state == SessionState::Failed ||
           state == SessionState::StoppedByUser || state == SessionState::FailedToStart ||
           state == SessionState::Detached;
}

LaunchSpec launchSpecFromCommand(const QStringList& command) {
    LaunchSpec spec;
    if (command.isEmpty()) return spec;
    const bool python = QFileInfo(command.front()).fileName().startsWith(QLatin1String("python"));
    if (python && command.size() > 1 && command[1].endsWith(QLatin1String(".py"))) {
        spec.interpreter = command[0];
        spec.program = command[1];
        spec.arguments = command.mid(2);
    } else {
        spec.program = command.front();
        spec.arguments = command.mid(1);
    }
    return spec;
}

QString defaultInterpreterFor(const QString& program) {
    return program.trimmed().endsWith(QLatin1String(".py")) ? QStringLiteral("/usr/bin/python3")
                                                            : QString();
}

bool prepareDemoLaunch(const QString& dataDirectory, LaunchSpec* spec, QString* error) {
    const QDir data(dataDirectory);
    const QString script = data.absoluteFilePath(QStringLiteral("demo/llama_demo.py"));
    const QString config = data.absoluteFilePath(QStringLiteral("configs/demo.json"));
    for (const QString& file : {script, config}) {
        if (!QFileInfo::exists(file)) {
            *error = QObject::tr("The demo is not installed: %1 is missing.").arg(file);
            return false;
        }
    }
    LaunchSpec demo;
    demo.interpreter = defaultInterpreterFor(script);
    demo.program = script;
    // As tools/run-demo.sh: 16 decoded tokens, slowed down to watch the statistics arrive.
    demo.arguments = {QStringLiteral("--tokens"),    QStringLiteral("16"),
                      QStringLiteral("--nan-layer"), QStringLiteral("1"),
                      QStringLiteral("--nan-step"),  QStringLiteral("6"),
                      QStringLiteral("--delay"),     QStringLiteral("0.3")};
    demo.outputDirectory = freshOutputDirectory({script});
    if (!QDir().mkpath(demo.outputDirectory)) {
        *error = QObject::tr("Cannot create the folder %1 for the demo's dump.")
                     .arg(demo.outputDirectory);
        return false;
    }
    demo.configPath =
        QDir(demo.outputDirectory).absoluteFilePath(QStringLiteral("demo_config.json"));
    if (!QFile::copy(config, demo.configPath)) {
        *error = QObject::tr("Cannot copy the demo's config to %1.").arg(demo.configPath);
        return false;
    }
    // A copy of a read-only installed file is read-only too; the probe rewrites it.
    QFile::setPermissions(demo.configPath, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup |
                                               QFile::ReadOther);
    *spec = demo;
    return true;
}

QString freshOutputDirectory(const QStringList& command, const QString& parent) {
    std::vector<std::string> words;
    for (const QString& word : command) words.push_back(word.toStdString());
    QString name = QString::fromStdString(format::runName(words));
    if (name.isEmpty()) name = QStringLiteral("run");
    // ~/.local/share/probe-studio/runs: named here rather than by the application's organisation
    // and name, which would say probe-studio twice.
    const QString folder =
        parent.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
                               QStringLiteral("/probe-studio/runs")
                         : QDir::cleanPath(parent);
    const QString base = folder + QLatin1Char('/') + name + QLatin1Char('-') +
                         QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    // Two launches within a second get different folders.
    QString candidate = base;
    for (int n = 2; QFileInfo::exists(candidate); ++n)
        candidate = base + QLatin1Char('-') + QString::number(n);
    return candidate;
}

QString LaunchSpec::dumpRoot() const {
    return QDir(outputDirectory).absoluteFilePath(QStringLiteral("atb_dump_data"));
}

QStringList LaunchSpec::probeRunArguments() const {
    QStringList args{QStringLiteral("run"), QStringLiteral("--output"), outputDirectory};
    if (appendToDump) args << QStringLiteral("--append");
    if (!configPath.isEmpty()) args << QStringLiteral("--config") << configPath;
    args << QStringLiteral("--");
    if (!interpreter.isEmpty()) args << interpreter;
    args << program << arguments;
    return args;
}

namespace {

// Why the dump cannot go to `dir` ("" when it can): probe run creates the folder and writes into
// it. Tried for real with a scratch folder, removed at once, because permission bits do not tell
// (root may write anywhere they allow, but not into /proc or a read-only mount).
QString outputDirectoryProblem(const QString& dir, const QString& dumpRoot) {
    // probe run adds to a dump folder or replaces it, but never follows a link nor takes a file.
    const QFileInfo dump(dumpRoot);
    if (dump.isSymLink())
        return QObject::tr(
                   "%1 is a symbolic link: probe run never follows one there. Choose "
                   "another output folder.")
            .arg(dump.filePath());
    if (dump.exists() && !dump.isDir())
        return QObject::tr("%1 is a file, not a dump folder. Choose another output folder.")
            .arg(dump.filePath());
    QString existing = QDir::cleanPath(QDir(dir).absolutePath());
    while (!QFileInfo::exists(existing)) existing = QFileInfo(existing).path();
    if (!QFileInfo(existing).isDir())
        return QObject::tr("The output folder %1 cannot be created: %2 is not a folder.")
            .arg(dir, existing);
    QByteArray scratch = QFile::encodeName(existing + QStringLiteral("/.probe-write-check-XXXXXX"));
    if (!::mkdtemp(scratch.data())) {
        const QString why = QString::fromLocal8Bit(std::strerror(errno));
        return existing == QDir::cleanPath(QDir(dir).absolutePath())
                   ? QObject::tr("The output folder %1 is not writable (%2).").arg(dir, why)
                   : QObject::tr("The output folder %1 cannot be created in %2 (%3).")
                         .arg(dir, existing, why);
    }
    ::rmdir(scratch.constData());
    return {};
}

}  // namespace

std::optional<format::OpConfig> readLaunchConfig(const QString& path, QString* problem) {
    const auto fail = [&](const QString& why) -> std::optional<format::OpConfig> {
        if (problem) *problem = why;
        return std::nullopt;
    };
    if (!QFileInfo::exists(path))
        return fail(QObject::tr("The config file %1 does not exist.").arg(path));
    std::string error;
    const auto text = format::readTextFile(path.toStdString(), &error);
    if (!text)
        return fail(QObject::tr("The config file %1 cannot be read: %2")
                        .arg(path, QString::fromStdString(error)));
    auto parsed = format::parseOpConfig(*text, path.toStdString());
    if (!parsed.ok())
        return fail(QObject::tr("The config is not valid:\n%1")
                        .arg(QString::fromStdString(format::describeIssues(parsed.issues))));
    return std::move(parsed.config);
}

namespace {

// What is said of a program that is not there and holds a space: a whole command line typed in
// the program's field would run as one program's name.
QString wholeLineHint(const QString& program) {
    return program.contains(QRegularExpression(QStringLiteral("\\s")))
               ? QObject::tr(" Its arguments go in the Arguments field.")
               : QString();
}

// Where a bare program name is looked for: the PATH the launch sets, else this process's.
QStringList searchPath(const QStringList& environment) {
    for (const QString& entry : environment)
        if (entry.startsWith(QLatin1String("PATH=")))
            return entry.mid(5).split(QLatin1Char(':'), Qt::SkipEmptyParts);
    return {};  // QStandardPaths: the system's PATH
}

}  // namespace

QString LaunchSpec::problem() const {
    if (program.trimmed().isEmpty()) return QObject::tr("Choose the program (or script) to run.");
    if (outputDirectory.trimmed().isEmpty()) return QObject::tr("Choose where the dump goes.");
    // Everything else at once: each is for a different field.
    QStringList problems;
    // A program named by a path, or a script: what is there (a bare name is looked up on PATH).
    const QFileInfo programFile(QDir(workingDirectory).absoluteFilePath(program));
    const QString what = interpreter.isEmpty() ? QObject::tr("program") : QObject::tr("script");
    if (!interpreter.isEmpty() && !QFileInfo(interpreter).isExecutable())
        problems << QObject::tr("The interpreter %1 does not exist or is not executable.")
                        .arg(interpreter);
    else if (!interpreter.isEmpty() || program.contains(QLatin1Char('/'))) {
        if (!programFile.exists())
            problems << QObject::tr("The %1 %2 does not exist.").arg(what, program) +
                            wholeLineHint(program);
        else if (programFile.isDir())
            problems << QObject::tr("%1 is a folder, not a %2.").arg(program, what);
    } else if (QStandardPaths::findExecutable(program, searchPath(environment)).isEmpty()) {
        problems << QObject::tr("There is no program %1 on the PATH.").arg(program) +
                        wholeLineHint(program);
    }
    // A Python interpreter as the program, its script the first argument (python3 train.py):
    // a script that is not there is said as the program's would be, not found by the launch.
    if (interpreter.isEmpty() &&
        QFileInfo(program).fileName().startsWith(QLatin1String("python")) && !arguments.isEmpty() &&
        arguments.front().endsWith(QLatin1String(".py"))) {
        const QFileInfo script(QDir(workingDirectory).absoluteFilePath(arguments.front()));
        if (!script.exists())
            problems << QObject::tr("The script %1 does not exist.").arg(arguments.front());
        else if (script.isDir())
            problems << QObject::tr("%1 is a folder, not a script.").arg(arguments.front());
    }
    if (!workingDirectory.isEmpty() && !QFileInfo(workingDirectory).isDir())
        problems << QObject::tr("The working directory %1 does not exist.").arg(workingDirectory);
    if (const QString output = outputDirectoryProblem(outputDirectory, dumpRoot());
        !output.isEmpty())
        problems << output;
    if (QString config; !configPath.isEmpty() && !readLaunchConfig(configPath, &config))
        problems << config;
    for (const QString& entry : environment) {
        if (!entry.contains('=') || entry.startsWith('=')) {
            problems
                << QObject::tr("Environment entries are NAME=value; \"%1\" is not.").arg(entry);
            break;
        }
    }
    return problems.join(QLatin1Char('\n'));
}

LaunchSession::LaunchSession(QObject* parent) : QObject(parent) {
    connect(&process_, &QProcess::readyReadStandardOutput, this, [this] {
        emit output(QString::fromLocal8Bit(process_.readAllStandardOutput()), false);
    });
    connect(&process_, &QProcess::readyReadStandardError, this, [this] {
        const QString text = QString::fromLocal8Bit(process_.readAllStandardError());
        stderrTail_ = (stderrTail_ + text).right(4000);
        emit output(text, true);
    });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            setState(SessionState::FailedToStart,
                     tr("cannot run %1: %2").arg(process_.program(), process_.errorString()));
    });
    connect(&process_, qOverload<int, QProcess::ExitStatus>(&QProcess::finished), this,
            &LaunchSession::onFinished);
    attachTimer_.setInterval(200);
    connect(&attachTimer_, &QTimer::timeout, this, &LaunchSession::lookForProbe);
    connect(&control_, &ControlClient::hello, this, [this](const format::control::Hello& hello) {
        attachTimer_.stop();
        setState(sessionStateFromProbe(hello.state, SessionState::Sleeping),
                 tr("probe attached (pid %1)").arg(hello.pid));
        emit attached(hello);
    });
    connect(&control_, &ControlClient::stateChanged, this,
            [this](format::ProbeState state, const QString& reason) {
                if (sessionHasEnded(state_)) return;
                const SessionState mapped = sessionStateFromProbe(state, state_);
                if (mapped != state_) setState(mapped, reason);
            });
}

LaunchSession::~LaunchSession() {
    if (process_.state() != QProcess::NotRunning) {
        process_.terminate();
        if (!process_.waitForFinished(kStopGraceMs)) killEverything();
        process_.waitForFinished(1000);
    }
}

// probe run, the model and whatever it started (a launcher's workers): probe run leads a process
// group of its own. Killed alone, probe run (which relays the model's output) left the model
// running on.
void LaunchSession::killEverything() {
    if (const qint64 group = process_.processId(); group > 0)
        ::kill(-static_cast<pid_t>(group), SIGKILL);
    process_.kill();
}

QString LaunchSession::dumpRoot() const {
    return spec_.dumpRoot();
}

QString LaunchSession::configPath() const {
    if (const auto& hello = control_.helloMessage(); hello && !hello->configPath.empty())
        return QString::fromStdString(hello->configPath);
    return spec_.configPath.isEmpty()
               ? QDir(spec_.outputDirectory).absoluteFilePath("probe_config.json")
               : spec_.configPath;
}

bool LaunchSession::start(const LaunchSpec& spec) {
    spec_ = spec;
    exitCode_ = -1;
    stopRequested_ = false;
    stderrTail_.clear();
    if (const QString problem = spec.problem(); !problem.isEmpty()) {
        setState(SessionState::FailedToStart, problem);
        return false;
    }
    const QString probe =
        spec.probeExecutable.isEmpty()
            ? QDir(QCoreApplication::applicationDirPath()).absoluteFilePath("probe")
            : spec.probeExecutable;
    if (!QFileInfo(probe).isExecutable()) {
        setState(SessionState::FailedToStart,
                 tr("the probe command line tool is missing: %1").arg(probe));
        return false;
    }
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const QString& entry : spec.environment) {
        const qsizetype eq = entry.indexOf('=');
        environment.insert(entry.left(eq), entry.mid(eq + 1));
    }
    process_.setProcessEnvironment(environment);
    if (!spec.workingDirectory.isEmpty()) process_.setWorkingDirectory(spec.workingDirectory);
    // The model's output through probe run, which outlives us: killed or crashed, this
    // application closed the pipes the model wrote into, and its next print ended it
    // (BrokenPipeError). Not in the command line the launch form offers to copy: in a terminal
    // the output is the terminal's.
    QStringList arguments = spec.probeRunArguments();
    arguments.insert(1, QStringLiteral("--relay-output"));
    process_.setProgram(probe);
    process_.setArguments(arguments);
    // A process group of its own, for killEverything (and a Ctrl-C in the terminal the app was
    // started from is the app's to act on, not the model's).
    process_.setChildProcessModifier([] { ::setpgid(0, 0); });
    setState(SessionState::Starting, tr("running %1 %2").arg(probe, arguments.join(' ')));
    process_.start();
    attachTimer_.start();
    return true;
}

void LaunchSession::stop(int graceMs) {
    if (process_.state() == QProcess::NotRunning) return;
    stopRequested_ = true;
    process_.terminate();  // probe run passes SIGTERM on to the model
    QTimer::singleShot(graceMs, this, [this] {
        if (process_.state() != QProcess::NotRunning) killEverything();
    });
}

void LaunchSession::lookForProbe() {
    if (control_.isConnected() || process_.state() != QProcess::Running) return;
    if (const auto probe = probeOfProcess(process_.processId()))
        control_.connectToProbe(probe->socketPath);
}

void LaunchSession::onFinished(int exitCode, QProcess::ExitStatus status) {
    attachTimer_.stop();
    // probe run itself killed by a signal: QProcess gives the signal as the exit code; the code
    // is then the shell's, 128 + the signal (as probe run reports a killed model's).
    exitCode_ = status == QProcess::CrashExit ? 128 + exitCode : exitCode;
    if (state_ == SessionState::FailedToStart) return;
    // probe run's own refusals (bad config, no torch, ...) end it before the model started.
    const bool refused = !control_.isConnected() && !control_.helloMessage() &&
                         (exitCode == 64 || exitCode == 65 || exitCode == 66 || exitCode == 69 ||
                          exitCode == 73 || exitCode == 76 || exitCode == 127);
    if (refused) {
        const QString why = stderrTail_.section(QStringLiteral("probe run: "), -1).trimmed();
        setState(SessionState::FailedToStart,
                 why.isEmpty() ? tr("probe run refused (exit code %1)").arg(exitCode) : why);
        return;
    }
    QString how;
    if (status == QProcess::NormalExit && exitCode == 0)
        how = tr("the program exited normally");
    else if (status == QProcess::CrashExit)
        how = tr("probe run itself was killed by signal %1 (exit code %2)")
                  .arg(exitCode)
                  .arg(exitCode_);
    else if (exitCode > 128)
        how = tr("killed by signal %1 (exit code %2)").arg(exitCode - 128).arg(exitCode);
    else
        how = tr("exited with code %1").arg(exitCode);
    // Ended by Stop: what the user asked for, not a crash (SIGTERM ends most models with 143).
    if (stopRequested_)
        setState(SessionState::StoppedByUser, tr("stopped at your request: %1").arg(how));
    else
        setState(status == QProcess::NormalExit && exitCode == 0 ? SessionState::Finished
                                                                 : SessionState::Failed,
                 how);
}

void LaunchSession::setState(SessionState state, const QString& detail) {
    state_ = state;
    emit stateChanged(state, detail);
}

}  // namespace probe::session
