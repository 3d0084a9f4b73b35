// Statistics of every dtype, checked against an independent straightforward computation.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "probe/format/overflow_rule.h"
#include "probe/format/tensor_stats.h"

using namespace probe::format;

namespace {

struct Reference {
    long double max, min, sum = 0, sumSq = 0;
    bool nan = false;
    uint64_t n = 0;
    void add(long double v) {
        if (std::isnan(v)) {
            nan = true;
            return;
        }
        if (n == 0 || v > max) max = v;
        if (n == 0 || v < min) min = v;
        sum += v;
        sumSq += v * v;
        ++n;
    }
};

// Half to float by its definition: (-1)^s * 2^(e-15) * 1.m, subnormals 2^-14 * 0.m.
double halfByDefinition(uint16_t h) {
    const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0x1f)
        v = m ? std::nan("") : INFINITY;
    else if (e == 0)
        v = std::ldexp(m / 1024.0, -14);
    else
        v = std::ldexp(1.0 + m / 1024.0, e - 15);
    return s ? -v : v;
}

void expectClose(double actual, long double expected, const char* what) {
    const long double tolerance = 1e-9L * std::max<long double>(1.0L, std::fabs(expected));
    EXPECT_NEAR(actual, static_cast<double>(expected), static_cast<double>(tolerance)) << what;
}

void expectMatches(const TensorStats& s, const Reference& r, uint64_t count) {
    ASSERT_TRUE(s.valid);
    EXPECT_EQ(s.count, count);
    if (r.nan) {
        EXPECT_TRUE(std::isnan(s.max) && std::isnan(s.min) && std::isnan(s.mean) &&
                    std::isnan(s.norm));
        return;
    }
    expectClose(s.max, r.max, "max");
    expectClose(s.min, r.min, "min");
    expectClose(s.mean, r.sum / static_cast<long double>(count), "mean");
    expectClose(s.norm, std::sqrt(r.sumSq), "norm");
}

template <typename T>
void checkInteger(DType dtype, uint64_t count) {
    std::mt19937_64 rng(static_cast<uint64_t>(dtype) * 7919 + count);
    std::vector<T> data(count);
    Reference ref;
    for (auto& v : data) {
        v = static_cast<T>(rng());
        ref.add(static_cast<long double>(v));
    }
    SCOPED_TRACE(dtypeName(dtype));
    expectMatches(computeTensorStats(dtype, data.data(), count), ref, count);
}

}  // namespace

TEST(TensorStats, EveryIntegerType) {
    for (uint64_t count : {1u, 7u, 8u, 9u, 1000u, 4099u}) {
        checkInteger<int8_t>(DType::Int8, count);
        checkInteger<uint8_t>(DType::UInt8, count);
        checkInteger<int16_t>(DType::Int16, count);
        checkInteger<uint16_t>(DType::UInt16, count);
        checkInteger<int32_t>(DType::Int32, count);
        checkInteger<uint32_t>(DType::UInt32, count);
        checkInteger<int64_t>(DType::Int64, count);
        checkInteger<uint64_t>(DType::UInt64, count);
    }
}

TEST(TensorStats, FloatAndDouble) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.5f, 3.0f);
    for (uint64_t count : {1u, 5u, 16u, 1023u, 100000u}) {
        std::vector<float> f(count);
        std::vector<double> d(count);
        Reference rf, rd;
        for (uint64_t i = 0; i < count; ++i) {
            f[i] = normal(rng);
            d[i] = static_cast<double>(normal(rng)) * 1e5;
            rf.add(f[i]);
            rd.add(d[i]);
        }
        expectMatches(computeTensorStats(DType::Float, f.data(), count), rf, count);
        expectMatches(computeTensorStats(DType::Double, d.data(), count), rd, count);
    }
}

TEST(TensorStats, HalfAndBf16AreWidenedExactly) {
    // Every half bit pattern, converted by its definition.
    for (uint32_t bits = 0; bits < 65536; ++bits) {
        const double expected = halfByDefinition(static_cast<uint16_t>(bits));
        const float got = halfToFloat(static_cast<uint16_t>(bits));
        if (std::isnan(expected))
            ASSERT_TRUE(std::isnan(got)) << bits;
        else
            ASSERT_EQ(static_cast<double>(got), expected) << bits;
    }
    std::mt19937 rng(2);
    for (uint64_t count : {3u, 64u, 5001u}) {
        std::vector<uint16_t> half(count), bf(count);
        Reference rh, rb;
        for (uint64_t i = 0; i < count; ++i) {
            do half[i] = static_cast<uint16_t>(rng());
            while (((half[i] >> 10) & 0x1f) == 0x1f);
            do bf[i] = static_cast<uint16_t>(rng());
            while (((bf[i] >> 7) & 0xff) == 0xff);
            rh.add(halfByDefinition(half[i]));
            uint32_t w = static_cast<uint32_t>(bf[i]) << 16;
            float fb;
            std::memcpy(&fb, &w, 4);
            rb.add(fb);
        }
        expectMatches(computeTensorStats(DType::Float16, half.data(), count), rh, count);
        expectMatches(computeTensorStats(DType::BF16, bf.data(), count), rb, count);
    }
}

TEST(TensorStats, BoolIsAnyAllFraction) {
    std::vector<uint8_t> mixed = {1, 0, 1, 1, 0, 0, 0, 1, 1};
    auto s = computeTensorStats(DType::Bool, mixed.data(), mixed.size());
    EXPECT_EQ(s.max, 1.0);
    EXPECT_EQ(s.min, 0.0);
    EXPECT_DOUBLE_EQ(s.mean, 5.0 / 9.0);
    EXPECT_DOUBLE_EQ(s.norm, std::sqrt(5.0));
    std::vector<uint8_t> all(10, 1);
    s = computeTensorStats(DType::Bool, all.data(), all.size());
    EXPECT_EQ(s.min, 1.0);
    std::vector<uint8_t> none(10, 0);
    s = computeTensorStats(DType::Bool, none.data(), none.size());
    EXPECT_EQ(s.max, 0.0);
    EXPECT_EQ(s.norm, 0.0);
}

TEST(TensorStats, NanPropagatesLikePyTorchInfIsKept) {
    for (size_t position : {0u, 5u, 17u}) {
        std::vector<float> v(20, 1.0f);
        v[position] = NAN;
        auto s = computeTensorStats(DType::Float, v.data(), v.size());
        EXPECT_TRUE(std::isnan(s.max) && std::isnan(s.min) && std::isnan(s.mean) &&
                    std::isnan(s.norm));
        EXPECT_EQ(s.nanCount, 1u);
    }
    std::vector<float> inf = {1.0f, INFINITY, -2.0f};
    auto s = computeTensorStats(DType::Float, inf.data(), inf.size());
    EXPECT_TRUE(std::isinf(s.max) && s.max > 0);
    EXPECT_EQ(s.min, -2.0);
    EXPECT_TRUE(std::isinf(s.mean));
    EXPECT_TRUE(std::isinf(s.norm));
    EXPECT_TRUE(s.hasPosInf);
    EXPECT_FALSE(s.hasNegInf);
    std::vector<float> both = {INFINITY, -INFINITY};
    s = computeTensorStats(DType::Float, both.data(), both.size());
    EXPECT_TRUE(std::isnan(s.mean));  // inf + -inf, as PyTorch's mean gives
    EXPECT_TRUE(s.hasPosInf && s.hasNegInf);
    std::vector<uint16_t> bf = {0x7fc0, 0x3f80};  // bf16 NaN, 1.0
    EXPECT_TRUE(std::isnan(computeTensorStats(DType::BF16, bf.data(), 2).max));
}

TEST(TensorStats, EmptyAndComplexAreNotApplicable) {
    float dummy = 0;
    EXPECT_FALSE(computeTensorStats(DType::Float, &dummy, 0).valid);
    float complex[4] = {1, 2, 3, 4};
    EXPECT_FALSE(computeTensorStats(DType::Complex64, complex, 2).valid);
}

TEST(TensorStats, HashAndCrc) {
    // zlib's crc32 of "123456789" is the standard check value 0xCBF43926.
    EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
    EXPECT_EQ(crc32("", 0), 0u);
    // xxHash64 reference values (seed 0).
    EXPECT_EQ(contentHash64("", 0), 0xEF46DB3751D8E999ull);
    EXPECT_EQ(contentHash64("a", 1), 0xD24EC4F1A98C6E5Bull);
    const std::string alphabet = "abcdefghijklmnopqrstuvwxyz";
    EXPECT_EQ(contentHash64(alphabet.data(), alphabet.size()), 0xCFE1F278FA89835Cull);
    std::vector<float> a(1000, 1.0f), b(1000, 1.0f);
    EXPECT_EQ(contentHash64(a.data(), 4000), contentHash64(b.data(), 4000));
    b[999] = 2.0f;
    EXPECT_NE(contentHash64(a.data(), 4000), contentHash64(b.data(), 4000));
}

namespace {

// The statistics of fp16/bf16 data as they have always been computed, to the bit: each element
// widened exactly, blocks of 4096, in each block sixteen double lanes (lane l takes elements l,
// l+16, ...; the remainder goes to lane 0) added in lane order, then the blocks added in order.
struct LaneReference {
    double sum = 0, sumSq = 0;
    float max = -INFINITY, min = INFINITY;
    bool nan = false;
};

// The lanes of the kernels, over blocks of kBlock elements each summed apart (fp16, bf16) or
// over the whole tensor (float32).
LaneReference laneReference(const std::vector<float>& widened, size_t kBlock = 4096) {
    LaneReference r;
    const size_t kLanes = 16;
    for (size_t start = 0; start < widened.size(); start += kBlock) {
        const size_t n = std::min(kBlock, widened.size() - start);
        double sum[16] = {}, sumSq[16] = {};
        float mx[16], mn[16];
        std::fill(mx, mx + 16, -INFINITY);
        std::fill(mn, mn + 16, INFINITY);
        const size_t full = n - n % kLanes;
        for (size_t i = 0; i < n; ++i) {
            const float x = widened[start + i];
            const size_t lane = i < full ? i % kLanes : 0;
            if (std::isnan(x)) r.nan = true;
            if (x > mx[lane]) mx[lane] = x;
            if (x < mn[lane]) mn[lane] = x;
            const double d = x;
            const volatile double square = d * d;  // rounded before it is added (no FMA)
            sum[lane] += d;
            sumSq[lane] += square;
        }
        double partSum = 0, partSumSq = 0;
        float partMax = -INFINITY, partMin = INFINITY;
        for (size_t l = 0; l < kLanes; ++l) {
            partSum += sum[l];
            partSumSq += sumSq[l];
            if (mx[l] > partMax) partMax = mx[l];
            if (mn[l] < partMin) partMin = mn[l];
        }
        r.sum += partSum;
        r.sumSq += partSumSq;
        if (partMax > r.max) r.max = partMax;
        if (partMin < r.min) r.min = partMin;
    }
    return r;
}

bool sameBits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

float bf16ByDefinition(uint16_t bits) {
    const uint32_t word = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &word, 4);
    return f;
}

// Every fp16/bf16 kernel this CPU has, each checked field by field against the lane order.
std::vector<StatsKernel> availableKernels() {
    std::vector<StatsKernel> kernels;
    for (const auto k : {StatsKernel::Avx512, StatsKernel::Avx2, StatsKernel::Portable})
        if (statsKernelAvailable(k)) kernels.push_back(k);
    return kernels;
}

const char* kernelName(StatsKernel k) {
    return k == StatsKernel::Avx512 ? "avx512" : k == StatsKernel::Avx2 ? "avx2" : "portable";
}

// Random data with what makes orders differ: subnormals, zeros of both signs, the largest finite
// values, and (by variant) +inf, -inf and both, NaN; either random bit patterns or a normal
// distribution (sums that round at every step). Sizes around the lane width and the block size.
std::vector<uint16_t> randomHalfData(bool bf16, uint64_t count, int variant, bool normal,
                                     std::mt19937& rng) {
    const std::vector<uint16_t> halfSpecials = {0x0001, 0x03ff, 0x8001, 0x83ff, 0x0000,
                                                0x8000, 0x7bff, 0xfbff, 0x0400};
    const std::vector<uint16_t> bf16Specials = {0x0001, 0x007f, 0x8001, 0x807f, 0x0000,
                                                0x8000, 0x7f7f, 0xff7f, 0x0080};
    const auto& specials = bf16 ? bf16Specials : halfSpecials;
    std::normal_distribution<float> gauss(0.25f, 2.0f);
    std::vector<uint16_t> data(count);
    for (uint64_t i = 0; i < count; ++i) {
        uint16_t v;
        if (rng() % 5 == 0) {
            v = specials[rng() % specials.size()];
        } else if (normal) {
            const float f = gauss(rng);
            uint32_t w;
            std::memcpy(&w, &f, 4);
            // bf16: the top half; fp16: the nearest below in magnitude, by its definition.
            v = bf16 ? static_cast<uint16_t>(w >> 16)
                     : static_cast<uint16_t>(
                           ((w >> 16) & 0x8000u) |
                           std::min<uint32_t>(
                               0x7bffu, (w & 0x7fffffffu) < 0x38800000u
                                            ? 0u
                                            : (((w & 0x7fffffffu) >> 13) - ((127u - 15u) << 10))));
        } else if (bf16) {
            do v = static_cast<uint16_t>(rng());
            while (((v >> 7) & 0xff) == 0xff);
        } else {
            do v = static_cast<uint16_t>(rng());
            while (((v >> 10) & 0x1f) == 0x1f);
        }
        data[i] = v;
    }
    if (variant == 1 || variant == 2) data[rng() % count] = bf16 ? 0x7f80 : 0x7c00;
    if (variant == 2) data[rng() % count] = bf16 ? 0xff80 : 0xfc00;
    if (variant == 3)
        for (int k = 0; k < 3; ++k) data[rng() % count] = bf16 ? 0xffc1 : 0x7e01;
    return data;
}

}  // namespace

TEST(TensorStats, HalfAndBf16StatisticsAreBitIdenticalToTheLaneOrder) {
    std::mt19937 rng(11);
    std::vector<uint64_t> counts = {1,   15,   16,   17,   31,   32,    33,
                                    100, 4095, 4096, 4097, 4111, 10003, 40000};
    for (int k = 0; k < 40; ++k) counts.push_back(1 + rng() % 20000);
    const auto kernels = availableKernels();
    for (const bool bf16 : {false, true}) {
        for (const uint64_t count : counts) {
            // finite, with +inf, with -inf and +inf, with NaN
            for (int variant = 0; variant < 4; ++variant) {
                for (const bool normal : {false, true}) {
                    const auto data = randomHalfData(bf16, count, variant, normal, rng);
                    std::vector<float> widened(count);
                    for (uint64_t i = 0; i < count; ++i)
                        widened[i] = bf16 ? bf16ByDefinition(data[i])
                                          : static_cast<float>(halfByDefinition(data[i]));
                    const LaneReference r = laneReference(widened);
                    const auto nans = static_cast<uint64_t>(std::count_if(
                        widened.begin(), widened.end(), [](float x) { return std::isnan(x); }));
                    const bool posInf = std::count(widened.begin(), widened.end(), INFINITY) > 0;
                    const bool negInf = std::count(widened.begin(), widened.end(), -INFINITY) > 0;
                    for (const auto kernel : kernels) {
                        const TensorStats s = computeHalfStats(
                            kernel, bf16 ? DType::BF16 : DType::Float16, data.data(), count);
                        SCOPED_TRACE(std::string(bf16 ? "bf16" : "fp16") + " count " +
                                     std::to_string(count) + " variant " + std::to_string(variant) +
                                     (normal ? " normal " : " bits ") + kernelName(kernel));
                        ASSERT_TRUE(s.valid);
                        ASSERT_EQ(s.count, count);
                        ASSERT_EQ(s.nanCount, nans);
                        if (nans) {
                            ASSERT_TRUE(r.nan);
                            ASSERT_TRUE(std::isnan(s.max) && std::isnan(s.min) &&
                                        std::isnan(s.mean) && std::isnan(s.norm));
                            ASSERT_FALSE(s.hasPosInf || s.hasNegInf);
                            continue;
                        }
                        // +inf and -inf together make the sum NaN, hence the mean (its bits
                        // are the machine's default NaN either way).
                        ASSERT_TRUE(sameBits(s.max, r.max)) << s.max << " vs " << r.max;
                        ASSERT_TRUE(sameBits(s.min, r.min)) << s.min << " vs " << r.min;
                        ASSERT_TRUE(sameBits(s.mean, r.sum / static_cast<double>(count))) << s.mean;
                        ASSERT_TRUE(sameBits(s.norm, std::sqrt(r.sumSq))) << s.norm;
                        ASSERT_EQ(s.hasPosInf, posInf);
                        ASSERT_EQ(s.hasNegInf, negInf);
                    }
                }
            }
        }
    }
}

// float32: every kernel this CPU has gives the bits of the lane order over the whole tensor,
// with subnormals, signed zeros, the largest finite values, infinities and NaN among the data.
TEST(TensorStats, FloatStatisticsAreBitIdenticalToTheLaneOrder) {
    std::mt19937 rng(12);
    std::vector<uint64_t> counts = {1, 15, 16, 17, 31, 32, 33, 100, 4095, 4097, 10003, 70001};
    for (int k = 0; k < 30; ++k) counts.push_back(1 + rng() % 20000);
    const std::vector<float> specials = {1e-45f,         -1e-45f, 1.1754942e-38f,
                                         0.0f,           -0.0f,   3.4028235e38f,
                                         -3.4028235e38f, 1e20f,   -1e-20f};
    std::normal_distribution<float> gauss(0.25f, 3.0f);
    const auto kernels = availableKernels();
    ASSERT_FALSE(kernels.empty());
    for (const uint64_t count : counts) {
        for (int variant = 0; variant < 4; ++variant) {
            std::vector<float> data(count);
            for (float& x : data)
                x = rng() % 5 == 0 ? specials[rng() % specials.size()] : gauss(rng);
            if (variant == 1 || variant == 2) data[rng() % count] = INFINITY;
            if (variant == 2) data[rng() % count] = -INFINITY;
            if (variant == 3) data[rng() % count] = std::nanf("");
            const LaneReference r = laneReference(data, SIZE_MAX);
            const auto nans = static_cast<uint64_t>(
                std::count_if(data.begin(), data.end(), [](float x) { return std::isnan(x); }));
            for (const auto kernel : kernels) {
                const TensorStats s = computeFloatStats(kernel, data.data(), count);
                SCOPED_TRACE("count " + std::to_string(count) + " variant " +
                             std::to_string(variant) + " " + kernelName(kernel));
                ASSERT_EQ(s.count, count);
                ASSERT_EQ(s.nanCount, nans);
                if (nans) {
                    ASSERT_TRUE(std::isnan(s.max) && std::isnan(s.mean));
                    continue;
                }
                ASSERT_TRUE(sameBits(s.max, r.max)) << s.max << " vs " << r.max;
                ASSERT_TRUE(sameBits(s.min, r.min)) << s.min << " vs " << r.min;
                ASSERT_TRUE(sameBits(s.mean, r.sum / static_cast<double>(count))) << s.mean;
                ASSERT_TRUE(sameBits(s.norm, std::sqrt(r.sumSq))) << s.norm;
                // The kernel computeTensorStats picks gives the same bits.
                const TensorStats picked = computeTensorStats(DType::Float, data.data(), count);
                ASSERT_TRUE(sameBits(picked.mean, s.mean) && sameBits(picked.norm, s.norm));
            }
        }
    }
}

TEST(TensorStats, HalfAndBf16NanIsCountedAndPropagates) {
    for (const bool bf16 : {false, true}) {
        for (uint64_t count : {1u, 17u, 4097u, 9000u}) {
            std::vector<uint16_t> data(count, bf16 ? 0x3f80 : 0x3c00);  // 1.0
            std::vector<uint64_t> at = {0, count / 2, count - 1};
            // A quiet and a signalling NaN (both are NaN to the statistics), and a negative one.
            const uint16_t nans[] = {static_cast<uint16_t>(bf16 ? 0x7fc0 : 0x7e00),
                                     static_cast<uint16_t>(bf16 ? 0x7f81 : 0x7c01),
                                     static_cast<uint16_t>(bf16 ? 0xffc0 : 0xfe00)};
            for (size_t k = 0; k < at.size(); ++k) data[at[k]] = nans[k];
            std::sort(at.begin(), at.end());
            const uint64_t distinct =
                static_cast<uint64_t>(std::unique(at.begin(), at.end()) - at.begin());
            const TensorStats s =
                computeTensorStats(bf16 ? DType::BF16 : DType::Float16, data.data(), count);
            SCOPED_TRACE(std::string(bf16 ? "bf16" : "fp16") + " count " + std::to_string(count));
            EXPECT_EQ(s.nanCount, distinct);
            EXPECT_TRUE(std::isnan(s.max) && std::isnan(s.min) && std::isnan(s.mean) &&
                        std::isnan(s.norm));
            EXPECT_FALSE(s.hasPosInf || s.hasNegInf);
        }
    }
}

// A tensor read in pieces (format::BinReader) has the statistics of the whole: max, min, the
// counts and the NaN/Inf facts exactly, mean and norm but for rounding (recomputed here in long
// double, element by element).
TEST(TensorStats, PiecesAddUpToTheWhole) {
    std::mt19937 random(7);
    std::normal_distribution<float> normal(0.5f, 3.0f);
    std::vector<float> values(10007);
    for (float& v : values) v = normal(random);
    auto inPieces = [](DType dtype, const uint8_t* data, size_t count, size_t element,
                       size_t pieceElements) {
        TensorStatsAccumulator stats(dtype);
        for (size_t at = 0; at < count; at += pieceElements)
            stats.add(data + at * element, std::min(pieceElements, count - at));
        return stats.result();
    };
    const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
    long double sum = 0, squares = 0;
    for (float v : values) {
        sum += v;
        squares += static_cast<long double>(v) * v;
    }
    const TensorStats whole = computeTensorStats(DType::Float, bytes, values.size());
    for (size_t piece : {size_t{1}, size_t{64}, size_t{1000}, values.size()}) {
        const TensorStats s = inPieces(DType::Float, bytes, values.size(), 4, piece);
        ASSERT_TRUE(s.valid) << piece;
        if (piece == values.size()) {  // one piece: computeTensorStats's to the bit
            EXPECT_EQ(s.mean, whole.mean);
            EXPECT_EQ(s.norm, whole.norm);
        }
        EXPECT_EQ(s.count, values.size());
        EXPECT_EQ(s.max, *std::max_element(values.begin(), values.end()));
        EXPECT_EQ(s.min, *std::min_element(values.begin(), values.end()));
        EXPECT_NEAR(s.mean, static_cast<double>(sum / values.size()), 1e-12) << piece;
        EXPECT_NEAR(s.norm, static_cast<double>(std::sqrt(squares)), 1e-9) << piece;
    }
    // A NaN in one piece makes all four NaN; an Inf in another is kept as such.
    values[5000] = std::numeric_limits<float>::quiet_NaN();
    values[9000] = -std::numeric_limits<float>::infinity();
    const TensorStats nan = inPieces(DType::Float, bytes, values.size(), 4, 1000);
    EXPECT_TRUE(nan.valid);
    EXPECT_EQ(nan.nanCount, 1u);
    EXPECT_TRUE(nan.hasNegInf);
    EXPECT_FALSE(nan.hasPosInf);
    EXPECT_TRUE(std::isnan(nan.max) && std::isnan(nan.min) && std::isnan(nan.mean) &&
                std::isnan(nan.norm));
    // Integers and bools, piece by piece as whole.
    const std::vector<int64_t> ints = {5, -9, 12, 0, 3, 7, -1};
    const TensorStats i =
        inPieces(DType::Int64, reinterpret_cast<const uint8_t*>(ints.data()), ints.size(), 8, 3);
    EXPECT_EQ(i.max, 12);
    EXPECT_EQ(i.min, -9);
    EXPECT_DOUBLE_EQ(i.mean, 17.0 / 7);
    EXPECT_DOUBLE_EQ(i.norm, std::sqrt(309.0));
    const std::vector<uint8_t> bools = {0, 0, 1, 0};
    const TensorStats b = inPieces(DType::Bool, bools.data(), bools.size(), 1, 2);
    EXPECT_EQ(b.max, 1);  // any
    EXPECT_EQ(b.min, 0);  // all
    EXPECT_DOUBLE_EQ(b.mean, 0.25);
    // Nothing added, or complex data: no statistics.
    EXPECT_FALSE(TensorStatsAccumulator(DType::Float).result().valid);
    const std::vector<float> complex = {1, 2, 3, 4};
    EXPECT_FALSE(
        inPieces(DType::Complex64, reinterpret_cast<const uint8_t*>(complex.data()), 2, 8, 1)
            .valid);
}

// +inf and -inf together make the mean NaN without any NaN element: the overflow rule tells them
// from a NaN by the extremes, which a NaN makes NaN (the statistics as written, read back).
TEST(TensorStats, InfAndMinusInfAreNoNanToTheOverflowRule) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
    const auto reason = [](const std::vector<float>& values) {
        const auto s = computeTensorStats(DType::Float, values.data(), values.size());
        return overflowReason(s.max, s.min, statisticsShowNan(s.max, s.min, s.mean));
    };
    EXPECT_EQ(reason({inf, -inf, 1.0f}), "max=inf min=-inf");
    EXPECT_EQ(reason({inf, -inf, nan}), "nan");
    EXPECT_EQ(reason({1.0f, nan}), "nan");
    EXPECT_EQ(reason({inf, 1.0f}), "max=inf");
    EXPECT_EQ(reason({1.0f, 2.0f}), "");
    // Statistics of another tool that leaves NaN out of the extremes: its NaN mean is a NaN.
    EXPECT_TRUE(statisticsShowNan(2.0, 1.0, std::nan("")));
}
