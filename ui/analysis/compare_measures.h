// The numbers of one tensor's comparison between two runs, and the noise floor that judges
// them (docs/compare.md). Pure functions, no I/O: compare.cpp applies them to whole dumps.
//
// The measures are msprobe's (its compare's column definitions, reference = "Bench", candidate
// = "NPU"), plus the largest error in ULPs. The verdict is ours: an element differs when
//   |candidate - reference| > ulps(dtype) * epsilon(dtype) * max(|reference|, scale) + smallest
//   normal(dtype)
// where `scale` is the root mean square of the numbers the op worked with (the reference
// tensor and the op's reference inputs): a value that is 1e-8 because it is the mean of
// normalised numbers is judged against the size of those numbers, not against itself.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "analysis/tensor_view.h"
#include "probe/format/dtype.h"

namespace probe::analysis {

// How many units of its dtype's machine epsilon an element may differ by, relative to the
// larger of itself and the scale. Integer and bool tensors must be equal.
struct NoiseFloorUlps {
    double float64 = 1024;
    double float32 = 256;
    double float16 = 4;
    double bfloat16 = 2;
};

// A dtype as either layout spells it: "float", "bf16" (atb), "torch.float32", "torch.bfloat16".
std::optional<format::DType> dtypeFromAnyName(std::string_view name);
// The dtype whose precision judges a tensor held as `reference` in the reference run and
// `candidate` in the other: the reference's (the run you trust: a candidate that rounded a
// float32 tensor to bfloat16 diverges where it rounded), else the candidate's when the
// reference's is unknown.
std::optional<format::DType> judgingDType(std::optional<format::DType> reference,
                                          std::optional<format::DType> candidate);

// Machine epsilon (the spacing of numbers at 1.0): 2^-23 for float32, 2^-7 for bfloat16, 2^-10
// for float16, 2^-52 for float64; 0 for integer and bool dtypes.
double machineEpsilon(format::DType dtype);
// The smallest normal number (below it flush-to-zero differences live); 0 for exact dtypes.
double smallestNormal(format::DType dtype);
// The spacing of the dtype's numbers at |x| (for a subnormal or zero x, the smallest
// subnormal); 1 for integer and bool dtypes.
double ulpOf(format::DType dtype, double x);
double allowedUlps(const NoiseFloorUlps& floor, format::DType dtype);

// The smallest scale at which a difference of `error` at a reference value `reference` is
// noise under the rule above: 0 when it is noise at any scale (within its own relative
// tolerance), +inf when no scale excuses it (exact dtypes). `quantum` is an absolute allowance
// on top (statistics printed with 6 decimals).
double requiredScale(double error, double reference, double ulps, double epsilon, double tiny,
                     double quantum = 0);

// msprobe's measures of two tensors' data, and ours. Filled only when both have data of the
// same number of elements (a shape mismatch has no element-wise measures).
struct DataMeasures {
    // msprobe (npy_compare.py). nullopt: "unsupported" (cosine of one element, and cosine,
    // EucDist and the ratios of a 0-d tensor); NaN: msprobe's "Nan" (NaN/Inf in different
    // places, or cosine with one side all zero).
    std::optional<double> cosine, euclideanDistance;
    double maxAbsError = 0, maxRelativeError = 0;
    std::optional<double> oneThousandthErrRatio, fiveThousandthsErrRatio;
    // Ours.
    double maxUlpError = 0;   // largest |difference| in ULPs of the judging dtype at the reference
    bool bytesEqual = false;  // same dtype, shape and bytes
    uint64_t nonFiniteMismatches = 0;  // NaN in one run only, or a different infinity
    double requiredScale = 0;          // the largest requiredScale() over the elements
    uint64_t worstElement = 0;         // the element that needs it (flat row-major index)
    double worstReference = 0, worstCandidate = 0;
    // The element with the largest |difference| (the first NaN/Inf mismatch when no finite
    // pair differs), whatever the floor: what --exact shows.
    uint64_t largestErrorElement = 0;
    double largestErrorReference = 0, largestErrorCandidate = 0;
    double referenceRms = 0;  // root mean square of the reference's finite elements
    // Complex tensors: each part is judged; which part of the two elements above differs.
    bool complex = false, worstImaginary = false, largestErrorImaginary = false;
};

// `judged` is judgingDType() of the two; `ulps` the allowance for it.
DataMeasures measureData(const TensorData& reference, const TensorData& candidate,
                         format::DType judged, double ulps);

// measureData a piece at a time (tensors read from their files in pieces, TensorFileReader):
// made from the two tensors as wholes (header, dtype and count; no bytes needed), given their
// elements in order, as many of each at a time, then finished. The same numbers as measureData
// to the bit, whatever the pieces.
class DataMeasurer {
public:
    DataMeasurer(const TensorData& reference, const TensorData& candidate, format::DType judged,
                 double ulps);
    // The next elements of each: pieces of the same count (TensorData with dtype, count, bytes).
    void add(const TensorData& referencePiece, const TensorData& candidatePiece);
    DataMeasures finish();

private:
    DataMeasures m_;
    bool measurable_ = false, scalar_ = false;
    uint64_t perElement_ = 1, components_ = 0, done_ = 0;  // components given so far
    double relEpsilon_ = 0, ulps_ = 0, epsilon_ = 0, tiny_ = 0;
    format::DType judged_;
    double dot_ = 0, normRef_ = 0, normCand_ = 0, squaredDiff_ = 0, maxAbs_ = 0, maxRel_ = 0,
           refSquares_ = 0, largestError_ = 0;
    bool absNan_ = false, relNan_ = false, masksDiffer_ = false;
    uint64_t belowThousandth_ = 0, belowFiveThousandths_ = 0, refFinite_ = 0;
};

// A 64-bit fingerprint of a tensor's dtype, element count and values, independent of their
// order: the same data seen again (an op's output arriving as the next op's input, a weight
// arriving transposed or reshaped) has the same fingerprint.
uint64_t dataFingerprint(const TensorData& tensor);
// The same a piece at a time: made from the tensor as a whole (dtype code and count), given its
// elements in pieces (any order).
class DataFingerprint {
public:
    explicit DataFingerprint(const TensorData& whole);
    void add(const TensorData& piece);
    uint64_t value() const;

private:
    int32_t dtypeCode_ = 0;
    uint64_t count_ = 0, sum_ = 0;
};

// Four statistics of a tensor, any of them absent (N/A).
struct StatValues {
    double value[4] = {0, 0, 0, 0};  // max, min, mean, norm (L2)
    uint8_t present = 0;             // bit i: value[i] is known
    bool has(int i) const { return present & (1u << i); }
};
uint64_t statsFingerprint(std::string_view dtype, uint64_t count, const StatValues& stats);
// The same from the dtype's hash (dtypeHash(dtype)), worked out once per dtype string.
uint64_t dtypeHash(std::string_view dtype);
uint64_t statsFingerprint(uint64_t dtypeHash, uint64_t count, const StatValues& stats);

// msprobe's statistics compare (acc_compare.py CalcStatsDiff): "Max diff", "Min diff", "Mean
// diff", "L2norm diff" = candidate - reference, and "MaxRelativeErr" ... "NormRelativeErr" =
// |diff / reference| * 100 (%). Equal values give 0 and 0 (NaN vs NaN too); a NaN on one side
// gives NaN and NaN; an infinity gives the signed infinity for both; a zero reference gives +inf
// for the relative error. nullopt when either side has no value (N/A).
struct StatisticDiffs {
    std::optional<double> diff[4], relativePercent[4];
};
StatisticDiffs diffStatistics(const StatValues& reference, const StatValues& candidate);

// The statistics-only rule: requiredScale over max, min, mean and the root mean square
// (norm / sqrt(count)); `quantum` the printing precision of the statistics (atb: 1e-6).
// `nonFinite` is set when a statistic is NaN or infinite in one run and not in the other.
double statisticsRequiredScale(const StatValues& reference, const StatValues& candidate,
                               uint64_t count, double ulps, double epsilon, double tiny,
                               double quantum, bool* nonFinite, int* worstStatistic);

}  // namespace probe::analysis
