// SPDX-License-Identifier: GPL-3.0-or-later
#include "session/control_client.h"

#include <QJsonArray>
#include <QJsonDocument>

#include "probe/format/control_protocol.h"
#include "probe/format/json_input.h"

namespace probe::session {
namespace {

// A value the guarded parser accepted (bounded depth, UTF-8, finite numbers) as Qt's JSON.
QJsonValue toQt(const nlohmann::json& value) {
    switch (value.type()) {
        case nlohmann::json::value_t::boolean:
            return value.get<bool>();
        case nlohmann::json::value_t::number_integer:
            return static_cast<qint64>(value.get<int64_t>());
        case nlohmann::json::value_t::number_unsigned:
            return static_cast<double>(value.get<uint64_t>());
        case nlohmann::json::value_t::number_float:
            return value.get<double>();
        case nlohmann::json::value_t::string:
            return QString::fromStdString(value.get_ref<const std::string&>());
        case nlohmann::json::value_t::array: {
            QJsonArray array;
            for (const auto& item : value) array.append(toQt(item));
            return array;
        }
        case nlohmann::json::value_t::object: {
            QJsonObject object;
            for (const auto& item : value.items())
                object.insert(QString::fromStdString(item.key()), toQt(item.value()));
            return object;
        }
        default:
            return QJsonValue();
    }
}

}  // namespace

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
    skippingLongLine_ = false;
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
        auto parsed = format::parseJson(line, "the probe's message", kLimits);
        if (!parsed.ok() || !parsed.value->is_object()) {
            emit messageReceived(QStringLiteral("error"),
                                 QString::fromStdString(
                                     parsed.ok() ? "the probe sent a line that is not a JSON object"
                                                 : parsed.error.toString()));
            continue;
        }
        dispatch(toQt(*parsed.value).toObject());
        if (!socket_.isOpen()) return;  // dispatch refused the probe
    }
    buffer_.remove(0, start);
    if (static_cast<uint64_t>(buffer_.size()) > kLimits.maxBytes) {
        if (!skippingLongLine_)
            emit messageReceived(QStringLiteral("error"),
                                 tr("the probe sent a line longer than %1 bytes; it was ignored")
                                     .arg(kLimits.maxBytes));
        skippingLongLine_ = true;
        buffer_.clear();
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
