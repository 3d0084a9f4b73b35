// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/dump_reader.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "analysis/atb_dump.h"
#include "analysis/atb_dump_reader.h"
#include "analysis/msprobe_dump.h"
#include "analysis/parallel_for.h"
#include "probe/format/file_util.h"

namespace probe::analysis {

std::unique_ptr<DumpReader> openDumpReader(const std::string& path, std::string* error) {
    if (!format::isDirectory(path)) {
        if (error) {
            *error = path + " " + format::whatIsThere(path);
            if (format::fileExists(path)) *error += "; open the dump's folder";
        }
        return nullptr;
    }
    const std::string lookup = dumpLookupPath(path);
    if (auto root = findAtbDumpRoot(lookup)) return std::make_unique<AtbDumpReader>(*root);
    if (auto root = findMsprobeDumpRoot(lookup)) return std::make_unique<MsprobeDumpReader>(*root);
    if (error) {
        *error =
            path +
            " holds no dump: expected an atb_dump_data folder (written by probe run or the load "
            "script) or step<N>/rank<R> folders (written by PrecisionDebugger)";
        // One by that name that is no folder is said (a link to itself read as no dump at all).
        const std::string named = path + "/atb_dump_data";
        struct stat entry {};
        if (::lstat(named.c_str(), &entry) == 0 && !format::isDirectory(named))
            *error += "; " + named + " " + format::whatIsThere(named);
    }
    return nullptr;
}

std::string dumpLookupPath(const std::string& path) {
    const std::string normalized = format::normalizedPath(path);
    if (findAtbDumpRoot(normalized) || findMsprobeDumpRoot(normalized)) return normalized;
    const std::string resolved = format::resolvedPath(normalized);
    return resolved.empty() ? normalized : resolved;
}

void DumpReader::reuseRows(std::vector<StatRecord>&& rows) {
    constexpr size_t kSpares = 4;  // as many as deltas can be in flight in readDump
    if (spareRows_.size() >= kSpares || rows.capacity() == 0) return;
    rows.clear();
    spareRows_.push_back(std::move(rows));
}

DumpDelta DumpReader::newDelta() {
    DumpDelta delta;
    if (!spareRows_.empty()) {
        delta.rows = std::move(spareRows_.back());
        spareRows_.pop_back();
    }
    return delta;
}

bool DumpReader::sameFolderAsFirstRead(DumpDelta& delta, bool cameBack) {
    if (replaced_) return false;
    // By its inode, and when the file system knows it, its birth: an inode number is given
    // again at once to a folder made anew.
    struct statx st;
    if (::statx(AT_FDCWD, root().c_str(), 0, STATX_INO | STATX_BTIME, &st) != 0)
        return true;  // gone: the reader says so
    const bool born = (st.stx_mask & STATX_BTIME) != 0;
    const std::array<uint64_t, 5> now{st.stx_dev_major, st.stx_dev_minor, st.stx_ino,
                                      born ? static_cast<uint64_t>(st.stx_btime.tv_sec) : 0,
                                      born ? st.stx_btime.tv_nsec : 0u};
    if (!folder_) folder_ = now;
    // With its birth known, the folder tells; without, one that was gone is taken for another.
    if (*folder_ == now && (born || !cameBack)) return true;
    replaced_ = true;
    delta.problems.push_back(root() +
                             ": replaced by another folder since it was opened (deleted and "
                             "made anew, or a link that now leads elsewhere): what was read of "
                             "the first is kept, the new one is not read; open it again to read "
                             "it");
    return false;
}

FolderListing listFolders(const std::string& dir,
                          const std::function<bool(const std::string&)>& named) {
    FolderListing out;
    std::string error;
    auto entries = format::listDirectoryEntries(dir, &error);
    if (!error.empty())
        out.problems.emplace_back(
            dir, dir + ": " + error + "; the folder cannot be listed, what it holds is not read");
    for (auto& entry : entries) {
        if (entry.isDirectory && !entry.unfollowed) {
            out.folders.push_back(std::move(entry));
        } else if (named(entry.name)) {
            const std::string path = dir + "/" + entry.name;
            out.problems.emplace_back(path, path + ": " + format::whatIsThere(path) +
                                                ", not a folder; what it should hold is not read");
        }
    }
    return out;
}

namespace {

// readDump's polls are smaller than the application's: the rows of the deltas read and not yet
// applied, the read buffer and its parsed lines are memory the index cannot reuse before the
// end, and memory written for the first time is dear (the kernel zeroes every new page: about
// half of probe summary's CPU time on a 1M-row dump). Not below the reader's largest read
// (4 MiB): a read no bigger than the poll's budget would refuse as too long a line of 1 to
// 4 MiB that such a read takes whole (and reports as a row like any other).
constexpr uint64_t kReadDumpPollBudget = 4u << 20;
// Deltas read and waiting to be applied, at most.
constexpr size_t kPendingDeltas = 3;

}  // namespace

std::optional<DumpIndex> readDump(const std::string& path, std::string* error) {
    auto reader = openDumpReader(path, error);
    if (!reader) return std::nullopt;
    DumpIndex index(reader->layout(), reader->root());
    // The deltas are applied in order on a thread of their own while the reader reads on: up to
    // kPendingDeltas wait their turn, so that the reader need not wait for a long apply (a big
    // model's hundred thousand ops) before it reads the next rows.
    std::mutex mutex;
    std::condition_variable changed;  // a delta pending, room for one, or the end
    std::deque<DumpDelta> pending;
    std::vector<std::vector<StatRecord>> applied;  // their rows, for the reader to fill again
    bool noMore = false;
    std::exception_ptr failure;  // of an apply (out of memory): rethrown here
    std::thread applying([&] {
        std::unique_lock<std::mutex> lock(mutex);
        while (true) {
            changed.wait(lock, [&] { return !pending.empty() || noMore; });
            if (pending.empty()) return;
            {
                DumpDelta delta = std::move(pending.front());
                pending.pop_front();
                lock.unlock();
                changed.notify_all();
                try {
                    index.apply(std::move(delta));  // reads the rows, leaves them
                    std::lock_guard<std::mutex> back(mutex);
                    applied.push_back(std::move(delta.rows));
                } catch (...) {
                    {
                        std::lock_guard<std::mutex> failed(mutex);
                        failure = std::current_exception();
                    }
                    changed.notify_all();  // the reader may wait for room
                }
            }
            lock.lock();
            if (failure) return;
        }
    });
    auto finishApplying = [&] {
        {
            std::lock_guard<std::mutex> lock(mutex);
            noMore = true;
        }
        changed.notify_all();
        applying.join();
    };
    try {
        for (bool more = true; more;) {
            {
                std::lock_guard<std::mutex> lock(mutex);
                for (auto& rows : applied) reader->reuseRows(std::move(rows));
                applied.clear();
            }
            auto delta = reader->poll(kReadDumpPollBudget);
            more = delta.more;
            {
                std::unique_lock<std::mutex> lock(mutex);
                changed.wait(lock, [&] { return pending.size() < kPendingDeltas || failure; });
                if (failure) break;
                pending.push_back(std::move(delta));
            }
            changed.notify_all();
        }
    } catch (...) {
        finishApplying();
        throw;
    }
    finishApplying();
    if (failure) std::rethrow_exception(failure);
    return index;
}

std::vector<std::optional<DumpIndex>> readDumps(const std::vector<std::string>& paths,
                                                std::vector<std::string>* errors) {
    std::vector<std::optional<DumpIndex>> indexes(paths.size());
    std::vector<std::string> messages(paths.size());
    parallelFor(paths.size(), usefulThreads(), [&](size_t i, unsigned) {
        try {
            indexes[i] = readDump(paths[i], &messages[i]);
        } catch (const std::exception& e) {  // out of memory: a message, not std::terminate
            indexes[i].reset();
            messages[i] = paths[i] + ": " + e.what();
        }
    });
    if (errors) *errors = std::move(messages);
    return indexes;
}

}  // namespace probe::analysis
