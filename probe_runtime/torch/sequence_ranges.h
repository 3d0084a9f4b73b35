// The autograd sequence numbers each layer call's forward used on one thread, from which the
// adapter tells which layer call made an autograd node (and so which "<layer>.backward" op its
// backward belongs to). Knows nothing of torch: tested on its own.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace probe::torch_adapter {

// A thread's sequence numbers only grow, and the calls of a model repeat: each call of the model
// (the outermost module) is kept as one segment, its first number and a shape, the layer calls'
// places in it, shared by every call that made the same ones (a training loop has one shape).
// A range per layer call, in a ring of millions, cost a sleeping probe 2% of a small MLP's step:
// every step wrote into memory not touched for a long time. Now a step writes one segment.
//
// Not thread-safe: the adapter holds its layers' mutex around every call.
class SequenceRanges {
public:
    static constexpr size_t kSegmentCapacity = size_t{1} << 18;   // model calls kept
    static constexpr size_t kMaxShapePieces = size_t{1} << 20;    // layer calls in all shapes
    static constexpr size_t kMaxSegmentPieces = size_t{1} << 12;  // layer calls in one segment

    explicit SequenceRanges(size_t segmentCapacity = kSegmentCapacity,
                            size_t maxShapePieces = kMaxShapePieces);

    // A call of the model begins or ends on this thread: the layer calls recorded since the last
    // close form a segment (one of at most kMaxSegmentPieces: a longer one is cut into several).
    void closeSegment();
    bool hasOpenSegment() const { return !open_.empty(); }

    // A layer call's forward used the numbers [first, end): ignored unless first < end and
    // layer >= 0. Numbers going back (never expected) start everything over.
    void add(uint64_t first, uint64_t end, int layer);

    struct Found {
        int layer;  // -1: none
        uint64_t first, end;
    };
    // The layer call whose range [first, end) holds `sequence`; layer -1 when none (made outside
    // every layer call, or by a call too old to be kept).
    Found findRange(uint64_t sequence) const;
    // findRange as (layer, the call's first number), or (-1, 0).
    std::pair<int, uint64_t> find(uint64_t sequence) const {
        const Found found = findRange(sequence);
        return {found.layer, found.first};
    }

    size_t segmentCount() const { return ring_.size() + (open_.empty() ? 0 : 1); }
    size_t shapeCount() const { return shapes_.size(); }

private:
    struct Piece {
        uint32_t offset, length;  // [base + offset, base + offset + length)
        int32_t layer;
        bool operator==(const Piece& other) const {
            return offset == other.offset && length == other.length && layer == other.layer;
        }
    };
    struct Segment {
        uint64_t base, end;
        uint32_t shape;
    };

    uint32_t intern();
    void clear();
    static Found findIn(const std::vector<Piece>& pieces, uint64_t base, uint64_t sequence);
    // No modulo: a division at each step of the search cost more than the search.
    const Segment& at(size_t index) const {
        const size_t slot = oldest_ + index;
        return ring_[slot < ring_.size() ? slot : slot - ring_.size()];
    }

    size_t segmentCapacity_, maxShapePieces_;
    std::vector<Piece> open_;  // the segment being recorded
    uint64_t openBase_ = 0, openEnd_ = 0;
    uint64_t lastFirst_ = 0;
    std::vector<Segment> ring_;  // sealed, oldest first from oldest_
    size_t oldest_ = 0;
    std::vector<std::vector<Piece>> shapes_;
    std::unordered_multimap<uint64_t, uint32_t> shapesByHash_;
    size_t shapePieces_ = 0;
    uint32_t lastShape_ = UINT32_MAX;
};

}  // namespace probe::torch_adapter
