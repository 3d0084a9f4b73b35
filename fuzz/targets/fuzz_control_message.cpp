// One line of the control protocol, both ways: the probe judging a client's line, and the
// application judging a probe's line (format::control, both through the guarded JSON parse).
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fuzz_support.h"
#include "probe/format/control_messages.h"
#include "probe/format/json_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace probe::format;
    const std::string_view line = probe::fuzz::textOf(data, size);
    const auto fromClient = control::parseClientMessage(line);
    PROBE_FUZZ_CHECK(fromClient.problem.empty() || isValidUtf8(fromClient.problem));
    PROBE_FUZZ_CHECK(!(fromClient.message && !fromClient.problem.empty()));
    if (!fromClient.problem.empty())
        control::toLine(control::Notice{MessageLevel::Error, fromClient.problem});
    if (fromClient.message) {
        // What the probe answers with the message's parts must be writable, and read back.
        PROBE_FUZZ_CHECK(control::parseClientMessage(control::toLine(*fromClient.message)).message);
        if (auto* ping = std::get_if<control::Ping>(&*fromClient.message))
            control::toLine(control::Pong{ping->id});
    }
    const auto fromProbe = control::parseProbeMessage(line);
    PROBE_FUZZ_CHECK(fromProbe.problem.empty() || isValidUtf8(fromProbe.problem));
    if (fromProbe.message)
        PROBE_FUZZ_CHECK(control::parseProbeMessage(control::toLine(*fromProbe.message)).message);
    return 0;
}
