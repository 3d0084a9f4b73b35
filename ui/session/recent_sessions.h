// The sessions the start page offers again: models launched (their launch specs), probes
// attached to, dump folders opened, runs compared. Kept in the application's settings (QSettings),
// most recent first. SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QList>
#include <QObject>
#include <QString>

#include "session/launch_session.h"

namespace probe::session {

struct RecentSession {
    enum class Kind { Launch, Attach, Open, Compare };
    Kind kind = Kind::Open;
    QDateTime when;
    LaunchSpec launch;  // Launch (probeExecutable is not kept)
    qint64 pid = 0;     // Attach: the probe's process
    QString command;    // Attach: its command line
    QString path;       // Open: the folder; Attach, Launch: the dump folder (atb_dump_data);
                        // Compare: the candidate's folder
    QString reference;  // Compare: the reference's folder

    // What the start page lists: the command line, or the folder (a comparison's candidate).
    QString title() const;
    // The same session again (the same launch spec, probe, folder or pair of folders), whatever
    // its date.
    bool sameAs(const RecentSession& other) const;
};

class RecentSessions : public QObject {
    Q_OBJECT
public:
    explicit RecentSessions(QObject* parent = nullptr, int capacity = 12);

    QList<RecentSession> list() const;
    // Puts the session first (dropping an earlier entry for the same session and the oldest
    // beyond the capacity) and saves the list.
    void add(RecentSession session);
    void clear();

signals:
    void changed();

private:
    void save(const QList<RecentSession>& sessions);
    int capacity_;
};

}  // namespace probe::session
