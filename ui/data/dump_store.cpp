// SPDX-License-Identifier: GPL-3.0-or-later
#include "dump_store.h"

#include <algorithm>

#include <QFutureWatcher>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include "background_pool.h"
#include "dump_loader.h"

namespace probe::data {

DumpStore::DumpStore(QObject* parent)
    : QObject(parent), index_(newSharedIndex(analysis::DumpIndex())) {
    qRegisterMetaType<probe::analysis::IndexChange>();
    qRegisterMetaType<std::shared_ptr<probe::analysis::DumpDelta>>();
    qRegisterMetaType<std::shared_ptr<probe::analysis::DumpIndex>>();
}

DumpStore::~DumpStore() {
    stopLoader();
    // Loaders finish at most one poll (a bounded amount of reading) after being asked to stop.
    for (const auto& thread : retiring_) {
        if (!thread) continue;
        thread->wait();
        delete thread;
    }
}

void DumpStore::stopLoader() {
    if (!thread_) return;
    // Not waited for here: the GUI must not block on a poll in progress. The thread and its
    // loader delete themselves once the poll ends; whatever they still send is stale.
    loader_->requestStop();
    connect(thread_, &QThread::finished, loader_, &QObject::deleteLater);
    connect(thread_, &QThread::finished, thread_, &QObject::deleteLater);
    // Queued: it arrives after every delta the loader sent (all dropped as stale).
    ++retiringLoaders_;
    connect(thread_, &QThread::finished, this, [this] {
        if (--retiringLoaders_ == 0) emit loadersRetired();
    });
    thread_->quit();
    retiring_.erase(std::remove_if(retiring_.begin(), retiring_.end(),
                                   [](const QPointer<QThread>& t) { return t.isNull(); }),
                    retiring_.end());
    retiring_.push_back(thread_);
    loader_ = nullptr;
    thread_ = nullptr;
}

void DumpStore::resetIndex(std::shared_ptr<analysis::DumpIndex> index) {
    emit aboutToReset();
    emit beginModelReset();
    index_ = std::move(index);  // the old one is freed by its last owner (newSharedIndex)
    waiting_.clear();           // a copy under way is dropped when it arrives (by generation)
    unsharing_ = false;
    initialLoadDone_ = false;
    bytesDone_ = bytesTotal_ = 0;
    emit endModelReset();
    emit wasReset();
}

void DumpStore::open(const QString& path) {
    stopLoader();
    ++generation_;
    requestedPath_ = path;
    open_ = false;
    resetIndex(newSharedIndex(analysis::DumpIndex()));
    pendingDeltas_ = std::make_shared<std::atomic<int>>(0);
    thread_ = new QThread;
    thread_->setObjectName(QStringLiteral("dump loader"));
    loader_ = new DumpLoader(path, generation_, idlePollMs_, pendingDeltas_);
    loader_->moveToThread(thread_);
    connect(thread_, &QThread::started, loader_, &DumpLoader::start);
    connect(loader_, &DumpLoader::opened, this, &DumpStore::onLoaderOpened, Qt::QueuedConnection);
    connect(loader_, &DumpLoader::failed, this, &DumpStore::onLoaderFailed, Qt::QueuedConnection);
    connect(loader_, &DumpLoader::progress, this, &DumpStore::onProgress, Qt::QueuedConnection);
    connect(loader_, &DumpLoader::loaded, this, &DumpStore::onLoaded, Qt::QueuedConnection);
    connect(loader_, &DumpLoader::deltaReady, this, &DumpStore::onDelta, Qt::QueuedConnection);
    connect(loader_, &DumpLoader::caughtUp, this, &DumpStore::onCaughtUp, Qt::QueuedConnection);
    thread_->start();
}

void DumpStore::pollNow() {
    if (loader_) QMetaObject::invokeMethod(loader_, &DumpLoader::pollNow, Qt::QueuedConnection);
}

void DumpStore::close() {
    stopLoader();
    ++generation_;
    requestedPath_.clear();
    open_ = false;
    resetIndex(newSharedIndex(analysis::DumpIndex()));
}

QString DumpStore::dumpState() const {
    const auto status = index_->status();
    return status ? QString::fromLatin1(format::toString(status->state)) : QString();
}

QString DumpStore::roundName() const {
    return index_->layout() == analysis::DumpLayout::Msprobe ? QStringLiteral("step")
                                                             : QStringLiteral("round");
}

void DumpStore::onLoaderOpened(quint64 generation, int layout, const QString& root) {
    if (generation != generation_) return;
    open_ = true;
    resetIndex(newSharedIndex(
        analysis::DumpIndex(static_cast<analysis::DumpLayout>(layout), root.toStdString())));
    emit opened(root);
}

void DumpStore::onLoaderFailed(quint64 generation, const QString& message) {
    if (generation != generation_) return;
    emit openFailed(message);
}

void DumpStore::onProgress(quint64 generation, qint64 done, qint64 total) {
    if (generation != generation_) return;
    bytesDone_ = done;
    bytesTotal_ = total;
    emit loadProgress(done, total);
}

void DumpStore::onLoaded(quint64 generation, const std::shared_ptr<analysis::DumpIndex>& index,
                         const QStringList& problems) {
    if (generation != generation_) return;
    const QString stateBefore = dumpState();
    const qint64 done = bytesDone_, total = bytesTotal_;
    resetIndex(index);
    bytesDone_ = done;
    bytesTotal_ = total;
    // Everything is new: said as growth too, for listeners that follow growth only.
    const auto& idx = *index_;
    analysis::IndexChange change;
    change.newOps = static_cast<uint32_t>(idx.opCount());
    change.newRows = static_cast<uint32_t>(idx.rowCount());
    change.newProcesses = static_cast<uint32_t>(idx.processCount());
    for (uint32_t p = 0; p < idx.processCount(); ++p)
        change.newRounds = change.newRounds || !idx.process(p).rounds.empty();
    change.statusChanged = idx.status().has_value() || !idx.statusError().empty();
    if (!change.empty()) emit changed(change);
    if (!problems.isEmpty()) emit problemsAdded(problems);
    if (dumpState() != stateBefore) emit dumpStateChanged(dumpState());
}

void DumpStore::onDelta(quint64 generation, const std::shared_ptr<analysis::DumpDelta>& delta) {
    // The counter belongs to the loader that sent the delta; a stale one's is gone with it.
    if (generation != generation_) return;
    // An idle poll's delta changes nothing: no reason to copy a shared index for it.
    if (unsharing_ || (index_.use_count() > 1 && !delta->empty())) {
        waiting_.push_back(delta);  // in order; the loader pauses while too many wait
        unshareIndex();
        return;
    }
    applyDelta(std::move(*delta));
}

void DumpStore::applyDelta(analysis::DumpDelta&& delta) {
    --*pendingDeltas_;
    // The pieces of one poll share its progress: said once.
    const bool progressed = bytesDone_ != static_cast<qint64>(delta.bytesDone) ||
                            bytesTotal_ != static_cast<qint64>(delta.bytesTotal) || !delta.more;
    bytesDone_ = static_cast<qint64>(delta.bytesDone);
    bytesTotal_ = static_cast<qint64>(delta.bytesTotal);
    QStringList problems;
    for (const auto& p : delta.problems) problems << QString::fromStdString(p);
    const QString stateBefore = dumpState();
    const analysis::IndexChange change =
        delta.empty() ? analysis::IndexChange() : index_->apply(std::move(delta));
    if (progressed) emit loadProgress(bytesDone_, bytesTotal_);
    if (!change.empty()) emit changed(change);
    if (!problems.isEmpty()) emit problemsAdded(problems);
    if (dumpState() != stateBefore) emit dumpStateChanged(dumpState());
}

void DumpStore::unshareIndex() {
    if (unsharing_) return;
    unsharing_ = true;
    // Nothing changes the index meanwhile (deltas wait), so the worker may read it.
    std::shared_ptr<const analysis::DumpIndex> shared = index_;
    const quint64 generation = generation_;
    // The copy is handed over through a holder, not as the future's result: a result kept by
    // the future would share the copy in turn.
    auto copy = std::make_shared<std::shared_ptr<analysis::DumpIndex>>();
    auto* watcher = new QFutureWatcher<void>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation, copy] {
        watcher->deleteLater();
        onUnshared(generation, std::move(*copy));
    });
    watcher->setFuture(QtConcurrent::run(backgroundPool(), [shared, copy] {
        *copy = newSharedIndex(analysis::DumpIndex(*shared));
    }));
}

void DumpStore::onUnshared(quint64 generation, std::shared_ptr<analysis::DumpIndex> copy) {
    if (generation != generation_ || !unsharing_) return;  // replaced meanwhile
    unsharing_ = false;
    // Views read the copy from now on: the same data, the same numbers.
    index_ = std::move(copy);
    std::vector<std::shared_ptr<analysis::DumpDelta>> waiting;
    waiting.swap(waiting_);
    for (size_t i = 0; i < waiting.size(); ++i) {
        if (index_.use_count() > 1) {  // a snapshot was taken meanwhile: copy again
            waiting_.assign(waiting.begin() + static_cast<std::ptrdiff_t>(i), waiting.end());
            unshareIndex();
            return;
        }
        applyDelta(std::move(*waiting[i]));
    }
}

void DumpStore::onCaughtUp(quint64 generation) {
    if (generation != generation_ || initialLoadDone_) return;
    initialLoadDone_ = true;
    emit initialLoadFinished();
}

}  // namespace probe::data
