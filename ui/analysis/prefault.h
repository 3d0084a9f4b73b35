// Faults in, on a thread of its own, the pages of a big buffer that another thread is about to
// fill for the first time (a vector reserved for a million results): the kernel zeroes a new page
// at its first write, about half a microsecond per 4 KiB, which the filling thread then no longer
// waits for. A hint only: what the buffer holds never changes. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace probe::analysis {

class PrefaultAhead {
public:
    // Faults in [start, start + bytes) from its start, staying at most `ahead` bytes past what
    // the filling thread said it reached (memory the filling does not reach is not taken). Does
    // nothing for a buffer under a megabyte, or where the kernel cannot (before Linux 5.14).
    PrefaultAhead(const void* start, size_t bytes, size_t ahead);
    PrefaultAhead(const PrefaultAhead&) = delete;
    PrefaultAhead& operator=(const PrefaultAhead&) = delete;
    ~PrefaultAhead();  // stops and joins the thread

    // The filling thread has written the first `bytes` bytes (cheap: call it every few thousand
    // items).
    void reached(size_t bytes);
    // How many bytes from the start are faulted in so far.
    size_t faulted() const;
    // Waits until the thread has nothing left to do (until reached() says more); for tests.
    void waitIdle();

private:
    void run();

    char* begin_ = nullptr;  // page-aligned: the pages wholly inside the buffer
    size_t size_ = 0, ahead_ = 0;
    size_t skipped_ = 0;  // from the buffer's start to begin_
    size_t page_ = 4096;
    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    size_t reached_ = 0, faulted_ = 0;
    bool stopping_ = false, waiting_ = false;
    std::thread thread_;
};

}  // namespace probe::analysis
