// Reading a tensor that torch.save wrote (the msprobe layout's dump_tensor_data/*.pt) without
// Python: the file is a zip archive holding a small pickle (data.pkl) that names the storage,
// its dtype, the tensor's offset, shape and strides, and the storage's raw bytes (data/<key>).
// The pickle is read by a minimal interpreter that accepts exactly what torch.save of one
// tensor writes and rejects everything else; sizes are checked before anything is allocated.
// No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/tensor_view.h"
#include "probe/format/dtype.h"

namespace probe::analysis {

// What a tensor's data.pkl says.
struct PickledTensor {
    format::DType dtype = format::DType::Float;
    std::string storageKey;        // the storage's file in the archive: data/<key>
    uint64_t storageElements = 0;  // elements of the whole storage
    int64_t offset = 0;            // first element of the tensor in the storage
    std::vector<int64_t> shape, stride;
};

// Interprets the pickle of one tensor (torch._utils._rebuild_tensor_v2, optionally wrapped in
// _rebuild_parameter). nullopt with the reason in `error` for anything else: other classes,
// opcodes outside that subset, sizes out of bounds, malformed bytes.
std::optional<PickledTensor> parseTensorPickle(std::string_view pickle, std::string* error);

// A .pt file open for reading its tensor's data a piece at a time: a contiguous tensor's bytes
// are read from the archive as asked (a tensor of gigabytes costs what is read at once); a view
// (non-contiguous strides) is gathered whole as it opens. Checked as loadPtTensorFile checks.
class PtTensorReader {
public:
    static std::unique_ptr<PtTensorReader> open(const std::string& path, std::string* error);
    ~PtTensorReader();
    // The tensor without its bytes: header.dtypeCode, header.dims, header.dataLength, dtype,
    // count, path.
    const TensorData& whole() const;
    // Bytes [firstByte, firstByte + size) of the tensor's row-major data into `into`; false with
    // the reason in `error`. Fastest in order (a compressed entry is read on to the place).
    bool read(uint64_t firstByte, uint64_t size, uint8_t* into, std::string* error) const;

private:
    PtTensorReader();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Reads a .pt file into the same form as a .bin (header.dtypeCode, header.dims, contiguous
// row-major bytes, recomputed statistics). A tensor saved as a view (non-contiguous strides,
// an offset into a larger storage) is gathered into a contiguous copy.
std::optional<TensorData> loadPtTensorFile(const std::string& path, std::string* error);

// Whether `path` names a .pt file (by its extension).
bool isPtTensorPath(std::string_view path);

}  // namespace probe::analysis
