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
    sortOps();
}

void CompareOpsModel::sort(int column, Qt::SortOrder order) {
    if (column >= ColumnCount) return;
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    std::vector<uint32_t> opsBefore;
    opsBefore.reserve(static_cast<size_t>(before.size()));
    for (const QModelIndex& index : before) opsBefore.push_back(ops_[index.row()]);
    sortColumn_ = column;
    sortOrder_ = order;
    sortOps();
    if (!before.isEmpty()) {
        const analysis::CompareResult* r = comparison_->result();
        std::vector<int> rowOf(r ? r->ops.size() : 0, -1);
        for (size_t row = 0; row < ops_.size(); ++row) rowOf[ops_[row]] = static_cast<int>(row);
        QModelIndexList after;
        after.reserve(before.size());
        for (int i = 0; i < before.size(); ++i)
            after << index(rowOf[opsBefore[static_cast<size_t>(i)]], before[i].column());
        changePersistentIndexList(before, after);
    }
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

void CompareOpsModel::sortOps() {
    // Execution order, and the order of ties.
    if (!std::is_sorted(ops_.begin(), ops_.end())) std::sort(ops_.begin(), ops_.end());
    const analysis::CompareResult* r = comparison_->result();
    if (!r || sortColumn_ < 0 || ops_.empty()) return;
    // Each row's key asked once, then the order sorted (stable: ties stay in execution order).
    const bool descending = sortOrder_ == Qt::DescendingOrder;
    std::vector<uint32_t> position(ops_.size());
    for (uint32_t p = 0; p < position.size(); ++p) position[p] = p;
    auto keyAt = [&](size_t row) {
        return data(index(static_cast<int>(row), sortColumn_), SortRole);
    };
    const QVariant probe = keyAt(0);
    if (sortColumn_ == OpColumn) {
        // By name: each reference op ranked once by the text the column shows (ops repeat in
        // every round; no string made per row), equal names equal ranks; then by rank.
        const auto& ref = *r->reference;
        auto nameOf = [&](uint32_t op) -> const std::string& {
            return ref.op(op).namePath.empty() ? ref.op(op).id : ref.op(op).namePath;
        };
        std::vector<uint32_t> named;
        for (const uint32_t i : ops_) named.push_back(r->ops[i].referenceOp);
        std::sort(named.begin(), named.end());
        named.erase(std::unique(named.begin(), named.end()), named.end());
        std::sort(named.begin(), named.end(),
                  [&](uint32_t a, uint32_t b) { return nameOf(a) < nameOf(b); });
        std::vector<uint32_t> rank(ref.opCount(), 0);
        for (size_t k = 1; k < named.size(); ++k)
            rank[named[k]] = rank[named[k - 1]] + (nameOf(named[k - 1]) < nameOf(named[k]) ? 1 : 0);
        std::vector<uint32_t> keys(ops_.size());
        for (size_t row = 0; row < ops_.size(); ++row)
            keys[row] = rank[r->ops[ops_[row]].referenceOp];
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            return descending ? keys[b] < keys[a] : keys[a] < keys[b];
        });
    } else if (probe.typeId() == QMetaType::QString) {
        std::vector<QString> keys(ops_.size());
        for (size_t row = 0; row < ops_.size(); ++row) keys[row] = keyAt(row).toString();
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            return descending ? keys[b] < keys[a] : keys[a] < keys[b];
        });
    } else {
        // NaN after every number, whichever the order.
        std::vector<double> keys(ops_.size());
        for (size_t row = 0; row < ops_.size(); ++row) keys[row] = keyAt(row).toDouble();
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            const double x = keys[a], y = keys[b];
            if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
            return descending ? y < x : x < y;
        });
    }
    std::vector<uint32_t> sorted(ops_.size());
    for (size_t row = 0; row < ops_.size(); ++row) sorted[row] = ops_[position[row]];
    ops_.swap(sorted);
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
