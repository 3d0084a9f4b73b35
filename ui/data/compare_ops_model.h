// The compared op executions of a RunComparison as a table, in the reference's execution order:
// round, op, verdict, the tensor that decided it, the rule, and the error measures. Either
// every compared execution or only those that diverge (born here or inherited). Resets around
// every new result (RunComparison::aboutToChange/changed). No widgets.
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
        SortRole,                           // numbers as numbers
    };

    explicit CompareOpsModel(RunComparison* comparison, QObject* parent = nullptr);

    // Only the executions that diverge (born here, inherited), or all of them.
    void setDivergingOnly(bool on);
    bool divergingOnly() const { return divergingOnly_; }
    // The table row of a compared op, -1 when it is not listed.
    int rowOfComparedOp(uint32_t comparedOp) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    void rebuild();

    RunComparison* comparison_;
    bool divergingOnly_ = false;
    std::vector<uint32_t> ops_;  // listed compared ops
};

}  // namespace probe::data
