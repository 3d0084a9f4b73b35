// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "sequence_ranges.h"

namespace probe::torch_adapter {
namespace {

struct Call {
    uint64_t first, end;
    int layer;
};

// The layer call holding `sequence` among `calls`, by a plain scan: the answer SequenceRanges
// must give for calls it still keeps.
SequenceRanges::Found byScan(const std::vector<Call>& calls, uint64_t sequence) {
    for (const Call& call : calls)
        if (call.first <= sequence && sequence < call.end)
            return {call.layer, call.first, call.end};
    return {-1, 0, 0};
}

void expectSame(const SequenceRanges& ranges, const std::vector<Call>& calls, uint64_t from,
                uint64_t to) {
    ASSERT_LT(from, to);
    for (uint64_t sequence = from; sequence < to; ++sequence) {
        const auto want = byScan(calls, sequence);
        const auto got = ranges.findRange(sequence);
        ASSERT_EQ(got.layer, want.layer) << sequence;
        if (want.layer < 0) continue;
        ASSERT_EQ(got.first, want.first) << sequence;
        ASSERT_EQ(got.end, want.end) << sequence;
    }
}

// A training loop: each call of the model makes the same layer calls, with numbers the model
// uses itself between them. Every call shares one shape, and every number is found.
TEST(SequenceRanges, ATrainingLoopsCallsShareOneShapeAndEveryNumberIsFound) {
    SequenceRanges ranges;
    std::vector<Call> calls;
    uint64_t next = 7;
    for (int step = 0; step < 1000; ++step) {
        ranges.closeSegment();
        next += 1;  // the model's own op first
        for (int layer = 0; layer < 5; ++layer) {
            const uint64_t length = 1 + layer % 3;
            calls.push_back({next, next + length, layer});
            ranges.add(next, next + length, layer);
            next += length + (layer == 2 ? 2 : 0);
        }
        ranges.closeSegment();
        next += 3;  // the loss, the optimizer: no layer's
    }
    EXPECT_EQ(ranges.shapeCount(), 1u);
    EXPECT_EQ(ranges.segmentCount(), 1000u);
    expectSame(ranges, calls, 0, next + 5);
}

// Calls of every shape, layer calls outside any model call, ranges of no number, and a backward
// pass looking up numbers of the call still being recorded.
TEST(SequenceRanges, CallsOfAnyShapeAreFoundWhileRecordedAndOnceClosed) {
    std::mt19937 random(12345);
    SequenceRanges ranges;
    std::vector<Call> calls;
    uint64_t next = 0;
    for (int step = 0; step < 400; ++step) {
        const bool inModelCall = random() % 5 != 0;
        const int layerCalls = static_cast<int>(random() % 12);
        for (int i = 0; i < layerCalls; ++i) {
            next += random() % 3;
            const uint64_t length = random() % 4;  // 0: a call that made no node
            const int layer = static_cast<int>(random() % 7);
            ranges.add(next, next + length, layer);
            if (length) calls.push_back({next, next + length, layer});
            next += length;
        }
        if (step % 50 == 0) expectSame(ranges, calls, 0, next + 2);  // the open one too
        if (inModelCall) ranges.closeSegment();
    }
    ASSERT_GT(calls.size(), 1000u);
    EXPECT_GT(ranges.shapeCount(), 10u);
    expectSame(ranges, calls, 0, next + 2);
}

// Only the newest calls of the model are kept: older ones are forgotten, whole.
TEST(SequenceRanges, TheOldestCallsAreForgottenOnceTheRingIsFull) {
    SequenceRanges ranges(8);
    std::vector<Call> kept;
    uint64_t next = 100;
    for (int step = 0; step < 20; ++step) {
        if (step == 12) kept.clear();
        for (int layer = 0; layer < 3; ++layer) {
            ranges.add(next, next + 2, layer);
            if (step >= 12) kept.push_back({next, next + 2, layer});
            next += 2;
        }
        ranges.closeSegment();
    }
    EXPECT_EQ(ranges.segmentCount(), 8u);
    expectSame(ranges, kept, 0, next);  // steps 0 to 11: not found
}

// A program whose calls all differ lets its shapes go rather than grow without end.
TEST(SequenceRanges, ShapesAreBoundedWhenNoTwoCallsAreAlike) {
    SequenceRanges ranges(SequenceRanges::kSegmentCapacity, 64);
    std::vector<Call> sinceLastReset;
    uint64_t next = 0;
    for (int step = 0; step < 200; ++step) {
        const uint64_t length = 1 + static_cast<uint64_t>(step);  // a shape of its own
        const size_t before = ranges.shapeCount();
        ranges.add(next, next + length, 0);
        ranges.add(next + length, next + length + 1, 1);
        ranges.closeSegment();
        if (ranges.shapeCount() <= before) sinceLastReset.clear();
        sinceLastReset.push_back({next, next + length, 0});
        sinceLastReset.push_back({next + length, next + length + 1, 1});
        next += length + 1;
        ASSERT_LE(ranges.shapeCount(), 32u);
    }
    ASSERT_GT(sinceLastReset.size(), 2u);
    expectSame(ranges, sinceLastReset, sinceLastReset.front().first, next + 1);
}

// A model call making more layer calls than a segment holds (a loop over a layer), numbers
// far apart, and numbers that go back (never expected: everything starts over).
TEST(SequenceRanges, LongCallsWideGapsAndNumbersGoingBack) {
    SequenceRanges ranges;
    std::vector<Call> calls;
    uint64_t next = 1;
    for (size_t i = 0; i < 3 * SequenceRanges::kMaxSegmentPieces + 5; ++i) {
        ranges.add(next, next + 1, static_cast<int>(i % 4));
        calls.push_back({next, next + 1, static_cast<int>(i % 4)});
        next += 2;
    }
    ranges.closeSegment();
    EXPECT_EQ(ranges.segmentCount(), 4u);
    expectSame(ranges, calls, 0, next);
    const uint64_t far = next + (uint64_t{1} << 33);  // past what an offset holds
    ranges.add(next, next + 1, 1);
    ranges.add(far, far + 3, 2);
    calls.push_back({next, next + 1, 1});
    calls.push_back({far, far + 3, 2});
    expectSame(ranges, calls, next - 2, next + 3);
    expectSame(ranges, calls, far - 2, far + 5);
    ranges.closeSegment();
    expectSame(ranges, calls, far - 2, far + 5);

    ranges.add(10, 12, 3);  // back: the rest is forgotten
    ranges.closeSegment();
    expectSame(ranges, {{10, 12, 3}}, 0, next);
    expectSame(ranges, {{10, 12, 3}}, far - 2, far + 5);
}

}  // namespace
}  // namespace probe::torch_adapter
