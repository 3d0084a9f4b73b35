// Incremental readers of a dump folder: each poll returns what appeared since the previous one
// (new ops, rows, structure, status), so the same code opens a finished dump and follows one
// that a running model is still writing. No Qt; meant to run on a worker thread.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/dump_index.h"
#include "probe/format/file_util.h"

namespace probe::analysis {

class DumpReader {
public:
    virtual ~DumpReader() = default;
    virtual DumpLayout layout() const = 0;
    // The folder the reader reads: the atb_dump_data directory, or the msprobe dump_path.
    virtual const std::string& root() const = 0;
    // Reads what is new, stopping after about `byteBudget` bytes of row data (then sets
    // DumpDelta::more). Never throws; unreadable or malformed files become problems.
    virtual DumpDelta poll(uint64_t byteBudget) = 0;
    // True once the dump says it is finished and every byte of it was read.
    virtual bool finished() const = 0;
    // Rows a dump gives no statistics for (an op-level dump of task tensor prints N/A) get them
    // from their tensor files: each poll, once the new rows are read, computes some, within its
    // budget (DumpDelta::rowStatistics, statisticsPending). Off unless asked: a comparison
    // judges the data itself. Only op-level dumps leave statistics out.
    virtual void setStatisticsFromTensorFiles(bool) {}
    // A flag that, once set (from any thread), makes a poll give up what takes long (the
    // statistics of a tensor file of gigabytes) and return: its owner is done with it.
    void setStopFlag(const std::atomic<bool>* stop) { stop_ = stop; }

    // Hands back an applied delta's rows: a later poll fills them again. Memory written for the
    // first time is dear (the kernel zeroes each new page), and a new buffer at every poll was a
    // tenth of probe summary's time on the reading thread.
    void reuseRows(std::vector<StatRecord>&& rows);

protected:
    // A delta to fill, its rows a buffer handed back, if any.
    DumpDelta newDelta();
    bool stopRequested() const { return stop_ && stop_->load(std::memory_order_relaxed); }
    // Whether root() is still the folder first read; false once it is another (deleted and
    // made anew, or a link that now leads elsewhere; without a birth time to tell, any folder
    // that `cameBack` after it was gone), said in `delta` once. Reading stops then: a dump replaced
    // while open was read on into the old one, two runs' processes mixed in one tree.
    bool sameFolderAsFirstRead(DumpDelta& delta, bool cameBack);

private:
    std::vector<std::vector<StatRecord>> spareRows_;
    const std::atomic<bool>* stop_ = nullptr;
    std::optional<std::array<uint64_t, 5>> folder_;  // root's device, inode and birth
    bool replaced_ = false;
};

// The folders in `dir`, links followed, sorted by name; and what keeps them from being read, for
// people, each with its path: `dir` that cannot be listed, an entry `named` as a folder of it
// should be that is none (a file in a rank folder's place). Both readers' listings of their
// folders.
struct FolderListing {
    std::vector<format::DirectoryEntry> folders;
    std::vector<std::pair<std::string, std::string>> problems;  // (path, what is said)
};
FolderListing listFolders(const std::string& dir,
                          const std::function<bool(const std::string&)>& named);

// Which layout `path` holds and where its root is: the atb_dump_data directory (given it, its
// parent or a directory inside it) or an msprobe dump (given the dump_path, a step<N> or a
// rank<R>/proc<pid> directory). nullptr with a message in `error` when it is neither.
std::unique_ptr<DumpReader> openDumpReader(const std::string& path, std::string* error);

// The path a dump is looked for at: `path` absolute, its "." and ".." taken by their text (a
// rank folder's "../0_1335" is the other rank's folder, not this one's); when that is in no dump
// and `path` is a link (to a rank or step folder), where the link leads.
std::string dumpLookupPath(const std::string& path);

// Everything the dump at `path` (either layout) holds now, read in one go: for the command
// line. nullopt with a message in `error` when `path` holds no dump.
std::optional<DumpIndex> readDump(const std::string& path, std::string* error);

// Several dumps read side by side (probe compare reads two): each as readDump, its message in
// (*errors)[i] when it fails.
std::vector<std::optional<DumpIndex>> readDumps(const std::vector<std::string>& paths,
                                                std::vector<std::string>* errors);

// Default amount of row data read per poll: large enough to be efficient, small enough that
// applying one delta never stalls the thread that owns the index.
constexpr uint64_t kDefaultPollBudget = 8u << 20;

}  // namespace probe::analysis
