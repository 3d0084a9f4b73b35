// The op executions a RunComparison found in one run only, as a table: the run, the round, the
// op and its type, in the order the comparison found them (CompareResult::unpaired: the first
// few thousand; listed() and total() say when there were more). Where the runs part by their
// structure (a cast added in one of them, a layer skipped), these are the ops to look at; the
// compared-ops table lists pairs only. Resets around every new result. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QAbstractTableModel>

#include "compare_runs.h"

namespace probe::data {

class UnpairedOpsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { RunColumn, RoundColumn, OpColumn, TypeColumn, ColumnCount };
    enum Role {
        // uint: the row in the shown dump (the candidate) that stands for the op in its round,
        // kNone for an op of the reference or one without rows.
        CandidateRowRole = Qt::UserRole + 1,
        InReferenceRole,  // bool: the op ran in the reference only
        SortRole,         // what a sort orders by: the round as a number
    };

    explicit UnpairedOpsModel(RunComparison* comparison, QObject* parent = nullptr);

    // Executions listed, and all of them (more when the comparison listed only the first ones).
    int listed() const { return rows_; }
    uint64_t total() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    RunComparison* comparison_;
    int rows_ = 0;
};

}  // namespace probe::data
