// statistic.csv rows: each line parsed; an accepted row written back must parse to the same row
// (values compared as written, six decimals).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cmath>

#include "fuzz_support.h"
#include "probe/format/dtype.h"
#include "probe/format/statistic_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe;
    const std::string_view text = fuzz::textOf(data, size);
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find('\n', start), text.size());
        const std::string_view line = text.substr(start, end - start);
        start = end + 1;
        std::string error;
        auto row = format::parseStatRow(line, &error);
        if (!row) {
            PROBE_FUZZ_CHECK(!error.empty());
            continue;
        }
        const std::string written = format::formatStatRow(*row);
        auto again = format::parseStatRow(written, &error);
        PROBE_FUZZ_CHECK(again);
        PROBE_FUZZ_CHECK(again->opName == row->opName && again->opId == row->opId &&
                         again->round == row->round && again->tensorPath == row->tensorPath &&
                         again->shape == row->shape);
        PROBE_FUZZ_CHECK(format::formatStatRow(*again) == written);
        format::parseShapeString(row->shape);
    }
    return 0;
}
