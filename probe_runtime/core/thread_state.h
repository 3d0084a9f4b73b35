// Per-thread state of the op tracker and the tensor capture: the stack of open ops, the layer
// op being executed, and the statistic.csv rows waiting to be handed to the writer.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config_state.h"
#include "op_tracker.h"
#include "structure_builder.h"

namespace probe::runtime {

struct OverflowCandidate;

struct Frame {
    bool active = false;          // part of an execution being observed
    bool selected = false;        // this op's tensors are dumped
    bool childrenActive = false;  // children must be observed (selected or structure capture)
    bool kernel = false;
    // id and namePath are not made yet (FrameStack::named): with statistics alone they are read
    // only for a statistic row, and most ops inside aten ops write none.
    bool namesPending = false;
    int depth = 0;
    uint64_t serial = 0;  // this thread's count of ops begun, this one's included
    uint32_t index = 0;   // among its parent's children
    uint32_t childCount = 0;
    std::string id, name, type, namePath;
    std::string relDir;  // below the round's folder; empty unless the config writes files per op
    // A child op's name when it is the tail of its type (an aten op's "linear" of
    // "aten::linear"): where it begins in `type`, `name` left empty (one copy per op, not two).
    static constexpr uint32_t kOwnName = UINT32_MAX;
    uint32_t nameInType = kOwnName;
    std::string_view displayName() const {
        return nameInType == kOwnName ? std::string_view(name)
                                      : std::string_view(type).substr(nameInType);
    }
    ObservedOp* observed = nullptr;
    std::shared_ptr<OverflowCandidate> overflow;  // task overflow_check: what the op holds
};

// The open ops of a thread. A popped frame is kept, so that the next op's names reuse its
// strings' memory: with every-op statistics an op begins per aten op, and building its five
// names allocated each time (a tenth of the model thread's time).
class FrameStack {
public:
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    Frame& back() { return frames_[size_ - 1]; }
    const Frame& back() const { return frames_[size_ - 1]; }
    Frame& operator[](size_t i) { return frames_[i]; }
    const Frame& operator[](size_t i) const { return frames_[i]; }
    // A new top frame, as a default Frame but for its strings' capacity, and with kKeepType
    // for its type, left as the last frame at this depth had it (for the caller to compare
    // before it sets it). It may move the frames below: take references to them after this.
    static constexpr bool kKeepType = true;
    Frame& push(bool keepType = false) {
        if (size_ == frames_.size()) frames_.emplace_back();
        Frame& frame = frames_[size_++];
        frame.serial = ++serial_;
        frame.active = frame.selected = frame.childrenActive = frame.kernel = false;
        frame.namesPending = false;
        frame.depth = 0;
        frame.index = frame.childCount = 0;
        frame.nameInType = Frame::kOwnName;
        for (std::string* text : {&frame.id, &frame.name, &frame.namePath, &frame.relDir})
            text->clear();
        if (!keepType) frame.type.clear();
        return frame;
    }
    void pop_back() {
        Frame& frame = frames_[--size_];
        frame.observed = nullptr;
        frame.overflow.reset();  // what the op held goes with it
    }
    void clear() {
        while (size_) pop_back();
    }
    // The top frame with its id and namePath made (and those of the frames below it).
    Frame& named() {
        size_t first = size_ - 1;
        while (first > 0 && frames_[first - 1].namesPending) --first;
        for (size_t i = first; i < size_; ++i)
            if (frames_[i].namesPending) nameChild(frames_[i - 1], frames_[i]);
        return back();
    }
    // A child's id ("<parent id>_<index>") and namePath ("<parent path>/<name>").
    static void nameChild(const Frame& parent, Frame& frame);

private:
    std::vector<Frame> frames_;  // [0, size_) are open
    size_t size_ = 0;
    uint64_t serial_ = 0;
};

struct DedupKey {
    uint64_t hash, nbytes;
    int32_t dtype;
    std::string shape;
    bool operator==(const DedupKey& o) const {
        return hash == o.hash && nbytes == o.nbytes && dtype == o.dtype && shape == o.shape;
    }
};
struct DedupKeyHash {
    size_t operator()(const DedupKey& k) const {
        return static_cast<size_t>(k.hash ^ (k.nbytes << 7));
    }
};

struct LayerExecution {
    std::shared_ptr<const ConfigSnapshot> config;
    LayerRegistry::Slot* slot = nullptr;
    int64_t round = 0;
    bool inRange = false;
    bool capture = false;
    std::string devicePid, roundDir, csvPath;
    // What devicePid, roundDir and csvPath were made for: most layer ops share the last one's
    // round, so the paths are made again only when one of these changes (not cleared by reset).
    uint64_t pathsEpoch = 0;
    int pathsDevice = 0;
    int64_t pathsRound = -1;
    // Counts the times they were made: rows of the same count go to the same file and round.
    uint64_t pathsVersion = 0;
    std::unique_ptr<ObservedOp> observed;
    std::unordered_map<DedupKey, std::string, DedupKeyHash> firstCopies;

    void reset() {
        config.reset();
        slot = nullptr;
        observed.reset();
        if (!firstCopies.empty()) firstCopies.clear();  // clear() costs even when empty
        capture = inRange = false;
    }
};

// statistic.csv rows of one thread, written in batches rather than one job per row. Reachable
// from stop() (through the registry of thread states), so nothing pending is lost at the end.
struct PendingRows {
    std::mutex mutex;
    std::string path;
    std::string packed;  // the rows, packed (format::packStatRow): formatted by the writer
    int64_t round = 0;   // the round of `path`
    uint64_t paths = 0;  // LayerExecution::pathsVersion of the last row
    uint64_t count = 0;
    uint64_t lastOp = 0;  // Frame::serial of the last row's op
};

struct ThreadState {
    uint64_t epoch = 0;
    FrameStack stack;
    // The names of the op beginning, when they need a change (memory kept from op to op).
    std::string opName, opType;
    // A tensor's index (with its argument name), its argument name made safe and its shape
    // (memory kept from tensor to tensor).
    std::string rowIndex, rowArg, rowShape;
    LayerExecution layer;
    PendingRows rows;
    // When, and in which round, this thread last asked whether the config file changed
    // (Runtime::syncConfigFile).
    std::chrono::steady_clock::time_point lastConfigCheck{};
    int64_t lastConfigCheckRound = -1;
    RecentSlots recentSlots;  // LayerRegistry::begin's
    // The config in force as this thread's last layer op began (ConfigState::currentInto).
    std::shared_ptr<const ConfigSnapshot> configInForce;
    ThreadState();   // registers itself for TensorCapture::flushAllRows
    ~ThreadState();  // flushes its rows
};

// The calling thread's state, reset when the runtime was restarted since its last op.
ThreadState& threadState(uint64_t epoch);
// The calling thread's state when it has one for `epoch`, else null (no allocation).
ThreadState* existingThreadState(uint64_t epoch);

}  // namespace probe::runtime
