// SPDX-License-Identifier: GPL-3.0-or-later
#include "unpaired_ops_model.h"

namespace probe::data {

using analysis::kNone;

UnpairedOpsModel::UnpairedOpsModel(RunComparison* comparison, QObject* parent)
    : QAbstractTableModel(parent), comparison_(comparison) {
    connect(comparison_, &RunComparison::aboutToChange, this, [this] { beginResetModel(); });
    connect(comparison_, &RunComparison::changed, this, [this] {
        const analysis::CompareResult* r = comparison_->result();
        rows_ = r ? static_cast<int>(r->unpaired.size()) : 0;
        endResetModel();
    });
    const analysis::CompareResult* r = comparison_->result();
    rows_ = r ? static_cast<int>(r->unpaired.size()) : 0;
}

uint64_t UnpairedOpsModel::total() const {
    const analysis::CompareResult* r = comparison_->result();
    return r ? r->unpairedOps : 0;
}

int UnpairedOpsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : rows_;
}

int UnpairedOpsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant UnpairedOpsModel::data(const QModelIndex& index, int role) const {
    const analysis::CompareResult* r = comparison_->result();
    if (!r || !checkIndex(index, CheckIndexOption::IndexIsValid) || index.row() >= rows_) return {};
    const analysis::UnpairedOp& u = r->unpaired[static_cast<size_t>(index.row())];
    const analysis::DumpIndex* dump = u.inReference ? r->reference : r->candidate;
    if (!dump || u.op >= dump->opCount()) return {};
    const auto& op = dump->op(u.op);
    switch (role) {
        case CandidateRowRole: {
            if (u.inReference) return kNone;
            const uint32_t slot = dump->representativeSlot(u.op);
            return slot == kNone ? kNone : dump->slotRow(slot, u.round);
        }
        case InReferenceRole:
            return u.inReference;
        case Qt::BackgroundRole:
            return RunComparison::verdictColor(RunComparison::Verdict::OnlyInOneRun);
        case Qt::ToolTipRole: {
            QString tip = index.column() == OpColumn
                              ? QString::fromStdString(r->describeUnpaired(u)) + QLatin1Char('\n')
                              : QString();
            return tip + (u.inReference ? tr("Ran in the reference only: it is not in the dump "
                                             "shown, nothing to select.")
                                        : tr("Ran in this run only: a click selects it."));
        }
        case SortRole:
            if (index.column() == RoundColumn) return u.round;
            [[fallthrough]];
        case Qt::DisplayRole:
            switch (index.column()) {
                case RunColumn:
                    return u.inReference ? tr("reference") : tr("this run");
                case RoundColumn:
                    return u.round;
                case OpColumn:
                    return QString::fromStdString(r->unpairedOpName(u));
                case TypeColumn:
                    return QString::fromStdString(op.type);
            }
            return {};
    }
    return {};
}

QVariant UnpairedOpsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case RunColumn:
            return tr("Ran in");
        case RoundColumn:
            return tr("Round");
        case OpColumn:
            return tr("Op");
        case TypeColumn:
            return tr("Type");
    }
    return {};
}

}  // namespace probe::data
