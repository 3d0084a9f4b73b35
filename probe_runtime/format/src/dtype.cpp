// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/dtype.h"

#include <charconv>
#include <limits>

namespace probe::format {
namespace {

struct DTypeInfo {
    DType dtype;
    const char* name;
    size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::Float, "float", 4},         {DType::Float16, "float16", 2},
    {DType::Int8, "int8", 1},           {DType::Int32, "int32", 4},
    {DType::UInt8, "uint8", 1},         {DType::Int16, "int16", 2},
    {DType::UInt16, "uint16", 2},       {DType::UInt32, "uint32", 4},
    {DType::Int64, "int64", 8},         {DType::UInt64, "uint64", 8},
    {DType::Double, "double", 8},       {DType::Bool, "bool", 1},
    {DType::Complex64, "complex64", 8}, {DType::Complex128, "complex128", 16},
    {DType::BF16, "bf16", 2},
};

struct FormatInfo {
    int32_t code;
    const char* name;
};

constexpr FormatInfo kFormats[] = {
    {0, "nchw"},        {1, "nhwc"},   {2, "nd"},  {3, "nc1hwc0"}, {4, "fractal_z"},
    {29, "fractal_nz"}, {30, "ncdhw"}, {35, "nc"}, {47, "ncl"},
};

const DTypeInfo* findDType(DType dtype) {
    for (const auto& info : kDTypes)
        if (info.dtype == dtype) return &info;
    return nullptr;
}

}  // namespace

std::optional<DType> dtypeFromCode(int32_t code) {
    for (const auto& info : kDTypes)
        if (static_cast<int32_t>(info.dtype) == code) return info.dtype;
    return std::nullopt;
}

std::optional<DType> dtypeFromName(std::string_view name) {
    for (const auto& info : kDTypes)
        if (name == info.name) return info.dtype;
    return std::nullopt;
}

const char* dtypeName(DType dtype) {
    const DTypeInfo* info = findDType(dtype);
    return info ? info->name : "unknown";
}

void appendDtypeName(std::string& out, int32_t code) {
    if (const auto dtype = dtypeFromCode(code)) {
        out += dtypeName(*dtype);
        return;
    }
    out += "undefined(";
    char digits[16];
    out.append(digits, std::to_chars(digits, digits + sizeof digits, code).ptr);
    out += ')';
}

size_t dtypeSize(DType dtype) {
    const DTypeInfo* info = findDType(dtype);
    return info ? info->size : 0;
}

bool dtypeIsFloatingPoint(DType dtype) {
    return dtype == DType::Float || dtype == DType::Float16 || dtype == DType::BF16 ||
           dtype == DType::Double;
}

bool dtypeIsComplex(DType dtype) {
    return dtype == DType::Complex64 || dtype == DType::Complex128;
}

std::optional<int32_t> formatCodeFromName(std::string_view name) {
    for (const auto& info : kFormats)
        if (name == info.name) return info.code;
    constexpr std::string_view prefix = "format_";
    if (name.substr(0, prefix.size()) == prefix) {
        int32_t code = 0;
        auto rest = name.substr(prefix.size());
        auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), code);
        if (ec == std::errc() && ptr == rest.data() + rest.size()) return code;
    }
    return std::nullopt;
}

std::string formatName(int32_t code) {
    std::string out;
    appendFormatName(out, code);
    return out;
}

void appendFormatName(std::string& out, int32_t code) {
    for (const auto& info : kFormats)
        if (info.code == code) {
            out += info.name;
            return;
        }
    out += "format_";
    char digits[16];
    out.append(digits, std::to_chars(digits, digits + sizeof digits, code).ptr);
}

bool formatCodeKnown(int32_t code) {
    for (const auto& info : kFormats)
        if (info.code == code) return true;
    return false;
}

std::optional<uint64_t> elementCount(const std::vector<int64_t>& dims) {
    return elementCount(dims.data(), dims.size());
}

std::optional<uint64_t> elementCount(const int64_t* dims, size_t ndims) {
    uint64_t count = 1;
    for (size_t i = 0; i < ndims; ++i) {
        const int64_t d = dims[i];
        if (d < 0) return std::nullopt;
        if (d != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
            return std::nullopt;
        count *= static_cast<uint64_t>(d);
    }
    return count;
}

std::string shapeString(const std::vector<int64_t>& dims) {
    std::string out;
    appendShape(out, dims.data(), dims.size());
    return out;
}

void appendShape(std::string& out, const int64_t* dims, size_t ndims) {
    // Made in a buffer and appended at once (a statistic row's shape, per tensor reported): an
    // append per dimension cost more than printing it.
    char text[16 * 21];  // up to 16 dimensions of 20 characters and their separators
    char* end = text;
    for (size_t i = 0; i < ndims; ++i) {
        if (end + 21 > text + sizeof text) {
            out.append(text, end);
            end = text;
        }
        if (i) *end++ = 'x';
        end = std::to_chars(end, text + sizeof text, dims[i]).ptr;
    }
    out.append(text, end);
}

std::optional<std::vector<int64_t>> parseShapeString(std::string_view text) {
    std::vector<int64_t> dims;
    if (text.empty()) return dims;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('x', pos);
        if (end == std::string_view::npos) end = text.size();
        int64_t value = 0;
        auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + end, value);
        if (ec != std::errc() || ptr != text.data() + end || value < 0) return std::nullopt;
        dims.push_back(value);
        pos = end + 1;
    }
    return dims;
}

}  // namespace probe::format
