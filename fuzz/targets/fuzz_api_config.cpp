// The code-level API's config text, as `probe config validate`, the app's editor and the
// Python API read it. An accepted config written back must be accepted again.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fuzz_support.h"
#include "probe/format/api_config.h"
#include "probe/format/json_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe;
    auto result = format::parseApiConfig(fuzz::textOf(data, size), "config.json");
    PROBE_FUZZ_CHECK(format::isValidUtf8(format::describeIssues(result.issues)));
    if (!result.ok()) return 0;
    const std::string text = format::dumpJson(result.config->toJson(), 4);
    // Step and rank ranges are written expanded: "0-99999" is 100000 numbers, more than a config
    // file may hold. Only what fits the config limit can be read back.
    if (text.size() > format::kConfigJsonLimits.maxBytes) return 0;
    auto again = format::parseApiConfig(text, "again");
    PROBE_FUZZ_CHECK(again.ok());
    PROBE_FUZZ_CHECK(format::dumpJson(again.config->toJson(), 4) == text);
    return 0;
}
