// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_panel.h"

#include <algorithm>
#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "compare_ops_model.h"
#include "compare_tensor_view.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "page_style.h"
#include "plot_layout.h"
#include "unpaired_ops_model.h"
#include "view_columns.h"

namespace probe::widgets {

using analysis::kNone;
using data::RunComparison;
using Verdict = RunComparison::Verdict;

namespace {

constexpr double kPickRadius = 8;
const QColor kFirstDivergenceColor(200, 30, 30);
// The first divergence's ring: around a point, and around a mark at the edge (a cross of
// kNonFiniteMarkSize reaches sqrt(2) times half its size from its centre, plus its pen).
constexpr double kRingAroundAPoint = 13;
constexpr double kRingAroundAMark = 21;
// The verdicts whose points the error plot draws, in drawing order (the later on top).
constexpr Verdict kDotVerdicts[] = {Verdict::Matches, Verdict::BornBelow, Verdict::Inherited,
                                    Verdict::BornHere};

double dotSize(Verdict verdict) {
    return verdict == Verdict::Matches ? 4 : verdict == Verdict::BornBelow ? 5 : 7;
}

// What a verdict's colour says, for the legend (the table's verdicts were in no legend).
QString verdictMeaning(Verdict verdict) {
    switch (verdict) {
        case Verdict::BornHere:
            return ComparePanel::tr(
                "Where a divergence is born: the op's inputs match and an output differs, or an "
                "input differs that no compared op made (a parameter, the model's input while no "
                "earlier step diverged)");
        case Verdict::Inherited:
            return ComparePanel::tr(
                "An input differs that came from an op where a divergence was born or "
                "inherited, or, in a later step, from outside the model after an earlier step "
                "diverged (a generated token fed back)");
        case Verdict::Matches:
            return ComparePanel::tr("Every tensor of the op within the noise floor of its dtype");
        case Verdict::OnlyInOneRun:
            return ComparePanel::tr("Ran in one run only: listed on the \"In one run only\" tab");
        case Verdict::BornBelow:
            return ComparePanel::tr(
                "An op inside it is born here: open it. The op itself matches, was not compared, "
                "or its divergence is the one born inside (probe compare: \"it surfaces in the "
                "enclosing ops too\")");
        case Verdict::NotCompared:
            break;
    }
    return {};
}

QCustomPlot* makePlot(QWidget* parent) {
    auto* plot = newPlot(parent);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeDrag(Qt::Horizontal);
    plot->axisRect()->setRangeZoom(Qt::Horizontal);
    plot->legend->setVisible(true);
    plot->legend->setFont(QFont(plot->font().family(), 8));
    placeLegendBesideAxes(plot);
    // Small minimums: the tab must not make the window taller than the other tabs do. Room for
    // three labelled ticks at least (at 70 pixels five labels ran into each other).
    plot->setMinimumHeight(110);
    plot->yAxis->ticker()->setTickCount(4);
    return plot;
}

// The axes' ranges of a plot that shows nothing: QCustomPlot's own, as before any comparison.
const QCPRange kNothingShown(0, 5);

// An empty plot, as before any comparison: not the last one's ranges and measure over nothing.
void showNothing(QCustomPlot* plot) {
    plot->xAxis->setRange(kNothingShown);
    plot->yAxis->setRange(kNothingShown);
    setAxisLabelFitting(plot->yAxis, QString());
    plot->replot();
}

// Why a plot has nothing (or less than it would) to draw, in its middle; its legend hidden.
// `Atop`: what it draws otherwise than it is, along its top, the legend kept.
enum class Said { InTheMiddle, Atop };
void sayOnPlot(QCustomPlot* plot, const QString& why, Said where = Said::InTheMiddle) {
    auto* text = new QCPItemText(plot);
    text->setText(why);
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    const bool middle = where == Said::InTheMiddle;
    text->position->setCoords(0.5, middle ? 0.5 : 0.02);
    text->setPositionAlignment(middle ? Qt::AlignCenter : (Qt::AlignHCenter | Qt::AlignTop));
    text->setColor(QColor(90, 90, 90));
    if (middle) plot->legend->setVisible(false);
    // Over points, on a ground of its own: drawn over 2,000 of them it could not be read.
    if (!middle) {
        text->setBrush(QColor(255, 255, 255, 225));
        text->setPadding(QMargins(4, 1, 4, 1));
    }
}

// The data of a series as QCustomPlot draws it: NaN y is a gap.
void setSeries(QCPGraph* graph, const data::PlotSeries& series) {
    graph->setData(series.x, series.y, true);
}

// The y range of the finite values, with a margin (a flat line gets a small range around it).
QCPRange fitted(const QVector<QVector<double>>& ys) {
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& y : ys)
        for (double v : y)
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    if (!std::isfinite(lo)) return {0, 1};
    // Values a few parts in a million apart (a norm barely moved by one changed element) are
    // drawn as the same line, not magnified into a gap the axis cannot label.
    const double floor = std::max(std::max(std::fabs(lo), std::fabs(hi)) * 1e-3, 1e-12);
    const double margin = std::max((hi - lo) * 0.08, floor);
    return {lo - margin, hi + margin};
}

// A table of op executions: sortable, a row selected whole, no row numbers. Op names are paths
// ("shared.backward_1/…/linear"): cut in the middle, the op's own name at the end stays readable
// (the whole name is the Op cell's tooltip).
void setUpOpsTable(QTableView* table) {
    table->setSortingEnabled(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->verticalHeader()->setVisible(false);
    table->setTextElideMode(Qt::ElideMiddle);
    table->setWordWrap(false);  // a wrapped name is cut after its first line, whatever the mode
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->horizontalHeader()->setStretchLastSection(true);
}

}  // namespace

ComparePanel::ComparePanel(RunComparison* comparison, data::DumpStore* store,
                           data::DumpCursor* cursor, QWidget* parent)
    : QWidget(parent), comparison_(comparison), store_(store), cursor_(cursor) {
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    jump_ = new QPushButton(tr("Jump to first divergence"), this);
    jump_->setToolTip(tr(
        "Select the first op where the runs part ways (born here), else the first that inherits a "
        "divergence, in its round (F8)"));
    connect(jump_, &QPushButton::clicked, this, &ComparePanel::jumpRequested);

    // The legend: what the colours of the op tree, the table and the points say.
    auto* legend = new QHBoxLayout;
    legend->addWidget(new QLabel(tr("Verdicts:"), this));
    for (Verdict v : {Verdict::BornHere, Verdict::BornBelow, Verdict::Inherited, Verdict::Matches,
                      Verdict::OnlyInOneRun}) {
        auto* swatch = new QLabel(RunComparison::verdictText(v), this);
        swatch->setToolTip(verdictMeaning(v));
        swatch->setStyleSheet(
            QStringLiteral("background: %1; border: 1px solid #999; padding: 1px 6px")
                .arg(RunComparison::verdictColor(v).name()));
        legend->addWidget(swatch);
    }
    legend->addStretch(1);

    measure_ = new QComboBox(this);
    for (auto m : {RunComparison::Measure::MaxRelativeError, RunComparison::Measure::Cosine,
                   RunComparison::Measure::MaxAbsoluteError, RunComparison::Measure::MaxUlpError})
        measure_->addItem(RunComparison::measureName(m), static_cast<int>(m));
    stat_ = new QComboBox(this);
    for (int s = 0; s < analysis::kStatCount; ++s)
        stat_->addItem(QString::fromLatin1(analysis::statName(static_cast<analysis::Stat>(s))), s);
    stat_->setCurrentIndex(static_cast<int>(analysis::Stat::Norm));
    divergingOnly_ = new QCheckBox(tr("Diverging ops only"), this);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Error across ops:"), this));
    controls->addWidget(measure_);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Selected tensor, both runs:"), this));
    controls->addWidget(stat_);
    controls->addStretch(1);
    // Here, not after the legend: at the window's smallest size the legend left it too narrow
    // for its text ("ump to first divergence").
    controls->addWidget(jump_);

    errorPlot_ = makePlot(this);
    errorPlot_->xAxis->setLabel(tr("compared ops in execution order"));
    statisticPlot_ = makePlot(this);
    setAxisLabelFitting(statisticPlot_->xAxis, tr("round"));
    setWholeNumberTicks(statisticPlot_->xAxis);

    model_ = new data::CompareOpsModel(comparison_, this);
    table_ = new QTableView(this);
    table_->setModel(model_);  // it sorts itself
    setUpOpsTable(table_);
    table_->sortByColumn(-1, Qt::AscendingOrder);  // execution order until a header is clicked
    table_->setColumnWidth(data::CompareOpsModel::RoundColumn, 55);
    table_->setColumnWidth(data::CompareOpsModel::OpColumn, 300);
    // Room for the longest verdict and for each measure's header with its sort arrow (both were
    // cut at 110 pixels: "born here ...", "Max rel. err (%").
    table_->setColumnWidth(data::CompareOpsModel::VerdictColumn,
                           columnWidthFor(table_, tr("born here (inside)")));
    table_->setColumnWidth(data::CompareOpsModel::CauseColumn, 190);
    constexpr int kSortArrow = 24;
    for (int column :
         {data::CompareOpsModel::RuleColumn, data::CompareOpsModel::MaxRelativeErrorColumn,
          data::CompareOpsModel::CosineColumn, data::CompareOpsModel::MaxAbsoluteErrorColumn})
        table_->setColumnWidth(
            column,
            std::max(columnWidthFor(table_, QStringLiteral("-0.123457")),
                     columnWidthFor(table_, model_->headerData(column, Qt::Horizontal).toString()) +
                         kSortArrow));

    pairView_ = new TensorPairView(comparison_, store_, this);

    // The op executions of one run only: where the runs part by their structure (a cast added,
    // a layer skipped), the ops to look at, which the compared-ops table cannot list.
    unpairedModel_ = new data::UnpairedOpsModel(comparison_, this);
    unpairedTable_ = new QTableView(this);
    auto* unpairedSorted = new QSortFilterProxyModel(this);  // a few thousand rows at most
    unpairedSorted->setSourceModel(unpairedModel_);
    unpairedSorted->setSortRole(data::UnpairedOpsModel::SortRole);
    unpairedTable_->setModel(unpairedSorted);
    setUpOpsTable(unpairedTable_);
    unpairedTable_->sortByColumn(-1, Qt::AscendingOrder);  // in the order found until asked
    unpairedTable_->setColumnWidth(data::UnpairedOpsModel::RunColumn,
                                   columnWidthFor(unpairedTable_, tr("reference")));
    unpairedTable_->setColumnWidth(data::UnpairedOpsModel::RoundColumn, 55);
    unpairedTable_->setColumnWidth(data::UnpairedOpsModel::OpColumn, 360);
    unpairedNote_ = new QLabel(this);
    unpairedNote_->setWordWrap(true);
    auto* unpairedPage = new QWidget(this);
    auto* unpairedLayout = new QVBoxLayout(unpairedPage);
    unpairedLayout->setContentsMargins(0, 0, 0, 0);
    unpairedLayout->addWidget(unpairedNote_);
    unpairedLayout->addWidget(unpairedTable_, 1);
    activateRowsOf(unpairedTable_, data::UnpairedOpsModel::CandidateRowRole);

    lower_ = new QTabWidget(this);
    lower_->addTab(table_, tr("Compared ops"));
    lower_->addTab(pairView_, tr("Tensor in both runs"));
    unpairedTab_ = lower_->addTab(unpairedPage, QString());
    // What could not be read or paired, all of it: the summary names the first only (a
    // truncated tensor file, a FIFO in place of one, were said nowhere else in the window).
    notesText_ = new QPlainTextEdit(this);
    notesText_->setReadOnly(true);
    notesText_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    notesTab_ = lower_->addTab(notesText_, QString());
    // Beside the table it filters: among the plots' controls it read as a filter of the error
    // plot, which keeps every op (in execution order, to show where the runs part).
    divergingOnly_->setToolTip(
        tr("The table lists only the ops that do not match: born here or inherited (the ops of "
           "one run only are on their own tab)"));
    lower_->setCornerWidget(divergingOnly_, Qt::TopRightCorner);
    connect(lower_, &QTabWidget::currentChanged, divergingOnly_,
            [this](int page) { divergingOnly_->setVisible(lower_->widget(page) == table_); });
    auto* plots = new QSplitter(Qt::Vertical, this);
    plots->addWidget(errorPlot_);
    plots->addWidget(statisticPlot_);
    plots->addWidget(lower_);
    plots->setStretchFactor(0, 3);
    plots->setStretchFactor(1, 2);
    plots->setStretchFactor(2, 3);

    // Shown with a comparison's result only: before one, two empty plots (axes 0 to 5 over
    // nothing), an empty table and a legend of colours nothing has said nothing.
    comparisonView_ = new QWidget(this);
    auto* view = new QVBoxLayout(comparisonView_);
    view->setContentsMargins(0, 0, 0, 0);
    view->addLayout(legend);
    view->addLayout(controls);
    view->addWidget(plots, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(summary_);
    layout->addWidget(comparisonView_, 1);
    layout->addStretch(0);  // the text at the top while the view is hidden

    connect(comparison_, &RunComparison::changed, this, &ComparePanel::rebuild);
    connect(comparison_, &RunComparison::started, this,
            [this] { summary_->setText(comparison_->summary()); });
    connect(comparison_, &RunComparison::finished, this, [this](bool ok, const QString& message) {
        // Cancelled because the comparison ended (a new session): say what is left to do.
        if (!ok) summary_->setText(comparison_->enabled() ? message : noComparisonText());
    });
    connect(measure_, &QComboBox::currentIndexChanged, this, &ComparePanel::rebuildErrorPlot);
    connect(stat_, &QComboBox::currentIndexChanged, this, &ComparePanel::rebuildStatisticPlot);
    connect(divergingOnly_, &QCheckBox::toggled, model_, &data::CompareOpsModel::setDivergingOnly);
    connect(cursor_, &data::DumpCursor::changed, this, &ComparePanel::rebuildStatisticPlot);
    auto followInPair = [this] {
        if (lower_->currentWidget() == pairView_ && isVisible()) pairView_->showRow(cursor_->row());
    };
    connect(cursor_, &data::DumpCursor::changed, this, followInPair);
    // The table shows the op the cursor is on (Jump to first divergence, a click in the tree or
    // the plot): it stayed where it was.
    auto followInTable = [this] {
        const uint32_t compared = comparison_->comparedOp(cursor_->op(), cursor_->round());
        const int row = compared == kNone ? -1 : model_->rowOfComparedOp(compared);
        if (row < 0 || table_->currentIndex().row() == row) return;
        // The row by its first column, where the view scrolls to (also by itself, as the current
        // index changes while it is shown): scrolled to the op's wide column, a narrow table hid
        // the rounds to its left, and its rows read as the same ops over and over.
        const QModelIndex index = model_->index(row, data::CompareOpsModel::RoundColumn);
        const QScopedValueRollback following(followingCursor_, true);
        table_->selectionModel()->setCurrentIndex(
            index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        table_->scrollTo(index);
    };
    connect(cursor_, &data::DumpCursor::changed, this, followInTable);
    connect(model_, &data::CompareOpsModel::sortApplied, this, followInTable);
    connect(model_, &data::CompareOpsModel::filled, this, followInTable);
    connect(model_, &QAbstractItemModel::modelReset, this, followInTable);
    connect(lower_, &QTabWidget::currentChanged, this, followInPair);
    connect(comparison_, &RunComparison::changed, this, followInPair);
    connect(table_, &QTableView::doubleClicked, this, [this] { showTensorPair(); });
    activateRowsOf(table_, data::CompareOpsModel::CandidateRowRole);
    auto clickToSelect = [this](QMouseEvent* event) {
        if (event->button() != Qt::LeftButton) return;
        if (const uint32_t row = rowNear(event->pos()); row != kNone) emit rowActivated(row);
    };
    connect(errorPlot_, &QCustomPlot::mousePress, this, clickToSelect);
    // Laid out, about to draw: the width and range it is drawn at are known.
    connect(errorPlot_, &QCustomPlot::afterLayout, this, &ComparePanel::resampleErrorPlot);
    connect(statisticPlot_, &QCustomPlot::afterLayout, this, [this] {
        pairMarks_[0].place(statisticPlot_, pair_.candidate);
        pairMarks_[1].place(statisticPlot_, pair_.reference);
    });
    rebuild();
}

void ComparePanel::showTensorPair() {
    lower_->setCurrentWidget(pairView_);
    pairView_->showRow(cursor_->row());
}

QString ComparePanel::noComparisonText() const {
    return tr(
        "No comparison. Compare… (Ctrl+Shift+C) compares the open dump with a reference "
        "run, op by op, and finds where they part.");
}

QString ComparePanel::summaryText() const {
    return summary_->text();
}

void ComparePanel::setMeasure(RunComparison::Measure measure) {
    measure_->setCurrentIndex(measure_->findData(static_cast<int>(measure)));
}

void ComparePanel::rebuild() {
    const analysis::CompareResult* r = comparison_->result();
    QString text = comparison_->summary();
    // Empty otherwise: say what the panel is waiting for (opening another dump, a new session,
    // ends a comparison; the reference goes with it).
    if (!r && text.isEmpty())
        text = comparison_->enabled() ? tr("Waiting for both dumps to load…") : noComparisonText();
    if (r && comparison_->referenceOnlyOps() > 0)
        text += tr(" · %1 ops of the reference are not in this run")
                    .arg(comparison_->referenceOnlyOps());
    if (r && !r->problems.empty())
        text +=
            QStringLiteral(" · ") +
            countOf(static_cast<qsizetype>(r->problems.size()), tr("problem"), tr("problems")) +
            tr(" of the two dumps (files unread): see Notes");  // the status bar: the shown one's
    summary_->setText(text);
    comparisonView_->setVisible(r != nullptr);
    jump_->setEnabled(r && (r->firstBornHere || r->firstInherited));
    rebuildUnpairedTab();
    rebuildNotesTab();
    rebuildErrorPlot();
    rebuildStatisticPlot();
}

void ComparePanel::activateRowsOf(QTableView* table, int rowRole) {
    auto activate = [this, rowRole](const QModelIndex& index) {
        const uint32_t row = index.isValid() ? index.data(rowRole).toUInt() : kNone;
        if (row != kNone) emit rowActivated(row);
    };
    connect(table, &QTableView::clicked, this, activate);
    // The arrow keys, Page Down, Ctrl+End: the highlight moved, and the tree and the plots stayed
    // on the op clicked before (found by a GUI walk). Not a click's press (its release activates),
    // nor the table following the cursor.
    connect(table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this, table, activate](const QModelIndex& current) {
                if (!followingCursor_ && table->hasFocus() &&
                    QGuiApplication::mouseButtons() == Qt::NoButton)
                    activate(current);
            });
}

void ComparePanel::rebuildUnpairedTab() {
    const QLocale locale;
    const uint64_t total = unpairedModel_->total();
    const int listed = unpairedModel_->listed();
    lower_->setTabText(
        unpairedTab_,
        tr("In one run only (%1)").arg(locale.toString(static_cast<qulonglong>(total))));
    lower_->setTabEnabled(unpairedTab_, total > 0);
    lower_->setTabToolTip(unpairedTab_, total > 0 ? tr("The op executions found in one run only: "
                                                       "blue in the op tree")
                                                  : tr("Every op execution ran in both runs"));
    unpairedNote_->setText(
        static_cast<uint64_t>(listed) < total
            ? tr("The first %1 of %2 op executions in one run only, as the comparison found them.")
                  .arg(locale.toString(listed), locale.toString(static_cast<qulonglong>(total)))
            : QString());
    unpairedNote_->setVisible(static_cast<uint64_t>(listed) < total);
}

void ComparePanel::rebuildNotesTab() {
    const analysis::CompareResult* r = comparison_->result();
    QStringList lines;
    if (r) {
        for (const auto& problem : r->problems) lines << QString::fromStdString(problem);
        for (const auto& note : r->notes) lines << QString::fromStdString(note);
    }
    notesText_->setPlainText(lines.join(QLatin1Char('\n')));
    lower_->setTabText(notesTab_, tr("Notes (%1)").arg(lines.size()));
    lower_->setTabVisible(notesTab_, !lines.isEmpty());
    lower_->setTabToolTip(notesTab_,
                          tr("What could not be read in either dump, and how the runs were "
                             "paired where it matters (probe compare's notes)"));
}

RunComparison::Measure ComparePanel::measure() const {
    return static_cast<RunComparison::Measure>(measure_->currentData().toInt());
}

const data::ErrorProfile& ComparePanel::errorProfile() const {
    return comparison_->errorProfile(measure());
}

void ComparePanel::rebuildErrorPlot() {
    errorPlot_->clearGraphs();
    errorPlot_->clearItems();
    errorLine_ = firstDivergence_ = nullptr;
    firstDivergenceLabel_ = nullptr;
    verdictDots_.clear();
    verdictMarks_.clear();
    markKeys_ = {};
    ++errorPlotVersion_;
    const analysis::CompareResult* r = comparison_->result();
    errorPlot_->legend->setVisible(r != nullptr);  // not an empty box over an empty plot
    if (!r) {
        showNothing(errorPlot_);
        return;
    }
    const data::ErrorProfile& profile = errorProfile();
    errorLine_ = errorPlot_->addGraph();
    errorLine_->setName(RunComparison::measureName(measure()));
    errorLine_->setPen(QPen(QColor(110, 110, 110), 1));
    // The points in their verdict's colour (born here and inherited on top).
    for (Verdict v : kDotVerdicts) {
        auto* dots = errorPlot_->addGraph();
        dots->setName(RunComparison::verdictText(v));
        dots->setLineStyle(QCPGraph::lsNone);
        const QColor c = RunComparison::verdictColor(v).darker(v == Verdict::Matches ? 150 : 120);
        dots->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, dotSize(v)));
        verdictDots_.push_back(dots);
    }
    for (Verdict v : kDotVerdicts) {
        const QColor c = RunComparison::verdictColor(v).darker(v == Verdict::Matches ? 150 : 120);
        std::array<QCPGraph*, 3> marks{};
        for (int m = 0; m < 3; ++m)
            marks[m] = addNonFiniteMarkGraph(errorPlot_, static_cast<data::PlotSeries::Mark>(m), c);
        verdictMarks_.push_back(marks);
    }
    for (int m = 0; m < 3; ++m)
        markKeys_[m] = addNonFiniteMarkKey(errorPlot_, static_cast<data::PlotSeries::Mark>(m));
    const double n = std::max(1.0, static_cast<double>(profile.series.x.size()));
    errorPlot_->xAxis->setRange(-0.5, n - 0.5);
    QCPRange errors = fitted({profile.series.y});
    // Errors of runs that agree exactly are all 0: an axis of ±1e-12 around them read as a
    // measure that can be negative. Cosine aside, errors start at 0.
    if (measure() != RunComparison::Measure::Cosine && errors.upper <= 1e-12)
        errors = QCPRange(-0.05, 1);
    errorPlot_->yAxis->setRange(errors);
    setAxisLabelFitting(errorPlot_->yAxis, RunComparison::measureName(measure()));
    // Runs that pair up nowhere: said on the plot, whose empty grid (and -0.4..0.4 axis) said
    // nothing.
    if (profile.series.x.isEmpty()) {
        sayOnPlot(errorPlot_, tr("Nothing to plot: no op of this run pairs with one of the "
                                 "reference (see In one run only)"));
        errorPlot_->xAxis->setTicks(false);
    } else {
        errorPlot_->xAxis->setTicks(true);
    }
    if (profile.firstDivergenceX >= 0) {
        auto* mark = new QCPItemStraightLine(errorPlot_);
        mark->setLayer(QStringLiteral("grid"));  // behind the points: it crossed out their marks
        mark->setPen(QPen(kFirstDivergenceColor, 1.5, Qt::DashLine));
        mark->point1->setCoords(profile.firstDivergenceX, 0);
        mark->point2->setCoords(profile.firstDivergenceX, 1);
        firstDivergenceLabel_ = new QCPItemText(errorPlot_);
        firstDivergenceLabel_->setText(tr("first divergence"));
        firstDivergenceLabel_->setColor(kFirstDivergenceColor);
        firstDivergenceLabel_->position->setTypeX(QCPItemPosition::ptPlotCoords);
        firstDivergenceLabel_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        // Its point, ringed: drawn whatever else its pixel column holds; a value that is not
        // finite (an overflow) where its mark is, at the plot's edge. The ring and the label
        // are placed as the plot is laid out (resampleErrorPlot).
        firstDivergence_ = errorPlot_->addGraph();
        firstDivergence_->setName(tr("first divergence"));
        firstDivergence_->setLineStyle(QCPGraph::lsNone);
        firstDivergence_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle,
                                                          QPen(kFirstDivergenceColor, 2),
                                                          Qt::NoBrush, kRingAroundAPoint));
        firstDivergence_->removeFromLegend();
    }
    errorPlot_->replot();  // its layout resamples the graphs (afterLayout)
}

double ComparePanel::ringY(const data::PlotSeries& series, int at) const {
    const auto* marker = series.markerAt(series.x[at]);
    return marker ? nonFiniteMarkY(errorPlot_, marker->mark) : series.y[at];
}

void ComparePanel::resampleErrorPlot() {
    if (!errorLine_) return;
    const QCPRange range = errorPlot_->xAxis->range();
    const int width = std::max(1, errorPlot_->axisRect()->width());
    if (sampledVersion_ == errorPlotVersion_ && sampledLower_ == range.lower &&
        sampledUpper_ == range.upper && sampledWidth_ == width &&
        sampledHeight_ == errorPlot_->axisRect()->height())
        return;
    sampledVersion_ = errorPlotVersion_;
    sampledLower_ = range.lower;
    sampledUpper_ = range.upper;
    sampledWidth_ = width;
    sampledHeight_ = errorPlot_->axisRect()->height();

    const data::PlotSeries& s = errorProfile().series;
    const QVector<int>& verdicts = errorProfile().verdicts;
    const int n = static_cast<int>(s.x.size());
    // The points in view and one beyond each side (the line leaves the plot towards them).
    const int lo = std::max<int>(
        0,
        static_cast<int>(std::lower_bound(s.x.begin(), s.x.end(), range.lower) - s.x.begin()) - 1);
    const int hi = std::min<int>(
        n,
        static_cast<int>(std::upper_bound(s.x.begin(), s.x.end(), range.upper) - s.x.begin()) + 1);
    const double unitsPerPixel = std::max(range.size() / width, 1e-300);
    auto column = [&](int i) { return std::floor((s.x[i] - range.lower) / unitsPerPixel); };
    auto pixelY = [&](double y) { return errorPlot_->yAxis->coordToPixel(y); };

    QVector<double> lineX, lineY;
    const int kinds = static_cast<int>(verdictDots_.size());
    std::vector<QVector<double>> dotX(kinds), dotY(kinds);
    std::vector<double> lastDotPx(kinds, -1e300), lastDotPy(kinds, -1e300);
    auto kindOf = [&](int i) {
        for (int k = 0; k < kinds; ++k)
            if (verdicts[i] == static_cast<int>(kDotVerdicts[k])) return k;
        return -1;
    };
    // An error that is not finite: a mark at the plot's edge in its verdict's colour, one per
    // pixel column and kind (they were gaps: the ops after an overflow looked as if they had no
    // data, while the table listed them as nan).
    std::array<double, 3> edge;  // by PlotSeries::Mark
    for (int m = 0; m < 3; ++m)
        edge[m] = nonFiniteMarkY(errorPlot_, static_cast<data::PlotSeries::Mark>(m));
    std::vector<std::array<QVector<double>, 3>> markX(kinds), markY(kinds);
    std::vector<std::array<double, 3>> lastMarkColumn(kinds, {-1e300, -1e300, -1e300});
    // The series holds such a value as NaN; its kind is in its markers (in x order, as the
    // points are visited here): NaN, +Inf or -Inf. A NaN without one is a value not known (no
    // mark, a gap).
    auto marker =
        std::lower_bound(s.markers.begin(), s.markers.end(), lo < n ? s.x[lo] : 0.0,
                         [](const data::PlotSeries::Marker& a, double x) { return a.x < x; });
    auto addMark = [&](int k, int i) {
        while (marker != s.markers.end() && marker->x < s.x[i]) ++marker;
        if (marker == s.markers.end() || marker->x != s.x[i]) return;
        const int m = static_cast<int>(marker->mark);
        const double c = column(i);
        if (c == lastMarkColumn[k][m]) return;
        lastMarkColumn[k][m] = c;
        markX[k][m] << s.x[i];
        markY[k][m] << edge[m];
    };
    // A disc adds nothing where one of its verdict was drawn less than half its size away.
    auto addDot = [&](int k, int i) {
        const double px = column(i), py = pixelY(s.y[i]);
        const double near = dotSize(kDotVerdicts[k]) / 2.0;
        if (std::fabs(px - lastDotPx[k]) < near && std::fabs(py - lastDotPy[k]) < near) return;
        lastDotPx[k] = px;
        lastDotPy[k] = py;
        dotX[k] << s.x[i];
        dotY[k] << s.y[i];
    };
    if (unitsPerPixel <= 2) {  // a point or two per pixel column: every one as it is
        for (int i = lo; i < hi; ++i) {
            lineX << s.x[i];
            lineY << s.y[i];
            const int k = kindOf(i);
            if (k < 0) continue;
            if (std::isfinite(s.y[i]))
                addDot(k, i);
            else
                addMark(k, i);
        }
    } else {
        // One pixel column at a time: of the line, its lowest and highest point in their order
        // and, where it has a gap, a gap at its end; of each verdict, its lowest and highest.
        int lineLow = -1, lineHigh = -1, lastOfColumn = -1;
        bool gap = false;
        std::vector<int> dotLow(kinds, -1), dotHigh(kinds, -1);
        auto flush = [&] {
            if (lineLow >= 0) {
                const int a = std::min(lineLow, lineHigh), b = std::max(lineLow, lineHigh);
                lineX << s.x[a];
                lineY << s.y[a];
                if (b != a) {
                    lineX << s.x[b];
                    lineY << s.y[b];
                }
            }
            if (gap && (lineY.isEmpty() || !std::isnan(lineY.back()))) {
                lineX << s.x[lastOfColumn];
                lineY << std::nan("");
            }
            for (int k = 0; k < kinds; ++k) {
                if (dotLow[k] < 0) continue;
                addDot(k, dotLow[k]);
                if (dotHigh[k] != dotLow[k]) addDot(k, dotHigh[k]);
                dotLow[k] = dotHigh[k] = -1;
            }
            lineLow = lineHigh = -1;
            gap = false;
        };
        double current = 0;
        for (int i = lo; i < hi; ++i) {
            const double c = column(i);
            if (i != lo && c != current) flush();
            current = c;
            lastOfColumn = i;
            const double y = s.y[i];
            if (!std::isfinite(y)) {
                gap = true;
                if (const int k = kindOf(i); k >= 0) addMark(k, i);
                continue;
            }
            if (lineLow < 0 || y < s.y[lineLow]) lineLow = i;
            if (lineHigh < 0 || y > s.y[lineHigh]) lineHigh = i;
            const int k = kindOf(i);
            if (k < 0) continue;
            if (dotLow[k] < 0 || y < s.y[dotLow[k]]) dotLow[k] = i;
            if (dotHigh[k] < 0 || y > s.y[dotHigh[k]]) dotHigh[k] = i;
        }
        if (hi > lo) flush();
    }
    errorLine_->setData(lineX, lineY, true);
    if (firstDivergence_) {
        const double x = errorProfile().firstDivergenceX;
        const int at = static_cast<int>(x);
        firstDivergence_->setData({s.x[at]}, {ringY(s, at)}, true);
        // Around a mark (an error not finite), wide enough to leave it whole: the ring the size
        // of a point covered the cross's arms, and whether it was NaN or Inf could not be seen.
        QCPScatterStyle ring = firstDivergence_->scatterStyle();
        ring.setSize(s.markerAt(s.x[at]) ? kRingAroundAMark : kRingAroundAPoint);
        firstDivergence_->setScatterStyle(ring);
        // Its label where the plot is empty: left of the line, above the ops before it (they
        // match, near 0), unless the line is too near the left edge for it; then right of the
        // line half-way down, under the marks of the errors after it that are not finite.
        const int textWidth = QFontMetrics(firstDivergenceLabel_->font())
                                  .horizontalAdvance(firstDivergenceLabel_->text());
        const bool roomLeft =
            errorPlot_->xAxis->coordToPixel(x) - errorPlot_->axisRect()->left() > textWidth + 24;
        firstDivergenceLabel_->setPositionAlignment(roomLeft ? Qt::AlignRight | Qt::AlignTop
                                                             : Qt::AlignLeft | Qt::AlignVCenter);
        firstDivergenceLabel_->setPadding(roomLeft ? QMargins(0, 0, 10, 0) : QMargins(10, 0, 0, 0));
        // Below the marks along the top edge (it was written over the NaN before it).
        const double belowTheMarks =
            (kNonFiniteMarkInset + 8.0) / std::max(1, errorPlot_->axisRect()->height());
        firstDivergenceLabel_->position->setCoords(x, roomLeft ? belowTheMarks : 0.45);
    }
    std::array<bool, 3> shown{};
    for (int k = 0; k < kinds; ++k) {
        verdictDots_[k]->setData(dotX[k], dotY[k], true);
        for (int m = 0; m < 3; ++m) {
            verdictMarks_[k][m]->setData(markX[k][m], markY[k][m], true);
            shown[m] = shown[m] || !markX[k][m].isEmpty();
        }
    }
    // A kind of mark named while some show (an Inf's triangle at the edge read as a value there).
    for (int m = 0; m < 3; ++m) {
        if (!markKeys_[m]) continue;
        if (shown[m] && !errorPlot_->legend->hasItemWithPlottable(markKeys_[m]))
            markKeys_[m]->addToLegend();
        else if (!shown[m])
            markKeys_[m]->removeFromLegend();
    }
}

void ComparePanel::rebuildStatisticPlot() {
    statisticPlot_->clearGraphs();
    statisticPlot_->clearItems();
    pairMarks_[0] = pairMarks_[1] = {};  // their graphs went with the others
    pair_ = {};
    const analysis::CompareResult* r = comparison_->result();
    const uint32_t slot = cursor_->slot();
    statisticPlot_->legend->setVisible(r && slot != kNone);
    if (!r || slot == kNone) {
        setAxisLabelFitting(statisticPlot_->xAxis, tr("round"));
        showNothing(statisticPlot_);
        return;
    }
    const auto stat = static_cast<analysis::Stat>(stat_->currentData().toInt());
    pair_ = data::statisticPair(*comparison_, slot, stat);
    const QColor mineColor(31, 119, 180), referenceColor(230, 120, 20);
    auto* mine = statisticPlot_->addGraph();
    mine->setName(tr("this run"));
    mine->setPen(QPen(mineColor, 2));
    mine->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    setSeries(mine, pair_.candidate);
    auto* reference = statisticPlot_->addGraph();
    reference->setName(tr("reference"));
    reference->setPen(QPen(referenceColor, 2, Qt::DashLine));
    // Points of its own: a round the reference has alone, between gaps, was no line at all.
    reference->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(referenceColor, 1.5), Qt::NoBrush, 7));
    setSeries(reference, pair_.reference);
    // NaN and Inf where they are (the plot was empty when the tensor's value was Inf).
    pairMarks_[0].add(statisticPlot_, pair_.candidate, mineColor);
    pairMarks_[1].add(statisticPlot_, pair_.reference, referenceColor, 1);
    if (!pair_.candidate.x.isEmpty())
        statisticPlot_->xAxis->setRange(pair_.candidate.x.front() - 0.5,
                                        pair_.candidate.x.back() + 0.5);
    statisticPlot_->yAxis->setRange(fitted({pair_.candidate.y, pair_.reference.y}));
    // An op in one run only has no round of the reference to plot: said, where an empty grid
    // (or a lone line) said nothing.
    if (pair_.reference.x.isEmpty()) {
        if (pair_.candidate.x.isEmpty())
            sayOnPlot(statisticPlot_, tr("Nothing to plot: no round of this tensor pairs with one "
                                         "of the reference (an op in one run only)"));
        else
            sayOnPlot(statisticPlot_,
                      tr("No round of this tensor pairs with one of the reference (an op in one "
                         "run only): this run's values alone"),
                      Said::Atop);
    } else if (pair_.candidate.beyondPlot + pair_.reference.beyondPlot > 0) {
        // Two runs' values beyond what a plot draws would read as one line at its limit.
        sayOnPlot(statisticPlot_,
                  tr("Values beyond ±1e249 are drawn at ±1e249, the most a plot can show: this "
                     "run %1, the reference %2")
                      .arg(pair_.candidate.beyondPlot)
                      .arg(pair_.reference.beyondPlot),
                  Said::Atop);
    }
    // The statistic on the short axis, the tensor on the long one: "Norm of layers.1/add input
    // 1_other" on the vertical axis read "Norm of …" at any size.
    const auto& idx = store_->index();
    setAxisLabelFitting(statisticPlot_->yAxis, QString::fromLatin1(analysis::statName(stat)));
    setAxisLabelFitting(statisticPlot_->xAxis,
                        slot < idx.slotCount()
                            ? tr("round · %1, %2")
                                  .arg(QString::fromStdString(idx.describeOp(idx.slot(slot).op)),
                                       QString::fromStdString(idx.describeSlot(slot)))
                            : tr("round"));
    statisticPlot_->replot();
}

uint32_t ComparePanel::rowNear(const QPoint& pos) const {
    const data::PlotSeries& s = errorProfile().series;
    // Only the points within the radius across: a binary search, not every op.
    const double a = errorPlot_->xAxis->pixelToCoord(pos.x() - kPickRadius),
                 b = errorPlot_->xAxis->pixelToCoord(pos.x() + kPickRadius);
    const auto first = std::lower_bound(s.x.begin(), s.x.end(), std::min(a, b)) - s.x.begin();
    const auto last = std::upper_bound(s.x.begin(), s.x.end(), std::max(a, b)) - s.x.begin();
    double best = kPickRadius;
    uint32_t found = kNone;
    // The first divergence's ring: where its point is drawn even when its value is not finite.
    if (firstDivergence_ && !firstDivergence_->data()->isEmpty()) {
        const auto ring = firstDivergence_->data()->constBegin();
        const double d = std::hypot(errorPlot_->xAxis->coordToPixel(ring->key) - pos.x(),
                                    errorPlot_->yAxis->coordToPixel(ring->value) - pos.y());
        const int at = static_cast<int>(ring->key);
        if (d <= best && at >= 0 && at < s.rows.size()) {
            best = d;
            found = s.rows[at];
        }
    }
    for (auto i = first; i < last; ++i) {
        const double y = s.y[i];
        if (!std::isfinite(y)) continue;
        const double d = std::hypot(errorPlot_->xAxis->coordToPixel(s.x[i]) - pos.x(),
                                    errorPlot_->yAxis->coordToPixel(y) - pos.y());
        if (d <= best) {
            best = d;
            found = s.rows[i];
        }
    }
    return found;
}

}  // namespace probe::widgets
