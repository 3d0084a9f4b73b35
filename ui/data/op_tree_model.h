// The op tree of one process of the open dump, as a lazy item model: items are op indices of the
// DumpIndex, nothing is copied. It grows while the dump grows (rows are announced per parent as
// they appear) and shows, per op, what the rows say and what the current config selects.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <unordered_map>
#include <vector>

#include <QAbstractItemModel>
#include <QTimer>

#include "analysis/dump_index.h"
#include "compare_runs.h"

namespace probe::data {

class DumpStore;
class OpSelection;

class OpTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    // The statistics come right after the name and id: what the tree is looked at for stays on
    // screen in a window of ordinary width.
    enum Column {
        NameColumn,
        IdColumn,
        MaxColumn,
        MinColumn,
        MeanColumn,
        NormColumn,
        AnomalyColumn,  // NaN / Inf badge
        RoundsColumn,
        TypeColumn,
        ShapeColumn,
        DtypeColumn,
        DumpedColumn,   // selected by the current config
        VerdictColumn,  // comparing two runs: born here, inherited, matches, only in one run
        ColumnCount
    };
    enum Role {
        OpRole = Qt::UserRole + 1,  // uint: the op's index in the DumpIndex
        SortRole,                   // numbers as numbers, for sorting
        AnomalyRole,                // uint: kHasNan | kHasInf of the op's own rows
        SubtreeAnomalyRole,         // uint: the same over the op and its descendants
        SelectedRole,               // bool: the config dumps this op
        VerdictRole,                // int: RunComparison::Verdict of the op
    };

    // `selection` may be null (no config: nothing is checkable).
    OpTreeModel(DumpStore* store, OpSelection* selection, QObject* parent = nullptr);

    // Which process's tree is shown (the first one by default).
    uint32_t process() const { return process_; }
    void setProcess(uint32_t process);

    // Colours ops by their verdict and fills the verdict column (null: no comparison).
    void setComparison(RunComparison* comparison);

    // The round whose rows the statistics, shape and dtype columns show (-1: each op's last).
    // With a round chosen, siblings are listed in the order they ran in it: an op shifted
    // there by ops run before it (DumpIndex::idIn) comes after them.
    int32_t round() const { return round_; }
    void setRound(int32_t round);

    // NaN/Inf (kHasNan | kHasInf) in the op's own rows, and in its rows and its descendants',
    // of the round chosen (of every round when none is).
    uint8_t anomaliesOf(uint32_t op) const;
    uint8_t subtreeAnomaliesOf(uint32_t op) const;
    // Whether the op has rows in the round chosen (true when none is chosen, or the op has no
    // rows at all). One without is greyed (it did not run there, or was not dumped there, or
    // not yet); one that ran under other ids in some rounds shows none (its own read as this
    // round's, beside the op that ran there).
    bool hasRowsInRound(uint32_t op) const;
    // The verdict the tree shows for `op` in the round chosen (RunComparison::shownVerdictOf; with
    // Round "latest", that of the round its values are of when that round was not compared).
    RunComparison::Verdict verdictShown(uint32_t op) const;
    // Round "latest": the rounds the verdict is over, and whether the values shown beside it
    // (`shownRow`'s) are of a round not compared (a live run gone on past its reference).
    QString roundsBehindVerdict(uint32_t op, uint32_t shownRow) const;

    uint32_t opAt(const QModelIndex& index) const;
    QModelIndex indexOfOp(uint32_t op, int column = 0) const;
    static int statColumn(analysis::Stat stat) { return MaxColumn + static_cast<int>(stat); }

    // How long changes to existing ops are gathered before views are told (milliseconds; 0
    // tells at once).
    void setUpdateDelay(int ms) { flushTimer_.setInterval(ms); }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Text of a statistic the way the tree and tables show it ("1.2345e+04", "nan", "inf").
    static QString formatValue(double value);
    // A row's shape as the tree and tables show it: "16x64", "scalar" for none (a 0-d tensor,
    // whose empty cell read as a shape not known).
    static QString formatShape(const std::string& shape);

signals:
    // A process appeared (for process pickers).
    void processesChanged();

private:
    void onAboutToReset();
    void onReset();
    void onChanged(const analysis::IndexChange& change);
    void onSelectionChanged();
    // Every op's data may have changed (a comparison, a round chosen): views ask again.
    void announceEveryOpChanged();
    void flushDirty();
    void announceAll();
    // Ops of the index that views have not been told about yet (a delta just applied, until
    // onChanged announces them) are hidden: the model shows what the views were told.
    void collectHidden() const;
    const std::vector<uint32_t>* hiddenRows(uint32_t parent) const;
    uint32_t visibleCount(uint32_t parent) const;
    uint32_t childAt(uint32_t parent, uint32_t visibleRow) const;  // kNone when out of range
    bool visibleRowOf(uint32_t op, uint32_t* row) const;           // false when hidden
    // Emits dataChanged for `ops` (siblings grouped into runs), columns [first, last].
    void emitChanged(std::vector<uint32_t> ops, int first, int last);
    // parent -> its children views know, in the order they ran in the round chosen; only for
    // parents where that differs from their own order.
    using RoundOrder = std::unordered_map<uint32_t, std::vector<uint32_t>>;
    RoundOrder orderOfRound() const;
    // Lists siblings in `order`, moving persistent indexes (selection, expanded items) along.
    void applyRoundOrder(RoundOrder order);
    void setRoundOrder(RoundOrder order);
    bool checkable() const;

    DumpStore* store_;
    OpSelection* selection_;
    RunComparison* comparison_ = nullptr;
    int32_t round_ = -1;
    uint32_t process_ = analysis::kNone;
    // Ops numbered from knownOps_ are new to views. Those under ops views know (or at the top)
    // are hidden, by parent (kNone: the top level), as rows among its children, sorted; their
    // own children come with them. New ops need not come last among their siblings (they are
    // in execution order), so they are announced run by run where they belong.
    uint32_t knownOps_ = 0;
    mutable size_t hiddenCollectedAt_ = 0;  // the op count hiddenRows_ was collected for
    mutable std::unordered_map<uint32_t, std::vector<uint32_t>> hiddenRows_;
    // subtreeAnomaliesOf in the round chosen, by op; computed when first asked after a change.
    mutable std::vector<uint8_t> roundSubtreeAnomalies_;
    mutable bool roundSubtreeAnomaliesStale_ = true;
    RoundOrder roundOrder_;
    std::unordered_map<uint32_t, uint32_t> rowInRound_;  // op -> its row in roundOrder_
    std::vector<uint32_t> dirty_;
    std::vector<char> isDirty_;
    QTimer flushTimer_;
};

}  // namespace probe::data
