// The worker that reads a dump folder on its own thread: opens a reader, polls it (at once
// while there is more, then at an idle interval that backs off), and hands each delta to the
// store by a queued signal, tagged with the store's generation.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <memory>

#include <QObject>
#include <QString>
#include <QTimer>

#include "analysis/dump_reader.h"

namespace probe::data {

class DumpLoader : public QObject {
    Q_OBJECT
public:
    DumpLoader(QString path, quint64 generation, int idlePollMs,
               std::shared_ptr<std::atomic<int>> pendingDeltas);

    // Asks the loader to stop at its next step; safe from any thread.
    void requestStop() { stopRequested_ = true; }

public slots:
    void start();
    // Polls at once instead of at the next (maybe backed-off) interval: the probe said over its
    // socket that it wrote more. Called on the loader's thread (queued).
    void pollNow();

signals:
    void opened(quint64 generation, int layout, const QString& root);
    void failed(quint64 generation, const QString& message);
    void deltaReady(quint64 generation, const std::shared_ptr<probe::analysis::DumpDelta>& delta);
    // A poll found nothing more to read right now (the first one ends the initial load).
    void caughtUp(quint64 generation);

private:
    void pollOnce();
    void schedule(int ms);

    QString path_;
    quint64 generation_;
    int idlePollMs_;
    int idleMs_ = 0;
    std::shared_ptr<std::atomic<int>> pendingDeltas_;
    std::unique_ptr<analysis::DumpReader> reader_;
    QTimer* timer_ = nullptr;
    std::atomic<bool> stopRequested_{false};
    int nudgedPolls_ = 0;  // quick polls left after pollNow()
    bool caughtUpOnce_ = false;
    bool trimmed_ = false;
};

}  // namespace probe::data
