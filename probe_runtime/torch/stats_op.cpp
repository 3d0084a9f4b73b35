// Custom ops for the code-level API (probe_studio.pytorch, the msprobe layout), compiled into
// libprobe_torch.so next to the adapter:
//
//   probe::tensor_items(Tensor[] tensors, str[] dtypes, bool crc) -> (str[] cores, str[] md5s)
//       Each tensor's dump.json item, rendered here with its statistics so that Python neither
//       loops over elements nor formats numbers, and all tensors waiting cost one call: the
//       item up to its "requires_grad" (itemCore) and, with crc, its "md5" value (8 hex digits
//       of zlib's CRC-32 of the contiguous bytes). The statistics come from the format
//       library's fused pass (probe::format::computeTensorStats) over contiguous CPU data;
//       float values are rounded to the tensor's own floating dtype (msprobe writes the
//       dtype's result as a Python double); complex tensors are summarised by their magnitude;
//       a 0-d tensor has all four equal to its value. Both lists are empty when memory ran out.
//
//   probe::overflow_reasons(Tensor[] tensors) -> str[]
//       Task overflow_check: why each tensor counts as overflowed (probe::format::overflowReason
//       on its statistics: "nan", "max=inf", ...), "" when it does not (integer and bool
//       tensors never do). probe::overflow_ignored(str type) -> bool: whether an op of that
//       type is never where an overflow is born (format::defaultOverflowIgnoredTypes).
//       probe::overflow_stop_exit_code() -> int: the exit code of stop_after_overflow.
//
//   probe::api_config_check(str text, str file) -> str
//       The code-level config validator (probe::format::parseApiConfig) for Python:
//       {"ok": bool, "config": {...normalised...} | null,
//        "issues": [{"key", "problem", "accepted", "warning", "line", "column", "text"}]}
//
//   probe::api_config_check_file(str file) -> str
//       The same for a config file, read as every config is (format::readTextFile: a regular
//       file within the config size limit; a FIFO or a device is refused, never read), with
//       "text": the file's text when it is valid, or "unreadable": why it cannot be read.
//
//   probe::msprobe_tables() -> str
//       The format library's msprobe tables, for Python and its tests:
//       {"config_keys": [{"block", "key", "use": "honoured" | "no_effect" | "other_task", "note"}],
//        "layout": {"dump_keys", "forward_keys", "backward_keys", "tensor_keys", "api_prefixes",
//        ...}}
//
// Nothing here throws into PyTorch: a failure becomes an invalid row or an issue.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <nlohmann/json.hpp>
#include <torch/library.h>

#include "probe/format/api_config.h"
#include "probe/format/config_issue.h"
#include "probe/format/dtype.h"
#include "probe/format/json_input.h"
#include "probe/format/msprobe_layout.h"
#include "probe/format/overflow_rule.h"
#include "probe/format/tensor_stats.h"

namespace probe::torch_api {
namespace {

using probe::format::DType;

// One tensor's statistics while they are made: max, min, mean, norm, valid, crc32.
enum Column : int { kMax = 0, kMin, kMean, kNorm, kValid, kCrc, kColumns };

bool formatDtype(c10::ScalarType type, DType* out) {
    switch (type) {
        case c10::ScalarType::Float:
            *out = DType::Float;
            return true;
        case c10::ScalarType::Double:
            *out = DType::Double;
            return true;
        case c10::ScalarType::Half:
            *out = DType::Float16;
            return true;
        case c10::ScalarType::BFloat16:
            *out = DType::BF16;
            return true;
        case c10::ScalarType::Char:
            *out = DType::Int8;
            return true;
        case c10::ScalarType::Byte:
            *out = DType::UInt8;
            return true;
        case c10::ScalarType::Short:
            *out = DType::Int16;
            return true;
        case c10::ScalarType::Int:
            *out = DType::Int32;
            return true;
        case c10::ScalarType::Long:
            *out = DType::Int64;
            return true;
        case c10::ScalarType::Bool:
            *out = DType::Bool;
            return true;
        default:
            return false;
    }
}

// The value as the tensor's own floating dtype would hold it, widened back to double.
double roundToDtype(double value, c10::ScalarType type) {
    switch (type) {
        case c10::ScalarType::Float:
        case c10::ScalarType::ComplexFloat:
            return static_cast<double>(static_cast<float>(value));
        case c10::ScalarType::Half:
            return static_cast<double>(static_cast<float>(c10::Half(static_cast<float>(value))));
        case c10::ScalarType::BFloat16:
            return static_cast<double>(
                static_cast<float>(c10::BFloat16(static_cast<float>(value))));
        default:
            return value;
    }
}

void reportFailure(const char* what) {
    static int reported = 0;
    if (reported++ < 3)
        std::fprintf(stderr, "[probe] tensor statistics: %s (the model continues)\n", what);
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
    if (!input.defined() || input.is_sparse() || input.is_mkldnn() || input.is_quantized() ||
        input.is_meta() || !input.has_storage())
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
    if (type == c10::ScalarType::ComplexFloat || type == c10::ScalarType::ComplexDouble)
        values = host.abs().contiguous();
    DType dtype;
    if (!formatDtype(values.scalar_type(), &dtype)) return;
    const auto stats =
        probe::format::computeTensorStats(dtype, values.data_ptr(), static_cast<uint64_t>(numel));
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

// Appends `value` as Python's repr() writes a float (json.dumps uses it): the shortest digits
// that read back as the same double, in fixed notation when the decimal point falls within
// -4 < point <= 16 (with ".0" when integral), else as d.ddde+XX; NaN and infinities as JSON5.
void appendPythonFloat(std::string& out, double value) {
    if (std::isnan(value)) {
        out += "NaN";
        return;
    }
    if (std::isinf(value)) {
        out += value > 0 ? "Infinity" : "-Infinity";
        return;
    }
    // The shortest digits, -d.ddde+XX, read back without a string of their own (per float of
    // every item: the heap allocations of digits and exponent cost more than to_chars).
    char buffer[40];
    const auto result =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    const char* p = buffer;
    if (*p == '-') {
        out += '-';
        ++p;
    }
    const char* e =
        static_cast<const char*>(std::memchr(p, 'e', static_cast<size_t>(result.ptr - p)));
    char digits[24];
    int count = 0;
    for (const char* q = p; q < e; ++q)
        if (*q != '.') digits[count++] = *q;
    int exponent = 0;
    for (const char* q = e + 2; q < result.ptr; ++q) exponent = exponent * 10 + (*q - '0');
    if (e[1] == '-') exponent = -exponent;
    const int point = exponent + 1;  // the value is 0.digits x 10^point
    if (point > -4 && point <= 16) {
        if (point <= 0) {
            out += "0.";
            out.append(static_cast<size_t>(-point), '0');
            out.append(digits, static_cast<size_t>(count));
        } else if (point >= count) {
            out.append(digits, static_cast<size_t>(count));
            out.append(static_cast<size_t>(point - count), '0');
            out += ".0";
        } else {
            out.append(digits, static_cast<size_t>(point));
            out += '.';
            out.append(digits + point, static_cast<size_t>(count - point));
        }
        return;
    }
    out += digits[0];
    if (count > 1) {
        out += '.';
        out.append(digits + 1, static_cast<size_t>(count - 1));
    }
    const int shown = point - 1;
    const int magnitude = shown < 0 ? -shown : shown;
    out += shown < 0 ? "e-" : "e+";
    if (magnitude >= 100) out += static_cast<char>('0' + magnitude / 100);
    out += static_cast<char>('0' + magnitude / 10 % 10);
    out += static_cast<char>('0' + magnitude % 10);
}

// One tensor item of dump.json up to its "requires_grad" (Python adds data_name, md5 and the
// closing brace), compact as json.dumps(item, separators=(",", ": ")) writes it: statistics of
// floating tensors as the dtype holds them, exact ints for integer ones (all four for a 0-d
// one), true/false for bool, the magnitude's (no norm) for complex, null when none.
std::string itemCore(const at::Tensor& tensor, const std::string& dtypeName, const double* row,
                     const int64_t* ints) {
    std::string out = "{\"type\": \"torch.Tensor\",\"dtype\": \"";
    out += dtypeName;
    out += "\",\"shape\": [";
    const auto sizes = tensor.sizes();
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(sizes[i]);
    }
    out += "]";
    const c10::ScalarType type = tensor.scalar_type();
    const bool valid = row[kValid] != 0.0;
    const char* keys[] = {",\"Max\": ", ",\"Min\": ", ",\"Mean\": ", ",\"Norm\": "};
    for (int k = 0; k < 4; ++k) {
        out += keys[k];
        if (!valid) {
            out += "null";
        } else if (type == c10::ScalarType::Bool) {
            out += k < 2 ? (row[k] != 0.0 ? "true" : "false") : "null";
        } else if (at::isComplexType(type)) {
            if (k < 3)
                appendPythonFloat(out, row[k]);
            else
                out += "null";
        } else if (!at::isFloatingType(type)) {  // integers: exact
            if (k < 2)
                out += std::to_string(ints[k]);
            else if (tensor.dim() == 0)
                out += std::to_string(ints[0]);
            else
                out += "null";
        } else {
            appendPythonFloat(out, row[k]);
        }
    }
    out += tensor.requires_grad() ? ",\"requires_grad\": true" : ",\"requires_grad\": false";
    return out;
}

std::tuple<std::vector<std::string>, std::vector<std::string>> tensorItems(
    const std::vector<at::Tensor>& tensors, const std::vector<std::string>& dtypes, bool crc) {
    at::DisableRecordFunctionGuard noRecord;
    c10::AutoGradMode noGrad(false);
    std::vector<std::string> cores, md5s;
    try {
        cores.reserve(tensors.size());
        if (crc) md5s.reserve(tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i) {
            double row[kColumns] = {};
            int64_t ints[2] = {};
            try {
                summarise(tensors[i], crc, row, ints);
            } catch (const std::exception& e) {
                row[kValid] = 0.0;
                reportFailure(e.what());
            } catch (...) {
                row[kValid] = 0.0;
                reportFailure("unknown failure");
            }
            cores.push_back(
                itemCore(tensors[i], i < dtypes.size() ? dtypes[i] : std::string(), row, ints));
            if (crc) {
                char hex[16];
                std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(row[kCrc]));
                md5s.emplace_back(hex);
            }
        }
    } catch (const std::exception& e) {  // out of memory: Python keeps its items' null statistics
        reportFailure(e.what());
        return {};
    }
    return {std::move(cores), std::move(md5s)};
}

std::vector<std::string> overflowReasons(const std::vector<at::Tensor>& tensors) {
    at::DisableRecordFunctionGuard noRecord;
    c10::AutoGradMode noGrad(false);
    std::vector<std::string> reasons(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const at::Tensor& t = tensors[i];
        if (!t.defined() || !(at::isFloatingType(t.scalar_type()) || t.is_complex())) continue;
        double row[kColumns] = {};
        int64_t ints[2] = {};
        try {
            summarise(t, false, row, ints);
        } catch (const std::exception& e) {
            reportFailure(e.what());
            continue;
        }
        if (row[kValid] != 0.0)
            reasons[i] = probe::format::overflowReason(
                row[kMax], row[kMin],
                probe::format::statisticsShowNan(row[kMax], row[kMin], row[kMean]));
    }
    return reasons;
}

bool overflowIgnored(const std::string& type) {
    return probe::format::isOverflowIgnoredType(type, probe::format::defaultOverflowIgnoredTypes());
}

int64_t overflowStopExitCode() {
    return probe::format::kOverflowStopExitCode;
}

// parseApiConfig's answer as apiConfigCheck gives it.
nlohmann::ordered_json checkedApiConfig(const std::string& text, const std::string& file) {
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
        return out;
    } catch (const std::exception& e) {
        nlohmann::ordered_json failed;
        failed["ok"] = false;
        failed["config"] = nullptr;
        failed["issues"] =
            nlohmann::ordered_json::array({{{"key", ""},
                                            {"problem", std::string("internal error: ") + e.what()},
                                            {"accepted", ""},
                                            {"warning", false},
                                            {"line", 0},
                                            {"column", 0},
                                            {"text", file + ": internal error: " + e.what()}}});
        return failed;
    }
}

std::string dumped(const nlohmann::ordered_json& json) {
    return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string apiConfigCheck(const std::string& text, const std::string& file) {
    return dumped(checkedApiConfig(text, file));
}

std::string apiConfigCheckFile(const std::string& file) {
    std::string error;
    std::optional<std::string> text;
    try {
        text = probe::format::readTextFile(file, &error, probe::format::kConfigJsonLimits.maxBytes);
    } catch (const std::exception& e) {
        error = e.what();
    }
    if (!text) {
        nlohmann::ordered_json out;
        out["ok"] = false;
        out["config"] = nullptr;
        out["issues"] = nlohmann::ordered_json::array();
        out["unreadable"] = error;
        return dumped(out);
    }
    nlohmann::ordered_json out = checkedApiConfig(*text, file);
    if (out["ok"].get<bool>()) out["text"] = *text;  // valid JSON, so valid UTF-8
    return dumped(out);
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
        const char* use = k.use == MsprobeKeyUse::Honoured   ? "honoured"
                          : k.use == MsprobeKeyUse::NoEffect ? "no_effect"
                                                             : "other_task";
        out["config_keys"].push_back(
            {{"block", k.block}, {"key", k.key}, {"use", use}, {"note", k.note}});
    }
    out["layout"] = {
        {"files", nameList(std::array{layout::kDumpFile, layout::kStackFile, layout::kConstructFile,
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
    m.def("tensor_items(Tensor[] tensors, str[] dtypes, bool crc) -> (str[], str[])",
          &probe::torch_api::tensorItems);
    m.def("api_config_check(str text, str file) -> str", &probe::torch_api::apiConfigCheck);
    m.def("api_config_check_file(str file) -> str", &probe::torch_api::apiConfigCheckFile);
    m.def("overflow_reasons(Tensor[] tensors) -> str[]", &probe::torch_api::overflowReasons);
    m.def("overflow_ignored(str type) -> bool", &probe::torch_api::overflowIgnored);
    m.def("overflow_stop_exit_code() -> int", &probe::torch_api::overflowStopExitCode);
    m.def("msprobe_tables() -> str", &probe::torch_api::msprobeTables);
}
