// The live session the application shows: a model it launched (through `probe run`) or a probe
// it attached to over the control socket. One interface for both, so that the window, the
// session panel and the config editor need not know which: state, output, the dump folder to
// follow, the config in force, and pushing a new one.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QTimer>
#include <nlohmann/json.hpp>

#include "probe/format/dump_status.h"
#include "session/control_client.h"
#include "session/launch_session.h"
#include "session/live_probes.h"

namespace probe::session {

class LiveSession : public QObject {
    Q_OBJECT
public:
    enum class Origin { Launched, Attached };

    explicit LiveSession(QObject* parent = nullptr);
    ~LiveSession() override;

    // Starts the model as `probe run` does; false (with the state FailedToStart and the reason
    // as its detail) when the spec is refused before anything runs.
    bool launch(const LaunchSpec& spec);
    // Connects to a running probe's control socket; hello, or Detached with the reason, follows.
    void attach(const LiveProbeInfo& probe);
    // Launched: asks the model to stop (SIGTERM, killed after a grace period). Attached: lets
    // the probe go (it goes on running).
    void stop();

    Origin origin() const { return origin_; }
    SessionState state() const { return state_; }
    QString stateDetail() const { return detail_; }
    // The model's exit code once it ended (launched sessions), else -1.
    int exitCode() const;
    bool hasEnded() const { return sessionHasEnded(state_); }
    // Detached from a program that still runs: its end is still to be said ("has ended since").
    bool watchingForProgramEnd() const { return programEndTimer_.isActive(); }
    // The probe's process id (0 until known) and its command line.
    qint64 probePid() const;
    QString command() const;
    const LaunchSpec& launchSpec() const { return launch_.spec(); }
    // The dump folder (atb_dump_data) the session writes; "" until known for an attached probe.
    QString dumpRoot() const;
    // The config file the probe watches ("" when it has none), and the config in force.
    QString configPath() const;
    const nlohmann::json& configInForce() const { return configInForce_; }  // {} until known
    // The connection to the probe (connected once hello arrived).
    ControlClient* control();
    // The probe's hello (none before it arrived).
    const std::optional<format::control::Hello>& hello() const;
    bool canPushConfig() {
        return !hasEnded() && control()->isConnected() && control()->helloMessage();
    }
    // The dump's status as read by whoever follows the dump folder (the context's store): how
    // an attached program ended.
    void takeDumpStatus(const format::DumpStatus& status);
    // Sends an op-level config to the probe; the request id configApplied/configRejected carry,
    // or -1 when no probe is connected.
    qint64 pushConfig(const nlohmann::json& config);

signals:
    void stateChanged(probe::session::SessionState state, const QString& detail);
    // The model's standard output and error (launched), the runtime's messages (attached).
    void output(const QString& text, bool isError);
    // The probe said hello: its pid, dump_root, config_path, config, state...
    void helloReceived(const probe::format::control::Hello& hello);
    // The dump folder exists and belongs to this session: open it and follow it. Once.
    void dumpFolderReady(const QString& dumpRoot);
    // The probe wrote statistics rows (its doorbell) or met a new layer-level op: its dump
    // folder holds more (the rows are read from the folder, the single source of truth).
    void dumpGrew();
    // The probe applied a config (from its file or from a client), or refused one; `request`
    // is a pushConfig() id, or -1.
    void configApplied(const nlohmann::json& config, const QString& source, qint64 request);
    void configRejected(const QString& reason, const QString& source, qint64 request);

private:
    // Whether the program of the probe attached to (or let go) still runs.
    bool attachedProgramRuns() const;
    void setState(SessionState state, const QString& detail);
    void onHello(const format::control::Hello& hello);
    void connectControl(ControlClient* client);
    void lookForDumpFolder();
    void announceDumpFolder(const QString& root);

    Origin origin_ = Origin::Launched;
    LaunchSession launch_;
    ControlClient attachClient_;
    LiveProbeInfo attachedProbe_;
    SessionState state_ = SessionState::NotStarted;
    QString detail_;
    nlohmann::json configInForce_ = nlohmann::json::object();
    QDateTime launchedAt_;
    QTimer dumpFolderTimer_;
    // After a detach: looks for the program's end, which the session then says (it said "goes
    // on running" long after the program had ended).
    QTimer programEndTimer_;
    // The attached program has ended; how, once its dump's status says so (whoever saw it end
    // wrote it: probe run, the probe at a signal).
    bool programEnded_ = false;
    std::optional<format::ProgramEnd> attachedEnd_;
    void sayTheProgramEnded();
    void sayHowTheProgramEnded();
    bool dumpFolderAnnounced_ = false;
    bool detaching_ = false;
    // The attached probe said it stopped (it does as its program exits, whose /proc entry
    // outlives the connection by the interpreter's teardown): the connection closing next is not
    // a mere "closed the connection".
    bool probeStopped_ = false;
};

}  // namespace probe::session
