// The msprobe dump layout's names (FORMATS.md section 2): written by the code-level API
// (Python, probe_studio.pytorch) and read by the application's msprobe reader. The one table of
// them: Python reads it through the adapter (probe::msprobe_tables) and its tests check that
// every key the writer puts in dump.json is here, in this order.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <string_view>

namespace probe::format::msprobe_layout {

// The files of a step<N>/rank<R> (or proc<pid>) folder.
inline constexpr std::string_view kDumpFile = "dump.json";
inline constexpr std::string_view kStackFile = "stack.json";
inline constexpr std::string_view kConstructFile = "construct.json";
inline constexpr std::string_view kErrorLogFile = "dump_error_info.log";
inline constexpr std::string_view kTensorDir = "dump_tensor_data";

// dump.json's top-level keys, in the order written.
inline constexpr std::array<std::string_view, 5> kDumpKeys = {"task", "level", "framework",
                                                              "dump_data_dir", "data"};

// An entry's keys, in the order written: a forward entry (API or module; "parameters" only for
// a module), a backward entry. A parameters_grad entry is keyed by parameter names.
inline constexpr std::array<std::string_view, 4> kForwardKeys = {"input_args", "input_kwargs",
                                                                 "output", "parameters"};
inline constexpr std::array<std::string_view, 2> kBackwardKeys = {"input", "output"};

// A tensor item's keys, in the order written; "data_name" only with a saved .pt file, "md5"
// only with summary_mode md5.
inline constexpr std::string_view kTensorType = "torch.Tensor";
inline constexpr std::array<std::string_view, 10> kTensorKeys = {
    "type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad", "data_name", "md5"};

// Entry name prefixes: "<Prefix>.<api>.<n>.<forward|backward>" and
// "Module.<path>.<Class>.<forward|backward>.<n>", "Module.<path>.<Class>.parameters_grad.<n>".
inline constexpr std::array<std::string_view, 7> kApiPrefixes = {
    "Functional", "Torch", "Tensor", "VF", "Distributed", "Aten", "NPU"};
inline constexpr std::string_view kModulePrefix = "Module";
inline constexpr std::string_view kParametersGrad = "parameters_grad";

}  // namespace probe::format::msprobe_layout
