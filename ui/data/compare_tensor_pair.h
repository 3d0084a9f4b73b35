// One compared tensor in both runs, for the tensor pair view: both files read off the GUI
// thread (.bin or .pt), the first 2-D slice of each rendered as the tensor preview renders it,
// and their difference, absolute |cand - ref| or relative |cand - ref| / |ref|, rendered white
// (equal) to dark red (the largest difference), with elements that are NaN or infinite in one
// run and not alike in the other in a colour of their own. A newer request makes an older
// result stale. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>

#include <QObject>
#include <QString>

#include "analysis/dump_index.h"
#include "analysis/tensor_view.h"
#include "tensor_document.h"

namespace probe::data {

// The colour of an element whose NaN/Inf does not match the other run's.
constexpr QRgb kNonFiniteMismatchRgb = 0xffd000d0;

struct DifferenceImage {
    QImage image;
    double largest = 0;      // the largest finite difference in the slice (white..red range)
    uint64_t largestAt = 0;  // its flat index in the tensor
    uint64_t nonFiniteMismatches = 0;
    uint64_t finitePairs = 0;  // elements finite in both runs: what `largest` is over
    int blockSize = 1;
};
// The difference of two tensors of the same element count over one slice (a block of elements
// shows its largest difference; a mismatching NaN/Inf wins).
DifferenceImage renderDifference(const analysis::TensorData& reference,
                                 const analysis::TensorData& candidate, uint64_t start,
                                 int64_t rows, int64_t cols, bool relative, int maxSide = 1024);

class TensorPairDocument : public QObject {
    Q_OBJECT
public:
    explicit TensorPairDocument(QObject* parent = nullptr);

    // The tensors of the reference's `referenceRow` and the shown dump's `candidateRow` (their
    // paths are taken now; the files are read and rendered on a worker).
    void open(const analysis::DumpIndex& reference, uint32_t referenceRow,
              const analysis::DumpIndex& candidate, uint32_t candidateRow);
    void clear();
    void setRelative(bool relative);
    bool relative() const { return relative_; }

    bool isLoading() const { return loading_; }
    QString error() const { return error_; }
    const SliceImage& referenceImage() const { return referenceImage_; }
    const SliceImage& candidateImage() const { return candidateImage_; }
    // The difference as setRelative() chose.
    const DifferenceImage& difference() const { return relative_ ? relativeImage_ : absolute_; }
    std::shared_ptr<const analysis::TensorData> reference() const { return reference_; }
    std::shared_ptr<const analysis::TensorData> candidate() const { return candidate_; }

signals:
    void loaded();
    void failed(const QString& message);

private:
    struct Result;

    quint64 request_ = 0;
    bool loading_ = false, relative_ = false;
    QString error_;
    std::shared_ptr<const analysis::TensorData> reference_, candidate_;
    SliceImage referenceImage_, candidateImage_;
    DifferenceImage absolute_, relativeImage_;
};

}  // namespace probe::data
