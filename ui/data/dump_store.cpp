// SPDX-License-Identifier: GPL-3.0-or-later
#include "dump_store.h"

#include <algorithm>

#include <QThread>

#include "dump_loader.h"

namespace probe::data {

DumpStore::DumpStore(QObject* parent) : QObject(parent) {
    qRegisterMetaType<probe::analysis::IndexChange>();
    qRegisterMetaType<std::shared_ptr<probe::analysis::DumpDelta>>();
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
    thread_->quit();
    retiring_.erase(std::remove_if(retiring_.begin(), retiring_.end(),
                                   [](const QPointer<QThread>& t) { return t.isNull(); }),
                    retiring_.end());
    retiring_.push_back(thread_);
    loader_ = nullptr;
    thread_ = nullptr;
}

void DumpStore::resetIndex(analysis::DumpIndex index) {
    emit aboutToReset();
    emit beginModelReset();
    index_ = std::move(index);
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
    resetIndex(analysis::DumpIndex());
    pendingDeltas_ = std::make_shared<std::atomic<int>>(0);
    thread_ = new QThread;
    thread_->setObjectName(QStringLiteral("dump loader"));
    loader_ = new DumpLoader(path, generation_, idlePollMs_, pendingDeltas_);
    loader_->moveToThread(thread_);
    connect(thread_, &QThread::started, loader_, &DumpLoader::start);
    connect(loader_, &DumpLoader::opened, this, &DumpStore::onLoaderOpened, Qt::QueuedConnection);
    connect(loader_, &DumpLoader::failed, this, &DumpStore::onLoaderFailed, Qt::QueuedConnection);
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
    resetIndex(analysis::DumpIndex());
}

QString DumpStore::dumpState() const {
    const auto status = index_.status();
    return status ? QString::fromLatin1(format::toString(status->state)) : QString();
}

QString DumpStore::roundName() const {
    return index_.layout() == analysis::DumpLayout::Msprobe ? QStringLiteral("step")
                                                            : QStringLiteral("round");
}

void DumpStore::onLoaderOpened(quint64 generation, int layout, const QString& root) {
    if (generation != generation_) return;
    open_ = true;
    resetIndex(analysis::DumpIndex(static_cast<analysis::DumpLayout>(layout), root.toStdString()));
    emit opened(root);
}

void DumpStore::onLoaderFailed(quint64 generation, const QString& message) {
    if (generation != generation_) return;
    emit openFailed(message);
}

void DumpStore::onDelta(quint64 generation, const std::shared_ptr<analysis::DumpDelta>& delta) {
    // The counter belongs to the loader that sent the delta; a stale one's is gone with it.
    if (generation != generation_) return;
    --*pendingDeltas_;
    // The pieces of one poll share its progress: said once.
    const bool progressed = bytesDone_ != static_cast<qint64>(delta->bytesDone) ||
                            bytesTotal_ != static_cast<qint64>(delta->bytesTotal) || !delta->more;
    bytesDone_ = static_cast<qint64>(delta->bytesDone);
    bytesTotal_ = static_cast<qint64>(delta->bytesTotal);
    QStringList problems;
    for (const auto& p : delta->problems) problems << QString::fromStdString(p);
    const QString stateBefore = dumpState();
    const analysis::IndexChange change = index_.apply(std::move(*delta));
    if (progressed) emit loadProgress(bytesDone_, bytesTotal_);
    if (!change.empty()) emit changed(change);
    if (!problems.isEmpty()) emit problemsAdded(problems);
    if (dumpState() != stateBefore) emit dumpStateChanged(dumpState());
}

void DumpStore::onCaughtUp(quint64 generation) {
    if (generation != generation_ || initialLoadDone_) return;
    initialLoadDone_ = true;
    emit initialLoadFinished();
}

}  // namespace probe::data
