// The values of the current 2-D slice of a tensor, a page of rows at a time (a slice may have
// millions of rows). Cells of NaN, Inf and, in the overlay mode, negative values are coloured
// as in the heatmap.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractTableModel>

namespace probe::analysis {
struct TensorData;
}

namespace probe::data {

class TensorDocument;

class TensorValuesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit TensorValuesModel(TensorDocument* document, QObject* parent = nullptr);

    static constexpr int kPageRows = 256;
    int page() const { return page_; }
    int pageCount() const;
    void setPage(int page);
    // Row of the slice shown at the table's first row.
    int64_t firstRow() const { return int64_t(page_) * kPageRows; }
    // Flat element index of a cell, or -1.
    int64_t elementAt(const QModelIndex& index) const;
    // An element as a cell shows it: "0.5", "nan", or a complex one's "3-4.5j".
    static QString elementText(const analysis::TensorData& tensor, uint64_t element);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

signals:
    void pageChanged(int page);

private:
    void reload();

    TensorDocument* document_;
    int page_ = 0;
    int rows_ = 0, cols_ = 0;
};

}  // namespace probe::data
