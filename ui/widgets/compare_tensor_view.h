// A tensor in both runs side by side: the reference's first 2-D slice, this run's, and their
// difference (absolute or relative; white where equal, dark red at the largest difference,
// NaN/Inf in one run only in magenta), for the selected tensor where both runs kept its data.
// A slice far wider than tall (a 1x64 bias) is drawn as three strips one above the other, as
// wide as the view, an element of one run above the same element of the other.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

#include "analysis/dump_index.h"

class QComboBox;
class QGridLayout;
class QLabel;

namespace probe::data {
class DumpStore;
class RunComparison;
class TensorPairDocument;
}  // namespace probe::data

namespace probe::widgets {

class TensorPairView : public QWidget {
    Q_OBJECT
public:
    TensorPairView(data::RunComparison* comparison, data::DumpStore* store,
                   QWidget* parent = nullptr);

    // The compared tensor of the shown dump's row (nothing when it was not compared).
    void showRow(uint32_t candidateRow);
    uint32_t row() const { return row_; }
    void setRelative(bool relative);
    data::TensorPairDocument* document() const { return document_; }
    QString factsText() const;
    // The three images as shown (before scaling): reference, this run, difference.
    QImage image(int which) const;
    // The size one is drawn at, in pixels, and where its frame is in the view.
    QSize shownSize(int which) const;
    QRect shownFrame(int which) const;
    // Where image `which` is drawn within its frame (empty when none is).
    QRect imageRect(int which) const;
    // The element under `point` (in the frame of image `which`): its index, both runs' values and
    // their difference, as its tooltip says it; "" off the image.
    QString describeAt(int which, QPoint point) const;
    // Whether the three are one above the other (a slice kStackedAspect times wider than tall).
    bool stacked() const { return stacked_; }
    static constexpr int kStackedAspect = 8;
    // The size an image of `elements` (cells: one per element or block) is drawn at within a
    // square of `side` pixels: as large as fits with square cells, but cells at least
    // kMinCellSide pixels across either way while the square has room (a 1×64 slice was a strip
    // 4 pixels high).
    static constexpr int kMinCellSide = 16;
    static QSize drawnSize(QSize elements, int side);

protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void onLoaded();
    // The three images drawn into their frames, at the size the arrangement gives them.
    void drawImages();
    void writeFacts();
    // Side by side, or one above the other (`stacked`).
    void arrange(bool stacked);
    void showMessage(const QString& text);
    // No tensor shown: no comparison, runs without data in both, or "select a tensor".
    QString idleMessage() const;

    data::RunComparison* comparison_;
    data::DumpStore* store_;
    data::TensorPairDocument* document_;
    uint32_t row_ = analysis::kNone;
    QComboBox* mode_;
    QLabel* facts_;
    QLabel* images_[3];
    QLabel* captions_[3];
    QGridLayout* grid_;
    bool stacked_ = false;
};

}  // namespace probe::widgets
