// The statistic rows of one op: every tensor in every round (or one round), one table row per
// statistic.csv row (or dump.json tensor item). Follows the dump as it grows.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <unordered_map>
#include <vector>

#include <QAbstractTableModel>

#include "analysis/dump_index.h"

namespace probe::data {

class DumpStore;

class OpTensorsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        RoundColumn,
        DirectionColumn,
        IndexColumn,
        DtypeColumn,
        FormatColumn,
        ShapeColumn,
        MaxColumn,
        MinColumn,
        MeanColumn,
        NormColumn,
        FileColumn,
        ColumnCount
    };
    enum Role { RowRole = Qt::UserRole + 1, SlotRole };

    explicit OpTensorsModel(DumpStore* store, QObject* parent = nullptr);

    uint32_t op() const { return op_; }
    void setOp(uint32_t op);
    // -1 shows every round.
    int32_t round() const { return round_; }
    void setRound(int32_t round);

    uint32_t rowAt(int tableRow) const {
        return tableRow >= 0 && tableRow < static_cast<int>(rows_.size()) ? rows_[tableRow]
                                                                          : analysis::kNone;
    }
    int tableRowOf(uint32_t row) const;
    // The row's tensor file ("" when it has none).
    QString tensorPath(uint32_t row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<uint32_t> collect() const;
    void refresh();

    DumpStore* store_;
    uint32_t op_ = analysis::kNone;
    int32_t round_ = -1;
    std::vector<uint32_t> rows_;
    mutable std::unordered_map<uint32_t, QString> paths_;
};

}  // namespace probe::data
