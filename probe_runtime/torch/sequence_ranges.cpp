// SPDX-License-Identifier: GPL-3.0-or-later
#include "sequence_ranges.h"

#include <algorithm>

namespace probe::torch_adapter {

SequenceRanges::SequenceRanges(size_t segmentCapacity, size_t maxShapePieces)
    : segmentCapacity_(std::max<size_t>(segmentCapacity, 1)), maxShapePieces_(maxShapePieces) {}

void SequenceRanges::add(uint64_t first, uint64_t end, int layer) {
    if (end <= first || layer < 0) return;
    if (first < lastFirst_) {  // never expected: start over
        clear();
        open_.clear();
    }
    lastFirst_ = first;
    if (!open_.empty() && (open_.size() >= kMaxSegmentPieces || first - openBase_ > UINT32_MAX))
        closeSegment();
    if (open_.empty()) openBase_ = openEnd_ = first;
    const auto length = static_cast<uint32_t>(std::min<uint64_t>(end - first, UINT32_MAX));
    open_.push_back({static_cast<uint32_t>(first - openBase_), length, layer});
    openEnd_ = std::max(openEnd_, first + length);
}

void SequenceRanges::closeSegment() {
    if (open_.empty()) return;
    const Segment segment{openBase_, openEnd_, intern()};
    open_.clear();
    if (ring_.size() < segmentCapacity_) {
        ring_.push_back(segment);
        return;
    }
    ring_[oldest_] = segment;
    oldest_ = oldest_ + 1 == ring_.size() ? 0 : oldest_ + 1;
}

uint32_t SequenceRanges::intern() {
    if (lastShape_ < shapes_.size() && shapes_[lastShape_] == open_) return lastShape_;
    uint64_t hash = 1469598103934665603ull;  // FNV-1a over the pieces' fields
    for (const Piece& piece : open_)
        for (const uint64_t field :
             {uint64_t{piece.offset}, uint64_t{piece.length}, uint64_t(uint32_t(piece.layer))})
            hash = (hash ^ field) * 1099511628211ull;
    const auto [from, to] = shapesByHash_.equal_range(hash);
    for (auto it = from; it != to; ++it)
        if (shapes_[it->second] == open_) return lastShape_ = it->second;
    // A program whose calls all differ: let the kept ones go rather than grow without end (the
    // backward ops of calls older than this are not counted).
    if (shapePieces_ + open_.size() > maxShapePieces_) clear();
    lastShape_ = static_cast<uint32_t>(shapes_.size());
    shapes_.push_back(open_);
    shapePieces_ += open_.size();
    shapesByHash_.emplace(hash, lastShape_);
    return lastShape_;
}

void SequenceRanges::clear() {
    ring_.clear();
    oldest_ = 0;
    shapes_.clear();
    shapesByHash_.clear();
    shapePieces_ = 0;
    lastShape_ = UINT32_MAX;
}

SequenceRanges::Found SequenceRanges::findIn(const std::vector<Piece>& pieces, uint64_t base,
                                             uint64_t sequence) {
    const uint64_t offset = sequence - base;
    if (sequence < base || offset > UINT32_MAX) return {-1, 0, 0};
    const auto after =
        std::upper_bound(pieces.begin(), pieces.end(), offset,
                         [](uint64_t value, const Piece& piece) { return value < piece.offset; });
    if (after == pieces.begin()) return {-1, 0, 0};
    const Piece& piece = *(after - 1);
    if (offset >= uint64_t{piece.offset} + piece.length) return {-1, 0, 0};
    return {piece.layer, base + piece.offset, base + piece.offset + piece.length};
}

SequenceRanges::Found SequenceRanges::findRange(uint64_t sequence) const {
    if (!open_.empty() && sequence >= openBase_)
        return sequence < openEnd_ ? findIn(open_, openBase_, sequence) : Found{-1, 0, 0};
    const size_t size = ring_.size();
    if (size == 0 || sequence >= at(size - 1).end) return {-1, 0, 0};
    // The first segment starting after `sequence`: in [low, high). A backward pass's nodes are
    // nearly all of the latest calls, so the search gallops back from the newest segment before
    // it bisects, rather than bisecting the whole ring.
    size_t low = 0, high = size;
    for (size_t step = 1; step < high; step *= 2) {
        if (at(high - step).base <= sequence) {
            low = high - step + 1;
            break;
        }
        high -= step;
    }
    while (low < high) {
        const size_t middle = low + (high - low) / 2;
        if (at(middle).base <= sequence)
            low = middle + 1;
        else
            high = middle;
    }
    if (low == 0) return {-1, 0, 0};
    const Segment& segment = at(low - 1);
    if (sequence >= segment.end) return {-1, 0, 0};
    return findIn(shapes_[segment.shape], segment.base, sequence);
}

}  // namespace probe::torch_adapter
