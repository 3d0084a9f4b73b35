// The op tree with its search, filter, process picker and the config bar (tick ops to dump,
// include their children, open the config editor, apply the config).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <vector>

#include <QWidget>

#include "op_filter_proxy.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTimer;
class QTreeView;

namespace probe::data {
class ConfigDocument;
class DumpCursor;
class DumpStore;
class OpSelection;
class OpTreeModel;
}  // namespace probe::data

namespace probe::widgets {

class OpTreePanel : public QWidget {
    Q_OBJECT
public:
    OpTreePanel(data::DumpStore* store, data::OpSelection* selection, data::ConfigDocument* config,
                data::DumpCursor* cursor, QWidget* parent = nullptr);

    QTreeView* view() const { return view_; }
    data::OpTreeModel* model() const { return model_; }
    data::OpFilterProxy* proxy() const { return proxy_; }
    // What the filter combo and the config line under the tree say.
    QString showText() const;
    QString configText() const;
    // What is said over an empty tree when the search or show filter matches no op ("" when
    // the tree has rows or nothing filters it).
    QString noMatchText() const;
    // Shows and selects the op (expanding its ancestors); false when it is not in the tree. A
    // search or show filter that hides it is dropped, unless `keep` says Yes (then false).
    enum class KeepFilters { No, Yes };
    bool revealOp(uint32_t op, KeepFilters keep = KeepFilters::No);
    void setSearchText(const QString& text);
    // Which ops to show (the combo's choice): the ops shown expanded, or with every op shown, the
    // layers and the op selected.
    void setShow(data::OpFilterProxy::Show show);
    // Puts the keyboard in the search field, its text selected (View › Find op, Ctrl+F).
    void focusSearch();
    // Chooses which process's tree is shown, by key ("0_1234", "rank0").
    bool setProcessKey(const QString& key);

signals:
    // The user picked an op in the tree (clicked it, even the one selected already).
    void opPicked();
    void editConfigRequested();
    void applyConfigRequested();

private:
    void updateProcesses();
    void updateConfigBar();
    void onCurrentChanged();
    void fitColumns();
    static QString columnSample(int column);
    // Filters by `text`, as typing it does: the matches shown expanded; the branches open before
    // a search are open again once it is cleared (the search's own expansion closed every one
    // the user had opened), and the op selected shown.
    void applySearch(const QString& text);
    // Runs a change of the filters keeping the cursor's op: selected again when still shown, else
    // nothing selected (the view's choice of another row is not followed).
    void keepingTheSelectedOp(const std::function<void()>& filterChange);
    void updateNoMatch();
    void collectExpanded(const QModelIndex& parent, std::vector<uint32_t>& ops) const;
    // Opens every row the filter shows children of (matches, or the way to one), outermost
    // first, so that the matches show (expandToDepth(2) left those deeper than a layer's
    // grandchildren closed).
    void openTheWayToMatches();

    data::DumpStore* store_;
    data::OpSelection* selection_;
    data::ConfigDocument* config_;
    data::DumpCursor* cursor_;
    data::OpTreeModel* model_;
    data::OpFilterProxy* proxy_;
    QLineEdit* search_;
    QTimer* searchDelay_;
    QComboBox* show_;
    QComboBox* process_;
    QTreeView* view_;
    QWidget* configBar_;
    QLabel* configLabel_;
    QLabel* noMatch_;
    QCheckBox* includeChildren_;
    QPushButton* clearTicks_;
    QPushButton* apply_;
    bool syncing_ = false;
    bool filtering_ = false;  // inside keepingTheSelectedOp
    bool columnsFitted_ = false;
    bool searching_ = false;
    std::vector<uint32_t> expandedBeforeSearch_;  // ops (the model's numbers)
};

}  // namespace probe::widgets
