// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_replay.h"

#include <algorithm>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace probe::data {

OpReplay::OpReplay(QObject* parent) : QObject(parent) {}

OpReplay::~OpReplay() {
    stop();
}

QString OpReplay::probeExecutable() const {
    return probe_.isEmpty() ? QDir(QCoreApplication::applicationDirPath())
                                  .absoluteFilePath(QStringLiteral("probe"))
                            : probe_;
}

void OpReplay::stop() {
    if (!process_) return;
    process_->disconnect(this);
    if (process_->state() != QProcess::NotRunning) {
        process_->kill();
        process_->waitForFinished(3000);  // a killed child ends at once; its exit is reaped here
    }
    process_->deleteLater();
    process_ = nullptr;
}

void OpReplay::start(const QString& dumpRoot, const QString& opId, int round,
                     const QString& processKey) {
    stop();
    last_ = ReplayVerdict{};
    last_.opId = opId;
    last_.round = round;
    const QString probe = probeExecutable();
    if (!QFileInfo(probe).isExecutable()) {
        last_.error = tr("the probe command line tool is missing: %1").arg(probe);
        emit finished(last_);
        return;
    }
    QStringList args{QStringLiteral("replay"),  dumpRoot,
                     QStringLiteral("--op"),    opId,
                     QStringLiteral("--round"), QString::number(round),
                     QStringLiteral("--json")};
    if (!processKey.isEmpty()) args << QStringLiteral("--process") << processKey;
    auto* process = new QProcess(this);
    process_ = process;
    connect(process, &QProcess::errorOccurred, this,
            [this, process, probe](QProcess::ProcessError error) {
                if (error != QProcess::FailedToStart || process != process_) return;
                last_.error = tr("%1 could not be started: %2").arg(probe, process->errorString());
                process_->deleteLater();
                process_ = nullptr;
                emit finished(last_);
            });
    connect(process, &QProcess::finished, this,
            [this, process, opId, round](int exitCode, QProcess::ExitStatus status) {
                if (process != process_) return;
                const QByteArray out = process->readAllStandardOutput();
                const QString err = QString::fromUtf8(process->readAllStandardError()).trimmed();
                process_->deleteLater();
                process_ = nullptr;
                last_ = parse(out, opId, round);
                last_.exitCode = exitCode;
                if (!last_.ran) {
                    if (status != QProcess::NormalExit)
                        last_.error = tr("probe replay crashed");
                    else if (last_.error.isEmpty())
                        last_.error = err.isEmpty()
                                          ? tr("probe replay ended with exit code %1").arg(exitCode)
                                          : err.section(QLatin1Char('\n'), -3);
                }
                emit finished(last_);
            });
    process->start(probe, args);
    emit started(opId, round);
}

ReplayVerdict OpReplay::parse(const QByteArray& json, const QString& opId, int round) {
    ReplayVerdict v;
    v.opId = opId;
    v.round = round;
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (!document.isObject()) {
        v.error = json.trimmed().isEmpty()
                      ? QString()
                      : tr("probe replay printed no JSON: %1").arg(error.errorString());
        return v;
    }
    const QJsonArray results = document.object().value(QStringLiteral("results")).toArray();
    for (const auto& item : results) {
        const QJsonObject r = item.toObject();
        if (r.value(QStringLiteral("op_id")).toString() != opId && results.size() > 1) continue;
        v.ran = true;
        v.opId = r.value(QStringLiteral("op_id")).toString();
        v.opName = r.value(QStringLiteral("op_name")).toString();
        v.opType = r.value(QStringLiteral("op_type")).toString();
        v.round = r.value(QStringLiteral("round")).toInt(round);
        v.verdict = r.value(QStringLiteral("verdict")).toString();
        v.reason = r.value(QStringLiteral("reason")).toString();
        for (const auto& output : r.value(QStringLiteral("outputs")).toArray()) {
            const QJsonObject measures = output.toObject().value(QStringLiteral("dump")).toObject();
            if (measures.isEmpty()) continue;
            // Non-finite measures are strings ("inf"): toDouble of a string is 0, so read both.
            auto number = [&](const char* key) {
                const QJsonValue value = measures.value(QLatin1String(key));
                return value.isString() ? value.toString().toDouble() : value.toDouble();
            };
            v.maxAbsErr = std::max(v.maxAbsErr, number("max_abs_err"));
            v.maxRelErr = std::max(v.maxRelErr, number("max_rel_err"));
            v.maxUlpErr = std::max(v.maxUlpErr, number("max_ulp_err"));
            v.hasMeasures = true;
        }
        break;
    }
    if (!v.ran)
        v.error =
            tr("probe replay found no op %1 with tensor data in round %2").arg(opId).arg(round);
    return v;
}

}  // namespace probe::data
