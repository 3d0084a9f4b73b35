// SPDX-License-Identifier: GPL-3.0-or-later
#include "statistics_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "dump_cursor.h"
#include "dump_store.h"
#include "op_tree_model.h"
#include "page_style.h"
#include "plot_layout.h"

namespace probe::widgets {

using analysis::kNone;
using analysis::Stat;
using data::PlotSeries;

namespace {

// Tableau 10 without its red (red says "broken" elsewhere in the window).
const QColor kPalette[] = {QColor(31, 119, 180),  QColor(255, 127, 14), QColor(44, 160, 44),
                           QColor(148, 103, 189), QColor(140, 86, 75),  QColor(227, 119, 194),
                           QColor(127, 127, 127), QColor(188, 189, 34), QColor(23, 190, 207)};
constexpr int kPaletteSize = sizeof kPalette / sizeof kPalette[0];
const Qt::PenStyle kStatPenStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};
// Points farther than this from the mouse (pixels) are not picked.
constexpr double kPickRadius = 12;

}  // namespace

StatisticsPlot::StatisticsPlot(data::DumpStore* store, data::DumpCursor* cursor, QWidget* parent)
    : QWidget(parent), store_(store), cursor_(cursor) {
    modeBox_ = new QComboBox(this);
    modeBox_->addItem(tr("Tensor across rounds"));
    modeBox_->addItem(tr("Ops across a round"));
    modeBox_->setToolTip(
        tr("Plot the selected tensor's statistics round by round, or one statistic of every op of "
           "the current round in execution order"));
    connect(modeBox_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setMode(i == 0 ? Mode::Rounds : Mode::RoundProfile); });

    auto* controls = new QHBoxLayout;
    controls->addWidget(modeBox_);
    for (int s = 0; s < analysis::kStatCount; ++s) {
        statBoxes_[s] =
            new QCheckBox(QString::fromLatin1(analysis::statName(static_cast<Stat>(s))), this);
        statBoxes_[s]->setChecked(true);
        connect(statBoxes_[s], &QCheckBox::toggled, this,
                [this, s](bool on) { setStatEnabled(static_cast<Stat>(s), on); });
        controls->addWidget(statBoxes_[s]);
    }
    profileStatBox_ = new QComboBox(this);
    for (int s = 0; s < analysis::kStatCount; ++s)
        profileStatBox_->addItem(QString::fromLatin1(analysis::statName(static_cast<Stat>(s))));
    profileStatBox_->setCurrentIndex(static_cast<int>(Stat::Norm));
    connect(profileStatBox_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setProfileStat(static_cast<Stat>(i)); });
    profileScopeBox_ = new QComboBox(this);
    profileScopeBox_->addItem(tr("Layer-level ops"));
    profileScopeBox_->addItem(tr("All ops"));
    profileScopeBox_->setToolTip(
        tr("Which ops of the round are plotted (each by its first output)"));
    connect(profileScopeBox_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setProfileAllDepths(i == 1); });
    controls->addWidget(profileStatBox_);
    controls->addWidget(profileScopeBox_);
    controls->addStretch(1);
    // How it is drawn and what is kept, on a row of their own: one row of everything was cut
    // to "Ter", "Norr" and "lear pir" in a window of 800 pixels.
    auto* drawing = new QHBoxLayout;
    logScale_ = new QCheckBox(tr("Log scale"), this);
    logScale_->setToolTip(tr("Logarithmic y axis (values at or below zero are not drawn)"));
    connect(logScale_, &QCheckBox::toggled, this, &StatisticsPlot::setLogScale);
    drawing->addWidget(logScale_);
    drawing->addStretch(1);
    pin_ = new QPushButton(this);
    connect(pin_, &QPushButton::clicked, this, &StatisticsPlot::pinCurrent);
    clearPins_ = new QPushButton(tr("Clear pins"), this);
    connect(clearPins_, &QPushButton::clicked, this, &StatisticsPlot::clearPins);
    drawing->addWidget(pin_);
    drawing->addWidget(clearPins_);
    // Never narrower than their text: the panel beside them gives way instead.
    for (QWidget* control : std::initializer_list<QWidget*>{
             modeBox_, statBoxes_[0], statBoxes_[1], statBoxes_[2], statBoxes_[3], profileStatBox_,
             profileScopeBox_, logScale_, pin_, clearPins_})
        control->setSizePolicy(QSizePolicy::Minimum, control->sizePolicy().verticalPolicy());

    title_ = new QLabel(this);
    title_->setSizePolicy(QSizePolicy::Ignored,
                          QSizePolicy::Preferred);  // long text must not widen the window
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    readout_ = new QLabel(this);
    readout_->setSizePolicy(QSizePolicy::Ignored,
                            QSizePolicy::Preferred);  // long text must not widen the window
    readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    readout_->setMinimumHeight(readout_->fontMetrics().height() + 4);

    plot_ = newPlot(this);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->setNoAntialiasingOnDrag(true);
    placeLegendBesideAxes(plot_);
    connect(plot_, &QCustomPlot::afterLayout, this, &StatisticsPlot::placeMarkers);
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        if (event->buttons() != Qt::NoButton) userZoomed_ = true;  // dragging the range
        mouseOverPlot_ = true;
        lastMouse_ = event->pos();
        hoverAt(event->pos());
    });
    plot_->installEventFilter(this);
    connect(plot_, &QCustomPlot::mouseWheel, this, [this] { userZoomed_ = true; });
    connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        if (event->button() != Qt::LeftButton) return;
        const uint32_t row = rowNear(event->pos());
        if (row != kNone) emit rowActivated(row);
    });
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] {
        userZoomed_ = false;
        rebuild();
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addLayout(drawing);
    layout->addWidget(title_);
    notDrawnNote_ = new QLabel(this);
    notDrawnNote_->setWordWrap(true);
    notDrawnNote_->setStyleSheet(QStringLiteral("color: #8a5a00"));
    notDrawnNote_->setVisible(false);
    layout->addWidget(notDrawnNote_);
    layout->addWidget(plot_, 1);
    layout->addWidget(readout_);

    rebuildDelay_.setSingleShot(true);
    rebuildDelay_.setInterval(300);  // a growing dump redraws a few times a second at most
    // A growing dump's redraw keeps the axes still while the mouse is over the plot: the point
    // being read moved away under it. They fit what has come once the mouse leaves.
    connect(&rebuildDelay_, &QTimer::timeout, this, [this] {
        holdRange_ = mouseOverPlot_;
        refitWhenLeft_ = refitWhenLeft_ || mouseOverPlot_;
        rebuild();
        holdRange_ = false;
        if (mouseOverPlot_) hoverAt(lastMouse_);
    });
    connect(cursor_, &data::DumpCursor::changed, this, &StatisticsPlot::rebuild);
    // Pins name slots and rounds of the dump that goes: dropped while it is still there.
    connect(store_, &data::DumpStore::aboutToReset, this, [this] {
        pinnedSlots_.clear();
        pinnedRounds_.clear();
        userZoomed_ = false;
        updateControls();
    });
    connect(store_, &data::DumpStore::wasReset, this, &StatisticsPlot::rebuild);
    connect(store_, &data::DumpStore::changed, this, [this](const analysis::IndexChange& change) {
        if (change.newRows == 0 && change.statisticsRows.empty()) return;
        if (mode_ == Mode::RoundProfile) {
            scheduleRebuild();
            return;
        }
        const auto& idx = store_->index();
        std::vector<uint32_t> shownSlots = pinnedSlots_;
        if (cursor_->slot() != kNone) shownSlots.push_back(cursor_->slot());
        for (uint32_t slot : shownSlots)
            if (std::binary_search(change.touchedOps.begin(), change.touchedOps.end(),
                                   idx.slot(slot).op)) {
                scheduleRebuild();
                return;
            }
    });
    updateControls();
    rebuild();
}

bool StatisticsPlot::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::Leave) {
        mouseOverPlot_ = false;
        if (refitWhenLeft_) {
            refitWhenLeft_ = false;
            rebuild();
        }
    }
    return QWidget::eventFilter(watched, event);
}

void StatisticsPlot::scheduleRebuild() {
    if (!rebuildDelay_.isActive()) rebuildDelay_.start();
}

void StatisticsPlot::setMode(Mode mode) {
    if (mode == mode_) return;
    mode_ = mode;
    userZoomed_ = false;
    const QSignalBlocker blocker(modeBox_);
    modeBox_->setCurrentIndex(mode == Mode::Rounds ? 0 : 1);
    updateControls();
    rebuild();
}

void StatisticsPlot::setStatEnabled(Stat stat, bool enabled) {
    const int s = static_cast<int>(stat);
    if (statEnabled_[s] == enabled) return;
    statEnabled_[s] = enabled;
    const QSignalBlocker blocker(statBoxes_[s]);
    statBoxes_[s]->setChecked(enabled);
    userZoomed_ = false;
    rebuild();
}

void StatisticsPlot::setProfileStat(Stat stat) {
    if (stat == profileStat_) return;
    profileStat_ = stat;
    const QSignalBlocker blocker(profileStatBox_);
    profileStatBox_->setCurrentIndex(static_cast<int>(stat));
    userZoomed_ = false;
    rebuild();
}

void StatisticsPlot::setProfileAllDepths(bool all) {
    if (all == profileAllDepths_) return;
    profileAllDepths_ = all;
    const QSignalBlocker blocker(profileScopeBox_);
    profileScopeBox_->setCurrentIndex(all ? 1 : 0);
    userZoomed_ = false;
    rebuild();
}

void StatisticsPlot::setLogScale(bool on) {
    if (on == log_) return;
    log_ = on;
    const QSignalBlocker blocker(logScale_);
    logScale_->setChecked(on);
    userZoomed_ = false;
    rebuild();
}

void StatisticsPlot::pinCurrent() {
    if (mode_ == Mode::Rounds) {
        const uint32_t slot = cursor_->slot();
        if (slot != kNone &&
            std::find(pinnedSlots_.begin(), pinnedSlots_.end(), slot) == pinnedSlots_.end())
            pinnedSlots_.push_back(slot);
    } else {
        const int32_t round = cursor_->round() >= 0 ? cursor_->round() : -1;
        const auto rounds = store_->index().rounds(0);
        const int32_t effective = round >= 0 ? round : (rounds.empty() ? -1 : rounds.back());
        if (effective >= 0 &&
            std::find(pinnedRounds_.begin(), pinnedRounds_.end(), effective) == pinnedRounds_.end())
            pinnedRounds_.push_back(effective);
    }
    updateControls();
    rebuild();
}

void StatisticsPlot::clearPins() {
    pinnedSlots_.clear();
    pinnedRounds_.clear();
    updateControls();
    rebuild();
}

void StatisticsPlot::updateControls() {
    const bool rounds = mode_ == Mode::Rounds;
    for (auto* box : statBoxes_) box->setVisible(rounds);
    profileStatBox_->setVisible(!rounds);
    profileScopeBox_->setVisible(!rounds);
    pin_->setText(rounds ? tr("Pin tensor") : tr("Pin round"));
    pin_->setToolTip(rounds ? tr("Keep this tensor on the plot while you select others")
                            : tr("Keep this round on the plot while you choose others"));
    clearPins_->setEnabled(!pinnedSlots_.empty() || !pinnedRounds_.empty());
}

void StatisticsPlot::addSeries(const PlotSeries& series, const QColor& color, bool dots) {
    DrawnSeries drawn;
    drawn.line = plot_->addGraph();
    drawn.line->setName(series.label);
    QVector<double> y = series.y;
    if (log_)  // a log axis cannot show zero or negative values: leave gaps there
        for (double& v : y)
            if (v <= 0) v = std::nan("");
    drawn.line->setData(series.x, y, true);
    QPen pen(color, 1.6);
    drawn.line->setPen(pen);
    drawn.line->setScatterStyle(dots ? QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 5)
                                     : QCPScatterStyle());
    // A lane of marks per series that has some: Max's NaN beside Norm's, not under it.
    drawn.marks.add(plot_, series, color, markLanes_);
    if (!series.markers.isEmpty()) ++markLanes_;
    drawn_.push_back(drawn);
}

void StatisticsPlot::rebuild() {
    rebuildDelay_.stop();
    const QCPRange xRange = plot_->xAxis->range(), yRange = plot_->yAxis->range();
    plot_->clearGraphs();
    plot_->clearItems();
    drawn_.clear();
    markLanes_ = 0;
    series_.clear();
    seriesStats_.clear();
    hover_ = nullptr;
    const auto& idx = store_->index();
    const uint32_t currentOp = cursor_->op();
    const uint32_t process = currentOp != kNone ? idx.op(currentOp).process : 0;
    QString title;
    QVector<QString> profileNames;  // x tick labels of a layer-level profile

    if (mode_ == Mode::Rounds) {
        std::vector<uint32_t> shownSlots = pinnedSlots_;
        const uint32_t current = cursor_->slot();
        if (current != kNone &&
            std::find(shownSlots.begin(), shownSlots.end(), current) == shownSlots.end())
            shownSlots.push_back(current);
        for (size_t t = 0; t < shownSlots.size(); ++t) {
            for (int s = 0; s < analysis::kStatCount; ++s) {
                if (!statEnabled_[s]) continue;
                PlotSeries series = data::roundSeries(idx, shownSlots[t], static_cast<Stat>(s));
                if (shownSlots.size() == 1)
                    series.label = QString::fromLatin1(analysis::statName(static_cast<Stat>(s)));
                const QColor color =
                    kPalette[(shownSlots.size() == 1 ? s : static_cast<int>(t)) % kPaletteSize];
                addSeries(series, color, series.x.size() < 400);
                if (shownSlots.size() > 1) {
                    QPen pen = drawn_.back().line->pen();
                    pen.setStyle(kStatPenStyles[s]);
                    drawn_.back().line->setPen(pen);
                }
                series_.push_back(series);
                seriesStats_.push_back(static_cast<Stat>(s));
            }
        }
        plot_->xAxis->setLabel(store_->roundName());
        plot_->yAxis->setLabel(tr("value"));
        if (shownSlots.empty() && currentOp != kNone)
            // An op was selected: "select an op" read as if the click had been lost.
            title = tr("<b>%1</b> has no rows in this dump (nothing of it was dumped): select "
                       "one of its children, or another op.")
                        .arg(QString::fromStdString(idx.describeOp(currentOp)).toHtmlEscaped());
        else if (shownSlots.empty())
            title = tr("Select an op or a tensor to plot its statistics round by round.");
        else if (shownSlots.size() == 1)
            title = QStringLiteral("<b>%1</b> · %2")
                        .arg(QString::fromStdString(idx.describeOp(idx.slot(shownSlots[0]).op))
                                 .toHtmlEscaped(),
                             QString::fromStdString(idx.describeSlot(shownSlots[0])));
        else
            title =
                tr("%n tensors overlaid (line style: Max solid, Min dashed, Mean dotted, Norm "
                   "dash-dot)",
                   nullptr, static_cast<int>(shownSlots.size()));
        // The current round, as a vertical line.
        if (cursor_->round() >= 0 && !shownSlots.empty()) {
            auto* line = new QCPItemStraightLine(plot_);
            line->point1->setCoords(cursor_->round(), 0);
            line->point2->setCoords(cursor_->round(), 1);
            line->setPen(QPen(QColor(120, 120, 120), 1, Qt::DashLine));
        }
    } else {
        const auto rounds = idx.rounds(process);
        // "latest" follows the newest round, unless the plot holds still under the mouse: then
        // the round it showed (its points moved away under the mouse, round after round).
        const int32_t latest = holdRange_ && profileRound_ >= 0
                                   ? profileRound_
                                   : (rounds.empty() ? -1 : rounds.back());
        const int32_t current = cursor_->round() >= 0 ? cursor_->round() : latest;
        profileRound_ = current;
        std::vector<int32_t> shown = pinnedRounds_;
        if (current >= 0 && std::find(shown.begin(), shown.end(), current) == shown.end())
            shown.push_back(current);
        analysis::DumpIndex::ProfileOptions options;
        options.maxDepth = profileAllDepths_ ? -1 : 0;
        // The current round sets the x axis; pinned rounds are placed op by op on it.
        data::ProfileSeries profile;
        if (current >= 0)
            profile = data::profileSeries(idx, process, current, profileStat_, options);
        for (size_t r = 0; r < shown.size(); ++r) {
            PlotSeries series =
                shown[r] == current ? profile.series
                : profile.series.empty()
                    ? data::profileSeries(idx, process, shown[r], profileStat_, options).series
                    : data::alignedProfileSeries(idx, process, shown[r], profileStat_, options,
                                                 profile.series);
            series.label = QStringLiteral("%1 %2").arg(store_->roundName()).arg(shown[r]);
            addSeries(series, kPalette[r % kPaletteSize], series.x.size() < 600);
            series_.push_back(series);
            seriesStats_.push_back(profileStat_);
        }
        if (current >= 0) {
            if (!profileAllDepths_ && profile.layerNames.size() == profile.series.x.size() &&
                profile.series.x.size() <= 40)
                profileNames = profile.layerNames;
            // Alternate shading per layer-level op, so the eye finds where a layer starts.
            for (int l = 0; l < profile.layerStarts.size(); l += 2) {
                auto* band = new QCPItemRect(plot_);
                band->setLayer(QStringLiteral("background"));
                band->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
                band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
                band->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
                band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
                const double end = l + 1 < profile.layerStarts.size() ? profile.layerStarts[l + 1]
                                                                      : profile.series.x.size();
                band->topLeft->setCoords(profile.layerStarts[l] - 0.5, 0);
                band->bottomRight->setCoords(end - 0.5, 1);
                band->setPen(Qt::NoPen);
                band->setBrush(QColor(0, 0, 0, 14));
            }
            // The selected op, as a vertical line.
            for (int i = 0; i < profile.series.rows.size(); ++i) {
                if (idx.slot(idx.row(profile.series.rows[i]).slot).op != currentOp) continue;
                auto* line = new QCPItemStraightLine(plot_);
                line->point1->setCoords(profile.series.x[i], 0);
                line->point2->setCoords(profile.series.x[i], 1);
                line->setPen(QPen(QColor(120, 120, 120), 1, Qt::DashLine));
                break;
            }
        }
        plot_->xAxis->setLabel(profileAllDepths_ ? tr("op, in execution order")
                                                 : tr("layer-level op, in execution order"));
        plot_->yAxis->setLabel(QString::fromLatin1(analysis::statName(profileStat_)));
        if (shown.empty())
            title = tr("No rounds yet.");
        else
            title =
                tr("<b>%1</b> of each op's first output in %2 %3%4 (shaded bands: layer-level ops)")
                    .arg(QString::fromLatin1(analysis::statName(profileStat_)), store_->roundName())
                    .arg(current)
                    .arg(shown.size() > 1
                             ? tr(", %1 pinned")
                                   .arg(countOf(static_cast<int>(shown.size()) - 1,
                                                tr("other %1").arg(store_->roundName()),
                                                tr("other %1s").arg(store_->roundName())))
                             : QString());
    }
    title_->setText(title);

    if (log_) {
        plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        // Ticks fall between powers of ten when the range is narrower than a decade: with no
        // digits after the mantissa, 12 and 14 would both read "10¹".
        plot_->yAxis->setNumberFormat(QStringLiteral("gb"));
        plot_->yAxis->setNumberPrecision(3);
    } else {
        plot_->yAxis->setScaleType(QCPAxis::stLinear);
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        plot_->yAxis->setNumberFormat(QStringLiteral("gb"));
        plot_->yAxis->setNumberPrecision(6);
    }
    if (!profileNames.isEmpty()) {
        // Few layer-level ops: name them under the axis.
        QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
        for (int i = 0; i < profileNames.size(); ++i) names->addTick(i, profileNames[i]);
        plot_->xAxis->setTicker(names);
        plot_->xAxis->setTickLabelRotation(profileNames.size() > 8 ? 40 : 0);
    } else {
        setWholeNumberTicks(plot_->xAxis);
        plot_->xAxis->setTickLabelRotation(0);
    }

    if (userZoomed_ || holdRange_) {
        plot_->xAxis->setRange(xRange);
        plot_->yAxis->setRange(yRange);
    } else {
        // Every point counts for x, NaN ones too (they are drawn as marks); edges stay visible.
        double xLow = 0, xHigh = 0;
        bool anyX = false;
        for (const auto& series : series_)
            if (!series.x.isEmpty()) {
                xLow = anyX ? std::min(xLow, series.x.front()) : series.x.front();
                xHigh = anyX ? std::max(xHigh, series.x.back()) : series.x.back();
                anyX = true;
            }
        // Nothing drawn (a new session's first moments): not the last session's rounds.
        if (anyX)
            plot_->xAxis->setRange(xLow - 0.5, xHigh + 0.5);
        else
            plot_->xAxis->setRange(0, 5);
        plot_->yAxis->setRange(fittedValueRange());
    }
    // What is not drawn as it is: values at or below zero on a log axis, values beyond what a
    // plot can show.
    QStringList notDrawn;
    if (log_)
        for (const auto& series : series_) {
            const auto lost = std::count_if(series.y.begin(), series.y.end(),
                                            [](double v) { return std::isfinite(v) && v <= 0; });
            if (lost == 0) continue;
            notDrawn << (lost == 1
                             ? tr("%1: 1 value at or below zero is not drawn on a log scale")
                                   .arg(series.label)
                             : tr("%1: %2 values at or below zero are not drawn on a log scale")
                                   .arg(series.label)
                                   .arg(lost));
        }
    QStringList beyond;  // "Max 2": the values of a series drawn at the plot's limit
    for (const auto& series : series_)
        if (series.beyondPlot > 0) beyond << tr("%1 %2").arg(series.label).arg(series.beyondPlot);
    if (!beyond.isEmpty())
        notDrawn << tr("Values beyond ±1e249 are drawn at ±1e249, the most a plot can show (hover "
                       "one to read it): %1")
                        .arg(beyond.join(QStringLiteral(", ")));
    notDrawnNote_->setText(notDrawn.join(QLatin1Char('\n')));
    notDrawnNote_->setVisible(!notDrawn.isEmpty());

    // One series needs no legend, unless it has marks at the edges to name.
    const bool legend = drawn_.size() > 1 || markLanes_ > 0;
    listNonFiniteMarkKeysLast(plot_);
    plot_->legend->setVisible(legend);
    plot_->plotLayout()->setColumnStretchFactor(1, legend ? 0.001 : 1e-9);
    hover_ = plot_->addGraph();
    hover_->setLineStyle(QCPGraph::lsNone);
    hover_->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 1.5), Qt::NoBrush, 12));
    hover_->removeFromLegend();
    readoutText_.clear();
    readout_->setText(
        // Short enough for the smallest window (the longer sentence was cut at "double-click to").
        tr("Hover a point to read it, click it to select its op and round · drag: pan · wheel: "
           "zoom · double-click: fit"));
    plot_->replot();
}

QCPRange StatisticsPlot::fittedValueRange() const {
    // From the values drawn (not QCustomPlot's rescale, which leaves a flat line in whatever
    // range the plot had before).
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& series : series_)
        for (double v : series.y)
            if (std::isfinite(v) && (!log_ || v > 0)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    if (lo > hi) return log_ ? QCPRange(1, 10) : QCPRange(0, 1);  // nothing drawn
    if (log_) {
        // QCustomPlot refuses a log range whose upper / lower is beyond a double (1e-100 to
        // 1e249): the smallest values go below the axis then, rather than the plot keeping its
        // old range.
        const double upper = hi * 1.5;
        return QCPRange(std::max(lo / 1.5, upper / 1e300), upper);
    }
    if (hi - lo <= 1e-12 * std::max(std::abs(lo), std::abs(hi))) {
        // A flat line (constant across rounds, or one point): a small range around its value.
        const double pad = lo != 0 ? std::abs(lo) / 20 : 1;
        return QCPRange(lo - pad, hi + pad);
    }
    const double margin = 0.06 * (hi - lo);
    return QCPRange(lo - margin, hi + margin);
}

void StatisticsPlot::placeMarkers() {
    for (size_t i = 0; i < drawn_.size() && static_cast<int>(i) < series_.size(); ++i)
        drawn_[i].marks.place(plot_, series_[static_cast<int>(i)]);
}

int StatisticsPlot::markLane(int seriesIndex) const {
    return seriesIndex >= 0 && static_cast<size_t>(seriesIndex) < drawn_.size()
               ? drawn_[static_cast<size_t>(seriesIndex)].marks.lane()
               : 0;
}

Stat StatisticsPlot::seriesStat(int seriesIndex) const {
    return seriesIndex >= 0 && seriesIndex < seriesStats_.size() ? seriesStats_[seriesIndex]
                                                                 : Stat::Max;
}

StatisticsPlot::Pick StatisticsPlot::pick(const QPoint& pos) const {
    const auto& idx = store_->index();
    const double lo = plot_->xAxis->pixelToCoord(pos.x() - kPickRadius),
                 hi = plot_->xAxis->pixelToCoord(pos.x() + kPickRadius);
    double best = kPickRadius;
    Pick found;
    for (int s = 0; s < series_.size(); ++s) {
        const auto& series = series_[s];
        const Stat stat = seriesStat(s);
        auto first = std::lower_bound(series.x.begin(), series.x.end(), std::min(lo, hi));
        int checked = 0;
        for (auto it = first; it != series.x.end() && *it <= std::max(lo, hi) && checked < 5000;
             ++it, ++checked) {
            const int i = static_cast<int>(it - series.x.begin());
            if (series.rows[i] == kNone) continue;  // a gap: the op did not run in that round
            const auto& record = idx.row(series.rows[i]);
            if (!record.has(stat)) continue;
            const double v = record.get(stat);
            double py;
            if (std::isfinite(v)) {
                if (log_ && v <= 0) continue;
                py = plot_->yAxis->coordToPixel(data::plottedValue(v));
            } else {  // drawn as a mark at the edge
                py = plot_->yAxis->coordToPixel(nonFiniteMarkY(plot_, v, markLane(s)));
            }
            const double d = std::hypot(plot_->xAxis->coordToPixel(*it) - pos.x(), py - pos.y());
            if (d <= best) {
                best = d;
                found = {s, i, series.rows[i]};
            }
        }
    }
    return found;
}

void StatisticsPlot::hoverAt(const QPoint& pos) {
    if (!hover_) return;
    const Pick p = pick(pos);
    if (p.row == kNone) {
        if (!hover_->data()->isEmpty()) {
            hover_->data()->clear();
            plot_->replot(QCustomPlot::rpQueuedReplot);
        }
        return;
    }
    const Stat stat = seriesStat(p.series);
    const double v = store_->index().row(p.row).get(stat);
    const double y =
        std::isfinite(v) ? data::plottedValue(v) : nonFiniteMarkY(plot_, v, markLane(p.series));
    hover_->setData({series_[p.series].x[p.point]}, {y});
    readoutText_ = describeRow(p.row, stat);
    readout_->setText(readoutText_);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString StatisticsPlot::readout() const {
    return readoutText_;
}

QString StatisticsPlot::describeRow(uint32_t row, Stat stat) const {
    const auto& idx = store_->index();
    const auto& record = idx.row(row);
    const uint32_t op = idx.slot(record.slot).op;
    return tr("%1 %2 · %3 · %4 · %5 = %6 · %7 %8")
        .arg(store_->roundName())
        .arg(record.round)
        .arg(QString::fromStdString(idx.describeOp(op)),
             QString::fromStdString(idx.describeSlot(record.slot)),
             QString::fromLatin1(analysis::statName(stat)),
             data::OpTreeModel::formatValue(record.get(stat)),
             QString::fromStdString(idx.text(record.shape)),
             QString::fromStdString(idx.text(record.dtype)));
}

QString StatisticsPlot::titleText() const {
    return title_->text();
}

}  // namespace probe::widgets
