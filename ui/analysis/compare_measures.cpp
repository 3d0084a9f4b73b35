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
    DataMeasures m;
    // Complex tensors: their real and imaginary parts, each a number to judge (an element's
    // index is its component's over two).
    const uint64_t n = reference.components();
    const uint64_t perElement = n == 2 * reference.count ? 2 : 1;
    if (!reference.hasValues() || !candidate.hasValues() || candidate.count != reference.count ||
        candidate.components() != n)
        return m;
    m.complex = perElement == 2;
    m.bytesEqual =
        reference.dtype == candidate.dtype && reference.header.dims == candidate.header.dims &&
        reference.bytes.size() == candidate.bytes.size() &&
        std::memcmp(reference.bytes.data(), candidate.bytes.data(), reference.bytes.size()) == 0;
    const bool scalar = reference.header.dims.empty();
    // msprobe computes relative errors in float32 unless a side is float64 or an integer.
    const auto wide = [](std::optional<DType> d) {
        return !d || !(*d == DType::Float || *d == DType::Float16 || *d == DType::BF16 ||
                       *d == DType::Complex64);
    };
    const double relEpsilon =
        wide(reference.dtype) || wide(candidate.dtype) ? DBL_EPSILON : FLT_EPSILON;
    const double epsilon = machineEpsilon(judged), tiny = smallestNormal(judged);

    double dot = 0, normRef = 0, normCand = 0, squaredDiff = 0, maxAbs = 0, maxRel = 0,
           refSquares = 0, largestError = 0;
    bool absNan = false, relNan = false, masksDiffer = false;
    uint64_t belowThousandth = 0, belowFiveThousandths = 0, refFinite = 0;
    double a[kBlock], b[kBlock];
    for (uint64_t first = 0; first < n; first += kBlock) {
        const uint64_t len = std::min(kBlock, n - first);
        if (reference.decodeComponents(first, len, a) != len ||
            candidate.decodeComponents(first, len, b) != len)
            return DataMeasures{};
        for (uint64_t k = 0; k < len; ++k) {
            const double r = a[k], c = b[k];
            // Ours: NaN/Inf must agree; finite pairs are judged against the floor.
            if (!std::isfinite(r) || !std::isfinite(c)) {
                const bool agree = (std::isnan(r) && std::isnan(c)) || r == c;
                if (!agree && m.nonFiniteMismatches++ == 0 && largestError == 0) {
                    m.largestErrorElement = (first + k) / perElement;
                    m.largestErrorImaginary = (first + k) % perElement == 1;
                    m.largestErrorReference = r;
                    m.largestErrorCandidate = c;
                }
            } else {
                const double error = std::fabs(c - r);
                refSquares += r * r;
                ++refFinite;
                if (error > largestError) {
                    largestError = error;
                    m.largestErrorElement = (first + k) / perElement;
                    m.largestErrorImaginary = (first + k) % perElement == 1;
                    m.largestErrorReference = r;
                    m.largestErrorCandidate = c;
                }
                if (error > 0) {
                    m.maxUlpError = std::max(m.maxUlpError, error / ulpOf(judged, r));
                    const double need = requiredScale(error, r, ulps, epsilon, tiny);
                    if (need > m.requiredScale) {
                        m.requiredScale = need;
                        m.worstElement = (first + k) / perElement;
                        m.worstImaginary = (first + k) % perElement == 1;
                        m.worstReference = r;
                        m.worstCandidate = c;
                    }
                }
            }
            // msprobe: NaN and Inf in the same places (Inf of either sign) count as zeros;
            // anywhere else they make every measure "Nan". A 0-d tensor skips that check.
            double x = r, y = c;
            if (!scalar) {
                if (std::isnan(x) != std::isnan(y) || std::isinf(x) != std::isinf(y)) {
                    masksDiffer = true;
                } else if (!std::isfinite(x)) {
                    x = y = 0;
                }
            }
            const double diff = y - x;
            const double absDiff = std::fabs(diff);
            if (std::isnan(absDiff)) absNan = true;
            maxAbs = std::max(maxAbs, absDiff);
            const double rel = x == 0 ? std::fabs((y + relEpsilon) - (x + relEpsilon)) / relEpsilon
                                      : std::fabs(diff / x);
            if (std::isnan(rel)) relNan = true;
            maxRel = std::max(maxRel, rel);
            belowThousandth += rel < 0.001;
            belowFiveThousandths += rel < 0.005;
            dot += x * y;
            normRef += x * x;
            normCand += y * y;
            squaredDiff += diff * diff;
        }
    }
    m.referenceRms = refFinite ? std::sqrt(refSquares / static_cast<double>(refFinite)) : 0;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (masksDiffer) {
        m.cosine = m.euclideanDistance = m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = nan;
        m.maxAbsError = m.maxRelativeError = nan;
        return m;
    }
    m.maxAbsError = absNan ? nan : maxAbs;
    m.maxRelativeError = relNan ? nan : maxRel;
    if (scalar) return m;  // cosine, EucDist and the ratios are "unsupported" for 0-d tensors
    m.euclideanDistance = std::sqrt(squaredDiff);
    m.oneThousandthErrRatio = static_cast<double>(belowThousandth) / static_cast<double>(n);
    m.fiveThousandthsErrRatio = static_cast<double>(belowFiveThousandths) / static_cast<double>(n);
    if (n > 1) {
        const double na = std::sqrt(normRef), nb = std::sqrt(normCand);
        if (na <= DBL_EPSILON && nb <= DBL_EPSILON)
            m.cosine = 1.0;
        else if (na <= DBL_EPSILON || nb <= DBL_EPSILON)
            m.cosine = nan;
        else
            m.cosine = dot / (na * nb);
    }
    return m;
}

uint64_t dataFingerprint(const TensorData& tensor) {
    // A sum of well-mixed element hashes does not depend on the order of the elements.
    const size_t size = tensor.dtype ? format::dtypeSize(*tensor.dtype) : 0;
    uint64_t sum = 0;
    if (size > 0 && size <= 8) {
        const uint8_t* p = tensor.bytes.data();
        const uint64_t n = tensor.bytes.size() / size;
        for (uint64_t i = 0; i < n; ++i, p += size) {
            uint64_t bits = 0;
            std::memcpy(&bits, p, size);
            sum += splitMix(bits);
        }
    } else {
        sum = format::contentHash64(tensor.bytes.data(), tensor.bytes.size());
    }
    return mix(mix(sum, static_cast<uint64_t>(tensor.header.dtypeCode)), tensor.count);
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
