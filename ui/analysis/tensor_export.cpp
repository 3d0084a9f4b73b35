// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/tensor_export.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "probe/format/file_util.h"

namespace probe::analysis {
namespace {

bool isBf16(const TensorData& t) {
    return t.dtype && *t.dtype == format::DType::BF16;
}

std::string shapeTuple(const std::vector<int64_t>& dims) {
    std::string out = "(";
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(dims[i]);
    }
    if (dims.size() == 1) out += ",";
    return out + ")";
}

}  // namespace

void appendValueText(std::string& out, double value, bool float32) {
    if (std::isnan(value)) {
        out += "nan";
        return;
    }
    if (std::isinf(value)) {
        out += value > 0 ? "inf" : "-inf";
        return;
    }
    // Positional as far as %g would be (100000, not the shorter 1e+05), else scientific; the
    // fewest digits that read back to the value either way.
    const double magnitude = std::fabs(value);
    const auto form = value != 0 && (magnitude < 1e-4 || magnitude >= 1e16)
                          ? std::chars_format::scientific
                          : std::chars_format::fixed;
    char buffer[400];  // a double's longest fixed text is under 330 characters
    const auto result =
        float32 ? std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(value), form)
                : std::to_chars(buffer, buffer + sizeof buffer, value, form);
    out.append(buffer, result.ptr);
}

void appendElementText(std::string& out, const TensorData& tensor, uint64_t i) {
    using format::DType;
    char buffer[32];
    // 64-bit integers from their bytes: a double holds them exactly only up to 2^53.
    if (tensor.dtype == DType::Int64 || tensor.dtype == DType::UInt64) {
        if ((i + 1) * 8 > tensor.bytes.size()) return;
        uint64_t raw = 0;
        std::memcpy(&raw, tensor.bytes.data() + i * 8, 8);
        const auto result =
            tensor.dtype == DType::Int64
                ? std::to_chars(buffer, buffer + sizeof buffer, static_cast<int64_t>(raw))
                : std::to_chars(buffer, buffer + sizeof buffer, raw);
        out.append(buffer, result.ptr);
        return;
    }
    const double value = tensor.at(i);
    if (tensor.dtype && !format::dtypeIsFloatingPoint(*tensor.dtype) &&
        !format::dtypeIsComplex(*tensor.dtype)) {  // exact in a double: 32 bits at most
        out.append(buffer,
                   std::to_chars(buffer, buffer + sizeof buffer, static_cast<int64_t>(value)).ptr);
        return;
    }
    appendValueText(out, value, valuesFitFloat32(tensor));
}

bool valuesFitFloat32(const TensorData& tensor) {
    using format::DType;
    if (!tensor.dtype) return false;
    const DType d = *tensor.dtype;
    return d == DType::Float || d == DType::Float16 || d == DType::BF16 || d == DType::Complex64;
}

std::string npyDescr(const TensorData& tensor) {
    using format::DType;
    if (!tensor.dtype) return {};
    switch (*tensor.dtype) {
        case DType::Float:
            return "<f4";
        case DType::Float16:
            return "<f2";
        case DType::BF16:
            return "<f4";
        case DType::Double:
            return "<f8";
        case DType::Int8:
            return "|i1";
        case DType::UInt8:
            return "|u1";
        case DType::Int16:
            return "<i2";
        case DType::UInt16:
            return "<u2";
        case DType::Int32:
            return "<i4";
        case DType::UInt32:
            return "<u4";
        case DType::Int64:
            return "<i8";
        case DType::UInt64:
            return "<u8";
        case DType::Bool:
            return "|b1";
        case DType::Complex64:
            return "<c8";
        case DType::Complex128:
            return "<c16";
    }
    return {};
}

bool writeNpy(const TensorData& tensor, const std::string& path, std::string* error) {
    if (!tensor.hasValues()) {
        if (error) *error = "the tensor has no data to export";
        return false;
    }
    std::string dict = "{'descr': '" + npyDescr(tensor) +
                       "', 'fortran_order': False, 'shape': " + shapeTuple(tensor.header.dims) +
                       ", }";
    // Magic (6) + version (2) + header length (2) + dict + padding + '\n', a multiple of 64.
    const size_t unpadded = 10 + dict.size() + 1;
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    std::string head("\x93NUMPY\x01\x00", 8);
    head += static_cast<char>(dict.size() & 0xff);
    head += static_cast<char>((dict.size() >> 8) & 0xff);
    head += dict;

    std::vector<uint8_t> widened;
    const void* data = tensor.bytes.data();
    uint64_t size = tensor.bytes.size();
    if (isBf16(tensor)) {
        widened.resize(tensor.count * sizeof(float));
        for (uint64_t i = 0; i < tensor.count; ++i) {
            uint16_t bits;
            std::memcpy(&bits, tensor.bytes.data() + 2 * i, 2);
            const float f = format::bf16ToFloat(bits);
            std::memcpy(widened.data() + 4 * i, &f, 4);
        }
        data = widened.data();
        size = widened.size();
    }
    if (const int rc = format::writeUserFile(path, head, data, size); rc != 0) {
        if (error) *error = "cannot write " + path + ": " + std::strerror(rc);
        return false;
    }
    return true;
}

bool writeCsv(const TensorData& tensor, const std::string& path, std::string* error) {
    if (!tensor.hasValues()) {
        if (error) *error = "the tensor has no data to export";
        return false;
    }
    const uint64_t cols =
        tensor.header.dims.empty()
            ? 1
            : static_cast<uint64_t>(std::max<int64_t>(tensor.header.dims.back(), 1));
    const std::string temp = format::userFileTemporary(path);
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) {
            if (error) *error = "cannot write " + path + ": " + std::strerror(errno);
            return false;
        }
        std::string line;
        for (uint64_t i = 0; i < tensor.count; i += cols) {
            line.clear();
            for (uint64_t c = 0; c < cols && i + c < tensor.count; ++c) {
                if (c) line += ',';
                appendElementText(line, tensor, i + c);
            }
            line += '\n';
            out << line;
        }
        out.flush();
        if (!out) {
            if (error) *error = "cannot write " + path + " (disk full?)";
            std::remove(temp.c_str());
            return false;
        }
    }
    if (const int rc = format::moveIntoUserFile(temp, path); rc != 0) {
        if (error) *error = "cannot write " + path + ": " + std::strerror(rc);
        return false;
    }
    return true;
}

}  // namespace probe::analysis
