// SPDX-License-Identifier: GPL-3.0-or-later
#include "overflow_watch.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "dump_writer.h"
#include "op_names.h"
#include "probe/format/overflow_rule.h"
#include "probe/format/statistic_csv.h"
#include "probe/format/tensor_bin.h"
#include "probe/format/tensor_stats.h"
#include "runtime.h"
#include "thread_state.h"

namespace probe::runtime {
namespace {

// Once an op cannot be where an overflow is born, the copies of its data go.
void releaseData(OverflowCandidate& candidate) {
    for (auto& held : candidate.tensors) held.data.reset();
}

}  // namespace

std::shared_ptr<OverflowCandidate> OverflowWatch::watch(const char* paramJson) {
    auto candidate = std::make_shared<OverflowCandidate>();
    candidate->paramJson = paramJson ? paramJson : "";
    return candidate;
}

int OverflowWatch::hold(ThreadState& ts, Frame& frame, const TensorReport& t,
                        std::optional<format::DType> dtype, uint64_t count) {
    OverflowCandidate& candidate = *frame.overflow;
    OverflowCandidate::Held held;
    held.isOutput = t.io == 1;
    const std::string arg = sanitizeName(t.argName);
    held.indexText = std::to_string(t.index) + (arg.empty() ? "" : "_" + arg);
    held.fileName = std::string(held.isOutput ? "outtensor" : "intensor") + held.indexText + ".bin";
    held.dtypeName =
        dtype ? format::dtypeName(*dtype) : "undefined(" + std::to_string(t.dtype) + ")";
    held.dtypeCode = t.dtype;
    held.format = t.format;
    held.dims.assign(t.dims, t.dims + t.ndims);
    held.shape = format::shapeString(held.dims);
    held.nbytes = t.nbytes;
    bool bad = false, nan = false;
    if (dtype && t.data) {
        const auto stats = format::computeTensorStats(*dtype, t.data, count);
        if (stats.valid) {
            held.max = stats.max;
            held.min = stats.min;
            held.mean = stats.mean;
            held.norm = stats.norm;
        }
        bad = !format::overflowReason(stats.max, stats.min, stats.hasNan()).empty();
        nan = stats.hasNan();
    }
    (held.isOutput ? candidate.outputBad : candidate.inputBad) |= bad;
    (held.isOutput ? candidate.outputNan : candidate.inputNan) |= nan;
    if (bad) {
        held.print = format::overflowFingerprint(held.dtypeName, held.shape, held.max.value_or(0),
                                                 held.min.value_or(0), held.mean, held.norm);
        noteOverflowed(ts, frame, candidate, held, nan);
    }
    // Inputs holding Inf alone may still make a NaN born here.
    if (candidate.inputNan || candidate.childBorn) {
        releaseData(candidate);
    } else if (t.data && t.nbytes) {
        // A copy: an in-place op changes its input after this, an output's memory is reused.
        held.data.reset(new uint8_t[t.nbytes]);
        std::memcpy(held.data.get(), t.data, t.nbytes);
    }
    candidate.tensors.push_back(std::move(held));
    return 1;
}

void OverflowWatch::noteOverflowed(ThreadState& ts, const Frame& frame,
                                   OverflowCandidate& candidate,
                                   const OverflowCandidate::Held& held, bool nan) {
    const format::OverflowFingerprint& fingerprint = *held.print;
    bool cameIn = false;
    {
        std::lock_guard<std::mutex> lock(seenMutex_);
        RoundSeen& seen = seen_[ts.layer.round];
        if (seen_.size() > kRoundsSeen) seen_.erase(seen_.begin());
        bool tainted = false;
        if (held.isOutput) {
            seen.made.insert(fingerprint);
            tainted = format::overflowOutputTainted(
                candidate.inputTainted, candidate.inputBad,
                format::isOverflowIgnoredType(frame.type, format::defaultOverflowIgnoredTypes()));
            if (tainted) {
                seen.tainted.insert(fingerprint);
                candidate.outputTainted = true;
            }
        } else {
            cameIn = !seen.made.count(fingerprint);
            tainted = seen.tainted.count(fingerprint) != 0;
            candidate.inputTainted = candidate.inputTainted || tainted;
        }
        // A layer whose own tensors hold NaN, or Inf born this round: its backward computes from
        // them (a mask's -inf is neither: the backward may make an overflow of its own).
        if (ts.stack.size() == 1 && (nan || tainted))
            seen.overflowedLayers.insert(ts.stack[0].name);
    }
    if (!cameIn) return;
    // Came in from outside: the ops around the one reading it are no birth, but one that had
    // them as its own input (a Python number -inf given to mul, which its child to_copy reads).
    for (size_t i = 0; i + 1 < ts.stack.size(); ++i) {
        OverflowCandidate* around = ts.stack[i].overflow.get();
        if (!around) continue;
        if (std::any_of(around->tensors.begin(), around->tensors.end(),
                        [&](const auto& t) { return !t.isOutput && t.print == held.print; }))
            continue;
        around->fedInside = true;
        releaseData(*around);
    }
}

bool OverflowWatch::forwardOverflowed(const ThreadState& ts) {
    const std::string_view forward = format::forwardOfBackwardLayerOp(ts.stack[0].name);
    if (forward.empty()) return false;
    std::lock_guard<std::mutex> lock(seenMutex_);
    const auto round = seen_.find(ts.layer.round);
    return round != seen_.end() && round->second.overflowedLayers.count(std::string(forward));
}

void OverflowWatch::opEnding(ThreadState& ts) {
    Frame& frame = ts.stack.back();
    const std::shared_ptr<OverflowCandidate> candidate = std::move(frame.overflow);
    if (!candidate) return;
    const bool born =
        format::overflowBornOf(candidate->inputBad, candidate->inputNan, candidate->inputTainted,
                               candidate->outputBad, candidate->outputNan) &&
        !candidate->childBorn && !candidate->fedInside && !forwardOverflowed(ts) &&
        !format::isOverflowIgnoredType(frame.type, format::defaultOverflowIgnoredTypes());
    if (born) {
        const format::OpConfig& config = ts.layer.config->config;
        const int64_t limit = config.overflowNums;
        const int64_t birth = births_.fetch_add(1) + 1;
        if (limit < 0 || birth <= limit) {
            write(ts, frame, *candidate);
            if (config.stopAfterOverflow && birth == limit) endProgram(birth);
        }
    }
    // The enclosing ops are not where it was born: the innermost op is.
    if ((born || candidate->childBorn) && ts.stack.size() >= 2) {
        Frame& parent = ts.stack[ts.stack.size() - 2];
        if (parent.overflow) {
            parent.overflow->childBorn = true;
            releaseData(*parent.overflow);
        }
    }
}

void OverflowWatch::endProgram(int64_t births) {
    const int code = format::kOverflowStopExitCode;
    // A warning: said on stderr even when quiet, and kept in probe_status.json's messages.
    runtime_.status().warning("stop_after_overflow: overflow_nums (" + std::to_string(births) +
                              ") overflow birth(s) written; the probe ends the program with "
                              "exit code " +
                              std::to_string(code));
    runtime_.status().setEndedBy({format::ProgramEnd::How::Exited, code, "the probe"});
    // Drains every queued file and row and writes probe_status.json, then ends the process
    // without running the program further (its exit handlers could run model code).
    runtime_.stop();
    std::fflush(nullptr);
    ::_exit(code);
}

void OverflowWatch::write(ThreadState& ts, const Frame& frame, OverflowCandidate& candidate) {
    const LayerExecution& layer = ts.layer;
    const std::string opDir = layer.roundDir + "/" + frame.relDir;
    runtime_.ops().writeOpParam(opDir, candidate.paramJson.c_str());
    std::string rows, why;
    uint64_t rowCount = 0;
    for (auto& held : candidate.tensors) {
        format::StatRow row;
        row.devicePid = layer.devicePid;
        row.round = layer.round;
        row.opName = frame.namePath;
        row.opType = frame.type;
        row.opId = frame.id;
        row.isOutput = held.isOutput;
        row.index = held.indexText;
        row.dtype = held.dtypeName;
        row.format = format::formatName(held.format);
        row.shape = held.shape;
        row.max = held.max;
        row.min = held.min;
        row.mean = held.mean;
        row.norm = held.norm;
        if (held.isOutput && why.empty() && held.max && held.min) {
            const std::string reason = format::overflowReason(
                *held.max, *held.min,
                format::statisticsShowNan(*held.max, *held.min, held.mean.value_or(0)));
            if (!reason.empty()) why = "output " + held.indexText + ": " + reason;
        }
        if (held.data || held.nbytes == 0) {
            format::BinHeader header;
            header.formatCode = held.format;
            header.dtypeCode = held.dtypeCode;
            header.dims = held.dims;
            header.dataLength = held.nbytes;
            WriteJob job;
            job.kind = WriteJob::Kind::Tensor;
            job.path = opDir + (held.isOutput ? "/after/" : "/before/") + held.fileName;
            job.head = format::makeBinHeader(header);
            if (held.nbytes) {
                job.data = std::move(held.data);
                job.size = held.nbytes;
            }
            row.tensorPath = job.path;
            runtime_.writer().enqueue(std::move(job));
        }
        rows += format::formatStatRow(row);
        ++rowCount;
    }
    if (rowCount) {
        WriteJob job;
        job.kind = WriteJob::Kind::Row;
        job.path = layer.csvPath;
        job.head = std::move(rows);
        job.rows = rowCount;
        job.round = layer.round;  // the control socket's rows_written doorbell counts them
        runtime_.writer().enqueue(std::move(job));
    }
    runtime_.status().info("overflow born in round " + std::to_string(layer.round) + ", op " +
                           frame.namePath + " (" + frame.id + ") [" + frame.type + "]" +
                           (why.empty() ? "" : ": " + why));
}

}  // namespace probe::runtime
