// The compared op executions of a RunComparison as a table, in the reference's execution order:
// round, op, verdict, the tensor that decided it, the rule, and the error measures. Either
// every compared execution or only those that diverge (born here or inherited). Resets around
// every new result (RunComparison::aboutToChange/changed). Sorts itself (sort()): a proxy
// model would map every one of hundreds of thousands of rows on the GUI thread at each reset,
// and ask data() for both sides of every comparison while sorting. A big table is sorted off the
// GUI thread (a click on a header of 500,000 rows took 70-180 ms there) and takes its new order
// when that is done (sortApplied); until then it keeps the order it had. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
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
    // later results and filters. Tables of more than inlineSortRows() rows are sorted on a
    // worker thread: the order changes when sortApplied() is emitted.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    void setInlineSortRows(size_t rows) { inlineSortRows_ = rows; }
    size_t inlineSortRows() const { return inlineSortRows_; }
    // A sort of the rows is under way off the GUI thread.
    bool sorting() const { return sortsRunning_ > 0; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

signals:
    // The rows took the order of the last sort() (or of a new result with a sort column).
    void sortApplied();

private:
    void rebuild();
    // Sorts the rows by sortColumn_ (inline or on a worker thread), then applyOrder().
    void startSort();
    void applyOrder(std::vector<uint32_t> ops);

    RunComparison* comparison_;
    bool divergingOnly_ = false;
    int sortColumn_ = -1;
    Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
    size_t inlineSortRows_ = 50000;
    uint64_t sortRequest_ = 0;  // bumped by every sort (and rebuild): only the newest is applied
    int sortsRunning_ = 0;
    std::vector<uint32_t> ops_;  // listed compared ops, in the table's order
};

}  // namespace probe::data
