// The tensor .bin file: ASCII "key=value" header lines, then the raw bytes (FORMATS.md §1).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
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

// Reads a whole .bin file (a regular file, opened without blocking) and checks that the data
// length matches dtype and dims and that the file holds it.
std::optional<BinFile> readBinFile(const std::string& path, std::string* error);
// The same checks on a file's bytes held in memory.
std::optional<BinFile> parseBinFile(std::string_view bytes, std::string* error);
// Reads the header alone (a few hundred bytes) without the data.
std::optional<BinHeader> readBinHeader(const std::string& path, std::string* error);
// Reads a .bin file's data a piece at a time, never whole: `piece(bytes, size)` is called for
// each in order, at most `pieceBytes` (rounded down to whole elements of a known dtype), from a
// buffer aligned for any element type; it returns false to stop. A header-only file has no
// piece. Checks what readBinFile does. Returns the header, or nullopt with the reason.
std::optional<BinHeader> readBinFileInPieces(
    const std::string& path, size_t pieceBytes,
    const std::function<bool(const uint8_t* bytes, size_t size)>& piece, std::string* error);

}  // namespace probe::format
