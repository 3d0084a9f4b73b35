// SPDX-License-Identifier: GPL-3.0-or-later
#include "session/live_session.h"

#include <QDir>
#include <QFileInfo>

#include "probe/format/dump_status.h"
#include "probe/format/states.h"

namespace probe::session {
namespace {

// How often a launched session looks for its dump folder before the probe said hello (a probe
// without a control socket, PROBE_CONTROL=0, never does).
constexpr int kDumpFolderPollMs = 250;

}  // namespace

LiveSession::LiveSession(QObject* parent) : QObject(parent) {
    connect(&launch_, &LaunchSession::stateChanged, this,
            [this](SessionState state, const QString& detail) {
                if (origin_ != Origin::Launched) return;
                if (sessionHasEnded(state)) {
                    lookForDumpFolder();  // a model that ended before the probe was heard from
                    dumpFolderTimer_.stop();
                }
                setState(state, detail);
            });
    connect(&launch_, &LaunchSession::output, this, &LiveSession::output);
    connectControl(launch_.control());
    connectControl(&attachClient_);
    connect(&attachClient_, &ControlClient::failed, this, [this](const QString& reason) {
        if (origin_ != Origin::Attached || hasEnded()) return;
        const qint64 pid = attachedProbe_.pid;
        if (attachClient_.helloMessage())
            setState(SessionState::Detached,
                     tr("the connection to the probe (pid %1) failed: %2").arg(pid).arg(reason));
        else if (!attachedProgramRuns())  // gone between the listing and the click
            setState(SessionState::Detached,
                     tr("could not attach to the probe of pid %1: the program has ended").arg(pid));
        else
            setState(SessionState::Detached,
                     tr("could not attach to the probe of pid %1: %2").arg(pid).arg(reason));
    });
    connect(&attachClient_, &ControlClient::disconnected, this, [this] {
        if (origin_ != Origin::Attached || hasEnded()) return;
        // (The program's end is watched for before the state is said: whoever keeps the session
        // until then asks watchingForProgramEnd() as it is said.)
        if (detaching_) {
            programEndTimer_.start();
            setState(SessionState::Detached, tr("detached; the program goes on running"));
        } else if (!attachedProgramRuns()) {
            sayTheProgramEnded();
        } else if (probeStopped_) {
            // Stopped as the program exits, most often: its end is said when it comes.
            programEndTimer_.start();
            setState(SessionState::Detached,
                     tr("the probe stopped (pid %1)").arg(attachedProbe_.pid));
        } else {
            // A program dying of a signal: its probe writes out what was queued and closes the
            // connection before the program is gone. Its end is said when it comes (the panel
            // said only this).
            programEndTimer_.start();
            setState(SessionState::Detached,
                     tr("the probe closed the connection (pid %1)").arg(attachedProbe_.pid));
        }
    });
    programEndTimer_.setInterval(200);
    connect(&programEndTimer_, &QTimer::timeout, this, [this] {
        if (attachedProgramRuns()) return;
        programEndTimer_.stop();
        if (detaching_)
            setState(SessionState::Detached,
                     tr("detached; the program (pid %1) has ended since").arg(attachedProbe_.pid));
        else
            sayTheProgramEnded();
    });
    dumpFolderTimer_.setInterval(kDumpFolderPollMs);
    connect(&dumpFolderTimer_, &QTimer::timeout, this, &LiveSession::lookForDumpFolder);
}

void LiveSession::sayTheProgramEnded() {
    programEnded_ = true;
    // How, when its dump said it already (the log said "the program ended" twice in a row).
    if (attachedEnd_)
        sayHowTheProgramEnded();
    else
        setState(SessionState::Detached, tr("the program ended (pid %1)").arg(attachedProbe_.pid));
    // Its probe wrote how it ended (at a signal) before it was gone: read the folder now.
    emit dumpGrew();
}

void LiveSession::takeDumpStatus(const format::DumpStatus& status) {
    if (origin_ != Origin::Attached) return;
    for (const auto& process : status.processes)
        if (process.pid == attachedProbe_.pid && process.endedBy) attachedEnd_ = process.endedBy;
    sayHowTheProgramEnded();
}

// The panel said only "the program ended" of a program killed by SIGSEGV, which the status bar
// read from the dump: how it ended is said once the program has ended and its dump says how.
void LiveSession::sayHowTheProgramEnded() {
    if (!programEnded_ || !attachedEnd_ || origin_ != Origin::Attached) return;
    setState(SessionState::Detached,
             tr("the program ended (pid %1): %2")
                 .arg(attachedProbe_.pid)
                 .arg(QString::fromStdString(format::describeProgramEnd(*attachedEnd_))));
}

bool LiveSession::attachedProgramRuns() const {
    return QFileInfo::exists(QStringLiteral("/proc/%1").arg(attachedProbe_.pid));
}

LiveSession::~LiveSession() {
    // The members end the model and close sockets as they are destroyed; what they signal then
    // must not reach this half-destroyed object.
    disconnect(&launch_, nullptr, this, nullptr);
    disconnect(launch_.control(), nullptr, this, nullptr);
    disconnect(&attachClient_, nullptr, this, nullptr);
}

void LiveSession::connectControl(ControlClient* client) {
    connect(client, &ControlClient::hello, this,
            [this, client](const format::control::Hello& hello) {
                if (client == control()) onHello(hello);
            });
    connect(client, &ControlClient::stateChanged, this,
            [this, client](format::ProbeState state, const QString& reason) {
                // Launched sessions get their states from LaunchSession (which also knows the
                // exit).
                if (client != control() || origin_ != Origin::Attached || hasEnded()) return;
                if (state == format::ProbeState::Exiting) {
                    probeStopped_ = true;
                    emit output(tr("[probe] the program is exiting\n"), false);
                    return;
                }
                const SessionState mapped = sessionStateFromProbe(state, state_);
                if (mapped != state_) setState(mapped, reason);
            });
    connect(client, &ControlClient::configApplied, this,
            [this, client](const nlohmann::json& config, const QString& source, qint64 request) {
                if (client != control()) return;
                configInForce_ = config;
                emit configApplied(config, source, request);
            });
    connect(client, &ControlClient::configRejected, this,
            [this, client](const QString& reason, const QString& source, qint64 request) {
                if (client == control()) emit configRejected(reason, source, request);
            });
    connect(client, &ControlClient::messageReceived, this,
            [this, client](format::MessageLevel level, const QString& text) {
                // A launched model's runtime prints its messages on its standard error already.
                if (client != control() || origin_ != Origin::Attached) return;
                const QString prefix =
                    level == format::MessageLevel::Info
                        ? QString()
                        : QString::fromLatin1(format::toString(level)) + QStringLiteral(": ");
                emit output(QStringLiteral("[probe] %1%2\n").arg(prefix, text),
                            level == format::MessageLevel::Error);
            });
    connect(client, &ControlClient::rowsWritten, this, [this, client] {
        if (client == control()) emit dumpGrew();
    });
    connect(client, &ControlClient::layerDiscovered, this, [this, client] {
        if (client == control()) emit dumpGrew();
    });
}

bool LiveSession::launch(const LaunchSpec& spec) {
    origin_ = Origin::Launched;
    // Files the probe writes from now on are this session's (a second earlier, for file systems
    // that keep whole seconds).
    launchedAt_ = QDateTime::currentDateTime().addSecs(-1);
    if (!launch_.start(spec)) return false;
    dumpFolderTimer_.start();
    return true;
}

void LiveSession::attach(const LiveProbeInfo& probe) {
    origin_ = Origin::Attached;
    attachedProbe_ = probe;
    programEnded_ = false;  // of a program attached before
    attachedEnd_.reset();
    setState(SessionState::Starting, tr("attaching to the probe of pid %1").arg(probe.pid));
    attachClient_.connectToProbe(probe.socketPath);
}

void LiveSession::stop() {
    if (hasEnded()) return;
    if (origin_ == Origin::Launched) {
        launch_.stop();
        return;
    }
    detaching_ = true;
    const bool connected = attachClient_.isConnected();
    attachClient_.disconnectFromProbe();  // also ends a connection still being made
    if (!connected) setState(SessionState::Detached, tr("detached"));
}

int LiveSession::exitCode() const {
    return origin_ == Origin::Launched ? launch_.exitCode() : -1;
}

ControlClient* LiveSession::control() {
    return origin_ == Origin::Launched ? launch_.control() : &attachClient_;
}

const std::optional<format::control::Hello>& LiveSession::hello() const {
    return origin_ == Origin::Launched ? launch_.control()->helloMessage()
                                       : attachClient_.helloMessage();
}

qint64 LiveSession::probePid() const {
    if (hello()) return hello()->pid;
    return origin_ == Origin::Attached ? attachedProbe_.pid : 0;
}

QString LiveSession::command() const {
    if (hello()) return QString::fromStdString(hello()->command);
    if (origin_ == Origin::Attached) return attachedProbe_.command;
    const LaunchSpec& spec = launch_.spec();
    QStringList words;
    if (!spec.interpreter.isEmpty()) words << spec.interpreter;
    words << spec.program << spec.arguments;
    return words.join(QLatin1Char(' '));
}

QString LiveSession::dumpRoot() const {
    if (origin_ == Origin::Launched) return launch_.dumpRoot();
    return hello() ? QString::fromStdString(hello()->dumpRoot) : QString();
}

QString LiveSession::configPath() const {
    if (origin_ == Origin::Launched) return launch_.configPath();
    return hello() ? QString::fromStdString(hello()->configPath) : QString();
}

qint64 LiveSession::pushConfig(const nlohmann::json& config) {
    if (!canPushConfig()) return -1;
    return control()->pushConfig(config);
}

void LiveSession::setState(SessionState state, const QString& detail) {
    state_ = state;
    detail_ = detail;
    emit stateChanged(state, detail);
}

void LiveSession::onHello(const format::control::Hello& hello) {
    configInForce_ = hello.config;
    if (origin_ == Origin::Attached)
        setState(sessionStateFromProbe(hello.state, SessionState::Sleeping),
                 tr("attached to the probe of pid %1").arg(hello.pid));
    emit helloReceived(hello);
    announceDumpFolder(QString::fromStdString(hello.dumpRoot));
}

void LiveSession::lookForDumpFolder() {
    if (dumpFolderAnnounced_ || origin_ != Origin::Launched) return;
    // The probe writes its status file as it starts: one written since the launch is this run's.
    const QFileInfo status(
        QDir(launch_.dumpRoot()).absoluteFilePath(QStringLiteral("probe_status.json")));
    if (status.exists() && status.lastModified() >= launchedAt_)
        announceDumpFolder(launch_.dumpRoot());
}

void LiveSession::announceDumpFolder(const QString& root) {
    if (dumpFolderAnnounced_ || root.isEmpty()) return;
    dumpFolderAnnounced_ = true;
    dumpFolderTimer_.stop();
    emit dumpFolderReady(root);
}

}  // namespace probe::session
