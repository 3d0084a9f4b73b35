// SPDX-License-Identifier: GPL-3.0-or-later
#include "session/recent_sessions.h"

#include <algorithm>
#include <initializer_list>

#include <QFileInfo>
#include <QSettings>

namespace probe::session {
namespace {

const QString kGroup = QStringLiteral("recentSessions");

QString kindName(RecentSession::Kind kind) {
    switch (kind) {
        case RecentSession::Kind::Launch:
            return QStringLiteral("launch");
        case RecentSession::Kind::Attach:
            return QStringLiteral("attach");
        case RecentSession::Kind::Open:
            return QStringLiteral("open");
        case RecentSession::Kind::Compare:
            return QStringLiteral("compare");
    }
    return {};
}

}  // namespace

QString RecentSession::title() const {
    switch (kind) {
        case Kind::Launch: {
            QStringList words;
            if (!launch.interpreter.isEmpty()) words << QFileInfo(launch.interpreter).fileName();
            words << launch.program << launch.arguments;
            return words.join(QLatin1Char(' '));
        }
        case Kind::Attach:
            return QObject::tr("pid %1: %2").arg(pid).arg(command);
        case Kind::Open:
        case Kind::Compare:
            return path;
    }
    return {};
}

bool RecentSession::sameAs(const RecentSession& o) const {
    if (kind != o.kind) return false;
    switch (kind) {
        case Kind::Launch:
            return launch.interpreter == o.launch.interpreter &&
                   launch.program == o.launch.program && launch.arguments == o.launch.arguments &&
                   launch.workingDirectory == o.launch.workingDirectory &&
                   launch.environment == o.launch.environment &&
                   launch.configPath == o.launch.configPath;
        case Kind::Attach:
            return pid == o.pid && path == o.path;
        case Kind::Open:
            return QFileInfo(path).absoluteFilePath() == QFileInfo(o.path).absoluteFilePath();
        case Kind::Compare:
            return QFileInfo(path).absoluteFilePath() == QFileInfo(o.path).absoluteFilePath() &&
                   QFileInfo(reference).absoluteFilePath() ==
                       QFileInfo(o.reference).absoluteFilePath();
    }
    return false;
}

RecentSessions::RecentSessions(QObject* parent, int capacity)
    : QObject(parent), capacity_(capacity) {}

QList<RecentSession> RecentSessions::list() const {
    QSettings settings;
    QList<RecentSession> sessions;
    const int count = settings.beginReadArray(kGroup);
    for (int i = 0; i < count; ++i) {
        settings.setArrayIndex(i);
        RecentSession s;
        const QString kind = settings.value(QStringLiteral("kind")).toString();
        using Kind = RecentSession::Kind;
        const auto known = {Kind::Launch, Kind::Attach, Kind::Open, Kind::Compare};
        const auto named =
            std::find_if(known.begin(), known.end(), [&](Kind k) { return kindName(k) == kind; });
        if (named == known.end()) continue;  // written by a newer version
        s.kind = *named;
        s.when = settings.value(QStringLiteral("when")).toDateTime();
        s.path = settings.value(QStringLiteral("path")).toString();
        s.pid = settings.value(QStringLiteral("pid")).toLongLong();
        s.command = settings.value(QStringLiteral("command")).toString();
        s.reference = settings.value(QStringLiteral("reference")).toString();
        s.launch.interpreter = settings.value(QStringLiteral("interpreter")).toString();
        s.launch.program = settings.value(QStringLiteral("program")).toString();
        s.launch.arguments = settings.value(QStringLiteral("arguments")).toStringList();
        s.launch.workingDirectory = settings.value(QStringLiteral("workingDirectory")).toString();
        s.launch.environment = settings.value(QStringLiteral("environment")).toStringList();
        s.launch.outputDirectory = settings.value(QStringLiteral("outputDirectory")).toString();
        s.launch.configPath = settings.value(QStringLiteral("configPath")).toString();
        sessions << s;
    }
    settings.endArray();
    return sessions;
}

void RecentSessions::add(RecentSession session) {
    if (!session.when.isValid()) session.when = QDateTime::currentDateTime();
    QList<RecentSession> sessions = list();
    sessions.removeIf([&](const RecentSession& s) { return s.sameAs(session); });
    sessions.prepend(session);
    while (sessions.size() > capacity_) sessions.removeLast();
    save(sessions);
}

void RecentSessions::clear() {
    save({});
}

void RecentSessions::save(const QList<RecentSession>& sessions) {
    QSettings settings;
    settings.remove(kGroup);
    settings.beginWriteArray(kGroup, static_cast<int>(sessions.size()));
    for (int i = 0; i < sessions.size(); ++i) {
        const RecentSession& s = sessions[i];
        settings.setArrayIndex(i);
        settings.setValue(QStringLiteral("kind"), kindName(s.kind));
        settings.setValue(QStringLiteral("when"), s.when);
        settings.setValue(QStringLiteral("path"), s.path);
        if (s.kind == RecentSession::Kind::Attach) {
            settings.setValue(QStringLiteral("pid"), s.pid);
            settings.setValue(QStringLiteral("command"), s.command);
        }
        if (s.kind == RecentSession::Kind::Compare)
            settings.setValue(QStringLiteral("reference"), s.reference);
        if (s.kind == RecentSession::Kind::Launch) {
            settings.setValue(QStringLiteral("interpreter"), s.launch.interpreter);
            settings.setValue(QStringLiteral("program"), s.launch.program);
            settings.setValue(QStringLiteral("arguments"), s.launch.arguments);
            settings.setValue(QStringLiteral("workingDirectory"), s.launch.workingDirectory);
            settings.setValue(QStringLiteral("environment"), s.launch.environment);
            settings.setValue(QStringLiteral("outputDirectory"), s.launch.outputDirectory);
            settings.setValue(QStringLiteral("configPath"), s.launch.configPath);
        }
    }
    settings.endArray();
    settings.sync();
    emit changed();
}

}  // namespace probe::session
