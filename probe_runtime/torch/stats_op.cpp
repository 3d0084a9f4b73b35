// Custom ops for the code-level API (probe_studio.pytorch, the msprobe layout), compiled into
// libprobe_torch.so next to the adapter:
//
//   probe::tensor_summaries(Tensor[] tensors, bool crc) -> (float[], int[])
//       One row per tensor, computed by the format library's fused statistics pass
//       (probe::format::computeTensorStats) over contiguous CPU data, so that Python never
//       loops over elements and all tensors of a dump entry cost one call. Python lists, not
//       tensors: nothing to allocate through the dispatcher or convert back per call.
//         rows  N x 6 floats, row after row: max, min, mean, norm, valid, crc32
//               max/min/mean/norm are rounded to the tensor's own floating dtype (float32,
//               float16, bfloat16): msprobe writes the dtype's result as a Python double.
//               Complex tensors are summarised by their magnitude. A 0-d tensor has all four
//               equal to its value. valid is 0 when nothing could be computed (empty tensor,
//               unsupported layout or dtype): the four values are then meaningless.
//               crc32 is zlib's CRC-32 of the contiguous bytes (the "md5" field), 0 unless asked.
//         ints  N x 2 ints: exact max and min for integer and bool tensors (a double cannot
//               hold every int64).
//       Both are empty when memory ran out: the statistics then stay null.
//
//   probe::api_config_check(str text, str file) -> str
//       The code-level config validator (probe::format::parseApiConfig) for Python:
//       {"ok": bool, "config": {...normalised...} | null,
//        "issues": [{"key", "problem", "accepted", "warning", "line", "column", "text"}]}
//
//   probe::msprobe_tables() -> str
//       The format library's msprobe tables, for Python and its tests:
//       {"config_keys": [{"block", "key", "use": "honoured" | "no_effect" | "other_task", "note"}],
//        "layout": {"dump_keys", "forward_keys", "backward_keys", "tensor_keys", "api_prefixes", ...}}
//
// Nothing here throws into PyTorch: a failure becomes an invalid row or an issue.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "probe/format/api_config.h"
#include "probe/format/dtype.h"
#include "probe/format/msprobe_layout.h"
#include "probe/format/tensor_stats.h"

namespace probe::torch_api {
namespace {

using probe::format::DType;

enum Column : int { kMax = 0, kMin, kMean, kNorm, kValid, kCrc, kColumns };

bool formatDtype(c10::ScalarType type, DType* out) {
    switch (type) {
        case c10::ScalarType::Float: *out = DType::Float; return true;
        case c10::ScalarType::Double: *out = DType::Double; return true;
        case c10::ScalarType::Half: *out = DType::Float16; return true;
        case c10::ScalarType::BFloat16: *out = DType::BF16; return true;
        case c10::ScalarType::Char: *out = DType::Int8; return true;
        case c10::ScalarType::Byte: *out = DType::UInt8; return true;
        case c10::ScalarType::Short: *out = DType::Int16; return true;
        case c10::ScalarType::Int: *out = DType::Int32; return true;
        case c10::ScalarType::Long: *out = DType::Int64; return true;
        case c10::ScalarType::Bool: *out = DType::Bool; return true;
        default: return false;
    }
}

// The value as the tensor's own floating dtype would hold it, widened back to double.
double roundToDtype(double value, c10::ScalarType type) {
    switch (type) {
        case c10::ScalarType::Float:
        case c10::ScalarType::ComplexFloat: return static_cast<double>(static_cast<float>(value));
        case c10::ScalarType::Half: return static_cast<double>(static_cast<float>(c10::Half(static_cast<float>(value))));
        case c10::ScalarType::BFloat16:
            return static_cast<double>(static_cast<float>(c10::BFloat16(static_cast<float>(value))));
        default: return value;
    }
}

void reportFailure(const char* what) {
    static int reported = 0;
    if (reported++ < 3) std::fprintf(stderr, "[probe] tensor statistics: %s (the model continues)\n", what);
}

// Exact max/min of an int64 buffer (a double would round values beyond 2^53).
void int64MaxMin(const int64_t* p, int64_t count, int64_t* maxOut, int64_t* minOut) {
    int64_t mx = std::numeric_limits<int64_t>::lowest(), mn = std::numeric_limits<int64_t>::max();
    for (int64_t i = 0; i < count; ++i) {
        mx = p[i] > mx ? p[i] : mx;
        mn = p[i] < mn ? p[i] : mn;
    }
    *maxOut = mx;
    *minOut = mn;
}

// Fills one row (and its exact integer pair) for `tensor`. Our own ATen calls (copies to the
// CPU, contiguous, abs of complex values) are neither recorded nor tracked by autograd.
void summarise(const at::Tensor& input, bool crc, double* row, int64_t* ints) {
    if (!input.defined() || input.is_sparse() || input.is_mkldnn() || input.is_quantized() || input.is_meta() ||
        !input.has_storage())
        return;
    const int64_t numel = input.numel();
    if (numel == 0) return;
    at::Tensor host = input;
    if (!host.device().is_cpu()) host = host.cpu();
    if (host.is_conj()) host = host.resolve_conj();
    if (host.is_neg()) host = host.resolve_neg();
    if (!host.is_contiguous()) host = host.contiguous();
    const c10::ScalarType type = host.scalar_type();
    if (crc) {
        const uint64_t nbytes = static_cast<uint64_t>(numel) * host.element_size();
        row[kCrc] = static_cast<double>(probe::format::crc32(host.data_ptr(), nbytes));
    }
    at::Tensor values = host;
    if (type == c10::ScalarType::ComplexFloat || type == c10::ScalarType::ComplexDouble) values = host.abs().contiguous();
    DType dtype;
    if (!formatDtype(values.scalar_type(), &dtype)) return;
    const auto stats = probe::format::computeTensorStats(dtype, values.data_ptr(), static_cast<uint64_t>(numel));
    if (!stats.valid) return;
    row[kMax] = roundToDtype(stats.max, type);
    row[kMin] = roundToDtype(stats.min, type);
    row[kMean] = roundToDtype(stats.mean, type);
    row[kNorm] = roundToDtype(stats.norm, type);
    if (type == c10::ScalarType::Long) {
        int64MaxMin(values.data_ptr<int64_t>(), numel, &ints[0], &ints[1]);
    } else if (!at::isFloatingType(type) && !at::isComplexType(type)) {
        ints[0] = static_cast<int64_t>(stats.max);
        ints[1] = static_cast<int64_t>(stats.min);
    }
    if (input.dim() == 0) {
        // msprobe reports a scalar's value for all four statistics (also a negative "norm").
        row[kMin] = row[kMean] = row[kNorm] = row[kMax];
    }
    row[kValid] = 1.0;
}

std::tuple<std::vector<double>, std::vector<int64_t>> tensorSummaries(const std::vector<at::Tensor>& tensors, bool crc) {
    at::DisableRecordFunctionGuard noRecord;
    c10::AutoGradMode noGrad(false);
    const size_t n = tensors.size();
    std::vector<double> rows;
    std::vector<int64_t> ints;
    try {
        rows.assign(n * kColumns, 0.0);
        ints.assign(n * 2, 0);
    } catch (const std::exception& e) {
        reportFailure(e.what());
        return {};
    }
    for (size_t i = 0; i < n; ++i) {
        double* row = rows.data() + i * kColumns;
        try {
            summarise(tensors[i], crc, row, ints.data() + i * 2);
        } catch (const std::exception& e) {
            row[kValid] = 0.0;
            reportFailure(e.what());
        } catch (...) {
            row[kValid] = 0.0;
            reportFailure("unknown failure");
        }
    }
    return {std::move(rows), std::move(ints)};
}

std::string apiConfigCheck(const std::string& text, const std::string& file) {
    nlohmann::ordered_json out;
    try {
        const auto result = probe::format::parseApiConfig(text, file);
        out["ok"] = result.ok();
        out["config"] = result.ok() ? result.config->toJson() : nlohmann::ordered_json(nullptr);
        out["issues"] = nlohmann::ordered_json::array();
        for (const auto& issue : result.issues) {
            out["issues"].push_back({{"key", issue.key},
                                     {"problem", issue.problem},
                                     {"accepted", issue.accepted},
                                     {"warning", issue.warning},
                                     {"line", issue.line},
                                     {"column", issue.column},
                                     {"text", issue.toString()}});
        }
        return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } catch (const std::exception& e) {
        nlohmann::ordered_json failed;
        failed["ok"] = false;
        failed["config"] = nullptr;
        failed["issues"] = nlohmann::ordered_json::array(
            {{{"key", ""}, {"problem", std::string("internal error: ") + e.what()}, {"accepted", ""},
              {"warning", false}, {"line", 0}, {"column", 0}, {"text", file + ": internal error: " + e.what()}}});
        return failed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
}

template <typename Names>
nlohmann::ordered_json nameList(const Names& names) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::string_view name : names) list.push_back(std::string(name));
    return list;
}

std::string msprobeTables() {
    namespace layout = probe::format::msprobe_layout;
    using probe::format::MsprobeKeyUse;
    nlohmann::ordered_json out;
    out["config_keys"] = nlohmann::ordered_json::array();
    for (const auto& k : probe::format::msprobeConfigKeys()) {
        const char* use = k.use == MsprobeKeyUse::Honoured ? "honoured"
                          : k.use == MsprobeKeyUse::NoEffect ? "no_effect"
                                                              : "other_task";
        out["config_keys"].push_back({{"block", k.block}, {"key", k.key}, {"use", use}, {"note", k.note}});
    }
    out["layout"] = {{"files", nameList(std::array{layout::kDumpFile, layout::kStackFile, layout::kConstructFile,
                                                   layout::kErrorLogFile, layout::kTensorDir})},
                     {"dump_keys", nameList(layout::kDumpKeys)},
                     {"forward_keys", nameList(layout::kForwardKeys)},
                     {"backward_keys", nameList(layout::kBackwardKeys)},
                     {"tensor_type", std::string(layout::kTensorType)},
                     {"tensor_keys", nameList(layout::kTensorKeys)},
                     {"api_prefixes", nameList(layout::kApiPrefixes)},
                     {"module_prefix", std::string(layout::kModulePrefix)},
                     {"parameters_grad", std::string(layout::kParametersGrad)}};
    return out.dump();
}

}  // namespace
}  // namespace probe::torch_api

TORCH_LIBRARY_FRAGMENT(probe, m) {
    m.def("tensor_summaries(Tensor[] tensors, bool crc) -> (float[], int[])", &probe::torch_api::tensorSummaries);
    m.def("api_config_check(str text, str file) -> str", &probe::torch_api::apiConfigCheck);
    m.def("msprobe_tables() -> str", &probe::torch_api::msprobeTables);
}
