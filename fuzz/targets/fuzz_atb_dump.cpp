// A statistic.csv file as the op-level dump reader follows it: read with a small budget (so lines
// cross read chunks), every row checked against the index it builds.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/dump_reader.h"
#include "fuzz_support.h"
#include "probe/format/file_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe;
    static const std::string root = [] {
        const std::string r = fuzz::scratchDirectory() + "/atb_dump_data";
        PROBE_FUZZ_CHECK(format::makeDirectories(r + "/data/0_1/0") == 0);
        fuzz::writeScratchFile(r + "/probe_status.json",
                               R"({"state": "complete", "processes": []})");
        return r;
    }();
    fuzz::writeScratchFile(root + "/data/0_1/0/statistic.csv", fuzz::textOf(data, size));
    std::string error;
    auto reader = analysis::openDumpReader(root, &error);
    PROBE_FUZZ_CHECK(reader);
    analysis::DumpIndex index(reader->layout(), reader->root());
    for (int polls = 0; polls < 100000; ++polls) {
        auto delta = reader->poll(4096);
        const bool more = delta.more;
        index.apply(std::move(delta));
        if (!more) break;
    }
    for (uint32_t row = 0; row < index.rowCount(); ++row) index.tensorPath(row, &error);
    return 0;
}
