// Statistics plots (QCustomPlot): Max/Min/Mean/Norm of a tensor against rounds, or one
// statistic of every op of a round in execution order (where does the norm blow up?). Pinned
// tensors (or rounds) are overlaid; log scale; NaN and Inf marked at the plot's edge where the
// line breaks; live while the dump grows; hover read-out; a click selects that op and round.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QList>
#include <QPoint>
#include <QTimer>
#include <QWidget>

#include "analysis/dump_index.h"
#include "non_finite_marks.h"
#include "statistics_series.h"

class QCheckBox;
class QComboBox;
class QCPGraph;
class QCPRange;
class QCustomPlot;
class QLabel;
class QPushButton;

namespace probe::data {
class DumpCursor;
class DumpStore;
}  // namespace probe::data

namespace probe::widgets {

class StatisticsPlot : public QWidget {
    Q_OBJECT
public:
    // The line above the plot: what is plotted, or why nothing is.
    QString titleText() const;
    enum class Mode { Rounds, RoundProfile };

    StatisticsPlot(data::DumpStore* store, data::DumpCursor* cursor, QWidget* parent = nullptr);

    Mode mode() const { return mode_; }
    void setMode(Mode mode);
    // Rounds mode: which statistics are drawn.
    void setStatEnabled(analysis::Stat stat, bool enabled);
    // Profile mode: the statistic drawn, and whether kernels (every depth) are included.
    void setProfileStat(analysis::Stat stat);
    void setProfileAllDepths(bool all);
    void setLogScale(bool on);
    // Redraws now with everything the dump holds (a growing dump is otherwise redrawn a few
    // times a second at most): for a screenshot that matches the tree beside it.
    void refresh() { rebuild(); }
    // Whether a growing dump's redraw is due (a few times a second at most).
    bool redrawPending() const { return rebuildDelay_.isActive(); }
    // Overlays the current tensor (rounds mode) or round (profile mode).
    void pinCurrent();
    void clearPins();

    QCustomPlot* plot() const { return plot_; }
    // Drawn series (markers excluded), for tests and the read-out.
    const QList<data::PlotSeries>& series() const { return series_; }
    QString readout() const;
    // Hover at a point of the plot widget (what moving the mouse there does).
    void hoverAt(const QPoint& pos);
    // The row of the point nearest to `pos` within a few pixels, or kNone.
    uint32_t rowNear(const QPoint& pos) const { return pick(pos).row; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

signals:
    // A point was clicked: select that op, tensor and round.
    void rowActivated(uint32_t row);

private:
    struct DrawnSeries {
        QCPGraph* line = nullptr;
        NonFiniteMarks marks;  // NaN, +Inf, -Inf at the plot's edges
    };

    struct Pick {
        int series = -1, point = -1;
        uint32_t row = analysis::kNone;
    };
    Pick pick(const QPoint& pos) const;
    void rebuild();
    void scheduleRebuild();
    void placeMarkers();
    // The y range that holds every value drawn, closely (a flat line: a small range around it).
    QCPRange fittedValueRange() const;
    void addSeries(const data::PlotSeries& series, const QColor& color, bool dots);
    void updateControls();
    QString describeRow(uint32_t row, analysis::Stat stat) const;
    analysis::Stat seriesStat(int seriesIndex) const;
    // The lane of the series' marks (NonFiniteMarks::lane).
    int markLane(int seriesIndex) const;

    data::DumpStore* store_;
    data::DumpCursor* cursor_;
    QCustomPlot* plot_;
    QComboBox* modeBox_;
    QCheckBox* statBoxes_[analysis::kStatCount];
    QComboBox* profileStatBox_;
    QComboBox* profileScopeBox_;
    QCheckBox* logScale_;
    QPushButton* pin_;
    QPushButton* clearPins_;
    QLabel* title_;
    QLabel* notDrawnNote_;
    QLabel* readout_;
    QCPGraph* hover_ = nullptr;

    Mode mode_ = Mode::Rounds;
    bool statEnabled_[analysis::kStatCount] = {true, true, true, true};
    analysis::Stat profileStat_ = analysis::Stat::Norm;
    bool profileAllDepths_ = false;
    bool log_ = false;
    std::vector<uint32_t> pinnedSlots_;
    std::vector<int32_t> pinnedRounds_;
    QList<data::PlotSeries> series_;
    QList<analysis::Stat> seriesStats_;
    std::vector<DrawnSeries> drawn_;
    int markLanes_ = 0;  // lanes given to drawn_'s marks so far
    bool userZoomed_ = false;
    bool mouseOverPlot_ = false;  // since it last moved over the plot, until it left
    QPoint lastMouse_;
    bool holdRange_ = false;      // this redraw keeps the axes' ranges and round (a growing dump's)
    bool refitWhenLeft_ = false;  // held while the mouse was over the plot: fit when it leaves
    int32_t profileRound_ = -1;   // the round the profile mode drew last
    QString readoutText_;
    QTimer rebuildDelay_;
};

}  // namespace probe::widgets
