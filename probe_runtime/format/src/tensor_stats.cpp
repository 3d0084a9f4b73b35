// SPDX-License-Identifier: GPL-3.0-or-later
// Compiled with -O3 (see CMakeLists.txt) so that the lane loops below vectorise; the hot
// kernels are also built for AVX2 and picked at load time (target_clones).
#include "probe/format/tensor_stats.h"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace probe::format {
namespace {

float bitsToFloat(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

float halfToFloatSlow(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));  // inf/nan
    if (exponent == 0) {
        if (mantissa == 0) return bitsToFloat(sign);
        // Subnormal: normalise.
        exponent = 127 - 15 + 1;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            --exponent;
        }
        mantissa &= 0x3ffu;
        return bitsToFloat(sign | (exponent << 23) | (mantissa << 13));
    }
    return bitsToFloat(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

// 256 KiB table: a load per element beats bit twiddling, and needs no F16C.
const std::array<float, 65536>& halfTable() {
    static const auto* table = [] {
        auto* t = new std::array<float, 65536>();
        for (uint32_t i = 0; i < 65536; ++i) (*t)[i] = halfToFloatSlow(static_cast<uint16_t>(i));
        return t;
    }();
    return *table;
}

// Sixteen independent lanes: enough to hide the latency of the double additions, and what lets
// the compiler use 256-bit vectors. NaN is not counted per element (that defeats vectorising):
// a NaN makes the sum NaN, and only then is the data scanned again to count it.
constexpr int kLanes = 16;
constexpr uint64_t kBlock = 4096;  // elements converted at a time for fp16 / bf16

// Sums and sums of squares in double; max and min in the element type.
template <typename T>
struct Accumulator {
    double sum = 0, sumSq = 0;
    T max = -std::numeric_limits<T>::infinity();
    T min = std::numeric_limits<T>::infinity();
};
using FloatAccumulator = Accumulator<float>;
using DoubleAccumulator = Accumulator<double>;

// always_inline: inlined into each target clone below, so each is vectorised for its target.
template <typename T>
__attribute__((always_inline)) inline void accumulateLanes(const T* __restrict p, uint64_t count, Accumulator<T>& acc) {
    double sum[kLanes] = {}, sumSq[kLanes] = {};
    T mx[kLanes], mn[kLanes];
    for (int l = 0; l < kLanes; ++l) {
        mx[l] = acc.max;
        mn[l] = acc.min;
    }
    uint64_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
            const T x = p[i + l];
            // Comparisons with NaN are false: NaN never becomes the max or the min.
            mx[l] = x > mx[l] ? x : mx[l];
            mn[l] = x < mn[l] ? x : mn[l];
            const double d = x;
            sum[l] += d;
            sumSq[l] += d * d;
        }
    }
    for (; i < count; ++i) {
        const T x = p[i];
        mx[0] = x > mx[0] ? x : mx[0];
        mn[0] = x < mn[0] ? x : mn[0];
        const double d = x;
        sum[0] += d;
        sumSq[0] += d * d;
    }
    for (int l = 0; l < kLanes; ++l) {
        acc.sum += sum[l];
        acc.sumSq += sumSq[l];
        acc.max = mx[l] > acc.max ? mx[l] : acc.max;
        acc.min = mn[l] < acc.min ? mn[l] : acc.min;
    }
}

// The same loop built twice, for AVX2 and for any x86-64, picked when the library loads.
__attribute__((target_clones("avx2", "default")))
void accumulateFloats(const float* __restrict p, uint64_t count, FloatAccumulator& acc) {
    accumulateLanes(p, count, acc);
}

__attribute__((target_clones("avx2", "default")))
void accumulateDoubles(const double* __restrict p, uint64_t count, DoubleAccumulator& acc) {
    accumulateLanes(p, count, acc);
}

template <typename T>
uint64_t countNans(const T* p, uint64_t count) {
    uint64_t nans = 0;
    for (uint64_t i = 0; i < count; ++i) nans += std::isnan(p[i]) ? 1 : 0;
    return nans;
}

template <typename Value, typename Accumulator>
TensorStats finish(const Accumulator& acc, uint64_t count, uint64_t nans) {
    TensorStats s;
    s.valid = count > 0;
    s.count = count;
    s.nanCount = nans;
    const bool allNan = nans == count;
    s.hasPosInf = !allNan && std::isinf(acc.max) && acc.max > 0;
    s.hasNegInf = !allNan && std::isinf(acc.min) && acc.min < 0;
    if (nans) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        s.max = s.min = s.mean = s.norm = nan;
    } else {
        s.max = static_cast<double>(acc.max);
        s.min = static_cast<double>(acc.min);
        s.mean = acc.sum / static_cast<double>(count);
        s.norm = std::sqrt(acc.sumSq);
    }
    return s;
}

TensorStats statsOfFloats(const float* p, uint64_t count) {
    FloatAccumulator acc;
    accumulateFloats(p, count, acc);
    // A NaN (or +inf meeting -inf) leaves the sum NaN: only then count NaN for real.
    const uint64_t nans = std::isnan(acc.sum) ? countNans(p, count) : 0;
    return finish<float>(acc, count, nans);
}

TensorStats statsOfDoubles(const double* p, uint64_t count) {
    DoubleAccumulator acc;
    accumulateDoubles(p, count, acc);
    const uint64_t nans = std::isnan(acc.sum) ? countNans(p, count) : 0;
    return finish<double>(acc, count, nans);
}

// fp16 and bf16: widened to float a block at a time, then the float kernel.
__attribute__((target("avx2,f16c"))) void halfBlockF16c(const uint16_t* p, uint64_t n, float* out) {
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
    for (; i < n; ++i) out[i] = halfToFloat(p[i]);
}

void halfBlockTable(const uint16_t* p, uint64_t n, float* out) {
    const float* table = halfTable().data();
    for (uint64_t i = 0; i < n; ++i) out[i] = table[p[i]];
}

void bf16Block(const uint16_t* __restrict p, uint64_t n, float* __restrict out) {
    for (uint64_t i = 0; i < n; ++i) {
        const uint32_t bits = static_cast<uint32_t>(p[i]) << 16;
        std::memcpy(out + i, &bits, 4);
    }
}

template <typename Widen>
TensorStats statsOfWidened(const uint16_t* p, uint64_t count, Widen widen) {
    FloatAccumulator acc;
    std::vector<float> block(std::min<uint64_t>(count, kBlock));
    bool maybeNan = false;
    for (uint64_t i = 0; i < count; i += kBlock) {
        const uint64_t n = std::min<uint64_t>(kBlock, count - i);
        widen(p + i, n, block.data());
        FloatAccumulator part;
        accumulateFloats(block.data(), n, part);
        maybeNan = maybeNan || std::isnan(part.sum);
        acc.sum += part.sum;
        acc.sumSq += part.sumSq;
        acc.max = part.max > acc.max ? part.max : acc.max;
        acc.min = part.min < acc.min ? part.min : acc.min;
    }
    uint64_t nans = 0;
    if (maybeNan) {
        for (uint64_t i = 0; i < count; i += kBlock) {
            const uint64_t n = std::min<uint64_t>(kBlock, count - i);
            widen(p + i, n, block.data());
            nans += countNans(block.data(), n);
        }
    }
    return finish<float>(acc, count, nans);
}

template <typename T>
TensorStats accumulateInt(const void* data, uint64_t count) {
    std::array<T, kLanes> mx, mn;
    std::array<double, kLanes> sum{}, sumSq{};
    mx.fill(std::numeric_limits<T>::lowest());
    mn.fill(std::numeric_limits<T>::max());
    const auto* p = static_cast<const T*>(data);
    uint64_t i = 0;
    const uint64_t blocked = count - count % kLanes;
    for (; i < blocked; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
            const T x = p[i + l];
            mx[l] = x > mx[l] ? x : mx[l];
            mn[l] = x < mn[l] ? x : mn[l];
            const double d = static_cast<double>(x);
            sum[l] += d;
            sumSq[l] += d * d;
        }
    }
    for (; i < count; ++i) {
        const T x = p[i];
        mx[0] = x > mx[0] ? x : mx[0];
        mn[0] = x < mn[0] ? x : mn[0];
        const double d = static_cast<double>(x);
        sum[0] += d;
        sumSq[0] += d * d;
    }
    TensorStats s;
    s.valid = count > 0;
    s.count = count;
    T maxV = mx[0], minV = mn[0];
    double total = 0, totalSq = 0;
    for (int l = 0; l < kLanes; ++l) {
        maxV = mx[l] > maxV ? mx[l] : maxV;
        minV = mn[l] < minV ? mn[l] : minV;
        total += sum[l];
        totalSq += sumSq[l];
    }
    s.max = static_cast<double>(maxV);
    s.min = static_cast<double>(minV);
    s.mean = count ? total / static_cast<double>(count) : 0.0;
    s.norm = std::sqrt(totalSq);
    return s;
}

TensorStats accumulateBool(const void* data, uint64_t count) {
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t trues = 0;
    for (uint64_t i = 0; i < count; ++i) trues += p[i] != 0;
    TensorStats s;
    s.valid = count > 0;
    s.count = count;
    s.max = trues > 0 ? 1.0 : 0.0;       // any
    s.min = trues == count ? 1.0 : 0.0;  // all
    s.mean = count ? static_cast<double>(trues) / static_cast<double>(count) : 0.0;
    s.norm = std::sqrt(static_cast<double>(trues));
    return s;
}

}  // namespace

float halfToFloat(uint16_t bits) { return halfTable()[bits]; }

float bf16ToFloat(uint16_t bits) { return bitsToFloat(static_cast<uint32_t>(bits) << 16); }

namespace {
// CPUID rather than __builtin_cpu_supports("f16c"), which clang 14 (the fuzzing build) lacks.
bool cpuHasF16c() {
    static const bool has = [] {
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
    }();
    return has;
}
}  // namespace

TensorStats computeTensorStats(DType dtype, const void* data, uint64_t count) {
    if (count == 0 || data == nullptr) {
        TensorStats s;
        s.count = 0;
        return s;
    }
    switch (dtype) {
        case DType::Float: return statsOfFloats(static_cast<const float*>(data), count);
        case DType::Double: return statsOfDoubles(static_cast<const double*>(data), count);
        case DType::Float16:
            if (cpuHasF16c() && __builtin_cpu_supports("avx2"))
                return statsOfWidened(static_cast<const uint16_t*>(data), count, halfBlockF16c);
            return statsOfWidened(static_cast<const uint16_t*>(data), count, halfBlockTable);
        case DType::BF16: return statsOfWidened(static_cast<const uint16_t*>(data), count, bf16Block);
        case DType::Int8: return accumulateInt<int8_t>(data, count);
        case DType::UInt8: return accumulateInt<uint8_t>(data, count);
        case DType::Int16: return accumulateInt<int16_t>(data, count);
        case DType::UInt16: return accumulateInt<uint16_t>(data, count);
        case DType::Int32: return accumulateInt<int32_t>(data, count);
        case DType::UInt32: return accumulateInt<uint32_t>(data, count);
        case DType::Int64: return accumulateInt<int64_t>(data, count);
        case DType::UInt64: return accumulateInt<uint64_t>(data, count);
        case DType::Bool: return accumulateBool(data, count);
        case DType::Complex64:
        case DType::Complex128: break;
    }
    TensorStats s;
    s.count = count;
    return s;
}

// xxHash64 (public algorithm by Yann Collet), seed 0.
namespace {
constexpr uint64_t kP1 = 11400714785074694791ULL, kP2 = 14029467366897019727ULL,
                   kP3 = 1609587929392839161ULL, kP4 = 9650029242287828579ULL,
                   kP5 = 2870177450012600261ULL;
inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t read64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
inline uint32_t read32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline uint64_t round64(uint64_t acc, uint64_t input) {
    acc += input * kP2;
    acc = rotl(acc, 31);
    return acc * kP1;
}
inline uint64_t mergeRound(uint64_t acc, uint64_t val) {
    acc ^= round64(0, val);
    return acc * kP1 + kP4;
}
}  // namespace

uint64_t contentHash64(const void* data, uint64_t len) {
    const auto* p = static_cast<const uint8_t*>(data);
    const uint8_t* end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = kP1 + kP2, v2 = kP2, v3 = 0, v4 = 0 - kP1;
        const uint8_t* limit = end - 32;
        do {
            v1 = round64(v1, read64(p));
            v2 = round64(v2, read64(p + 8));
            v3 = round64(v3, read64(p + 16));
            v4 = round64(v4, read64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        h = mergeRound(h, v1);
        h = mergeRound(h, v2);
        h = mergeRound(h, v3);
        h = mergeRound(h, v4);
    } else {
        h = kP5;
    }
    h += len;
    while (p + 8 <= end) {
        h ^= round64(0, read64(p));
        h = rotl(h, 27) * kP1 + kP4;
        p += 8;
    }
    if (p + 4 <= end) {
        h ^= static_cast<uint64_t>(read32(p)) * kP1;
        h = rotl(h, 23) * kP2 + kP3;
        p += 4;
    }
    while (p < end) {
        h ^= (*p) * kP5;
        h = rotl(h, 11) * kP1;
        ++p;
    }
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
}

uint32_t crc32(const void* data, uint64_t nbytes, uint32_t crc) {
    // Slicing-by-one table CRC-32 (polynomial 0xEDB88320), identical to zlib's crc32().
    static const auto* table = [] {
        auto* t = new std::array<uint32_t, 256>();
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            (*t)[i] = c;
        }
        return t;
    }();
    const auto* p = static_cast<const uint8_t*>(data);
    crc = ~crc;
    for (uint64_t i = 0; i < nbytes; ++i) crc = (*table)[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

}  // namespace probe::format
