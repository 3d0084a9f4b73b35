// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_ops_model.h"

#include <algorithm>
#include <cmath>

#include "compare_series.h"
#include "op_tree_model.h"

namespace probe::data {

using analysis::kNone;
using Verdict = RunComparison::Verdict;

namespace {

Verdict verdictOf(analysis::OpVerdict verdict) {
    return verdict == analysis::OpVerdict::BornHere    ? Verdict::BornHere
           : verdict == analysis::OpVerdict::Inherited ? Verdict::Inherited
                                                       : Verdict::Matches;
}

}  // namespace

CompareOpsModel::CompareOpsModel(RunComparison* comparison, QObject* parent)
    : QAbstractTableModel(parent), comparison_(comparison) {
    connect(comparison_, &RunComparison::aboutToChange, this, [this] { beginResetModel(); });
    connect(comparison_, &RunComparison::changed, this, [this] {
        rebuild();
        endResetModel();
    });
    rebuild();
}

void CompareOpsModel::setDivergingOnly(bool on) {
    if (on == divergingOnly_) return;
    beginResetModel();
    divergingOnly_ = on;
    rebuild();
    endResetModel();
}

void CompareOpsModel::rebuild() {
    ops_.clear();
    const analysis::CompareResult* r = comparison_->result();
    if (!r) return;
    for (uint32_t i = 0; i < r->ops.size(); ++i)
        if (!divergingOnly_ || r->ops[i].verdict != analysis::OpVerdict::Matches) ops_.push_back(i);
}

int CompareOpsModel::rowOfComparedOp(uint32_t comparedOp) const {
    const auto it = std::lower_bound(ops_.begin(), ops_.end(), comparedOp);
    return it != ops_.end() && *it == comparedOp ? static_cast<int>(it - ops_.begin()) : -1;
}

int CompareOpsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(ops_.size());
}

int CompareOpsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareOpsModel::data(const QModelIndex& index, int role) const {
    const analysis::CompareResult* r = comparison_->result();
    if (!r || !checkIndex(index, CheckIndexOption::IndexIsValid) ||
        static_cast<size_t>(index.row()) >= ops_.size())
        return {};
    const uint32_t i = ops_[static_cast<size_t>(index.row())];
    const auto& op = r->ops[i];
    const Verdict verdict = verdictOf(op.verdict);
    const uint32_t decider = op.cause != kNone ? op.cause : op.tensorCount ? op.firstTensor : kNone;
    auto measure = [&](RunComparison::Measure m) -> std::optional<double> {
        // Sorting asks every row: the profile made with the result has the finite ones.
        const QVector<double>& made = comparison_->errorProfile(m).series.y;
        if (role == SortRole && i < static_cast<uint32_t>(made.size()) && std::isfinite(made[i]))
            return made[i];
        return RunComparison::opMeasure(*r, i, m);
    };
    switch (role) {
        case ComparedOpRole:
            return i;
        case CandidateOpRole:
            return op.candidateOp;
        case CandidateRowRole:
            return decider == kNone ? kNone : r->tensors[decider].candidateRow;
        case VerdictRole:
            return static_cast<int>(verdict);
        case Qt::BackgroundRole:
            return verdict == Verdict::Matches ? QVariant()
                                               : QVariant(RunComparison::verdictColor(verdict));
        case Qt::ToolTipRole:
            if (op.cause != kNone)
                return QString::fromStdString(r->describeTensor(op.cause) + ": " +
                                              r->explain(op.cause));
            return {};
        case SortRole:
        case Qt::DisplayRole: {
            const bool sort = role == SortRole;
            auto number = [&](std::optional<double> v) -> QVariant {
                if (!v) return sort ? QVariant(-1.0) : QVariant();
                return sort ? QVariant(*v) : QVariant(OpTreeModel::formatValue(*v));
            };
            switch (index.column()) {
                case RoundColumn:
                    return op.candidateRound;
                case OpColumn: {
                    const auto& ref = *r->reference;
                    return QString::fromStdString(ref.op(op.referenceOp).namePath.empty()
                                                      ? ref.op(op.referenceOp).id
                                                      : ref.op(op.referenceOp).namePath);
                }
                case VerdictColumn:
                    return QString(RunComparison::verdictText(verdict) +
                                   (op.bornInChild ? tr(" (inside)") : QString()));
                case CauseColumn:
                    return op.cause == kNone ? QString()
                                             : QString::fromStdString(r->describeTensor(op.cause));
                case RuleColumn:
                    return op.cause == kNone
                               ? QString()
                               : QString::fromLatin1(analysis::ruleName(r->tensors[op.cause].rule));
                case MaxRelativeErrorColumn:
                    return number(measure(RunComparison::Measure::MaxRelativeError));
                case CosineColumn:
                    return number(measure(RunComparison::Measure::Cosine));
                case MaxAbsoluteErrorColumn:
                    return number(measure(RunComparison::Measure::MaxAbsoluteError));
            }
            return {};
        }
    }
    return {};
}

QVariant CompareOpsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case RoundColumn:
            return tr("Round");
        case OpColumn:
            return tr("Op");
        case VerdictColumn:
            return tr("Verdict");
        case CauseColumn:
            return tr("Deciding tensor");
        case RuleColumn:
            return tr("Rule");
        case MaxRelativeErrorColumn:
            return tr("Max rel. err");
        case CosineColumn:
            return tr("Cosine");
        case MaxAbsoluteErrorColumn:
            return tr("Max abs. err");
    }
    return {};
}

}  // namespace probe::data
