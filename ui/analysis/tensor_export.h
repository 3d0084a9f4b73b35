// Exporting a dumped tensor for other tools: NumPy .npy and plain .csv. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

#include "analysis/tensor_view.h"

namespace probe::analysis {

// The tensor with its dtype and shape (numpy has no bfloat16: bf16 is written as float32).
// Written atomically. False with a message when the tensor has no data or the file cannot be
// written.
bool writeNpy(const TensorData& tensor, const std::string& path, std::string* error);

// The numpy header dict's dtype ("<f4", "|b1", ...) the tensor is written with.
std::string npyDescr(const TensorData& tensor);

// The values as a table: one line per row of the last dim (leading dims flattened into lines,
// a scalar is one value), comma-separated, shortest round-trip decimal, nan/inf/-inf spelled
// so. Written atomically.
bool writeCsv(const TensorData& tensor, const std::string& path, std::string* error);

}  // namespace probe::analysis
