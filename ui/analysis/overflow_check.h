// Where an overflow is born: the op whose inputs are finite (and, when asked, within the range of a
// narrower float format) while one of its outputs is not. Everything after that op merely
// inherits the Inf/NaN. Works on the index of a dump of either layout, per process (rank), and
// writes the msprobe overflow_check result file (anomaly_analyze_<ns>.json). No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/dump_index.h"
#include "probe/format/overflow_rule.h"

namespace probe::analysis {

// A narrower float format whose largest finite value bounds what counts as an overflow risk.
// float16 tensors cannot hold more than 65504 (they hold inf instead), so the limit matters for
// float32 (or float64) runs that are meant to run in float16/bfloat16 later.
enum class RangeLimit { None, Float16, BFloat16 };
std::optional<RangeLimit> parseRangeLimit(
    std::string_view name);                    // float16|fp16|half, bfloat16|bf16
const char* rangeLimitName(RangeLimit limit);  // "float16", "bfloat16", "none"
double rangeLimitMax(RangeLimit limit);        // 65504, 3.3895e38, inf

struct OverflowOptions {
    RangeLimit range = RangeLimit::None;
    // Ops whose type contains one of these (case-insensitive) are never a birth: msprobe's
    // overflow_check ignores empty and fill; an Inf from fill/full/masked_fill is a value the
    // program asked for (attention masks); parameters_grad entries repeat gradients that the
    // backward entries before them already hold.
    std::vector<std::string> ignore = format::defaultOverflowIgnoredTypes();
    bool allBirths = false;  // every birth in every round; else the first of each process
    DumpScope scope;  // the rank or step folder a user named; every process and round by default
    // Rows without statistics (task tensor) are judged by their tensor files; the app, which
    // computes those statistics as it reads the dump, says false: such rows wait for them.
    bool readTensorFiles = true;
};

// Why one tensor counts as overflowed, "" when it does not.
struct TensorVerdict {
    uint32_t row = kNone;
    bool overflowed = false;
    bool nan = false;  // it holds NaN (beside any Inf)
    std::string why;   // "max=inf", "min=-70000 beyond float16 (65504)"
};

struct OverflowBirth {
    uint32_t process = 0;
    uint32_t op = 0;
    int32_t round = 0;
    std::vector<TensorVerdict> inputs, outputs;  // the op's rows of that round, in slot order
    std::string why;                             // "output 0: max=inf"
    // A NaN born of inputs holding Inf and no NaN (inf - inf, a softmax row all -inf): an
    // attention's -inf mask hid every NaN born after it.
    bool nanOfInfinities = false;
};

struct OverflowReport {
    RangeLimit range = RangeLimit::None;
    std::vector<OverflowBirth> births;  // by process, then in the order they ran
    // Per process with overflowed tensors but no birth among the dumped ops (the values came in
    // with the inputs of the first op dumped): a sentence for people, else "".
    std::vector<std::string> unexplained;
    // Rows without statistics (task "tensor") whose tensor file could not be read: how many.
    uint64_t unreadableTensors = 0;
    // By process: whether it was checked (OverflowOptions::scope may leave some out).
    std::vector<bool> checked;
    // Problems reading what was checked (the dump's; a caller checking a part sets its part's):
    // then "no overflow" holds only of what could be read.
    uint64_t problems = 0;
};

OverflowReport findOverflowBirths(const DumpIndex& index, const OverflowOptions& options);

// For a terminal: one block per birth (round, op name path, type, why, its tensors, stack).
std::string formatOverflowReport(const DumpIndex& index, const OverflowReport& report);

// The result in the shape of msprobe's anomaly_analyze_<timestamp>.json:
// {"rank_0": [{"op_name", "data_info", "construct_info", "stack_info", ...}]}, written as Python's
// json.dump(indent=2) would (non-finite values as NaN/Infinity, as dump.json spells them).
std::string anomalyAnalyzeJson(const DumpIndex& index, const OverflowReport& report);

// "rank_0" for rank0 (and for the only proc<pid> of a dump), else "rank_<key>".
std::string anomalyRankKey(const DumpIndex& index, uint32_t process);

}  // namespace probe::analysis
