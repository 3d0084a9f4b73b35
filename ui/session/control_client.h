// The application's side of the live control socket (docs/control-protocol.md; the messages
// are typed once, for both ends, in probe/format/control_messages.h).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>

#include <QLocalSocket>
#include <QObject>
#include <QString>
#include <nlohmann/json.hpp>

#include "probe/format/control_messages.h"

namespace probe::session {

class ControlClient : public QObject {
    Q_OBJECT
public:
    explicit ControlClient(QObject* parent = nullptr);

    // Connects to a probe's socket and says hello; hello() follows, or failed() with the reason.
    void connectToProbe(const QString& socketPath);
    void disconnectFromProbe();
    bool isConnected() const;
    // The probe's hello (none before it arrived).
    const std::optional<format::control::Hello>& helloMessage() const { return hello_; }

    // Asks the probe to apply `config` (an op-level config object); returns the request id that
    // configApplied / configRejected will carry.
    qint64 pushConfig(const nlohmann::json& config);
    qint64 ping();

signals:
    void hello(const probe::format::control::Hello& message);
    void layerDiscovered(const QString& id, const QString& name, const QString& opType);
    // The probe appended rows to its statistic.csv files: the dump folder holds more.
    void rowsWritten(const probe::format::control::RowsWritten& written);
    void stateChanged(probe::format::ProbeState state, const QString& reason);
    void configApplied(const nlohmann::json& config, const QString& source, qint64 request);
    void configRejected(const QString& reason, const QString& source, qint64 request);
    void messageReceived(probe::format::MessageLevel level, const QString& text);
    void pong(qint64 id);
    void failed(const QString& reason);
    void disconnected();

private:
    void readLines();
    void dispatch(format::control::ProbeMessage& message);
    void send(const format::control::ClientMessage& message);
    QString describe(QLocalSocket::LocalSocketError error) const;

    QLocalSocket socket_;
    QString socketPath_;
    QByteArray buffer_;
    bool skippingLongLine_ = false;  // dropping the rest of a line over the limit
    std::optional<format::control::Hello> hello_;
    qint64 nextRequest_ = 1;
};

}  // namespace probe::session
