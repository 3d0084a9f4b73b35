// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_tree_panel.h"

#include <functional>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include "config_document.h"
#include "config_wording.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "op_filter_proxy.h"
#include "op_selection.h"
#include "op_tree_model.h"
#include "view_columns.h"

namespace probe::widgets {
namespace {

// Names and ids cut to fit keep both ends: a deep op's id differs from its siblings' at its end
// ("1_1_0_0_1_…" told none apart), a name path's end is the op's own name.
class KeepEndsDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideMiddle;
    }
};

}  // namespace

using data::OpTreeModel;
using Show = data::OpFilterProxy::Show;

OpTreePanel::OpTreePanel(data::DumpStore* store, data::OpSelection* selection,
                         data::ConfigDocument* config, data::DumpCursor* cursor, QWidget* parent)
    : QWidget(parent), store_(store), selection_(selection), config_(config), cursor_(cursor) {
    model_ = new OpTreeModel(store_, selection_, this);
    // The statistics columns show the round the Round box (or a row clicked) chose.
    model_->setRound(cursor_->round());
    connect(cursor_, &data::DumpCursor::roundChanged, model_, &OpTreeModel::setRound);
    proxy_ = new data::OpFilterProxy(store_, selection_, this);
    proxy_->setOpModel(model_);

    search_ = new QLineEdit(this);
    search_->setPlaceholderText(tr("Search ops: name, id or type (a/b searches name paths)"));
    search_->setClearButtonEnabled(true);
    searchDelay_ = new QTimer(this);
    searchDelay_->setSingleShot(true);
    searchDelay_->setInterval(200);  // filter once typing pauses, not on every key
    connect(search_, &QLineEdit::textChanged, searchDelay_, qOverload<>(&QTimer::start));
    // Escape clears the search, as its clear button does (it did nothing).
    auto* clearSearch = new QAction(search_);
    clearSearch->setShortcut(Qt::Key_Escape);
    clearSearch->setShortcutContext(Qt::WidgetShortcut);
    search_->addAction(clearSearch);
    connect(clearSearch, &QAction::triggered, search_, &QLineEdit::clear);
    connect(searchDelay_, &QTimer::timeout, this, [this] { applySearch(search_->text()); });

    show_ = new QComboBox(this);
    show_->addItem(tr("All ops"), int(Show::All));
    show_->addItem(tr("NaN or Inf"), int(Show::Anomalies));
    show_->addItem(tr("NaN only"), int(Show::NanOnly));
    show_->addItem(tr("In the config"), int(Show::Dumped));
    show_->addItem(tr("Ticked"), int(Show::Ticked));
    show_->setToolTip(tr("Which ops to show (their ancestors stay visible)"));
    connect(show_, &QComboBox::currentIndexChanged, this,
            [this] { setShow(static_cast<Show>(show_->currentData().toInt())); });
    // The combo names the filter in force, also when it was set elsewhere.
    connect(proxy_, &data::OpFilterProxy::showChanged, this, [this](Show show) {
        const QSignalBlocker blocker(show_);
        show_->setCurrentIndex(show_->findData(int(show)));
    });

    process_ = new QComboBox(this);
    process_->setToolTip(tr("Process (device and pid, or rank) whose ops are shown"));
    process_->setVisible(false);
    connect(process_, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) model_->setProcess(static_cast<uint32_t>(i));
    });

    view_ = new QTreeView(this);
    view_->setModel(proxy_);
    view_->setUniformRowHeights(true);  // lets the view lay out 100k rows without asking each
    view_->setAlternatingRowColors(true);
    view_->setIconSize(QSize(9, 9));  // the NaN/Inf colour mark beside a name: a small square
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->header()->setSortIndicator(-1, Qt::AscendingOrder);
    view_->setSortingEnabled(true);
    view_->header()->setSortIndicatorShown(true);
    view_->header()->setStretchLastSection(false);
    // Room for what the columns show before the first rows arrive.
    for (int c = 0; c < OpTreeModel::ColumnCount; ++c)
        if (const QString sample = columnSample(c); !sample.isEmpty())
            view_->setColumnWidth(c, columnWidthFor(view_, sample));
    view_->setColumnWidth(OpTreeModel::NameColumn, 220);
    auto* keepEnds = new KeepEndsDelegate(view_);
    view_->setItemDelegateForColumn(OpTreeModel::NameColumn, keepEnds);
    view_->setItemDelegateForColumn(OpTreeModel::IdColumn, keepEnds);
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &OpTreePanel::onCurrentChanged);
    connect(view_, &QTreeView::pressed, this, &OpTreePanel::opPicked);

    configBar_ = new QWidget(this);
    configLabel_ = new QLabel(configBar_);
    // A line of its own, wrapped: a long file name must not widen the window, nor be cut.
    configLabel_->setWordWrap(true);
    configLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    includeChildren_ = new QCheckBox(tr("Include children"), configBar_);
    includeChildren_->setToolTip(
        tr("save_child: ticked ops' children are dumped too (shown half-ticked)"));
    connect(includeChildren_, &QCheckBox::toggled, selection_,
            &data::OpSelection::setIncludesChildren);
    clearTicks_ = new QPushButton(tr("Clear ticks"), configBar_);
    connect(clearTicks_, &QPushButton::clicked, this, [this] {
        auto cleared = selection_->config();
        cleared.ids.clear();
        selection_->setConfig(cleared);
    });
    auto* edit = new QPushButton(tr("Edit config…"), configBar_);
    edit->setToolTip(tr("Every key of the config, its JSON, loading and saving (the Config tab)"));
    apply_ = new QPushButton(tr("Apply"), configBar_);
    connect(edit, &QPushButton::clicked, this, &OpTreePanel::editConfigRequested);
    connect(apply_, &QPushButton::clicked, this, &OpTreePanel::applyConfigRequested);
    auto* configLayout = new QVBoxLayout(configBar_);
    configLayout->setContentsMargins(0, 0, 0, 0);
    configLayout->addWidget(configLabel_);
    auto* configButtons = new QHBoxLayout;
    configButtons->addWidget(includeChildren_);
    configButtons->addStretch(1);
    configButtons->addWidget(clearTicks_);
    configButtons->addWidget(edit);
    configButtons->addWidget(apply_);
    configLayout->addLayout(configButtons);
    connect(selection_, &data::OpSelection::changed, this, &OpTreePanel::updateConfigBar);
    connect(config_, &data::ConfigDocument::changed, this, &OpTreePanel::updateConfigBar);

    auto* top = new QHBoxLayout;
    top->addWidget(search_, 1);
    top->addWidget(show_);
    top->addWidget(process_);
    // Over an empty tree, why it is empty: a search matching nothing showed a blank tree.
    noMatch_ = new QLabel(this);
    noMatch_->setWordWrap(true);
    noMatch_->setVisible(false);
    connect(proxy_, &QAbstractItemModel::modelReset, this, &OpTreePanel::updateNoMatch);
    connect(proxy_, &QAbstractItemModel::layoutChanged, this, &OpTreePanel::updateNoMatch);
    connect(proxy_, &QAbstractItemModel::rowsInserted, this, &OpTreePanel::updateNoMatch);
    connect(proxy_, &QAbstractItemModel::rowsRemoved, this, &OpTreePanel::updateNoMatch);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(noMatch_);
    layout->addWidget(view_, 1);
    layout->addWidget(configBar_);

    connect(model_, &OpTreeModel::processesChanged, this, &OpTreePanel::updateProcesses);
    connect(store_, &data::DumpStore::wasReset, this, [this] {
        columnsFitted_ = false;
        updateConfigBar();
    });
    connect(store_, &data::DumpStore::initialLoadFinished, this, &OpTreePanel::fitColumns);
    // A dump opened as its model starts has no ops yet when first read: fit to the first ones.
    connect(store_, &data::DumpStore::changed, this, [this](const analysis::IndexChange& change) {
        if (!columnsFitted_ && change.newOps > 0 && store_->initialLoadDone()) fitColumns();
    });
    connect(cursor_, &data::DumpCursor::opChanged, this, [this](uint32_t op) {
        if (!syncing_ && op != analysis::kNone) revealOp(op);
    });
    updateConfigBar();
}

// What a column should have room for even before its rows say: statistics as the tree prints
// them, deeper ops' longer ids (not expanded yet), the usual shapes and dtypes.
QString OpTreePanel::columnSample(int column) {
    switch (column) {
        case OpTreeModel::IdColumn:
            return QStringLiteral("00_00_00_00");
        case OpTreeModel::MaxColumn:
        case OpTreeModel::MinColumn:
        case OpTreeModel::MeanColumn:
        case OpTreeModel::NormColumn:
            return QStringLiteral("-0.123457");
        case OpTreeModel::ShapeColumn:
            return QStringLiteral("input 1x12x64");  // an op without outputs shows an input
        case OpTreeModel::DtypeColumn:
            return QStringLiteral("bfloat16");
        case OpTreeModel::AnomalyColumn:
            return QStringLiteral("NaN Inf below");
        default:
            return {};
    }
}

void OpTreePanel::fitColumns() {
    if (columnsFitted_ || model_->rowCount() == 0) return;
    columnsFitted_ = true;
    view_->expandToDepth(0);
    // The id column says the same as the name for the msprobe layout (entries are their own ids).
    view_->setColumnHidden(OpTreeModel::IdColumn,
                           store_->layout() == analysis::DumpLayout::Msprobe);
    view_->setColumnHidden(OpTreeModel::DumpedColumn,
                           store_->layout() == analysis::DumpLayout::Msprobe);
    fitColumnsToVisibleRows(view_, &OpTreePanel::columnSample);
    // Names get room, but not so much that the statistics beside them leave the screen.
    const int name = view_->columnWidth(OpTreeModel::NameColumn);
    view_->setColumnWidth(OpTreeModel::NameColumn,
                          std::clamp(name, std::min(220, view_->viewport()->width() / 3),
                                     std::max(220, view_->viewport()->width() * 2 / 5)));
    // expandToDepth collapsed whatever was deeper: the op a dump opens at (its first NaN, deep
    // in a layer) is shown again, not left selected inside a collapsed layer.
    if (cursor_->op() != analysis::kNone) revealOp(cursor_->op());
}

void OpTreePanel::updateProcesses() {
    const auto& idx = store_->index();
    const QSignalBlocker blocker(process_);
    process_->clear();
    for (size_t i = 0; i < idx.processCount(); ++i)
        process_->addItem(QString::fromStdString(idx.process(static_cast<uint32_t>(i)).key));
    if (model_->process() != analysis::kNone)
        process_->setCurrentIndex(static_cast<int>(model_->process()));
    process_->setVisible(idx.processCount() > 1);
}

bool OpTreePanel::setProcessKey(const QString& key) {
    const uint32_t process = store_->index().findProcess(key.toStdString());
    if (process == analysis::kNone) return false;
    model_->setProcess(process);
    process_->setCurrentIndex(static_cast<int>(process));
    return true;
}

void OpTreePanel::updateConfigBar() {
    const bool atb = store_->layout() == analysis::DumpLayout::Atb;
    configBar_->setVisible(atb);
    const QSignalBlocker blocker(includeChildren_);
    includeChildren_->setChecked(selection_->includesChildren());
    const auto& config = selection_->config();
    const QString what = describeDumpedOps(config);
    // The file is the config document's when it is an op-level one (the editor may hold a
    // code-level config meanwhile; the tree still shows the op selection).
    const bool opDocument = config_->kind() == data::ConfigDocument::Kind::Op;
    const QString path = opDocument ? config_->filePath() : QString();
    const QString origin = opDocument ? config_->origin() : QString();
    const QString file = !path.isEmpty() ? QFileInfo(path).fileName()
                         : origin.isEmpty()
                             ? tr("new config")
                             : tr("new config from %1").arg(data::shortConfigName(origin));
    const bool modified = opDocument && config_->isModified();
    if (opDocument && config_->hasErrors()) {
        // Its ticks and ids are not in force: the tree shows the last valid config's.
        configLabel_->setText(tr("Config: %1%2 invalid, not applied (see Config) — the In "
                                 "config column shows the last valid config: %3")
                                  .arg(file, modified ? QStringLiteral("*") : QString(), what));
    } else {
        configLabel_->setText(
            tr("Config: %1%2 — %3").arg(file, modified ? QStringLiteral("*") : QString(), what));
    }
    configLabel_->setToolTip(opDocument ? config_->text()
                                        : QString::fromStdString(config.toFileText()));
    clearTicks_->setEnabled(!config.ids.empty());
    apply_->setEnabled(opDocument && !config_->hasErrors());
    apply_->setToolTip(
        opDocument
            ? tr("Write the config file and, when a probe is attached, push the config to it")
            : tr("The config editor holds a code-level config"));
}

QString OpTreePanel::showText() const {
    return show_->currentText();
}

QString OpTreePanel::configText() const {
    return configLabel_->text();
}

void OpTreePanel::keepingTheSelectedOp(const std::function<void()>& filterChange) {
    // A filter hiding the current row makes the view choose another, which the cursor (the
    // comparison, the plots) followed: a search moved the selection away for good.
    const uint32_t selected = cursor_->op();
    filtering_ = true;
    filterChange();
    const QModelIndex shown = selected == analysis::kNone
                                  ? QModelIndex()
                                  : proxy_->mapFromSource(model_->indexOfOp(selected));
    if (shown.isValid()) {
        view_->selectionModel()->setCurrentIndex(
            shown, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    } else {
        view_->selectionModel()->clearSelection();
        view_->selectionModel()->setCurrentIndex({}, QItemSelectionModel::NoUpdate);
    }
    filtering_ = false;
}

void OpTreePanel::onCurrentChanged() {
    if (filtering_) return;  // keepingTheSelectedOp's doing: the cursor stays
    const QModelIndex current = proxy_->mapToSource(view_->currentIndex());
    const uint32_t op = model_->opAt(current);
    if (op == analysis::kNone) return;
    syncing_ = true;
    cursor_->setOp(op);
    syncing_ = false;
}

bool OpTreePanel::revealOp(uint32_t op, KeepFilters keep) {
    // An op of another process (a rank opened or compared, a jump): show that process's tree.
    const auto& idx = store_->index();
    if (op < idx.opCount() && idx.op(op).process != model_->process())
        setProcessKey(QString::fromStdString(idx.process(idx.op(op).process).key));
    const QModelIndex source = model_->indexOfOp(op);
    if (!source.isValid()) return false;
    QModelIndex proxied = proxy_->mapFromSource(source);
    if (!proxied.isValid()) {
        if (keep == KeepFilters::Yes) return false;
        // Hidden by the search or the show filter (one left from the last dump hid its first
        // NaN, and First NaN did nothing): the op asked for is shown, the filters that hid it go.
        setSearchText(QString());
        setShow(Show::All);
        proxied = proxy_->mapFromSource(source);
        if (!proxied.isValid()) return false;
    }
    for (QModelIndex p = proxied.parent(); p.isValid(); p = p.parent()) view_->expand(p);
    syncing_ = true;
    view_->selectionModel()->setCurrentIndex(
        proxied, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    syncing_ = false;
    view_->scrollTo(proxied, QAbstractItemView::PositionAtCenter);
    return true;
}

void OpTreePanel::setSearchText(const QString& text) {
    search_->setText(text);
    searchDelay_->stop();
    applySearch(text);
}

void OpTreePanel::setShow(Show show) {
    if (show == proxy_->show()) return;
    // Collapsed first, as for a search (applySearch): the ops shown open again after, or the
    // layers and the op selected.
    view_->collapseAll();
    keepingTheSelectedOp([&] { proxy_->setShow(show); });
    // The ops shown are opened as a search's matches are (at most so many: "what the config
    // dumps" may be every op of a big dump); a search still in force keeps its matches open.
    if (show != Show::All || searching_)
        openTheWayToMatches();
    else
        view_->expandToDepth(0);
    if (show == Show::All && cursor_->op() != analysis::kNone)
        revealOp(cursor_->op(), KeepFilters::Yes);
}

void OpTreePanel::focusSearch() {
    search_->setFocus(Qt::ShortcutFocusReason);
    search_->selectAll();
}

void OpTreePanel::applySearch(const QString& text) {
    // A change the filter does not see (a space typed): the tree stays as the user opened it.
    if (text.trimmed().toLower() == proxy_->searchText()) return;
    const bool searching = !text.trimmed().isEmpty();
    if (searching && !searching_) {
        expandedBeforeSearch_.clear();
        collectExpanded({}, expandedBeforeSearch_);
    }
    // Collapsed first: rows the filter brings back into open branches are laid out one insertion
    // at a time (clearing a search that had opened every layer froze the window for 17 s on
    // 100,000 ops); into closed ones they cost nothing. The search opens its matches again
    // after, or the branches open before it.
    view_->collapseAll();
    keepingTheSelectedOp([&] { proxy_->setSearchText(text); });
    if (!searching && searching_) {
        for (const uint32_t op : expandedBeforeSearch_)
            if (const QModelIndex at = proxy_->mapFromSource(model_->indexOfOp(op)); at.isValid())
                view_->expand(at);
        expandedBeforeSearch_.clear();
    }
    searching_ = searching;
    updateNoMatch();
    if (searching)
        openTheWayToMatches();
    else if (cursor_->op() != analysis::kNone)
        // The search cleared: back to the op selected, unless the show filter (kept, as the
        // user set it) hides it.
        revealOp(cursor_->op(), KeepFilters::Yes);
}

QString OpTreePanel::noMatchText() const {
    return noMatch_->isHidden() ? QString() : noMatch_->text();
}

void OpTreePanel::updateNoMatch() {
    // By the filter in force, not the widgets: a search being typed is not applied yet.
    const bool searching = !proxy_->searchText().isEmpty();
    const bool filtered = proxy_->show() != data::OpFilterProxy::Show::All;
    const QString text = search_->text().trimmed();
    QString said;
    if (store_->isOpen() && (searching || filtered) && proxy_->rowCount() == 0 &&
        model_->rowCount() > 0) {
        said = !searching ? tr("No op is shown by \"%1\".").arg(show_->currentText())
               : filtered ? tr("No op matches \"%1\" among those shown by \"%2\".")
                                .arg(text, show_->currentText())
                          : tr("No op matches \"%1\" (name, id or type).").arg(text);
    }
    noMatch_->setText(said);
    noMatch_->setVisible(!said.isEmpty());
}

void OpTreePanel::openTheWayToMatches() {
    // So many rows opened at most: a search matching deep ops of every layer of a big dump
    // opens the first of them, not all (each opened row lays out its children).
    constexpr int kOpenedAtMost = 2000;
    std::vector<QModelIndex> toVisit{QModelIndex()};
    int opened = 0;
    for (size_t next = 0; next < toVisit.size() && opened < kOpenedAtMost; ++next) {
        const QModelIndex parent = toVisit[next];
        const int rows = proxy_->rowCount(parent);
        for (int row = 0; row < rows && opened < kOpenedAtMost; ++row) {
            const QModelIndex child = proxy_->index(row, 0, parent);
            if (!proxy_->hasChildren(child)) continue;  // (the filter shows only matches)
            view_->expand(child);
            ++opened;
            toVisit.push_back(child);
        }
    }
}

void OpTreePanel::collectExpanded(const QModelIndex& parent, std::vector<uint32_t>& ops) const {
    for (int row = 0; row < proxy_->rowCount(parent); ++row) {
        const QModelIndex child = proxy_->index(row, 0, parent);
        if (!view_->isExpanded(child)) continue;
        ops.push_back(model_->opAt(proxy_->mapToSource(child)));
        collectExpanded(child, ops);
    }
}

}  // namespace probe::widgets
