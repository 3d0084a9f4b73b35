// The live task "overflow_check": every selected op is watched, the statistics of its tensors
// computed as they arrive and their data held until the op ends; only an op where an overflow
// is born (every input finite and an output holding Inf or NaN, or inputs holding Inf and no NaN
// and an output holding NaN; no child where it was born, no op
// inside it reading such values that came in from outside, not the backward of a layer whose
// forward read or made them, not an op that makes Inf on purpose) is written, with its tensors,
// rows and op_param.json. After `overflow_nums` births nothing more is watched, or, with
// `stop_after_overflow`, the program is ended once they are on disk. The rule is
// format/overflow_rule.h, the one `probe overflow` applies to a dump.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "probe/format/dtype.h"
#include "probe/format/overflow_rule.h"

namespace probe::runtime {

class Runtime;
struct Frame;
struct ThreadState;
struct TensorReport;

// What an op under watch holds until it ends (Frame::overflow).
struct OverflowCandidate {
    struct Held {
        bool isOutput = false;
        std::string indexText, fileName, dtypeName, shape;
        int dtypeCode = 0, format = 2;
        std::vector<int64_t> dims;
        std::unique_ptr<uint8_t[]> data;  // null once the op can no longer be a birth
        uint64_t nbytes = 0;
        std::optional<double> max, min, mean, norm;
        std::optional<format::OverflowFingerprint> print;  // when overflowed
    };
    std::vector<Held> tensors;
    std::string paramJson;
    bool inputBad = false;                     // an input holds Inf/NaN: the overflow came in
    bool outputBad = false;                    // an output holds Inf/NaN
    bool inputNan = false, outputNan = false;  // NaN among them: one made of Inf is born here
    // An overflowed input or output descends from an overflow born of finite inputs this round
    // (a NaN made of such an Inf follows from that birth; of a mask's -inf, it is born here).
    bool inputTainted = false, outputTainted = false;
    bool childBorn = false;  // born in a child op (or deeper): not here
    // An op inside it read overflowed values that came in from outside the ops watched (a NaN
    // weight): they came in there, not born (format::overflowFingerprint).
    bool fedInside = false;
};

class OverflowWatch {
public:
    explicit OverflowWatch(Runtime& runtime) : runtime_(runtime) {}

    // At start: no births yet, nothing seen.
    void reset() {
        births_.store(0);
        std::lock_guard<std::mutex> lock(seenMutex_);
        seen_.clear();
    }
    // overflow_nums births were written: the rest of the run is not watched (-1: never).
    bool exhausted(int64_t limit) const { return limit >= 0 && births_.load() >= limit; }
    int64_t births() const { return births_.load(); }

    // What a selected op begun now holds (Frame::overflow).
    static std::shared_ptr<OverflowCandidate> watch(const char* paramJson);
    // A tensor of the top op (its report checked already). Returns 1 like a dumped tensor.
    int hold(ThreadState& ts, Frame& frame, const TensorReport& tensor,
             std::optional<format::DType> dtype, uint64_t count);
    // The top op ends: written when an overflow is born there; tells its parent.
    void opEnding(ThreadState& ts);

private:
    // An overflowed tensor of the top op, for its round's record (seen_).
    void noteOverflowed(ThreadState& ts, const Frame& frame, OverflowCandidate& candidate,
                        const OverflowCandidate::Held& held, bool nan);
    // The top op is inside the backward op of a layer whose forward overflowed in this round.
    bool forwardOverflowed(const ThreadState& ts);
    void write(ThreadState& ts, const Frame& frame, OverflowCandidate& candidate);
    // stop_after_overflow: the last birth is written; everything is drained, then the process
    // ends with format::kOverflowStopExitCode.
    [[noreturn]] void endProgram(int64_t births);

    Runtime& runtime_;
    std::atomic<int64_t> births_{0};
    // What each recent round of the process has seen, as `probe overflow` groups a dump's rows
    // by round folder: rounds interleave (an eval forward in a step, a layer skipped in some),
    // and a backward node may run on another thread than its forward. Only overflowed tensors
    // come here.
    struct RoundSeen {
        std::set<format::OverflowFingerprint> made;  // its overflowed outputs
        // Layer-level ops whose own inputs or outputs overflowed (their backward op computes
        // from what they saved; a mask's -inf inside a layer is none of them).
        std::unordered_set<std::string> overflowedLayers;
        // Its overflowed outputs that descend from an overflow born of finite inputs (by an op
        // not of the ignored types: a mask's masked_fill is none).
        std::set<format::OverflowFingerprint> tainted;
    };
    static constexpr size_t kRoundsSeen = 16;
    std::mutex seenMutex_;
    std::map<int64_t, RoundSeen> seen_;
};

}  // namespace probe::runtime
