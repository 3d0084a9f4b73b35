// SPDX-License-Identifier: GPL-3.0-or-later
#include "gradients_panel.h"

#include <cmath>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "gradient_series_model.h"
#include "page_style.h"
#include "plot_layout.h"

namespace probe::widgets {

namespace {

const QColor kLineColors[] = {QColor(31, 119, 180),  QColor(255, 127, 14), QColor(44, 160, 44),
                              QColor(148, 103, 189), QColor(140, 86, 75),  QColor(227, 119, 194),
                              QColor(127, 127, 127), QColor(188, 189, 34), QColor(23, 190, 207)};
constexpr int kLineColorCount = sizeof(kLineColors) / sizeof(kLineColors[0]);

}  // namespace

GradientsPanel::GradientsPanel(QWidget* parent) : QWidget(parent) {
    model_ = new data::GradientSeriesModel(this);
    title_ = makePaneTitle(tr("Gradient norms"), this);
    // The tab opened (View › Gradients) on a dump without gradients was an empty plot, unsaid.
    none_ = new QLabel(this);
    none_->setWordWrap(true);
    none_->setAlignment(Qt::AlignTop | Qt::AlignLeft);  // at the top while the plot is hidden
    view_ = new QTableView(this);
    view_->setModel(model_);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->verticalHeader()->setVisible(false);
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
    view_->horizontalHeader()->setSectionResizeMode(data::GradientSeriesModel::ParameterColumn,
                                                    QHeaderView::Stretch);
    view_->setWordWrap(false);

    plot_ = newPlot(this);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot_->yAxis->setNumberFormat(QStringLiteral("eb"));
    plot_->yAxis->setNumberPrecision(0);
    plot_->xAxis->setLabel(tr("optimizer step"));
    plot_->yAxis->setLabel(tr("gradient norm (log)"));
    plot_->legend->setVisible(true);
    plot_->legend->setFont(font());
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);

    splitter_ = new QSplitter(Qt::Vertical, this);
    splitter_->addWidget(plot_);
    splitter_->addWidget(view_);
    splitter_->setStretchFactor(0, 3);
    splitter_->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(title_);
    // The note takes the room the hidden plot leaves (the title took half and floated mid-panel).
    layout->addWidget(none_, 1);
    layout->addWidget(splitter_, 1);

    connect(model_, &data::GradientSeriesModel::checkedChanged, this, &GradientsPanel::rebuild);
    connect(model_, &data::GradientSeriesModel::loaded, this, [this] {
        updateNone();
        view_->resizeColumnsToContents();
        view_->horizontalHeader()->setSectionResizeMode(data::GradientSeriesModel::ParameterColumn,
                                                        QHeaderView::Stretch);
    });
    rebuild();
}

QString GradientsPanel::noneText() const {
    return none_->isHidden() ? QString() : none_->text();
}

void GradientsPanel::updateNone() {
    const QString how =
        tr("Record gradients with probe run --grads DIR (or the config key \"grad_monitor\": "
           "true), then open that folder with View › Open gradient monitor folder…; a dump that "
           "holds them shows them here by itself.");
    none_->setText(model_->directory().isEmpty()
                       ? tr("No gradient monitor data is loaded. %1").arg(how)
                       : tr("No gradient monitor files in %1. %2").arg(model_->directory(), how));
    none_->setVisible(model_->rowCount() == 0);
    splitter_->setVisible(model_->rowCount() > 0);  // no empty log axes under the note
}

void GradientsPanel::rebuild() {
    plot_->clearGraphs();
    plot_->clearItems();
    lines_ = alerts_ = 0;
    const auto rows = model_->checkedRows();
    const auto& all = model_->findings();
    QString title = tr("Gradient norms");
    if (!model_->directory().isEmpty()) title += tr(" · %1").arg(model_->directory());
    if (model_->rowCount() > 0)
        title += tr(" · %1 of %2 parameters shown · %3")
                     .arg(rows.size())
                     .arg(model_->rowCount())
                     .arg(countOf(static_cast<qsizetype>(all.size()), tr("alert"), tr("alerts")));
    title_->setText(title);
    updateNone();

    double top = 0;  // NaN/inf alerts are marked at the top of the drawn range
    for (int row : rows)
        for (const auto& s : model_->series(row).samples)
            if (s.hasNorm && std::isfinite(s.norm)) top = std::max(top, s.norm);
    top = top > 0 ? top * 4 : 1;

    QVector<double> alertX, alertY, badX, badY;
    for (int row : rows) {
        const auto& series = model_->series(row);
        QVector<double> x, y;
        for (const auto& s : series.samples) {
            x << static_cast<double>(s.step);
            // Log scale: zero, negative and non-finite norms are gaps.
            y << (s.hasNorm && std::isfinite(s.norm) && s.norm > 0 ? s.norm : qQNaN());
        }
        QCPGraph* graph = plot_->addGraph();
        graph->setData(x, y, true);
        graph->setPen(QPen(kLineColors[lines_ % kLineColorCount], 1.6));
        QString name = QString::fromStdString(series.name);
        if (series.rank != "rank0")
            name += QStringLiteral(" (%1)").arg(QString::fromStdString(series.rank));
        graph->setName(name);
        ++lines_;
        for (const auto& f : model_->findingsOf(row)) {
            for (int64_t step = f.step; step <= f.lastStep; ++step) {
                double norm = qQNaN();
                for (const auto& s : series.samples)
                    if (s.step == step) norm = s.norm;
                if (std::isfinite(norm) && norm > 0) {
                    alertX << static_cast<double>(step);
                    alertY << norm;
                } else {
                    badX << static_cast<double>(step);
                    badY << top;
                }
                ++alerts_;
                if (f.kind != analysis::GradFinding::Kind::Vanishing)
                    break;  // one mark per spike/NaN
            }
        }
    }
    if (!alertX.isEmpty()) {
        QCPGraph* marks = plot_->addGraph();
        marks->setData(alertX, alertY);
        marks->setLineStyle(QCPGraph::lsNone);
        marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle,
                                               QPen(QColor(200, 30, 30), 2), Qt::NoBrush, 11));
        marks->setName(tr("alert (spike, exploding, vanishing)"));
    }
    if (!badX.isEmpty()) {
        QCPGraph* marks = plot_->addGraph();
        marks->setData(badX, badY);
        marks->setLineStyle(QCPGraph::lsNone);
        marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted,
                                               QPen(QColor(200, 30, 30), 2), QColor(200, 30, 30),
                                               10));
        marks->setName(tr("NaN / Inf norm"));
    }
    plot_->rescaleAxes();
    if (plot_->yAxis->range().lower <= 0) plot_->yAxis->setRangeLower(1e-12);
    plot_->yAxis->scaleRange(1.3,
                             std::sqrt(plot_->yAxis->range().lower * plot_->yAxis->range().upper));
    plot_->xAxis->scaleRange(1.05, plot_->xAxis->range().center());
    plot_->replot();
}

}  // namespace probe::widgets
