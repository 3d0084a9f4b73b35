// SPDX-License-Identifier: GPL-3.0-or-later
#include "session/live_probes.h"

#include <QFile>

#include "probe/format/control_protocol.h"

namespace probe::session {
namespace {

qint64 parentOf(qint64 pid) {
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly)) return 0;
    const QByteArray text = stat.readAll();
    // "pid (comm) state ppid ...": the command may hold spaces and parentheses.
    const qsizetype close = text.lastIndexOf(')');
    const QList<QByteArray> fields = text.mid(close + 2).split(' ');
    return fields.size() > 1 ? fields[1].toLongLong() : 0;
}

QString commandOf(qint64 pid) {
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
    if (!cmdline.open(QIODevice::ReadOnly)) return {};
    QByteArray text = cmdline.readAll();
    text.replace('\0', ' ');
    return QString::fromLocal8Bit(text).trimmed();
}

}  // namespace

QList<LiveProbeInfo> liveProbes() {
    QList<LiveProbeInfo> probes;
    for (const auto& probe : format::listLiveProbes())
        probes.push_back({probe.pid, parentOf(probe.pid), QString::fromStdString(probe.socketPath),
                          commandOf(probe.pid)});
    return probes;
}

std::optional<LiveProbeInfo> probeOfProcess(qint64 pid) {
    std::optional<LiveProbeInfo> found;
    for (const LiveProbeInfo& probe : liveProbes()) {
        if (probe.pid == pid) return probe;
        if (isDescendantOf(probe.pid, pid) && (!found || probe.pid < found->pid)) found = probe;
    }
    return found;
}

bool isDescendantOf(qint64 pid, qint64 ancestor) {
    for (int depth = 0; pid > 1 && depth < 64; ++depth) {
        if (pid == ancestor) return true;
        pid = parentOf(pid);
    }
    return false;
}

}  // namespace probe::session
