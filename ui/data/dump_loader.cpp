// SPDX-License-Identifier: GPL-3.0-or-later
#include "dump_loader.h"

#include <exception>

#include <QCoreApplication>
#include <QThread>
#include <QThreadPool>

#include "background_pool.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace probe::data {
namespace {

// Fast polls while a dump is growing; idle ones back off to the configured interval.
constexpr int kBusyPollMs = 200;
// Deltas allowed to wait for the GUI thread before the loader pauses (bounds memory).
constexpr int kMaxPendingDeltas = 3;
// Ops, tensors or rows per delta handed to the GUI thread: applying one takes a few ms.
constexpr size_t kMaxItemsPerDelta = 10000;
// After a nudge (pollNow), quick polls that may find nothing yet: the probe tells its socket
// about rows a little before its writer thread has appended them to the file.
constexpr int kNudgedPolls = 5;
constexpr int kNudgedPollMs = 40;

// An index with more ops and rows than this is freed on a worker thread.
constexpr size_t kFreeElsewhereItems = 100000;

}  // namespace

std::shared_ptr<analysis::DumpIndex> newSharedIndex(analysis::DumpIndex&& index) {
    return std::shared_ptr<analysis::DumpIndex>(
        new analysis::DumpIndex(std::move(index)), [](analysis::DumpIndex* gone) {
            // Freeing a million rows takes a while: never on the GUI thread, wherever the last
            // owner lets go (a replaced dump, a comparison's snapshot). Elsewhere, it is freed
            // where it is let go: that thread is already off the GUI's.
            auto* app = QCoreApplication::instance();
            if (gone->rowCount() + gone->opCount() > kFreeElsewhereItems && app &&
                QThread::currentThread() == app->thread())
                backgroundPool()->start([gone] { delete gone; });
            else
                delete gone;
        });
}

DumpLoader::DumpLoader(QString path, quint64 generation, int idlePollMs,
                       std::shared_ptr<std::atomic<int>> pendingDeltas)
    : path_(std::move(path)),
      generation_(generation),
      idlePollMs_(idlePollMs),
      pendingDeltas_(std::move(pendingDeltas)) {}

void DumpLoader::start() {
    timer_ = new QTimer(this);
    timer_->setSingleShot(true);
    connect(timer_, &QTimer::timeout, this, &DumpLoader::pollOnce);
    std::string error;
    try {
        reader_ = analysis::openDumpReader(path_.toStdString(), &error);
    } catch (const std::exception& e) {
        error = path_.toStdString() + ": " + e.what();
    }
    if (!reader_) {
        emit failed(generation_, QString::fromStdString(error));
        return;
    }
    // A task tensor dump prints no statistics: the tree, the plots and the first NaN get them
    // from the tensor files, once the rows are shown.
    reader_->setStatisticsFromTensorFiles(true);
    reader_->setStopFlag(&stopRequested_);  // a poll of a huge tensor file is given up at once
    initial_ = newSharedIndex(analysis::DumpIndex(reader_->layout(), reader_->root()));
    emit opened(generation_, static_cast<int>(reader_->layout()),
                QString::fromStdString(reader_->root()));
    schedule(0);
}

void DumpLoader::pollNow() {
    // A poll in progress (timer not active) schedules the next one itself.
    if (stopRequested_ || !timer_) return;
    nudgedPolls_ = kNudgedPolls;
    if (timer_->isActive()) timer_->start(0);
}

void DumpLoader::schedule(int ms) {
    if (!stopRequested_) timer_->start(ms);
}

void DumpLoader::applyInitial(analysis::DumpDelta&& delta) {
    emit progress(generation_, static_cast<qint64>(delta.bytesDone),
                  static_cast<qint64>(delta.bytesTotal));
    for (const auto& problem : delta.problems) initialProblems_ << QString::fromStdString(problem);
    initial_->apply(std::move(delta));  // reads the rows, leaves them
    reader_->reuseRows(std::move(delta.rows));
}

void DumpLoader::handOverInitial() {
    emit loaded(generation_, initial_, initialProblems_);
    initial_.reset();
    initialProblems_.clear();
}

void DumpLoader::pollOnce() {
    if (stopRequested_) return;
    if (pendingDeltas_->load() >= kMaxPendingDeltas) {  // the GUI thread is behind: let it catch up
        schedule(5);
        return;
    }
    auto delta = std::make_shared<analysis::DumpDelta>();
    try {
        *delta = reader_->poll(analysis::kDefaultPollBudget);
    } catch (const std::exception& e) {
        // Readers report problems rather than throw; if one does, its state may no longer match
        // the index, so stop following rather than risk wrong data.
        delta = std::make_shared<analysis::DumpDelta>();
        delta->problems.push_back("reading " + reader_->root() + " stopped: " + e.what() +
                                  "; reopen the folder to try again");
        if (initial_) {
            applyInitial(std::move(*delta));
            handOverInitial();
        } else {
            ++*pendingDeltas_;
            emit deltaReady(generation_, delta);
        }
        emit caughtUp(generation_);
        return;
    }
    const bool more = delta->more;
    const bool found = !delta->rows.empty() || !delta->ops.empty() || delta->status.has_value();
    // Statistics still to compute from tensor files (a poll that reads rows computes none, so
    // that they are shown first): the next poll at once while it reads rows or computes some.
    const bool statisticsLeft = delta->statisticsPending.value_or(0) > 0 &&
                                (!delta->rowStatistics.empty() || !delta->rows.empty());
    if (initial_) {
        applyInitial(std::move(*delta));
        if (more) {
            schedule(0);
            return;
        }
        handOverInitial();
    } else {
#ifdef __GLIBC__
        // Once the initial load is handed over, give back the freed delta buffers malloc keeps
        // in its arenas (hundreds of MiB after a big dump). Done here, off the GUI thread.
        if (caughtUpOnce_ && !trimmed_ && pendingDeltas_->load() == 0) {
            trimmed_ = true;
            malloc_trim(0);
        }
#endif
        // Handed over in pieces: the GUI thread applies each between its other events.
        for (auto& piece : analysis::splitDelta(std::move(*delta), kMaxItemsPerDelta)) {
            ++*pendingDeltas_;
            emit deltaReady(generation_, std::make_shared<analysis::DumpDelta>(std::move(piece)));
        }
        if (more) {
            schedule(0);
            return;
        }
    }
    emit caughtUp(generation_);
    caughtUpOnce_ = true;
    if (statisticsLeft) {
        schedule(0);
        return;
    }
    if (found) nudgedPolls_ = 0;
    if (!found && nudgedPolls_ > 0) {
        --nudgedPolls_;
        schedule(kNudgedPollMs);
        return;
    }
    idleMs_ = found ? kBusyPollMs : std::min(idlePollMs_, std::max(kBusyPollMs, idleMs_ * 3 / 2));
    schedule(idleMs_);
}

}  // namespace probe::data
