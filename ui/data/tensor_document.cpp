// SPDX-License-Identifier: GPL-3.0-or-later
#include "tensor_document.h"

#include <algorithm>
#include <cmath>

#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "analysis/tensor_view.h"
#include "background_pool.h"

namespace probe::data {
namespace {

constexpr int kHistogramBins = 64;

}  // namespace

struct TensorDocument::LoadResult {
    std::shared_ptr<analysis::TensorData> tensor;
    analysis::Histogram histogram;
    QString error;
};

TensorDocument::TensorDocument(QObject* parent) : QObject(parent) {}

void TensorDocument::clear() {
    ++loadRequest_;
    ++imageRequest_;
    loading_ = false;
    path_.clear();
    error_.clear();
    note_.clear();
    tensor_.reset();
    histogram_ = {};
    geometry_ = {};
    sliceIndex_.clear();
    image_ = {};
    emit loaded();
}

void TensorDocument::open(const QString& path, AliasResolver resolveAlias) {
    resolveAlias_ = std::move(resolveAlias);
    path_ = path;
    note_.clear();
    startLoad(path, {});
}

void TensorDocument::startLoad(const QString& path, const QString& aliasData) {
    const quint64 request = ++loadRequest_;
    loading_ = true;
    error_.clear();
    emit loadStarted(path);
    const std::string file = path.toStdString(), dataFile = aliasData.toStdString();
    auto* watcher = new QFutureWatcher<std::shared_ptr<LoadResult>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, request] {
        finishLoad(request, watcher->result());
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run(backgroundPool(), [file, dataFile] {
        auto result = std::make_shared<LoadResult>();
        std::string error;
        auto tensor = analysis::loadTensorFile(file, &error);
        if (!tensor) {
            result->error = QString::fromStdString(error);
            return result;
        }
        if (!dataFile.empty() && !analysis::loadAliasedData(*tensor, dataFile, &error))
            result->error = QString::fromStdString(error);
        if (tensor->hasValues())
            result->histogram = analysis::computeHistogram(*tensor, kHistogramBins);
        result->tensor = std::make_shared<analysis::TensorData>(std::move(*tensor));
        return result;
    }));
}

void TensorDocument::fail(const QString& error) {
    loading_ = false;
    error_ = error;
    tensor_.reset();
    histogram_ = {};
    geometry_ = {};
    image_ = {};
    emit failed(error_);
}

void TensorDocument::finishLoad(quint64 request, const std::shared_ptr<LoadResult>& result) {
    if (request != loadRequest_) return;  // a newer open() superseded this one
    if (!result->tensor) {
        fail(result->error);
        return;
    }
    const auto& header = result->tensor->header;
    // Its first copy could not be read, or is no copy (header-only, the file itself): nothing to
    // draw, only why.
    if (header.headerOnly() && result->tensor->bytes.empty() && !result->error.isEmpty()) {
        fail(result->error);
        return;
    }
    // A header-only file: either a later appearance of data written before (load that copy),
    // or a kernel-level tensor skipped by filter_level 2 (it names itself).
    if (header.headerOnly() && result->tensor->bytes.empty() && result->error.isEmpty()) {
        const QString alias = QString::fromStdString(header.alias);
        if (alias != QFileInfo(path_).fileName()) {
            const QString dataPath = resolveAlias_ ? resolveAlias_(alias) : QString();
            // Said before the note is set ("the data was written once, in <this file>" beside
            // the error); loading it would fail alike (holdsDataOf).
            if (!dataPath.isEmpty() &&
                analysis::sameFile(dataPath.toStdString(), path_.toStdString())) {
                fail(QString::fromStdString(
                    analysis::namesItselfProblem(path_.toStdString(), alias.toStdString())));
                return;
            }
            if (!dataPath.isEmpty()) {
                note_ = QStringLiteral("De-duplicated file: the data was written once, in %1")
                            .arg(dataPath);
                startLoad(path_, dataPath);
                return;
            }
            note_ = QStringLiteral(
                        "De-duplicated file: its data is the first copy %1, which was not found in "
                        "this dump")
                        .arg(alias);
        } else {
            note_ = QStringLiteral(
                "Header only: this kernel-level tensor was not written (filter_level 2)");
        }
    }
    loading_ = false;
    error_ = result->error;
    tensor_ = result->tensor;
    histogram_ = result->histogram;
    geometry_ = analysis::sliceGeometry(header.dims);
    sliceIndex_.assign(geometry_.leadingDims.size(), 0);
    image_ = {};
    emit loaded();
    emit sliceChanged();
    renderImage();
}

uint64_t TensorDocument::sliceStart() const {
    return analysis::sliceStart(geometry_, sliceIndex_);
}

void TensorDocument::setSliceIndex(const std::vector<int64_t>& leading) {
    std::vector<int64_t> clamped(geometry_.leadingDims.size(), 0);
    for (size_t i = 0; i < clamped.size() && i < leading.size(); ++i)
        clamped[i] =
            std::clamp<int64_t>(leading[i], 0, std::max<int64_t>(geometry_.leadingDims[i] - 1, 0));
    if (clamped == sliceIndex_) return;
    sliceIndex_ = std::move(clamped);
    emit sliceChanged();
    renderImage();
}

void TensorDocument::setOverlay(Overlay overlay) {
    if (overlay == overlay_) return;
    overlay_ = overlay;
    renderImage();
}

void TensorDocument::renderImage() {
    if (!tensor_ || !tensor_->hasValues()) return;
    const quint64 request = ++imageRequest_;
    auto tensor = tensor_;
    const uint64_t start = sliceStart();
    const int64_t rows = geometry_.rows, cols = geometry_.cols;
    const Overlay overlay = overlay_;
    // Said only of a slice that takes a while to draw: small ones flickered as slices changed.
    if (const quint64 elements = static_cast<quint64>(rows) * static_cast<quint64>(cols);
        elements >= kSaidWhileDrawnFrom)
        emit imageStarted(elements);
    auto* watcher = new QFutureWatcher<SliceImage>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, request] {
        if (request == imageRequest_) {
            image_ = watcher->result();
            emit imageReady();
        }
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run(backgroundPool(), [tensor, start, rows, cols, overlay] {
        return renderSlice(*tensor, start, rows, cols, overlay);
    }));
}

SliceImage TensorDocument::renderSlice(const analysis::TensorData& tensor, uint64_t start,
                                       int64_t rows, int64_t cols, Overlay overlay, int maxSide) {
    SliceImage out;
    if (rows <= 0 || cols <= 0 || !tensor.hasValues()) return out;
    const uint64_t count = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
    out.summary = analysis::summarizeValues(tensor, start, count);
    out.lo = out.summary.min;
    out.hi = out.summary.max;
    const int64_t longest = std::max(rows, cols);
    out.blockSize = static_cast<int>((longest + maxSide - 1) / maxSide);
    const int block = out.blockSize;
    const int width = static_cast<int>((cols + block - 1) / block),
              height = static_cast<int>((rows + block - 1) / block);
    out.image = QImage(width, height, QImage::Format_RGB32);
    // In long double: near the largest double, hi - lo and a block's sum are beyond a double (a
    // float64 tensor of +-1e308 drew every value black), and subnormals keep their span.
    const long double lo = out.lo, span = static_cast<long double>(out.hi) - lo;
    const double negativeSpan = std::max(-out.lo, 1e-300);
    for (int y = 0; y < height; ++y) {
        auto* line = reinterpret_cast<QRgb*>(out.image.scanLine(y));
        for (int x = 0; x < width; ++x) {
            // A block shows its worst element: NaN, then Inf, else the mean of its values.
            bool nan = false, inf = false;
            long double sum = 0;
            int n = 0;
            for (int64_t r = int64_t(y) * block;
                 r < std::min<int64_t>(rows, int64_t(y + 1) * block); ++r)
                for (int64_t c = int64_t(x) * block;
                     c < std::min<int64_t>(cols, int64_t(x + 1) * block); ++c) {
                    const double v = tensor.at(start + static_cast<uint64_t>(r * cols + c));
                    if (std::isnan(v))
                        nan = true;
                    else if (std::isinf(v))
                        inf = true;
                    else {
                        sum += v;
                        ++n;
                    }
                }
            if (nan) {
                line[x] = kNanRgb;
                continue;
            }
            if (inf) {
                line[x] = kInfRgb;
                continue;
            }
            const long double mean = n ? sum / n : 0;
            const double v = static_cast<double>(mean);
            const double t = span > 0 ? static_cast<double>((mean - lo) / span) : 0.5;
            const int grey = std::clamp(static_cast<int>(std::lround(t * 255)), 0, 255);
            if (overlay == Overlay::NanInfNegative) {
                if (v < 0) {
                    const int blue =
                        90 + std::clamp(static_cast<int>(-v / negativeSpan * 165), 0, 165);
                    line[x] = qRgb(0, 0, blue);
                } else {
                    line[x] = qRgb(grey / 2, grey / 2, grey / 2);  // dimmed so the marks stand out
                }
            } else {
                line[x] = qRgb(grey, grey, grey);
            }
        }
    }
    return out;
}

}  // namespace probe::data
