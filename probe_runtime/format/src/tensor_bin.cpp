// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/tensor_bin.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <new>

#include "probe/format/dtype.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::format {
namespace {

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
    int lineNumber = 0;
    auto fail = [&](std::string why) -> std::optional<BinHeader> {
        if (error)
            *error =
                lineNumber > 0 ? "header line " + std::to_string(lineNumber) + ": " + why : why;
        return std::nullopt;
    };
    BinHeader h;
    bool sawVersion = false, sawFormat = false, sawDtype = false, sawDims = false, sawEnd = false;
    int64_t objectCount = -1;
    uint64_t objectLength = 0;
    int dimsLine = 0, lengthLine = 0;
    size_t pos = 0;
    while (pos < bytes.size() && pos < kMaxHeaderBytes) {
        size_t nl = bytes.find('\n', pos);
        ++lineNumber;
        // The file ending inside the header is a file cut short, not an overlong line.
        if (nl == std::string_view::npos && bytes.size() < kMaxHeaderBytes)
            return fail("the file ends inside the header, after " + std::to_string(bytes.size()) +
                        " bytes (cut short)");
        if (nl == std::string_view::npos || nl >= kMaxHeaderBytes)
            return fail("the header is truncated (no line end within " +
                        std::to_string(kMaxHeaderBytes) + " bytes)");
        std::string_view line = bytes.substr(pos, nl - pos);
        pos = nl + 1;
        size_t eq = line.find('=');
        if (eq == std::string_view::npos)
            return fail("no '=' in \"" + printableText(line, 60) + "\"");
        std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
        const std::string shown = printableText(line, 80);
        if (key == "$Version") {
            sawVersion = true;
        } else if (key == "$Object.Count") {
            if (!parseNumber(value, objectCount)) return fail("bad " + shown);
        } else if (key == "$Object.Length") {
            if (!parseNumber(value, objectLength)) return fail("bad " + shown);
            lengthLine = lineNumber;
        } else if (key == "format") {
            if (!parseNumber(value, h.formatCode)) return fail("bad format code in " + shown);
            sawFormat = true;
        } else if (key == "dtype") {
            if (!parseNumber(value, h.dtypeCode)) return fail("bad dtype code in " + shown);
            if (!dtypeFromCode(h.dtypeCode))
                return fail(shown + " is not a dtype code this version knows");
            sawDtype = true;
        } else if (key == "dims") {
            sawDims = true;
            dimsLine = lineNumber;
            h.dims.clear();
            size_t p = 0;
            while (p < value.size()) {
                size_t comma = value.find(',', p);
                if (comma == std::string_view::npos) comma = value.size();
                int64_t d = 0;
                if (!parseNumber(value.substr(p, comma - p), d) || d < 0)
                    return fail("bad dims in " + shown);
                h.dims.push_back(d);
                p = comma + 1;
            }
        } else if (key == "data") {
            h.alias = std::string(value);
        } else if (key == "$Object.data") {
            // "<offset>,<length>": the data follows the header, so the offset is 0.
            size_t comma = value.find(',');
            uint64_t offset = 0, len = 0;
            if (comma == std::string_view::npos || !parseNumber(value.substr(0, comma), offset) ||
                !parseNumber(value.substr(comma + 1), len))
                return fail("bad " + shown);
            if (offset != 0) return fail(shown + ": a data offset other than 0 is not supported");
            h.dataLength = len;
        } else if (key == "$End") {
            sawEnd = true;
            break;
        }
        // Other keys are tolerated: the format allows more user attributes.
    }
    if (!sawEnd) {
        lineNumber = 0;
        return fail("the header has no $End line");
    }
    if (!sawVersion || !sawFormat || !sawDtype || !sawDims) {
        lineNumber = 0;
        return fail("the header lacks $Version, format, dtype or dims");
    }
    const auto count = elementCount(h.dims);
    const size_t elementSize = dtypeSize(*dtypeFromCode(h.dtypeCode));
    if (!count || *count > std::numeric_limits<uint64_t>::max() / elementSize) {
        lineNumber = dimsLine;
        return fail("dims " + shapeString(h.dims) + " hold more elements than can be addressed");
    }
    if (objectCount == 0) {
        h.dataLength = 0;
    } else if (objectCount == 1) {
        lineNumber = lengthLine;
        if (objectLength != h.dataLength) return fail("$Object.Length disagrees with $Object.data");
        if (h.dataLength != *count * elementSize)
            return fail("data length " + std::to_string(h.dataLength) + " does not match dims " +
                        shapeString(h.dims) + " of " + dtypeName(*dtypeFromCode(h.dtypeCode)) +
                        " (" + std::to_string(*count * elementSize) + " bytes)");
        if (h.dataLength > kMaxTensorDataBytes) {
            lineNumber = lengthLine;
            return fail(std::to_string(h.dataLength) + " bytes of data, more than the limit of " +
                        std::to_string(kMaxTensorDataBytes) + " for a tensor file");
        }
    } else {
        lineNumber = 0;
        return fail("unsupported $Object.Count (only 0 and 1 are)");
    }
    h.headerLength = pos;
    return h;
}

namespace {

// Whether a file of `size` bytes holds the data its header promises (the header was read from
// it, so headerLength <= size).
bool holdsData(const BinHeader& header, uint64_t size, std::string* error) {
    if (header.dataLength <= size - header.headerLength) return true;
    if (error)
        *error = "file is truncated: header promises " + std::to_string(header.dataLength) +
                 " bytes, " + std::to_string(size - header.headerLength) + " present";
    return false;
}

// The file's header (and its size), read from the open descriptor.
std::optional<BinHeader> readHeaderOf(int fd, uint64_t size, std::string* error) {
    std::string head(static_cast<size_t>(std::min<uint64_t>(size, kMaxHeaderBytes)), '\0');
    size_t used = 0;
    while (used < head.size()) {
        const ssize_t n =
            ::pread(fd, head.data() + used, head.size() - used, static_cast<off_t>(used));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            if (error) *error = std::string("cannot read: ") + std::strerror(errno);
            return std::nullopt;
        }
        if (n == 0) break;
        used += static_cast<size_t>(n);
    }
    head.resize(used);
    return parseBinHeader(head, error);
}

}  // namespace

std::optional<BinFile> parseBinFile(std::string_view bytes, std::string* error) {
    auto header = parseBinHeader(bytes, error);
    if (!header || !holdsData(*header, bytes.size(), error)) return std::nullopt;
    BinFile file;
    file.header = *header;
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data()) + header->headerLength;
    file.data.assign(data, data + header->dataLength);
    return file;
}

std::optional<BinHeader> readBinHeader(const std::string& path, std::string* error) {
    uint64_t size = 0;
    const int fd = openRegularFile(path, kMaxHeaderBytes + kMaxTensorDataBytes, &size, error);
    if (fd < 0) return std::nullopt;
    auto header = readHeaderOf(fd, size, error);
    ::close(fd);
    return header;
}

BinReader::BinReader(const std::string& path, std::string* error) {
    uint64_t size = 0;
    fd_ = openRegularFile(path, kMaxHeaderBytes + kMaxTensorDataBytes, &size, error);
    if (fd_ < 0) return;
    header_ = readHeaderOf(fd_, size, error);
    if (header_ && !holdsData(*header_, size, error)) header_.reset();
}

BinReader::~BinReader() {
    if (fd_ >= 0) ::close(fd_);
}

bool BinReader::read(uint64_t offset, uint8_t* into, uint64_t size, std::string* error) const {
    if (!header_ || offset > header_->dataLength || size > header_->dataLength - offset) {
        if (error) *error = "read past the end of the data";
        return false;
    }
    uint64_t used = 0;
    while (used < size) {
        const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size - used, 1u << 30));
        const ssize_t n = ::pread(fd_, into + used, chunk,
                                  static_cast<off_t>(header_->headerLength + offset + used));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (error)
                *error = n < 0 ? std::string("cannot read: ") + std::strerror(errno) : "short read";
            return false;
        }
        used += static_cast<uint64_t>(n);
    }
    return true;
}

bool allocateTensorData(std::vector<uint8_t>& bytes, uint64_t size, std::string* error) {
    try {
        bytes.resize(static_cast<size_t>(size));
        return true;
    } catch (const std::bad_alloc&) {
        if (error) *error = "not enough memory for " + std::to_string(size) + " bytes of data";
        return false;
    }
}

std::optional<BinFile> readBinFile(const std::string& path, std::string* error) {
    const BinReader bin(path, error);
    if (!bin.header()) return std::nullopt;
    BinFile file;
    file.header = *bin.header();
    if (!allocateTensorData(file.data, file.header.dataLength, error)) return std::nullopt;
    if (!bin.read(0, file.data.data(), file.header.dataLength, error)) return std::nullopt;
    return file;
}

}  // namespace probe::format
