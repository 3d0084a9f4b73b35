// Tensor capture: a tensor reported for the op on top of the thread's stack becomes its
// statistics, its .bin file (or a header-only alias of an earlier copy) and its statistic.csv
// row; rows are batched per thread and handed to the writer at the end of each layer op.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include "probe/format/tensor_stats.h"

namespace probe::runtime {

class Runtime;
struct ThreadState;

struct TensorReport {
    int io = 0;  // PROBE_INPUT / PROBE_OUTPUT
    int index = 0;
    const char* argName = nullptr;
    int dtype = 0;
    int format = 2;
    const int64_t* dims = nullptr;
    int ndims = 0;
    const void* data = nullptr;
    uint64_t nbytes = 0;
    uint64_t bufferId = 0;
    // Statistics computed by the engine, used instead of data (task statistics only).
    const format::TensorStats* stats = nullptr;
};

class TensorCapture {
public:
    explicit TensorCapture(Runtime& runtime) : runtime_(runtime) {}

    int opTensor(const TensorReport& tensor);
    // Hands the thread's pending rows to the writer.
    void flushRows(ThreadState& ts, bool skipBusy = false);
    // Every thread's pending rows (periodically, and at stop). With `skipBusy`, a thread whose
    // rows are locked (it crashed while adding one) is skipped instead of waited for.
    void flushAllRows(bool skipBusy = false);

private:
    // Hands the batch to the writer (ts.rows.mutex held, at least one row).
    void handOverRows(ThreadState& ts);

    Runtime& runtime_;
};

}  // namespace probe::runtime
