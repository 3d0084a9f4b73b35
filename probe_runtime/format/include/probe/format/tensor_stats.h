// Tensor statistics in one fused pass: max, min, mean and L2 norm.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include "probe/format/dtype.h"

namespace probe::format {

struct TensorStats {
    // False for an empty tensor or a dtype without an order (complex): the values are then
    // meaningless and written as N/A.
    bool valid = false;
    // As PyTorch reports them: a NaN anywhere makes all four NaN. For bool, max = any and
    // min = all. fp16/bf16 are widened to float, sums are accumulated in double.
    double max = 0, min = 0, mean = 0, norm = 0;
    uint64_t count = 0;     // elements
    uint64_t nanCount = 0;  // NaN elements
    // Whether +inf / -inf occur (independent of NaN).
    bool hasPosInf = false, hasNegInf = false;

    bool hasNan() const { return nanCount != 0; }
    bool hasInf() const { return hasPosInf || hasNegInf; }
};

// Statistics of `count` elements of `dtype` at `data` (row-major, little-endian, any alignment
// a C++ object of that type has). Never throws.
TensorStats computeTensorStats(DType dtype, const void* data, uint64_t count);

// Statistics of a tensor whose elements come in pieces, in order (format::BinReader): those
// computeTensorStats gives for the whole, but for the rounding of the mean and the norm, whose
// sums are combined piece by piece (one piece: computeTensorStats's to the bit). Never throws.
class TensorStatsAccumulator {
public:
    explicit TensorStatsAccumulator(DType dtype) : dtype_(dtype) {}
    void add(const void* data, uint64_t count);
    TensorStats result() const;

private:
    DType dtype_;
    TensorStats total_;
    TensorStats onlyPiece_;  // the first piece's, the result while it is the only one
    double sum_ = 0, sumOfSquares_ = 0;
    bool ordered_ = true;  // every piece had statistics (a complex piece has none)
};

// The kernels computeTensorStats picks from for Float, Float16 and BF16, the best the CPU has:
// all give the same bits (tests run each). AVX-512 needs avx512f, AVX2 needs avx2, f16c and fma.
enum class StatsKernel { Avx512, Avx2, Portable };
bool statsKernelAvailable(StatsKernel kernel);
// `dtype` is Float16 or BF16; `kernel` must be available.
TensorStats computeHalfStats(StatsKernel kernel, DType dtype, const void* data, uint64_t count);
// float32; `kernel` must be available.
TensorStats computeFloatStats(StatsKernel kernel, const float* data, uint64_t count);

// IEEE half and bfloat16 to float, exactly.
float halfToFloat(uint16_t bits);
float bf16ToFloat(uint16_t bits);

// A 64-bit content hash (xxHash64 algorithm, seed 0) used to recognise the same data
// appearing twice; not cryptographic.
uint64_t contentHash64(const void* data, uint64_t nbytes);

// CRC-32 as zlib computes it (the msprobe layout's "md5" field).
uint32_t crc32(const void* data, uint64_t nbytes, uint32_t crc = 0);

}  // namespace probe::format
