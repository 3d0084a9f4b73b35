// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/tensor_view.h"

#include <algorithm>
#include <cmath>

#include "analysis/atb_dump.h"
#include "analysis/pt_tensor.h"
#include "probe/format/file_util.h"

namespace probe::analysis {
namespace {

template <typename T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Calls f(double) for elements [first, first + count), decoding per dtype outside the loop.
template <typename F>
void forEachValue(const TensorData& t, uint64_t first, uint64_t count, F&& f) {
    using format::DType;
    if (!t.hasValues()) return;
    const uint64_t end = std::min(t.count, first + count);
    const size_t size = format::dtypeSize(*t.dtype);
    if (t.bytes.size() < end * size) return;
    const uint8_t* base = t.bytes.data();
    auto loop = [&](auto decode) {
        for (uint64_t i = first; i < end; ++i) f(decode(base + i * size));
    };
    switch (*t.dtype) {
        case DType::Float:
            loop([](const uint8_t* p) { return double(load<float>(p)); });
            break;
        case DType::Double:
            loop([](const uint8_t* p) { return load<double>(p); });
            break;
        case DType::Float16:
            loop([](const uint8_t* p) { return double(format::halfToFloat(load<uint16_t>(p))); });
            break;
        case DType::BF16:
            loop([](const uint8_t* p) { return double(format::bf16ToFloat(load<uint16_t>(p))); });
            break;
        case DType::Int8:
            loop([](const uint8_t* p) { return double(load<int8_t>(p)); });
            break;
        case DType::UInt8:
            loop([](const uint8_t* p) { return double(load<uint8_t>(p)); });
            break;
        case DType::Int16:
            loop([](const uint8_t* p) { return double(load<int16_t>(p)); });
            break;
        case DType::UInt16:
            loop([](const uint8_t* p) { return double(load<uint16_t>(p)); });
            break;
        case DType::Int32:
            loop([](const uint8_t* p) { return double(load<int32_t>(p)); });
            break;
        case DType::UInt32:
            loop([](const uint8_t* p) { return double(load<uint32_t>(p)); });
            break;
        case DType::Int64:
            loop([](const uint8_t* p) { return double(load<int64_t>(p)); });
            break;
        case DType::UInt64:
            loop([](const uint8_t* p) { return double(load<uint64_t>(p)); });
            break;
        case DType::Bool:
            loop([](const uint8_t* p) { return *p ? 1.0 : 0.0; });
            break;
        case DType::Complex64:
            loop([](const uint8_t* p) { return double(load<float>(p)); });
            break;
        case DType::Complex128:
            loop([](const uint8_t* p) { return load<double>(p); });
            break;
    }
}

}  // namespace

std::string namesItselfProblem(const std::string& path, const std::string& alias) {
    return path + " names itself (" + alias +
           ") as the first copy of its data, but holds a header only: the dump is damaged";
}

bool sameFile(const std::string& a, const std::string& b) {
    if (a == b) return true;
    if (format::fileNameOf(a) != format::fileNameOf(b)) return false;
    const std::string resolved = format::resolvedPath(a);
    return !resolved.empty() && resolved == format::resolvedPath(b);
}

namespace {

// Whether `data`, the header of the file at `dataPath`, is that of the data of the header-only
// file at `path` (header `named`): another file, the same dtype and dims, and data of its own.
// Else false with the reason in `error`.
bool holdsDataOf(const format::BinHeader& data, const std::string& dataPath,
                 const format::BinHeader& named, const std::string& path, std::string* error) {
    if (sameFile(dataPath, path)) {  // named by its op's id as its own first copy
        if (error) *error = namesItselfProblem(path, named.alias);
        return false;
    }
    if (data.dtypeCode != named.dtypeCode || data.dims != named.dims) {
        if (error) *error = dataPath + " holds a different dtype or shape than " + path;
        return false;
    }
    if (data.headerOnly() || data.dataLength == 0) {
        if (error) *error = dataPath + " is itself header-only";
        return false;
    }
    return true;
}

}  // namespace

double TensorData::at(uint64_t i) const {
    double out = std::nan("");
    forEachValue(*this, i, 1, [&](double v) { out = v; });
    return out;
}

uint64_t TensorData::decode(uint64_t first, uint64_t count, double* out) const {
    uint64_t n = 0;
    forEachValue(*this, first, count, [&](double v) { out[n++] = v; });
    return n;
}

uint64_t TensorData::components() const {
    return dtype && format::dtypeIsComplex(*dtype) ? 2 * count : count;
}

uint64_t TensorData::decodeComponents(uint64_t first, uint64_t count, double* out) const {
    if (!dtype || !format::dtypeIsComplex(*dtype)) return decode(first, count, out);
    const uint64_t total = components();
    const bool single = *dtype == format::DType::Complex64;
    const size_t size = single ? sizeof(float) : sizeof(double);
    if (!hasValues() || bytes.size() < total * size || first >= total) return 0;
    const uint64_t n = std::min(count, total - first);
    const uint8_t* p = bytes.data() + first * size;
    for (uint64_t i = 0; i < n; ++i, p += size)
        out[i] = single ? double(load<float>(p)) : load<double>(p);
    return n;
}

std::string dtypeLabel(const TensorData& tensor) {
    return tensor.dtype ? format::dtypeName(*tensor.dtype)
                        : "dtype " + std::to_string(tensor.header.dtypeCode);
}

std::optional<TensorData> loadTensorFile(const std::string& path, std::string* error) {
    if (isPtTensorPath(path)) return loadPtTensorFile(path, error);  // the msprobe layout's tensors
    std::string why;
    auto file = format::readBinFile(path, &why);
    if (!file) {
        // A first line that is no header line: no tensor file at all (a readme.txt opened as
        // one was said only as "header line 1: no '=' in ...").
        const bool noHeader = why.rfind("header line 1:", 0) == 0;
        if (error)
            *error =
                path + ": " +
                (noHeader ? "not a tensor file (a .bin of an op-level dump, or a .pt): " : "") +
                why;
        return std::nullopt;
    }
    return decodeTensor(path, std::move(*file));
}

TensorData decodeTensor(const std::string& path, format::BinFile file) {
    TensorData t;
    t.path = path;
    t.header = std::move(file.header);
    t.bytes = std::move(file.data);
    t.dtype = format::dtypeFromCode(t.header.dtypeCode);
    t.count = format::elementCount(t.header.dims).value_or(0);
    if (t.hasValues()) t.stats = format::computeTensorStats(*t.dtype, t.bytes.data(), t.count);
    return t;
}

bool loadAliasedData(TensorData& tensor, const std::string& dataPath, std::string* error) {
    std::string why;
    auto file = format::readBinFile(dataPath, &why);
    if (!file) {
        if (error) *error = dataPath + ": " + why;
        return false;
    }
    if (!holdsDataOf(file->header, dataPath, tensor.header, tensor.path, error)) return false;
    tensor.bytes = std::move(file->data);
    tensor.dataFrom = dataPath;
    if (tensor.hasValues())
        tensor.stats = format::computeTensorStats(*tensor.dtype, tensor.bytes.data(), tensor.count);
    return true;
}

namespace {

// The file holding the data of the header-only file at `path`, which names `alias`: its first
// copy in the same round (findFirstCopy). "" when no data was kept (the file names itself, as
// filter_level 2 and skipped kernel tensors do), or when the copy is not there (said in
// `error`: it was left N/A without a word).
std::string dataFileOf(const std::string& path, const std::string& alias, bool followAlias,
                       std::string* error) {
    if (!followAlias) return {};
    if (alias == format::fileNameOf(path)) return {};
    const std::string first = findFirstCopy(path, alias);
    if (first.empty() && error)
        *error = path + ": its data is to be in " + alias +
                 ", which is not among the tensors of its round";
    return first;
}

}  // namespace

std::optional<TensorData> loadTensorValues(const std::string& path, bool followAlias,
                                           std::string* error) {
    auto tensor = loadTensorFile(path, error);
    if (!tensor) return std::nullopt;
    if (tensor->header.headerOnly()) {
        const std::string first = dataFileOf(path, tensor->header.alias, followAlias, error);
        if (first.empty() || !loadAliasedData(*tensor, first, error)) return std::nullopt;
    }
    if (!tensor->hasValues()) return std::nullopt;
    return tensor;
}

std::unique_ptr<TensorFileReader> TensorFileReader::open(const std::string& path, bool followAlias,
                                                         std::string* error) {
    std::unique_ptr<TensorFileReader> reader(new TensorFileReader);
    TensorData& whole = reader->whole_;
    if (isPtTensorPath(path)) {
        reader->pt_ = PtTensorReader::open(path, error);
        if (!reader->pt_) return nullptr;
        whole = reader->pt_->whole();
        if (!whole.dtype || whole.count == 0) return nullptr;
        return reader;
    }
    // The file opened once: its header read and checked, kept to read its data from unless it
    // is a header-only file naming another.
    std::string why;
    auto own = std::make_unique<format::BinReader>(path, &why);
    if (!own->header()) {
        if (error) *error = path + ": " + why;
        return nullptr;
    }
    const format::BinHeader& header = *own->header();
    whole.path = path;
    whole.header = header;
    whole.dtype = format::dtypeFromCode(header.dtypeCode);
    whole.count = format::elementCount(header.dims).value_or(0);
    if (!header.headerOnly()) {
        if (!whole.dtype || whole.count == 0) return nullptr;
        reader->bin_ = std::move(own);
        return reader;
    }
    const std::string dataPath = dataFileOf(path, header.alias, followAlias, error);
    if (dataPath.empty()) return nullptr;
    whole.dataFrom = dataPath;
    if (!whole.dtype || whole.count == 0) return nullptr;
    reader->bin_ = std::make_unique<format::BinReader>(dataPath, &why);
    const auto& data = reader->bin_->header();
    if (!data) {
        if (error) *error = dataPath + ": " + why;
        return nullptr;
    }
    if (!holdsDataOf(*data, dataPath, header, path, error)) return nullptr;
    return reader;
}

TensorFileReader::~TensorFileReader() = default;

bool TensorFileReader::read(uint64_t first, uint64_t count, TensorData& piece,
                            std::string* error) const {
    const size_t size = format::dtypeSize(dtype());
    if (first > whole_.count || count > whole_.count - first) {
        if (error) *error = whole_.path + ": elements past the end of the tensor asked for";
        return false;
    }
    piece.dtype = whole_.dtype;
    piece.count = count;
    std::string why;
    if (!format::allocateTensorData(piece.bytes, count * size, &why)) {
        if (error) *error = whole_.path + ": " + why;
        return false;
    }
    if (pt_) return pt_->read(first * size, count * size, piece.bytes.data(), error);
    if (bin_->read(first * size, piece.bytes.data(), count * size, &why)) return true;
    if (error) *error = (whole_.dataFrom.empty() ? whole_.path : whole_.dataFrom) + ": " + why;
    return false;
}

TensorFileStatistics::TensorFileStatistics(std::string path, bool followAlias,
                                           std::optional<std::string> rowShape)
    : path_(std::move(path)), rowShape_(std::move(rowShape)), followAlias_(followAlias) {}

TensorFileStatistics::~TensorFileStatistics() = default;

bool TensorFileStatistics::advance(uint64_t budget, const std::function<bool()>& keepGoing) {
    if (done_) return true;
    if (!reader_) {
        reader_ = TensorFileReader::open(path_, followAlias_, &error_);
        if (!reader_) return finish();
        if (rowShape_) {
            const auto dims = format::parseShapeString(*rowShape_);
            const auto expected = dims ? format::elementCount(*dims) : std::nullopt;
            if (expected && reader_->count() != *expected) {
                error_ = path_ + ": holds " + std::to_string(reader_->count()) +
                         " elements, where its row says shape " +
                         (rowShape_->empty() ? std::string("[] (a scalar)") : *rowShape_);
                return finish();
            }
        }
        stats_.emplace(reader_->dtype());
    }
    const size_t size = format::dtypeSize(reader_->dtype());
    const uint64_t perPiece = std::max<uint64_t>(kTensorPieceBytes / size, 1);
    uint64_t read = 0;
    TensorData piece;
    while (next_ < reader_->count() && (read == 0 || read < budget)) {
        const uint64_t n = std::min(perPiece, reader_->count() - next_);
        if (!reader_->read(next_, n, piece, &error_)) return finish();
        stats_->add(piece.bytes.data(), n);
        next_ += n;
        read += n * size;
        bytesRead_ += n * size;
        if (keepGoing && !keepGoing()) break;
    }
    if (next_ < reader_->count()) return false;
    if (stats_->result().valid) result_ = stats_->result();
    return finish();
}

bool TensorFileStatistics::finish() {
    done_ = true;
    reader_.reset();  // its file closed
    return true;
}

std::optional<format::TensorStats> statisticsOfTensorFile(const std::string& path, bool followAlias,
                                                          std::string* error,
                                                          const std::function<bool()>& keepGoing,
                                                          const std::string* rowShape) {
    TensorFileStatistics statistics(path, followAlias,
                                    rowShape ? std::optional(*rowShape) : std::nullopt);
    if (!statistics.advance(UINT64_MAX, keepGoing)) {
        if (error) *error = statistics.dataPath() + ": stopped";
        return std::nullopt;
    }
    if (error && !statistics.error().empty()) *error = statistics.error();
    return statistics.result();
}

uint64_t SliceGeometry::sliceCount() const {
    uint64_t n = 1;
    for (int64_t d : leadingDims) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    return n;
}

SliceGeometry sliceGeometry(const std::vector<int64_t>& dims) {
    SliceGeometry g;
    if (dims.size() == 1) g.cols = dims[0];
    if (dims.size() >= 2) {
        g.rows = dims[dims.size() - 2];
        g.cols = dims.back();
        g.leadingDims.assign(dims.begin(), dims.end() - 2);
    }
    return g;
}

uint64_t sliceStart(const SliceGeometry& g, const std::vector<int64_t>& leading) {
    uint64_t index = 0;
    for (size_t i = 0; i < g.leadingDims.size(); ++i) {
        const int64_t size = std::max<int64_t>(g.leadingDims[i], 1);
        const int64_t at = i < leading.size() ? std::clamp<int64_t>(leading[i], 0, size - 1) : 0;
        index = index * static_cast<uint64_t>(size) + static_cast<uint64_t>(at);
    }
    return index * static_cast<uint64_t>(std::max<int64_t>(g.rows, 0)) *
           static_cast<uint64_t>(std::max<int64_t>(g.cols, 0));
}

ValueSummary summarizeValues(const TensorData& tensor, uint64_t first, uint64_t count) {
    ValueSummary s;
    bool any = false;
    forEachValue(tensor, first, count, [&](double v) {
        if (std::isnan(v)) {
            ++s.nan;
            return;
        }
        if (std::isinf(v)) {
            ++(v > 0 ? s.posInf : s.negInf);
            return;
        }
        if (v < 0) ++s.negative;
        ++s.finite;
        if (!any) {
            s.min = s.max = v;
            any = true;
        } else {
            s.min = std::min(s.min, v);
            s.max = std::max(s.max, v);
        }
    });
    return s;
}

Histogram computeHistogram(const TensorData& tensor, int binCount) {
    Histogram h;
    const ValueSummary range = summarizeValues(tensor, 0, tensor.count);
    h.nan = range.nan;
    h.posInf = range.posInf;
    h.negInf = range.negInf;
    if (range.finite == 0 || binCount <= 0) return h;
    h.lo = range.min;
    h.hi = range.max;
    h.bins.assign(static_cast<size_t>(binCount), 0);
    const double width = h.hi - h.lo;
    forEachValue(tensor, 0, tensor.count, [&](double v) {
        if (!std::isfinite(v)) return;
        size_t bin = 0;
        if (width > 0)
            bin = std::min(static_cast<size_t>((v - h.lo) / width * binCount), h.bins.size() - 1);
        ++h.bins[bin];
    });
    return h;
}

}  // namespace probe::analysis
