// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/tensor_bin.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include "probe/format/dtype.h"

namespace probe::format {
namespace {

constexpr size_t kMaxHeaderBytes = 4096;

std::string joinDims(const std::vector<int64_t>& dims) {
    std::string out;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(dims[i]);
    }
    return out;
}

template <typename T>
bool parseNumber(std::string_view text, T& value) {
    if (text.empty()) return false;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

std::string makeBinHeader(const BinHeader& h) {
    const bool full = h.alias.empty();
    std::string out;
    out.reserve(160);
    out += "$Version=1.0\n";
    out += full ? "$Object.Count=1\n" : "$Object.Count=0\n";
    out += "$Object.Length=" + std::to_string(full ? h.dataLength : 0) + "\n";
    out += "format=" + std::to_string(h.formatCode) + "\n";
    out += "dtype=" + std::to_string(h.dtypeCode) + "\n";
    out += "dims=" + joinDims(h.dims) + "\n";
    if (full)
        out += "$Object.data=0," + std::to_string(h.dataLength) + "\n";
    else
        out += "data=" + h.alias + "\n";
    out += "$End=1\n";
    return out;
}

std::optional<BinHeader> parseBinHeader(std::string_view bytes, std::string* error) {
    auto fail = [&](std::string why) -> std::optional<BinHeader> {
        if (error) *error = std::move(why);
        return std::nullopt;
    };
    BinHeader h;
    bool sawVersion = false, sawFormat = false, sawDtype = false, sawDims = false, sawEnd = false;
    int64_t objectCount = -1;
    uint64_t objectLength = 0;
    size_t pos = 0;
    while (pos < bytes.size() && pos < kMaxHeaderBytes) {
        size_t nl = bytes.find('\n', pos);
        if (nl == std::string_view::npos) return fail("header is truncated (no line end)");
        std::string_view line = bytes.substr(pos, nl - pos);
        pos = nl + 1;
        size_t eq = line.find('=');
        if (eq == std::string_view::npos) return fail("header line without '=': " + std::string(line));
        std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
        if (key == "$Version") {
            sawVersion = true;
        } else if (key == "$Object.Count") {
            if (!parseNumber(value, objectCount)) return fail("bad $Object.Count");
        } else if (key == "$Object.Length") {
            if (!parseNumber(value, objectLength)) return fail("bad $Object.Length");
        } else if (key == "format") {
            if (!parseNumber(value, h.formatCode)) return fail("bad format code");
            sawFormat = true;
        } else if (key == "dtype") {
            if (!parseNumber(value, h.dtypeCode)) return fail("bad dtype code");
            sawDtype = true;
        } else if (key == "dims") {
            sawDims = true;
            h.dims.clear();
            size_t p = 0;
            while (p < value.size()) {
                size_t comma = value.find(',', p);
                if (comma == std::string_view::npos) comma = value.size();
                int64_t d = 0;
                if (!parseNumber(value.substr(p, comma - p), d) || d < 0) return fail("bad dims");
                h.dims.push_back(d);
                p = comma + 1;
            }
        } else if (key == "data") {
            h.alias = std::string(value);
        } else if (key == "$Object.data") {
            size_t comma = value.find(',');
            uint64_t len = 0;
            if (comma == std::string_view::npos || !parseNumber(value.substr(comma + 1), len))
                return fail("bad $Object.data");
            h.dataLength = len;
        } else if (key == "$End") {
            sawEnd = true;
            break;
        }
        // Other keys are tolerated: the format allows more user attributes.
    }
    if (!sawEnd) return fail("header has no $End line");
    if (!sawVersion || !sawFormat || !sawDtype || !sawDims)
        return fail("header lacks $Version, format, dtype or dims");
    if (objectCount == 0) {
        h.dataLength = 0;
    } else if (objectCount == 1) {
        if (objectLength != h.dataLength) return fail("$Object.Length disagrees with $Object.data");
    } else {
        return fail("unsupported $Object.Count");
    }
    h.headerLength = pos;
    return h;
}

std::optional<BinHeader> readBinHeader(const std::string& path, std::string* error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (error) *error = std::string("cannot open: ") + std::strerror(errno);
        return std::nullopt;
    }
    std::string buffer(kMaxHeaderBytes, '\0');
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    buffer.resize(static_cast<size_t>(in.gcount()));
    return parseBinHeader(buffer, error);
}

std::optional<BinFile> readBinFile(const std::string& path, std::string* error) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        if (error) *error = std::string("cannot open: ") + std::strerror(errno);
        return std::nullopt;
    }
    const auto size = static_cast<uint64_t>(in.tellg());
    in.seekg(0);
    std::string head(std::min<uint64_t>(size, kMaxHeaderBytes), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    auto header = parseBinHeader(head, error);
    if (!header) return std::nullopt;
    if (size < header->headerLength + header->dataLength) {
        if (error)
            *error = "file is truncated: header promises " + std::to_string(header->dataLength) +
                     " bytes, " + std::to_string(size - header->headerLength) + " present";
        return std::nullopt;
    }
    if (!header->headerOnly()) {
        auto dtype = dtypeFromCode(header->dtypeCode);
        auto count = elementCount(header->dims);
        if (dtype && count && *count * dtypeSize(*dtype) != header->dataLength) {
            if (error)
                *error = "data length " + std::to_string(header->dataLength) + " does not match dims " +
                         shapeString(header->dims) + " of " + dtypeName(*dtype);
            return std::nullopt;
        }
    }
    BinFile file;
    file.header = *header;
    file.data.resize(header->dataLength);
    in.seekg(static_cast<std::streamoff>(header->headerLength));
    in.read(reinterpret_cast<char*>(file.data.data()), static_cast<std::streamsize>(file.data.size()));
    if (static_cast<uint64_t>(in.gcount()) != header->dataLength) {
        if (error) *error = "short read";
        return std::nullopt;
    }
    return file;
}

}  // namespace probe::format
