// What the user is looking at in the open dump: an op, one of its tensors (slot), a round, and
// so one statistic row. Views follow it and set it; it keeps the four consistent.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>

#include "analysis/dump_index.h"

namespace probe::data {

class DumpStore;

class DumpCursor : public QObject {
    Q_OBJECT
public:
    explicit DumpCursor(DumpStore* store, QObject* parent = nullptr);

    uint32_t op() const { return op_; }
    uint32_t slot() const { return slot_; }
    int32_t round() const { return round_; }  // -1: none chosen (the latest is meant)
    // The row of the current slot in the current round (or its latest), kNone if none.
    uint32_t row() const;

    // Selecting an op picks its representative tensor, unless the current one belongs to it.
    void setOp(uint32_t op);
    void setSlot(uint32_t slot);
    void setRound(int32_t round);
    // Op, slot and round of one row at once (a click on a plot point or a table row).
    void setRow(uint32_t row);
    // Nothing selected, the latest round. Done by itself when the dump's data is about to go,
    // while everything still agrees with it.
    void clear();

signals:
    void opChanged(uint32_t op);
    void slotChanged(uint32_t slot);
    void roundChanged(int32_t round);
    // Any of the above: emitted once per change.
    void changed();

private:
    DumpStore* store_;
    uint32_t op_ = analysis::kNone;
    uint32_t slot_ = analysis::kNone;
    int32_t round_ = -1;
};

}  // namespace probe::data
