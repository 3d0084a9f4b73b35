// A dumped tensor (.bin) decoded for viewing: element access in any dtype, 2-D slices, value
// ranges and histograms. No Qt; the application runs these on a worker thread.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probe/format/dtype.h"
#include "probe/format/tensor_bin.h"
#include "probe/format/tensor_stats.h"

namespace probe::analysis {

class PtTensorReader;

struct TensorData {
    std::string path;
    format::BinHeader header;
    std::optional<format::DType> dtype;  // nullopt for a dtype code this version does not know
    std::vector<uint8_t> bytes;          // empty for a header-only file
    uint64_t count = 0;                  // elements, from dims
    format::TensorStats stats;           // recomputed from the bytes by the format library
    std::string dataFrom;                // a de-duplicated file: the first copy the data came from

    bool hasValues() const { return dtype.has_value() && !bytes.empty() && count > 0; }
    // Element i as a double (complex: its real part; bool: 0 or 1).
    double at(uint64_t i) const;
    // Elements [first, first + count) as doubles into `out` (as at() decodes them, the dtype
    // switch outside the loop); returns how many were written (fewer at the end of the data).
    uint64_t decode(uint64_t first, uint64_t count, double* out) const;
    // The real numbers the tensor holds: its elements, or a complex tensor's real and imaginary
    // parts (two per element, interleaved as stored).
    uint64_t components() const;
    // Components [first, first + count) as doubles into `out`; returns how many were written.
    uint64_t decodeComponents(uint64_t first, uint64_t count, double* out) const;
};

// Reads a .bin file and recomputes its statistics. A header-only file loads without bytes
// (header.alias says which file holds the data). nullopt with a message on any error.
std::optional<TensorData> loadTensorFile(const std::string& path, std::string* error);
// The same for a file already read and checked (format::readBinFile or parseBinFile).
TensorData decodeTensor(const std::string& path, format::BinFile file);
// Reads the data of `dataPath` for a header-only `tensor` (its dtype and dims must match).
bool loadAliasedData(TensorData& tensor, const std::string& dataPath, std::string* error);
// What is said of the header-only file at `path` whose first copy (`alias`) is itself.
std::string namesItselfProblem(const std::string& path, const std::string& alias);
// Whether the two paths name one file (a link, a relative path): only a file of the same name can.
bool sameFile(const std::string& a, const std::string& b);
// The tensor file at `path` with its values: a header-only .bin of an op-level dump
// (`followAlias`) is followed to the first copy it names (findFirstCopy). nullopt when it holds
// no values (no data kept, an unknown dtype, no elements); `error` set when a file could not be
// read.
std::optional<TensorData> loadTensorValues(const std::string& path, bool followAlias,
                                           std::string* error);
// What a reader of tensor files reads at once (statisticsOfTensorFile, a comparison's pair of
// tensors): one size for all, so that a tensor's statistics computed piece by piece are the same
// wherever they are computed.
constexpr uint64_t kTensorPieceBytes = 8u << 20;

// A tensor file's values read a piece at a time, from the disk as each piece is asked for, so
// that a tensor of gigabytes costs what is read at once: a .bin file (followed as
// loadTensorValues follows it), or a torch.save .pt file (the msprobe layout; a view saved with
// strides of its own is gathered whole as it opens: PtTensorReader).
class TensorFileReader {
public:
    // The tensor file at `path` with its values, only its header(s) read yet (a .bin). nullptr
    // when it holds no values (loadTensorValues's nullopt), with `error` set when a file could
    // not be read.
    static std::unique_ptr<TensorFileReader> open(const std::string& path, bool followAlias,
                                                  std::string* error);
    ~TensorFileReader();
    // The tensor as a whole, without its bytes: the file's header (dims, dtype code), dtype,
    // element count, path and dataFrom; its statistics are not known.
    const TensorData& whole() const { return whole_; }
    format::DType dtype() const { return *whole_.dtype; }
    uint64_t count() const { return whole_.count; }
    // Elements [first, first + count) into `piece`: its dtype, count and bytes (its memory kept
    // from piece to piece; header and statistics left as they are). false with the reason in
    // `error` when they could not be read or lie past the end.
    bool read(uint64_t first, uint64_t count, TensorData& piece, std::string* error) const;

private:
    TensorFileReader() = default;
    TensorData whole_;
    std::unique_ptr<format::BinReader> bin_;  // a .bin file's data file
    std::unique_ptr<PtTensorReader> pt_;      // or a .pt file
};

// The statistics of a tensor file (followed as loadTensorValues follows it), computed a piece at
// a time over as many calls of advance() as its size takes: a reader's poll gives it the bytes
// its budget has left, and reads new rows before the rest (a tensor of gigabytes held a poll
// of the app's for seconds). `rowShape`: as statisticsOfTensorFile's.
class TensorFileStatistics {
public:
    TensorFileStatistics(std::string path, bool followAlias,
                         std::optional<std::string> rowShape = std::nullopt);
    ~TensorFileStatistics();
    // Reads on until `budget` bytes are read (a piece at least), the end or an error, or
    // `keepGoing`, asked after each piece, says false. Returns whether it is done.
    bool advance(uint64_t budget, const std::function<bool()>& keepGoing = {});
    bool done() const { return done_; }
    // Once done: the statistics; nullopt when the file holds no values or none with an order,
    // or could not be read (error() says why then).
    const std::optional<format::TensorStats>& result() const { return result_; }
    const std::string& error() const { return error_; }
    uint64_t bytesRead() const { return bytesRead_; }
    // The file the data is read from (the first copy of a de-duplicated file once opened).
    const std::string& dataPath() const {
        return reader_ && !reader_->whole().dataFrom.empty() ? reader_->whole().dataFrom : path_;
    }

private:
    bool finish();
    std::string path_;
    std::optional<std::string> rowShape_;
    bool followAlias_;
    std::unique_ptr<TensorFileReader> reader_;
    std::optional<format::TensorStatsAccumulator> stats_;
    uint64_t next_ = 0, bytesRead_ = 0;  // the next element; bytes of data read so far
    bool done_ = false;
    std::optional<format::TensorStats> result_;
    std::string error_;
};

// The statistics of the tensor file at `path` (followed as loadTensorValues does), read a piece
// at a time (TensorFileStatistics): a .bin of gigabytes costs kTensorPieceBytes. nullopt when it
// holds no values or none with an order (complex); `error` set when a file could not be read.
// `keepGoing`, asked between pieces, may stop it (nullopt, `error` "stopped"). `rowShape`, when
// given, is the shape the file's row says ("1x64", "" for a scalar): a file holding another number
// of elements is another tensor, refused (said in `error`) before its data is read.
std::optional<format::TensorStats> statisticsOfTensorFile(
    const std::string& path, bool followAlias, std::string* error,
    const std::function<bool()>& keepGoing = {}, const std::string* rowShape = nullptr);

// The 2-D view of a tensor: its last two dims (a 1-D tensor is one row, a scalar 1x1); the
// leading dims pick which slice.
struct SliceGeometry {
    int64_t rows = 1, cols = 1;
    std::vector<int64_t> leadingDims;  // sizes of the dims before the last two
    uint64_t sliceCount() const;
};
SliceGeometry sliceGeometry(const std::vector<int64_t>& dims);
// Flat index of the first element of the slice at `leading` (clamped into range).
uint64_t sliceStart(const SliceGeometry& geometry, const std::vector<int64_t>& leading);

struct ValueSummary {
    double min = 0, max = 0;  // over finite values; 0 when there are none
    uint64_t finite = 0, nan = 0, posInf = 0, negInf = 0, negative = 0;
};
ValueSummary summarizeValues(const TensorData& tensor, uint64_t first, uint64_t count);

struct Histogram {
    double lo = 0, hi = 0;       // range of finite values
    std::vector<uint64_t> bins;  // equal-width bins over [lo, hi]
    uint64_t nan = 0, posInf = 0, negInf = 0;
    double binWidth() const {
        return bins.empty() ? 0 : (hi - lo) / static_cast<double>(bins.size());
    }
};
Histogram computeHistogram(const TensorData& tensor, int binCount);

// "float16", "dtype 99" for unknown codes.
std::string dtypeLabel(const TensorData& tensor);

}  // namespace probe::analysis
