// SPDX-License-Identifier: GPL-3.0-or-later
#include "dump_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

#include "after_fork.h"
#include "probe/format/file_util.h"
#include "probe/format/row_order.h"
#include "probe/format/statistic_csv.h"
#include "probe/format/thread_name.h"
#include "signals.h"

namespace probe::runtime {
namespace {

constexpr size_t kMaxOpenCsvFiles = 32;
// The writer wakes by itself this often; ops wake it earlier only when a lot is queued. Waking
// a thread per small job (a layer op's rows) costs the model more than the writing itself.
constexpr auto kWriterPeriod = std::chrono::milliseconds(20);
constexpr uint64_t kWakeWriterAboveBytes = 4u << 20;
constexpr uint64_t kDiskCheckEveryBytes = 64ull << 20;
// Tensor buffers at least this big are kept for reuse (smaller ones come cheaply from malloc),
// at most this many.
constexpr uint64_t kMinPooledBuffer = 1u << 20;
constexpr size_t kMaxPooledBuffers = 64;
constexpr uint64_t kMaxPooledBytes = 128ull << 20;
constexpr int64_t kDiskCheckEveryMs = 1000;
// Tensor buffers at least this big are mapped in huge pages of this size.
constexpr uint64_t kHugePage = 2u << 20;

// The memory a tensor buffer of `size` bytes takes (and is charged against the cap).
uint64_t bufferFootprint(uint64_t size) {
    return size < kHugePage ? size : (size + kHugePage - 1) / kHugePage * kHugePage;
}

// A fresh buffer for `size` bytes: in huge pages (aligned to one, whole ones) from 2 MiB on,
// else (or when the mapping fails) from new[].
TensorBuffer newTensorBuffer(uint64_t size) {
    if (size >= kHugePage) {
        const uint64_t bytes = bufferFootprint(size);
        // One huge page more than needed, then the unaligned ends given back.
        void* area = ::mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (area != MAP_FAILED) {
            const auto start = reinterpret_cast<uintptr_t>(area);
            const uintptr_t aligned = (start + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
            if (aligned > start) ::munmap(area, aligned - start);
            if (aligned + bytes < start + bytes + kHugePage)
                ::munmap(reinterpret_cast<void*>(aligned + bytes), start + kHugePage - aligned);
            auto* p = reinterpret_cast<uint8_t*>(aligned);
            ::madvise(p, bytes, MADV_HUGEPAGE);  // without THP: ordinary pages, as before
            return TensorBuffer(p, TensorBufferRelease(bytes));
        }
    }
    return TensorBuffer(new uint8_t[size]);
}

int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string megabytes(int64_t bytes) {
    return std::to_string(bytes / (1 << 20)) + " MiB";
}

}  // namespace

void TensorBufferRelease::operator()(uint8_t* p) const {
    if (mappedBytes)
        ::munmap(p, mappedBytes);
    else
        delete[] p;
}

DumpWriter::DumpWriter(WriterOptions options, std::function<void(const std::string&)> onError)
    : options_(std::move(options)), onError_(std::move(onError)) {}

DumpWriter::~DumpWriter() {
    stop();
}

void DumpWriter::reset(WriterOptions options) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_) return;
    options_ = std::move(options);
    counters_ = {};
    diskStopped_ = false;
    diskStoppedReason_.clear();
    refusedPlaces_.clear();
    pool_.clear();
    pooledBytes_ = 0;
    bytesSinceDiskCheck_ = 0;
    lastDiskCheckMs_ = 0;
}

int DumpWriter::start() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_) return 0;
    // Before the thread exists: the directory is the thread's alone from then on.
    if (int error = directory_.open(options_.root)) return error;
    running_ = true;
    stopRequested_ = false;
    thread_ = std::thread([this] {
        format::nameThisThread("probe-writer");
        run();
    });
    return 0;
}

TensorBuffer DumpWriter::takeBuffer(uint64_t size, uint64_t* charged) {
    *charged = 0;
    const uint64_t footprint = bufferFootprint(size);
    // Fresh memory only while what is held stays within this; beyond it the op waits for a
    // written tensor's buffer to come back (see takeBuffer in the header). The huge page more
    // is for what is queued beside the buffers: their .bin headers, rows.
    const uint64_t freshLimit = std::min(
        options_.memoryCapBytes, std::max(options_.memoryCapBytes / 32, 2 * footprint) + kHugePage);
    std::vector<std::pair<uint64_t, TensorBuffer>> dropped;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        while (running_ && !stopRequested_ && !diskStopped()) {
            // A kept buffer of this footprint, else the smallest bigger one in huge pages (charged
            // for all of it): memory already faulted in serves tensors of any size.
            auto fit = pool_.end();
            for (auto it = pool_.begin(); it != pool_.end(); ++it) {
                if (it->first == footprint) {
                    fit = it;
                    break;
                }
                if (footprint >= kHugePage && it->first > footprint &&
                    (fit == pool_.end() || it->first < fit->first))
                    fit = it;
            }
            if (fit != pool_.end()) {
                const uint64_t bytes = fit->first;
                auto buffer = std::move(fit->second);
                pool_.erase(fit);
                pooledBytes_ -= bytes;
                queuedBytes_ += bytes;  // the same memory, now the caller's
                *charged = bytes;
                return buffer;
            }
            const uint64_t held = queuedBytes_ + pooledBytes_;
            if (held == 0 || held + footprint <= freshLimit) {
                queuedBytes_ += footprint;
                *charged = footprint;
                break;
            }
            if (!pool_.empty()) {  // buffers of other sizes: room for this one instead
                dropped.push_back(std::move(pool_.front()));
                pooledBytes_ -= dropped.back().first;
                pool_.erase(pool_.begin());
                continue;
            }
            wakeWriterLocked();
            spaceAvailable_.wait(lock);
        }
    }
    dropped.clear();  // freed outside the lock
    return newTensorBuffer(size);
}

bool DumpWriter::enqueue(WriteJob job) {
    std::vector<std::pair<uint64_t, TensorBuffer>> dropped;  // freed after the lock
    std::unique_lock<std::mutex> lock(mutex_);
    if (!running_ || stopRequested_ || (diskStopped() && job.kind != WriteJob::Kind::LatestFile)) {
        ++counters_.droppedJobs;
        if (job.charged) {  // a buffer from takeBuffer goes back
            queuedBytes_ -= std::min(queuedBytes_, job.charged);
            spaceAvailable_.notify_all();
        }
        return false;
    }
    const uint64_t total = job.size + job.head.size();
    const uint64_t cost = total > job.charged ? total - job.charged : 0;
    // A job whose data is paid for already (takeBuffer) does not wait for its few header bytes.
    while (!job.charged && !stopRequested_ && queuedBytes_ + pooledBytes_ != 0 &&
           queuedBytes_ + pooledBytes_ + cost > options_.memoryCapBytes) {
        if (!pool_.empty()) {  // kept buffers make room for this job
            for (auto& entry : pool_) dropped.push_back(std::move(entry));
            pool_.clear();
            pooledBytes_ = 0;
            continue;
        }
        wakeWriterLocked();
        spaceAvailable_.wait(lock);
    }
    if (job.kind == WriteJob::Kind::LatestFile) {
        // Only the newest content is written; older queued versions become no-ops.
        latestContent_[job.path] = {std::move(job.head), std::move(job.render)};
        job.head.clear();
        job.render = nullptr;
    }
    job.charged += cost;
    queuedBytes_ += cost;
    queue_.push_back(std::move(job));
    ++enqueuedSeq_;
    if (queuedBytes_ > std::min(kWakeWriterAboveBytes, options_.memoryCapBytes / 4))
        wakeWriterLocked();
    return true;
}

void DumpWriter::wakeWriterLocked() {
    if (wakeRequested_) return;
    wakeRequested_ = true;
    workAvailable_.notify_one();
}

// Row buffers and texts kept for the next batch: a few, of a batch's size at most (TensorCapture
// hands a batch over at 256 KiB).
constexpr size_t kKeptRowBuffers = 8, kKeptRowTexts = 4;
constexpr size_t kMaxKeptRowBuffer = size_t{2} << 20;

std::string DumpWriter::takeRowBuffer(size_t bytes) {
    std::string buffer;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!rowBuffers_.empty()) {
            buffer = std::move(rowBuffers_.back());
            rowBuffers_.pop_back();
        }
    }
    buffer.reserve(bytes);
    return buffer;
}

void DumpWriter::keepBufferLocked(WriteJob& job) {
    // What the buffer holds: its huge pages, or (from new[]) its size when that is its footprint.
    const uint64_t mapped = job.data ? job.data.get_deleter().mappedBytes : 0;
    const uint64_t bytes = mapped ? mapped : bufferFootprint(job.size);
    if (job.kind != WriteJob::Kind::Tensor || !job.data || job.size < kMinPooledBuffer ||
        stopRequested_ || pool_.size() >= kMaxPooledBuffers ||
        pooledBytes_ + bytes > kMaxPooledBytes ||
        pooledBytes_ + bytes > options_.memoryCapBytes / 4)
        return;
    // The buffer's bytes stay counted: they move from the queue to the pool. Pooled by its
    // footprint, so it must hold all of it (not a new[] fallback shorter than its huge pages).
    if (job.charged < bytes || (!mapped && job.size != bytes)) return;
    pool_.emplace_back(bytes, std::move(job.data));
    queuedBytes_ -= bytes;
    pooledBytes_ += bytes;
    job.charged -= bytes;
}

void DumpWriter::drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!running_) return;
    const uint64_t target = enqueuedSeq_;
    wakeRequested_ = true;
    workAvailable_.notify_one();
    progressed_.wait(lock, [&] { return writtenSeq_ >= target || !running_; });
}

void DumpWriter::stop() {
    {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!running_) return;
        const uint64_t target = enqueuedSeq_;
        wakeRequested_ = true;
        workAvailable_.notify_one();
        progressed_.wait(lock, [&] { return writtenSeq_ >= target; });
        stopRequested_ = true;
        workAvailable_.notify_all();
        spaceAvailable_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    std::vector<std::pair<uint64_t, TensorBuffer>> pooled;
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    pooled.swap(pool_);  // freed when this returns, after the lock
    pooledBytes_ = 0;
    progressed_.notify_all();
}

void DumpWriter::abandonAfterFork() {
    // The thread does not exist in the child: its handle is forgotten, and the mutex state the
    // parent's threads may have held is not touched.
    forgetThreadAfterFork(thread_);
    running_ = false;
}

std::string DumpWriter::diskStoppedReason() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return diskStoppedReason_;
}

WriterCounters DumpWriter::counters() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return counters_;
}

uint64_t DumpWriter::queuedBytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return queuedBytes_ + pooledBytes_;
}

void DumpWriter::run() {
    signals::setWriterThread(signals::currentThreadId());  // a crash here must not wait for itself
    std::deque<WriteJob>& batch = batch_;
    while (true) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            workAvailable_.wait_for(lock, kWriterPeriod,
                                    [&] { return stopRequested_ || wakeRequested_; });
            wakeRequested_ = false;
            if (queue_.empty()) {
                if (stopRequested_) break;
                continue;
            }
            batch.swap(queue_);
            // Resolve coalesced files now, under the lock: the job holding the newest content
            // for a path is the last one queued for it.
            for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
                if (it->kind != WriteJob::Kind::LatestFile) continue;
                auto latest = latestContent_.find(it->path);
                if (latest != latestContent_.end()) {
                    it->head = std::move(latest->second.head);
                    it->render = std::move(latest->second.render);
                    it->kind = WriteJob::Kind::File;
                    latestContent_.erase(latest);
                }
            }
        }
        process(batch);
        std::lock_guard<std::mutex> lock(mutex_);
        writtenSeq_ += batch.size();
        batch.clear();
        progressed_.notify_all();
    }
    closeCsvDescriptors();
    directory_.close();
}

void DumpWriter::process(std::deque<WriteJob>& batch) {
    // Rows for the same file are gathered and written with one write() of whole lines.
    struct PathRows {
        std::string text;
        uint64_t count = 0;
        int64_t round = 0;
    };
    std::unordered_map<std::string, PathRows> rows;
    std::vector<std::string> rowOrder;
    // The batches of rows in the order they were queued, consecutive ones of a file merged:
    // (statistic.csv, round, rows), for the processes' row order files.
    std::vector<std::tuple<const std::string*, int64_t, uint64_t>> queuedRuns;
    for (auto& job : batch) {
        switch (job.kind) {
            case WriteJob::Kind::Row:
            case WriteJob::Kind::PackedRows: {
                auto [it, inserted] = rows.try_emplace(job.path);
                const uint64_t jobRows = job.rows ? job.rows : 1;
                if (!queuedRuns.empty() && std::get<0>(queuedRuns.back()) == &it->first)
                    std::get<2>(queuedRuns.back()) += jobRows;
                else
                    queuedRuns.emplace_back(&it->first, job.round, jobRows);
                if (inserted) {
                    rowOrder.push_back(job.path);
                    if (!rowTexts_.empty()) {
                        it->second.text = std::move(rowTexts_.back());
                        rowTexts_.pop_back();
                    }
                }
                if (job.kind == WriteJob::Kind::PackedRows)
                    format::appendPackedStatRows(it->second.text, job.head);
                else
                    it->second.text += job.head;
                it->second.count += jobRows;
                it->second.round = job.round;
                break;
            }
            case WriteJob::Kind::Tensor:
            case WriteJob::Kind::File:
                writeTensorOrFile(job);
                break;
            case WriteJob::Kind::LatestFile:
                break;  // superseded by a newer version in this batch
        }
        // Memory goes back as soon as the job is done, so waiting ops resume early (or is kept
        // for the next tensor of the same size, still counted).
        {
            std::lock_guard<std::mutex> lock(mutex_);
            keepBufferLocked(job);
            queuedBytes_ -= job.charged;
            if (job.kind == WriteJob::Kind::PackedRows && rowBuffers_.size() < kKeptRowBuffers &&
                job.head.capacity() <= kMaxKeptRowBuffer) {
                job.head.clear();
                rowBuffers_.push_back(std::move(job.head));
            }
        }
        job.data.reset();
        spaceAvailable_.notify_all();
    }
    appendRowOrder(queuedRuns);
    std::map<int64_t, std::pair<uint64_t, uint64_t>> written;  // round: rows, bytes
    for (const auto& path : rowOrder) {
        auto& entry = rows[path];
        const bool appended =
            appendLines(path, format::kStatisticCsvHeader, entry.text, entry.count);
        if (appended) {
            auto& total = written[entry.round];
            total.first += entry.count;
            total.second += entry.text.size();
        }
        if (rowTexts_.size() < kKeptRowTexts && entry.text.capacity() <= 2 * kMaxKeptRowBuffer) {
            entry.text.clear();
            rowTexts_.push_back(std::move(entry.text));
        }
    }
    if (options_.rowsWritten)
        for (const auto& [round, total] : written)
            options_.rowsWritten(round, total.first, total.second);
}

void DumpWriter::appendRowOrder(
    const std::vector<std::tuple<const std::string*, int64_t, uint64_t>>& queuedRuns) {
    // By process: <root>/data/<dev>_<pid>/<round>/statistic.csv goes to
    // <root>/probe_row_order/<dev>_<pid>.csv.
    std::map<std::string, std::string> lines;  // row order file -> its new lines
    const std::string dataPrefix = options_.root + "/data/";
    for (const auto& [path, round, count] : queuedRuns) {
        if (path->compare(0, dataPrefix.size(), dataPrefix) != 0) continue;
        const size_t processEnd = path->find('/', dataPrefix.size());
        if (processEnd == std::string::npos) continue;
        const std::string orderFile =
            options_.root + "/" + format::kRowOrderDirectory + "/" +
            path->substr(dataPrefix.size(), processEnd - dataPrefix.size()) + ".csv";
        format::appendRowOrderLine(lines[orderFile], {round, count});
    }
    for (const auto& [orderFile, text] : lines)
        appendLines(orderFile, format::kRowOrderHeader, text, 0);
}

void DumpWriter::refused(const DumpDirectory::Refusal& refusal, const std::string& what) {
    if (refusal.error == ENOSPC || refusal.error == EDQUOT) {
        stopDumping("no space left " + what + " " + options_.root + "/" + refusal.where);
        return;
    }
    // Once per place: a planted round folder would otherwise say so for each of its files.
    if (refusedPlaces_.insert(refusal.where).second) {
        reportError(options_.root + "/" + describeRefusal(refusal));
    } else {
        std::lock_guard<std::mutex> lock(mutex_);
        ++counters_.errors;
        ++counters_.unreported;
    }
}

void DumpWriter::writeTensorOrFile(WriteJob& job) {
    if (job.render) {
        job.head = job.render();
        if (job.head.empty()) return;
    }
    if (diskStopped() && job.kind == WriteJob::Kind::Tensor) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++counters_.droppedJobs;
        return;
    }
    if (job.kind == WriteJob::Kind::Tensor && !checkDiskSpace(job.size + job.head.size())) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++counters_.droppedJobs;
        return;
    }
    const auto relative = directory_.relative(job.path);
    if (!relative) {
        refused({EINVAL, job.path}, "writing");
        return;
    }
    // A file written again (the model structure as it grows) is still one file, of its new size.
    // A tensor file is counted once whatever it replaces: its previous size is not asked for.
    int64_t previousSize = -1;
    const bool tensor = job.kind == WriteJob::Kind::Tensor;
    if (auto refusal = directory_.writeFile(*relative, job.head, job.data.get(), job.size,
                                            tensor ? nullptr : &previousSize)) {
        refused(*refusal, "writing");
        return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    counters_.bytes += job.size + job.head.size();
    if (previousSize >= 0)
        counters_.bytes -= std::min<uint64_t>(counters_.bytes, static_cast<uint64_t>(previousSize));
    else
        ++counters_.files;
}

int DumpWriter::csvDescriptor(const std::string& path, const char* header,
                              const std::string& firstRows, bool* rowsWritten) {
    *rowsWritten = false;
    auto it = csvFiles_.find(path);
    if (it != csvFiles_.end()) {
        it->second.lastUse = ++useClock_;
        return it->second.fd;
    }
    if (csvFiles_.size() >= kMaxOpenCsvFiles) {
        auto oldest = csvFiles_.begin();
        for (auto i = csvFiles_.begin(); i != csvFiles_.end(); ++i)
            if (i->second.lastUse < oldest->second.lastUse) oldest = i;
        ::close(oldest->second.fd);
        csvFiles_.erase(oldest);
    }
    const auto relative = directory_.relative(path);
    if (!relative) {
        refused({EINVAL, path}, "appending to");
        return -1;
    }
    int fd = -1;
    bool created = false;
    if (auto refusal = directory_.openForAppend(*relative, std::string(header) + "\n", firstRows,
                                                &fd, &created)) {
        refused(*refusal, "appending to");
        return -1;
    }
    *rowsWritten = created;
    if (created) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++counters_.files;
    }
    csvFiles_[path] = CsvFile{fd, ++useClock_};
    return fd;
}

bool DumpWriter::appendLines(const std::string& path, const char* header, const std::string& text,
                             uint64_t rowCount) {
    // Rows fill a disk too, if slower: a statistics-only dump of a long run is guarded as tensors.
    if (diskStopped() || !checkDiskSpace(text.size())) {
        std::lock_guard<std::mutex> lock(mutex_);
        counters_.droppedJobs += rowCount;
        return false;
    }
    bool madeWithRows = false;
    int fd = csvDescriptor(path, header, text, &madeWithRows);
    if (fd < 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        counters_.droppedJobs += rowCount;
        return false;
    }
    // One write() of whole lines: a reader or a crash never sees half a row (short writes on a
    // regular file happen only when the disk is full, handled below).
    const char* p = text.data();
    size_t left = madeWithRows ? 0 : text.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            int error = errno;
            if (error == ENOSPC || error == EDQUOT)
                stopDumping("no space left appending to " + path);
            else
                reportError("cannot append to " + path + ": " + std::strerror(error));
            // Cut back to the last whole line so the file stays parseable.
            const off_t end = ::lseek(fd, 0, SEEK_END);
            const size_t written = text.size() - left;
            if (end >= 0 && written > 0) {
                const size_t lastLine = text.rfind('\n', written - 1);
                const size_t keep = lastLine == std::string::npos ? 0 : lastLine + 1;
                if (::ftruncate(fd, end - static_cast<off_t>(written - keep)) != 0) {
                }
            }
            return false;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    counters_.rows += rowCount;
    counters_.bytes += text.size();
    return true;
}

void DumpWriter::closeCsvDescriptors() {
    for (auto& [path, file] : csvFiles_) ::close(file.fd);
    csvFiles_.clear();
}

bool DumpWriter::checkDiskSpace(uint64_t upcomingBytes) {
    bytesSinceDiskCheck_ += upcomingBytes;
    const int64_t now = nowMs();
    if (bytesSinceDiskCheck_ < kDiskCheckEveryBytes && now - lastDiskCheckMs_ < kDiskCheckEveryMs)
        return true;
    bytesSinceDiskCheck_ = 0;
    lastDiskCheckMs_ = now;
    const int64_t free = format::freeDiskBytes(options_.root);
    if (free < 0) return true;  // unknown: let the write itself report ENOSPC
    if (static_cast<uint64_t>(free) < options_.minFreeBytes + upcomingBytes) {
        stopDumping("only " + megabytes(free) + " free on the disk holding " + options_.root +
                    " (the minimum is " + megabytes(static_cast<int64_t>(options_.minFreeBytes)) +
                    ", set by PROBE_MIN_FREE_MB)");
        return false;
    }
    return true;
}

void DumpWriter::stopDumping(const std::string& reason) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (diskStopped_.load()) return;
        diskStoppedReason_ = reason;
        diskStopped_.store(true, std::memory_order_release);
    }
    reportError("dump stopped: " + reason + "; the model keeps running without the probe");
}

void DumpWriter::reportError(const std::string& message) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++counters_.errors;
    }
    if (onError_) onError_(message);
}

}  // namespace probe::runtime
