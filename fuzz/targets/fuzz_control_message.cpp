// One line of the control protocol, both ways: the probe judging a client's line, and the
// application's guarded parse of a probe's line.
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fuzz_support.h"
#include "probe/format/control_protocol.h"
#include "probe/format/json_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe;
    const std::string_view line = fuzz::textOf(data, size);
    auto request = format::parseControlRequest(line);
    if (request.kind == format::ControlRequest::Kind::Invalid) {
        PROBE_FUZZ_CHECK(!request.problem.empty() && format::isValidUtf8(request.problem));
        format::dumpJson(
            nlohmann::json{{"type", "message"}, {"level", "error"}, {"text", request.problem}});
    } else if (request.kind == format::ControlRequest::Kind::Ping) {
        format::dumpJson(nlohmann::json{{"type", "pong"}, {"id", request.id}});
    } else if (request.kind == format::ControlRequest::Kind::SetConfig && request.config) {
        PROBE_FUZZ_CHECK(request.config->is_object());
        format::dumpJson(*request.config);
    }
    auto fromProbe =
        format::parseJson(line, "the probe's message", format::kControlClientLineLimits);
    if (fromProbe.ok()) format::dumpJson(*fromProbe.value);
    return 0;
}
