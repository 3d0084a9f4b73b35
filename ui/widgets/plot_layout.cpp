// SPDX-License-Identifier: GPL-3.0-or-later
#include "plot_layout.h"

#include <algorithm>

#include <QFontMetrics>
#include <QResizeEvent>
#include <QVariant>
#include <qcustomplot.h>

namespace probe::widgets {

namespace {

// Swallows a plot's resizes to nothing: its own handler would draw it at once.
class EmptyResizeFilter : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Resize && static_cast<QResizeEvent*>(event)->size().isEmpty())
            return true;
        return QObject::eventFilter(watched, event);
    }
};

constexpr char kFullLabel[] = "probeFullLabel";
constexpr char kFitsLabels[] = "probeFitsAxisLabels";

// The label of each axis set by setAxisLabelFitting, shortened to its axis as now laid out. A
// label that changed is drawn by a queued replot, laid out for it: this layout's margins were
// made for the one before (a plot first laid out while hidden, a few pixels high, had its label
// emptied, and was drawn without one until it was resized).
void fitAxisLabels(QCustomPlot* plot) {
    bool changed = false;
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes()) {
            const QVariant full = axis->property(kFullLabel);
            if (!full.isValid()) continue;
            const QString text = full.toString();
            const int length = axis->orientation() == Qt::Vertical ? rect->height() : rect->width();
            QString shown = QFontMetrics(axis->labelFont())
                                .elidedText(text, Qt::ElideRight, std::max(length, 0));
            // Never none at all: an axis without a label has no margin for one.
            if (shown.isEmpty() && !text.isEmpty()) shown = text.left(1) + QChar(0x2026);
            if (shown == axis->label()) continue;
            axis->setLabel(shown);
            changed = true;
        }
    if (changed) plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace

void placeLegendBesideAxes(QCustomPlot* plot) {
    auto* column = new QCPLayoutGrid;
    plot->plotLayout()->addElement(0, 1, column);
    column->addElement(0, 0, plot->legend);
    column->addElement(1, 0, new QCPLayoutElement(plot));
    column->setRowStretchFactor(0, 0.001);
    column->setRowStretchFactor(1, 1);
    plot->plotLayout()->setColumnStretchFactor(1, 0.001);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setBrush(Qt::NoBrush);
}

void setAxisLabelFitting(QCPAxis* axis, const QString& label) {
    QCustomPlot* plot = axis->parentPlot();
    axis->setProperty(kFullLabel, label);
    axis->setLabel(label);
    if (!plot->property(kFitsLabels).toBool()) {
        plot->setProperty(kFitsLabels, true);
        QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] { fitAxisLabels(plot); });
    }
}

void setWholeNumberTicks(QCPAxis* axis) {
    QSharedPointer<QCPAxisTickerFixed> whole(new QCPAxisTickerFixed);
    whole->setTickStep(1);
    whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    axis->setTicker(whole);
}

QCustomPlot* newPlot(QWidget* parent) {
    auto* plot = new QCustomPlot(parent);
    plot->installEventFilter(new EmptyResizeFilter(plot));
    return plot;
}

}  // namespace probe::widgets
