// The msprobe layout's JSON files (dump.json, stack.json, construct.json) as msprobe writes
// them, json.dump(value, f, indent=1), for the code-level API (probe_studio.pytorch._jsonio):
//
//   Python renders the compact text with its C encoder (json.dumps(value, separators=(",", ": ")),
//   about 20 times faster than its indenting pure-Python encoder); here the same tokens get their
//   line breaks and indents, and the file is written under a temporary name and renamed, so no
//   reader ever sees half of it.
//
//   The writing is done by this library's own thread, which never needs Python's GIL: Python
//   queues a file (probe_api_queue_json, a copy of the text) and, when it must know the file is
//   on disk, waits for it (probe_api_wait_json; ctypes releases the GIL meanwhile), writing the
//   files queued before it itself if the writer thread has not taken them yet. Files are written
//   one at a time in the order queued. The thread lives as long as the process.
//
//   probe::json_indent(str compact) -> str       the indented text, for Python's dumps()
//
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <torch/library.h>

#include "probe/format/file_util.h"
#include "probe/format/thread_name.h"

#define PROBE_API_EXPORT extern "C" __attribute__((visibility("default")))

namespace probe::torch_api {
namespace {

// The 16-bit code of the four hex digits at `p`, or -1.
int hexCode(const char* p) {
    int code = 0;
    for (int i = 0; i < 4; ++i) {
        const char c = p[i];
        const int digit = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
        if (digit < 0) return -1;
        code = code * 16 + digit;
    }
    return code;
}

bool isHighSurrogate(int code) {
    return code >= 0xD800 && code <= 0xDBFF;
}
bool isLowSurrogate(int code) {
    return code >= 0xDC00 && code <= 0xDFFF;
}

// Copies the string token starting at compact[i] (its opening quote) to `out`; returns the
// index after its closing quote. A lone surrogate's escape (text UTF-8 cannot carry, refused by
// strict JSON readers) is written as the text of the escape, "\\udc80", the way
// probe_studio._names writes such names.
size_t copyString(std::string_view compact, size_t i, std::string& out) {
    const size_t n = compact.size();
    out += compact[i++];
    while (i < n) {
        // The run up to the next quote or backslash goes in one append.
        size_t run = i;
        while (run < n && compact[run] != '"' && compact[run] != '\\') ++run;
        out.append(compact.data() + i, run - i);
        i = run;
        if (i >= n) break;
        const char c = compact[i];
        if (c == '"') {
            out += c;
            return i + 1;
        }
        if (i + 1 >= n) {
            out += c;
            ++i;
            continue;
        }
        if (compact[i + 1] != 'u' || i + 6 > n) {
            out.append(compact.substr(i, 2));
            i += 2;
            continue;
        }
        const int code = hexCode(compact.data() + i + 2);
        const bool pair = isHighSurrogate(code) && i + 12 <= n && compact[i + 6] == '\\' &&
                          compact[i + 7] == 'u' && isLowSurrogate(hexCode(compact.data() + i + 8));
        if (pair) {
            out.append(compact.substr(i, 12));
            i += 12;
        } else {
            if (isHighSurrogate(code) || isLowSurrogate(code)) out += '\\';
            out.append(compact.substr(i, 6));
            i += 6;
        }
    }
    return i;
}

// Whether `text` could be a tensor item's text as far as the indenter cares: an object, its
// strings closed and its brackets balanced (a user's string may start with the mark and hold
// anything; it is written as the string it is unless it looks so).
bool balancedJson(std::string_view text) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if ((c == ']' || c == '}') && --depth < 0) {
            return false;
        }
    }
    return !inString && depth == 0;
}

// The content of a string token that stands for raw JSON (Python's _jsonio.RAW_JSON_MARK, the
// character U+0001, then the JSON text, escaped as a string by the C encoder), unescaped; or
// nullopt for any other string, and for a marked one whose text is not balanced JSON (a user's
// string that begins with U+0001: written as the string it is). `end` is the index after the
// token.
std::optional<std::string> rawJsonOf(std::string_view compact, size_t begin, size_t end) {
    constexpr std::string_view kMark = "\"\\u0001";
    if (compact.compare(begin, kMark.size(), kMark) != 0) return std::nullopt;
    std::string raw;
    for (size_t i = begin + kMark.size(); i + 1 < end; ++i) {
        if (compact[i] == '\\') {
            // Only \" and \\ occur in the text of a tensor item (printable ASCII).
            if (i + 2 >= end || (compact[i + 1] != '"' && compact[i + 1] != '\\'))
                return std::nullopt;
            ++i;
        }
        raw += compact[i];
    }
    if (raw.size() < 2 || raw.front() != '{' || raw.back() != '}' || !balancedJson(raw))
        return std::nullopt;
    return raw;
}

bool isStructural(char c) {
    return c == '"' || c == '[' || c == '{' || c == ']' || c == '}' || c == ',';
}

// json.dumps(value, indent=1) from json.dumps(value, separators=(",", ": ")): after an opening
// bracket and after a comma a line break and the depth's indent, before a closing bracket the
// outer depth's; an empty [] or {} stays as it is. Raw JSON strings are spliced in, indented
// at their depth.
void indentInto(std::string_view compact, std::string& out, int& depth) {
    auto lineBreak = [&] {
        out += '\n';
        out.append(static_cast<size_t>(depth), ' ');
    };
    const size_t n = compact.size();
    size_t i = 0;
    while (i < n) {
        const char c = compact[i];
        if (c == '"') {
            const size_t mark = out.size();
            const size_t end = copyString(compact, i, out);
            if (auto raw = rawJsonOf(compact, i, end)) {
                out.resize(mark);
                indentInto(*raw, out, depth);
            }
            i = end;
            continue;
        }
        if (c == '[' || c == '{') {
            const char close = c == '[' ? ']' : '}';
            out += c;
            if (i + 1 < n && compact[i + 1] == close) {
                out += close;
                i += 2;
                continue;
            }
            ++depth;
            lineBreak();
        } else if (c == ']' || c == '}') {
            depth = depth > 0 ? depth - 1 : 0;  // text that is not JSON never makes it negative
            lineBreak();
            out += c;
        } else if (c == ',') {
            out += c;
            lineBreak();
        } else {
            // A number, a literal or the ": " after a key: up to the next token, in one append.
            size_t run = i + 1;
            while (run < n && !isStructural(compact[run])) ++run;
            out.append(compact.data() + i, run - i);
            i = run;
            continue;
        }
        ++i;
    }
}

std::string indentJson(std::string_view compact) {
    std::string out;
    out.reserve(compact.size() + compact.size() / 2);
    int depth = 0;
    indentInto(compact, out, depth);
    return out;
}

std::string jsonIndent(const std::string& compact) {
    return indentJson(compact);
}

// Files are written one at a time, in the order queued, by the writer thread or by a thread
// waiting for them: one that must wait anyway writes the next file itself rather than wait for
// the writer thread to be scheduled (on a busy machine that wait is the longer one). Files
// nobody waits for are the writer thread's.
class JsonFileWriter {
public:
    // A waited file is not handed to the writer thread (waking it costs the waiting thread its
    // processor on a busy machine): the thread that waits for it writes it.
    uint64_t queue(std::string path, std::string compact, bool waited) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!thread_.joinable())
            thread_ = std::thread([this] {
                format::nameThisThread("probe-json");
                run();
            });
        jobs_.push_back({++queued_, waited, std::move(path), std::move(compact)});
        if (!waited) changed_.notify_all();
        return queued_;
    }

    // The errno value of writing job `ticket` (0: written), -1 when `timeoutMs` (>= 0) passed
    // first. A waited job's error is kept until asked for once.
    int wait(uint64_t ticket, int64_t timeoutMs) {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
        std::unique_lock<std::mutex> lock(mutex_);
        while (finished_ < ticket) {
            if (!writing_ && !jobs_.empty()) {
                writeNext(lock);
            } else if (timeoutMs < 0) {
                changed_.wait(lock);
            } else if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
                       finished_ < ticket) {
                return -1;
            }
        }
        auto it = errors_.find(ticket);
        if (it == errors_.end()) return 0;
        const int error = it->second;
        errors_.erase(it);
        return error;
    }

private:
    struct Job {
        uint64_t ticket;
        bool waited;  // its result is kept for wait()
        std::string path, compact;
    };

    // Writes the job at the head of the queue; `lock` is held on entry and on return.
    void writeNext(std::unique_lock<std::mutex>& lock) {
        Job job = std::move(jobs_.front());
        jobs_.pop_front();
        writing_ = true;
        lock.unlock();
        int error;
        try {
            const std::string text = indentJson(job.compact);
            error = format::writeFileAtomically(job.path, text);
            if (error == ENOENT) {
                // The step's folder is made here, before its first file, rather than on the
                // model's thread at start() (a mkdir took it 0.5-2 ms per step).
                const size_t slash = job.path.rfind('/');
                if (slash != std::string::npos && slash > 0) {
                    error = format::makeDirectories(job.path.substr(0, slash), 0750);
                    if (!error) error = format::writeFileAtomically(job.path, text);
                }
            }
        } catch (const std::bad_alloc&) {
            error = ENOMEM;
        } catch (...) {
            error = EIO;
        }
        lock.lock();
        writing_ = false;
        if (error && job.waited) errors_[job.ticket] = error;
        finished_ = job.ticket;
        changed_.notify_all();
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

// Queues indentJson(compact) to be written to `path`; returns the job's ticket (0 when it could
// not be queued). With `waited` its result is kept for probe_api_wait_json. Never blocks on disk.
PROBE_API_EXPORT uint64_t probe_api_queue_json(const char* compact, uint64_t size, const char* path,
                                               int waited) {
    try {
        return jsonFileWriter().queue(path, std::string(compact, size), waited != 0);
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
