// The writer thread: owns the disk. Ops hand it work through a bounded queue; when the
// queued bytes exceed the memory cap the op waits (back-pressure). Every file is written
// under a temporary name and renamed; statistic.csv grows by whole rows. A disk guard stops
// dumping with a message when free space runs low, while the model goes on. It writes only
// inside its root, through DumpDirectory: a link planted in the dump is never followed.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dump_directory.h"

namespace probe::runtime {

// Tensor data on its way to a file. DumpWriter::takeBuffer maps buffers of 2 MiB and more in
// huge pages and releases them with munmap (their deleter holds the mapped length); any other
// buffer, one made with new[] included, is released with delete[]. (reset() keeps the
// deleter: give a buffer from takeBuffer a new value by assignment, not reset(new ...).)
struct TensorBufferRelease {
    uint64_t mappedBytes = 0;  // 0: from new[]
    TensorBufferRelease() = default;
    TensorBufferRelease(std::default_delete<uint8_t[]>) {}  // a unique_ptr of new[] converts
    explicit TensorBufferRelease(uint64_t mapped) : mappedBytes(mapped) {}
    void operator()(uint8_t* p) const;
};
using TensorBuffer = std::unique_ptr<uint8_t[], TensorBufferRelease>;

struct WriteJob {
    enum class Kind {
        Tensor,      // head (.bin header) + data, written atomically to path
        Row,         // head is one or more whole statistic.csv lines appended to path
        PackedRows,  // head is rows packed by format::packStatRow, formatted here, then as Row
        File,        // head is the whole content, written atomically to path
        LatestFile,  // like File, but only the newest queued content for a path is written
    };
    Kind kind = Kind::File;
    std::string path;
    std::string head;
    TensorBuffer data;
    uint64_t size = 0;
    uint64_t rows = 0;     // Row, PackedRows: how many lines `head` holds
    int64_t round = 0;     // Row, PackedRows: the round of those lines
    uint64_t charged = 0;  // bytes counted against the memory cap (by takeBuffer and enqueue)
    // File / LatestFile: when set, the content is made by this, on the writer thread, when the
    // file is written ("" writes nothing). A document that grows with every new layer (the
    // model's structure) is then rendered once per batch instead of once per layer, and not on
    // the model's thread. It may take locks of its own, never the writer's.
    std::function<std::string()> render;
};

struct WriterOptions {
    std::string root;                        // atb_dump_data: status file and disk checks
    uint64_t memoryCapBytes = 512ull << 20;  // queued tensor bytes before ops wait
    uint64_t minFreeBytes = 256ull << 20;    // stop dumping below this free space
    // Called on the writer thread once rows are in their files (for the control socket's
    // doorbell): per round, how many rows and bytes a batch appended.
    std::function<void(int64_t round, uint64_t rows, uint64_t bytes)> rowsWritten;
};

struct WriterCounters {
    uint64_t files = 0, bytes = 0, rows = 0, errors = 0, droppedJobs = 0;
    uint64_t unreported = 0;  // errors counted without a message (the same refusal again)
};

class DumpWriter {
public:
    // `onError` receives each problem as text (called on the writer thread).
    DumpWriter(WriterOptions options, std::function<void(const std::string&)> onError);
    ~DumpWriter();
    DumpWriter(const DumpWriter&) = delete;
    DumpWriter& operator=(const DumpWriter&) = delete;

    // Takes new options and forgets the previous session's counters and state (only while
    // stopped: the runtime reuses one writer for every start).
    void reset(WriterOptions options);
    // Opens the root (made when missing; refused when it is a link) and starts the thread.
    // Returns 0, or an errno value with nothing started.
    int start();
    // A buffer for `size` bytes of tensor data, counted against the memory cap from now on
    // (`charged` receives how many bytes; the job that carries the buffer passes it on in its
    // `charged`): blocks while there is no room, so the copy itself waits, not just its
    // queueing. A buffer of a written tensor is reused when there is one: of the same
    // footprint, else (from 2 MiB) the smallest bigger one, charged for all of it. A fresh buffer
    // of 2 MiB or more is mapped in huge pages, its size rounded up to whole ones (and charged so):
    // a fault per 4 KiB page, on the op's thread, costs about 35 us on a virtual machine (146 ms
    // per 16 MiB measured, 2.5 ms in huge pages when they come cheap, 45-200 ms when the host must
    // back them again). So fresh memory is taken only while what is held stays within 1/32 of
    // the cap or two buffers of this size (and 2 MiB for the headers and rows queued beside
    // them); beyond that the op waits for the writer to give a
    // written buffer back, which costs less than faulting in a new one (a 16 MiB write takes 3-10
    // ms there).
    TensorBuffer takeBuffer(uint64_t size, uint64_t* charged);
    // Queues a job; blocks while the queued bytes exceed the memory cap (unless nothing is
    // held, so one tensor bigger than the cap still goes through). Returns false when the
    // writer is stopped (the job is dropped and counted).
    bool enqueue(WriteJob job);
    // An empty string for packing a batch of rows (PackedRows) in, with room for `bytes`: one
    // whose rows were written, kept for this. A new one per batch was fresh memory, which the
    // op's thread faulted in page by page (6 MB per run of a decoder dumping every op).
    std::string takeRowBuffer(size_t bytes);
    // Waits until every job queued before this call has been written.
    void drain();
    // Drains, then ends the thread.
    void stop();

    // True once the disk guard has stopped dumping (or a write hit ENOSPC).
    bool diskStopped() const { return diskStopped_.load(std::memory_order_acquire); }
    std::string diskStoppedReason() const;
    WriterCounters counters() const;
    // The memory the writer holds: queued jobs, buffers handed out, buffers kept for reuse.
    uint64_t queuedBytes() const;

    // Forget the thread after fork(): the child must not join or touch it.
    void abandonAfterFork();

private:
    void run();
    void process(std::deque<WriteJob>& batch);
    void writeTensorOrFile(WriteJob& job);
    // Appends whole lines to a CSV file, made with `header` when missing (`rowCount` of them
    // are statistic rows, counted as such). True when every line is in the file.
    bool appendLines(const std::string& path, const char* header, const std::string& text,
                     uint64_t rowCount);
    // The processes' row order files (format/row_order.h): the batches of rows in the order
    // they were queued, as (statistic.csv path, round, rows). Written before the rows: a
    // batch is the whole queue, often long, so lines written after it left the rows a kill
    // or a full disk cut off unordered (a third of a dump); lines for rows that never arrive
    // cost the readers nothing, as they take the rows there are.
    void appendRowOrder(
        const std::vector<std::tuple<const std::string*, int64_t, uint64_t>>& queuedRuns);
    // A write the dump directory refused: a full disk stops dumping, something planted is
    // reported once per place (and counted every time).
    void refused(const DumpDirectory::Refusal& refusal, const std::string& what);
    bool checkDiskSpace(uint64_t upcomingBytes);
    void stopDumping(const std::string& reason);
    void reportError(const std::string& message);
    // `firstRows` go into the file with its header when it is made (`rowsWritten` then).
    int csvDescriptor(const std::string& path, const char* header, const std::string& firstRows,
                      bool* rowsWritten);
    void closeCsvDescriptors();
    // Ends the writer's periodic wait now: an op waits for room, or much is queued (the caller
    // holds mutex_).
    void wakeWriterLocked();
    // Keeps the buffer of a written tensor for reuse (the caller holds mutex_).
    void keepBufferLocked(WriteJob& job);

    WriterOptions options_;
    std::function<void(const std::string&)> onError_;

    mutable std::mutex mutex_;
    std::condition_variable workAvailable_, spaceAvailable_, progressed_;
    std::deque<WriteJob> queue_;
    // The jobs the writer thread took from queue_ and is writing: only that thread touches it.
    // A member rather than a local, so that a forked child (where that thread does not exist)
    // still reaches the memory from here.
    std::deque<WriteJob> batch_;
    struct LatestContent {
        std::string head;
        std::function<std::string()> render;
    };
    std::unordered_map<std::string, LatestContent> latestContent_;  // LatestFile: path -> newest
    uint64_t queuedBytes_ = 0;  // queued jobs and buffers handed out by takeBuffer
    // Buffers of written tensors, for takeBuffer: (size, buffer), counted in pooledBytes_.
    std::vector<std::pair<uint64_t, TensorBuffer>> pool_;
    uint64_t pooledBytes_ = 0;
    std::vector<std::string> rowBuffers_;  // for takeRowBuffer
    uint64_t enqueuedSeq_ = 0, writtenSeq_ = 0;
    bool stopRequested_ = false, running_ = false, wakeRequested_ = false;
    std::thread thread_;

    std::atomic<bool> diskStopped_{false};
    std::string diskStoppedReason_;
    WriterCounters counters_;

    // Writer-thread state.
    std::vector<std::string> rowTexts_;  // the lines of a batch's rows were formatted in
    DumpDirectory directory_;
    std::unordered_set<std::string> refusedPlaces_;
    struct CsvFile {
        int fd = -1;
        uint64_t lastUse = 0;
    };
    std::unordered_map<std::string, CsvFile> csvFiles_;
    uint64_t useClock_ = 0;
    uint64_t bytesSinceDiskCheck_ = 0;
    int64_t lastDiskCheckMs_ = 0;
};

}  // namespace probe::runtime
