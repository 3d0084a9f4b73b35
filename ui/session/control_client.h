// The application's side of the live control socket (docs/control-protocol.md).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QLocalSocket>
#include <QObject>
#include <QString>
#include <QStringList>

namespace probe::session {

class ControlClient : public QObject {
    Q_OBJECT
public:
    explicit ControlClient(QObject* parent = nullptr);

    // Connects to a probe's socket; hello() follows, or failed() with the reason.
    void connectToProbe(const QString& socketPath);
    void disconnectFromProbe();
    bool isConnected() const;
    // The probe's hello (empty before it arrived).
    QJsonObject helloMessage() const { return hello_; }

    // Asks the probe to apply `config` (an op-level config object); returns the request id that
    // configApplied / configRejected will carry.
    qint64 pushConfig(const QJsonObject& config);
    qint64 ping();

signals:
    void hello(const QJsonObject& message);
    void layerDiscovered(const QString& id, const QString& name, const QString& opType);
    void rowsReceived(const QStringList& csvLines);
    void rowsDropped(qint64 count);
    void stateChanged(const QString& state, const QString& reason);
    void configApplied(const QJsonObject& config, const QString& source, qint64 request);
    void configRejected(const QString& reason, const QString& source, qint64 request);
    void messageReceived(const QString& level, const QString& text);
    void pong(qint64 id);
    void failed(const QString& reason);
    void disconnected();

private:
    void readLines();
    void dispatch(const QJsonObject& message);
    void send(const QJsonObject& message);

    QLocalSocket socket_;
    QByteArray buffer_;
    bool skippingLongLine_ = false;  // dropping the rest of a line over the limit
    QJsonObject hello_;
    qint64 nextRequest_ = 1;
};

}  // namespace probe::session
