// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_ops_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "background_pool.h"
#include "compare_series.h"
#include "op_tree_model.h"

namespace probe::data {

using analysis::kNone;
using Verdict = RunComparison::Verdict;

namespace {

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

// A tensor of `op` that both runs kept the data of, in a file one of them could not read (a
// truncated .bin, a FIFO): judged by its statistics alone, which its row said nowhere (the
// Notes tab names the file). kNone when there is none.
uint32_t tensorWithDataUnread(const analysis::CompareResult& r, const analysis::OpComparison& op) {
    for (uint32_t t = op.firstTensor; t < op.firstTensor + op.tensorCount; ++t) {
        const auto& tensor = r.tensors[t];
        if (!tensor.hasData && tensor.referenceRow != kNone && tensor.candidateRow != kNone &&
            r.reference->row(tensor.referenceRow).hasTensorFile &&
            r.candidate->row(tensor.candidateRow).hasTensorFile)
            return t;
    }
    return kNone;
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
            if (!op.judged) return CompareOpsModel::tr("not judged");
            return RunComparison::verdictText(RunComparison::drawnVerdictFor(op));
        case CompareOpsModel::CauseColumn:
            return op.cause == kNone ? QString()
                                     : QString::fromStdString(r.describeTensor(op.cause));
        case CompareOpsModel::RuleColumn:
            if (op.cause != kNone)
                return QString::fromLatin1(analysis::ruleName(r.tensors[op.cause].rule));
            return tensorWithDataUnread(r, op) != kNone ? CompareOpsModel::tr("data unread")
                                                        : QString();
        case CompareOpsModel::MaxRelativeErrorColumn:
            return number(RunComparison::Measure::MaxRelativeError);
        case CompareOpsModel::CosineColumn:
            return number(RunComparison::Measure::Cosine);
        case CompareOpsModel::MaxAbsoluteErrorColumn:
            return number(RunComparison::Measure::MaxAbsoluteError);
    }
    return {};
}

// The `count` listed ops (`listed`, in execution order; nullptr: every compared op) ordered by
// `column`, with the row of each; stable, so ties stay in execution order. Column -1: execution
// order (nothing listed). Any thread: reads the result and the made measures only.
CompareOpsModel::Order sortedOps(const analysis::CompareResult& r, const MadeMeasures& made,
                                 const std::vector<uint32_t>* listed, size_t count, int column,
                                 Qt::SortOrder order) {
    if (column < 0 || count == 0) return {};
    auto opOf = [&](size_t place) {
        return listed ? (*listed)[place] : static_cast<uint32_t>(place);
    };
    // Each row's key asked once, then the order sorted.
    const bool descending = order == Qt::DescendingOrder;
    std::vector<uint32_t> position(count);
    for (uint32_t p = 0; p < position.size(); ++p) position[p] = p;
    auto keyAt = [&](size_t place) { return columnValue(r, made, opOf(place), column, true); };
    if (column == CompareOpsModel::OpColumn) {
        // By name: each reference op ranked once by the text the column shows (ops repeat in
        // every round; no string made per row), equal names equal ranks; then by rank.
        const auto& ref = *r.reference;
        auto nameOf = [&](uint32_t op) -> const std::string& { return shownName(ref, op); };
        std::vector<uint32_t> named;
        for (size_t place = 0; place < count; ++place)
            named.push_back(r.ops[opOf(place)].referenceOp);
        std::sort(named.begin(), named.end());
        named.erase(std::unique(named.begin(), named.end()), named.end());
        std::sort(named.begin(), named.end(),
                  [&](uint32_t a, uint32_t b) { return nameOf(a) < nameOf(b); });
        std::vector<uint32_t> rank(ref.opCount(), 0);
        for (size_t k = 1; k < named.size(); ++k)
            rank[named[k]] = rank[named[k - 1]] + (nameOf(named[k - 1]) < nameOf(named[k]) ? 1 : 0);
        std::vector<uint32_t> keys(count);
        for (size_t place = 0; place < count; ++place)
            keys[place] = rank[r.ops[opOf(place)].referenceOp];
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            return descending ? keys[b] < keys[a] : keys[a] < keys[b];
        });
    } else if (keyAt(0).typeId() == QMetaType::QString) {
        std::vector<QString> keys(count);
        for (size_t place = 0; place < count; ++place) keys[place] = keyAt(place).toString();
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            return descending ? keys[b] < keys[a] : keys[a] < keys[b];
        });
    } else {
        // A NaN measure ties with the worst infinity: among them the earliest op comes first (the
        // born-here op with its Inf error, before the hundreds of NaN ones that inherit it).
        const double nanKey = column == CompareOpsModel::CosineColumn
                                  ? -std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::infinity();
        std::vector<double> keys(count);
        for (size_t place = 0; place < count; ++place) {
            keys[place] = keyAt(place).toDouble();
            if (std::isnan(keys[place])) keys[place] = nanKey;
        }
        std::stable_sort(position.begin(), position.end(), [&](uint32_t a, uint32_t b) {
            return descending ? keys[b] < keys[a] : keys[a] < keys[b];
        });
    }
    auto sorted = std::make_shared<std::vector<uint32_t>>(count);
    CompareOpsModel::Order result;
    result.rowOfListed.resize(count);
    for (uint32_t row = 0; row < count; ++row) {
        (*sorted)[row] = opOf(position[row]);
        result.rowOfListed[position[row]] = row;
    }
    result.ops = std::move(sorted);
    return result;
}

}  // namespace

CompareOpsModel::CompareOpsModel(RunComparison* comparison, QObject* parent)
    : QAbstractTableModel(parent), comparison_(comparison) {
    fill_.setSingleShot(true);
    fill_.setInterval(0);
    connect(&fill_, &QTimer::timeout, this, &CompareOpsModel::fillSlice);
    connect(comparison_, &RunComparison::aboutToChange, this, [this] { beginResetModel(); });
    connect(comparison_, &RunComparison::changed, this, &CompareOpsModel::endReset);
    rebuild();
    if (filling()) fill_.start();
    startSort();
}

void CompareOpsModel::setDivergingOnly(bool on) {
    if (on == divergingOnly_) return;
    beginResetModel();
    divergingOnly_ = on;
    endReset();
}

void CompareOpsModel::endReset() {
    rebuild();
    endResetModel();
    if (filling()) fill_.start();
    startSort();
}

void CompareOpsModel::rebuild() {
    fill_.stop();
    pendingOrder_.reset();
    order_.reset();
    rowOfListed_.clear();
    listedOps_.reset();
    listed_ = shown_ = 0;
    const analysis::CompareResult* r = comparison_->result();
    if (!r) return;
    if (divergingOnly_) listedOps_ = comparison_->divergingOps();
    listed_ = static_cast<int>(listedOps_ ? listedOps_->size() : r->ops.size());
    shown_ = std::min(listed_, rowSlice_);
}

void CompareOpsModel::fillSlice() {
    if (!filling()) return;
    const int rows = std::min(rowSlice_, listed_ - shown_);
    beginInsertRows({}, shown_, shown_ + rows - 1);
    shown_ += rows;
    endInsertRows();
    if (filling()) {
        fill_.start();
        return;
    }
    emit filled();
    if (pendingOrder_) {
        Order order = std::move(*pendingOrder_);
        pendingOrder_.reset();
        applyOrder(std::move(order));
    }
}

void CompareOpsModel::sort(int column, Qt::SortOrder order) {
    if (column >= ColumnCount) return;
    sortColumn_ = column;
    sortOrder_ = order;
    startSort();
}

void CompareOpsModel::startSort() {
    const uint64_t request = ++sortRequest_;
    pendingOrder_.reset();  // a sort that ended while rows were added: this one supersedes it
    auto result = comparison_->sharedResult();
    if (!result || sortColumn_ < 0 || static_cast<size_t>(listed_) <= inlineSortRows_) {
        applyOrder(result ? sortedOps(*result, madeMeasures(*comparison_), listedOps_.get(),
                                      static_cast<size_t>(listed_), sortColumn_, sortOrder_)
                          : Order{});
        return;
    }
    ++sortsRunning_;
    auto* watcher = new QFutureWatcher<Order>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, request] {
        --sortsRunning_;
        // Only the newest sort: a newer sort, result or filter (each rebuild of the rows is
        // followed by a sort) makes this one stale.
        if (request == sortRequest_) applyOrder(watcher->result());
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run(
        backgroundPool(),
        [result = std::move(result), made = madeMeasures(*comparison_), listed = listedOps_,
         count = static_cast<size_t>(listed_), column = sortColumn_, order = sortOrder_] {
            return sortedOps(*result, made, listed.get(), count, column, order);
        }));
}

void CompareOpsModel::applyOrder(Order order) {
    if (filling()) {  // once every row is in
        pendingOrder_ = std::move(order);
        return;
    }
    if (order.ops ? order_ && *order.ops == *order_ : !order_) {
        emit sortApplied();
        return;
    }
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    QModelIndexList after;
    after.reserve(before.size());
    for (const QModelIndex& index : before) {
        // The op's place among the listed ops (in execution order), then its row in the order.
        const uint32_t op = opAt(static_cast<size_t>(index.row()));
        const size_t place =
            listedOps_
                ? static_cast<size_t>(std::lower_bound(listedOps_->begin(), listedOps_->end(), op) -
                                      listedOps_->begin())
                : op;
        const size_t row = order.ops ? order.rowOfListed[place] : place;
        after << this->index(static_cast<int>(row), index.column());
    }
    order_ = std::move(order.ops);
    rowOfListed_ = order_ ? std::move(order.rowOfListed) : std::vector<uint32_t>();
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
    emit sortApplied();
}

int CompareOpsModel::rowOfComparedOp(uint32_t comparedOp) const {
    size_t place = comparedOp;
    if (listedOps_) {
        const auto at = std::lower_bound(listedOps_->begin(), listedOps_->end(), comparedOp);
        if (at == listedOps_->end() || *at != comparedOp) return -1;
        place = static_cast<size_t>(at - listedOps_->begin());
    }
    if (place >= static_cast<size_t>(listed_)) return -1;
    const size_t row = order_ ? rowOfListed_[place] : place;
    return row < static_cast<size_t>(shown_) ? static_cast<int>(row) : -1;
}

int CompareOpsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : shown_;
}

int CompareOpsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareOpsModel::data(const QModelIndex& index, int role) const {
    const analysis::CompareResult* r = comparison_->result();
    if (!r || !checkIndex(index, CheckIndexOption::IndexIsValid) || index.row() >= shown_)
        return {};
    const uint32_t i = opAt(static_cast<size_t>(index.row()));
    const auto& op = r->ops[i];
    const Verdict verdict = RunComparison::drawnVerdictFor(op);  // as the text and colour say
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
        case Qt::BackgroundRole: {
            // Matches: the table's own colour; not judged: none at all (an invalid colour in the
            // role painted the rows black).
            const QColor color = RunComparison::verdictColor(verdict);
            return verdict == Verdict::Matches || !color.isValid() ? QVariant() : QVariant(color);
        }
        case Qt::ToolTipRole: {
            // The Op column's names are long paths, cut to fit: whole here.
            std::string tip = index.column() == OpColumn ? shownName(*r->reference, op.referenceOp)
                                                         : std::string();
            if (op.cause != kNone)
                tip += (tip.empty() ? "" : "\n") + r->describeTensor(op.cause) + ": " +
                       r->explain(op.cause);
            else if (const uint32_t unread = tensorWithDataUnread(*r, op); unread != kNone)
                tip += (tip.empty() ? "" : "\n") + r->describeTensor(unread) +
                       ": its data could not be read (see Notes), judged by its statistics";
            return tip.empty() ? QVariant() : QVariant(QString::fromStdString(tip));
        }
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
            return tr("Max rel. err (%)");
        case CosineColumn:
            return tr("Cosine");
        case MaxAbsoluteErrorColumn:
            return tr("Max abs. err");
    }
    return {};
}

}  // namespace probe::data
