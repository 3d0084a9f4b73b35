// Reading a tensor that torch.save wrote (the msprobe layout's dump_tensor_data/*.pt) without
// Python: the file is a zip archive holding a small pickle (data.pkl) that names the storage,
// its dtype, the tensor's offset, shape and strides, and the storage's raw bytes (data/<key>).
// The pickle is read by a minimal interpreter that accepts exactly what torch.save of one
// tensor writes and rejects everything else; sizes are checked before anything is allocated.
// No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
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

// Reads a .pt file into the same form as a .bin (header.dtypeCode, header.dims, contiguous
// row-major bytes, recomputed statistics). A tensor saved as a view (non-contiguous strides,
// an offset into a larger storage) is gathered into a contiguous copy.
std::optional<TensorData> loadPtTensorFile(const std::string& path, std::string* error);

// Whether `path` names a .pt file (by its extension).
bool isPtTensorPath(std::string_view path);

}  // namespace probe::analysis
