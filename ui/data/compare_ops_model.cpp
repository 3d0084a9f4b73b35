// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_ops_model.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

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

// What the Op column shows for reference op `op`: its name path, or its id when it has none.
const std::string& shownName(const analysis::DumpIndex& reference, uint32_t op) {
    return reference.op(op).namePath.empty() ? reference.op(op).id : reference.op(op).namePath;
}

// The measure of every compared op as the result's error profiles have it (finite values only:
// the rest are gaps), by RunComparison::Measure. Shared data, read by any thread.
using MadeMeasures = std::array<QVector<double>, RunComparison::kMeasureCount>;

MadeMeasures madeMeasures(const RunComparison& comparison) {
    MadeMeasures made;
    for (int m = 0; m < RunComparison::kMeasureCount; ++m)
        made[static_cast<size_t>(m)] =
            comparison.errorProfile(static_cast<RunComparison::Measure>(m)).series.y;
    return made;
}

// What compared op `i` shows in `column` (forSort: what it sorts by, numbers as numbers). Reads
// the result only: data() on the GUI thread and the sort on a worker thread share it.
QVariant columnValue(const analysis::CompareResult& r, const MadeMeasures& made, uint32_t i,
                     int column, bool forSort) {
    const auto& op = r.ops[i];
    auto number = [&](RunComparison::Measure m) -> QVariant {
        // Sorting asks every row: the profile made with the result has the finite ones.
        const QVector<double>& y = made[static_cast<size_t>(m)];
        std::optional<double> v;
        if (forSort && i < static_cast<uint32_t>(y.size()) && std::isfinite(y[i]))
            v = y[i];
        else
            v = RunComparison::opMeasure(r, i, m);
        if (!v) return forSort ? QVariant(-1.0) : QVariant();
        return forSort ? QVariant(*v) : QVariant(OpTreeModel::formatValue(*v));
    };
    switch (column) {
        case CompareOpsModel::RoundColumn:
            return op.candidateRound;
        case CompareOpsModel::OpColumn:
            return QString::fromStdString(shownName(*r.reference, op.referenceOp));
        case CompareOpsModel::VerdictColumn:
            return QString(RunComparison::verdictText(verdictOf(op.verdict)) +
                           (op.bornInChild ? CompareOpsModel::tr(" (inside)") : QString()));
        case CompareOpsModel::CauseColumn:
            return op.cause == kNone ? QString()
                                     : QString::fromStdString(r.describeTensor(op.cause));
        case CompareOpsModel::RuleColumn:
            return op.cause == kNone
                       ? QString()
                       : QString::fromLatin1(analysis::ruleName(r.tensors[op.cause].rule));
        case CompareOpsModel::MaxRelativeErrorColumn:
            return number(RunComparison::Measure::MaxRelativeError);
        case CompareOpsModel::CosineColumn:
            return number(RunComparison::Measure::Cosine);
        case CompareOpsModel::MaxAbsoluteErrorColumn:
            return number(RunComparison::Measure::MaxAbsoluteError);
    }
    return {};
}

// The listed `ops` ordered by `column` (-1: execution order); stable, so ties stay in execution
// order. Any thread: reads the result and the made measures only.
std::vector<uint32_t> sortedOps(const analysis::CompareResult& r, const MadeMeasures& made,
                                std::vector<uint32_t> ops, int column, Qt::SortOrder order) {
    if (!std::is_sorted(ops.begin(), ops.end())) std::sort(ops.begin(), ops.end());
    if (column < 0 || ops.empty()) return ops;
    // Each row's key asked once, then the order sorted.
    const bool descending = order == Qt::DescendingOrder;
    std::vector<uint32_t> position(ops.size());
    for (uint32_t p = 0; p < position.size(); ++p) position[p] = p;
    auto keyAt = [&](size_t row) { return columnValue(r, made, ops[row], column, true); };
    if (column == CompareOpsModel::OpColumn) {
        // By name: each reference op ranked once by the text the column shows (ops repeat in
        // every round; no string made per row), equal names equal ranks; then by rank.
        const auto& ref = *r.reference;
        auto nameOf = [&](uint32_t op) -> const std::string& { return shownName(ref, op); };
        std::vector<uint32_t> named;
        for (const uint32_t i : ops) named.push_back(r.ops[i].referenceOp);
        std::sort(named.begin(), named.end());
        named.erase(std::unique(named.begin(), named.end()), named.end());
        std::sort(named.begin(), named.end(),
                  [&](uint32_t a, uint32_t b) { return nameOf(a) < nameOf(b); });
        std::vector<uint32_t> rank(ref.opCount(), 0);
        for (size_t k = 1; k < named.size(); ++k)
            rank[named[k]] = rank[named[k - 1]] + (nameOf(named[k - 1]) < nameOf(named[k]) ? 1 : 0);
        std::vector<uint32_t> keys(ops.size());
        for (size_t row = 0; row < ops.size(); ++row) keys[row] = rank[r.ops[ops[row]].referenceOp];
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            return descending ? keys[b] < keys[a] : keys[a] < keys[b];
        });
    } else if (keyAt(0).typeId() == QMetaType::QString) {
        std::vector<QString> keys(ops.size());
        for (size_t row = 0; row < ops.size(); ++row) keys[row] = keyAt(row).toString();
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            return descending ? keys[b] < keys[a] : keys[a] < keys[b];
        });
    } else {
        // NaN after every number, whichever the order.
        std::vector<double> keys(ops.size());
        for (size_t row = 0; row < ops.size(); ++row) keys[row] = keyAt(row).toDouble();
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            const double x = keys[a], y = keys[b];
            if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
            return descending ? y < x : x < y;
        });
    }
    std::vector<uint32_t> sorted(ops.size());
    for (size_t row = 0; row < ops.size(); ++row) sorted[row] = ops[position[row]];
    return sorted;
}

}  // namespace

CompareOpsModel::CompareOpsModel(RunComparison* comparison, QObject* parent)
    : QAbstractTableModel(parent), comparison_(comparison) {
    connect(comparison_, &RunComparison::aboutToChange, this, [this] { beginResetModel(); });
    connect(comparison_, &RunComparison::changed, this, [this] {
        rebuild();
        endResetModel();
        startSort();
    });
    rebuild();
    startSort();
}

void CompareOpsModel::setDivergingOnly(bool on) {
    if (on == divergingOnly_) return;
    beginResetModel();
    divergingOnly_ = on;
    rebuild();
    endResetModel();
    startSort();
}

void CompareOpsModel::rebuild() {
    ops_.clear();
    const analysis::CompareResult* r = comparison_->result();
    if (!r) return;
    for (uint32_t i = 0; i < r->ops.size(); ++i)
        if (!divergingOnly_ || r->ops[i].verdict != analysis::OpVerdict::Matches) ops_.push_back(i);
}

void CompareOpsModel::sort(int column, Qt::SortOrder order) {
    if (column >= ColumnCount) return;
    sortColumn_ = column;
    sortOrder_ = order;
    startSort();
}

void CompareOpsModel::startSort() {
    const uint64_t request = ++sortRequest_;
    auto result = comparison_->sharedResult();
    if (!result || ops_.size() <= inlineSortRows_) {
        applyOrder(
            result ? sortedOps(*result, madeMeasures(*comparison_), ops_, sortColumn_, sortOrder_)
                   : ops_);
        return;
    }
    ++sortsRunning_;
    auto* watcher = new QFutureWatcher<std::vector<uint32_t>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, request] {
        --sortsRunning_;
        // Only the newest sort: a newer sort, result or filter (each rebuild of the rows is
        // followed by a sort) makes this one stale.
        if (request == sortRequest_) applyOrder(watcher->result());
        watcher->deleteLater();
    });
    watcher->setFuture(
        QtConcurrent::run([result = std::move(result), made = madeMeasures(*comparison_),
                           ops = ops_, column = sortColumn_, order = sortOrder_]() mutable {
            return sortedOps(*result, made, std::move(ops), column, order);
        }));
}

void CompareOpsModel::applyOrder(std::vector<uint32_t> ops) {
    if (ops == ops_) {
        emit sortApplied();
        return;
    }
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    std::vector<uint32_t> opsBefore;
    opsBefore.reserve(static_cast<size_t>(before.size()));
    for (const QModelIndex& index : before) opsBefore.push_back(ops_[index.row()]);
    ops_.swap(ops);
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
    emit sortApplied();
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
        case Qt::DisplayRole:
            return columnValue(*r, role == SortRole ? madeMeasures(*comparison_) : MadeMeasures{},
                               i, index.column(), role == SortRole);
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
