// The msprobe layout's JSON files (dump.json, stack.json, construct.json) for the code-level API
// (probe_studio.pytorch._jsonio), written under a temporary name and renamed, so no reader ever
// sees half of one. Their text comes indented (json.dump(value, f, indent=1), as msprobe writes
// them): _module_call.compact_json indents as it encodes, and text json.dumps made is indented
// by probe::json_indent (probe/format/json_indent.h) first.
//
//   The writing is done by this library's own thread, which never needs Python's GIL: Python
//   queues a file (probe_api_queue_json, a copy of the text) and, when it must know the file is
//   on disk, waits for it (probe_api_wait_json; ctypes releases the GIL meanwhile), writing the
//   files queued before it itself if the writer thread has not taken them yet. A file whose
//   result is asked for later (kWaitedLater: stop() does not wait for the disk) is written by
//   the writer thread, or by a flush (probe_api_flush_json, PrecisionDebugger.flush()), and a
//   wait without time (a poll) writes nothing. Files are written one at a time in the order
//   queued. The thread lives as long as the process.
//
//   The text of a file whose last write failed is kept until a later write of that path
//   succeeds: a flush writes every file queued before it, then each such file once more, and
//   reports the first that still fails.
//
//   probe::json_indent(str compact) -> str       the indented text, for Python's dumps()
//
// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <torch/library.h>

#include "probe/format/file_util.h"
#include "probe/format/json_indent.h"
#include "probe/format/thread_name.h"

#define PROBE_API_EXPORT extern "C" __attribute__((visibility("default")))

namespace probe::torch_api {
namespace {

std::string jsonIndent(const std::string& compact) {
    return format::json_indent::indentJson(compact);
}

// probe_api_queue_json's `waited`.
enum Waited { kNotWaited = 0, kWaitedNow = 1, kWaitedLater = 2 };

// Files are written one at a time, in the order queued, by the writer thread or by a thread
// waiting for them: one that must wait anyway writes the next file itself rather than wait for
// the writer thread to be scheduled (on a busy machine that wait is the longer one). Files
// nobody waits for now are the writer thread's.

class JsonFileWriter {
public:
    // A file waited for now is not handed to the writer thread (waking it costs the waiting
    // thread its processor on a busy machine): the thread that waits for it writes it.
    uint64_t queue(std::string path, std::string text, int waited) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!thread_.joinable())
            thread_ = std::thread([this] {
                format::nameThisThread("probe-json");
                run();
            });
        jobs_.push_back({++queued_, waited != kNotWaited, waited == kWaitedLater, std::move(path),
                         std::move(text)});
        if (waited != kWaitedNow) changed_.notify_all();
        return queued_;
    }

    // The errno value of writing job `ticket` (0: written), -1 when `timeoutMs` (>= 0) passed
    // first. A waited job's error is kept until asked for once. With `timeoutMs` 0 it only
    // looks: the files are left to the writer thread.
    int wait(uint64_t ticket, int64_t timeoutMs) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (timeoutMs == 0 && finished_ < ticket) return -1;
        if (!writeOrWait(
                lock, timeoutMs, [&] { return finished_ >= ticket; },
                [](const Job& next) { return !next.writerOnly; }))
            return -1;
        auto it = errors_.find(ticket);
        if (it == errors_.end()) return 0;
        const int error = it->second;
        errors_.erase(it);
        return error;
    }

    // Writes every job queued before the call (this thread writes those no thread is writing:
    // the caller asked to wait for the disk), then once more each file whose last write failed,
    // in the order they were queued. Returns 0, the errno value of the first file that still
    // fails (its path in `failedPath`), or -1 when `timeoutMs` (>= 0) passed first.
    int flush(int64_t timeoutMs, std::string& failedPath) {
        std::unique_lock<std::mutex> lock(mutex_);
        const uint64_t last = queued_;
        // Until the queue is written up to `last`, and then until no thread writes (a retry
        // below must be the only write, so that no newer text of its path is overtaken).
        if (!writeOrWait(
                lock, timeoutMs, [&] { return finished_ >= last && !writing_; },
                [&](const Job& next) { return next.ticket <= last; }))
            return -1;
        if (failed_.empty()) return 0;
        std::vector<std::pair<uint64_t, std::string>> order;  // (ticket, path) of each failed file
        order.reserve(failed_.size());
        for (const auto& [path, failed] : failed_) order.emplace_back(failed.ticket, path);
        std::sort(order.begin(), order.end());
        int first = 0;
        writing_ = true;  // no other thread writes (nor changes failed_) until it is false again
        for (const auto& [ticket, path] : order) {
            Failed& failed = failed_.at(path);
            lock.unlock();
            const int error = writeFile(path, failed.text);
            lock.lock();
            if (error) {
                if (!first) {
                    first = error;
                    failedPath = path;
                }
            } else {
                errors_.erase(ticket);  // written now: a later wait() for it finds no error
                failed_.erase(path);
            }
        }
        writing_ = false;
        changed_.notify_all();
        return first;
    }

private:
    struct Job {
        uint64_t ticket;
        bool waited;      // its result is kept for wait()
        bool writerOnly;  // written by the writer thread or a flush, never by a thread waiting
        std::string path, text;
    };

    // Until `done()` (checked under mutex_, held through `lock`): writes the next queued job
    // itself when no thread is writing and `mayWrite(job)`, else waits for a change. False when
    // `timeoutMs` (>= 0; < 0: no limit) passed first.
    template <typename Done, typename MayWrite>
    bool writeOrWait(std::unique_lock<std::mutex>& lock, int64_t timeoutMs, Done done,
                     MayWrite mayWrite) {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
        while (!done()) {
            if (!writing_ && !jobs_.empty() && mayWrite(jobs_.front())) {
                writeNext(lock);
            } else if (timeoutMs < 0) {
                changed_.wait(lock);
            } else if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && !done()) {
                return false;
            }
        }
        return true;
    }

    // Writes the job at the head of the queue; `lock` is held on entry and on return.
    void writeNext(std::unique_lock<std::mutex>& lock) {
        Job job = std::move(jobs_.front());
        jobs_.pop_front();
        writing_ = true;
        lock.unlock();
        const int error = writeFile(job.path, job.text);
        lock.lock();
        writing_ = false;
        try {
            if (error) {
                if (job.waited) errors_[job.ticket] = error;
                failed_[job.path] = {job.ticket, std::move(job.text)};
            } else if (!failed_.empty()) {
                failed_.erase(job.path);  // an earlier text of this path that failed is outdated
            }
        } catch (const std::bad_alloc&) {  // no room to keep it: a flush does not see it
        }
        finished_ = job.ticket;
        changed_.notify_all();
    }

    // Writes `text` to `path` atomically; 0 or an errno value.
    static int writeFile(const std::string& path, const std::string& text) {
        try {
            int error = format::writeFileAtomically(path, text);
            if (error == ENOENT) {
                // The step's folder is made here, before its first file, rather than on the
                // model's thread at start() (a mkdir took it 0.5-2 ms per step).
                const size_t slash = path.rfind('/');
                if (slash != std::string::npos && slash > 0) {
                    error = format::makeDirectories(path.substr(0, slash), 0750);
                    if (!error) error = format::writeFileAtomically(path, text);
                }
            }
            return error;
        } catch (const std::bad_alloc&) {
            return ENOMEM;
        } catch (...) {
            return EIO;
        }
    }

    void run() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (true) {
            changed_.wait(lock, [&] { return !writing_ && !jobs_.empty(); });
            writeNext(lock);
        }
    }

    std::mutex mutex_;
    std::condition_variable changed_;  // a job queued or written
    std::deque<Job> jobs_;
    std::unordered_map<uint64_t, int> errors_;
    // By path, each file whose last write failed: the ticket of that write and its text (a later
    // write of the path that succeeds erases it).
    struct Failed {
        uint64_t ticket;
        std::string text;
    };
    std::unordered_map<std::string, Failed> failed_;
    uint64_t queued_ = 0, finished_ = 0;
    bool writing_ = false;  // a thread is writing the job it took from the queue
    std::thread thread_;
};

// Never destroyed: the thread may still wait on its members while the process exits.
JsonFileWriter& jsonFileWriter() {
    static JsonFileWriter* writer = new JsonFileWriter();
    return *writer;
}

}  // namespace
}  // namespace probe::torch_api

TORCH_LIBRARY_FRAGMENT(probe, m) {
    m.def("json_indent(str compact) -> str", &probe::torch_api::jsonIndent);
}

using probe::torch_api::jsonFileWriter;

// Queues `text` (indented JSON) to be written to `path`; returns the job's ticket (0 when it could
// not be queued). With `waited` (Waited) its result is kept for probe_api_wait_json: 1, waited
// for now (written by the waiting thread); 2, asked for later (written by the writer thread).
// Never blocks on disk.
PROBE_API_EXPORT uint64_t probe_api_queue_json(const char* text, uint64_t size, const char* path,
                                               int waited) {
    try {
        return jsonFileWriter().queue(path, std::string(text, size), waited);
    } catch (...) {
        return 0;
    }
}

// Waits until every job up to `ticket` is written; returns 0, the errno value of that job, or -1
// after `timeout_ms` (>= 0; -1: no limit). Called through ctypes, which releases the GIL.
PROBE_API_EXPORT int probe_api_wait_json(uint64_t ticket, int64_t timeout_ms) {
    try {
        return jsonFileWriter().wait(ticket, timeout_ms);
    } catch (...) {
        return EIO;
    }
}

// Writes every file queued so far, then once more each file whose last write failed (see
// JsonFileWriter::flush); returns 0, the errno value of the first file that still fails (its
// path copied, NUL-terminated and cut to fit, into `failed_path` of `failed_path_size` bytes),
// or -1 after `timeout_ms` (>= 0; -1: no limit). Called through ctypes, which releases the GIL.
PROBE_API_EXPORT int probe_api_flush_json(int64_t timeout_ms, char* failed_path,
                                          uint64_t failed_path_size) {
    try {
        std::string path;
        const int result = jsonFileWriter().flush(timeout_ms, path);
        if (failed_path && failed_path_size) {
            const size_t n = std::min<uint64_t>(path.size(), failed_path_size - 1);
            std::memcpy(failed_path, path.data(), n);
            failed_path[n] = '\0';
        }
        return result;
    } catch (...) {
        return EIO;
    }
}
