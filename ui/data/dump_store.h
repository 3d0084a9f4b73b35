// The open dump: its index (owned by the GUI thread) and the loader thread that reads the folder
// and keeps following it while a model writes it. Views read the index; models listen to
// changed(). Work on other threads reads snapshots of the index (shared, copied only when the
// dump grows meanwhile, and then off the GUI thread). No widgets.
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
    const analysis::DumpIndex& index() const { return *index_; }
    // The index as it is now, for work on another thread: shared, not copied. While a snapshot
    // is held, growth is applied to a copy made on a worker thread (the GUI thread never copies
    // a million rows), and the snapshot stays as it was.
    std::shared_ptr<const analysis::DumpIndex> snapshot() const { return index_; }
    QString requestedPath() const { return requestedPath_; }
    QString root() const { return QString::fromStdString(index_->root()); }
    analysis::DumpLayout layout() const { return index_->layout(); }
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
    // Loaders stopped by open() or close() whose threads are still finishing a poll. Once none
    // is left, nothing stale can arrive any more (what they sent was dropped before).
    int retiringLoaders() const { return retiringLoaders_; }

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
    // The last of the stopped loaders has finished (retiringLoaders() is 0).
    void loadersRetired();

private:
    void stopLoader();
    void onLoaderOpened(quint64 generation, int layout, const QString& root);
    void onLoaderFailed(quint64 generation, const QString& message);
    void onProgress(quint64 generation, qint64 done, qint64 total);
    void onLoaded(quint64 generation, const std::shared_ptr<analysis::DumpIndex>& index,
                  const QStringList& problems);
    void onDelta(quint64 generation, const std::shared_ptr<analysis::DumpDelta>& delta);
    void applyDelta(analysis::DumpDelta&& delta);
    // Makes the index this store's alone again (a snapshot shares it): copied on a worker
    // thread while deltas wait, then swapped in.
    void unshareIndex();
    void onUnshared(quint64 generation, std::shared_ptr<analysis::DumpIndex> copy);
    void onCaughtUp(quint64 generation);
    void resetIndex(std::shared_ptr<analysis::DumpIndex> index);

    std::shared_ptr<analysis::DumpIndex> index_;
    // Deltas that arrived while the index was being copied, applied in order after it.
    std::vector<std::shared_ptr<analysis::DumpDelta>> waiting_;
    bool unsharing_ = false;
    QString requestedPath_;
    bool open_ = false;
    bool initialLoadDone_ = false;
    quint64 generation_ = 0;
    qint64 bytesDone_ = 0, bytesTotal_ = 0;
    int idlePollMs_ = 1000;
    QThread* thread_ = nullptr;
    DumpLoader* loader_ = nullptr;
    std::vector<QPointer<QThread>> retiring_;  // stopped loaders' threads, still finishing a poll
    int retiringLoaders_ = 0;                  // of them, those not finished yet
    // Deltas sent by the loader and not yet applied: the loader waits when too many are queued.
    std::shared_ptr<std::atomic<int>> pendingDeltas_;
};

}  // namespace probe::data
