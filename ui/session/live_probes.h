// Probes running now, for the attach dialog: their sockets and what they run.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>

#include <QList>
#include <QString>

namespace probe::session {

struct LiveProbeInfo {
    qint64 pid = 0;
    qint64 parentPid = 0;
    QString socketPath;
    QString command;  // the process's command line
};

QList<LiveProbeInfo> liveProbes();

// Whether `pid` is `ancestor` or one of its descendants (from /proc).
bool isDescendantOf(qint64 pid, qint64 ancestor);

// The probe running in process `pid`, else the first (lowest pid) among its descendants: the
// model under `probe run`, a shell script or a launcher is found from the pid the user knows.
std::optional<LiveProbeInfo> probeOfProcess(qint64 pid);

}  // namespace probe::session
