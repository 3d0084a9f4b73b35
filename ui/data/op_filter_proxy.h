// Search and filter over the op tree: text (id, name, type or name path, any case) and what to
// show (everything, NaN/Inf, what the config dumps, ticked ops). Ancestors of a match stay
// visible so the tree keeps its shape. Reads the DumpIndex directly, not through QVariants, so
// filtering a hundred thousand ops is quick.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

#include <QSortFilterProxyModel>

namespace probe::data {

class DumpStore;
class OpSelection;
class OpTreeModel;

class OpFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    enum class Show { All, Anomalies, NanOnly, Dumped, Ticked };

    OpFilterProxy(DumpStore* store, OpSelection* selection, QObject* parent = nullptr);

    void setOpModel(OpTreeModel* model);
    QString searchText() const { return QString::fromStdString(search_); }
    void setSearchText(const QString& text);
    Show show() const { return show_; }
    void setShow(Show show);

signals:
    // Whoever set it: controls that name the filter follow.
    void showChanged(probe::data::OpFilterProxy::Show show);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    bool filtering() const { return !search_.empty() || show_ != Show::All; }

    DumpStore* store_;
    OpSelection* selection_;
    OpTreeModel* ops_ = nullptr;
    std::string search_;  // lower case
    Show show_ = Show::All;
};

}  // namespace probe::data
