// SPDX-License-Identifier: GPL-3.0-or-later
#include "session/control_client.h"

#include <variant>

#include "probe/format/json_input.h"

namespace probe::session {
namespace control = format::control;

namespace {

// This end's requests are numbered: another id (of another client's request) is none of them.
qint64 requestId(const nlohmann::json& request) {
    return request.is_number_integer() ? request.get<qint64>() : -1;
}

}  // namespace

ControlClient::ControlClient(QObject* parent) : QObject(parent) {
    // Said first, so that the probe knows which protocol this end speaks.
    connect(&socket_, &QLocalSocket::connected, this, [this] { send(control::ClientHello{}); });
    connect(&socket_, &QLocalSocket::readyRead, this, &ControlClient::readLines);
    connect(&socket_, &QLocalSocket::disconnected, this, &ControlClient::disconnected);
    connect(&socket_, &QLocalSocket::errorOccurred, this,
            [this](QLocalSocket::LocalSocketError error) {
                if (error == QLocalSocket::PeerClosedError) return;  // reported as disconnected()
                emit failed(describe(error));
            });
}

QString ControlClient::describe(QLocalSocket::LocalSocketError error) const {
    // Qt's own texts name its function ("QLocalSocket::connectToServer: Invalid name" for a
    // socket file that is not there), not what happened to the probe.
    switch (error) {
        case QLocalSocket::ServerNotFoundError:
            return tr("its socket %1 is gone").arg(socketPath_);
        case QLocalSocket::ConnectionRefusedError:
            return tr("its socket %1 refused the connection (the probe may be stopping)")
                .arg(socketPath_);
        case QLocalSocket::SocketAccessError:
            return tr("no permission to use its socket %1").arg(socketPath_);
        default:
            return socket_.errorString();
    }
}

void ControlClient::connectToProbe(const QString& socketPath) {
    socketPath_ = socketPath;
    buffer_.clear();
    skippingLongLine_ = false;
    hello_.reset();
    socket_.abort();
    socket_.connectToServer(socketPath);
}

void ControlClient::disconnectFromProbe() {
    socket_.disconnectFromServer();
}

bool ControlClient::isConnected() const {
    return socket_.state() == QLocalSocket::ConnectedState;
}

void ControlClient::send(const control::ClientMessage& message) {
    socket_.write(QByteArray::fromStdString(control::toLine(message)));
    socket_.flush();
}

qint64 ControlClient::pushConfig(const nlohmann::json& config) {
    const qint64 id = nextRequest_++;
    send(control::SetConfig{config, id});
    return id;
}

qint64 ControlClient::ping() {
    const qint64 id = nextRequest_++;
    send(control::Ping{id});
    return id;
}

void ControlClient::readLines() {
    constexpr auto kLimits = format::kControlClientLineLimits;
    buffer_ += socket_.readAll();
    qsizetype start = 0, newline;
    while ((newline = buffer_.indexOf('\n', start)) >= 0) {
        const std::string_view line(buffer_.constData() + start,
                                    static_cast<size_t>(newline - start));
        start = newline + 1;
        if (skippingLongLine_) {
            skippingLongLine_ = false;
            continue;
        }
        if (line.empty()) continue;
        // A bad line is said and skipped; the connection lives on.
        auto received = control::parseProbeMessage(line);
        if (!received.problem.empty()) {
            emit messageReceived(format::MessageLevel::Error,
                                 QString::fromStdString(received.problem));
            continue;
        }
        if (received.ignored()) continue;  // a newer probe's message
        dispatch(*received.message);
        if (!socket_.isOpen()) return;  // dispatch refused the probe
    }
    buffer_.remove(0, start);
    if (static_cast<uint64_t>(buffer_.size()) > kLimits.maxBytes) {
        if (!skippingLongLine_)
            emit messageReceived(format::MessageLevel::Error,
                                 tr("the probe sent a line longer than %1 bytes; it was ignored")
                                     .arg(kLimits.maxBytes));
        skippingLongLine_ = true;
        buffer_.clear();
    }
}

void ControlClient::dispatch(control::ProbeMessage& message) {
    auto text = [](const std::string& s) { return QString::fromStdString(s); };
    if (auto* greeting = std::get_if<control::Hello>(&message)) {
        if (greeting->protocol != control::kProtocolVersion) {
            emit failed(tr("the probe speaks control protocol %1, this application %2: use Probe "
                           "Studio and a probe of the same version")
                            .arg(greeting->protocol)
                            .arg(control::kProtocolVersion));
            socket_.abort();
            return;
        }
        hello_ = *greeting;
        emit hello(*greeting);
    } else if (auto* layer = std::get_if<control::Layer>(&message)) {
        emit layerDiscovered(text(layer->id), text(layer->name), text(layer->opType));
    } else if (auto* written = std::get_if<control::RowsWritten>(&message)) {
        emit rowsWritten(*written);
    } else if (auto* state = std::get_if<control::StateChanged>(&message)) {
        emit stateChanged(state->state, text(state->reason));
    } else if (auto* applied = std::get_if<control::ConfigApplied>(&message)) {
        emit configApplied(applied->config, QString::fromLatin1(control::toString(applied->source)),
                           requestId(applied->request));
    } else if (auto* rejected = std::get_if<control::ConfigRejected>(&message)) {
        emit configRejected(text(rejected->reason),
                            QString::fromLatin1(control::toString(rejected->source)),
                            requestId(rejected->request));
    } else if (auto* notice = std::get_if<control::Notice>(&message)) {
        emit messageReceived(notice->level, text(notice->text));
    } else if (auto* answer = std::get_if<control::Pong>(&message)) {
        emit pong(answer->id.is_number_integer() ? answer->id.get<qint64>() : -1);
    } else if (auto* refused = std::get_if<control::Refused>(&message)) {
        emit failed(tr("the probe refused this application: %1").arg(text(refused->reason)));
        socket_.abort();
    }
}

}  // namespace probe::session
