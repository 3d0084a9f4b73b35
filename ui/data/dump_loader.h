// The worker that reads a dump folder on its own thread: opens a reader, polls it (at once
// while there is more, then at an idle interval that backs off), and hands what it read to the
// store by queued signals, tagged with the store's generation: what the folder holds when it is
// opened as one index built here (loaded), then each delta as the dump grows.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <memory>

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include "analysis/dump_reader.h"

namespace probe::data {

// An index shared between the store, the loader and snapshots; a big one is freed on a worker
// thread by whichever owner lets go last.
std::shared_ptr<analysis::DumpIndex> newSharedIndex(analysis::DumpIndex&& index);

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
    // Progress of the initial load: bytes of row files read, and known in all.
    void progress(quint64 generation, qint64 done, qint64 total);
    // The initial load, indexed here (applying a million rows on the GUI thread would hold it
    // up for seconds): the store takes the index over whole. `problems` are those of its deltas.
    void loaded(quint64 generation, const std::shared_ptr<probe::analysis::DumpIndex>& index,
                const QStringList& problems);
    void deltaReady(quint64 generation, const std::shared_ptr<probe::analysis::DumpDelta>& delta);
    // A poll found nothing more to read right now (the first one ends the initial load).
    void caughtUp(quint64 generation);

private:
    void pollOnce();
    // The initial load: each delta applied here, then the index handed over whole.
    void applyInitial(analysis::DumpDelta&& delta);
    void handOverInitial();
    void schedule(int ms);

    QString path_;
    quint64 generation_;
    int idlePollMs_;
    int idleMs_ = 0;
    std::shared_ptr<std::atomic<int>> pendingDeltas_;
    std::unique_ptr<analysis::DumpReader> reader_;
    // The index of the initial load, until it is handed over.
    std::shared_ptr<analysis::DumpIndex> initial_;
    QStringList initialProblems_;
    QTimer* timer_ = nullptr;
    std::atomic<bool> stopRequested_{false};
    int nudgedPolls_ = 0;  // quick polls left after pollNow()
    bool caughtUpOnce_ = false;
    bool trimmed_ = false;
};

}  // namespace probe::data
