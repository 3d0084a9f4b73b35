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
