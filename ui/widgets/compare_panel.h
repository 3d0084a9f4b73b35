// The comparison of the shown run against a reference: what was found (the first divergence,
// with the rule that fired), the colours' legend, an error measure of every compared op in
// execution order with the first divergence marked, the selected tensor's statistic in both
// runs across rounds (the reference dashed), the table of compared ops and that of the ops of
// one run only. A click on a point or a row selects that op and round. The error plot draws what
// can be seen: in each pixel column the lowest and highest point of each verdict (hundreds of
// thousands of ops would take seconds to draw one by one), made again when the range or the
// width changes; the first divergence is always drawn, ringed.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <vector>

#include <QWidget>

#include "compare_series.h"
#include "non_finite_marks.h"

class QCheckBox;
class QComboBox;
class QCPGraph;
class QCPItemText;
class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QTableView;

namespace probe::data {
class CompareOpsModel;
class DumpCursor;
class UnpairedOpsModel;
class DumpStore;
class RunComparison;
}  // namespace probe::data

namespace probe::widgets {

class TensorPairView;

class ComparePanel : public QWidget {
    Q_OBJECT
public:
    ComparePanel(data::RunComparison* comparison, data::DumpStore* store, data::DumpCursor* cursor,
                 QWidget* parent = nullptr);

    data::CompareOpsModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    TensorPairView* pairView() const { return pairView_; }
    // The op executions of one run only, on a tab of their own.
    QTableView* unpairedTable() const { return unpairedTable_; }
    // Shows the selected tensor in both runs (the pair view follows the selection while shown).
    void showTensorPair();
    QCustomPlot* errorPlot() const { return errorPlot_; }
    QCustomPlot* statisticPlot() const { return statisticPlot_; }
    QString summaryText() const;
    // The error plot's data: every compared op (what is drawn is a part of it).
    const data::ErrorProfile& errorProfile() const;
    const data::StatisticPair& statisticPair() const { return pair_; }
    void setMeasure(data::RunComparison::Measure measure);
    // The shown dump's row of the error plot's point nearest `pos` (plot widget coordinates)
    // within a few pixels, or kNone.
    uint32_t rowNear(const QPoint& pos) const;

signals:
    // Select this row's op, tensor and round.
    void rowActivated(uint32_t row);
    void jumpRequested();

private:
    QString noComparisonText() const;
    void rebuild();
    // A table's rows select their op as the user moves to them, clicking or by the keyboard:
    // rowActivated with the row `rowRole` gives.
    void activateRowsOf(QTableView* table, int rowRole);
    // The tab of the ops of one run only: its count, and a note when the list is cut short.
    void rebuildUnpairedTab();
    void rebuildNotesTab();  // the comparison's problems and notes, all of them
    void rebuildErrorPlot();
    // The error plot's graphs from the profile: what the visible range shows at this width.
    void resampleErrorPlot();
    // Where the first divergence's ring goes: on its point, or on its mark at the plot's edge
    // when its error is not finite (as the error plot is laid out now).
    double ringY(const data::PlotSeries& series, int at) const;
    void rebuildStatisticPlot();
    data::RunComparison::Measure measure() const;

    data::RunComparison* comparison_;
    data::DumpStore* store_;
    data::DumpCursor* cursor_;
    data::CompareOpsModel* model_;
    QLabel* summary_;
    QWidget* comparisonView_;  // the legend, the controls, the plots and the table
    QComboBox* measure_;
    QComboBox* stat_;
    QCheckBox* divergingOnly_;
    QPushButton* jump_;
    QCustomPlot* errorPlot_;
    QCustomPlot* statisticPlot_;
    QTableView* table_;
    QTabWidget* lower_;
    TensorPairView* pairView_;
    data::UnpairedOpsModel* unpairedModel_;
    QTableView* unpairedTable_;
    QLabel* unpairedNote_;  // when the comparison listed only the first of them
    int unpairedTab_ = -1;
    QPlainTextEdit* notesText_ = nullptr;
    int notesTab_ = -1;
    bool followingCursor_ = false;  // the table's current row is being set to the cursor's op
    // The error plot's graphs: the measure's line, the points of each verdict, the first
    // divergence's ring (nullptr while there is no result).
    QCPGraph* errorLine_ = nullptr;
    std::vector<QCPGraph*> verdictDots_;
    // Per verdict of verdictDots_, its ops whose error is not finite: marks at the plot's edge
    // (by PlotSeries::Mark), as the statistics plot draws such values.
    std::vector<std::array<QCPGraph*, 3>> verdictMarks_;
    // The legend's key of each kind of mark (NaN, +Inf, -Inf), listed while marks of it show.
    std::array<QCPGraph*, 3> markKeys_{};
    QCPGraph* firstDivergence_ = nullptr;
    QCPItemText* firstDivergenceLabel_ = nullptr;  // placed as the plot is laid out
    // What the graphs were resampled for: the plot's rebuild, the range and the width.
    int errorPlotVersion_ = 0, sampledVersion_ = -1;
    double sampledLower_ = 0, sampledUpper_ = 0;
    int sampledWidth_ = -1, sampledHeight_ = -1;  // the marks' places depend on the height
    data::StatisticPair pair_;
    NonFiniteMarks pairMarks_[2];  // of pair_'s candidate and reference
};

}  // namespace probe::widgets
