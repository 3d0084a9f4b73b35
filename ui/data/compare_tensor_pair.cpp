// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_tensor_pair.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "analysis/atb_dump.h"
#include "background_pool.h"

namespace probe::data {

namespace {

// A NaN or infinity that the other run does not have in the same place.
bool nonFiniteMismatch(double r, double c) {
    if (std::isnan(r) || std::isnan(c)) return std::isnan(r) != std::isnan(c);
    if (std::isinf(r) || std::isinf(c)) return r != c;
    return false;
}

}  // namespace

DifferenceImage renderDifference(const analysis::TensorData& reference,
                                 const analysis::TensorData& candidate, uint64_t start,
                                 int64_t rows, int64_t cols, bool relative, int maxSide) {
    DifferenceImage out;
    const uint64_t count = static_cast<uint64_t>(std::max<int64_t>(rows, 0)) *
                           static_cast<uint64_t>(std::max<int64_t>(cols, 0));
    if (!count || !reference.hasValues() || !candidate.hasValues() ||
        reference.count != candidate.count || start + count > reference.count)
        return out;
    auto differenceAt = [&](uint64_t i, bool* mismatch) {
        const double r = reference.at(i), c = candidate.at(i);
        *mismatch = nonFiniteMismatch(r, c);
        if (*mismatch || !std::isfinite(r) || !std::isfinite(c))
            return 0.0;  // alike non-finite: no difference
        const double d = std::fabs(c - r);
        if (!relative) return d;
        return d == 0 ? 0.0 : d / std::max(std::fabs(r), std::numeric_limits<double>::min());
    };
    // The range first, then the pixels.
    for (uint64_t i = start; i < start + count; ++i) {
        bool mismatch = false;
        const double d = differenceAt(i, &mismatch);
        if (std::isfinite(reference.at(i)) && std::isfinite(candidate.at(i))) ++out.finitePairs;
        if (mismatch) {
            ++out.nonFiniteMismatches;
        } else if (d > out.largest) {
            out.largest = d;
            out.largestAt = i;
        }
    }
    const int64_t longest = std::max(rows, cols);
    out.blockSize = static_cast<int>((longest + maxSide - 1) / maxSide);
    const int block = out.blockSize;
    const int width = static_cast<int>((cols + block - 1) / block),
              height = static_cast<int>((rows + block - 1) / block);
    out.image = QImage(width, height, QImage::Format_RGB32);
    for (int y = 0; y < height; ++y) {
        auto* line = reinterpret_cast<QRgb*>(out.image.scanLine(y));
        for (int x = 0; x < width; ++x) {
            bool anyMismatch = false;
            double worst = 0;
            for (int64_t r = int64_t(y) * block;
                 r < std::min<int64_t>(rows, int64_t(y + 1) * block); ++r)
                for (int64_t c = int64_t(x) * block;
                     c < std::min<int64_t>(cols, int64_t(x + 1) * block); ++c) {
                    bool mismatch = false;
                    worst = std::max(
                        worst,
                        differenceAt(start + static_cast<uint64_t>(r * cols + c), &mismatch));
                    anyMismatch |= mismatch;
                }
            if (anyMismatch) {
                line[x] = kNonFiniteMismatchRgb;
                continue;
            }
            // White (equal) to dark red (the largest difference).
            const double t = out.largest > 0 ? worst / out.largest : 0;
            const int fade = std::clamp(static_cast<int>(std::lround(t * 255)), 0, 255);
            line[x] = qRgb(255 - fade * 95 / 255, 255 - fade, 255 - fade);
        }
    }
    return out;
}

struct TensorPairDocument::Result {
    std::optional<analysis::TensorData> reference, candidate;
    std::string error;
    SliceImage referenceImage, candidateImage;
    DifferenceImage absolute, relative;
};

TensorPairDocument::TensorPairDocument(QObject* parent) : QObject(parent) {}

void TensorPairDocument::open(const analysis::DumpIndex& reference, uint32_t referenceRow,
                              const analysis::DumpIndex& candidate, uint32_t candidateRow) {
    const quint64 request = ++request_;
    loading_ = true;
    error_.clear();
    // The paths are found here, on the GUI thread that owns the indexes; the worker reads files.
    std::string error;
    const std::string referencePath = reference.tensorPath(referenceRow, &error);
    const std::string candidatePath =
        error.empty() ? candidate.tensorPath(candidateRow, &error) : std::string();
    if (referencePath.empty() || candidatePath.empty()) {
        loading_ = false;
        error_ = error.empty()
                     ? tr("One of the runs kept no tensor data for it (task \"statistics\")")
                     : QString::fromStdString(error);
        emit failed(error_);
        return;
    }
    auto result = std::make_shared<Result>();
    auto* watcher = new QFutureWatcher<void>(this);
    connect(watcher, &QFutureWatcher<void>::finished, this, [this, watcher, request, result] {
        watcher->deleteLater();
        if (request != request_) return;
        loading_ = false;
        if (!result->reference || !result->candidate) {
            error_ = result->error.empty() ? tr("One of the runs kept no tensor data for it")
                                           : QString::fromStdString(result->error);
            reference_.reset();
            candidate_.reset();
            emit failed(error_);
            return;
        }
        reference_ = std::make_shared<const analysis::TensorData>(std::move(*result->reference));
        candidate_ = std::make_shared<const analysis::TensorData>(std::move(*result->candidate));
        referenceImage_ = result->referenceImage;
        candidateImage_ = result->candidateImage;
        absolute_ = result->absolute;
        relativeImage_ = result->relative;
        emit loaded();
    });
    // The files are read on a worker, without the indexes (which the GUI thread grows): a
    // header-only copy is followed to the first copy beside it, as the preview does.
    watcher->setFuture(QtConcurrent::run(backgroundPool(), [result, referencePath, candidatePath] {
        auto read = [&](const std::string& path) -> std::optional<analysis::TensorData> {
            auto tensor = analysis::loadTensorValues(path, true, &result->error);
            if (!tensor && result->error.empty())
                result->error = path +
                                ": no values to compare (no data kept for it, a dtype this version "
                                "does not know, or no elements)";
            return tensor;
        };
        result->reference = read(referencePath);
        if (result->reference) result->candidate = read(candidatePath);
        if (!result->candidate) return;
        // The first slice of each, and of their difference both ways.
        const auto& ref = *result->reference;
        const auto& cand = *result->candidate;
        const auto geometry = analysis::sliceGeometry(cand.header.dims);
        using Overlay = TensorDocument::Overlay;
        result->referenceImage =
            TensorDocument::renderSlice(ref, 0, geometry.rows, geometry.cols, Overlay::None, 1024);
        result->candidateImage =
            TensorDocument::renderSlice(cand, 0, geometry.rows, geometry.cols, Overlay::None, 1024);
        result->absolute = renderDifference(ref, cand, 0, geometry.rows, geometry.cols, false);
        result->relative = renderDifference(ref, cand, 0, geometry.rows, geometry.cols, true);
    }));
}

void TensorPairDocument::clear() {
    ++request_;
    loading_ = false;
    error_.clear();
    reference_.reset();
    candidate_.reset();
    referenceImage_ = {};
    candidateImage_ = {};
    absolute_ = {};
    relativeImage_ = {};
}

void TensorPairDocument::setRelative(bool relative) {
    if (relative == relative_) return;
    relative_ = relative;
    if (reference_ && candidate_) emit loaded();
}

}  // namespace probe::data
