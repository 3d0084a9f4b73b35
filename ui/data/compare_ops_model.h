// The compared op executions of a RunComparison as a table, in the reference's execution order:
// round, op, verdict, the tensor that decided it, the rule, and the error measures. Either
// every compared execution or only those that diverge (born here or inherited). Resets around
// every new result (RunComparison::aboutToChange/changed). Sorts itself (sort()): a proxy
// model would map every one of hundreds of thousands of rows on the GUI thread at each reset,
// and ask data() for both sides of every comparison while sorting. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QAbstractTableModel>

#include "compare_runs.h"

namespace probe::data {

class CompareOpsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        RoundColumn,
        OpColumn,
        VerdictColumn,
        CauseColumn,  // the tensor that decided the verdict
        RuleColumn,
        MaxRelativeErrorColumn,
        CosineColumn,
        MaxAbsoluteErrorColumn,
        ColumnCount
    };
    enum Role {
        ComparedOpRole = Qt::UserRole + 1,  // uint: index into the result's ops
        CandidateOpRole,                    // uint: the op in the shown dump's index
        CandidateRowRole,                   // uint: the deciding (or first) tensor's row there
        VerdictRole,                        // int: RunComparison::Verdict
        SortRole,                           // what sort() orders by: numbers as numbers
    };

    explicit CompareOpsModel(RunComparison* comparison, QObject* parent = nullptr);

    // Only the executions that diverge (born here, inherited), or all of them.
    void setDivergingOnly(bool on);
    bool divergingOnly() const { return divergingOnly_; }
    // Orders the rows by a column's SortRole (ties and column -1: execution order); kept for
    // later results and filters.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    void rebuild();
    void sortOps();

    RunComparison* comparison_;
    bool divergingOnly_ = false;
    int sortColumn_ = -1;
    Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
    std::vector<uint32_t> ops_;  // listed compared ops, in the table's order
};

}  // namespace probe::data
