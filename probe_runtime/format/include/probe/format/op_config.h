// The injected probe's op-level config (FORMATS.md section 3, "Injected probe"): parsing,
// validation and the selection rules that decide which ops are dumped.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "probe/format/config_issue.h"

namespace probe::format {

// OverflowCheck: only the ops where an overflow is born, with their tensors and statistics.
enum class DumpTask { Tensor, Statistics, All, OverflowCheck };
const char* dumpTaskName(DumpTask task);

// Inclusive round ranges: "all", "none", or "start,end" (several pairs "0,2,5,7" are accepted,
// as the reference does).
struct ExecRange {
    enum class Kind { All, None, Ranges };
    Kind kind = Kind::Ranges;
    std::vector<std::pair<int64_t, int64_t>> ranges{{0, 0}};

    bool contains(int64_t round) const;
    std::string toString() const;
    bool operator==(const ExecRange& other) const {
        return kind == other.kind && ranges == other.ranges;
    }
};

// Where an op sits, as the selection rules see it.
struct OpLocation {
    std::string_view idPath;    // "2_1_0"
    std::string_view namePath;  // "Prefill_layer/Attention/MatMul", any case
    int depth = 0;              // 0 for a layer-level op
};

struct OpConfig {
    DumpTask task = DumpTask::Tensor;
    bool dumpEnable = false;
    ExecRange execRange;
    std::vector<std::string> ids;      // "0", "2_1"
    std::vector<std::string> opNames;  // lower-cased prefixes
    bool saveChild = false;
    std::vector<std::string> devices;  // "0", "3"
    int filterLevel = 1;
    // Per-parameter gradient statistics at each optimizer step (PyTorch under `probe run`):
    // CSV files in <dump>/grad_monitor/. Written to the file only when true.
    bool gradMonitor = false;
    // Task overflow_check: after this many births nothing more is watched (-1: never stop);
    // msprobe's key and default. Written when the task is overflow_check or it is not 1.
    int64_t overflowNums = 1;
    // Task overflow_check: once the overflow_nums-th birth is on disk the program is ended with
    // kOverflowStopExitCode (overflow_rule.h). Probe Studio's key, written only when true.
    bool stopAfterOverflow = false;

    bool wantsStatistics() const { return task != DumpTask::Tensor; }
    bool wantsTensors() const { return task != DumpTask::Statistics; }

    // Whether the op's tensors are dumped (not counting dump_enable, exec_range, device).
    // ids and op_name are alternatives (either selects); with both empty only layer-level ops
    // are selected, or every op when save_child is set. Without save_child an id must match
    // exactly and a name prefix must match the op's own name; with save_child an id also
    // selects every descendant ("2" selects "2_1_0", not "20") and a name prefix selects the
    // op whose own name or any ancestor's name starts with it.
    bool selects(const OpLocation& op) const;
    // Whether some descendant of `op` could be selected (so an adapter must keep observing
    // inside it even though the op itself is not dumped).
    bool maySelectDescendants(const OpLocation& op) const;
    // Whether any op below a layer-level op may be selected (save_child, an op_name prefix, an
    // id below a layer): maySelectDescendants() may then hold for some layer-level op.
    bool maySelectBelowLayers() const;
    // Device filter: "" (no device list) accepts all; an unknown device (<0) matches no list.
    bool acceptsDevice(int device) const;
    // Whether the tensor of an op at `depth` is skipped as kernel-level (filter_level 2).
    bool skipsKernelTensors() const { return saveChild && filterLevel >= 2; }
    // Whether repeated tensors are written once and aliased afterwards (filter_level >= 1).
    bool deduplicatesTensors() const { return saveChild && filterLevel >= 1; }

    // The config new users start from: statistics of every layer-level op, every round.
    static OpConfig startingPoint();

    nlohmann::json toJson() const;
    // The config file's text: the keys in the documented order, four-space indent.
    std::string toFileText() const;
    bool operator==(const OpConfig& other) const;
    bool operator!=(const OpConfig& other) const { return !(*this == other); }

private:
    nlohmann::ordered_json orderedJson() const;
};

struct OpConfigResult {
    std::optional<OpConfig> config;  // set only when there are no issues
    std::vector<ConfigIssue> issues;
    bool ok() const { return config.has_value(); }
};

// Validates every key; unknown keys, wrong types and bad values are all reported. The file is
// accepted whole or not at all. Missing keys take their defaults.
OpConfigResult parseOpConfig(std::string_view text, const std::string& file);
// `text`: set to the file's text when it could be read.
OpConfigResult loadOpConfigFile(const std::string& path, std::string* text = nullptr);

// Keys of the op-level config, in the documented order: every config file has them (the
// app's form shows them).
const std::vector<std::string>& opConfigKeys();
// Keys of the precision-debugging suite, accepted too and written only when not at their
// default (grad_monitor, and the overflow_check task's).
const std::vector<std::string>& opConfigOptionalKeys();

}  // namespace probe::format
