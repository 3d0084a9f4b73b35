// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_panel.h"

#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
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

namespace probe::widgets {

using analysis::kNone;
using data::RunComparison;
using Verdict = RunComparison::Verdict;

namespace {

constexpr double kPickRadius = 8;

QCustomPlot* makePlot(QWidget* parent) {
    auto* plot = new QCustomPlot(parent);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeDrag(Qt::Horizontal);
    plot->axisRect()->setRangeZoom(Qt::Horizontal);
    plot->legend->setVisible(true);
    plot->legend->setFont(QFont(plot->font().family(), 8));
    // Small minimums: the tab must not make the window taller than the other tabs do.
    plot->setMinimumHeight(70);
    return plot;
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
    for (Verdict v :
         {Verdict::BornHere, Verdict::Inherited, Verdict::Matches, Verdict::OnlyInOneRun}) {
        auto* swatch = new QLabel(RunComparison::verdictText(v), this);
        swatch->setStyleSheet(
            QStringLiteral("background: %1; border: 1px solid #999; padding: 1px 6px")
                .arg(RunComparison::verdictColor(v).name()));
        legend->addWidget(swatch);
    }
    legend->addStretch(1);
    legend->addWidget(jump_);

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
    controls->addSpacing(12);
    controls->addWidget(divergingOnly_);
    controls->addStretch(1);

    errorPlot_ = makePlot(this);
    errorPlot_->xAxis->setLabel(tr("compared ops in execution order"));
    // The first divergence is usually early: the legend goes where the ops after it are.
    errorPlot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignRight | Qt::AlignTop);
    statisticPlot_ = makePlot(this);
    statisticPlot_->xAxis->setLabel(tr("round"));

    model_ = new data::CompareOpsModel(comparison_, this);
    sorted_ = new QSortFilterProxyModel(this);
    sorted_->setSourceModel(model_);
    sorted_->setSortRole(data::CompareOpsModel::SortRole);
    table_ = new QTableView(this);
    table_->setModel(sorted_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(-1, Qt::AscendingOrder);  // execution order until a header is clicked
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->setVisible(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setColumnWidth(data::CompareOpsModel::RoundColumn, 55);
    table_->setColumnWidth(data::CompareOpsModel::OpColumn, 300);
    table_->setColumnWidth(data::CompareOpsModel::VerdictColumn, 110);
    table_->setColumnWidth(data::CompareOpsModel::CauseColumn, 190);

    pairView_ = new TensorPairView(comparison_, store_, this);
    lower_ = new QTabWidget(this);
    lower_->addTab(table_, tr("Compared ops"));
    lower_->addTab(pairView_, tr("Tensor in both runs"));
    auto* plots = new QSplitter(Qt::Vertical, this);
    plots->addWidget(errorPlot_);
    plots->addWidget(statisticPlot_);
    plots->addWidget(lower_);
    plots->setStretchFactor(0, 3);
    plots->setStretchFactor(1, 2);
    plots->setStretchFactor(2, 3);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(summary_);
    layout->addLayout(legend);
    layout->addLayout(controls);
    layout->addWidget(plots, 1);

    connect(comparison_, &RunComparison::changed, this, &ComparePanel::rebuild);
    connect(comparison_, &RunComparison::started, this,
            [this] { summary_->setText(comparison_->summary()); });
    connect(comparison_, &RunComparison::finished, this, [this](bool ok, const QString& message) {
        if (!ok) summary_->setText(message);
    });
    connect(measure_, &QComboBox::currentIndexChanged, this, &ComparePanel::rebuildErrorPlot);
    connect(stat_, &QComboBox::currentIndexChanged, this, &ComparePanel::rebuildStatisticPlot);
    connect(divergingOnly_, &QCheckBox::toggled, model_, &data::CompareOpsModel::setDivergingOnly);
    connect(cursor_, &data::DumpCursor::changed, this, &ComparePanel::rebuildStatisticPlot);
    auto followInPair = [this] {
        if (lower_->currentWidget() == pairView_ && isVisible()) pairView_->showRow(cursor_->row());
    };
    connect(cursor_, &data::DumpCursor::changed, this, followInPair);
    connect(lower_, &QTabWidget::currentChanged, this, followInPair);
    connect(comparison_, &RunComparison::changed, this, followInPair);
    connect(table_, &QTableView::doubleClicked, this, [this] { showTensorPair(); });
    connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
        const uint32_t row = index.data(data::CompareOpsModel::CandidateRowRole).toUInt();
        if (row != kNone) emit rowActivated(row);
    });
    auto clickToSelect = [this](QMouseEvent* event) {
        if (event->button() != Qt::LeftButton) return;
        if (const uint32_t row = rowNear(event->pos()); row != kNone) emit rowActivated(row);
    };
    connect(errorPlot_, &QCustomPlot::mousePress, this, clickToSelect);
    rebuild();
}

void ComparePanel::showTensorPair() {
    lower_->setCurrentWidget(pairView_);
    pairView_->showRow(cursor_->row());
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
    if (r && comparison_->referenceOnlyOps() > 0)
        text += tr(" · %1 ops of the reference are not in this run")
                    .arg(comparison_->referenceOnlyOps());
    if (r && !r->problems.empty())
        text += tr(" · %1 problems (files unread)").arg(r->problems.size());
    summary_->setText(text);
    jump_->setEnabled(r && (r->firstBornHere || r->firstInherited));
    rebuildErrorPlot();
    rebuildStatisticPlot();
}

void ComparePanel::rebuildErrorPlot() {
    errorPlot_->clearGraphs();
    errorPlot_->clearItems();
    profile_ = {};
    const analysis::CompareResult* r = comparison_->result();
    if (!r) {
        errorPlot_->replot();
        return;
    }
    const auto measure = static_cast<RunComparison::Measure>(measure_->currentData().toInt());
    profile_ = data::errorProfile(*r, measure, -1);
    auto* line = errorPlot_->addGraph();
    line->setName(RunComparison::measureName(measure));
    line->setPen(QPen(QColor(110, 110, 110), 1));
    setSeries(line, profile_.series);
    // The points in their verdict's colour (born here and inherited on top).
    for (Verdict v : {Verdict::Matches, Verdict::Inherited, Verdict::BornHere}) {
        QVector<double> x, y;
        for (int i = 0; i < profile_.series.x.size(); ++i)
            if (profile_.verdicts[i] == static_cast<int>(v) &&
                std::isfinite(profile_.series.y[i])) {
                x << profile_.series.x[i];
                y << profile_.series.y[i];
            }
        auto* dots = errorPlot_->addGraph();
        dots->setName(RunComparison::verdictText(v));
        dots->setLineStyle(QCPGraph::lsNone);
        const QColor c = RunComparison::verdictColor(v).darker(v == Verdict::Matches ? 150 : 120);
        dots->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, v == Verdict::Matches ? 4 : 7));
        dots->setData(x, y, true);
    }
    const double n = std::max(1.0, static_cast<double>(profile_.series.x.size()));
    errorPlot_->xAxis->setRange(-0.5, n - 0.5);
    errorPlot_->yAxis->setRange(fitted({profile_.series.y}));
    errorPlot_->yAxis->setLabel(RunComparison::measureName(measure));
    if (profile_.firstDivergenceX >= 0) {
        auto* mark = new QCPItemStraightLine(errorPlot_);
        mark->setPen(QPen(QColor(200, 30, 30), 1.5, Qt::DashLine));
        mark->point1->setCoords(profile_.firstDivergenceX, 0);
        mark->point2->setCoords(profile_.firstDivergenceX, 1);
        auto* label = new QCPItemText(errorPlot_);
        label->setText(tr("first divergence"));
        label->setColor(QColor(200, 30, 30));
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->position->setTypeX(QCPItemPosition::ptPlotCoords);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(profile_.firstDivergenceX, 0.02);
    }
    errorPlot_->replot();
}

void ComparePanel::rebuildStatisticPlot() {
    statisticPlot_->clearGraphs();
    pair_ = {};
    const analysis::CompareResult* r = comparison_->result();
    const uint32_t slot = cursor_->slot();
    if (!r || slot == kNone) {
        statisticPlot_->replot();
        return;
    }
    const auto stat = static_cast<analysis::Stat>(stat_->currentData().toInt());
    pair_ = data::statisticPair(*r, slot, stat);
    auto* mine = statisticPlot_->addGraph();
    mine->setName(tr("this run"));
    mine->setPen(QPen(QColor(31, 119, 180), 2));
    mine->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    setSeries(mine, pair_.candidate);
    auto* reference = statisticPlot_->addGraph();
    reference->setName(tr("reference"));
    reference->setPen(QPen(QColor(230, 120, 20), 2, Qt::DashLine));
    setSeries(reference, pair_.reference);
    if (!pair_.candidate.x.isEmpty())
        statisticPlot_->xAxis->setRange(pair_.candidate.x.front() - 0.5,
                                        pair_.candidate.x.back() + 0.5);
    statisticPlot_->yAxis->setRange(fitted({pair_.candidate.y, pair_.reference.y}));
    const auto& idx = store_->index();
    statisticPlot_->yAxis->setLabel(QStringLiteral("%1 of %2")
                                        .arg(QString::fromLatin1(analysis::statName(stat)),
                                             slot < idx.slotCount()
                                                 ? QString::fromStdString(idx.describeSlot(slot))
                                                 : QString()));
    statisticPlot_->replot();
}

uint32_t ComparePanel::rowNear(const QPoint& pos) const {
    double best = kPickRadius;
    uint32_t found = kNone;
    for (int i = 0; i < profile_.series.x.size(); ++i) {
        const double y = profile_.series.y[i];
        if (!std::isfinite(y)) continue;
        const double d = std::hypot(errorPlot_->xAxis->coordToPixel(profile_.series.x[i]) - pos.x(),
                                    errorPlot_->yAxis->coordToPixel(y) - pos.y());
        if (d <= best) {
            best = d;
            found = profile_.series.rows[i];
        }
    }
    return found;
}

}  // namespace probe::widgets
