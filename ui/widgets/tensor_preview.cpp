// SPDX-License-Identifier: GPL-3.0-or-later
#include "tensor_preview.h"

#include <cmath>

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTextDocumentFragment>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "analysis/atb_dump.h"
#include "analysis/tensor_export.h"
#include "dump_store.h"
#include "op_tree_model.h"
#include "page_style.h"
#include "plot_layout.h"
#include "probe/format/dtype.h"
#include "tensor_document.h"
#include "tensor_values_model.h"

namespace probe::widgets {

using analysis::kNone;
using data::TensorDocument;

namespace {

QString number(double v) {
    return data::OpTreeModel::formatValue(v);
}

QString swatch(const QColor& color) {
    return QStringLiteral("<span style='background-color:%1'>&nbsp;&nbsp;&nbsp;</span>")
        .arg(color.name());
}

// Statistics agree when they print the same in statistic.csv's six decimals, or are within a
// float's precision (the dump computes in float for narrow types).
bool agrees(double recorded, double computed) {
    if (std::isnan(recorded) || std::isnan(computed))
        return std::isnan(recorded) && std::isnan(computed);
    if (std::isinf(recorded) || std::isinf(computed)) return recorded == computed;
    return std::abs(recorded - computed) <= 5e-6 + 1e-5 * std::abs(computed);
}

}  // namespace

TensorPreview::TensorPreview(data::DumpStore* store, QWidget* parent)
    : QWidget(parent), store_(store) {
    document_ = new TensorDocument(this);
    values_ = new data::TensorValuesModel(document_, this);

    title_ = makePaneTitle(tr("No tensor"), this);
    facts_ = new QLabel(this);
    facts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    facts_->setWordWrap(true);
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    note_->setStyleSheet(QStringLiteral("color:#8a5a00"));
    note_->setVisible(false);

    auto* openButton = new QPushButton(tr("Open tensor…"), this);
    openButton->setToolTip(tr("Preview a .bin (op-level dumps) or .pt (msprobe dumps) file"));
    connect(openButton, &QPushButton::clicked, this, [this] {
        const QString shown = document_->path();
        const QString path = chooseTensorFile(
            this, shown.isEmpty() ? store_->root() : QFileInfo(shown).absolutePath());
        if (!path.isEmpty()) openFile(path);
    });
    exportNpy_ = new QPushButton(tr("Export .npy…"), this);
    exportCsv_ = new QPushButton(tr("Export .csv…"), this);
    exportNpy_->setToolTip(
        tr("NumPy array with the tensor's dtype and shape (bf16 is written as float32)"));
    exportCsv_->setToolTip(
        tr("One line per row of the last dimension (leading dimensions flattened into lines)"));
    connect(exportNpy_, &QPushButton::clicked, this, [this] { chooseExport(true); });
    connect(exportCsv_, &QPushButton::clicked, this, [this] { chooseExport(false); });

    sliceBar_ = new QWidget(this);
    sliceLayout_ = new QHBoxLayout(sliceBar_);
    sliceLayout_->setContentsMargins(0, 0, 0, 0);
    overlay_ = new QCheckBox(tr("NaN/Inf/negative overlay"), this);
    overlay_->setToolTip(
        tr("As RenderDoc's texture viewer: NaN red, Inf green, negative values blue, the rest "
           "dimmed"));
    connect(overlay_, &QCheckBox::toggled, this, &TensorPreview::setOverlay);

    // Heatmap: one pixel per element, row 0 at the top.
    heatmap_ = newPlot(this);
    heatmap_->yAxis->setRangeReversed(true);
    heatmap_->xAxis->setLabel(tr("column (last dim)"));
    heatmap_->yAxis->setLabel(tr("row"));
    heatmap_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    heatmap_->axisRect()->setBackground(QColor(250, 250, 250));
    for (QCPAxis* axis : {heatmap_->xAxis, heatmap_->yAxis}) {  // element indices: whole numbers
        QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
        ticker->setTickStep(1);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        axis->setTicker(ticker);
    }
    pixmap_ = new QCPItemPixmap(heatmap_);
    pixmap_->setScaled(true, Qt::IgnoreAspectRatio, Qt::FastTransformation);
    pixmap_->topLeft->setType(QCPItemPosition::ptPlotCoords);
    pixmap_->bottomRight->setType(QCPItemPosition::ptPlotCoords);
    heatmapLegend_ = new QLabel(this);
    heatmapLegend_->setSizePolicy(QSizePolicy::Ignored,
                                  QSizePolicy::Preferred);  // long text must not widen the window
    heatmapReadout_ = new QLabel(this);
    heatmapReadout_->setSizePolicy(QSizePolicy::Ignored,
                                   QSizePolicy::Preferred);  // long text must not widen the window
    heatmapReadout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(heatmap_, &QCustomPlot::mouseMove, this,
            [this](QMouseEvent* e) { hoverHeatmap(e->pos()); });
    auto* heatmapPage = new QWidget(this);
    auto* heatmapLayout = new QVBoxLayout(heatmapPage);
    heatmapLayout->setContentsMargins(0, 0, 0, 0);
    heatmapLayout->addWidget(heatmap_, 1);
    heatmapLayout->addWidget(heatmapLegend_);
    heatmapLayout->addWidget(heatmapReadout_);

    table_ = new QTableView(this);
    table_->setModel(values_);
    table_->horizontalHeader()->setDefaultSectionSize(
        table_->fontMetrics().horizontalAdvance(QStringLiteral("-0.0000000e+00")) + 8);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 4);
    page_ = new QSpinBox(this);
    page_->setMinimum(1);
    pageLabel_ = new QLabel(this);
    connect(page_, &QSpinBox::valueChanged, this, [this](int v) { values_->setPage(v - 1); });
    connect(values_, &data::TensorValuesModel::modelReset, this, [this] {
        const int pages = std::max(1, values_->pageCount());
        const QSignalBlocker blocker(page_);
        page_->setMaximum(pages);
        page_->setValue(values_->page() + 1);
        pageLabel_->setText(
            tr("of %1 (%2 rows a page)").arg(pages).arg(data::TensorValuesModel::kPageRows));
    });
    auto* valuesPage = new QWidget(this);
    auto* valuesLayout = new QVBoxLayout(valuesPage);
    valuesLayout->setContentsMargins(0, 0, 0, 0);
    auto* pageRow = new QHBoxLayout;
    pageRow->addWidget(new QLabel(tr("Page"), this));
    pageRow->addWidget(page_);
    pageRow->addWidget(pageLabel_);
    pageRow->addStretch(1);
    valuesLayout->addLayout(pageRow);
    valuesLayout->addWidget(table_, 1);

    histogram_ = newPlot(this);
    bars_ = new QCPBars(histogram_->xAxis, histogram_->yAxis);
    bars_->setPen(Qt::NoPen);
    bars_->setBrush(QColor(31, 119, 180));
    histogram_->xAxis->setLabel(tr("value"));
    histogram_->yAxis->setLabel(tr("elements"));
    histogramLog_ = new QCheckBox(tr("Log scale"), this);
    connect(histogramLog_, &QCheckBox::toggled, this, &TensorPreview::updateHistogram);
    histogramLegend_ = new QLabel(this);
    histogramLegend_->setSizePolicy(QSizePolicy::Ignored,
                                    QSizePolicy::Preferred);  // long text must not widen the window
    auto* histogramPage = new QWidget(this);
    auto* histogramLayout = new QVBoxLayout(histogramPage);
    histogramLayout->setContentsMargins(0, 0, 0, 0);
    auto* histogramTop = new QHBoxLayout;
    histogramTop->addWidget(histogramLegend_, 1);
    histogramTop->addWidget(histogramLog_);
    histogramLayout->addLayout(histogramTop);
    histogramLayout->addWidget(histogram_, 1);

    tabs_ = new QTabWidget(this);
    tabs_->addTab(heatmapPage, tr("Heatmap"));
    tabs_->addTab(valuesPage, tr("Values"));
    tabs_->addTab(histogramPage, tr("Histogram"));

    auto* head = new QHBoxLayout;
    head->addWidget(title_, 1);
    head->addWidget(openButton);
    head->addWidget(exportNpy_);
    head->addWidget(exportCsv_);
    auto* sliceRow = new QHBoxLayout;
    sliceRow->addWidget(sliceBar_);
    sliceRow->addStretch(1);
    sliceRow->addWidget(overlay_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(head);
    layout->addWidget(facts_);
    layout->addWidget(note_);
    layout->addLayout(sliceRow);
    layout->addWidget(tabs_, 1);
    layout->addStretch(0);  // the text at the top while the pages are hidden

    connect(document_, &TensorDocument::loadStarted, this, [this](const QString& path) {
        title_->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
    });
    connect(document_, &TensorDocument::loaded, this, &TensorPreview::onLoaded);
    connect(document_, &TensorDocument::failed, this, &TensorPreview::onLoaded);
    connect(document_, &TensorDocument::imageReady, this, &TensorPreview::onImage);
    // Said while a slice is drawn: a tensor of billions of elements took minutes, over an empty
    // heatmap that read as a tensor of nothing.
    connect(document_, &TensorDocument::imageStarted, this, [this](quint64 elements) {
        pixmap_->setVisible(false);
        heatmapLegend_->setText(tr("Drawing the heatmap of %1 elements…")
                                    .arg(QLocale().toString(static_cast<qulonglong>(elements))));
        heatmap_->replot();
    });
    // The row shown belongs to the dump that goes: let it go while that dump is still there.
    connect(store_, &data::DumpStore::aboutToReset, this, [this] {
        row_ = kNone;
        document_->clear();
    });
    onLoaded();
}

void TensorPreview::openRow(uint32_t row) {
    const auto& idx = store_->index();
    if (row >= idx.rowCount()) return;
    std::string error;
    const std::string path = idx.tensorPath(row, &error);
    row_ = row;
    if (path.empty()) {
        document_->clear();
        title_->setText(tr("No tensor file"));
        facts_->setText(error.empty() ? tr("This row has no tensor file: the dump's task was "
                                           "\"statistics\". Dump with task "
                                           "\"tensor\" or \"all\" to preview tensors.")
                                      : QString::fromStdString(error));
        return;
    }
    const auto* index = &idx;
    document_->open(QString::fromStdString(path), [index, row](const QString& alias) {
        return QString::fromStdString(index->resolveTensorAlias(row, alias.toStdString()));
    });
}

QString TensorPreview::chooseTensorFile(QWidget* parent, const QString& folder) {
    // .pt too: the msprobe layout's tensors (loadTensorFile reads both).
    return QFileDialog::getOpenFileName(parent, tr("Open a tensor file"), folder,
                                        tr("Tensor files (*.bin *.pt);;All files (*)"));
}

void TensorPreview::openFile(const QString& path) {
    row_ = kNone;
    // A de-duplicated file is followed as from its row: to the first copy in its round directory.
    document_->open(path, [path](const QString& alias) {
        return QString::fromStdString(
            analysis::findFirstCopy(path.toStdString(), alias.toStdString()));
    });
}

void TensorPreview::showPage(Page page) {
    tabs_->setCurrentIndex(static_cast<int>(page));
}

void TensorPreview::setOverlay(bool on) {
    const QSignalBlocker blocker(overlay_);
    overlay_->setChecked(on);
    document_->setOverlay(on ? TensorDocument::Overlay::NanInfNegative
                             : TensorDocument::Overlay::None);
}

void TensorPreview::onLoaded() {
    const auto tensor = document_->tensor();
    const bool values = tensor && tensor->hasValues();
    // No empty heatmap, table or histogram (axes 0 to 5 over nothing) before a tensor is
    // opened, or for a file that could not be read.
    const bool nothingToShow =
        document_->path().isEmpty() || (!document_->error().isEmpty() && !tensor);
    tabs_->setVisible(!nothingToShow);
    overlay_->setVisible(!nothingToShow);
    exportNpy_->setEnabled(values);
    exportCsv_->setEnabled(values);
    note_->setText(document_->note());
    note_->setVisible(!document_->note().isEmpty());
    if (document_->path().isEmpty()) {
        title_->setText(tr("No tensor"));
        facts_->setText(tr("Double-click a row of an op's tensor table, or open a .bin file."));
    } else {
        title_->setText(QFileInfo(document_->path()).fileName());
        title_->setToolTip(document_->path());
    }
    updateFacts();
    rebuildSliceControls();
    updateHistogram();
    pixmap_->setVisible(values);
    if (!values) {
        heatmapLegend_->clear();
        heatmapReadout_->clear();
        heatmap_->replot();
    }
}

QString TensorPreview::factsText() const {
    return facts_->text();
}

void TensorPreview::updateFacts() {
    const auto tensor = document_->tensor();
    if (!tensor) {
        if (!document_->error().isEmpty())
            facts_->setText(QStringLiteral("<span style='color:#c81e1e'>%1</span>")
                                .arg(document_->error().toHtmlEscaped()));
        return;
    }
    const auto& h = tensor->header;
    // At most a dozen dims written out: a header may hold two thousand (all but a few of size
    // 1), whose shape filled the pane and pushed the heatmap out of view.
    constexpr size_t kDimsWritten = 12;
    QString dims;
    for (size_t i = 0; i < h.dims.size(); ++i) {
        if (h.dims.size() > kDimsWritten && i == kDimsWritten - 4) {
            dims += tr(" × … (%1 dims)").arg(h.dims.size());
            i = h.dims.size() - 4;
        }
        dims += (i ? QStringLiteral(" × ") : QString()) + QString::number(h.dims[i]);
    }
    if (dims.isEmpty()) dims = tr("scalar");
    QString text = tr("<b>%1</b> · format %2 · shape [%3] · %4 elements · %5 bytes of data")
                       .arg(QString::fromStdString(analysis::dtypeLabel(*tensor)),
                            QString::fromStdString(format::formatName(h.formatCode)), dims)
                       .arg(tensor->count)
                       .arg(static_cast<qulonglong>(tensor->bytes.size()));
    if (!document_->error().isEmpty())
        text += QStringLiteral("<br><span style='color:#c81e1e'>%1</span>")
                    .arg(document_->error().toHtmlEscaped());
    const auto& s = tensor->stats;
    if (tensor->hasValues() && s.valid) {
        text += tr("<br>Recomputed: max %1 · min %2 · mean %3 · norm %4")
                    .arg(number(s.max), number(s.min), number(s.mean), number(s.norm));
        QStringList anomalies;
        if (s.nanCount) anomalies << tr("<b style='color:#c81e1e'>%1 NaN</b>").arg(s.nanCount);
        if (s.hasPosInf) anomalies << tr("<b style='color:#14a028'>+Inf</b>");
        if (s.hasNegInf) anomalies << tr("<b style='color:#14a028'>-Inf</b>");
        if (!anomalies.isEmpty())
            text += QStringLiteral(" · ") + anomalies.join(QStringLiteral(" · "));
        const auto& idx = store_->index();
        if (row_ != kNone && row_ < idx.rowCount() && idx.row(row_).statsFromData) {
            // Computed from this file as the dump was read: comparing them with themselves said
            // "recorded in the dump ... matches" of a row holding N/A.
            text +=
                tr("<br>The dump records no statistics for this tensor (N/A: task tensor): "
                   "the tables show these, computed from the file.");
        } else if (row_ != kNone && row_ < idx.rowCount()) {
            const auto& r = idx.row(row_);
            const double computed[] = {s.max, s.min, s.mean, s.norm};
            QStringList recorded;
            bool all = true;
            for (int i = 0; i < analysis::kStatCount; ++i) {
                const auto stat = static_cast<analysis::Stat>(i);
                if (!r.has(stat)) continue;
                const bool same = agrees(r.get(stat), computed[i]);
                all = all && same;
                recorded << QStringLiteral("%1 %2").arg(
                                QString::fromLatin1(analysis::statName(stat)).toLower(),
                                number(r.get(stat))) +
                                (same ? QString()
                                      : QStringLiteral(" <b style='color:#c81e1e'>≠</b>"));
            }
            if (!recorded.isEmpty())
                text += tr("<br>Recorded in the dump (round %1): %2 — %3")
                            .arg(r.round)
                            .arg(recorded.join(QStringLiteral(" · ")),
                                 all ? tr("<span style='color:#14a028'>matches</span>")
                                     : tr("<b style='color:#c81e1e'>differs</b>"));
        }
    } else if (tensor->hasValues()) {
        text += tr("<br>No statistics for this dtype.");
    }
    if (tensor->hasValues() && tensor->dtype && format::dtypeIsComplex(*tensor->dtype))
        text +=
            tr("<br>Complex: the heatmap and the histogram show the real parts; the values "
               "table shows both parts.");
    facts_->setText(text);
}

void TensorPreview::rebuildSliceControls() {
    for (auto* spin : sliceSpins_) spin->deleteLater();
    sliceSpins_.clear();
    while (auto* item = sliceLayout_->takeAt(0)) {
        if (item->widget()) item->widget()->deleteLater();
        delete item;
    }
    const auto tensor = document_->tensor();
    const auto g = document_->geometry();
    if (!tensor || !tensor->hasValues()) {
        sliceBar_->setVisible(false);
        return;
    }
    sliceBar_->setVisible(true);
    sliceLayout_->addWidget(new QLabel(tr("Slice %1 × %2").arg(g.rows).arg(g.cols), sliceBar_));
    // A spin box for each leading dim with something to choose: one for each of two thousand
    // dims of size 1 took the window 9 s to lay out. (At most 63 dims of 2 or more fit in a
    // tensor's element count.)
    const size_t leadingDims = g.leadingDims.size();
    for (size_t i = 0; i < leadingDims; ++i) {
        if (g.leadingDims[i] <= 1) continue;
        sliceLayout_->addWidget(new QLabel(tr("dim %1:").arg(i), sliceBar_));
        auto* spin = new QSpinBox(sliceBar_);
        spin->setRange(0, static_cast<int>(std::max<int64_t>(g.leadingDims[i] - 1, 0)));
        spin->setSuffix(tr(" / %1").arg(g.leadingDims[i]));
        spin->setProperty("dim", static_cast<qulonglong>(i));
        connect(spin, &QSpinBox::valueChanged, this, [this, leadingDims] {
            std::vector<int64_t> leading(leadingDims, 0);
            for (auto* s : sliceSpins_) leading[s->property("dim").toULongLong()] = s->value();
            document_->setSliceIndex(leading);
        });
        sliceLayout_->addWidget(spin);
        sliceSpins_.push_back(spin);
    }
}

void TensorPreview::onImage() {
    const auto& image = document_->image();
    const auto g = document_->geometry();
    pixmap_->setPixmap(QPixmap::fromImage(image.image));
    pixmap_->setVisible(!image.image.isNull());
    pixmap_->topLeft->setCoords(-0.5, -0.5);
    pixmap_->bottomRight->setCoords(static_cast<double>(g.cols) - 0.5,
                                    static_cast<double>(g.rows) - 0.5);
    heatmap_->xAxis->setRange(-0.5, static_cast<double>(g.cols) - 0.5);
    heatmap_->yAxis->setRange(-0.5, static_cast<double>(g.rows) - 0.5);
    const auto& s = image.summary;
    QString legend = tr("grey: %1 (black) … %2 (white)").arg(number(image.lo), number(image.hi));
    if (s.nan) legend += QStringLiteral(" · %1 NaN %2").arg(swatch(QColor(230, 20, 20))).arg(s.nan);
    if (s.posInf + s.negInf)
        legend += QStringLiteral(" · %1 Inf %2")
                      .arg(swatch(QColor(20, 210, 40)))
                      .arg(s.posInf + s.negInf);
    if (document_->overlay() == TensorDocument::Overlay::NanInfNegative)
        legend +=
            QStringLiteral(" · %1 negative %2").arg(swatch(QColor(0, 0, 200))).arg(s.negative);
    if (image.blockSize > 1)
        legend += tr(" · %1×%1 elements a pixel (the worst shown)").arg(image.blockSize);
    heatmapLegend_->setText(legend);
    heatmap_->replot();
}

QString TensorPreview::heatmapLegendText() const {
    return heatmapLegend_->text();
}

QString TensorPreview::heatmapReadout() const {
    return heatmapReadout_->text();
}

void TensorPreview::hoverHeatmap(const QPoint& pos) {
    const auto tensor = document_->tensor();
    if (!tensor || !tensor->hasValues()) return;
    const auto g = document_->geometry();
    const auto col = static_cast<int64_t>(std::lround(heatmap_->xAxis->pixelToCoord(pos.x())));
    const auto row = static_cast<int64_t>(std::lround(heatmap_->yAxis->pixelToCoord(pos.y())));
    if (col < 0 || row < 0 || col >= g.cols || row >= g.rows) {
        heatmapReadout_->clear();
        return;
    }
    const uint64_t element = document_->sliceStart() + static_cast<uint64_t>(row * g.cols + col);
    heatmapReadout_->setText(tr("row %1, column %2 (element %3): %4")
                                 .arg(row)
                                 .arg(col)
                                 .arg(element)
                                 .arg(data::TensorValuesModel::elementText(*tensor, element)));
}

void TensorPreview::updateHistogram() {
    const auto& h = document_->histogram();
    QVector<double> keys, counts;
    // Every finite value the same: one bar, centred on that value (its width a tenth of it, or
    // 1 around zero), not a bin of [value, value + 1].
    const bool oneValue = !h.bins.empty() && h.hi == h.lo;
    const double width = h.binWidth() > 0 ? h.binWidth() : h.lo != 0 ? std::abs(h.lo) / 10 : 1;
    if (oneValue) {
        uint64_t all = 0;
        for (uint64_t n : h.bins) all += n;
        keys.push_back(h.lo);
        counts.push_back(static_cast<double>(all));
    } else {
        for (size_t i = 0; i < h.bins.size(); ++i) {
            keys.push_back(h.lo + (static_cast<double>(i) + 0.5) * width);
            counts.push_back(static_cast<double>(h.bins[i]));
        }
    }
    bars_->setWidth(width);
    bars_->setData(keys, counts, true);
    const bool log = histogramLog_->isChecked();
    histogram_->yAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (log)
        histogram_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    else
        histogram_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    bars_->rescaleAxes();
    const QCPRange y = histogram_->yAxis->range();
    histogram_->yAxis->setRange(log ? 0.8 : 0, std::max(1.0, y.upper * 1.08));
    if (oneValue)
        histogram_->xAxis->setRange(h.lo - 3 * width, h.lo + 3 * width);
    else if (!keys.isEmpty())
        histogram_->xAxis->setRange(h.lo - width, h.hi + width);
    QString legend;
    if (oneValue)
        legend = tr("every finite value is %1").arg(number(h.lo));
    else if (!h.bins.empty())
        legend = tr("%1 bins of %2 over [%3, %4]")
                     .arg(h.bins.size())
                     .arg(number(width), number(h.lo), number(h.hi));
    else if (h.nan || h.posInf || h.negInf)
        legend = tr("no finite value");
    if (h.nan) legend += tr(" · <b style='color:#c81e1e'>%1 NaN</b>").arg(h.nan);
    if (h.posInf) legend += tr(" · <b style='color:#14a028'>%1 +Inf</b>").arg(h.posInf);
    if (h.negInf) legend += tr(" · <b style='color:#14a028'>%1 -Inf</b>").arg(h.negInf);
    histogramLegend_->setText(legend);
    histogram_->replot();
}

QString TensorPreview::histogramLegendText() const {
    return QTextDocumentFragment::fromHtml(histogramLegend_->text()).toPlainText();
}

bool TensorPreview::exportNpy(const QString& path, QString* error) {
    const auto tensor = document_->tensor();
    std::string why = "no tensor loaded";
    if (tensor && analysis::writeNpy(*tensor, path.toStdString(), &why)) {
        emit exported(path);
        return true;
    }
    if (error) *error = QString::fromStdString(why);
    return false;
}

bool TensorPreview::exportCsv(const QString& path, QString* error) {
    const auto tensor = document_->tensor();
    std::string why = "no tensor loaded";
    if (tensor && analysis::writeCsv(*tensor, path.toStdString(), &why)) {
        emit exported(path);
        return true;
    }
    if (error) *error = QString::fromStdString(why);
    return false;
}

void TensorPreview::chooseExport(bool npy) {
    const QString base = QFileInfo(document_->path()).completeBaseName();
    const QString path =
        QFileDialog::getSaveFileName(this, npy ? tr("Export as NumPy array") : tr("Export as CSV"),
                                     base + (npy ? QStringLiteral(".npy") : QStringLiteral(".csv")),
                                     npy ? tr("NumPy arrays (*.npy)") : tr("CSV files (*.csv)"));
    if (path.isEmpty()) return;
    QString error;
    if (!(npy ? exportNpy(path, &error) : exportCsv(path, &error)))
        QMessageBox::warning(this, tr("Export failed"),
                             tr("Could not export the tensor: %1").arg(error));
}

}  // namespace probe::widgets
