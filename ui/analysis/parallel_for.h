// Runs independent pieces of work on a few threads: the readers parse files side by side, the
// comparer pairs rounds. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
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

}  // namespace probe::analysis
