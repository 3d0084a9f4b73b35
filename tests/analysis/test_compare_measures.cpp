// The measures and the noise floor of one tensor's comparison (compare_measures.h), on tensors
// built here; every expected number is recomputed in this file in long double from the
// definitions (msprobe's npy_compare.py and CalcStatsDiff, docs/compare.md).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "analysis/compare_measures.h"

namespace probe::analysis {
namespace {

using format::DType;
using LD = long double;

// A tensor of raw elements of type T.
template <typename T>
TensorData tensorOf(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
    TensorData t;
    t.path = "test";
    t.dtype = dtype;
    t.header.dtypeCode = static_cast<int32_t>(dtype);
    t.header.dims = std::move(dims);
    t.count = values.size();
    t.bytes.resize(values.size() * sizeof(T));
    for (size_t i = 0; i < values.size(); ++i)
        std::memcpy(t.bytes.data() + i * sizeof(T), &values[i], sizeof(T));
    return t;
}
TensorData floats(const std::vector<float>& v, const std::vector<int64_t>& dims) {
    return tensorOf(DType::Float, dims, v);
}
TensorData floats(const std::vector<float>& v) {
    return floats(v, {static_cast<int64_t>(v.size())});
}

// IEEE binary16 and bfloat16 decoded from their bits by the formula, independently of the
// format library.
LD decode16(uint16_t bits, int exponentBits, int mantissaBits) {
    const int bias = (1 << (exponentBits - 1)) - 1;
    const int e = (bits >> mantissaBits) & ((1 << exponentBits) - 1);
    const LD m = bits & ((1 << mantissaBits) - 1);
    const LD sign = (bits >> 15) ? -1 : 1;
    if (e == (1 << exponentBits) - 1)
        return m ? std::numeric_limits<LD>::quiet_NaN() : sign * INFINITY;
    if (e == 0) return sign * std::ldexp(m / (1 << mantissaBits), 1 - bias);
    return sign * std::ldexp(1 + m / (1 << mantissaBits), e - bias);
}
LD half(uint16_t bits) {
    return decode16(bits, 5, 10);
}
LD bf16(uint16_t bits) {
    return decode16(bits, 8, 7);
}

// msprobe's measures, recomputed from the definitions: NaN/Inf in the same places become 0.
struct Expected {
    LD cosine, euclidean, maxAbs, maxRel, below1, below5;
};
Expected expectedMeasures(const std::vector<LD>& r, const std::vector<LD>& c, LD eps) {
    LD dot = 0, na = 0, nb = 0, sq = 0, maxAbs = 0, maxRel = 0, below1 = 0, below5 = 0;
    for (size_t i = 0; i < r.size(); ++i) {
        LD x = r[i], y = c[i];
        if (!std::isfinite(x)) x = y = 0;
        dot += x * y;
        na += x * x;
        nb += y * y;
        sq += (y - x) * (y - x);
        maxAbs = std::max(maxAbs, std::fabs(y - x));
        const LD rel = x == 0 ? std::fabs(y) / eps : std::fabs((y - x) / x);
        maxRel = std::max(maxRel, rel);
        below1 += rel < 0.001L;
        below5 += rel < 0.005L;
    }
    const LD n = static_cast<LD>(r.size());
    return {dot / std::sqrt(na * nb), std::sqrt(sq), maxAbs, maxRel, below1 / n, below5 / n};
}

TEST(CompareMeasures, DtypeConstants) {
    EXPECT_EQ(machineEpsilon(DType::Float), std::ldexp(1.0, -23));
    EXPECT_EQ(machineEpsilon(DType::Double), DBL_EPSILON);
    EXPECT_EQ(machineEpsilon(DType::Float16), std::ldexp(1.0, -10));
    EXPECT_EQ(machineEpsilon(DType::BF16), std::ldexp(1.0, -7));
    EXPECT_EQ(machineEpsilon(DType::Int64), 0.0);
    EXPECT_EQ(machineEpsilon(DType::Bool), 0.0);
    EXPECT_EQ(smallestNormal(DType::Float), FLT_MIN);
    EXPECT_EQ(smallestNormal(DType::Double), DBL_MIN);
    EXPECT_EQ(smallestNormal(DType::Float16), static_cast<double>(half(0x0400)));
    EXPECT_EQ(smallestNormal(DType::BF16), static_cast<double>(bf16(0x0080)));
    // ulp: the spacing at x, the smallest subnormal at and below the normal range.
    EXPECT_EQ(ulpOf(DType::Float, 1.0), std::ldexp(1.0, -23));
    EXPECT_EQ(ulpOf(DType::Float, 1.5), std::ldexp(1.0, -23));
    EXPECT_EQ(ulpOf(DType::Float, 2.0), std::ldexp(1.0, -22));
    EXPECT_EQ(ulpOf(DType::Float, -3.0), std::ldexp(1.0, -22));
    EXPECT_EQ(ulpOf(DType::Float, 0.0),
              static_cast<double>(std::numeric_limits<float>::denorm_min()));
    EXPECT_EQ(ulpOf(DType::Float, 1e-40),
              static_cast<double>(std::numeric_limits<float>::denorm_min()));
    EXPECT_EQ(ulpOf(DType::Float, 1.0), static_cast<double>(std::nextafter(1.0f, 2.0f) - 1.0f));
    EXPECT_EQ(ulpOf(DType::Float16, 1.0), static_cast<double>(half(0x3c01) - half(0x3c00)));
    EXPECT_EQ(ulpOf(DType::Float16, 0.0), static_cast<double>(half(0x0001)));
    EXPECT_EQ(ulpOf(DType::BF16, 1.0), static_cast<double>(bf16(0x3f81) - bf16(0x3f80)));
    EXPECT_EQ(ulpOf(DType::BF16, 0.0), static_cast<double>(bf16(0x0001)));
    EXPECT_EQ(ulpOf(DType::Double, 1.0), DBL_EPSILON);
    EXPECT_EQ(ulpOf(DType::Int32, 12345.0), 1.0);
    // Names of either layout.
    EXPECT_EQ(dtypeFromAnyName("torch.float32"), DType::Float);
    EXPECT_EQ(dtypeFromAnyName("float"), DType::Float);
    EXPECT_EQ(dtypeFromAnyName("torch.bfloat16"), DType::BF16);
    EXPECT_EQ(dtypeFromAnyName("bf16"), DType::BF16);
    EXPECT_EQ(dtypeFromAnyName("torch.int64"), DType::Int64);
    EXPECT_EQ(dtypeFromAnyName("torch.bool"), DType::Bool);
    EXPECT_FALSE(dtypeFromAnyName("torch.quint8"));
    // The reference's dtype judges.
    EXPECT_EQ(judgingDType(DType::Float, DType::BF16), DType::Float);
    EXPECT_EQ(judgingDType(DType::BF16, DType::Float), DType::BF16);
    EXPECT_EQ(judgingDType(std::nullopt, DType::Float16), DType::Float16);
    NoiseFloorUlps ulps;
    EXPECT_EQ(allowedUlps(ulps, DType::Float), 256);
    EXPECT_EQ(allowedUlps(ulps, DType::BF16), 2);
    EXPECT_EQ(allowedUlps(ulps, DType::Float16), 4);
    EXPECT_EQ(allowedUlps(ulps, DType::Double), 1024);
    EXPECT_EQ(allowedUlps(ulps, DType::Int8), 0);
}

TEST(CompareMeasures, RequiredScaleIsTheRule) {
    const double eps = std::ldexp(1.0, -23), tiny = FLT_MIN, unit = 256 * eps;
    // Within its own relative tolerance: noise at any scale.
    EXPECT_EQ(requiredScale(unit * 2, 2.0, 256, eps, tiny), 0.0);
    // Beyond it: excused from the scale where unit * scale + tiny reaches the error.
    const double error = 1e-3;
    const double need = requiredScale(error, 1e-8, 256, eps, tiny);
    EXPECT_DOUBLE_EQ(need, (error - tiny) / unit);
    EXPECT_LE(error, unit * std::max(1e-8, need) + tiny);
    EXPECT_GT(error, unit * std::max(1e-8, need * 0.999) + tiny);
    // Below the smallest normal: flush-to-zero noise.
    EXPECT_EQ(requiredScale(1e-39, 0.0, 256, eps, tiny), 0.0);
    // The quantum of printed statistics.
    EXPECT_EQ(requiredScale(0.9e-6, 0.0, 256, eps, tiny, 1e-6), 0.0);
    // Exact dtypes: nothing excuses a difference.
    EXPECT_EQ(requiredScale(1.0, 5.0, 0, 0, 0), INFINITY);
    EXPECT_EQ(requiredScale(0.0, 5.0, 0, 0, 0), 0.0);
}

TEST(CompareMeasures, Float32MeasuresMatchTheirDefinitions) {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0, 1);
    std::vector<float> r(1000), c(1000);
    for (size_t i = 0; i < r.size(); ++i) {
        r[i] = normal(rng);
        c[i] = r[i] * (1 + 0.003f * normal(rng));
    }
    r[10] = 0;  // a zero reference: msprobe adds float32's eps to both
    c[10] = 1e-3f;
    c[500] = r[500] + 0.25f;  // the worst element
    const auto m = measureData(floats(r, {10, 100}), floats(c, {10, 100}), DType::Float, 256);
    std::vector<LD> rl(r.begin(), r.end()), cl(c.begin(), c.end());
    const Expected e = expectedMeasures(rl, cl, FLT_EPSILON);
    ASSERT_TRUE(m.cosine && m.euclideanDistance && m.oneThousandthErrRatio &&
                m.fiveThousandthsErrRatio);
    EXPECT_NEAR(*m.cosine, static_cast<double>(e.cosine), 1e-12);
    EXPECT_NEAR(*m.euclideanDistance, static_cast<double>(e.euclidean), 1e-12);
    EXPECT_EQ(m.maxAbsError, static_cast<double>(e.maxAbs));
    EXPECT_NEAR(m.maxRelativeError, static_cast<double>(e.maxRel),
                1e-9 * static_cast<double>(e.maxRel));
    EXPECT_DOUBLE_EQ(*m.oneThousandthErrRatio, static_cast<double>(e.below1));
    EXPECT_DOUBLE_EQ(*m.fiveThousandthsErrRatio, static_cast<double>(e.below5));
    EXPECT_FALSE(m.bytesEqual);
    EXPECT_EQ(m.nonFiniteMismatches, 0u);
    // Our rule: the worst element and the largest error in ulps.
    EXPECT_EQ(m.worstElement, 500u);
    EXPECT_EQ(m.worstReference, r[500]);
    EXPECT_EQ(m.worstCandidate, c[500]);
    LD maxUlp = 0, squares = 0;
    for (size_t i = 0; i < r.size(); ++i) {
        const LD ulp =
            std::ldexp(1.0L, std::max(std::ilogb(r[i] == 0 ? FLT_MIN / 2 : r[i]), -126) - 23);
        maxUlp = std::max(maxUlp, std::fabs(cl[i] - rl[i]) / ulp);
        squares += rl[i] * rl[i];
    }
    EXPECT_NEAR(m.maxUlpError, static_cast<double>(maxUlp), 1e-9 * static_cast<double>(maxUlp));
    EXPECT_NEAR(m.referenceRms, static_cast<double>(std::sqrt(squares / 1000)), 1e-12);
    const LD unit = 256.0L * std::ldexp(1.0L, -23);
    LD need = 0;
    for (size_t i = 0; i < r.size(); ++i) {
        const LD error = std::fabs(cl[i] - rl[i]);
        if (error > unit * std::fabs(rl[i]) + FLT_MIN)
            need = std::max(need, (error - FLT_MIN) / unit);
    }
    EXPECT_NEAR(m.requiredScale, static_cast<double>(need), 1e-9 * static_cast<double>(need));
    // Identical data: everything zero or one, the bytes equal.
    const auto same = measureData(floats(r, {10, 100}), floats(r, {10, 100}), DType::Float, 256);
    EXPECT_TRUE(same.bytesEqual);
    EXPECT_EQ(same.maxAbsError, 0.0);
    EXPECT_EQ(same.requiredScale, 0.0);
    EXPECT_EQ(same.maxUlpError, 0.0);
    EXPECT_EQ(*same.cosine, 1.0);  // exactly: 0.9999999999999998 in the CSV of the same bytes
}

// A complex tensor's real and imaginary parts are each judged: 3+4j against 3+4.5j was "no
// tensor diverges" (its statistics are N/A, its data was not read).
TEST(CompareMeasures, ComplexTensorsAreMeasuredByTheirRealAndImaginaryParts) {
    const std::vector<float> r = {1, 2, 3, 4, 5, 6}, c = {1, 2, 3, 4.5f, 5, 6};  // 3 elements
    auto complexOf = [](const std::vector<float>& parts) {
        TensorData t = tensorOf(DType::Complex64, {3}, parts);
        t.count = parts.size() / 2;
        return t;
    };
    const auto m = measureData(complexOf(r), complexOf(c), DType::Complex64, 256);
    std::vector<LD> rl(r.begin(), r.end()), cl(c.begin(), c.end());
    const Expected e = expectedMeasures(rl, cl, FLT_EPSILON);
    ASSERT_TRUE(m.cosine && m.euclideanDistance);
    EXPECT_FALSE(m.bytesEqual);
    EXPECT_EQ(m.maxAbsError, 0.5);
    EXPECT_NEAR(*m.cosine, static_cast<double>(e.cosine), 1e-12);
    EXPECT_NEAR(*m.euclideanDistance, static_cast<double>(e.euclidean), 1e-12);
    EXPECT_DOUBLE_EQ(*m.oneThousandthErrRatio, static_cast<double>(e.below1));  // 5 of 6 parts
    EXPECT_EQ(m.worstElement, 1u);  // the element whose imaginary part differs
    EXPECT_TRUE(m.complex);
    EXPECT_TRUE(m.worstImaginary);
    EXPECT_EQ(m.largestErrorElement, 1u);
    EXPECT_TRUE(m.largestErrorImaginary);
    EXPECT_EQ(m.worstReference, 4.0);
    EXPECT_EQ(m.worstCandidate, 4.5);
    EXPECT_GT(m.requiredScale, 0.0);
    const auto same = measureData(complexOf(r), complexOf(r), DType::Complex64, 256);
    EXPECT_TRUE(same.bytesEqual);
    EXPECT_EQ(same.maxAbsError, 0.0);
    // complex128 the same way.
    const std::vector<double> rd = {1, 2, 3, 4}, cd = {1, 2.5, 3, 4};
    TensorData a = tensorOf(DType::Complex128, {2}, rd), b = tensorOf(DType::Complex128, {2}, cd);
    a.count = b.count = 2;
    const auto md = measureData(a, b, DType::Complex128, 256);
    EXPECT_EQ(md.maxAbsError, 0.5);
    EXPECT_EQ(md.worstElement, 0u);
    EXPECT_TRUE(md.worstImaginary);
    const std::vector<double> realDiffers = {1, 2, 3.5, 4};
    TensorData real = tensorOf(DType::Complex128, {2}, realDiffers);
    real.count = 2;
    const auto mr = measureData(a, real, DType::Complex128, 256);
    EXPECT_EQ(mr.worstElement, 1u);
    EXPECT_FALSE(mr.worstImaginary);  // the real part of element 1
    EXPECT_FALSE(measureData(floats({1, 2}), floats({1, 3}), DType::Float, 256).complex);
}

// Elements [first, first + count) of `whole` as a piece (TensorFileReader::read's).
TensorData pieceOf(const TensorData& whole, uint64_t first, uint64_t count) {
    const size_t size = format::dtypeSize(*whole.dtype);
    TensorData piece;
    piece.dtype = whole.dtype;
    piece.count = count;
    piece.bytes.assign(whole.bytes.begin() + static_cast<std::ptrdiff_t>(first * size),
                       whole.bytes.begin() + static_cast<std::ptrdiff_t>((first + count) * size));
    return piece;
}

// Every field of two measures, bit for bit (NaN equal to NaN).
void expectSameMeasures(const DataMeasures& a, const DataMeasures& b, const std::string& what) {
    auto same = [&](std::optional<double> x, std::optional<double> y, const char* field) {
        ASSERT_EQ(x.has_value(), y.has_value()) << what << " " << field;
        if (x) {
            EXPECT_EQ(std::memcmp(&*x, &*y, sizeof(double)), 0) << what << " " << field;
        }
    };
    same(a.cosine, b.cosine, "cosine");
    same(a.euclideanDistance, b.euclideanDistance, "EucDist");
    same(a.maxAbsError, b.maxAbsError, "MaxAbsErr");
    same(a.maxRelativeError, b.maxRelativeError, "MaxRelativeErr");
    same(a.oneThousandthErrRatio, b.oneThousandthErrRatio, "One Thousandth");
    same(a.fiveThousandthsErrRatio, b.fiveThousandthsErrRatio, "Five Thousandths");
    same(a.maxUlpError, b.maxUlpError, "ulps");
    same(a.requiredScale, b.requiredScale, "requiredScale");
    same(a.referenceRms, b.referenceRms, "rms");
    same(a.worstReference, b.worstReference, "worstReference");
    same(a.worstCandidate, b.worstCandidate, "worstCandidate");
    same(a.largestErrorReference, b.largestErrorReference, "largestErrorReference");
    same(a.largestErrorCandidate, b.largestErrorCandidate, "largestErrorCandidate");
    EXPECT_EQ(a.bytesEqual, b.bytesEqual) << what;
    EXPECT_EQ(a.nonFiniteMismatches, b.nonFiniteMismatches) << what;
    EXPECT_EQ(a.worstElement, b.worstElement) << what;
    EXPECT_EQ(a.largestErrorElement, b.largestErrorElement) << what;
    EXPECT_EQ(a.complex, b.complex) << what;
    EXPECT_EQ(a.worstImaginary, b.worstImaginary) << what;
    EXPECT_EQ(a.largestErrorImaginary, b.largestErrorImaginary) << what;
}

// A comparison reads big tensors from their files a piece at a time (compare.cpp): the measures
// of the pieces are those of the whole, bit for bit, wherever the pieces end, and so is the
// fingerprint, in whatever order the pieces come.
TEST(CompareMeasures, PiecesMeasureAsTheWhole) {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0, 1);
    std::vector<float> r(10007), c(10007);
    for (size_t i = 0; i < r.size(); ++i) {
        r[i] = normal(rng);
        c[i] = r[i] * (1 + 1e-6f * normal(rng));
    }
    c[7000] = r[7000] + 0.5f;                               // the worst element, in a late piece
    r[5] = c[5] = std::numeric_limits<float>::quiet_NaN();  // NaN in the same place
    r[9000] = c[9000] = -std::numeric_limits<float>::infinity();
    const TensorData a = floats(r, {10007}), b = floats(c, {10007});
    const DataMeasures whole = measureData(a, b, DType::Float, 256);
    ASSERT_TRUE(whole.cosine);
    EXPECT_EQ(whole.worstElement, 7000u);
    auto inPieces = [](const TensorData& x, const TensorData& y, uint64_t size) {
        DataMeasurer measurer(x, y, DType::Float, 256);
        for (uint64_t first = 0; first < x.count; first += size) {
            const uint64_t n = std::min(size, x.count - first);
            measurer.add(pieceOf(x, first, n), pieceOf(y, first, n));
        }
        return measurer.finish();
    };
    for (uint64_t size : {uint64_t{1}, uint64_t{7}, uint64_t{4096}, uint64_t{5000}, a.count})
        expectSameMeasures(inPieces(a, b, size), whole, "pieces of " + std::to_string(size));
    // NaN in one run only, in the last piece: every msprobe measure is "Nan", piece by piece too.
    std::vector<float> nanLate = c;
    nanLate[10000] = std::numeric_limits<float>::quiet_NaN();
    const TensorData late = floats(nanLate, {10007});
    const DataMeasures lateWhole = measureData(a, late, DType::Float, 256);
    ASSERT_TRUE(lateWhole.cosine && std::isnan(*lateWhole.cosine));
    expectSameMeasures(inPieces(a, late, 1000), lateWhole, "a late NaN");
    // Identical data: equal bytes, piece by piece.
    EXPECT_TRUE(inPieces(a, a, 333).bytesEqual);
    // Pieces that do not add up to the tensor measure nothing (as a tensor that cannot be read).
    DataMeasurer cut(a, b, DType::Float, 256);
    cut.add(pieceOf(a, 0, 10), pieceOf(b, 0, 10));
    EXPECT_FALSE(cut.finish().cosine);
    // The fingerprint: the pieces' in any order.
    DataFingerprint fingerprint(a);
    for (uint64_t first : {uint64_t{6000}, uint64_t{0}, uint64_t{3000}})
        fingerprint.add(pieceOf(a, first, std::min<uint64_t>(3000, a.count - first)));
    fingerprint.add(pieceOf(a, 9000, a.count - 9000));
    EXPECT_EQ(fingerprint.value(), dataFingerprint(a));
    EXPECT_NE(dataFingerprint(b), dataFingerprint(a));
    // complex128 (elements of 16 bytes) too; its parts' order matters within an element.
    const std::vector<double> parts = {1, 2, 3, 4, 5, 6}, swapped = {2, 1, 3, 4, 5, 6};
    TensorData z = tensorOf(DType::Complex128, {3}, parts),
               w = tensorOf(DType::Complex128, {3}, swapped);
    z.count = w.count = 3;
    DataFingerprint zp(z);
    zp.add(pieceOf(z, 2, 1));
    zp.add(pieceOf(z, 0, 2));
    EXPECT_EQ(zp.value(), dataFingerprint(z));
    EXPECT_NE(dataFingerprint(w), dataFingerprint(z));
    DataMeasurer complexMeasurer(z, w, DType::Complex128, 256);
    complexMeasurer.add(pieceOf(z, 0, 1), pieceOf(w, 0, 1));
    complexMeasurer.add(pieceOf(z, 1, 2), pieceOf(w, 1, 2));
    expectSameMeasures(complexMeasurer.finish(), measureData(z, w, DType::Complex128, 256),
                       "complex128");
}

TEST(CompareMeasures, Zeros) {
    const auto zeros = floats({0, 0, 0, 0});
    const auto both = measureData(zeros, zeros, DType::Float, 256);
    EXPECT_EQ(*both.cosine, 1.0);  // both all zero
    EXPECT_EQ(both.maxAbsError, 0.0);
    EXPECT_EQ(both.maxRelativeError, 0.0);
    EXPECT_EQ(*both.oneThousandthErrRatio, 1.0);
    EXPECT_TRUE(both.bytesEqual);
    // One side all zero: msprobe's "Nan" cosine; the relative error is |c| / float32's eps.
    const auto one = measureData(zeros, floats({0, 0, 0.5f, 0}), DType::Float, 256);
    ASSERT_TRUE(one.cosine);
    EXPECT_TRUE(std::isnan(*one.cosine));
    EXPECT_EQ(one.maxAbsError, 0.5);
    EXPECT_DOUBLE_EQ(one.maxRelativeError, 0.5 / FLT_EPSILON);
    EXPECT_EQ(*one.oneThousandthErrRatio, 0.75);
    EXPECT_GT(one.requiredScale, 0.0);
    // -0 and +0 compare equal, though their bytes differ.
    const auto signs = measureData(zeros, floats({-0.0f, 0, 0, 0}), DType::Float, 256);
    EXPECT_FALSE(signs.bytesEqual);
    EXPECT_EQ(signs.maxAbsError, 0.0);
    EXPECT_EQ(signs.requiredScale, 0.0);
}

TEST(CompareMeasures, DenormalsAreFlushToZeroNoise) {
    const float denormal = 1e-40f;  // below FLT_MIN
    ASSERT_LT(denormal, FLT_MIN);
    ASSERT_GT(denormal, 0.0f);
    const auto m =
        measureData(floats({0, 1, denormal}), floats({denormal, 1, 0}), DType::Float, 256);
    EXPECT_EQ(m.requiredScale, 0.0);  // never a divergence
    EXPECT_EQ(m.maxAbsError, static_cast<double>(denormal));
    // In ulps of float32 at 0: the smallest subnormal, 2^-149.
    EXPECT_DOUBLE_EQ(m.maxUlpError, static_cast<double>(denormal) / std::ldexp(1.0, -149));
    // Relative to the denormal reference, its flush to zero is all of it: 1 (the zero reference
    // gives denormal / eps, far less).
    EXPECT_EQ(m.maxRelativeError, 1.0);
    // A normal-sized difference at a zero reference is not.
    const auto real = measureData(floats({0, 1, 0}), floats({0, 1, 1e-3f}), DType::Float, 256);
    EXPECT_GT(real.requiredScale, 1.0);
    EXPECT_EQ(real.worstElement, 2u);
}

TEST(CompareMeasures, NanAndInf) {
    const float nan = NAN, inf = INFINITY;
    // In the same places: they agree; msprobe counts them as zeros.
    const auto same =
        measureData(floats({1, nan, inf, 2}), floats({1, nan, inf, 2.5f}), DType::Float, 256);
    EXPECT_EQ(same.nonFiniteMismatches, 0u);
    EXPECT_EQ(same.maxAbsError, 0.5);
    const Expected e =
        expectedMeasures({1, NAN, INFINITY, 2}, {1, NAN, INFINITY, 2.5L}, FLT_EPSILON);
    EXPECT_NEAR(*same.cosine, static_cast<double>(e.cosine), 1e-15);
    EXPECT_NEAR(*same.euclideanDistance, 0.5, 1e-15);
    EXPECT_EQ(*same.oneThousandthErrRatio, 0.75);
    // In one run only: ours counts them; every msprobe measure is "Nan".
    const auto differ =
        measureData(floats({1, 2, 3, 4}), floats({1, nan, 3, inf}), DType::Float, 256);
    EXPECT_EQ(differ.nonFiniteMismatches, 2u);
    EXPECT_TRUE(std::isnan(*differ.cosine));
    EXPECT_TRUE(std::isnan(*differ.euclideanDistance));
    EXPECT_TRUE(std::isnan(differ.maxAbsError));
    EXPECT_TRUE(std::isnan(differ.maxRelativeError));
    EXPECT_TRUE(std::isnan(*differ.oneThousandthErrRatio));
    // +Inf against -Inf: msprobe's masks do not tell them apart (zeros); ours does.
    const auto sign = measureData(floats({inf, 1}), floats({-inf, 1}), DType::Float, 256);
    EXPECT_EQ(sign.nonFiniteMismatches, 1u);
    EXPECT_EQ(sign.maxAbsError, 0.0);
    EXPECT_EQ(*sign.cosine, 1.0);
}

TEST(CompareMeasures, ScalarsAndSingleElements) {
    const std::vector<int64_t> none;
    const auto scalar = measureData(floats({2}, none), floats({2.5f}, none), DType::Float, 256);
    EXPECT_FALSE(scalar.cosine);  // "unsupported" for a 0-d tensor
    EXPECT_FALSE(scalar.euclideanDistance);
    EXPECT_FALSE(scalar.oneThousandthErrRatio);
    EXPECT_FALSE(scalar.fiveThousandthsErrRatio);
    EXPECT_EQ(scalar.maxAbsError, 0.5);
    EXPECT_EQ(scalar.maxRelativeError, 0.25);
    // msprobe checks a 0-d tensor for NaN no further: the measures are NaN.
    const auto nanScalar = measureData(floats({2}, none), floats({NAN}, none), DType::Float, 256);
    EXPECT_TRUE(std::isnan(nanScalar.maxAbsError));
    EXPECT_EQ(nanScalar.nonFiniteMismatches, 1u);
    // One element in one dimension: no cosine, the rest as usual.
    const auto one = measureData(floats({2}, {1}), floats({2.5f}, {1}), DType::Float, 256);
    EXPECT_FALSE(one.cosine);
    ASSERT_TRUE(one.euclideanDistance);
    EXPECT_EQ(*one.euclideanDistance, 0.5);
    EXPECT_EQ(*one.oneThousandthErrRatio, 0.0);
}

TEST(CompareMeasures, MismatchedShapesHaveNoElementMeasures) {
    const auto m = measureData(floats({1, 2, 3}), floats({1, 2, 3, 4}), DType::Float, 256);
    EXPECT_FALSE(m.cosine);
    EXPECT_FALSE(m.bytesEqual);
    EXPECT_EQ(m.requiredScale, 0.0);
    // Same count, other dims: the element-wise measures exist (the verdict says "shape").
    const auto reshaped =
        measureData(floats({1, 2, 3, 4}, {2, 2}), floats({1, 2, 3, 4}, {4}), DType::Float, 256);
    EXPECT_FALSE(reshaped.bytesEqual);
    EXPECT_EQ(reshaped.maxAbsError, 0.0);
}

TEST(CompareMeasures, MismatchedDtypesAreJudgedByTheReferences) {
    // float32 reference, bfloat16 candidate: the candidate's rounding to bfloat16.
    const std::vector<float> r = {1.0f, 0.3f, -2.7f, 0.01f};
    std::vector<uint16_t> bits;
    std::vector<LD> rounded;
    for (float v : r) {
        uint32_t u;
        std::memcpy(&u, &v, 4);
        const uint16_t b =
            static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);  // round to nearest even
        bits.push_back(b);
        rounded.push_back(bf16(b));
    }
    const auto candidate = tensorOf(DType::BF16, {4}, bits);
    const auto m = measureData(floats(r), candidate, DType::Float, 256);
    LD maxAbs = 0;
    for (size_t i = 0; i < r.size(); ++i) maxAbs = std::max(maxAbs, std::fabs(rounded[i] - r[i]));
    EXPECT_EQ(m.maxAbsError, static_cast<double>(maxAbs));
    EXPECT_FALSE(m.bytesEqual);
    // bfloat16 rounding is far beyond float32's floor at the tensor's own scale...
    EXPECT_GT(m.requiredScale, 3.0);
    // ...and within bfloat16's when the reference itself is bfloat16.
    const auto asBf16 = measureData(candidate, floats(r), DType::BF16, 2);
    EXPECT_EQ(asBf16.requiredScale, 0.0);
    // float16 data, decoded exactly.
    const auto h = tensorOf(DType::Float16, {3}, std::vector<uint16_t>{0x3c00, 0x0001, 0xc000});
    const auto hm = measureData(h, floats({1.0f, 0.0f, -2.0f}), DType::Float16, 4);
    EXPECT_EQ(hm.maxAbsError, static_cast<double>(half(0x0001)));
    EXPECT_EQ(hm.requiredScale, 0.0);  // a subnormal of float16 against 0
}

TEST(CompareMeasures, IntegersAndBoolsMustBeEqual) {
    const auto a = tensorOf(DType::Int64, {3}, std::vector<int64_t>{1, 2, 3});
    const auto b = tensorOf(DType::Int64, {3}, std::vector<int64_t>{1, 2, 4});
    const auto m = measureData(a, b, DType::Int64, 0);
    EXPECT_EQ(m.requiredScale, INFINITY);
    EXPECT_EQ(m.worstElement, 2u);
    EXPECT_EQ(m.maxUlpError, 1.0);
    EXPECT_DOUBLE_EQ(m.maxRelativeError, 1.0 / 3.0);
    EXPECT_EQ(measureData(a, a, DType::Int64, 0).requiredScale, 0.0);
    const auto t = tensorOf(DType::Bool, {2}, std::vector<uint8_t>{1, 0});
    const auto f = tensorOf(DType::Bool, {2}, std::vector<uint8_t>{1, 1});
    const auto bm = measureData(t, f, DType::Bool, 0);
    EXPECT_EQ(bm.requiredScale, INFINITY);
    EXPECT_EQ(bm.worstElement, 1u);
    // A zero reference of integer data: msprobe's relative error adds float64's eps.
    EXPECT_DOUBLE_EQ(bm.maxRelativeError, 1.0 / DBL_EPSILON);
}

TEST(CompareMeasures, FingerprintsFollowTheDataNotItsLayout) {
    const auto a = floats({1, 2, 3, 4, 5, 6}, {2, 3});
    const auto transposed = floats({1, 4, 2, 5, 3, 6}, {3, 2});
    EXPECT_EQ(dataFingerprint(a), dataFingerprint(transposed));
    EXPECT_NE(dataFingerprint(a), dataFingerprint(floats({1, 2, 3, 4, 5, 7}, {2, 3})));
    EXPECT_NE(dataFingerprint(a), dataFingerprint(floats({1, 2, 3, 4, 5}, {5})));
    const auto ints = tensorOf(DType::Int32, {2}, std::vector<int32_t>{0x3f800000, 0x40000000});
    EXPECT_NE(dataFingerprint(ints), dataFingerprint(floats({1, 2})));  // same bytes, other dtype
    StatValues s;
    s.value[0] = 1;
    s.present = 1;
    EXPECT_EQ(statsFingerprint("float", 6, s), statsFingerprint("float", 6, s));
    EXPECT_NE(statsFingerprint("float", 6, s), statsFingerprint("float", 5, s));
    StatValues t = s;
    t.value[0] = std::nextafter(1.0, 2.0);
    EXPECT_NE(statsFingerprint("float", 6, s), statsFingerprint("float", 6, t));
}

StatValues stats(double max, double min, double mean, double norm) {
    StatValues s;
    const double v[4] = {max, min, mean, norm};
    for (int i = 0; i < 4; ++i) s.value[i] = v[i];
    s.present = 0xf;
    return s;
}

TEST(CompareMeasures, StatisticDiffsAsMsprobeDefinesThem) {
    const double nan = NAN, inf = INFINITY;
    const auto d = diffStatistics(stats(2, -1, 0, 3), stats(2.5, -1, 0.25, nan));
    // Numbers: candidate - reference, |diff / reference| x 100.
    EXPECT_EQ(*d.diff[0], 0.5);
    EXPECT_DOUBLE_EQ(*d.relativePercent[0], 25.0);
    // Equal: 0 and 0.
    EXPECT_EQ(*d.diff[1], 0.0);
    EXPECT_EQ(*d.relativePercent[1], 0.0);
    // A zero reference: the relative error is inf.
    EXPECT_EQ(*d.diff[2], 0.25);
    EXPECT_EQ(*d.relativePercent[2], inf);
    // NaN on one side: Nan, Nan.
    EXPECT_TRUE(std::isnan(*d.diff[3]));
    EXPECT_TRUE(std::isnan(*d.relativePercent[3]));
    // NaN on both sides: equal.
    const auto both = diffStatistics(stats(nan, 0, 0, 0), stats(nan, 0, 0, 0));
    EXPECT_EQ(*both.diff[0], 0.0);
    // Infinities: the signed infinity, for both columns.
    const auto infs = diffStatistics(stats(1, 1, 1, inf), stats(inf, -inf, 1, 2));
    EXPECT_EQ(*infs.diff[0], inf);  // inf vs a number
    EXPECT_EQ(*infs.relativePercent[0], inf);
    EXPECT_EQ(*infs.diff[1], -inf);  // -inf vs a number
    EXPECT_EQ(*infs.relativePercent[1], -inf);
    EXPECT_EQ(*infs.diff[3], -inf);  // a number vs inf
    const auto opposite = diffStatistics(stats(-inf, 0, 0, 0), stats(inf, 0, 0, 0));
    EXPECT_EQ(*opposite.diff[0], inf);
    // N/A on either side: nothing.
    StatValues partial = stats(1, 1, 1, 1);
    partial.present = 0x3;
    const auto na = diffStatistics(partial, stats(1, 1, 1, 1));
    EXPECT_TRUE(na.diff[0]);
    EXPECT_FALSE(na.diff[2]);
    EXPECT_FALSE(na.relativePercent[3]);
}

TEST(CompareMeasures, StatisticsRule) {
    const double eps = std::ldexp(1.0, -23);
    bool nonFinite = false;
    int worst = -1;
    // The norm is judged as the root mean square: norm 200 of 10000 elements is rms 2.
    const double need = statisticsRequiredScale(stats(1, -1, 0, 200), stats(1, -1, 0, 200.5), 10000,
                                                256, eps, FLT_MIN, 0, &nonFinite, &worst);
    EXPECT_EQ(worst, 3);
    EXPECT_NEAR(need, (0.005 - FLT_MIN) / (256 * eps), 1e-9 * need);
    EXPECT_FALSE(nonFinite);
    // The printing quantum of atb statistics excuses a last-digit difference.
    EXPECT_EQ(statisticsRequiredScale(stats(1e-6, 0, 0, 1), stats(2e-6, 0, 0, 1), 1, 256, eps,
                                      FLT_MIN, 1e-6, &nonFinite, &worst),
              0.0);
    // A NaN in one run only.
    EXPECT_EQ(statisticsRequiredScale(stats(1, 0, 0, 1), stats(NAN, 0, 0, 1), 1, 256, eps, FLT_MIN,
                                      0, &nonFinite, &worst),
              INFINITY);
    EXPECT_TRUE(nonFinite);
    EXPECT_EQ(worst, 0);
}

// Equal finite statistics need no scale, unless an allowance is negative (then they are judged
// as any difference is); the fingerprint from a dtype's hash is the one from its text.
TEST(CompareMeasures, EqualStatisticsNeedNoScale) {
    auto stats = [](double max, double min, double mean, double norm) {
        StatValues s;
        s.value[0] = max, s.value[1] = min, s.value[2] = mean, s.value[3] = norm;
        s.present = 0xf;
        return s;
    };
    const double eps = machineEpsilon(format::DType::Float);
    int worst = -1;
    EXPECT_EQ(statisticsRequiredScale(stats(1, -1, 0, 2), stats(1, -1, 0, 2), 4, 256, eps, FLT_MIN,
                                      1e-6, nullptr, &worst),
              0);
    EXPECT_EQ(worst, -1);
    // One differs: it alone decides, as when it is the only one present.
    const double need = statisticsRequiredScale(stats(1, -1, 0, 2), stats(1, -1, 0.5, 2), 4, 256,
                                                eps, FLT_MIN, 0, nullptr, &worst);
    StatValues meanOnly = stats(0, 0, 0, 0), meanOnlyCandidate = stats(0, 0, 0.5, 0);
    meanOnly.present = meanOnlyCandidate.present = 1u << 2;
    EXPECT_EQ(need, statisticsRequiredScale(meanOnly, meanOnlyCandidate, 4, 256, eps, FLT_MIN, 0,
                                            nullptr, nullptr));
    EXPECT_GT(need, 0);
    EXPECT_EQ(worst, 2);
    EXPECT_EQ(statisticsRequiredScale(stats(1, -1, 0, 2), stats(1, -1, 0, 2), 4, -1, eps, FLT_MIN,
                                      0, nullptr, nullptr),
              std::numeric_limits<double>::infinity());
    // A negative smallest normal: an error of 0 is over the floor, each statistic as the rule says.
    EXPECT_EQ(statisticsRequiredScale(stats(1, -1, 0, 2), stats(1, -1, 0, 2), 4, 256, eps, -1, 0,
                                      nullptr, nullptr),
              requiredScale(0, 0, 256, eps, -1, 0));
    const StatValues s = stats(1, -1, 0, 2);
    EXPECT_EQ(statsFingerprint(dtypeHash("float"), 6, s), statsFingerprint("float", 6, s));
    EXPECT_NE(statsFingerprint(dtypeHash("float16"), 6, s), statsFingerprint("float", 6, s));
}

}  // namespace
}  // namespace probe::analysis
