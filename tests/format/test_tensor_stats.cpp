// Statistics of every dtype, checked against an independent straightforward computation.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

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
    if (e == 0x1f) v = m ? std::nan("") : INFINITY;
    else if (e == 0) v = std::ldexp(m / 1024.0, -14);
    else v = std::ldexp(1.0 + m / 1024.0, e - 15);
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
        EXPECT_TRUE(std::isnan(s.max) && std::isnan(s.min) && std::isnan(s.mean) && std::isnan(s.norm));
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
            do half[i] = static_cast<uint16_t>(rng()); while (((half[i] >> 10) & 0x1f) == 0x1f);
            do bf[i] = static_cast<uint16_t>(rng()); while (((bf[i] >> 7) & 0xff) == 0xff);
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
        EXPECT_TRUE(std::isnan(s.max) && std::isnan(s.min) && std::isnan(s.mean) && std::isnan(s.norm));
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
