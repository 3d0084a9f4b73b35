// `probe replay DIR --op ID --round N --json` for one op, run as a separate process (QProcess:
// the GUI thread never waits), its verdict parsed for the application. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QString>

namespace probe::data {

struct ReplayVerdict {
    bool ran = false;  // probe replay ran and printed a result for the op
    QString opId, opName, opType;
    int round = 0;
    QString verdict;  // ok, WRONG, inherits, overflow, not replayable
    QString reason;
    double maxAbsErr = 0, maxRelErr = 0, maxUlpErr = 0;  // the dumped output's, against float64
    bool hasMeasures = false;
    int exitCode = 0;
    QString error;  // when it did not run: why, for people
};

class OpReplay : public QObject {
    Q_OBJECT
public:
    explicit OpReplay(QObject* parent = nullptr);
    ~OpReplay() override;

    // `probe` beside this application unless set.
    void setProbeExecutable(const QString& path) { probe_ = path; }
    QString probeExecutable() const;

    // Starts the replay of op `opId` in `round` of the dump at `dumpRoot` (a process folder
    // name narrows it to that process). A replay still running is stopped first.
    void start(const QString& dumpRoot, const QString& opId, int round,
               const QString& process = QString());
    bool isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }
    const ReplayVerdict& last() const { return last_; }

    // The verdict of `probe replay --json` output (exposed for tests).
    static ReplayVerdict parse(const QByteArray& json, const QString& opId, int round);

signals:
    void started(const QString& opId, int round);
    void finished(const probe::data::ReplayVerdict& verdict);

private:
    void stop();

    QString probe_;
    QPointer<QProcess> process_;
    ReplayVerdict last_;
};

}  // namespace probe::data
