// SPDX-License-Identifier: GPL-3.0-or-later
#include "tensor_capture.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <mutex>
#include <vector>

#include "dump_writer.h"
#include "op_names.h"
#include "probe/format/dtype.h"
#include "probe/format/statistic_csv.h"
#include "probe/format/tensor_bin.h"
#include "runtime.h"
#include "thread_state.h"

namespace probe::runtime {
namespace {

std::mutex gThreadsMutex;
std::vector<ThreadState*> gThreads;
constexpr size_t kRowBatchBytes = 256 * 1024;

}  // namespace

ThreadState::ThreadState() {
    std::lock_guard<std::mutex> lock(gThreadsMutex);
    gThreads.push_back(this);
}

ThreadState::~ThreadState() {
    Runtime::instance().capture().flushRows(*this);
    std::lock_guard<std::mutex> lock(gThreadsMutex);
    gThreads.erase(std::remove(gThreads.begin(), gThreads.end(), this), gThreads.end());
}

int TensorCapture::opTensor(const TensorReport& t) {
    if (!runtime_.isStarted()) return 0;
    ThreadState& ts = threadState(runtime_.epoch());
    if (ts.stack.empty()) {
        Runtime::setLastError(
            "probe_op_tensor: no op is open on this thread (call probe_op_begin first)");
        return -5;
    }
    if ((t.io != 0 && t.io != 1) || t.index < 0 || t.ndims < 0 || (t.ndims > 0 && !t.dims)) {
        Runtime::setLastError(
            "probe_op_tensor: io must be PROBE_INPUT or PROBE_OUTPUT, index >= 0, and dims given "
            "when ndims > 0");
        return -1;
    }
    Frame& frame = ts.stack.back();
    if (!frame.active) return 0;
    const bool isOutput = t.io == 1;
    if (frame.observed)
        frame.observed->addTensor(isOutput, t.index,
                                  t.bufferId ? t.bufferId : reinterpret_cast<uintptr_t>(t.data));
    if (!frame.selected || (!t.data && !t.stats)) return 0;

    LayerExecution& layer = ts.layer;
    const auto& config = layer.config->config;
    if (t.stats && config.wantsTensors()) {
        Runtime::setLastError("probe_op_tensor_stats: this op wants the tensor's data (task " +
                              std::string(format::dumpTaskName(config.task)) +
                              "), not statistics alone");
        return -1;
    }
    const auto dtype = format::dtypeFromCode(t.dtype);
    const auto count = format::elementCount(t.dims, static_cast<size_t>(t.ndims));
    // The shape's text is made only where it is read: a .bin's dedup key, an error. A row
    // carries the dims, spelled by the writer.
    std::string& shape = ts.rowShape;
    auto shapeText = [&]() -> const std::string& {
        shape.clear();
        format::appendShape(shape, t.dims, static_cast<size_t>(t.ndims));
        return shape;
    };
    if (!count) {
        Runtime::setLastError("probe_op_tensor: negative dimension in shape " + shapeText());
        return -1;
    }
    if (t.data && dtype && *count * format::dtypeSize(*dtype) != t.nbytes) {
        Runtime::setLastError(
            "probe_op_tensor: " + std::to_string(t.nbytes) + " bytes do not match shape " +
            shapeText() + " of " + format::dtypeName(*dtype) + " (" +
            std::to_string(*count * format::dtypeSize(*dtype)) + " bytes expected)");
        return -1;
    }

    if (frame.overflow) return runtime_.overflow().hold(ts, frame, t, dtype, *count);

    std::string_view argName;
    if (t.argName && *t.argName) argName = sanitizedName(t.argName, ts.rowArg);
    // The row is packed from the names the frame holds (views), copied once, into the batch.
    if (frame.namesPending) ts.stack.named();
    format::StatRowCodes row;
    row.devicePid = layer.devicePid;
    row.round = layer.round;
    row.opName = frame.namePath;
    row.opType = frame.type;
    row.opId = frame.id;
    row.isOutput = isOutput;
    row.index = t.index;
    row.argName = argName;
    row.dtype = t.dtype;
    row.format = t.format;
    row.dims = t.dims;
    row.ndims = static_cast<uint32_t>(t.ndims);
    if (config.wantsStatistics() && dtype) {
        const auto stats = t.stats ? *t.stats : format::computeTensorStats(*dtype, t.data, *count);
        if (stats.valid) {
            row.max = stats.max;
            row.min = stats.min;
            row.mean = stats.mean;
            row.norm = stats.norm;
        }
    }
    std::string tensorPath;
    if (config.wantsTensors()) {
        // The Index column's text names the file.
        std::string& indexText = ts.rowIndex;
        indexText.clear();
        char digits[16];
        indexText.append(digits, std::to_chars(digits, digits + sizeof digits, t.index).ptr);
        if (!argName.empty()) {
            indexText += '_';
            indexText += argName;
        }
        const std::string fileName =
            std::string(isOutput ? "outtensor" : "intensor") + indexText + ".bin";
        format::BinHeader header;
        header.formatCode = t.format;
        header.dtypeCode = t.dtype;
        header.dims.assign(t.dims, t.dims + t.ndims);
        header.dataLength = t.nbytes;
        if (frame.kernel && config.skipsKernelTensors()) {
            header.alias = fileName;  // as the reference: header only, naming itself
        } else if (config.deduplicatesTensors()) {
            DedupKey key{format::contentHash64(t.data, t.nbytes), t.nbytes, t.dtype, shapeText()};
            auto [it, inserted] =
                layer.firstCopies.try_emplace(std::move(key), frame.id + "_" + fileName);
            if (!inserted) header.alias = it->second;
        }
        WriteJob job;
        job.kind = WriteJob::Kind::Tensor;
        job.path =
            layer.roundDir + "/" + frame.relDir + (isOutput ? "/after/" : "/before/") + fileName;
        job.head = format::makeBinHeader(header);
        if (!header.headerOnly() && t.nbytes) {
            job.data = runtime_.writer().takeBuffer(t.nbytes, &job.charged);
            std::memcpy(job.data.get(), t.data, t.nbytes);
            job.size = t.nbytes;
        }
        tensorPath = job.path;
        row.tensorPath = tensorPath;
        runtime_.writer().enqueue(std::move(job));
    }
    // A batch holds the rows of one statistic.csv: a round's layer ops add to it one after the
    // other, and it goes to the writer when the next round's first row comes, when it is full,
    // and every kRowFlushPeriodMs from the housekeeping thread (flushAllRows). Handing it over
    // at every layer op's end cost a small model a tenth of the probe's instructions.
    std::unique_lock<std::mutex> lock(ts.rows.mutex);
    // The same paths (made once per layer execution at most) are the same file and round.
    if (ts.rows.count != 0 && ts.rows.paths != layer.pathsVersion &&
        (ts.rows.round != layer.round || ts.rows.path != layer.csvPath))
        handOverRows(ts);
    if (ts.rows.count == 0) {
        ts.rows.path = layer.csvPath;
        ts.rows.round = layer.round;
    }
    ts.rows.paths = layer.pathsVersion;
    // Another tensor of the op of the row before: its names are not copied again.
    const bool sameOp = ts.rows.count != 0 && ts.rows.lastOp == frame.serial;
    format::packStatRow(ts.rows.packed, row, sameOp);  // formatted on the writer thread
    ts.rows.lastOp = frame.serial;
    ++ts.rows.count;
    if (ts.rows.packed.size() >= kRowBatchBytes) handOverRows(ts);
    return 1;
}

void TensorCapture::flushRows(ThreadState& ts, bool skipBusy) {
    std::unique_lock<std::mutex> lock(ts.rows.mutex, std::defer_lock);
    if (!skipBusy)
        lock.lock();
    else if (!lock.try_lock())
        return;
    if (ts.rows.count != 0) handOverRows(ts);
}

void TensorCapture::handOverRows(ThreadState& ts) {
    WriteJob job;
    job.kind = WriteJob::Kind::PackedRows;
    job.path = std::move(ts.rows.path);
    const size_t batchBytes = ts.rows.packed.size();
    job.head = std::move(ts.rows.packed);
    job.rows = ts.rows.count;
    job.round = ts.rows.round;
    ts.rows.path.clear();
    ts.rows.count = 0;
    if (!runtime_.hasWriter()) {
        ts.rows.packed.clear();
        return;
    }
    // The next batch is likely the same size (the next round's rows): room for it at once
    // rather than growing by doubling, one copy per growth, as its rows arrive.
    ts.rows.packed = runtime_.writer().takeRowBuffer(std::min(batchBytes, kRowBatchBytes) + 256);
    runtime_.writer().enqueue(std::move(job));
}

void TensorCapture::flushAllRows(bool skipBusy) {
    std::unique_lock<std::mutex> lock(gThreadsMutex, std::defer_lock);
    if (!skipBusy)
        lock.lock();
    else if (!lock.try_lock())
        return;
    for (ThreadState* ts : gThreads) flushRows(*ts, skipBusy);
}

}  // namespace probe::runtime
