// Tensor element types and memory formats: codes and names as the dump formats spell them.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probe::format {

// The .bin dtype codes (FORMATS.md section 1). Values are the codes themselves.
enum class DType : int32_t {
    Float = 0,
    Float16 = 1,
    Int8 = 2,
    Int32 = 3,
    UInt8 = 4,
    Int16 = 6,
    UInt16 = 7,
    UInt32 = 8,
    Int64 = 9,
    UInt64 = 10,
    Double = 11,
    Bool = 12,
    Complex64 = 16,
    Complex128 = 17,
    BF16 = 27,
};

// Name used in statistic.csv ("float", "float16", "bf16", ...).
std::optional<DType> dtypeFromCode(int32_t code);
std::optional<DType> dtypeFromName(std::string_view name);
const char* dtypeName(DType dtype);
// The Dtype column of a code: dtypeName, or "undefined(<code>)" for an unknown one.
void appendDtypeName(std::string& out, int32_t code);
// Size of one element in bytes.
size_t dtypeSize(DType dtype);
bool dtypeIsFloatingPoint(DType dtype);
bool dtypeIsComplex(DType dtype);

// The .bin format codes; names as in statistic.csv ("nd", "nchw", ...).
// Unknown codes are kept as numbers: formatName() returns "format_<code>" for them.
std::optional<int32_t> formatCodeFromName(std::string_view name);
std::string formatName(int32_t code);
// formatName(code) appended to `out` (no string of its own: rows are formatted per tensor).
void appendFormatName(std::string& out, int32_t code);
bool formatCodeKnown(int32_t code);

// Number of elements of a shape (1 for a scalar); nullopt on negative dims or overflow.
std::optional<uint64_t> elementCount(const std::vector<int64_t>& dims);
std::optional<uint64_t> elementCount(const int64_t* dims, size_t ndims);

// "36x128"; a scalar is "".
std::string shapeString(const std::vector<int64_t>& dims);
// shapeString of `ndims` dims appended to `out`.
void appendShape(std::string& out, const int64_t* dims, size_t ndims);
std::optional<std::vector<int64_t>> parseShapeString(std::string_view text);

}  // namespace probe::format
