// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_tensor_view.h"

#include <algorithm>
#include <cmath>

#include <QColor>
#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QResizeEvent>
#include <QSizePolicy>
#include <QStyle>
#include <QToolTip>
#include <QVBoxLayout>

#include "compare_runs.h"
#include "compare_tensor_pair.h"
#include "dump_store.h"
#include "op_tree_model.h"
#include "page_style.h"
#include "tensor_document.h"

namespace probe::widgets {

using analysis::kNone;

namespace {

constexpr int kImageSide = 260;

QString number(double v) {
    return data::OpTreeModel::formatValue(v);
}

}  // namespace

TensorPairView::TensorPairView(data::RunComparison* comparison, data::DumpStore* store,
                               QWidget* parent)
    : QWidget(parent),
      comparison_(comparison),
      store_(store),
      document_(new data::TensorPairDocument(this)) {
    mode_ = new QComboBox(this);
    mode_->addItem(tr("Absolute difference |this − reference|"));
    mode_->addItem(tr("Relative difference |this − reference| / |reference|"));
    facts_ = new QLabel(this);
    facts_->setWordWrap(true);
    facts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    grid_ = new QGridLayout;
    const QString titles[3] = {tr("reference"), tr("this run"), tr("difference")};
    for (int i = 0; i < 3; ++i) {
        captions_[i] = new QLabel(titles[i], this);
        images_[i] = new QLabel(this);
        images_[i]->setStyleSheet(QStringLiteral("border: 1px solid #bbb"));
        images_[i]->installEventFilter(this);  // its tooltip: the element under the mouse
    }
    arrange(false);
    auto* top = new QHBoxLayout;
    top->addWidget(mode_);
    top->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addLayout(grid_, 1);
    layout->addWidget(facts_);
    layout->addStretch(0);  // below the facts of stacked strips (arrange)
    connect(mode_, &QComboBox::currentIndexChanged, this,
            [this](int i) { document_->setRelative(i == 1); });
    connect(document_, &data::TensorPairDocument::loaded, this, &TensorPairView::onLoaded);
    connect(document_, &data::TensorPairDocument::failed, this, &TensorPairView::showMessage);
    // A result replaced or dropped: what is shown refers to rows that may be gone.
    connect(comparison_, &data::RunComparison::aboutToChange, this, [this] {
        document_->clear();
        row_ = kNone;
    });
    // What the view says until a tensor is shown: it was left empty when the result changed
    // while the panel was hidden (three blank strips for runs of statistics only).
    connect(comparison_, &data::RunComparison::changed, this,
            [this] { showMessage(idleMessage()); });
    showMessage(idleMessage());
}

QString TensorPairView::idleMessage() const {
    const analysis::CompareResult* r = comparison_->result();
    if (!r) return tr("No comparison (File › Compare…).");
    if (r->tensorsWithData == 0)
        return tr(
            "No tensor has its data in both runs (their dumps kept statistics only, or "
            "only one of them kept data): the element by element difference needs two "
            "dumps with tensor data (task \"tensor\" or \"all\"). The statistics are "
            "compared in the Compared ops table.");
    return tr("Select a tensor that both runs kept the data of.");
}

void TensorPairView::setRelative(bool relative) {
    mode_->setCurrentIndex(relative ? 1 : 0);
}

void TensorPairView::showRow(uint32_t candidateRow) {
    if (candidateRow == row_ && (document_->isLoading() || document_->candidate())) return;
    row_ = candidateRow;
    const analysis::CompareResult* r = comparison_->result();
    const uint32_t t =
        r && candidateRow != kNone ? comparison_->comparedTensor(candidateRow) : kNone;
    if (t == kNone) {
        document_->clear();
        showMessage(r && candidateRow != kNone && r->tensorsWithData > 0
                        ? tr("This tensor was not compared (it is in one run only, or in a round "
                             "not compared).")
                        : idleMessage());
        return;
    }
    const auto& tensor = r->tensors[t];
    const bool referenceData = r->reference->row(tensor.referenceRow).hasTensorFile,
               candidateData = store_->index().row(candidateRow).hasTensorFile;
    if (!referenceData || !candidateData) {
        document_->clear();
        // Which run: "one of the runs" was said when both had kept statistics only.
        showMessage(!referenceData && !candidateData
                        ? tr("Both runs kept only statistics of this tensor: see the Comparison "
                             "table.")
                    : !referenceData
                        ? tr("The reference kept only statistics of this tensor: see the "
                             "Comparison table.")
                        : tr("This run kept only statistics of this tensor: see the Comparison "
                             "table."));
        return;
    }
    facts_->setText(tr("Reading both tensors…"));
    document_->open(*r->reference, tensor.referenceRow, store_->index(), candidateRow);
}

void TensorPairView::showMessage(const QString& text) {
    for (auto* image : images_) image->clear();
    facts_->setText(text);
}

QImage TensorPairView::image(int which) const {
    switch (which) {
        case 0:
            return document_->referenceImage().image;
        case 1:
            return document_->candidateImage().image;
        default:
            return document_->difference().image;
    }
}

QSize TensorPairView::shownSize(int which) const {
    const QPixmap pixmap = images_[which]->pixmap();
    return pixmap.isNull() ? QSize() : pixmap.size();
}

QRect TensorPairView::shownFrame(int which) const {
    return images_[which]->geometry();
}

QRect TensorPairView::imageRect(int which) const {
    const QLabel* frame = images_[which];
    const QPixmap pixmap = frame->pixmap();
    if (pixmap.isNull()) return {};
    return QStyle::alignedRect(frame->layoutDirection(), frame->alignment(), pixmap.size(),
                               frame->contentsRect());
}

QString TensorPairView::describeAt(int which, QPoint point) const {
    const QRect drawn = imageRect(which);
    const QImage img = image(which);
    const auto reference = document_->reference(), candidate = document_->candidate();
    if (drawn.isEmpty() || img.isNull() || !drawn.contains(point) || !reference || !candidate ||
        reference->count != candidate->count)
        return {};
    const auto geometry = analysis::sliceGeometry(candidate->header.dims);
    const int64_t block = std::max(document_->difference().blockSize, 1);
    const int64_t cellX = (point.x() - drawn.left()) * img.width() / drawn.width(),
                  cellY = (point.y() - drawn.top()) * img.height() / drawn.height();
    const int64_t row = std::min(cellY * block, geometry.rows - 1),
                  col = std::min(cellX * block, geometry.cols - 1);
    const auto index = static_cast<uint64_t>(row * geometry.cols + col);
    const double r = reference->at(index), c = candidate->at(index);
    const double difference = std::fabs(c - r);
    QString text = tr("element [%1, %2]").arg(row).arg(col);
    if (block > 1) text += tr(" (the first of the %1×%1 this pixel shows)").arg(block);
    text += tr(": reference %1, this run %2, difference %3")
                .arg(number(r), number(c), number(difference));
    if (r != 0 && std::isfinite(difference))
        text += QStringLiteral(" (%1%)").arg(number(difference / std::fabs(r) * 100));
    return text;
}

bool TensorPairView::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Resize && watched == images_[1] && !stacked_ &&
        document_->candidate())
        drawImages();
    if (event->type() == QEvent::ToolTip) {
        for (int i = 0; i < 3; ++i) {
            if (watched != images_[i]) continue;
            const auto* help = static_cast<QHelpEvent*>(event);
            const QString text = describeAt(i, help->pos());
            if (text.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(help->globalPos(), text, images_[i]);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void TensorPairView::arrange(bool stacked) {
    stacked_ = stacked;
    for (int i = 0; i < 3; ++i) {
        grid_->removeWidget(captions_[i]);
        grid_->removeWidget(images_[i]);
    }
    for (int i = 0; i < 3; ++i) {
        // Stacked, the strips take the width the view gives them (drawn again as it resizes),
        // not the width of what they show: the window can still be made narrower.
        // Side by side, the frames take the room the view gives them too, the images drawn to
        // fit it: a frame the size of its image cut a 32×32 slice to its first 12 rows in a
        // short window, without a word.
        images_[i]->setSizePolicy(QSizePolicy::Ignored,
                                  stacked ? QSizePolicy::Preferred : QSizePolicy::Ignored);
        images_[i]->setMinimumSize(48, stacked ? kMinCellSide + 2 : 48);
        if (stacked) {
            captions_[i]->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
            images_[i]->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
            grid_->addWidget(captions_[i], i, 0);
            grid_->addWidget(images_[i], i, 1);
        } else {
            captions_[i]->setAlignment(Qt::AlignCenter);
            images_[i]->setAlignment(Qt::AlignHCenter | Qt::AlignTop);
            grid_->addWidget(captions_[i], 0, i);
            grid_->addWidget(images_[i], 1, i);
        }
    }
    // Side by side, the frames take the height; stacked, the strips and their facts stay at the
    // top, the room left below them.
    grid_->setColumnStretch(1, stacked ? 1 : 0);
    grid_->setRowStretch(1, stacked ? 0 : 1);
    if (auto* outer = qobject_cast<QBoxLayout*>(layout())) {
        outer->setStretch(1, stacked ? 0 : 1);
        outer->setStretch(3, stacked ? 1 : 0);
    }
}

void TensorPairView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (stacked_ && document_->candidate()) drawImages();
}

QSize TensorPairView::drawnSize(QSize elements, int side) {
    if (elements.isEmpty()) return {};
    const QSize square = elements.scaled(side, side, Qt::KeepAspectRatio);
    auto atLeast = [side](int drawn, int cells) {
        return std::max(drawn, std::min(side, cells * kMinCellSide));
    };
    return {atLeast(square.width(), elements.width()), atLeast(square.height(), elements.height())};
}

void TensorPairView::onLoaded() {
    const QSize elements = image(1).size();
    const bool stacked =
        !elements.isEmpty() && elements.width() >= kStackedAspect * elements.height();
    if (stacked != stacked_) arrange(stacked);
    drawImages();
    writeFacts();
}

void TensorPairView::drawImages() {
    // Stacked: as wide as the view beside the captions (its layout may not have placed the
    // strips yet).
    int captions = 0;
    for (const QLabel* caption : captions_)
        captions = std::max(captions, caption->sizeHint().width());
    int side = stacked_ ? std::max(kImageSide, width() - captions - 32) : kImageSide;
    if (!stacked_) {
        // As large as the frames are, up to kImageSide (once laid out).
        const QSize room = images_[1]->contentsRect().size();
        if (images_[1]->isVisible() && !room.isEmpty())
            side = std::max(8, std::min({kImageSide, room.width(), room.height()}));
    }
    for (int i = 0; i < 3; ++i) {
        const QImage img = image(i);
        if (img.isNull()) {
            images_[i]->clear();
            continue;
        }
        // Elements as blocks, not blurred.
        const QSize drawn = drawnSize(img.size(), side);
        QPixmap pixmap =
            QPixmap::fromImage(img.scaled(drawn, Qt::IgnoreAspectRatio, Qt::FastTransformation));
        const auto& diff = document_->difference();
        if (i == 2 && diff.largest > 0 && document_->candidate()) {
            // One element in thousands differing is one pixel: ring it.
            const auto geometry = analysis::sliceGeometry(document_->candidate()->header.dims);
            const double sx = pixmap.width() / static_cast<double>(img.width()),
                         sy = pixmap.height() / static_cast<double>(img.height());
            const double x =
                (static_cast<double>(diff.largestAt % static_cast<uint64_t>(geometry.cols)) /
                     diff.blockSize +
                 0.5) *
                sx;
            const double y =
                (static_cast<double>(diff.largestAt / static_cast<uint64_t>(geometry.cols)) /
                     diff.blockSize +
                 0.5) *
                sy;
            QPainter painter(&pixmap);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(QPen(QColor(30, 90, 220), 2));
            painter.drawEllipse(QPointF(x, y), 9, 9);
        }
        images_[i]->setPixmap(pixmap);
    }
}

void TensorPairView::writeFacts() {
    const auto& diff = document_->difference();
    const auto& cand = *document_->candidate();
    QString text;
    if (document_->reference()->count != cand.count) {
        text = tr("The shapes differ: no element-wise difference.");
    } else {
        const auto geometry = analysis::sliceGeometry(cand.header.dims);
        // No "largest difference, 0 at element [0, 0]" beside elements that differ: with none
        // among the finite ones, that is what is said.
        text = diff.largest > 0
                   ? tr("First %1×%2 slice. White: equal; dark red: the largest %3 difference "
                        "(ringed in blue), %4 at element %5.")
                         .arg(geometry.rows)
                         .arg(geometry.cols)
                         .arg(document_->relative() ? tr("relative") : tr("absolute"),
                              number(diff.largest))
                         .arg(QStringLiteral("[%1, %2]")
                                  .arg(diff.largestAt / static_cast<uint64_t>(geometry.cols))
                                  .arg(diff.largestAt % static_cast<uint64_t>(geometry.cols)))
               : diff.finitePairs
                   ? tr("First %1×%2 slice. White: equal; the finite elements of both runs are "
                        "equal.")
                         .arg(geometry.rows)
                         .arg(geometry.cols)
                   // Nothing finite to compare (a run all NaN): not "equal".
                   : tr("First %1×%2 slice: no element is finite in both runs.")
                         .arg(geometry.rows)
                         .arg(geometry.cols);
        text += diff.nonFiniteMismatches
                    ? tr(" <b style='color:#d000d0'>■ %1 NaN/Inf in one run only</b>.")
                          .arg(countOf(static_cast<qsizetype>(diff.nonFiniteMismatches),
                                       tr("element"), tr("elements")))
                    : tr(" <span style='color:#d000d0'>■</span> NaN/Inf in one run only: none.");
        // What the runs' own slices show (an Inf drawn green was explained nowhere).
        text += tr("<br>Each run: its smallest value black to its largest white; "
                   "<span style='color:%1'>■</span> NaN, <span style='color:%2'>■</span> ±Inf.")
                    .arg(QColor(data::kNanRgb).name(), QColor(data::kInfRgb).name());
    }
    facts_->setText(text);
}

QString TensorPairView::factsText() const {
    return facts_->text();
}

}  // namespace probe::widgets
