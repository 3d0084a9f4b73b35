// The injected probe's op-level config text, as the runtime reads it from the file or a client.
// An accepted config written to its file text must read back as the same config.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fuzz_support.h"
#include "probe/format/json_input.h"
#include "probe/format/op_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe;
    auto result = format::parseOpConfig(fuzz::textOf(data, size), "config.json");
    const std::string reason = format::describeIssues(result.issues);
    PROBE_FUZZ_CHECK(format::isValidUtf8(reason));
    format::dumpJson(nlohmann::json{{"type", "config_rejected"}, {"reason", reason}});
    if (!result.ok()) {
        PROBE_FUZZ_CHECK(!result.issues.empty());
        return 0;
    }
    const std::string text = result.config->toFileText();
    auto again = format::parseOpConfig(text, "again");
    PROBE_FUZZ_CHECK(again.ok() && *again.config == *result.config);
    PROBE_FUZZ_CHECK(
        format::parseOpConfig(format::dumpJson(result.config->toJson()), "json").config ==
        result.config);
    result.config->selects({"2_1", "Layer/Op", 1});
    result.config->maySelectDescendants({"2", "Layer", 0});
    result.config->execRange.contains(3);
    return 0;
}
