// SPDX-License-Identifier: GPL-3.0-or-later
#include "dump_cursor.h"

#include "dump_store.h"

namespace probe::data {

using analysis::kNone;

DumpCursor::DumpCursor(DumpStore* store, QObject* parent) : QObject(parent), store_(store) {
    // Before the models reset: views following the cursor let go of the old rows while the
    // old data and every model still agree (DumpStore's phases).
    connect(store_, &DumpStore::aboutToReset, this, &DumpCursor::clear);
    // An op chosen before it had rows (a model just started): its tensor once it has one.
    connect(store_, &DumpStore::changed, this, [this](const analysis::IndexChange& change) {
        if (op_ == kNone || slot_ != kNone || change.newRows == 0) return;
        const uint32_t slot = store_->index().representativeSlot(op_);
        if (slot != kNone) setSlot(slot);
    });
}

void DumpCursor::clear() {
    const bool opMoves = op_ != kNone, slotMoves = slot_ != kNone, roundMoves = round_ != -1;
    if (!opMoves && !slotMoves && !roundMoves) return;
    op_ = slot_ = kNone;
    round_ = -1;
    if (opMoves) emit opChanged(op_);
    if (slotMoves) emit slotChanged(slot_);
    if (roundMoves) emit roundChanged(round_);
    emit changed();
}

uint32_t DumpCursor::row() const {
    if (slot_ == kNone) return kNone;
    const auto& idx = store_->index();
    const uint32_t row = idx.slotRow(slot_, round_);
    return row;
}

void DumpCursor::setOp(uint32_t op) {
    const auto& idx = store_->index();
    if (op != kNone && op >= idx.opCount()) return;
    if (op == op_) return;
    op_ = op;
    uint32_t slot = op == kNone ? kNone : idx.representativeSlot(op);
    const bool slotMoves = slot != slot_;
    slot_ = slot;
    emit opChanged(op_);
    if (slotMoves) emit slotChanged(slot_);
    emit changed();
}

void DumpCursor::setSlot(uint32_t slot) {
    const auto& idx = store_->index();
    if (slot != kNone && slot >= idx.slotCount()) return;
    if (slot == slot_) return;
    slot_ = slot;
    if (slot != kNone && idx.slot(slot).op != op_) {
        op_ = idx.slot(slot).op;
        emit opChanged(op_);
    }
    emit slotChanged(slot_);
    emit changed();
}

void DumpCursor::setRound(int32_t round) {
    if (round == round_) return;
    round_ = round;
    emit roundChanged(round_);
    emit changed();
}

void DumpCursor::setRow(uint32_t row) {
    const auto& idx = store_->index();
    if (row >= idx.rowCount()) return;
    const auto& r = idx.row(row);
    const uint32_t slot = r.slot;
    const uint32_t op = idx.slot(slot).op;
    const bool opMoves = op != op_, slotMoves = slot != slot_, roundMoves = r.round != round_;
    if (!opMoves && !slotMoves && !roundMoves) return;
    op_ = op;
    slot_ = slot;
    round_ = r.round;
    if (opMoves) emit opChanged(op_);
    if (slotMoves) emit slotChanged(slot_);
    if (roundMoves) emit roundChanged(round_);
    emit changed();
}

}  // namespace probe::data
