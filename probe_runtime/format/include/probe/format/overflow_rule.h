// When a tensor counts as overflowed, and which ops are never where an overflow is born: one
// rule for `probe overflow` (on a dump) and the runtime's live task "overflow_check".
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probe::format {

// Why a tensor with these extremes is overflowed ("nan", "max=inf", "min=-inf", "max=inf
// min=-inf"), "" when it is not. `nan`: a NaN element is known (statisticsShowNan).
std::string overflowReason(double max, double min, bool nan);

// Whether a tensor's statistics say it holds a NaN: an extreme is NaN (ours, and msprobe's, make
// them NaN then), or the mean is and +inf and -inf together do not explain it (they make the
// mean NaN without any NaN element: such a tensor was said to hold one).
bool statisticsShowNan(double max, double min, double mean);

// Whether an op's tensors make it where an overflow may be born (the other conditions aside):
// an output overflowed from inputs that are not, or an output holding NaN from inputs holding
// Inf and no NaN (inf - inf, a softmax row all -inf: an attention mask's -inf hid every NaN
// born after it), unless that Inf descends from an overflow born of finite inputs in the round
// (`inputTainted`: a linear of an Inf row makes NaN, which follows from that birth).
inline bool overflowBornOf(bool inputOverflowed, bool inputNan, bool inputTainted,
                           bool outputOverflowed, bool outputNan) {
    return outputOverflowed && (!inputOverflowed || (outputNan && !inputNan && !inputTainted));
}

// Whether an op's overflowed output descends from an overflow born of finite inputs in its round
// (`inputTainted` of the ops that read it): made of such an input, or itself made of finite
// inputs by an op not of the ignored types (a mask's masked_fill makes an Inf on purpose).
inline bool overflowOutputTainted(bool inputTainted, bool inputOverflowed, bool ignoredType) {
    return inputTainted || (!inputOverflowed && !ignoredType);
}

// Op types (case-insensitive fragments) that are never a birth: msprobe's overflow_check
// ignores empty and fill; an Inf from fill/full/masked_fill is a value the program asked for
// (attention masks); parameters_grad entries repeat gradients their backward entry holds.
const std::vector<std::string>& defaultOverflowIgnoredTypes();
bool isOverflowIgnoredType(std::string_view type, const std::vector<std::string>& fragments);

// What tells an overflowed tensor apart from another: its dtype, shape and statistics, bit for
// bit (every NaN one NaN). An overflowed input with the fingerprint of no output before it in
// its round came in from outside the ops dumped (a parameter or buffer, the model's input): an
// op that reads it inside a module makes the module no birth. Two tensors with equal statistics
// cannot be told apart.
using OverflowFingerprint = std::array<uint64_t, 6>;
OverflowFingerprint overflowFingerprint(std::string_view dtype, std::string_view shape, double max,
                                        double min, std::optional<double> mean,
                                        std::optional<double> norm);

// Where ".backward" marks `name` as a backward op's: at its end, or followed by
// `callSeparator` and a call number ("fc.backward_2" with '_'; msprobe's
// "Module.fc.Linear.backward.0" with '.'); npos for any other name. A backward op computes from
// the tensors its forward saved: overflowed values its forward read or made are no birth there.
size_t backwardMarkAt(std::string_view name, char callSeparator);
// The forward layer-level op of an op-level backward op: "fc" for "fc.backward" and
// "fc.backward_2" (its third call's), "" for any other name.
std::string_view forwardOfBackwardLayerOp(std::string_view name);

// The exit code of a program ended by `stop_after_overflow` (op-level and code-level configs)
// once its last overflow birth is on disk.
constexpr int kOverflowStopExitCode = 3;

}  // namespace probe::format
