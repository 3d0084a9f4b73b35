// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare_measures.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "probe/format/tensor_stats.h"

namespace probe::analysis {
namespace {

using format::DType;

// Mantissa bits including the implicit one, and the smallest normal exponent.
struct FloatLayout {
    int precision;
    int minExponent;
};

std::optional<FloatLayout> floatLayout(DType dtype) {
    switch (dtype) {
        case DType::Double:
            return FloatLayout{53, -1022};
        case DType::Float:
        case DType::Complex64:
            return FloatLayout{24, -126};
        case DType::Complex128:
            return FloatLayout{53, -1022};
        case DType::Float16:
            return FloatLayout{11, -14};
        case DType::BF16:
            return FloatLayout{8, -126};
        default:
            return std::nullopt;
    }
}

// Elements decoded per block: two blocks of doubles stay in the L1/L2 cache.
constexpr uint64_t kBlock = 4096;

uint64_t mix(uint64_t h, uint64_t v) {
    // boost::hash_combine's mixing, widened to 64 bits
    return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 12) + (h >> 4));
}

// splitmix64's finaliser: every input bit moves about half the output bits.
uint64_t splitMix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t hashText(std::string_view text) {
    return format::contentHash64(text.data(), text.size());
}

}  // namespace

std::optional<DType> dtypeFromAnyName(std::string_view name) {
    if (auto d = format::dtypeFromName(name)) return d;
    struct Alias {
        std::string_view name;
        DType dtype;
    };
    static constexpr Alias kAliases[] = {
        {"torch.float32", DType::Float},
        {"torch.float", DType::Float},
        {"torch.float64", DType::Double},
        {"torch.double", DType::Double},
        {"torch.float16", DType::Float16},
        {"torch.half", DType::Float16},
        {"torch.bfloat16", DType::BF16},
        {"bfloat16", DType::BF16},
        {"torch.int8", DType::Int8},
        {"torch.uint8", DType::UInt8},
        {"torch.int16", DType::Int16},
        {"torch.short", DType::Int16},
        {"torch.int32", DType::Int32},
        {"torch.int", DType::Int32},
        {"torch.int64", DType::Int64},
        {"torch.long", DType::Int64},
        {"torch.bool", DType::Bool},
        {"torch.complex64", DType::Complex64},
        {"torch.complex128", DType::Complex128},
        {"float32", DType::Float},
        {"float64", DType::Double},
    };
    for (const auto& alias : kAliases)
        if (alias.name == name) return alias.dtype;
    return std::nullopt;
}

double machineEpsilon(DType dtype) {
    const auto layout = floatLayout(dtype);
    return layout ? std::ldexp(1.0, 1 - layout->precision) : 0.0;
}

double smallestNormal(DType dtype) {
    const auto layout = floatLayout(dtype);
    return layout ? std::ldexp(1.0, layout->minExponent) : 0.0;
}

double ulpOf(DType dtype, double x) {
    const auto layout = floatLayout(dtype);
    if (!layout) return 1.0;
    x = std::fabs(x);
    int exponent = layout->minExponent;
    if (x >= std::ldexp(1.0, layout->minExponent) && std::isfinite(x)) exponent = std::ilogb(x);
    return std::ldexp(1.0, exponent - layout->precision + 1);
}

std::optional<DType> judgingDType(std::optional<DType> reference, std::optional<DType> candidate) {
    return reference ? reference : candidate;
}

double allowedUlps(const NoiseFloorUlps& floor, DType dtype) {
    switch (dtype) {
        case DType::Double:
        case DType::Complex128:
            return floor.float64;
        case DType::Float:
        case DType::Complex64:
            return floor.float32;
        case DType::Float16:
            return floor.float16;
        case DType::BF16:
            return floor.bfloat16;
        default:
            return 0;
    }
}

double requiredScale(double error, double reference, double ulps, double epsilon, double tiny,
                     double quantum) {
    const double unit = ulps * epsilon;
    if (error <= unit * std::fabs(reference) + tiny + quantum) return 0;
    if (unit <= 0) return std::numeric_limits<double>::infinity();
    return (error - tiny - quantum) / unit;
}

DataMeasures measureData(const TensorData& reference, const TensorData& candidate, DType judged,
                         double ulps) {
    DataMeasurer measurer(reference, candidate, judged, ulps);
    measurer.add(reference, candidate);
    return measurer.finish();
}

DataMeasurer::DataMeasurer(const TensorData& reference, const TensorData& candidate, DType judged,
                           double ulps)
    : ulps_(ulps), judged_(judged) {
    // Complex tensors: their real and imaginary parts, each a number to judge (an element's
    // index is its component's over two).
    components_ = reference.components();
    perElement_ = components_ == 2 * reference.count ? 2 : 1;
    measurable_ = reference.dtype && candidate.dtype && reference.count > 0 &&
                  candidate.count == reference.count && candidate.components() == components_;
    if (!measurable_) return;
    m_.complex = perElement_ == 2;
    m_.bytesEqual =
        reference.dtype == candidate.dtype && reference.header.dims == candidate.header.dims;
    scalar_ = reference.header.dims.empty();
    // msprobe computes relative errors in float32 unless a side is float64 or an integer.
    const auto wide = [](std::optional<DType> d) {
        return !d || !(*d == DType::Float || *d == DType::Float16 || *d == DType::BF16 ||
                       *d == DType::Complex64);
    };
    relEpsilon_ = wide(reference.dtype) || wide(candidate.dtype) ? DBL_EPSILON : FLT_EPSILON;
    epsilon_ = machineEpsilon(judged);
    tiny_ = smallestNormal(judged);
}

void DataMeasurer::add(const TensorData& referencePiece, const TensorData& candidatePiece) {
    if (!measurable_) return;
    const uint64_t n = referencePiece.components();
    if (!referencePiece.hasValues() || !candidatePiece.hasValues() ||
        candidatePiece.components() != n || n > components_ - done_) {
        measurable_ = false;
        return;
    }
    m_.bytesEqual = m_.bytesEqual && referencePiece.bytes.size() == candidatePiece.bytes.size() &&
                    std::memcmp(referencePiece.bytes.data(), candidatePiece.bytes.data(),
                                referencePiece.bytes.size()) == 0;
    DataMeasures& m = m_;
    const uint64_t perElement = perElement_;
    double a[kBlock], b[kBlock];
    for (uint64_t first = 0; first < n; first += kBlock) {
        const uint64_t len = std::min(kBlock, n - first);
        if (referencePiece.decodeComponents(first, len, a) != len ||
            candidatePiece.decodeComponents(first, len, b) != len) {
            measurable_ = false;
            return;
        }
        for (uint64_t k = 0; k < len; ++k) {
            const double r = a[k], c = b[k];
            const uint64_t at = done_ + first + k;  // the component's index in the tensor
            // Ours: NaN/Inf must agree; finite pairs are judged against the floor.
            if (!std::isfinite(r) || !std::isfinite(c)) {
                const bool agree = (std::isnan(r) && std::isnan(c)) || r == c;
                if (!agree && m.nonFiniteMismatches++ == 0 && largestError_ == 0) {
                    m.largestErrorElement = at / perElement;
                    m.largestErrorImaginary = at % perElement == 1;
                    m.largestErrorReference = r;
                    m.largestErrorCandidate = c;
                }
            } else {
                const double error = std::fabs(c - r);
                refSquares_ += r * r;
                ++refFinite_;
                if (error > largestError_) {
                    largestError_ = error;
                    m.largestErrorElement = at / perElement;
                    m.largestErrorImaginary = at % perElement == 1;
                    m.largestErrorReference = r;
                    m.largestErrorCandidate = c;
                }
                if (error > 0) {
                    m.maxUlpError = std::max(m.maxUlpError, error / ulpOf(judged_, r));
                    const double need = requiredScale(error, r, ulps_, epsilon_, tiny_);
                    if (need > m.requiredScale) {
                        m.requiredScale = need;
                        m.worstElement = at / perElement;
                        m.worstImaginary = at % perElement == 1;
                        m.worstReference = r;
                        m.worstCandidate = c;
                    }
                }
            }
            // msprobe: NaN and Inf in the same places (Inf of either sign) count as zeros;
            // anywhere else they make every measure "Nan". A 0-d tensor skips that check.
            double x = r, y = c;
            if (!scalar_) {
                if (std::isnan(x) != std::isnan(y) || std::isinf(x) != std::isinf(y)) {
                    masksDiffer_ = true;
                } else if (!std::isfinite(x)) {
                    x = y = 0;
                }
            }
            const double diff = y - x;
            const double absDiff = std::fabs(diff);
            if (std::isnan(absDiff)) absNan_ = true;
            maxAbs_ = std::max(maxAbs_, absDiff);
            const double rel = x == 0
                                   ? std::fabs((y + relEpsilon_) - (x + relEpsilon_)) / relEpsilon_
                                   : std::fabs(diff / x);
            if (std::isnan(rel)) relNan_ = true;
            maxRel_ = std::max(maxRel_, rel);
            belowThousandth_ += rel < 0.001;
            belowFiveThousandths_ += rel < 0.005;
            dot_ += x * y;
            normRef_ += x * x;
            normCand_ += y * y;
            squaredDiff_ += diff * diff;
        }
    }
    done_ += n;
}

DataMeasures DataMeasurer::finish() {
    if (!measurable_ || done_ != components_) return DataMeasures{};
    DataMeasures m = m_;
    const uint64_t n = components_;
    m.referenceRms = refFinite_ ? std::sqrt(refSquares_ / static_cast<double>(refFinite_)) : 0;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (masksDiffer_) {
        m.cosine = m.euclideanDistance = m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = nan;
        m.maxAbsError = m.maxRelativeError = nan;
        return m;
    }
    m.maxAbsError = absNan_ ? nan : maxAbs_;
    m.maxRelativeError = relNan_ ? nan : maxRel_;
    if (scalar_) return m;  // cosine, EucDist and the ratios are "unsupported" for 0-d tensors
    m.euclideanDistance = std::sqrt(squaredDiff_);
    m.oneThousandthErrRatio = static_cast<double>(belowThousandth_) / static_cast<double>(n);
    m.fiveThousandthsErrRatio = static_cast<double>(belowFiveThousandths_) / static_cast<double>(n);
    if (n > 1) {
        const double na = std::sqrt(normRef_), nb = std::sqrt(normCand_);
        if (na <= DBL_EPSILON && nb <= DBL_EPSILON)
            m.cosine = 1.0;
        else if (na <= DBL_EPSILON || nb <= DBL_EPSILON)
            m.cosine = nan;
        else if (m.bytesEqual)
            m.cosine = 1.0;  // the same bytes: the sums above gave 0.9999999999999998
        else
            m.cosine = dot_ / (na * nb);
    }
    return m;
}

uint64_t dataFingerprint(const TensorData& tensor) {
    DataFingerprint fingerprint(tensor);
    fingerprint.add(tensor);
    return fingerprint.value();
}

DataFingerprint::DataFingerprint(const TensorData& whole)
    : dtypeCode_(whole.header.dtypeCode), count_(whole.count) {}

void DataFingerprint::add(const TensorData& piece) {
    // A sum of well-mixed element hashes does not depend on the order of the elements.
    const size_t size = piece.dtype ? format::dtypeSize(*piece.dtype) : 0;
    if (size == 0) return;
    const uint8_t* p = piece.bytes.data();
    const uint64_t n = piece.bytes.size() / size;
    for (uint64_t i = 0; i < n; ++i, p += size) {
        uint64_t bits = 0, high = 0;
        std::memcpy(&bits, p, std::min<size_t>(size, 8));
        if (size > 8) std::memcpy(&high, p + 8, std::min<size_t>(size - 8, 8));  // complex128
        sum_ += size > 8 ? splitMix(bits ^ splitMix(high)) : splitMix(bits);
    }
}

uint64_t DataFingerprint::value() const {
    return mix(mix(sum_, static_cast<uint64_t>(dtypeCode_)), count_);
}

uint64_t dtypeHash(std::string_view dtype) {
    return hashText(dtype);
}

uint64_t statsFingerprint(std::string_view dtype, uint64_t count, const StatValues& stats) {
    return statsFingerprint(dtypeHash(dtype), count, stats);
}

uint64_t statsFingerprint(uint64_t dtypeHash, uint64_t count, const StatValues& stats) {
    uint64_t h = mix(dtypeHash, count);
    for (int i = 0; i < 4; ++i) {
        uint64_t bits = 0;
        if (stats.has(i)) std::memcpy(&bits, &stats.value[i], sizeof bits);
        h = mix(mix(h, stats.has(i)), bits);
    }
    return h;
}

StatisticDiffs diffStatistics(const StatValues& reference, const StatValues& candidate) {
    StatisticDiffs d;
    for (int i = 0; i < 4; ++i) {
        if (!reference.has(i) || !candidate.has(i)) continue;
        const double r = reference.value[i], c = candidate.value[i];
        if (r == c || (std::isnan(r) && std::isnan(c))) {
            d.diff[i] = d.relativePercent[i] = 0.0;
        } else if (std::isnan(r) || std::isnan(c)) {
            d.diff[i] = d.relativePercent[i] = std::numeric_limits<double>::quiet_NaN();
        } else if (!std::isfinite(r) || !std::isfinite(c)) {
            d.diff[i] = d.relativePercent[i] = c - r;  // the signed infinity
        } else {
            d.diff[i] = c - r;
            d.relativePercent[i] =
                r == 0 ? std::numeric_limits<double>::infinity() : std::fabs((c - r) / r * 100);
        }
    }
    return d;
}

double statisticsRequiredScale(const StatValues& reference, const StatValues& candidate,
                               uint64_t count, double ulps, double epsilon, double tiny,
                               double quantum, bool* nonFinite, int* worstStatistic) {
    double worst = 0;
    const double root = std::sqrt(static_cast<double>(std::max<uint64_t>(count, 1)));
    // Equal finite values need no scale when no allowance is negative (requiredScale gives 0 for
    // an error of 0 then): most statistics of two runs of one model, all of a run and its copy.
    const bool equalNeedNothing = ulps * epsilon >= 0 && tiny >= 0 && quantum >= 0;
    for (int i = 0; i < 4; ++i) {
        if (!reference.has(i) || !candidate.has(i)) continue;
        double r = reference.value[i], c = candidate.value[i], q = quantum;
        if (!std::isfinite(r) || !std::isfinite(c)) {
            if (!((std::isnan(r) && std::isnan(c)) || r == c)) {
                if (nonFinite) *nonFinite = true;
                if (worstStatistic && worst != std::numeric_limits<double>::infinity())
                    *worstStatistic = i;
                worst = std::numeric_limits<double>::infinity();
            }
            continue;
        }
        if (r == c && equalNeedNothing) continue;
        if (i == 3) {  // the norm, as the elements' root mean square
            r /= root;
            c /= root;
            q /= root;
        }
        const double need = requiredScale(std::fabs(c - r), r, ulps, epsilon, tiny, q);
        if (need > worst) {
            worst = need;
            if (worstStatistic) *worstStatistic = i;
        }
    }
    return worst;
}

}  // namespace probe::analysis
