// The tensor .bin file: ASCII "key=value" header lines, then the raw bytes (FORMATS.md §1).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probe::format {

// The header ends within this many bytes; the data after it may be at most kMaxTensorDataBytes
// (4 GiB): a reader never allocates more for one tensor, whatever a file claims.
constexpr size_t kMaxHeaderBytes = 4096;
constexpr uint64_t kMaxTensorDataBytes = 4ull << 30;

struct BinHeader {
    int32_t formatCode = 2;  // nd
    int32_t dtypeCode = 0;   // float
    std::vector<int64_t> dims;
    uint64_t dataLength = 0;  // bytes following the header; 0 for a header-only file
    // For a header-only (de-duplicated) file: the "data=" value naming the first copy, e.g.
    // "2_1_outtensor0.bin" (relative to the round directory); empty for a full file.
    std::string alias;
    size_t headerLength = 0;  // bytes of header text, set by parseBinHeader

    bool headerOnly() const { return !alias.empty(); }
};

// The header text of a full file holding `dataLength` bytes, or of a header-only file when
// `alias` is set.
std::string makeBinHeader(const BinHeader& header);

// Parses the header at the start of `bytes` (which may hold more, or be just the header) and
// checks it: a known dtype code, dims whose element count fits, a data length that matches them
// and the limit. On failure returns nullopt with the reason and its place ("header line 5:
// dtype=777 is not a dtype code this version knows") in `error`.
std::optional<BinHeader> parseBinHeader(std::string_view bytes, std::string* error);

struct BinFile {
    BinHeader header;
    std::vector<uint8_t> data;  // empty for header-only files
};

// Makes `bytes` `size` bytes long for a tensor's data, or says "not enough memory for N bytes of
// data" in `error` (an allocation a file's header asked for must not throw into the reader).
bool allocateTensorData(std::vector<uint8_t>& bytes, uint64_t size, std::string* error);

// Reads a whole .bin file (a regular file, opened without blocking) and checks that the data
// length matches dtype and dims and that the file holds it.
std::optional<BinFile> readBinFile(const std::string& path, std::string* error);
// The same checks on a file's bytes held in memory.
std::optional<BinFile> parseBinFile(std::string_view bytes, std::string* error);
// Reads the header alone (a few hundred bytes) without the data.
std::optional<BinHeader> readBinHeader(const std::string& path, std::string* error);
// A .bin file open for reading its data a piece at a time, never whole (a tensor of gigabytes
// costs what the caller reads at once): opened as readBinFile opens it (a regular file, without
// blocking), its header read and checked as readBinFile checks it. Closed when it goes.
class BinReader {
public:
    BinReader(const std::string& path, std::string* error);
    ~BinReader();
    BinReader(const BinReader&) = delete;
    BinReader& operator=(const BinReader&) = delete;
    // nullopt when the file could not be opened or checked (said in the constructor's `error`).
    const std::optional<BinHeader>& header() const { return header_; }
    // Reads `size` bytes of the data from `offset` (in the data) into `into`; false with the
    // reason in `error`.
    bool read(uint64_t offset, uint8_t* into, uint64_t size, std::string* error) const;

private:
    int fd_ = -1;
    std::optional<BinHeader> header_;
};

}  // namespace probe::format
