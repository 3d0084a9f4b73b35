// Exporting a dumped tensor for other tools: NumPy .npy and plain .csv. No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

#include "analysis/tensor_view.h"

namespace probe::analysis {

// A real value as text: the fewest digits that read back to the same value, as a float when
// `float32` (valuesFitFloat32) else as a double, positional where %g would be (100000) and
// scientific beyond (1e-05); nan, inf and -inf spelled so. Exact where a fixed number of digits
// was not: two floats apart by one ulp read differently.
void appendValueText(std::string& out, double value, bool float32);
// Element `i` of the tensor as text: an integer's digits (a 64-bit one from its bytes), a real
// one by appendValueText in the tensor's precision (complex: its real part).
void appendElementText(std::string& out, const TensorData& tensor, uint64_t i);
// Whether the tensor's values are float32 or narrower (float16, bfloat16, complex64's parts).
bool valuesFitFloat32(const TensorData& tensor);

// The tensor with its dtype and shape (numpy has no bfloat16: bf16 is written as float32).
// Written as format::writeUserFile writes. False with a message when the tensor has no data or
// the file cannot be written.
bool writeNpy(const TensorData& tensor, const std::string& path, std::string* error);

// The numpy header dict's dtype ("<f4", "|b1", ...) the tensor is written with.
std::string npyDescr(const TensorData& tensor);

// The values as a table: one line per row of the last dim (leading dims flattened into lines,
// a scalar is one value), comma-separated, shortest round-trip decimal, nan/inf/-inf spelled
// so. Written as format::writeUserFile writes.
bool writeCsv(const TensorData& tensor, const std::string& path, std::string* error);

}  // namespace probe::analysis
