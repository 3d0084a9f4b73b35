// SPDX-License-Identifier: GPL-3.0-or-later
#include "overflow_births.h"

#include <algorithm>
#include <memory>

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "background_pool.h"
#include "dump_store.h"

namespace probe::data {

OverflowBirths::OverflowBirths(DumpStore* store, QObject* parent) : QObject(parent), store_(store) {
    pause_.setSingleShot(true);
    pause_.setInterval(1000);
    connect(&pause_, &QTimer::timeout, this, &OverflowBirths::search);
    connect(store_, &DumpStore::aboutToReset, this, &OverflowBirths::clear);
    connect(store_, &DumpStore::initialLoadFinished, this, &OverflowBirths::search);
    // Not restarted by each change: rows of a live run come more often than the pause, and the
    // search waited for them to stop, which was mostly the run's end.
    connect(store_, &DumpStore::changed, this, [this] {
        if (store_->initialLoadDone() && !pause_.isActive()) pause_.start();
    });
    if (store_->isOpen() && store_->initialLoadDone()) search();
}

bool OverflowBirths::isBirth(uint32_t op) const {
    for (const auto& birth : births_)
        if (birth.op == op) return true;
    return false;
}

void OverflowBirths::clear() {
    ++request_;  // a search under way is for the old dump
    pause_.stop();
    again_ = false;
    rowsSearched_ = 0;
    if (births_.empty()) return;
    births_.clear();
    emit changed();
}

void OverflowBirths::search() {
    if (!store_->isOpen()) return;
    if (running_) {
        again_ = true;
        return;
    }
    running_ = true;
    const quint64 request = ++request_;
    // A snapshot: the loader's deltas change the store's index on this thread meanwhile.
    std::shared_ptr<const analysis::DumpIndex> index = store_->snapshot();
    auto* watcher = new QFutureWatcher<std::vector<BornOverflow>>(this);
    const uint64_t rows = index->rowCount();
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, request, rows] {
        watcher->deleteLater();
        running_ = false;
        if (request == request_) {
            rowsSearched_ = rows;
            std::vector<BornOverflow> found = watcher->result();
            const bool same =
                found.size() == births_.size() &&
                std::equal(found.begin(), found.end(), births_.begin(),
                           [](const auto& a, const auto& b) {
                               return a.op == b.op && a.round == b.round && a.row == b.row;
                           });
            births_ = std::move(found);
            if (!same) emit changed();
        }
        emit searched();
        if (again_) {
            again_ = false;
            pause_.start();
        }
    });
    watcher->setFuture(QtConcurrent::run(backgroundPool(), [index] {
        std::vector<BornOverflow> births;
        // Rows a task tensor dump left without statistics get them from the store, which reads
        // the files once (each search reading them again held gigabytes and minutes).
        analysis::OverflowOptions options;
        options.readTensorFiles = false;
        const analysis::OverflowReport report = analysis::findOverflowBirths(*index, options);
        for (const auto& b : report.births) {
            BornOverflow born;
            born.op = b.op;
            born.round = b.round;
            born.why = QString::fromStdString(b.why);
            for (const auto& output : b.outputs)
                if (output.overflowed) {
                    born.row = output.row;
                    break;
                }
            births.push_back(born);
        }
        return births;
    }));
}

}  // namespace probe::data
