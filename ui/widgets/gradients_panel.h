// The gradient monitor's time series: a table of parameters (check the ones to plot) beside a
// log-scale plot of their gradient norms against the optimizer step, many overlaid, with what
// `probe grads` finds (spikes, NaN, exploding and vanishing norms) marked on the lines.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

class QCustomPlot;
class QLabel;
class QSplitter;
class QTableView;

namespace probe::data {
class GradientSeriesModel;
}

namespace probe::widgets {

class GradientsPanel : public QWidget {
    Q_OBJECT
public:
    explicit GradientsPanel(QWidget* parent = nullptr);

    data::GradientSeriesModel* model() const { return model_; }
    QCustomPlot* plot() const { return plot_; }
    QTableView* view() const { return view_; }
    // Lines drawn (one per checked parameter) and alert markers drawn.
    int lineCount() const { return lines_; }
    int alertCount() const { return alerts_; }

    // What the panel says when no gradient monitor data is loaded ("" when some is).
    QString noneText() const;

private:
    void rebuild();
    void updateNone();

    data::GradientSeriesModel* model_;
    QLabel* title_;
    QLabel* none_;         // what to do when no gradient monitor data is loaded
    QSplitter* splitter_;  // the plot over the table, hidden with no data
    QTableView* view_;
    QCustomPlot* plot_;
    int lines_ = 0, alerts_ = 0;
};

}  // namespace probe::widgets
