// A dump.json as the framework-level dump reader reads it (with NaN/Infinity tokens quoted as
// Python writes them), into the index.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/dump_reader.h"
#include "analysis/msprobe_dump.h"
#include "fuzz_support.h"
#include "probe/format/file_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe;
    static const std::string root = [] {
        const std::string r = fuzz::scratchDirectory() + "/dump_path";
        PROBE_FUZZ_CHECK(format::makeDirectories(r + "/step0/rank0") == 0);
        fuzz::writeScratchFile(r + "/step0/rank0/construct.json",
                               R"({"Functional.linear.0.forward": "Module.fc.Linear.forward.0"})");
        return r;
    }();
    fuzz::writeScratchFile(root + "/step0/rank0/dump.json", fuzz::textOf(data, size));
    std::string error;
    auto reader = analysis::openDumpReader(root, &error);
    PROBE_FUZZ_CHECK(reader);
    analysis::DumpIndex index(reader->layout(), reader->root());
    index.apply(reader->poll(analysis::kDefaultPollBudget));
    for (uint32_t op = 0; op < index.opCount(); ++op)
        analysis::parseMsprobeEntryName(index.op(op).id);
    return 0;
}
