// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_tensors_panel.h"

#include <algorithm>

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>

#include "analysis/atb_dump.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "op_replay.h"
#include "op_tensors_model.h"
#include "overflow_births.h"
#include "page_style.h"
#include "scroll_follow.h"
#include "view_columns.h"

namespace probe::widgets {

namespace {

// The first row of `op` with a tensor file (in `round`, or any round for -1); kNone without.
uint32_t firstRowWithTensorFile(const analysis::DumpIndex& idx, uint32_t op, int32_t round = -1) {
    for (uint32_t slot : idx.op(op).tensorSlots)
        for (uint32_t r : idx.slot(slot).rows)
            if (idx.row(r).hasTensorFile && (round < 0 || idx.row(r).round == round)) return r;
    return analysis::kNone;
}

// Whether some tensor of `op` was dumped with its data (a .bin file) in `round`, in any round
// when it is negative: what a replay runs the op again from.
bool hasTensorFile(const analysis::DumpIndex& idx, uint32_t op, int32_t round = -1) {
    return firstRowWithTensorFile(idx, op, round) != analysis::kNone;
}

}  // namespace

using analysis::kNone;
using data::OpTensorsModel;

OpTensorsPanel::OpTensorsPanel(data::DumpStore* store, data::DumpCursor* cursor, QWidget* parent)
    : QWidget(parent), store_(store), cursor_(cursor) {
    model_ = new OpTensorsModel(store_, this);
    title_ = makePaneTitle(QString(), this);
    details_ = new QLabel(this);
    details_->setWordWrap(true);
    details_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    details_->setTextFormat(Qt::RichText);  // escaped names: "&amp;" is "&" whatever follows
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    roundOnly_ = new QCheckBox(tr("Current round only"), this);
    roundOnly_->setToolTip(
        tr("Show the rows of the round chosen in the toolbar (or by a click on a plot)"));
    replay_ = new QPushButton(tr("Replay this op"), this);
    verdict_ = new QLabel(this);
    verdict_->setWordWrap(true);
    verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    verdict_->setVisible(false);
    replayer_ = new data::OpReplay(this);
    connect(replay_, &QPushButton::clicked, this, &OpTensorsPanel::replayCurrentOp);
    connect(replayer_, &data::OpReplay::finished, this, &OpTensorsPanel::showVerdict);

    view_ = new QTableView(this);
    view_->setModel(model_);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->setAlternatingRowColors(true);
    view_->verticalHeader()->setVisible(false);
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
    view_->horizontalHeader()->setStretchLastSection(true);
    view_->setWordWrap(false);

    auto* head = new QHBoxLayout;
    head->addWidget(title_, 1);
    head->addWidget(roundOnly_);
    head->addWidget(replay_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(head);
    layout->addWidget(details_);
    layout->addWidget(verdict_);
    layout->addWidget(view_, 1);

    // The user scrolls: the table follows the newest rows again once they are back at the end.
    whenUserScrolls(view_->verticalScrollBar(), this, [this](bool atEnd) { followRows_ = atEnd; });

    connect(cursor_, &data::DumpCursor::opChanged, this, [this](uint32_t op) {
        followRows_ = true;
        if (!replayer_->isRunning()) verdict_->setVisible(false);  // a verdict names its op
        model_->setOp(op);
        updateHeader();
        selectCursorRow();
        fitColumns();
    });
    // An op chosen before it had rows (a model just launched): fit the columns to its first ones.
    auto fitOnFirstRows = [this] {
        if (!columnsFitted_) fitColumns();
    };
    connect(model_, &QAbstractItemModel::rowsInserted, this, fitOnFirstRows);
    connect(model_, &QAbstractItemModel::modelReset, this, fitOnFirstRows);
    connect(cursor_, &data::DumpCursor::changed, this, [this] { selectCursorRow(); });
    connect(cursor_, &data::DumpCursor::roundChanged, this, [this](int32_t round) {
        if (roundOnly_->isChecked()) model_->setRound(round);
        updateHeader();  // the round's parameters
        selectCursorRow();
    });
    connect(roundOnly_, &QCheckBox::toggled, this, [this](bool on) {
        model_->setRound(on ? cursor_->round() : -1);
        selectCursorRow();
    });
    connect(store_, &data::DumpStore::wasReset, this, [this] { roundParams_ = {}; });
    connect(store_, &data::DumpStore::changed, this, [this](const analysis::IndexChange& change) {
        if (cursor_->op() == kNone ||
            !std::binary_search(change.touchedOps.begin(), change.touchedOps.end(), cursor_->op()))
            return;
        updateHeader();
        // The latest round is meant (the Round box says "latest"): the highlight follows the rows
        // as they arrive (it stayed on the round that was latest when the op was chosen), and the
        // table with it while the user has not scrolled the highlight out of sight.
        // Not while the user scrolled up to read (wheel, the bar): the table jumped to the
        // newest row at every batch of rows, and could not be browsed while the model ran.
        if (cursor_->round() < 0) {
            const QModelIndex current = view_->currentIndex();
            const bool inSight = current.isValid() &&
                                 view_->viewport()->rect().intersects(view_->visualRect(current));
            selectCursorRow(inSight && followRows_);
        }
    });
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (syncing_ || !current.isValid()) return;
                syncing_ = true;
                cursor_->setRow(model_->rowAt(current.row()));
                syncing_ = false;
            });
    connect(view_, &QTableView::pressed, this, &OpTensorsPanel::rowPicked);
    connect(view_, &QTableView::activated, this, [this](const QModelIndex& index) {
        const uint32_t row = model_->rowAt(index.row());
        if (row != kNone) emit previewRequested(row);
    });
    updateHeader();
}

void OpTensorsPanel::setOverflowBirths(data::OverflowBirths* births) {
    births_ = births;
    connect(births_, &data::OverflowBirths::changed, this, &OpTensorsPanel::updateHeader);
    updateHeader();
}

bool OpTensorsPanel::replayCurrentOp() {
    const auto& idx = store_->index();
    const uint32_t op = cursor_->op();
    if (op == kNone || op >= idx.opCount() || idx.layout() != analysis::DumpLayout::Atb)
        return false;
    const auto& o = idx.op(op);
    // The round of the tensor selected, else the round chosen, else the op's last.
    int32_t round = cursor_->round();
    const uint32_t row = cursor_->row();
    if (row != kNone && idx.slot(idx.row(row).slot).op == op) round = idx.row(row).round;
    if (round < 0 || !std::binary_search(o.rounds.begin(), o.rounds.end(), round))
        round = o.rounds.empty() ? 0 : o.rounds.back();
    // A replay runs the op again on its dumped inputs: without them, say so and why (probe
    // replay's own "found no op with tensor data" read as a failure of the replay).
    if (!hasTensorFile(idx, op, round)) {
        const QString name = QString::fromStdString(o.namePath).toHtmlEscaped();
        verdict_->setText(
            o.rounds.empty()
                // Not even statistics: the config did not select it.
                ? tr("<b>%1 (%2) cannot be replayed</b>: nothing of it was dumped (the config did "
                     "not select it). Tick it, with task \"tensor\" or \"all\", and run again.")
                      .arg(name, QString::fromStdString(o.id))
                : tr("<b>%1 (%2) cannot be replayed in round %3</b>: its tensors were not dumped "
                     "there, only statistics. Replay needs a dump with task \"tensor\" or "
                     "\"all\".")
                      .arg(name, QString::fromStdString(idx.idIn(op, round)))
                      .arg(round));
        verdict_->setVisible(true);
        return false;
    }
    // The id it ran under in that round (another than its own where the layer's control flow
    // changed): replay finds an op by that round's id.
    const QString id = QString::fromStdString(idx.idIn(op, round));
    replayer_->start(store_->root(), id, round, QString::fromStdString(idx.process(o.process).key));
    verdict_->setText(tr("Replaying %1 (%2) of round %3 with <tt>probe replay</tt>…")
                          .arg(QString::fromStdString(o.namePath).toHtmlEscaped(), id)
                          .arg(round));
    verdict_->setVisible(true);
    return true;
}

void OpTensorsPanel::showVerdict(const data::ReplayVerdict& v) {
    QString text;
    if (!v.ran) {
        text = tr("<b>Replay of %1 in round %2 failed</b>: %3")
                   .arg(v.opId)
                   .arg(v.round)
                   .arg(v.error.toHtmlEscaped());
    } else {
        const QString color = v.verdict == QLatin1String("ok")         ? QStringLiteral("#1e7b1e")
                              : v.verdict == QLatin1String("WRONG")    ? QStringLiteral("#c81e1e")
                              : v.verdict == QLatin1String("overflow") ? QStringLiteral("#d27800")
                                                                       : QStringLiteral("#555555");
        text = tr("Replay of %1 (%2) [%3], round %4: <b style='color:%5'>%6</b>")
                   .arg(v.opName.toHtmlEscaped(), v.opId, v.opType.toHtmlEscaped())
                   .arg(v.round)
                   .arg(color, v.verdict.toHtmlEscaped());
        if (!v.reason.isEmpty()) text += QStringLiteral(" — ") + v.reason.toHtmlEscaped();
        if (v.hasMeasures)
            text +=
                tr("<br>dumped output against float64: max abs error %1, max rel error %2, max ULP "
                   "error %3")
                    .arg(QString::number(v.maxAbsErr, 'g', 3), QString::number(v.maxRelErr, 'g', 3),
                         QString::number(v.maxUlpErr, 'g', 3));
    }
    verdict_->setText(text);
    verdict_->setVisible(true);
}

QString OpTensorsPanel::replayText() const {
    return verdict_->isHidden() ? QString() : verdict_->text();
}

void OpTensorsPanel::fitColumns() {
    // The rows on screen and the header only: an op may have a row for each of many rounds.
    fitColumnsToVisibleRows(view_, [](int column) {
        switch (column) {
            case OpTensorsModel::MaxColumn:
            case OpTensorsModel::MinColumn:
            case OpTensorsModel::MeanColumn:
            case OpTensorsModel::NormColumn:
                return QStringLiteral("-1.23457e+06");
            case OpTensorsModel::DtypeColumn:
                return QStringLiteral("bfloat16");
            default:
                return QString();
        }
    });
    columnsFitted_ = model_->rowCount() > 0;
}

const OpTensorsPanel::RoundParams& OpTensorsPanel::roundParams(uint32_t op, int32_t round) {
    // Read once per op and round (the header is redrawn at every poll of a growing dump), and
    // again only while the round has no tensor file yet.
    if (roundParams_.op == op && roundParams_.round == round && roundParams_.found)
        return roundParams_;
    roundParams_ = RoundParams{op, round};
    const auto& idx = store_->index();
    if (round < 0 || idx.layout() != analysis::DumpLayout::Atb) return roundParams_;
    const uint32_t row = firstRowWithTensorFile(idx, op, round);
    if (row == kNone) return roundParams_;
    roundParams_.found = true;
    if (const std::string path = idx.tensorPath(row, &roundParams_.error); !path.empty())
        roundParams_.text = analysis::roundOpParams(path, &roundParams_.error);
    return roundParams_;
}

QString OpTensorsPanel::detailsText() const {
    return details_->text();
}

void OpTensorsPanel::updateHeader() {
    const auto& idx = store_->index();
    const uint32_t op = cursor_->op();
    // Only an op some of whose tensors were dumped can run again (a dump of statistics alone
    // enabled it, to say so only once clicked).
    const bool tensors = op != kNone && op < idx.opCount() &&
                         idx.layout() == analysis::DumpLayout::Atb && hasTensorFile(idx, op);
    replay_->setEnabled(tensors);
    replay_->setToolTip(
        tensors ? tr("probe replay: run this aten op again from its dumped inputs on the CPU in "
                     "float64 and in its own dtype, and say whether the op itself is wrong or only "
                     "inherits bad inputs")
                : tr("Replay runs an op again from its dumped inputs: this op's tensors were not "
                     "dumped (statistics only). Dump it with task \"tensor\" or \"all\"."));
    if (op == kNone || op >= idx.opCount()) {
        title_->setText(tr("No op selected"));
        details_->setText(tr("Pick an op in the tree, or a point on a plot."));
        return;
    }
    const auto& o = idx.op(op);
    title_->setText(QString::fromStdString(o.namePath));
    // Names from the dump, as text (a type holding "<" is no markup), and at most 200 characters
    // of each: a type of 100,000 characters, one unbreakable word, widened the pane and pushed
    // the tree aside.
    const auto shown = [](const std::string& name) {
        QString text = QString::fromStdString(name);
        if (text.size() > 200) text = text.left(120) + QStringLiteral("…") + text.right(40);
        return text.toHtmlEscaped();
    };
    QString text =
        tr("id %1 · type %2 · depth %3 · %4")
            .arg(shown(idx.idsText(op)), shown(o.type))
            .arg(o.depth)
            .arg(countOf(static_cast<qsizetype>(o.rounds.size()), tr("round"), tr("rounds")));
    if (!o.rounds.empty()) text += tr(" (%1..%2)").arg(o.rounds.front()).arg(o.rounds.back());
    text +=
        QStringLiteral(" · ") + countOf(static_cast<qsizetype>(o.rowCount), tr("row"), tr("rows"));
    if (o.anomalies & analysis::kHasNan) text += tr(" · <b style='color:#c81e1e'>NaN</b>");
    if (o.anomalies & analysis::kHasInf) text += tr(" · <b style='color:#d27800'>Inf</b>");
    if (births_ && births_->isBirth(op))
        text += tr(" · <b style='color:#c81e1e'>overflow born here</b>");
    // The parameters of the round shown, where its tensors' folder says them (op_param.json):
    // they change from round to round (an arange's start in each decode step), and the op's own
    // are those of the round its structure was captured in.
    const int32_t round = cursor_->round() >= 0 ? cursor_->round()
                          : o.rounds.empty()    ? -1
                                                : o.rounds.back();
    const RoundParams& own = roundParams(op, round);
    const std::string& param = own.text ? *own.text : o.param;
    if (!param.empty())
        text += tr("<br>%1: <tt>%2</tt>")
                    .arg(own.text ? tr("parameters in round %1").arg(round)
                                  : tr("parameters (as the model's structure holds them)"),
                         QString::fromStdString(param.substr(0, 300)).toHtmlEscaped());
    if (!own.error.empty())
        text += tr("<br>parameters in round %1 unreadable: %2")
                    .arg(round)
                    .arg(QString::fromStdString(own.error).toHtmlEscaped());
    details_->setText(text);
}

void OpTensorsPanel::selectCursorRow(bool scroll) {
    if (syncing_) return;
    const int tableRow = model_->tableRowOf(cursor_->row());
    syncing_ = true;
    if (tableRow >= 0) {
        // A current index scrolls the view to itself (QAbstractItemView's autoScroll): put back
        // where the user reads when asked not to scroll.
        QScrollBar* bar = view_->verticalScrollBar();
        const int reading = bar->value();
        view_->selectionModel()->setCurrentIndex(
            model_->index(tableRow, 0),
            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        if (scroll)
            view_->scrollTo(model_->index(tableRow, 0));
        else
            bar->setValue(reading);
    } else {
        view_->selectionModel()->clearSelection();
    }
    syncing_ = false;
}

}  // namespace probe::widgets
