// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_tensors_model.h"

#include <algorithm>
#include <cmath>

#include <QColor>
#include <QFileInfo>

#include "dump_store.h"
#include "op_tree_model.h"

namespace probe::data {

using analysis::kNone;

OpTensorsModel::OpTensorsModel(DumpStore* store, QObject* parent)
    : QAbstractTableModel(parent), store_(store) {
    connect(store_, &DumpStore::beginModelReset, this, [this] {
        beginResetModel();
        op_ = kNone;
        rows_.clear();
        paths_.clear();
    });
    connect(store_, &DumpStore::endModelReset, this, [this] { endResetModel(); });
    connect(store_, &DumpStore::changed, this, [this](const analysis::IndexChange& change) {
        if (op_ == kNone ||
            !std::binary_search(change.touchedOps.begin(), change.touchedOps.end(), op_))
            return;
        refresh();
        // Rows shown whose statistics arrived (from tensor files) read anew: the same rows.
        if (!change.statisticsRows.empty() && !rows_.empty())
            emit dataChanged(index(0, 0),
                             index(static_cast<int>(rows_.size()) - 1, columnCount() - 1));
    });
}

std::vector<uint32_t> OpTensorsModel::collect() const {
    std::vector<uint32_t> rows;
    const auto& idx = store_->index();
    if (op_ == kNone || op_ >= idx.opCount()) return rows;
    for (uint32_t slot : idx.op(op_).tensorSlots) {
        if (round_ >= 0) {
            if (const uint32_t row = idx.slotRow(slot, round_); row != kNone) rows.push_back(row);
        } else {
            const auto& slotRows = idx.slot(slot).rows;
            rows.insert(rows.end(), slotRows.begin(), slotRows.end());
        }
    }
    // By round, then inputs before outputs in the order the op's tensors were first seen.
    std::stable_sort(rows.begin(), rows.end(),
                     [&](uint32_t a, uint32_t b) { return idx.row(a).round < idx.row(b).round; });
    return rows;
}

void OpTensorsModel::refresh() {
    std::vector<uint32_t> rows = collect();
    // Growing dumps mostly add rows of later rounds: append them instead of resetting views.
    if (rows.size() > rows_.size() && std::equal(rows_.begin(), rows_.end(), rows.begin())) {
        beginInsertRows({}, static_cast<int>(rows_.size()), static_cast<int>(rows.size()) - 1);
        rows_ = std::move(rows);
        endInsertRows();
        return;
    }
    if (rows == rows_) return;
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

void OpTensorsModel::setOp(uint32_t op) {
    if (op == op_) return;
    beginResetModel();
    op_ = op;
    rows_ = collect();
    endResetModel();
}

void OpTensorsModel::setRound(int32_t round) {
    if (round == round_) return;
    beginResetModel();
    round_ = round;
    rows_ = collect();
    endResetModel();
}

QString OpTensorsModel::tensorPath(uint32_t row) const {
    // atb rows read their path back from statistic.csv: remember it for repaints.
    auto it = paths_.find(row);
    if (it != paths_.end()) return it->second;
    const QString path = QString::fromStdString(store_->index().tensorPath(row));
    paths_.emplace(row, path);
    return path;
}

int OpTensorsModel::tableRowOf(uint32_t row) const {
    auto it = std::find(rows_.begin(), rows_.end(), row);
    return it == rows_.end() ? -1 : static_cast<int>(it - rows_.begin());
}

int OpTensorsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int OpTensorsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant OpTensorsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const auto& idx = store_->index();
    const uint32_t rowIndex = rows_[index.row()];
    const auto& row = idx.row(rowIndex);
    const auto& slot = idx.slot(row.slot);
    const int column = index.column();
    if (role == RowRole) return rowIndex;
    if (role == SlotRole) return row.slot;
    if (role == Qt::TextAlignmentRole) {
        if (column == RoundColumn || (column >= MaxColumn && column <= NormColumn))
            return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    if (role == Qt::ForegroundRole && column >= MaxColumn && column <= NormColumn) {
        const auto stat = static_cast<analysis::Stat>(column - MaxColumn);
        if (row.has(stat) && std::isnan(row.get(stat))) return QColor(200, 30, 30);
        if (row.has(stat) && std::isinf(row.get(stat))) return QColor(210, 120, 0);
        return {};
    }
    if (role == Qt::ToolTipRole && column == FileColumn) {
        if (!row.hasTensorFile) return QStringLiteral("no tensor file (task \"statistics\")");
        return tensorPath(rowIndex);
    }
    if (role != Qt::DisplayRole) return {};
    switch (column) {
        case RoundColumn:
            return row.round;
        case DirectionColumn:
            return slot.isOutput ? QStringLiteral("output") : QStringLiteral("input");
        case IndexColumn:
            return QString::fromStdString(slot.index);
        case DtypeColumn:
            return QString::fromStdString(idx.text(row.dtype));
        case FormatColumn:
            return QString::fromStdString(idx.text(row.format));
        case ShapeColumn:
            return OpTreeModel::formatShape(idx.text(row.shape));
        case MaxColumn:
        case MinColumn:
        case MeanColumn:
        case NormColumn: {
            const auto stat = static_cast<analysis::Stat>(column - MaxColumn);
            return row.has(stat) ? OpTreeModel::formatValue(row.get(stat)) : QStringLiteral("N/A");
        }
        case FileColumn:
            // Only the file name here (the whole path is in the tooltip); reading it back is cheap
            // for the few rows on screen.
            return row.hasTensorFile ? QFileInfo(tensorPath(rowIndex)).fileName() : QString();
        default:
            return {};
    }
}

QVariant OpTensorsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* const names[] = {"Round", "I/O", "Index", "Dtype", "Format",     "Shape",
                                        "Max",   "Min", "Mean",  "Norm",  "Tensor file"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace probe::data
