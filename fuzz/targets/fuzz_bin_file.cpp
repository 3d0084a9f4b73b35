// A tensor .bin file's bytes: header parsing and checks, then decoding, statistics, slices and
// the histogram, as the app's tensor view does.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/tensor_view.h"
#include "fuzz_support.h"
#include "probe/format/tensor_bin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe;
    std::string error;
    auto file = format::parseBinFile(fuzz::textOf(data, size), &error);
    if (!file) {
        PROBE_FUZZ_CHECK(!error.empty());
        return 0;
    }
    // What was accepted is consistent: the data is exactly what dtype and dims say.
    const auto count = format::elementCount(file->header.dims);
    const auto dtype = format::dtypeFromCode(file->header.dtypeCode);
    PROBE_FUZZ_CHECK(count && dtype);
    if (!file->header.headerOnly() && file->header.dataLength > 0)
        PROBE_FUZZ_CHECK(*count * format::dtypeSize(*dtype) == file->data.size());
    const analysis::TensorData tensor = analysis::decodeTensor("fuzz.bin", std::move(*file));
    const auto summary = analysis::summarizeValues(tensor, 0, tensor.count);
    if (tensor.hasValues())
        PROBE_FUZZ_CHECK(summary.finite + summary.nan + summary.posInf + summary.negInf ==
                         tensor.count);
    analysis::computeHistogram(tensor, 64);
    const auto geometry = analysis::sliceGeometry(tensor.header.dims);
    const uint64_t start =
        analysis::sliceStart(geometry, std::vector<int64_t>(geometry.leadingDims.size(), 1 << 30));
    if (tensor.count > 0) PROBE_FUZZ_CHECK(start < tensor.count);
    analysis::summarizeValues(
        tensor, start, static_cast<uint64_t>(geometry.rows) * static_cast<uint64_t>(geometry.cols));
    tensor.at(tensor.count / 2);
    analysis::dtypeLabel(tensor);
    return 0;
}
