// Where overflows are born in the open dump (analysis::findOverflowBirths, as `probe overflow`),
// computed off the GUI thread on a copy of the index once the dump is read, and again (a pause
// after it changed) while it grows. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QObject>
#include <QString>
#include <QTimer>

#include "analysis/overflow_check.h"

namespace probe::data {

class DumpStore;

struct BornOverflow {
    uint32_t op = analysis::kNone;
    uint32_t row = analysis::kNone;  // its first overflowed output in that round
    int32_t round = 0;
    QString why;  // "output 0: max=inf"
};

class OverflowBirths : public QObject {
    Q_OBJECT
public:
    explicit OverflowBirths(DumpStore* store, QObject* parent = nullptr);

    // The births, per process in execution order (the first of each process: as `probe overflow`).
    const std::vector<BornOverflow>& births() const { return births_; }
    // The first birth of the first process that has one; nullptr when none is known.
    const BornOverflow* first() const { return births_.empty() ? nullptr : &births_.front(); }
    bool isBirth(uint32_t op) const;
    // A search is under way (or waiting for the dump to settle).
    bool busy() const { return running_ || pause_.isActive(); }
    // Rows of this dump the last finished search looked at; 0 before one has finished.
    uint64_t rowsSearched() const { return rowsSearched_; }
    // How long after a change a growing dump is searched again (milliseconds): at most once
    // per this while it keeps growing.
    void setPause(int ms) { pause_.setInterval(ms); }

signals:
    // births() changed (also to empty: a new dump).
    void changed();
    // A search ended (whether or not births() changed).
    void searched();

private:
    void clear();
    void search();

    DumpStore* store_;
    std::vector<BornOverflow> births_;
    QTimer pause_;
    bool running_ = false;
    bool again_ = false;  // the dump changed during the search
    uint64_t rowsSearched_ = 0;
    quint64 request_ = 0;
};

}  // namespace probe::data
