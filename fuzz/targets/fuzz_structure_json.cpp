// info/layer and info/model JSON: the guarded parser with the structure limits, then both
// readers; what is accepted is written back and read again to the same structure.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fuzz_support.h"
#include "probe/format/json_input.h"
#include "probe/format/structure_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe;
    auto parsed =
        format::parseJson(fuzz::textOf(data, size), "layer.json", format::kStructureJsonLimits);
    if (!parsed.ok()) {
        PROBE_FUZZ_CHECK(!parsed.error.problem.empty() &&
                         format::isValidUtf8(parsed.error.toString()));
        return 0;
    }
    std::string error;
    if (auto layer = format::StructureNode::fromJson(*parsed.value, &error)) {
        const std::string text = format::dumpJson(layer->toJson());
        auto again = format::parseJson(text, "again", format::kStructureJsonLimits);
        PROBE_FUZZ_CHECK(again.ok());
        auto reread = format::StructureNode::fromJson(*again.value, &error);
        PROBE_FUZZ_CHECK(reread && format::dumpJson(reread->toJson()) == text);
    }
    if (auto model = format::ModelStructure::fromJson(*parsed.value, &error))
        format::dumpJson(model->toJson(), 1);
    return 0;
}
