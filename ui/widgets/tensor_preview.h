// Preview of one dumped tensor (.bin, or msprobe's .pt): header facts, statistics recomputed (and
// compared with the row that named the file), a heatmap of a 2-D slice with a NaN/Inf/negative
// overlay, a paged value table, a histogram, and export to .npy and .csv. SPDX-License-Identifier:
// GPL-3.0-or-later
#pragma once

#include <optional>

#include <QList>
#include <QWidget>

#include "analysis/dump_index.h"

class QCheckBox;
class QCPBars;
class QCPItemPixmap;
class QCustomPlot;
class QLabel;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;
class QHBoxLayout;

namespace probe::data {
class DumpStore;
class TensorDocument;
class TensorValuesModel;
}  // namespace probe::data

namespace probe::widgets {

class TensorPreview : public QWidget {
    Q_OBJECT
public:
    enum class Page { Heatmap, Values, Histogram };

    explicit TensorPreview(data::DumpStore* store, QWidget* parent = nullptr);

    // The tensor file of a statistic row (its recorded statistics are compared).
    void openRow(uint32_t row);
    // Any .bin or .pt file.
    void openFile(const QString& path);
    // Asks for a tensor file (.bin or .pt), starting in `folder`; "" when none was chosen.
    static QString chooseTensorFile(QWidget* parent, const QString& folder);
    void showPage(Page page);
    // The statistic row whose tensor is shown (kNone for a file opened by itself).
    uint32_t row() const { return row_; }
    void setOverlay(bool on);

    data::TensorDocument* document() const { return document_; }
    data::TensorValuesModel* valuesModel() const { return values_; }
    QCustomPlot* heatmap() const { return heatmap_; }
    QCustomPlot* histogramPlot() const { return histogram_; }
    QString histogramLegendText() const;
    QString factsText() const;
    QString heatmapReadout() const;
    QString heatmapLegendText() const;
    // Hover over the heatmap at a widget position of the heatmap plot.
    void hoverHeatmap(const QPoint& pos);

    // Write the tensor as a NumPy array or CSV; exported() says where.
    bool exportNpy(const QString& path, QString* error);
    bool exportCsv(const QString& path, QString* error);

signals:
    void exported(const QString& path);

private:
    void onLoaded();
    void onImage();
    void updateFacts();
    void updateHistogram();
    void rebuildSliceControls();
    void chooseExport(bool npy);

    data::DumpStore* store_;
    data::TensorDocument* document_;
    data::TensorValuesModel* values_;
    uint32_t row_ = analysis::kNone;
    QLabel* title_;
    QLabel* facts_;
    QLabel* note_;
    QWidget* sliceBar_;
    QHBoxLayout* sliceLayout_;
    QList<QSpinBox*> sliceSpins_;
    QCheckBox* overlay_;
    QPushButton* exportNpy_;
    QPushButton* exportCsv_;
    QTabWidget* tabs_;
    QCustomPlot* heatmap_;
    QCPItemPixmap* pixmap_ = nullptr;
    QLabel* heatmapLegend_;
    QLabel* heatmapReadout_;
    QTableView* table_;
    QSpinBox* page_;
    QLabel* pageLabel_;
    QCustomPlot* histogram_;
    QCPBars* bars_ = nullptr;
    QCheckBox* histogramLog_;
    QLabel* histogramLegend_;
};

}  // namespace probe::widgets
