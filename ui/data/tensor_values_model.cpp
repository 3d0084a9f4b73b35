// SPDX-License-Identifier: GPL-3.0-or-later
#include "tensor_values_model.h"

#include <algorithm>
#include <cmath>

#include <QColor>

#include "analysis/tensor_export.h"
#include "analysis/tensor_view.h"
#include "probe/format/dtype.h"
#include "tensor_document.h"

namespace probe::data {

TensorValuesModel::TensorValuesModel(TensorDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
    connect(document_, &TensorDocument::loaded, this, [this] {
        page_ = 0;
        reload();
    });
    connect(document_, &TensorDocument::failed, this, [this] { reload(); });
    connect(document_, &TensorDocument::sliceChanged, this, [this] { reload(); });
    connect(document_, &TensorDocument::imageReady, this, [this] {
        // The overlay mode may have changed: recolour the visible cells.
        if (rows_ > 0 && cols_ > 0)
            emit dataChanged(index(0, 0), index(rows_ - 1, cols_ - 1), {Qt::BackgroundRole});
    });
}

int TensorValuesModel::pageCount() const {
    const auto tensor = document_->tensor();
    if (!tensor || !tensor->hasValues()) return 0;
    const int64_t rows = document_->geometry().rows;
    return static_cast<int>((rows + kPageRows - 1) / kPageRows);
}

void TensorValuesModel::setPage(int page) {
    page = std::clamp(page, 0, std::max(0, pageCount() - 1));
    if (page == page_) return;
    page_ = page;
    reload();
    emit pageChanged(page_);
}

void TensorValuesModel::reload() {
    beginResetModel();
    const auto tensor = document_->tensor();
    if (!tensor || !tensor->hasValues()) {
        rows_ = cols_ = 0;
    } else {
        const auto g = document_->geometry();
        rows_ = static_cast<int>(std::clamp<int64_t>(g.rows - firstRow(), 0, kPageRows));
        cols_ = static_cast<int>(std::min<int64_t>(g.cols, 1 << 20));
    }
    endResetModel();
}

int64_t TensorValuesModel::elementAt(const QModelIndex& index) const {
    if (!index.isValid() || index.row() >= rows_ || index.column() >= cols_) return -1;
    const auto g = document_->geometry();
    return static_cast<int64_t>(document_->sliceStart()) + (firstRow() + index.row()) * g.cols +
           index.column();
}

int TensorValuesModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : rows_;
}

int TensorValuesModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : cols_;
}

namespace {

// Exact, as the .csv export writes it: seven digits showed two floats one ulp apart alike, and an
// index of eight digits as 1.234568e+07.
QString realText(const analysis::TensorData& tensor, double v) {
    std::string text;
    analysis::appendValueText(text, v, analysis::valuesFitFloat32(tensor));
    return QString::fromStdString(text);
}

bool isComplex(const analysis::TensorData& tensor) {
    return tensor.dtype && format::dtypeIsComplex(*tensor.dtype);
}

// An element's parts: {value, 0}, or a complex one's real and imaginary parts.
std::pair<double, double> partsOf(const analysis::TensorData& tensor, uint64_t element) {
    if (!isComplex(tensor)) return {tensor.at(element), 0.0};
    double parts[2] = {0, 0};
    tensor.decodeComponents(2 * element, 2, parts);
    return {parts[0], parts[1]};
}

}  // namespace

QString TensorValuesModel::elementText(const analysis::TensorData& tensor, uint64_t element) {
    const auto [real, imaginary] = partsOf(tensor, element);
    if (!isComplex(tensor)) {
        std::string text;
        analysis::appendElementText(text, tensor, element);
        return QString::fromStdString(text);
    }
    // As Python prints a complex number: 3+4j, 3-4.5j, nan+infj.
    const bool minus = !std::isnan(imaginary) && std::signbit(imaginary);
    return realText(tensor, real) + (minus ? QLatin1Char('-') : QLatin1Char('+')) +
           realText(tensor, std::abs(imaginary)) + QLatin1Char('j');
}

QVariant TensorValuesModel::data(const QModelIndex& index, int role) const {
    const int64_t element = elementAt(index);
    if (element < 0) return {};
    const auto tensor = document_->tensor();
    const auto [real, imaginary] = partsOf(*tensor, static_cast<uint64_t>(element));
    switch (role) {
        case Qt::DisplayRole:
            return elementText(*tensor, static_cast<uint64_t>(element));
        case Qt::TextAlignmentRole:
            return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::BackgroundRole:
            if (std::isnan(real) || std::isnan(imaginary)) return QColor(255, 190, 190);
            if (std::isinf(real) || std::isinf(imaginary)) return QColor(190, 255, 190);
            // A complex element by its real part, as the heatmap shows it.
            if (real < 0 && document_->overlay() == TensorDocument::Overlay::NanInfNegative)
                return QColor(200, 210, 255);
            return {};
        case Qt::ToolTipRole:
            if (isComplex(*tensor))
                return tr("element %1: real part %2, imaginary part %3")
                    .arg(element)
                    .arg(realText(*tensor, real), realText(*tensor, imaginary));
            return tr("element %1").arg(element);
        default:
            return {};
    }
}

QVariant TensorValuesModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole) return {};
    if (orientation == Qt::Vertical) return QString::number(firstRow() + section);
    return QString::number(section);
}

}  // namespace probe::data
