// Runs independent pieces of work on a few threads: the readers parse files side by side, the
// comparer pairs rounds. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace probe::analysis {

// Threads worth using: the cores, at most `cap`.
inline unsigned usefulThreads(unsigned cap = 64) {
    return std::min(std::max(1u, std::thread::hardware_concurrency()), cap);
}

// Runs work(i, worker) for i in [0, n) on `threads` threads (worker 0 is the caller, which
// also reports progress between its own items).
template <typename Work>
void parallelFor(size_t n, unsigned threads, Work&& work,
                 const std::function<void(size_t)>& progress = {}) {
    std::atomic<size_t> next{0}, done{0};
    auto loop = [&](unsigned worker) {
        while (true) {
            const size_t i = next.fetch_add(1);
            if (i >= n) break;
            work(i, worker);
            const size_t d = done.fetch_add(1) + 1;
            if (worker == 0 && progress) progress(d);
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads && t < n; ++t) pool.emplace_back(loop, t);
    loop(0);
    for (auto& t : pool) t.join();
    if (progress) progress(n);
}

// Pieces of work [0, count()) taken in order, one at a time, by several threads, and used in
// order by one of them as soon as each is done: that thread does a piece left to take itself
// rather than wait for another thread's (the atb reader's parsed lines, compare's measures).
class OrderedPieces {
public:
    explicit OrderedPieces(size_t count) : count_(count), done_(count) {}
    size_t count() const { return count_; }
    // Does the pieces left, one at a time: work(piece), then the piece is done.
    template <typename Work>
    void doAll(const Work& work) {
        for (size_t piece; (piece = claim()) < count_;) doPiece(piece, work);
    }
    // Returns true once `piece` is done (by work(piece) here or on another thread), doing pieces
    // left meanwhile; false when failed() says the thread doing it gave up.
    template <typename Work, typename Failed>
    bool waitFor(size_t piece, const Work& work, const Failed& failed) {
        while (!done_[piece].load(std::memory_order_acquire)) {
            if (const size_t other = claim(); other < count_)
                doPiece(other, work);
            else if (failed())
                return false;
            else
                std::this_thread::yield();  // another thread does it
        }
        return true;
    }
    // No piece is taken any more (the thread using them gives up).
    void stop() { next_ = count_; }

private:
    size_t claim() {
        return next_.load(std::memory_order_relaxed) < count_ ? next_.fetch_add(1) : count_;
    }
    template <typename Work>
    void doPiece(size_t piece, const Work& work) {
        work(piece);
        done_[piece].store(true, std::memory_order_release);
    }
    const size_t count_;
    std::atomic<size_t> next_{0};
    std::vector<std::atomic<bool>> done_;  // value-initialised: false
};

// One thread kept for jobs handed to it one at a time. Work cut into many short batches (the
// reads of a big file) uses it rather than a new thread per batch: the kernel places a new
// thread beside the one that started it, where it mostly waits for that one's core.
class HelperThread {
public:
    HelperThread() = default;
    HelperThread(const HelperThread&) = delete;
    HelperThread& operator=(const HelperThread&) = delete;
    ~HelperThread() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    // Starts `job` on the helper thread (started on first use). One job at a time: wait() first.
    void start(std::function<void()> job) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = std::move(job);
            done_ = false;
        }
        if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
        wake_.notify_all();
    }
    // Returns once the job started last is done; rethrows what it threw.
    void wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        finished_.wait(lock, [this] { return done_; });
        if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
    }

private:
    void loop() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (true) {
            wake_.wait(lock, [this] { return stopping_ || job_; });
            if (!job_) return;  // stopping, nothing left to do
            auto job = std::move(job_);
            job_ = nullptr;
            lock.unlock();
            std::exception_ptr failure;
            try {
                job();
            } catch (...) {
                failure = std::current_exception();
            }
            lock.lock();
            failure_ = failure;
            done_ = true;
            finished_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_, finished_;
    std::function<void()> job_;
    std::exception_ptr failure_;
    bool done_ = true, stopping_ = false;
    std::thread thread_;
};

}  // namespace probe::analysis
