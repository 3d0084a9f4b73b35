// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/dump_reader.h"

#include <exception>
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
        if (error)
            *error = format::fileExists(path) ? path + " is a file; open the dump's folder"
                                              : path + " does not exist";
        return nullptr;
    }
    if (auto root = findAtbDumpRoot(path)) return std::make_unique<AtbDumpReader>(*root);
    if (auto root = findMsprobeDumpRoot(path)) return std::make_unique<MsprobeDumpReader>(*root);
    if (error)
        *error =
            path +
            " holds no dump: expected an atb_dump_data folder (written by probe run or the load "
            "script) or step<N>/rank<R> folders (written by PrecisionDebugger)";
    return nullptr;
}

namespace {

// readDump's polls are smaller than the application's: the rows of the deltas read and not yet
// applied, the read buffer and its parsed lines are memory the index cannot reuse before the
// end, and memory written for the first time is dear (the kernel zeroes every new page: about
// half of probe summary's CPU time on a 1M-row dump). With 2 MiB instead of 8 MiB, probe
// summary's peak on that dump is 197 instead of 211 MB, for a few more polls.
constexpr uint64_t kReadDumpPollBudget = 2u << 20;

}  // namespace

std::optional<DumpIndex> readDump(const std::string& path, std::string* error) {
    auto reader = openDumpReader(path, error);
    if (!reader) return std::nullopt;
    DumpIndex index(reader->layout(), reader->root());
    // Each delta is applied on a thread of its own while the reader reads the next one: the
    // two share nothing, and the deltas are still applied one after the other, in order.
    std::thread applying;
    std::exception_ptr failure;  // of an apply (out of memory): rethrown here
    auto finishApplying = [&] {
        if (applying.joinable()) applying.join();
        if (failure) std::rethrow_exception(std::exchange(failure, nullptr));
    };
    try {
        while (true) {
            auto delta = reader->poll(kReadDumpPollBudget);
            const bool more = delta.more;
            finishApplying();
            applying = std::thread([&index, &failure, delta = std::move(delta)]() mutable {
                try {
                    index.apply(std::move(delta));
                } catch (...) {
                    failure = std::current_exception();
                }
            });
            if (!more) break;
        }
    } catch (...) {
        if (applying.joinable()) applying.join();
        throw;
    }
    finishApplying();
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
