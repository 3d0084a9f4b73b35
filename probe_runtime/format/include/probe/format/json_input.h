// The one guarded entry point for JSON that comes from outside: config files, control-socket
// lines, dump files. Nothing here throws, blocks or allocates beyond the limits: the text is
// bounded in size, nesting is checked before nlohmann sees it (its values recurse per level when
// copied, compared or dumped), numbers beyond double range and invalid UTF-8 are errors naming
// the place, and dumping never throws on invalid UTF-8 (it is replaced by U+FFFD).
// The limits are documented in docs/untrusted-input.md.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace probe::format {

struct JsonLimits {
    uint64_t maxBytes = 0;  // size of the text (or the file)
    int maxDepth = 0;       // arrays and objects nested in each other; a scalar is depth 0
};

// Config files (op and api kinds) and configs pushed over the control socket.
constexpr JsonLimits kConfigJsonLimits{1u << 20, 32};
// One line of the control protocol, either direction. The probe's hello and config_applied
// carry a config (up to kConfigJsonLimits) besides their own keys, so the application accepts
// larger lines than the probe does.
constexpr JsonLimits kControlLineLimits{1u << 20, 32};
constexpr JsonLimits kControlClientLineLimits{4u << 20, 32};
// info/layer and info/model structure files (nodes nest two levels per op level).
constexpr JsonLimits kStructureJsonLimits{256u << 20, 256};
// dump.json and construct.json of the msprobe layout.
constexpr JsonLimits kDumpJsonLimits{1024u << 20, 256};
// probe_status.json and other small files of our own.
constexpr JsonLimits kSmallJsonLimits{16u << 20, 32};

// What is wrong with an input, and where: "config.json:3:7: nesting deeper than 32 levels".
struct JsonError {
    std::string source;   // file path, or a label such as "control socket"
    int line = 0;         // 1-based; 0 when the error is about the input as a whole
    int column = 0;       // 1-based byte column
    std::string problem;  // valid UTF-8, without the source
    std::string toString() const;
    std::string placeAndProblem() const;  // "line 3, column 7: ..." for a caller naming the source
};

template <typename Json>
struct JsonParse {
    std::optional<Json> value;  // set on success
    JsonError error;            // set on failure
    // Dotted paths of keys given twice in one object ("statistics.data_mode"): JSON allows it
    // and the last value is kept, as every JSON reader does; at most 20 are listed.
    std::vector<std::string> duplicateKeys;
    bool ok() const { return value.has_value(); }
};

JsonParse<nlohmann::json> parseJson(std::string_view text, const std::string& source,
                                    const JsonLimits& limits);
JsonParse<nlohmann::ordered_json> parseOrderedJson(std::string_view text, const std::string& source,
                                                   const JsonLimits& limits);
// Implemented beside nlohmann's SAX interface by a handler that drops most strings unread (a
// structure file's tensor names and keys): parseJsonEvents' fast scanner offers it each string as
// a view first, sparing a copy of every string. nlohmann's parser (the fallback) calls key() and
// string() only, so both ways must mean the same.
class JsonStringViews {
public:
    enum class Taken { No, Yes, Stop };  // No: wanted as a string (key()/string() are called)
    virtual Taken stringView(std::string_view text, bool isKey) = 0;

protected:
    ~JsonStringViews() = default;
};

// For readers of big files that keep a few keys: the text's events go to `handler` (nlohmann's
// SAX interface; no JSON tree is built) after the checks parseJson makes. False with `error` set
// as parseJson sets it when the text is not JSON within the limits, or when the handler stopped
// (returned false; readers had better note what they dislike and go on). `restart`, when given,
// puts the handler back as it was before any event: the text is then scanned once, its events
// handed over on the way, and read again from the start (after restart()) only where the fast
// scanner gives up; without it the text is checked before the handler hears of it.
bool parseJsonEvents(std::string_view text, const std::string& source, const JsonLimits& limits,
                     nlohmann::json_sax<nlohmann::json>& handler, JsonError* error,
                     const std::function<void()>& restart = {});
// Reads `path` (a regular file of at most limits.maxBytes, see readRegularFile) and parses it.
JsonParse<nlohmann::json> readJsonFile(const std::string& path, const JsonLimits& limits);
JsonParse<nlohmann::ordered_json> readOrderedJsonFile(const std::string& path,
                                                      const JsonLimits& limits);

// Serialises without ever throwing: bytes that are not UTF-8 become U+FFFD. indent -1: one line.
std::string dumpJson(const nlohmann::json& value, int indent = -1);
std::string dumpJson(const nlohmann::ordered_json& value, int indent = -1);

// `text` made safe to show in a message: valid UTF-8 passes, other bytes and control
// characters become \xNN, and more than `maxBytes` is cut with "...".
std::string printableText(std::string_view text, size_t maxBytes = 200);
bool isValidUtf8(std::string_view text);
// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD (as dumpJson does).
std::string toValidUtf8(std::string_view text);

// 1-based line and byte column of `offset` in `text`.
std::pair<int, int> lineAndColumn(std::string_view text, size_t offset);

}  // namespace probe::format
