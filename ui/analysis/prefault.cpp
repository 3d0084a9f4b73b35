// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace probe::analysis {
namespace {

constexpr size_t kSmallestWorthIt = 1u << 20;
// Faulted in per call: the thread looks at its limits this often.
constexpr size_t kStep = 4u << 20;

}  // namespace

PrefaultAhead::PrefaultAhead(const void* start, size_t bytes, size_t ahead) : ahead_(ahead) {
#ifdef MADV_POPULATE_WRITE
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto from = (reinterpret_cast<uintptr_t>(start) + page - 1) / page * page;
    const auto to = (reinterpret_cast<uintptr_t>(start) + bytes) / page * page;
    if (to <= from || to - from < kSmallestWorthIt) return;
    page_ = page;
    begin_ = reinterpret_cast<char*>(from);
    size_ = to - from;
    // reached() counts from `start`, the pages from `begin_`: `skipped` bytes apart.
    skipped_ = from - reinterpret_cast<uintptr_t>(start);
    thread_ = std::thread([this] { run(); });
#else
    (void)start;
    (void)bytes;
#endif
}

PrefaultAhead::~PrefaultAhead() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void PrefaultAhead::reached(size_t bytes) {
    if (!thread_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (bytes <= reached_) return;
        reached_ = bytes;
        if (!waiting_) return;
        waiting_ = false;
    }
    wake_.notify_one();
}

size_t PrefaultAhead::faulted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return faulted_;
}

void PrefaultAhead::waitIdle() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return waiting_ || !thread_.joinable() || faulted_ >= size_; });
}

void PrefaultAhead::run() {
#ifdef MADV_POPULATE_WRITE
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_ && faulted_ < size_) {
        // Whole pages only: madvise would fault in the page a partial length ends in.
        const size_t window = reached_ + ahead_ > skipped_ ? reached_ + ahead_ - skipped_ : 0;
        const size_t limit = std::min(size_, window / page_ * page_);
        if (faulted_ >= limit) {
            waiting_ = true;  // until reached() says more
            idle_.notify_all();
            wake_.wait(lock, [this] { return stopping_ || !waiting_; });
            continue;
        }
        const size_t from = faulted_, length = std::min(kStep, limit - from);
        lock.unlock();
        const bool ok = ::madvise(begin_ + from, length, MADV_POPULATE_WRITE) == 0;
        lock.lock();
        if (!ok) break;  // an old kernel (EINVAL), or no memory left: the filler faults its own
        faulted_ = from + length;
    }
    waiting_ = true;
    idle_.notify_all();
#endif
}

}  // namespace probe::analysis
