// One tensor file opened for preview: read, statistics recomputed and a histogram made off the
// GUI thread; a 2-D slice rendered to an image (values in grey, NaN red, Inf green, and in the
// overlay mode negative values blue, as RenderDoc's texture viewer does). A newer request makes
// an older result stale. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <QImage>
#include <QObject>
#include <QString>

#include "analysis/tensor_view.h"

namespace probe::data {

// How a rendered slice shows a NaN and an infinity (qRgb: 0xAARRGGBB).
constexpr QRgb kNanRgb = 0xffe61414;
constexpr QRgb kInfRgb = 0xff14d228;

// A rendered slice: one pixel per element (or per block of elements for big slices).
struct SliceImage {
    QImage image;
    double lo = 0, hi = 0;  // grey range: finite min and max of the slice
    int blockSize = 1;      // elements per pixel side (1 unless the slice was too big)
    analysis::ValueSummary summary;
};

class TensorDocument : public QObject {
    Q_OBJECT
public:
    enum class Overlay { None, NanInfNegative };
    // Slices this big are said while they are drawn (imageStarted).
    static constexpr quint64 kSaidWhileDrawnFrom = quint64{1} << 22;
    // Maps a de-duplicated file's "data=" name to the file that holds the data ("" if unknown).
    using AliasResolver = std::function<QString(const QString& alias)>;

    explicit TensorDocument(QObject* parent = nullptr);

    void open(const QString& path, AliasResolver resolveAlias = {});
    void clear();

    bool isLoading() const { return loading_; }
    QString path() const { return path_; }
    QString error() const { return error_; }
    // A note for people about where the data came from or why there is none.
    QString note() const { return note_; }
    std::shared_ptr<const analysis::TensorData> tensor() const { return tensor_; }
    const analysis::Histogram& histogram() const { return histogram_; }

    analysis::SliceGeometry geometry() const { return geometry_; }
    const std::vector<int64_t>& sliceIndex() const { return sliceIndex_; }
    void setSliceIndex(const std::vector<int64_t>& leading);
    uint64_t sliceStart() const;
    Overlay overlay() const { return overlay_; }
    void setOverlay(Overlay overlay);
    const SliceImage& image() const { return image_; }

    // Renders one slice (exposed for tests): at most `maxSide` pixels on a side.
    static SliceImage renderSlice(const analysis::TensorData& tensor, uint64_t start, int64_t rows,
                                  int64_t cols, Overlay overlay, int maxSide = 2048);

signals:
    void loadStarted(const QString& path);
    void loaded();
    void failed(const QString& message);
    // A slice of kSaidWhileDrawnFrom elements or more is being drawn (imageReady follows).
    void imageStarted(quint64 elements);
    void imageReady();
    void sliceChanged();

private:
    struct LoadResult;
    void startLoad(const QString& path, const QString& aliasData);
    void finishLoad(quint64 request, const std::shared_ptr<LoadResult>& result);
    void fail(const QString& error);  // no tensor: `error` says why
    void renderImage();

    QString path_, error_, note_;
    bool loading_ = false;
    AliasResolver resolveAlias_;
    std::shared_ptr<const analysis::TensorData> tensor_;
    analysis::Histogram histogram_;
    analysis::SliceGeometry geometry_;
    std::vector<int64_t> sliceIndex_;
    Overlay overlay_ = Overlay::None;
    SliceImage image_;
    quint64 loadRequest_ = 0, imageRequest_ = 0;
};

}  // namespace probe::data
