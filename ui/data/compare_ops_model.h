// The compared op executions of a RunComparison as a table, in the reference's execution order:
// round, op, verdict, the tensor that decided it, the rule, and the error measures. Either
// every compared execution or only those that diverge (born here or inherited). Resets around
// every new result (RunComparison::aboutToChange/changed). Sorts itself (sort()): a proxy
// model would map every one of hundreds of thousands of rows on the GUI thread at each reset,
// and ask data() for both sides of every comparison while sorting. A big table is sorted off the
// GUI thread (a click on a header of 500,000 rows took 70-180 ms there) and takes its new order
// when that is done (sortApplied); until then it keeps the order it had. A big result's rows
// are added a slice at a time, one slice per turn of the event loop (rowSlice()): a view makes
// an item per row (a header section) as it is told of rows, which for 500,000 rows at once
// held the GUI thread 20 ms and more. A big table's rows are never listed on the GUI thread:
// every compared op in execution order is no list at all (row i is op i), the diverging ones
// are listed by the comparison's worker, a sorted order by the sort's. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <QAbstractTableModel>
#include <QTimer>

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
    // later results and filters. A measure that is NaN is the worst it can say (NaN or Inf in one
    // run), as bad as the worst infinity (an error's +Inf, a cosine's -Inf): first when the worst
    // comes first (errors descending, cosine ascending), last otherwise.
    // Tables of more than inlineSortRows() rows are sorted on a worker thread: the order changes
    // when sortApplied() is emitted.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    void setInlineSortRows(size_t rows) { inlineSortRows_ = rows; }
    size_t inlineSortRows() const { return inlineSortRows_; }
    // A sort of the rows is under way off the GUI thread.
    bool sorting() const { return sortsRunning_ > 0; }
    // How many rows a result's rows are added at a time (a result of at most that many: all at
    // once, with the reset). A sort that ends meanwhile is applied once every row is in.
    void setRowSlice(int rows) { rowSlice_ = rows > 0 ? rows : 1; }
    int rowSlice() const { return rowSlice_; }
    // Rows of the result are still to be added (rowsInserted follows; filled() when done).
    bool filling() const { return shown_ < listed_; }

    // The row of a compared op (an index into result()->ops), -1 when it is not listed or not
    // in the rows yet.
    int rowOfComparedOp(uint32_t comparedOp) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // The rows in an order made off the GUI thread (a sort's result).
    struct Order {
        // The compared op of each row; nullptr: the listed ops in execution order.
        std::shared_ptr<const std::vector<uint32_t>> ops;
        // The row of each listed op by its place in execution order (empty with ops nullptr).
        std::vector<uint32_t> rowOfListed;
    };

signals:
    // The rows took the order of the last sort() (or of a new result with a sort column).
    void sortApplied();
    // Every row of the result is in (after the last slice's rowsInserted).
    void filled();

private:
    // The rows of the current result and filter, in execution order (between a reset's begin
    // and end): as many as one slice; the rest follow by fillSlice().
    void rebuild();
    // The end of a reset: the rows rebuilt, the views told, the rest of the rows and the
    // order to follow.
    void endReset();
    void fillSlice();
    // Sorts the rows by sortColumn_ (inline or on a worker thread), then applyOrder().
    void startSort();
    void applyOrder(Order order);
    // The compared op of row `row` (< rowCount()).
    uint32_t opAt(size_t row) const {
        return order_       ? (*order_)[row]
               : listedOps_ ? (*listedOps_)[row]
                            : static_cast<uint32_t>(row);
    }

    RunComparison* comparison_;
    bool divergingOnly_ = false;
    int sortColumn_ = -1;
    Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
    size_t inlineSortRows_ = 50000;
    uint64_t sortRequest_ = 0;  // bumped by every sort (and rebuild): only the newest is applied
    int sortsRunning_ = 0;
    // The listed compared ops in execution order (nullptr: every one, row i is op i), how many,
    // and the table's order of them (nullptr: execution order).
    std::shared_ptr<const std::vector<uint32_t>> listedOps_;
    int listed_ = 0;
    std::shared_ptr<const std::vector<uint32_t>> order_;
    std::vector<uint32_t> rowOfListed_;  // with order_: Order::rowOfListed
    // Rows the views were told of (listed_ once filled), how many at a time, and a sort's order
    // that ended while they were being added.
    int shown_ = 0;
    int rowSlice_ = 32768;
    QTimer fill_;
    std::optional<Order> pendingOrder_;
};

}  // namespace probe::data
