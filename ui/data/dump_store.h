// The open dump: its index (owned by the GUI thread) and the loader thread that reads the folder
// and keeps following it while a model writes it. Views read the index; models listen to
// changed(). No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QTimer>

#include "analysis/dump_index.h"

namespace probe::data {

class DumpLoader;

class DumpStore : public QObject {
    Q_OBJECT
public:
    explicit DumpStore(QObject* parent = nullptr);
    ~DumpStore() override;

    // Opens a dump folder of either layout and follows it while it grows. Asynchronous:
    // opened() or openFailed() follows. A later open() or close() makes every result of this
    // one stale (dropped).
    void open(const QString& path);
    void close();

    bool isOpen() const { return open_; }
    const analysis::DumpIndex& index() const { return index_; }
    QString requestedPath() const { return requestedPath_; }
    QString root() const { return QString::fromStdString(index_.root()); }
    analysis::DumpLayout layout() const { return index_.layout(); }
    // Everything the folder held when it was opened has been read.
    bool initialLoadDone() const { return initialLoadDone_; }
    // running | complete | incomplete (probe_status.json), or "" when the dump has no status.
    QString dumpState() const;
    // What a round is called in this layout, as the probe and its CLI call it: "step" (msprobe)
    // or "round" (atb: an execution count).
    QString roundName() const;
    // Bytes of row files read so far and known in all, for progress.
    qint64 bytesDone() const { return bytesDone_; }
    qint64 bytesTotal() const { return bytesTotal_; }
    // Each open() gets a new generation; results tagged with an older one are dropped.
    quint64 generation() const { return generation_; }

    // How often a finished or idle dump is looked at again (milliseconds).
    void setIdlePollInterval(int ms) { idlePollMs_ = ms; }
    // Reads the folder again now rather than at the next interval: for a live session whose
    // probe says (over its socket) that it wrote more.
    void pollNow();

signals:
    // Replacing the index (close, open, and the folder read at last) goes through four phases,
    // in this order whatever order listeners connected in, so that no view ever looks at an
    // item model between its beginResetModel and endResetModel:
    //  aboutToReset      the old data is still there and every model agrees with it: drop what
    //                    refers to it (the cursor, pins, a previewed row) and let views follow;
    //  beginModelReset   item models over the index begin their reset (nothing else listens);
    //  endModelReset     the new index is in place: item models end their reset;
    //  wasReset          every model agrees with the new index: views rebuild.
    void aboutToReset();
    void beginModelReset();
    void endModelReset();
    void wasReset();
    void opened(const QString& root);
    void openFailed(const QString& message);
    void loadProgress(qint64 done, qint64 total);
    void changed(const probe::analysis::IndexChange& change);
    void initialLoadFinished();
    void dumpStateChanged(const QString& state);
    void problemsAdded(const QStringList& problems);

private:
    void stopLoader();
    void onLoaderOpened(quint64 generation, int layout, const QString& root);
    void onLoaderFailed(quint64 generation, const QString& message);
    void onDelta(quint64 generation, const std::shared_ptr<analysis::DumpDelta>& delta);
    void onCaughtUp(quint64 generation);
    void resetIndex(analysis::DumpIndex index);

    analysis::DumpIndex index_;
    QString requestedPath_;
    bool open_ = false;
    bool initialLoadDone_ = false;
    quint64 generation_ = 0;
    qint64 bytesDone_ = 0, bytesTotal_ = 0;
    int idlePollMs_ = 1000;
    QThread* thread_ = nullptr;
    DumpLoader* loader_ = nullptr;
    std::vector<QPointer<QThread>> retiring_;  // stopped loaders' threads, still finishing a poll
    // Deltas sent by the loader and not yet applied: the loader waits when too many are queued.
    std::shared_ptr<std::atomic<int>> pendingDeltas_;
};

}  // namespace probe::data
