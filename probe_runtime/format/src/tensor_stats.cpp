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
#include <type_traits>
#include <vector>

#include <xxhash.h>
#include <zlib.h>

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

// Asks for the cache lines `prefetchDistance` bytes after the `bytes` a loop's iteration reads
// at `at` (a line per 64 bytes). Without it, on a large tensor, the loops waited on memory with
// few reads in flight on Intel (the hardware's prefetcher stops at each 4 KiB page, and a loop
// this long per cache line keeps few lines requested): float32 ran at 0.59x of a plain read of
// the memory, float16 and bfloat16 at 0.42x (one core of a Xeon VM); 2 KiB ahead, 1.0x and 0.9x.
// AMD's prefetcher needs no help, and 2 KiB ahead slowed float32 from 0.95x to 0.78x there
// (one core of an EPYC VM, AVX-512 and AVX2 alike); 512 bytes ahead was as fast as none. A
// prefetch never faults, past the tensor's end included, and changes no result.
size_t prefetchDistanceForThisCpu() {
    unsigned maxLeaf = 0, vendor[3] = {};
    if (__get_cpuid(0, &maxLeaf, &vendor[0], &vendor[2], &vendor[1]) == 0) return 2048;
    return std::memcmp(vendor, "AuthenticAMD", 12) == 0 ? 512 : 2048;
}
const size_t prefetchDistance = prefetchDistanceForThisCpu();

__attribute__((always_inline)) inline void prefetchAhead(const void* at, size_t bytes) {
    const char* ahead = static_cast<const char*>(at) + prefetchDistance;
    for (size_t line = 0; line < bytes; line += 64) __builtin_prefetch(ahead + line);
}

// One element into one lane. Comparisons with NaN are false: NaN never becomes the max or the
// min.
template <typename T>
__attribute__((always_inline)) inline void addToLane(T x, T& mx, T& mn, double& sum,
                                                     double& sumSq) {
    mx = x > mx ? x : mx;
    mn = x < mn ? x : mn;
    const double d = static_cast<double>(x);
    sum += d;
    sumSq += d * d;
}

// The lanes added into `acc` in lane order: the order every kernel's sums are defined by.
template <typename T>
__attribute__((always_inline)) inline void foldLanes(const double* sum, const double* sumSq,
                                                     const T* mx, const T* mn,
                                                     Accumulator<T>& acc) {
    for (int l = 0; l < kLanes; ++l) {
        acc.sum += sum[l];
        acc.sumSq += sumSq[l];
        acc.max = mx[l] > acc.max ? mx[l] : acc.max;
        acc.min = mn[l] < acc.min ? mn[l] : acc.min;
    }
}

// always_inline: inlined into each target clone below, so each is vectorised for its target.
template <typename T>
__attribute__((always_inline)) inline void accumulateLanes(const T* __restrict p, uint64_t count,
                                                           Accumulator<T>& acc) {
    double sum[kLanes] = {}, sumSq[kLanes] = {};
    T mx[kLanes], mn[kLanes];
    for (int l = 0; l < kLanes; ++l) {
        mx[l] = acc.max;
        mn[l] = acc.min;
    }
    uint64_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        prefetchAhead(p + i, kLanes * sizeof(T));
        for (int l = 0; l < kLanes; ++l) addToLane(p[i + l], mx[l], mn[l], sum[l], sumSq[l]);
    }
    for (; i < count; ++i) addToLane(p[i], mx[0], mn[0], sum[0], sumSq[0]);
    foldLanes(sum, sumSq, mx, mn, acc);
}

// The same loop built twice, for AVX2 and for any x86-64, picked when the library loads.
__attribute__((target_clones("avx2", "default"))) void accumulateFloats(const float* __restrict p,
                                                                        uint64_t count,
                                                                        FloatAccumulator& acc) {
    accumulateLanes(p, count, acc);
}

__attribute__((target_clones("avx2", "default"))) void accumulateDoubles(const double* __restrict p,
                                                                         uint64_t count,
                                                                         DoubleAccumulator& acc) {
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

TensorStats statsOfFloats(const float* p, uint64_t count,
                          void (*accumulate)(const float*, uint64_t, FloatAccumulator&)) {
    FloatAccumulator acc;
    accumulate(p, count, acc);
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

// fp16 and bf16: widened to float a block at a time, then the float kernel (the portable path).
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

// The end of a vector loop over the first i of n elements: the vectors as stored (element j of
// vector h at 8 * h + j) put back in lane order by laneOf, the remaining elements added to lane
// 0 (widened by `widen`), then the lanes added in order, as accumulateLanes does.
template <typename Element, float (*widen)(Element), int (*laneOf)(int, int)>
void finishLanes(const Element* p, uint64_t i, uint64_t n, const double* vecSum,
                 const double* vecSumSq, const float* vecMax, const float* vecMin,
                 FloatAccumulator& acc) {
    double laneSum[kLanes], laneSumSq[kLanes];
    float laneMax[kLanes], laneMin[kLanes];
    for (int h = 0; h < 2; ++h) {
        for (int j = 0; j < 8; ++j) {
            const int lane = laneOf(h, j);
            laneSum[lane] = vecSum[8 * h + j];
            laneSumSq[lane] = vecSumSq[8 * h + j];
            laneMax[lane] = vecMax[8 * h + j];
            laneMin[lane] = vecMin[8 * h + j];
        }
    }
    for (; i < n; ++i) addToLane(widen(p[i]), laneMax[0], laneMin[0], laneSum[0], laneSumSq[0]);
    foldLanes(laneSum, laneSumSq, laneMax, laneMin, acc);
}
float sameFloat(float x) {
    return x;
}

// The end of an AVX2 loop: its vectors (sums [2 * h + k]: elements 4k..4k+3 of x[h]; max and
// min [h]) stored in that order, then finishLanes.
template <typename Element, float (*widen)(Element), int (*laneOf)(int, int)>
__attribute__((target("avx2"))) void finishAvx2Lanes(const Element* p, uint64_t i, uint64_t n,
                                                     const __m256d* sum, const __m256d* sumSq,
                                                     const __m256* mx, const __m256* mn,
                                                     FloatAccumulator& acc) {
    alignas(32) double vecSum[16], vecSumSq[16];
    alignas(32) float vecMax[16], vecMin[16];
    for (int k = 0; k < 4; ++k) {
        _mm256_store_pd(vecSum + 4 * k, sum[k]);
        _mm256_store_pd(vecSumSq + 4 * k, sumSq[k]);
    }
    for (int h = 0; h < 2; ++h) {
        _mm256_store_ps(vecMax + 8 * h, mx[h]);
        _mm256_store_ps(vecMin + 8 * h, mn[h]);
    }
    finishLanes<Element, widen, laneOf>(p, i, n, vecSum, vecSumSq, vecMax, vecMin, acc);
}

// The fused kernels: float32, or fp16/bf16 widened on the way (no round trip through a block of
// floats), with AVX2 and FMA or with AVX-512. Their sums are those of accumulateLanes over the
// whole tensor (widened), to the bit: lane l takes elements l, l+16, ... , the remainder goes to
// lane 0, and the lanes are added in order. The square of a float is exact in double (24-bit
// mantissas), so a fused multiply-add rounds exactly as the multiply then add there. One loop per
// instruction set; only the load of sixteen elements differs with what is read.
enum class Source { Float32, Fp16, Bf16 };
template <Source kSource>
using SourceElement = std::conditional_t<kSource == Source::Float32, float, uint16_t>;
template <Source kSource>
constexpr auto widenOf() {  // an element of the source to float
    if constexpr (kSource == Source::Float32)
        return sameFloat;
    else if constexpr (kSource == Source::Bf16)
        return bf16ToFloat;
    else
        return halfToFloat;
}

// AVX2: sixteen elements as two vectors of floats. float32 and fp16: x[0] holds elements 0-7,
// x[1] 8-15. bf16: one 256-bit load, each half interleaved with zeros (bf16 << 16) within its
// 128-bit lanes, so x[0] holds elements 0-3 and 8-11, x[1] 4-7 and 12-15; laneOf() undoes that.
template <bool kBf16>
constexpr int laneOf(int h, int j) {  // element j of x[h]
    return kBf16 ? 4 * h + 8 * (j / 4) + j % 4 : 8 * h + j;
}

template <Source kSource>
__attribute__((target("avx2,f16c,fma"))) void accumulateAvx2(const SourceElement<kSource>* p,
                                                             uint64_t n, FloatAccumulator& acc) {
    __m256d sum[4], sumSq[4];  // [2 * h + k]: elements 4k..4k+3 of x[h]
    for (int k = 0; k < 4; ++k) sum[k] = sumSq[k] = _mm256_setzero_pd();
    __m256 mx[2] = {_mm256_set1_ps(acc.max), _mm256_set1_ps(acc.max)};
    __m256 mn[2] = {_mm256_set1_ps(acc.min), _mm256_set1_ps(acc.min)};
    uint64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        prefetchAhead(p + i, kLanes * sizeof(*p));
        __m256 x[2];
        if constexpr (kSource == Source::Float32) {
            x[0] = _mm256_loadu_ps(p + i);
            x[1] = _mm256_loadu_ps(p + i + 8);
        } else if constexpr (kSource == Source::Bf16) {
            const __m256i zero = _mm256_setzero_si256();
            const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
            x[0] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, h));
            x[1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, h));
        } else {
            x[0] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
            x[1] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 8)));
        }
        for (int h = 0; h < 2; ++h) {
            // max_ps(x, m) is x > m ? x : m, NaN included: as the scalar comparison.
            mx[h] = _mm256_max_ps(x[h], mx[h]);
            mn[h] = _mm256_min_ps(x[h], mn[h]);
            const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x[h]));
            const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x[h], 1));
            sum[2 * h] = _mm256_add_pd(sum[2 * h], lo);
            sum[2 * h + 1] = _mm256_add_pd(sum[2 * h + 1], hi);
            sumSq[2 * h] = _mm256_fmadd_pd(lo, lo, sumSq[2 * h]);
            sumSq[2 * h + 1] = _mm256_fmadd_pd(hi, hi, sumSq[2 * h + 1]);
        }
    }
    finishAvx2Lanes<SourceElement<kSource>, widenOf<kSource>(), laneOf<kSource == Source::Bf16>>(
        p, i, n, sum, sumSq, mx, mn, acc);
}

// AVX-512: the same lanes, eight doubles to a vector; sixteen elements are two vectors of eight
// floats y[0], y[1], each one vector of doubles. float32 and fp16: sixteen floats, elements 0-15
// in order (their max and min taken there), y[0] the low half, y[1] the high. bf16: the sixteen
// elements as eight 32-bit words, the low halves shifted up (elements 0, 2, ..., 14) and the high
// halves masked (1, 3, ..., 15): no shuffle.
template <bool kBf16>
constexpr int laneOf512(int h, int j) {  // element j of y[h]
    return kBf16 ? 2 * j + h : 8 * h + j;
}

// GCC 12's own AVX-512 intrinsics trip -Wmaybe-uninitialized (their undefined pass-through
// operand, `__m512 __Y = __Y`).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// The end of an AVX-512 loop: its sums (vector h: lanes laneOf(h, 0..7)) stored, then
// finishLanes with its max and min as stored by the caller.
template <typename Element, float (*widen)(Element), int (*laneOf)(int, int)>
__attribute__((target("avx512f"))) void finish512Lanes(const Element* p, uint64_t i, uint64_t n,
                                                       const __m512d* sum, const __m512d* sumSq,
                                                       const float* vecMax, const float* vecMin,
                                                       FloatAccumulator& acc) {
    alignas(64) double vecSum[16], vecSumSq[16];
    for (int h = 0; h < 2; ++h) {
        _mm512_store_pd(vecSum + 8 * h, sum[h]);
        _mm512_store_pd(vecSumSq + 8 * h, sumSq[h]);
    }
    finishLanes<Element, widen, laneOf>(p, i, n, vecSum, vecSumSq, vecMax, vecMin, acc);
}

template <Source kSource>
__attribute__((target("avx512f,avx2,f16c,fma"))) void accumulate512(const SourceElement<kSource>* p,
                                                                    uint64_t n,
                                                                    FloatAccumulator& acc) {
    constexpr bool kBf16 = kSource == Source::Bf16;
    const __m512d zero = _mm512_setzero_pd();
    __m512d sum[2] = {zero, zero}, sumSq[2] = {zero, zero};
    // float32, fp16: lanes 0-15 in one vector; bf16: y[h]'s lanes in mx[h].
    __m512 mx16 = _mm512_set1_ps(acc.max), mn16 = _mm512_set1_ps(acc.min);
    __m256 mx[2] = {_mm256_set1_ps(acc.max), _mm256_set1_ps(acc.max)};
    __m256 mn[2] = {_mm256_set1_ps(acc.min), _mm256_set1_ps(acc.min)};
    uint64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        prefetchAhead(p + i, kLanes * sizeof(*p));
        __m256 y[2];
        if constexpr (kBf16) {
            const __m256i highHalves = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
            y[0] = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
            y[1] = _mm256_castsi256_ps(_mm256_and_si256(w, highHalves));
            for (int h = 0; h < 2; ++h) {
                mx[h] = _mm256_max_ps(y[h], mx[h]);
                mn[h] = _mm256_min_ps(y[h], mn[h]);
            }
        } else {
            __m512 x;
            if constexpr (kSource == Source::Float32)
                x = _mm512_loadu_ps(p + i);
            else
                x = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
            mx16 = _mm512_max_ps(x, mx16);
            mn16 = _mm512_min_ps(x, mn16);
            y[0] = _mm512_castps512_ps256(x);
            y[1] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
        }
        for (int h = 0; h < 2; ++h) {
            const __m512d d = _mm512_cvtps_pd(y[h]);
            sum[h] = _mm512_add_pd(sum[h], d);
            sumSq[h] = _mm512_fmadd_pd(d, d, sumSq[h]);
        }
    }
    alignas(64) float vecMax[16], vecMin[16];
    if constexpr (kBf16) {
        for (int h = 0; h < 2; ++h) {
            _mm256_store_ps(vecMax + 8 * h, mx[h]);
            _mm256_store_ps(vecMin + 8 * h, mn[h]);
        }
    } else {
        _mm512_store_ps(vecMax, mx16);
        _mm512_store_ps(vecMin, mn16);
    }
    finish512Lanes<SourceElement<kSource>, widenOf<kSource>(), laneOf512<kBf16>>(
        p, i, n, sum, sumSq, vecMax, vecMin, acc);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// Portable: the block widened, then the float kernel.
template <typename Widen>
void accumulateWidenedBlock(const uint16_t* p, uint64_t n, float* block, FloatAccumulator& part,
                            Widen widen) {
    widen(p, n, block);
    accumulateFloats(block, n, part);
}

// `accumulate(p, n, block, part)` adds n elements to a fresh accumulator; `widen` converts them
// to floats (to count NaN, only when there is one).
template <typename Accumulate, typename Widen>
TensorStats statsOfWidened(const uint16_t* p, uint64_t count, Accumulate accumulate, Widen widen) {
    FloatAccumulator acc;
    std::vector<float> block(std::min<uint64_t>(count, kBlock));
    bool maybeNan = false;
    for (uint64_t i = 0; i < count; i += kBlock) {
        const uint64_t n = std::min<uint64_t>(kBlock, count - i);
        FloatAccumulator part;
        accumulate(p + i, n, block.data(), part);
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
    for (; i < blocked; i += kLanes)
        for (int l = 0; l < kLanes; ++l) addToLane(p[i + l], mx[l], mn[l], sum[l], sumSq[l]);
    for (; i < count; ++i) addToLane(p[i], mx[0], mn[0], sum[0], sumSq[0]);
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

float halfToFloat(uint16_t bits) {
    return halfTable()[bits];
}

float bf16ToFloat(uint16_t bits) {
    return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

namespace {
// CPUID rather than __builtin_cpu_supports("f16c"), which clang 14 (the fuzzing build) lacks.
bool cpuHasAvx2F16cFma() {
    static const bool has = [] {
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) && (ecx & bit_FMA) &&
               __builtin_cpu_supports("avx2");
    }();
    return has;
}

StatsKernel bestStatsKernel() {
    static const StatsKernel best = statsKernelAvailable(StatsKernel::Avx512) ? StatsKernel::Avx512
                                    : statsKernelAvailable(StatsKernel::Avx2)
                                        ? StatsKernel::Avx2
                                        : StatsKernel::Portable;
    return best;
}
}  // namespace

bool statsKernelAvailable(StatsKernel kernel) {
    switch (kernel) {
        case StatsKernel::Avx512:
            return cpuHasAvx2F16cFma() && __builtin_cpu_supports("avx512f");
        case StatsKernel::Avx2:
            return cpuHasAvx2F16cFma();
        case StatsKernel::Portable:
            return true;
    }
    return false;
}

TensorStats computeHalfStats(StatsKernel kernel, DType dtype, const void* data, uint64_t count) {
    const auto* p = static_cast<const uint16_t*>(data);
    const bool bf16 = dtype == DType::BF16;
    const auto widen = bf16 ? bf16Block : halfBlockTable;
    if (kernel != StatsKernel::Portable) {
        const auto fused =
            kernel == StatsKernel::Avx512
                ? (bf16 ? accumulate512<Source::Bf16> : accumulate512<Source::Fp16>)
                : (bf16 ? accumulateAvx2<Source::Bf16> : accumulateAvx2<Source::Fp16>);
        return statsOfWidened(
            p, count,
            [fused](const uint16_t* q, uint64_t n, float*, FloatAccumulator& part) {
                fused(q, n, part);
            },
            widen);
    }
    return statsOfWidened(
        p, count,
        [widen](const uint16_t* q, uint64_t n, float* block, FloatAccumulator& part) {
            accumulateWidenedBlock(q, n, block, part, widen);
        },
        widen);
}

TensorStats computeFloatStats(StatsKernel kernel, const float* data, uint64_t count) {
    return statsOfFloats(data, count,
                         kernel == StatsKernel::Avx512 ? accumulate512<Source::Float32>
                         : kernel == StatsKernel::Avx2 ? accumulateAvx2<Source::Float32>
                                                       : accumulateFloats);
}

void TensorStatsAccumulator::add(const void* data, uint64_t count) {
    if (count == 0) return;
    const TensorStats piece = computeTensorStats(dtype_, data, count);
    if (!piece.valid) ordered_ = false;
    const bool first = total_.count == 0;
    if (first) onlyPiece_ = piece;
    total_.count += count;
    total_.nanCount += piece.nanCount;
    total_.hasPosInf = total_.hasPosInf || piece.hasPosInf;
    total_.hasNegInf = total_.hasNegInf || piece.hasNegInf;
    if (!piece.valid || piece.hasNan()) return;  // a NaN makes the result NaN: nothing to add
    total_.max = first ? piece.max : std::max(total_.max, piece.max);
    total_.min = first ? piece.min : std::min(total_.min, piece.min);
    sum_ += piece.mean * static_cast<double>(count);
    sumOfSquares_ += piece.norm * piece.norm;
}

TensorStats TensorStatsAccumulator::result() const {
    if (onlyPiece_.count == total_.count) return onlyPiece_;  // to the bit, as computeTensorStats
    TensorStats s = total_;
    s.valid = ordered_ && s.count > 0;
    if (!s.valid) {
        s.max = s.min = s.mean = s.norm = 0;
    } else if (s.hasNan()) {
        s.max = s.min = s.mean = s.norm = std::numeric_limits<double>::quiet_NaN();
    } else {
        s.mean = sum_ / static_cast<double>(s.count);
        s.norm = std::sqrt(sumOfSquares_);
    }
    return s;
}

TensorStats computeTensorStats(DType dtype, const void* data, uint64_t count) {
    if (count == 0 || data == nullptr) {
        TensorStats s;
        s.count = 0;
        return s;
    }
    switch (dtype) {
        case DType::Float:
            return computeFloatStats(bestStatsKernel(), static_cast<const float*>(data), count);
        case DType::Double:
            return statsOfDoubles(static_cast<const double*>(data), count);
        case DType::Float16:
        case DType::BF16:
            return computeHalfStats(bestStatsKernel(), dtype, data, count);
        case DType::Int8:
            return accumulateInt<int8_t>(data, count);
        case DType::UInt8:
            return accumulateInt<uint8_t>(data, count);
        case DType::Int16:
            return accumulateInt<int16_t>(data, count);
        case DType::UInt16:
            return accumulateInt<uint16_t>(data, count);
        case DType::Int32:
            return accumulateInt<int32_t>(data, count);
        case DType::UInt32:
            return accumulateInt<uint32_t>(data, count);
        case DType::Int64:
            return accumulateInt<int64_t>(data, count);
        case DType::UInt64:
            return accumulateInt<uint64_t>(data, count);
        case DType::Bool:
            return accumulateBool(data, count);
        case DType::Complex64:
        case DType::Complex128:
            break;
    }
    TensorStats s;
    s.count = count;
    return s;
}

uint64_t contentHash64(const void* data, uint64_t len) {
    return XXH64(data, static_cast<size_t>(len), 0);
}

uint32_t crc32(const void* data, uint64_t nbytes, uint32_t crc) {
    return static_cast<uint32_t>(
        ::crc32_z(crc, static_cast<const Bytef*>(data), static_cast<size_t>(nbytes)));
}

}  // namespace probe::format
