// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_tree_model.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include <QColor>
#include <QFont>

#include "compare_runs.h"
#include "dump_store.h"
#include "op_selection.h"

namespace probe::data {

using analysis::kNone;

namespace {

// The columns that show one tensor of the op (its first output, else its first input).
bool isTensorColumn(int column) {
    switch (column) {
        case OpTreeModel::MaxColumn:
        case OpTreeModel::MinColumn:
        case OpTreeModel::MeanColumn:
        case OpTreeModel::NormColumn:
        case OpTreeModel::ShapeColumn:
        case OpTreeModel::DtypeColumn:
            return true;
        default:
            return false;
    }
}

const QColor kNanColor(200, 30, 30);
const QColor kInfColor(210, 120, 0);
const QColor kBelowColor(150, 150, 150);

// Past this many changed ops in one update, views are told by a layout change instead.
constexpr size_t kMaxDataChangedOps = 500;

// NaN sorts above everything, so sorting by a statistic puts broken ops together.
double sortable(double v) {
    return std::isnan(v) ? DBL_MAX : v;
}

QString anomalyText(uint8_t bits) {
    QStringList parts;
    if (bits & analysis::kHasNan) parts << QStringLiteral("NaN");
    if (bits & analysis::kHasInf) parts << QStringLiteral("Inf");
    return parts.join(QLatin1Char(' '));
}

}  // namespace

OpTreeModel::OpTreeModel(DumpStore* store, OpSelection* selection, QObject* parent)
    : QAbstractItemModel(parent), store_(store), selection_(selection) {
    flushTimer_.setSingleShot(true);
    flushTimer_.setInterval(150);
    connect(&flushTimer_, &QTimer::timeout, this, &OpTreeModel::flushDirty);
    connect(store_, &DumpStore::beginModelReset, this, &OpTreeModel::onAboutToReset);
    connect(store_, &DumpStore::endModelReset, this, &OpTreeModel::onReset);
    connect(store_, &DumpStore::changed, this, &OpTreeModel::onChanged);
    if (selection_)
        connect(selection_, &OpSelection::changed, this, &OpTreeModel::onSelectionChanged);
    if (store_->index().processCount() > 0) {
        process_ = 0;
        announceAll();
    }
}

QString OpTreeModel::formatShape(const std::string& shape) {
    return shape.empty() ? QStringLiteral("scalar") : QString::fromStdString(shape);
}

QString OpTreeModel::formatValue(double value) {
    if (std::isnan(value)) return QStringLiteral("nan");
    if (std::isinf(value)) return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(value, 'g', 6);
}

void OpTreeModel::setComparison(RunComparison* comparison) {
    if (comparison_) disconnect(comparison_, nullptr, this, nullptr);
    comparison_ = comparison;
    if (!comparison_) return;
    // Every op's colour may change.
    connect(comparison_, &RunComparison::changed, this, [this] {
        announceEveryOpChanged();
        emit headerDataChanged(Qt::Horizontal, VerdictColumn, VerdictColumn);
    });
}

void OpTreeModel::setRound(int32_t round) {
    if (round == round_) return;
    const bool latestBefore = round_ < 0;
    round_ = round;
    if (latestBefore != (round_ < 0))
        emit headerDataChanged(Qt::Horizontal, VerdictColumn, VerdictColumn);
    roundSubtreeAnomaliesStale_ = true;
    // Every op's statistics and verdict may change, and the order of some siblings.
    if (RoundOrder order = orderOfRound(); order != roundOrder_)
        applyRoundOrder(std::move(order));
    else
        announceEveryOpChanged();
}

namespace {

// Where `op` ran among its siblings in `round`: the last part of its id there ("2_9" -> 9).
int64_t positionIn(const analysis::DumpIndex& idx, uint32_t op, int32_t round) {
    const int64_t position = analysis::positionOfId(idx.idIn(op, round));
    return position >= 0 ? position : idx.op(op).row;
}

}  // namespace

OpTreeModel::RoundOrder OpTreeModel::orderOfRound() const {
    RoundOrder order;
    const auto& idx = store_->index();
    if (round_ < 0 || process_ == kNone || idx.opsWithOtherIds().empty()) return order;
    // Only the siblings of an op that ran under another id in this round can be out of order.
    std::vector<uint32_t> parents;
    for (const auto& [op, ids] : idx.opsWithOtherIds()) {
        if (op >= knownOps_ || idx.op(op).process != process_) continue;
        if (idx.idIn(op, round_) != idx.op(op).id) parents.push_back(idx.op(op).parent);
    }
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    for (uint32_t parent : parents) {
        if (parent != kNone && parent >= knownOps_) continue;
        const auto& siblings =
            parent == kNone ? idx.process(process_).topOps : idx.op(parent).children;
        std::vector<std::pair<int64_t, uint32_t>> placed;  // (position in the round, op)
        for (uint32_t child : siblings)
            if (child < knownOps_) placed.emplace_back(positionIn(idx, child, round_), child);
        // Ties (an op that did not run in the round, at its own position) keep their order.
        std::stable_sort(placed.begin(), placed.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<uint32_t> children;
        children.reserve(placed.size());
        bool moved = false;
        for (const auto& [position, child] : placed) {
            moved = moved || idx.op(child).row != children.size();
            children.push_back(child);
        }
        if (moved) order.emplace(parent, std::move(children));
    }
    return order;
}

void OpTreeModel::applyRoundOrder(RoundOrder order) {
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    std::vector<uint32_t> ops;
    ops.reserve(static_cast<size_t>(before.size()));
    for (const QModelIndex& index : before) ops.push_back(opAt(index));
    setRoundOrder(std::move(order));
    QModelIndexList after;
    after.reserve(before.size());
    for (qsizetype i = 0; i < before.size(); ++i)
        after.push_back(indexOfOp(ops[static_cast<size_t>(i)], before[i].column()));
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

void OpTreeModel::setRoundOrder(RoundOrder order) {
    roundOrder_ = std::move(order);
    rowInRound_.clear();
    for (const auto& [parent, children] : roundOrder_)
        for (size_t row = 0; row < children.size(); ++row)
            rowInRound_[children[row]] = static_cast<uint32_t>(row);
}

void OpTreeModel::announceEveryOpChanged() {
    // One layout change, nothing moves (a sorted proxy sorts again): cheaper than dataChanged
    // for every op, run by run of siblings.
    emit layoutAboutToBeChanged({}, QAbstractItemModel::NoLayoutChangeHint);
    emit layoutChanged({}, QAbstractItemModel::NoLayoutChangeHint);
}

bool OpTreeModel::checkable() const {
    return selection_ && store_->layout() == analysis::DumpLayout::Atb;
}

void OpTreeModel::announceAll() {
    const auto& idx = store_->index();
    isDirty_.assign(idx.opCount(), 0);
    dirty_.clear();
    knownOps_ = static_cast<uint32_t>(idx.opCount());
    hiddenRows_.clear();
    hiddenCollectedAt_ = idx.opCount();
    roundSubtreeAnomaliesStale_ = true;
    setRoundOrder(orderOfRound());
}

bool OpTreeModel::hasRowsInRound(uint32_t op) const {
    if (round_ < 0) return true;
    const auto& rounds = store_->index().op(op).rounds;
    return rounds.empty() || std::binary_search(rounds.begin(), rounds.end(), round_);
}

uint8_t OpTreeModel::anomaliesOf(uint32_t op) const {
    const auto& idx = store_->index();
    const auto& o = idx.op(op);
    if (round_ < 0 || !o.anomalies) return o.anomalies;
    uint8_t bits = 0;
    for (uint32_t slot : o.tensorSlots)
        if (const uint32_t row = idx.slotRow(slot, round_); row != kNone)
            bits |= idx.row(row).anomalies;
    return bits;
}

uint8_t OpTreeModel::subtreeAnomaliesOf(uint32_t op) const {
    const auto& idx = store_->index();
    const auto& o = idx.op(op);
    if (round_ < 0 || !o.subtreeAnomalies) return o.subtreeAnomalies;
    if (roundSubtreeAnomaliesStale_) {
        // From the round's rows up: each row's bits on its op and the ops above it, a climb
        // stopping where they are known already.
        roundSubtreeAnomaliesStale_ = false;
        roundSubtreeAnomalies_.assign(idx.opCount(), 0);
        const auto& rounds = idx.process(process_).rounds;
        if (const auto it = rounds.find(round_); it != rounds.end())
            for (uint32_t row : it->second) {
                const uint8_t bits = idx.row(row).anomalies;
                if (!bits) continue;
                for (uint32_t a = idx.slot(idx.row(row).slot).op;
                     a != kNone && (roundSubtreeAnomalies_[a] & bits) != bits; a = idx.op(a).parent)
                    roundSubtreeAnomalies_[a] |= bits;
            }
    }
    return op < roundSubtreeAnomalies_.size() ? roundSubtreeAnomalies_[op] : 0;
}

void OpTreeModel::collectHidden() const {
    const auto& idx = store_->index();
    if (hiddenCollectedAt_ == idx.opCount()) return;
    hiddenCollectedAt_ = idx.opCount();
    hiddenRows_.clear();
    if (process_ == kNone) return;
    for (uint32_t op = knownOps_; op < idx.opCount(); ++op) {
        const auto& o = idx.op(op);
        if (o.process == process_ && (o.parent == kNone || o.parent < knownOps_))
            hiddenRows_[o.parent].push_back(o.row);
    }
    for (auto& [parent, rows] : hiddenRows_) std::sort(rows.begin(), rows.end());
}

const std::vector<uint32_t>* OpTreeModel::hiddenRows(uint32_t parent) const {
    collectHidden();
    if (hiddenRows_.empty()) return nullptr;
    auto it = hiddenRows_.find(parent);
    return it == hiddenRows_.end() ? nullptr : &it->second;
}

uint32_t OpTreeModel::visibleCount(uint32_t parent) const {
    const auto& idx = store_->index();
    if (process_ == kNone) return 0;
    const auto& siblings = parent == kNone ? idx.process(process_).topOps : idx.op(parent).children;
    const auto* hidden = hiddenRows(parent);
    return static_cast<uint32_t>(siblings.size() - (hidden ? hidden->size() : 0));
}

uint32_t OpTreeModel::childAt(uint32_t parent, uint32_t visibleRow) const {
    if (!roundOrder_.empty())
        if (const auto it = roundOrder_.find(parent); it != roundOrder_.end())
            return visibleRow < it->second.size() ? it->second[visibleRow] : kNone;
    const auto& idx = store_->index();
    const auto& siblings = parent == kNone ? idx.process(process_).topOps : idx.op(parent).children;
    uint32_t row = visibleRow;
    if (const auto* hidden = hiddenRows(parent))
        for (uint32_t h : *hidden) {  // skip the hidden rows up to it
            if (h > row) break;
            ++row;
        }
    return row < siblings.size() ? siblings[row] : kNone;
}

bool OpTreeModel::visibleRowOf(uint32_t op, uint32_t* row) const {
    const auto& idx = store_->index();
    collectHidden();
    if (!rowInRound_.empty())
        if (const auto it = rowInRound_.find(op); it != rowInRound_.end()) {
            // In the round's order (only ops views know are listed there: never hidden).
            *row = it->second;
            return true;
        }
    if (hiddenRows_.empty()) {
        *row = idx.op(op).row;
        return true;
    }
    // Hidden itself, or below a hidden op?
    uint32_t own = 0;
    for (uint32_t cur = op; cur != kNone; cur = idx.op(cur).parent) {
        const uint32_t r = idx.op(cur).row;
        const auto* hidden = hiddenRows(idx.op(cur).parent);
        uint32_t before = 0;
        if (hidden) {
            if (std::binary_search(hidden->begin(), hidden->end(), r)) return false;
            before = static_cast<uint32_t>(std::lower_bound(hidden->begin(), hidden->end(), r) -
                                           hidden->begin());
        }
        if (cur == op) own = r - before;
    }
    *row = own;
    return true;
}

void OpTreeModel::setProcess(uint32_t process) {
    if (process == process_) return;
    beginResetModel();
    process_ = process;
    announceAll();
    endResetModel();
}

void OpTreeModel::onAboutToReset() {
    beginResetModel();
    flushTimer_.stop();
    setRoundOrder({});  // (op indices of the index going away)
}

void OpTreeModel::onReset() {
    process_ = store_->index().processCount() > 0 ? 0 : kNone;
    announceAll();
    endResetModel();
    emit processesChanged();
}

void OpTreeModel::onChanged(const analysis::IndexChange& change) {
    const auto& idx = store_->index();
    if (process_ == kNone) {
        if (idx.processCount() == 0) return;
        beginResetModel();
        process_ = 0;
        announceAll();
        endResetModel();
        emit processesChanged();
        return;
    }
    if (change.newProcesses) emit processesChanged();
    isDirty_.resize(idx.opCount(), 0);
    // New rows of the round chosen, or rows whose statistics came from their files, may bring
    // NaN or Inf to it.
    if (round_ >= 0 && !roundSubtreeAnomaliesStale_) {
        const auto bringsSome = [&](uint32_t r) {
            return idx.row(r).anomalies && idx.row(r).round == round_;
        };
        bool& stale = roundSubtreeAnomaliesStale_;
        for (uint32_t r = change.firstNewRow; r < change.firstNewRow + change.newRows && !stale;
             ++r)
            stale = bringsSome(r);
        if (!stale)
            stale =
                std::any_of(change.statisticsRows.begin(), change.statisticsRows.end(), bringsSome);
    }

    // New ops enter with their subtrees whole, under ops views know, each run of adjacent
    // ones where it belongs (from the top: every row above it is announced already).
    collectHidden();
    std::vector<std::pair<uint32_t, std::vector<uint32_t>>> pending(hiddenRows_.begin(),
                                                                    hiddenRows_.end());
    std::sort(pending.begin(), pending.end());
    // New rows are placed by their own order: siblings listed in a round's go back to theirs
    // first, and are listed in the round's again after.
    if (std::any_of(pending.begin(), pending.end(),
                    [&](const auto& p) { return roundOrder_.count(p.first) > 0; }))
        applyRoundOrder({});
    for (auto& [parent, rows] : pending) {
        const QModelIndex parentIndex = parent == kNone ? QModelIndex() : indexOfOp(parent);
        for (size_t i = 0; i < rows.size();) {
            size_t j = i;
            while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1) ++j;
            beginInsertRows(parentIndex, static_cast<int>(rows[i]), static_cast<int>(rows[j]));
            auto& hidden = hiddenRows_[parent];
            hidden.erase(hidden.begin(), hidden.begin() + static_cast<std::ptrdiff_t>(j - i + 1));
            if (hidden.empty()) hiddenRows_.erase(parent);
            endInsertRows();
            i = j + 1;
        }
    }
    knownOps_ = static_cast<uint32_t>(idx.opCount());
    hiddenRows_.clear();
    // The rows read may have run an op elsewhere in the round chosen.
    if (RoundOrder order = orderOfRound(); order != roundOrder_) applyRoundOrder(std::move(order));

    for (uint32_t op : change.touchedOps) {
        if (idx.op(op).process != process_ || isDirty_[op]) continue;
        isDirty_[op] = 1;
        dirty_.push_back(op);
    }
    if (!dirty_.empty() && !flushTimer_.isActive()) {
        if (flushTimer_.interval() == 0)
            flushDirty();
        else
            flushTimer_.start();
    }
}

void OpTreeModel::flushDirty() {
    std::vector<uint32_t> ops;
    ops.swap(dirty_);
    for (uint32_t op : ops) isDirty_[op] = 0;
    if (ops.size() > kMaxDataChangedOps) {
        // Thousands of dataChanged signals cost views a search each (QTreeView looks every
        // changed index up among its laid-out items): one layout change tells them all at once.
        // Nothing moves, so persistent indexes (selection, expanded items) stay as they are.
        emit layoutAboutToBeChanged({}, QAbstractItemModel::NoLayoutChangeHint);
        emit layoutChanged({}, QAbstractItemModel::NoLayoutChangeHint);
        return;
    }
    emitChanged(std::move(ops), 0, ColumnCount - 1);
}

void OpTreeModel::emitChanged(std::vector<uint32_t> ops, int first, int last) {
    const auto& idx = store_->index();
    // Only ops views know about (all but the newest, which arrive with their data), by the row
    // views see them at.
    struct Placed {
        uint32_t parent, row, op;
    };
    std::vector<Placed> placed;
    placed.reserve(ops.size());
    for (uint32_t op : ops) {
        uint32_t row = 0;
        if (idx.op(op).process == process_ && op < knownOps_ && visibleRowOf(op, &row))
            placed.push_back({idx.op(op).parent, row, op});
    }
    std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
        return a.parent != b.parent ? a.parent < b.parent : a.row < b.row;
    });
    for (size_t i = 0; i < placed.size();) {
        size_t j = i;
        while (j + 1 < placed.size() && placed[j + 1].parent == placed[i].parent &&
               placed[j + 1].row == placed[j].row + 1)
            ++j;
        emit dataChanged(
            createIndex(static_cast<int>(placed[i].row), first, quintptr{placed[i].op}),
            createIndex(static_cast<int>(placed[j].row), last, quintptr{placed[j].op}));
        i = j + 1;
    }
}

void OpTreeModel::onSelectionChanged() {
    const auto& idx = store_->index();
    if (process_ == kNone) return;
    if (idx.process(process_).opById.size() > kMaxDataChangedOps) {
        // As for mass updates: one layout change instead of a signal per parent.
        emit layoutAboutToBeChanged({}, QAbstractItemModel::NoLayoutChangeHint);
        emit layoutChanged({}, QAbstractItemModel::NoLayoutChangeHint);
        return;
    }
    // Check marks and the "dumped" column of every op may change: one signal per sibling run.
    if (const uint32_t top = visibleCount(kNone); top > 0)
        emit dataChanged(index(0, NameColumn), index(static_cast<int>(top) - 1, DumpedColumn));
    for (uint32_t op = 0; op < knownOps_; ++op) {
        if (idx.op(op).children.empty() || idx.op(op).process != process_) continue;
        const QModelIndex parent = indexOfOp(op);
        if (!parent.isValid()) continue;
        emit dataChanged(index(0, NameColumn, parent),
                         index(static_cast<int>(visibleCount(op)) - 1, DumpedColumn, parent));
    }
}

uint32_t OpTreeModel::opAt(const QModelIndex& index) const {
    if (!index.isValid() || index.model() != this) return kNone;
    return static_cast<uint32_t>(index.internalId());
}

QModelIndex OpTreeModel::indexOfOp(uint32_t op, int column) const {
    const auto& idx = store_->index();
    if (op >= idx.opCount() || process_ == kNone || idx.op(op).process != process_) return {};
    uint32_t row = 0;
    if (!visibleRowOf(op, &row)) return {};
    return createIndex(static_cast<int>(row), column, static_cast<quintptr>(op));
}

QModelIndex OpTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount || process_ == kNone) return {};
    if (parent.isValid() && parent.column() != 0) return {};
    const uint32_t parentOp = parent.isValid() ? opAt(parent) : kNone;
    const uint32_t op = childAt(parentOp, static_cast<uint32_t>(row));
    if (op == kNone) return {};
    return createIndex(row, column, static_cast<quintptr>(op));
}

QModelIndex OpTreeModel::parent(const QModelIndex& child) const {
    const uint32_t op = opAt(child);
    if (op == kNone) return {};
    const uint32_t parent = store_->index().op(op).parent;
    if (parent == kNone) return {};
    return indexOfOp(parent);
}

int OpTreeModel::rowCount(const QModelIndex& parent) const {
    if (process_ == kNone) return 0;
    if (!parent.isValid()) return static_cast<int>(visibleCount(kNone));
    if (parent.column() != 0) return 0;
    return static_cast<int>(visibleCount(opAt(parent)));
}

int OpTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

bool OpTreeModel::hasChildren(const QModelIndex& parent) const {
    return rowCount(parent) > 0;
}

Qt::ItemFlags OpTreeModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == NameColumn && checkable()) f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant OpTreeModel::data(const QModelIndex& index, int role) const {
    const uint32_t op = opAt(index);
    if (op == kNone) return {};
    const auto& idx = store_->index();
    const auto& o = idx.op(op);
    const int column = index.column();

    switch (role) {
        case OpRole:
            return op;
        case AnomalyRole:
            return anomaliesOf(op);
        case SubtreeAnomalyRole:
            return subtreeAnomaliesOf(op);
        case SelectedRole:
            return selection_ && selection_->selects(idx.location(op));
        case VerdictRole:
            return static_cast<int>(verdictShown(op));
        case Qt::BackgroundRole:
            if (const QColor c = RunComparison::verdictColor(verdictShown(op)); c.isValid())
                return c;
            return {};
        case Qt::CheckStateRole: {
            if (column != NameColumn || !checkable()) return {};
            if (selection_->isTicked(o.id)) return Qt::Checked;
            // Dumped because a ticked ancestor brings its children (save_child): shown half-ticked.
            if (selection_->includesChildren())
                for (uint32_t a = o.parent; a != kNone; a = idx.op(a).parent)
                    if (selection_->isTicked(idx.op(a).id)) return Qt::PartiallyChecked;
            return Qt::Unchecked;
        }
        case Qt::TextAlignmentRole:
            if (column == RoundsColumn || (column >= MaxColumn && column <= NormColumn))
                return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
            if (column == DumpedColumn || column == AnomalyColumn)
                return static_cast<int>(Qt::AlignCenter);
            return {};
        case Qt::ForegroundRole:
            if (column == AnomalyColumn) {
                const uint8_t own = anomaliesOf(op);
                if (own & analysis::kHasNan) return kNanColor;
                if (own & analysis::kHasInf) return kInfColor;
                return kBelowColor;
            }
            if (!hasRowsInRound(op)) return kBelowColor;
            if (column >= MaxColumn && column <= NormColumn) {
                const uint32_t row = idx.slotRow(idx.representativeSlot(op), round_);
                const auto stat = static_cast<analysis::Stat>(column - MaxColumn);
                if (row != kNone && idx.row(row).has(stat) &&
                    !std::isfinite(idx.row(row).get(stat)))
                    return std::isnan(idx.row(row).get(stat)) ? kNanColor : kInfColor;
            }
            return {};
        case Qt::FontRole: {
            // The tensor columns of an op without output rows show its first input: in italics,
            // as the Shape column says (they read as its output).
            if (!isTensorColumn(column)) return {};
            const uint32_t slot = idx.representativeSlot(op);
            if (slot == kNone || idx.slot(slot).isOutput) return {};
            QFont italic;
            italic.setItalic(true);
            return italic;
        }
        case Qt::DecorationRole:
            if (column != NameColumn) return {};
            if (const uint8_t own = anomaliesOf(op); own & analysis::kHasNan)
                return kNanColor;
            else if (own & analysis::kHasInf)
                return kInfColor;
            if (const uint8_t below = subtreeAnomaliesOf(op); below & analysis::kHasNan)
                return kNanColor.lighter(170);
            else if (below & analysis::kHasInf)
                return kInfColor.lighter(160);
            return {};
        default:
            break;
    }

    if (role != Qt::DisplayRole && role != SortRole && role != Qt::ToolTipRole) return {};
    const bool sort = role == SortRole;
    const uint32_t slot = idx.representativeSlot(op);
    const uint32_t row = idx.slotRow(slot, round_);

    if (role == Qt::ToolTipRole) {
        switch (column) {
            case NameColumn:
            case IdColumn:
            case TypeColumn: {
                // "2_5; 2_9 in round 2": an op shifted in some rounds.
                QString tip = QStringLiteral("%1\nid %2   type %3")
                                  .arg(QString::fromStdString(o.namePath),
                                       QString::fromStdString(idx.idsText(op)),
                                       QString::fromStdString(o.type));
                if (!o.param.empty())
                    tip += QStringLiteral("\nparameters: ") +
                           QString::fromStdString(o.param.substr(0, 400));
                if (!hasRowsInRound(op)) tip += QStringLiteral("\nno rows in round %1").arg(round_);
                return tip;
            }
            case RoundsColumn:
                if (o.rounds.empty()) return QStringLiteral("no rows yet");
                return QStringLiteral("%1 rounds (%2..%3), %4 rows")
                    .arg(o.rounds.size())
                    .arg(o.rounds.front())
                    .arg(o.rounds.back())
                    .arg(o.rowCount);
            case AnomalyColumn: {
                const QString where =
                    round_ >= 0 ? QStringLiteral(" in round %1").arg(round_) : QString();
                if (const uint8_t own = anomaliesOf(op))
                    return QStringLiteral("%1 in this op's statistics%2")
                        .arg(anomalyText(own), where);
                if (const uint8_t below = subtreeAnomaliesOf(op))
                    return QStringLiteral("%1 in an op below this one%2")
                        .arg(anomalyText(below), where);
                return {};
            }
            case DumpedColumn:
                return QStringLiteral(
                           "Whether the config below the tree dumps this op (ids, op_name, "
                           "save_child): the one a probe gets on Apply, not necessarily the one "
                           "this dump was made with") +
                       (idx.otherIds(op)
                            ? QStringLiteral(
                                  ".\nIt ran under other ids in some rounds (see its id): a "
                                  "config selects by id, and %1 dumps what runs there in each "
                                  "round")
                                  .arg(QString::fromStdString(o.id))
                            : QString());
            case VerdictColumn: {
                const auto* r = comparison_ ? comparison_->result() : nullptr;
                if (!r) return {};
                QString tip = round_ < 0 ? roundsBehindVerdict(op, row) : QString();
                const uint32_t compared = comparison_->comparedOp(op, round_);
                if (compared != kNone && r->ops[compared].cause != kNone)
                    tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) +
                           QString::fromStdString(r->describeOp(compared) + "\n" +
                                                  r->describeTensor(r->ops[compared].cause) + ": " +
                                                  r->explain(r->ops[compared].cause));
                return tip.isEmpty() ? QVariant() : QVariant(tip);
            }
            default:
                if (row == kNone) return {};
                return QStringLiteral("%1, round %2")
                    .arg(QString::fromStdString(idx.describeSlot(slot)))
                    .arg(idx.row(row).round);
        }
    }

    switch (column) {
        case NameColumn:
            return QString::fromStdString(o.name);
        case IdColumn:
            // The round chosen's id: an op shifted there ran under another.
            if (sort) {
                const auto it = rowInRound_.find(op);  // listed in the round's order
                return it != rowInRound_.end() ? it->second : o.row;
            }
            if (!hasRowsInRound(op) && idx.otherIds(op)) return {};  // (another round's id)
            return QVariant(QString::fromStdString(round_ >= 0 ? idx.idIn(op, round_) : o.id));
        case TypeColumn:
            return QString::fromStdString(o.type);
        case RoundsColumn:
            return sort || !o.rounds.empty() ? QVariant(static_cast<qulonglong>(o.rounds.size()))
                                             : QVariant();
        case ShapeColumn: {
            if (row == kNone) return {};
            const QString shape = formatShape(idx.text(idx.row(row).shape));
            return idx.slot(slot).isOutput ? shape : tr("input %1").arg(shape);
        }
        case DtypeColumn:
            return row == kNone ? QVariant()
                                : QVariant(QString::fromStdString(idx.text(idx.row(row).dtype)));
        case MaxColumn:
        case MinColumn:
        case MeanColumn:
        case NormColumn: {
            const auto stat = static_cast<analysis::Stat>(column - MaxColumn);
            if (row == kNone || !idx.row(row).has(stat))
                return sort ? QVariant(-DBL_MAX) : QVariant();
            const double v = idx.row(row).get(stat);
            return sort ? QVariant(sortable(v)) : QVariant(formatValue(v));
        }
        case AnomalyColumn: {
            const uint8_t own = anomaliesOf(op), below = subtreeAnomaliesOf(op);
            if (sort) return (own << 2) | below;
            if (own) return anomalyText(own);
            if (below) return anomalyText(below) + QStringLiteral(" below");
            return {};
        }
        case DumpedColumn: {
            const bool selected = selection_ && store_->layout() == analysis::DumpLayout::Atb &&
                                  selection_->selects(idx.location(op));
            if (sort) return selected;
            return selected ? QStringLiteral("\u2713") : QVariant();
        }
        case VerdictColumn: {
            const auto verdict = verdictShown(op);
            if (sort) return static_cast<int>(verdict);
            return verdict == RunComparison::Verdict::NotCompared
                       ? QVariant()
                       : QVariant(RunComparison::verdictText(verdict));
        }
        default:
            return {};
    }
}

RunComparison::Verdict OpTreeModel::verdictShown(uint32_t op) const {
    if (!comparison_) return RunComparison::Verdict::NotCompared;
    const auto verdict = comparison_->shownVerdictOf(op, round_);
    if (round_ >= 0 || verdict != RunComparison::Verdict::Matches) return verdict;
    // Round "latest": "matches" beside values of a round not compared (a live run gone on past
    // its reference, NaN by then) read as those values matching. That round's verdict instead:
    // only in one run, or none. A divergence in some round stays said.
    const auto& idx = store_->index();
    const uint32_t row = idx.slotRow(idx.representativeSlot(op), -1);
    if (row == kNone) return verdict;
    const int32_t shownRound = idx.row(row).round;
    return comparison_->comparedIn(op, shownRound) ? verdict
                                                   : comparison_->verdictOf(op, shownRound);
}

QString OpTreeModel::roundsBehindVerdict(uint32_t op, uint32_t shownRow) const {
    const auto rounds = comparison_->comparedRoundsOf(op);
    if (rounds.empty()) return {};
    const auto [first, last] = std::minmax_element(rounds.begin(), rounds.end());
    QString tip =
        rounds.size() == 1
            ? tr("Compared in round %1").arg(*first)
            : tr("Over the %1 rounds compared (%2..%3)").arg(rounds.size()).arg(*first).arg(*last);
    if (shownRow == kNone) return tip;
    const int32_t shownRound = store_->index().row(shownRow).round;
    if (comparison_->comparedIn(op, shownRound)) return tip;
    tip += tr("; the values beside it are round %1's, which was not compared").arg(shownRound);
    if (comparison_->verdictOf(op, shownRound) == RunComparison::Verdict::OnlyInOneRun)
        tip += tr(" (the reference has no such execution)");
    return tip;
}

bool OpTreeModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::CheckStateRole || index.column() != NameColumn || !checkable()) return false;
    const uint32_t op = opAt(index);
    if (op == kNone) return false;
    // The selection's changed() makes every affected item report its new state.
    selection_->setTicked(store_->index().op(op).id, value.toInt() == Qt::Checked);
    return true;
}

QVariant OpTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::ToolTipRole) {
        switch (section) {
            case NameColumn:
                return QStringLiteral("The op's own name; tick ops to add their ids to the config");
            case RoundsColumn:
                return QStringLiteral("How many rounds (executions) have rows");
            case ShapeColumn:
            case DtypeColumn:
                return QStringLiteral(
                    "Of the op's first output (else its first input, said \"input\" and in "
                    "italics), in the round chosen (its last round when none is)");
            case MaxColumn:
            case MinColumn:
            case MeanColumn:
            case NormColumn:
                return QStringLiteral(
                    "Of the op's first output (else its first input, in italics), in the round "
                    "chosen (its last round when none is); empty when the op has no row there");
            case AnomalyColumn:
                return QStringLiteral(
                    "NaN or Inf in the op's statistics (\"below\": in an op inside it), in the "
                    "round chosen (in any round when none is)");
            case DumpedColumn:
                return QStringLiteral(
                    "The config below the tree dumps this op (the one a probe gets on Apply)");
            case VerdictColumn:
                return QStringLiteral(
                    "Against the reference run, in the round chosen (\"all\": over every round "
                    "compared when the Round box says latest, while the values are each op's last "
                    "round's): born here (an output differs while the inputs match, or an "
                    "input differs that no compared op made: a parameter, the model's input), "
                    "inherited (from an op, or from outside the model after an earlier step "
                    "diverged: a generated token), matches, only in one run; born below: an op "
                    "inside it is born here, while it matches, was not compared or is born here "
                    "only as the op that divergence surfaces in");
            default:
                return {};
        }
    }
    if (role != Qt::DisplayRole) return {};
    switch (section) {
        case NameColumn:
            return QStringLiteral("Name");
        case IdColumn:
            return QStringLiteral("Id");
        case TypeColumn:
            return QStringLiteral("Type");
        case RoundsColumn:
            return QStringLiteral("Rounds");
        case ShapeColumn:
            return QStringLiteral("Shape");
        case DtypeColumn:
            return QStringLiteral("Dtype");
        case MaxColumn:
            return QStringLiteral("Max");
        case MinColumn:
            return QStringLiteral("Min");
        case MeanColumn:
            return QStringLiteral("Mean");
        case NormColumn:
            return QStringLiteral("Norm");
        case AnomalyColumn:
            return QStringLiteral("NaN/Inf");
        case DumpedColumn:
            // Not "Dumped": on an opened dump it read as "this dump holds its rows".
            return QStringLiteral("In config");
        case VerdictColumn:
            // Round "latest": the values are each op's last round's, the verdict is not.
            return round_ < 0 && comparison_ && comparison_->result()
                       ? QStringLiteral("Compared (all)")
                       : QStringLiteral("Compared");
        default:
            return {};
    }
}

}  // namespace probe::data
