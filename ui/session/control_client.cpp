// SPDX-License-Identifier: GPL-3.0-or-later
#include "session/control_client.h"

#include <QJsonArray>
#include <QJsonDocument>

#include "probe/format/control_protocol.h"

namespace probe::session {

ControlClient::ControlClient(QObject* parent) : QObject(parent) {
    connect(&socket_, &QLocalSocket::readyRead, this, &ControlClient::readLines);
    connect(&socket_, &QLocalSocket::disconnected, this, &ControlClient::disconnected);
    connect(&socket_, &QLocalSocket::errorOccurred, this, [this](QLocalSocket::LocalSocketError error) {
        if (error == QLocalSocket::PeerClosedError) return;  // reported as disconnected()
        emit failed(socket_.errorString());
    });
}

void ControlClient::connectToProbe(const QString& socketPath) {
    buffer_.clear();
    hello_ = {};
    socket_.abort();
    socket_.connectToServer(socketPath);
}

void ControlClient::disconnectFromProbe() { socket_.disconnectFromServer(); }

bool ControlClient::isConnected() const { return socket_.state() == QLocalSocket::ConnectedState; }

void ControlClient::send(const QJsonObject& message) {
    socket_.write(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n');
    socket_.flush();
}

qint64 ControlClient::pushConfig(const QJsonObject& config) {
    const qint64 id = nextRequest_++;
    send({{"type", "set_config"}, {"id", id}, {"config", config}});
    return id;
}

qint64 ControlClient::ping() {
    const qint64 id = nextRequest_++;
    send({{"type", "ping"}, {"id", id}});
    return id;
}

void ControlClient::readLines() {
    buffer_ += socket_.readAll();
    qsizetype newline;
    while ((newline = buffer_.indexOf('\n')) >= 0) {
        const QByteArray line = buffer_.left(newline);
        buffer_.remove(0, newline + 1);
        QJsonParseError error;
        const auto document = QJsonDocument::fromJson(line, &error);
        if (error.error != QJsonParseError::NoError || !document.isObject()) continue;  // tolerate a bad line
        dispatch(document.object());
    }
}

void ControlClient::dispatch(const QJsonObject& m) {
    const QString type = m.value("type").toString();
    if (type == "hello") {
        const int protocol = m.value("protocol").toInt();
        if (protocol != format::kControlProtocolVersion) {
            emit failed(tr("the probe speaks protocol %1, this application %2: update one of them")
                            .arg(protocol)
                            .arg(format::kControlProtocolVersion));
            socket_.abort();
            return;
        }
        hello_ = m;
        emit hello(m);
    } else if (type == "layer") {
        emit layerDiscovered(m.value("id").toString(), m.value("name").toString(), m.value("op_type").toString());
    } else if (type == "rows") {
        QStringList lines;
        for (const auto& row : m.value("rows").toArray()) lines << row.toString();
        emit rowsReceived(lines);
    } else if (type == "dropped") {
        emit rowsDropped(m.value("rows").toInteger());
    } else if (type == "state") {
        emit stateChanged(m.value("state").toString(), m.value("reason").toString());
    } else if (type == "config_applied") {
        emit configApplied(m.value("config").toObject(), m.value("source").toString(), m.value("request").toInteger(-1));
    } else if (type == "config_rejected") {
        emit configRejected(m.value("reason").toString(), m.value("source").toString(), m.value("request").toInteger(-1));
    } else if (type == "message") {
        emit messageReceived(m.value("level").toString(), m.value("text").toString());
    } else if (type == "pong") {
        emit pong(m.value("id").toInteger());
    }
}

}  // namespace probe::session
