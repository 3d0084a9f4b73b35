// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_filter_proxy.h"

#include <algorithm>
#include <cctype>

#include "dump_store.h"
#include "op_selection.h"
#include "op_tree_model.h"

namespace probe::data {
namespace {

bool containsNoCase(const std::string& haystack, const std::string& lowerNeedle) {
    auto it = std::search(
        haystack.begin(), haystack.end(), lowerNeedle.begin(), lowerNeedle.end(),
        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
    return it != haystack.end();
}

}  // namespace

OpFilterProxy::OpFilterProxy(DumpStore* store, OpSelection* selection, QObject* parent)
    : QSortFilterProxyModel(parent), store_(store), selection_(selection) {
    setRecursiveFilteringEnabled(true);
    setSortRole(OpTreeModel::SortRole);
    // Re-filter and re-sort as rows arrive only when it matters (a filter or a sort is set).
    setDynamicSortFilter(true);
    if (selection_)
        connect(selection_, &OpSelection::changed, this, [this] {
            // A tick changes a few rows: their difference (a full re-map relaid every open row).
            if (show_ == Show::Dumped || show_ == Show::Ticked) invalidateFilter();
        });
}

void OpFilterProxy::setOpModel(OpTreeModel* model) {
    ops_ = model;
    setSourceModel(model);
}

// A filter change re-maps every row (invalidate: one layout change), not the difference
// (invalidateFilter: each row that comes back is inserted on its own, and clearing a search
// that matched ops under thousands of parents took 17 s on 100,000 ops, 280 ms collapsed).
void OpFilterProxy::setSearchText(const QString& text) {
    std::string lower = text.trimmed().toLower().toStdString();
    if (lower == search_) return;
    search_ = std::move(lower);
    invalidate();
}

void OpFilterProxy::setShow(Show show) {
    if (show == show_) return;
    show_ = show;
    invalidate();
    emit showChanged(show);
}

bool OpFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (!filtering() || !ops_) return true;
    const uint32_t op = ops_->opAt(ops_->index(sourceRow, 0, sourceParent));
    if (op == analysis::kNone) return false;
    const auto& idx = store_->index();
    const auto& o = idx.op(op);
    switch (show_) {
        case Show::All:
            break;
        case Show::Anomalies:  // in the round chosen
            if (!ops_->anomaliesOf(op)) return false;
            break;
        case Show::NanOnly:
            if (!(ops_->anomaliesOf(op) & analysis::kHasNan)) return false;
            break;
        case Show::Dumped:
            if (!selection_ || !selection_->selects(idx.location(op))) return false;
            break;
        case Show::Ticked:
            if (!selection_ || !selection_->isTicked(o.id)) return false;
            break;
    }
    if (search_.empty()) return true;
    // A path ("self_attn/softmax") is searched in the name path; otherwise the op's own name, so
    // that a match does not pull in everything below it.
    const bool path = search_.find('/') != std::string::npos;
    if (containsNoCase(path ? o.namePath : o.name, search_) || containsNoCase(o.id, search_) ||
        containsNoCase(o.type, search_))
        return true;
    // The id the tree shows for the round chosen, where the op ran under another.
    const int32_t round = ops_->round();
    return round >= 0 && idx.otherIds(op) && containsNoCase(idx.idIn(op, round), search_);
}

bool OpFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const QVariant l = left.data(OpTreeModel::SortRole), r = right.data(OpTreeModel::SortRole);
    if (l.typeId() == QMetaType::QString || r.typeId() == QMetaType::QString)
        return QString::localeAwareCompare(l.toString(), r.toString()) < 0;
    return QVariant::compare(l, r) == QPartialOrdering::Less;
}

}  // namespace probe::data
