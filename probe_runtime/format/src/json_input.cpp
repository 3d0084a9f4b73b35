// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/json_input.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <unordered_set>

#include "probe/format/file_util.h"

namespace probe::format {
namespace {

constexpr size_t kMaxDuplicateKeysListed = 20;
constexpr size_t kLinearSearchKeys = 16;

// The length of the UTF-8 sequence starting at text[i], or 0 when it is not a valid one
// (overlong forms, surrogates and code points past U+10FFFF are invalid, as in RFC 3629).
size_t utf8SequenceLength(std::string_view text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return 1;
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        length = 3;
        if (c == 0xE0) low = 0xA0;
        if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        length = 4;
        if (c == 0xF0) low = 0x90;
        if (c == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    if (i + length > text.size()) return 0;
    if (byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return length;
}

// The byte offset of the first bracket nested deeper than `maxDepth`, or npos. Brackets inside
// strings do not count; the text need not be valid JSON (the parser judges that afterwards).
size_t findTooDeep(std::string_view text, int maxDepth) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxDepth) return i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::string_view::npos;
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 2: " prefix (the place is given separately).
std::string parserMessage(const std::string& what) {
    size_t start = 0;
    if (const size_t column = what.find(", column "); column != std::string::npos) {
        if (const size_t colon = what.find(": ", column); colon != std::string::npos)
            start = colon + 2;
    } else if (const size_t bracket = what.find("] "); bracket != std::string::npos) {
        start = bracket + 2;
    }
    // Its "last read" shows a control character as <U+000A>: a line break and a tab as JSON
    // writes them, which people read ('1\n}\nx', not '1<U+000A>}<U+000A>x').
    std::string message = what.substr(start);
    for (const auto& [shown, escaped] : {std::pair<const char*, const char*>{"<U+000A>", "\\n"},
                                         {"<U+000D>", "\\r"},
                                         {"<U+0009>", "\\t"}}) {
        for (size_t at = message.find(shown); at != std::string::npos;
             at = message.find(shown, at + 2))
            message.replace(at, 8, escaped);
    }
    return message;
}

// Where nlohmann's parser failed (a byte offset into the text) and why, for people.
void describeParseError(std::size_t position, const std::string& token,
                        const nlohmann::detail::exception& e, size_t& offset,
                        std::string& message) {
    offset = position > 0 ? position - 1 : 0;
    if (e.id == 406) {
        // Valid JSON, but no double holds it: the place is where the number starts.
        offset = position >= token.size() ? position - token.size() : 0;
        message = "the number " + printableText(token, 40) +
                  " is out of range (beyond +-1.8e308, the range of a double)";
    } else {
        message = "not valid JSON: " + printableText(parserMessage(e.what()));
    }
}

// Builds the value as nlohmann's DOM parser does, but keeps going on a repeated key (noting it)
// and never throws: a parse error is recorded with its byte offset.
template <typename Json>
class GuardedBuilder {
public:
    using number_integer_t = typename Json::number_integer_t;
    using number_unsigned_t = typename Json::number_unsigned_t;
    using number_float_t = typename Json::number_float_t;
    using string_t = typename Json::string_t;
    using binary_t = typename Json::binary_t;

    explicit GuardedBuilder(Json& root) : root_(root) {}

    bool null() { return put(Json(nullptr)); }
    bool boolean(bool v) { return put(Json(v)); }
    bool number_integer(number_integer_t v) { return put(Json(v)); }
    bool number_unsigned(number_unsigned_t v) { return put(Json(v)); }
    bool number_float(number_float_t v, const string_t&) { return put(Json(v)); }
    bool string(string_t& v) { return put(Json(std::move(v))); }
    bool binary(binary_t&) { return false; }  // JSON text has none
    bool start_object(std::size_t) {
        Json* object = slot();
        *object = Json::object();
        frames_.push_back({object, {}, {}});
        return true;
    }
    bool key(string_t& name) {
        Frame& frame = frames_.back();
        frame.key = name;
        auto& object = *frame.value->template get_ptr<typename Json::object_t*>();
        if constexpr (!std::is_same_v<Json, nlohmann::ordered_json>) {
            auto [it, inserted] = object.emplace(name, nullptr);
            if (!inserted) noteDuplicate(name);
            pending_ = &it->second;
        } else {
            // An ordered object finds a key by a linear search: past a few keys a set keeps
            // the parse of a big object linear.
            using Items = std::vector<typename Json::object_t::value_type>;
            auto& items = static_cast<Items&>(object);
            auto found = items.end();
            const auto sameKey = [&](const auto& item) { return item.first == name; };
            if (items.size() < kLinearSearchKeys) {
                found = std::find_if(items.begin(), items.end(), sameKey);
            } else {
                if (frame.keys.empty())
                    for (const auto& item : items) frame.keys.insert(item.first);
                if (!frame.keys.insert(name).second)
                    found = std::find_if(items.begin(), items.end(), sameKey);
            }
            if (found != items.end()) {
                noteDuplicate(name);
                pending_ = &found->second;
            } else {
                items.emplace_back(name, nullptr);
                pending_ = &items.back().second;
            }
        }
        return true;
    }
    bool end_object() {
        frames_.pop_back();
        return true;
    }
    bool start_array(std::size_t) {
        Json* array = slot();
        *array = Json::array();
        frames_.push_back({array, {}, {}});
        return true;
    }
    bool end_array() {
        frames_.pop_back();
        return true;
    }
    bool parse_error(std::size_t position, const std::string& token,
                     const nlohmann::detail::exception& e) {
        describeParseError(position, token, e, errorOffset, errorMessage);
        return false;
    }

    size_t errorOffset = 0;
    std::string errorMessage;
    std::vector<std::string> duplicates;

private:
    struct Frame {
        Json* value;
        std::string key;                       // the object's current key
        std::unordered_set<std::string> keys;  // ordered objects only
    };
    // Where the next value goes: the root, the object's pending key, or the end of the array.
    Json* slot() {
        if (frames_.empty()) return &root_;
        Json* parent = frames_.back().value;
        if (parent->is_object()) return pending_;
        auto& array = *parent->template get_ptr<typename Json::array_t*>();
        array.emplace_back();
        return &array.back();
    }
    bool put(Json&& v) {
        *slot() = std::move(v);
        return true;
    }
    void noteDuplicate(const std::string& name) {
        if (duplicates.size() >= kMaxDuplicateKeysListed) return;
        std::string path;
        for (size_t i = 0; i + 1 < frames_.size(); ++i) {
            if (!frames_[i].value->is_object()) continue;
            path += frames_[i].key + ".";
        }
        duplicates.push_back(printableText(path + name, 120));
    }

    Json& root_;
    std::vector<Frame> frames_;
    Json* pending_ = nullptr;
};

// A scanner for the JSON big files hold in practice: strings without escapes or control
// characters, integers of at most 19 digits, decimals from_chars reads into a finite double. It
// accepts only text nlohmann's parser accepts, and hands the same events with the same values
// (strtod and from_chars both round correctly), several times faster. Anything else it leaves to
// nlohmann, which also words the errors. Without a handler it only says whether it would accept.
class PlainJsonScanner {
public:
    using Json = nlohmann::json;

    PlainJsonScanner(std::string_view text, int maxDepth)
        : p_(text.data()), end_(text.data() + text.size()), maxDepth_(maxDepth) {}

    bool run(nlohmann::json_sax<Json>* handler) {
        handler_ = handler;
        views_ = dynamic_cast<JsonStringViews*>(handler);
        skipSpace();
        if (!value(0)) return false;
        skipSpace();
        return p_ == end_;
    }

private:
    void skipSpace() {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }
    bool literal(std::string_view word) {
        if (static_cast<size_t>(end_ - p_) < word.size() ||
            std::string_view(p_, word.size()) != word)
            return false;
        p_ += word.size();
        return true;
    }
    // A string's text, between its quotes: false on an escape, a control character or bytes
    // that are not UTF-8.
    bool stringText(std::string_view& text) {
        if (p_ == end_ || *p_ != '"') return false;
        const char* start = ++p_;
        // Eight bytes at a time while none is a quote, a backslash, a control character or
        // part of a multi-byte character; the loop below judges the rest byte by byte.
        constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
        auto hasZeroByte = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
        while (end_ - p_ >= 8) {
            uint64_t word;
            std::memcpy(&word, p_, sizeof word);
            if ((word & kHighs) || hasZeroByte(word ^ (kOnes * '"')) ||
                hasZeroByte(word ^ (kOnes * '\\')) || ((word - kOnes * 0x20) & ~word & kHighs))
                break;
            p_ += 8;
        }
        while (true) {
            if (p_ == end_) return false;
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') break;
            if (c == '\\' || c < 0x20) return false;
            if (c < 0x80) {
                ++p_;
                continue;
            }
            const size_t n = utf8SequenceLength(std::string_view(p_, end_ - p_), 0);
            if (n == 0) return false;
            p_ += n;
        }
        text = std::string_view(start, p_ - start);
        ++p_;
        return true;
    }
    bool string(bool isKey) {
        std::string_view text;
        if (!stringText(text)) return false;
        if (!handler_) return true;
        if (views_) {
            const auto taken = views_->stringView(text, isKey);
            if (taken != JsonStringViews::Taken::No) return taken == JsonStringViews::Taken::Yes;
        }
        // One buffer for every string: its memory is reused unless a handler takes it.
        scratch_.assign(text.data(), text.size());
        return isKey ? handler_->key(scratch_) : handler_->string(scratch_);
    }
    bool number() {
        const char* start = p_;
        const bool negative = *p_ == '-';
        if (negative) ++p_;
        auto digits = [&] {
            const char* from = p_;
            while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
            return p_ - from;
        };
        const auto integerDigits = digits();
        if (integerDigits == 0 || (integerDigits > 1 && start[negative ? 1 : 0] == '0'))
            return false;
        bool isFloat = false;
        if (p_ != end_ && *p_ == '.') {
            ++p_;
            if (digits() == 0) return false;
            isFloat = true;
        }
        if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
            ++p_;
            if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (digits() == 0) return false;
            isFloat = true;
        }
        if (!isFloat) {
            if (integerDigits > 19) return false;  // nlohmann decides what it becomes
            uint64_t magnitude = 0;
            for (const char* d = start + (negative ? 1 : 0); d != p_; ++d)
                magnitude = magnitude * 10 + static_cast<uint64_t>(*d - '0');
            if (!negative) return !handler_ || handler_->number_unsigned(magnitude);
            if (magnitude > (uint64_t{1} << 63)) return false;
            const auto value = static_cast<Json::number_integer_t>(0 - magnitude);
            return !handler_ || handler_->number_integer(value);
        }
        double value = 0;
        const auto [end, ec] = std::from_chars(start, p_, value);
        if (ec != std::errc() || end != p_ || !std::isfinite(value)) return false;
        if (!handler_) return true;
        return handler_->number_float(value, std::string(start, p_));
    }
    bool value(int depth) {
        if (p_ == end_) return false;
        switch (*p_) {
            case '{':
                return container(depth + 1, '}');
            case '[':
                return container(depth + 1, ']');
            case '"':
                return string(false);
            case 't':
                return literal("true") && (!handler_ || handler_->boolean(true));
            case 'f':
                return literal("false") && (!handler_ || handler_->boolean(false));
            case 'n':
                return literal("null") && (!handler_ || handler_->null());
            default:
                return (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) && number();
        }
    }
    // An object (closed by '}': "key": value members) or an array (closed by ']': values);
    // p_ at its opening bracket.
    bool container(int depth, char close) {
        if (depth > maxDepth_) return false;
        const bool isObject = close == '}';
        ++p_;
        if (handler_ && !(isObject ? handler_->start_object(static_cast<std::size_t>(-1))
                                   : handler_->start_array(static_cast<std::size_t>(-1))))
            return false;
        auto closed = [&] {
            ++p_;
            return !handler_ || (isObject ? handler_->end_object() : handler_->end_array());
        };
        skipSpace();
        if (p_ != end_ && *p_ == close) return closed();
        while (true) {
            if (isObject) {
                if (!string(true)) return false;
                skipSpace();
                if (p_ == end_ || *p_ != ':') return false;
                ++p_;
                skipSpace();
            }
            if (!value(depth)) return false;
            skipSpace();
            if (p_ == end_) return false;
            if (*p_ == ',') {
                ++p_;
                skipSpace();
                continue;
            }
            if (*p_ != close) return false;
            return closed();
        }
    }

    const char* p_;
    const char* end_;
    int maxDepth_;
    nlohmann::json_sax<Json>* handler_ = nullptr;
    JsonStringViews* views_ = nullptr;  // the handler's, when it takes views
    std::string scratch_;
};

// The limits checked, then the text parsed into `handler`'s events; false with `error` set (its
// source left to the caller) when the text is not JSON within the limits. `handler` records
// nlohmann's parse error in errorOffset and errorMessage.
template <typename Json, typename Handler>
bool parseEvents(std::string_view text, const JsonLimits& limits, Handler& handler,
                 JsonError& error) {
    auto failAt = [&](size_t offset, std::string problem) {
        std::tie(error.line, error.column) = lineAndColumn(text, offset);
        error.problem = std::move(problem);
        return false;
    };
    if (text.size() > limits.maxBytes) {
        error.problem = "is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                        std::to_string(limits.maxBytes);
        return false;
    }
    if (const size_t deep = findTooDeep(text, limits.maxDepth); deep != std::string_view::npos)
        return failAt(deep, "nested deeper than " + std::to_string(limits.maxDepth) +
                                " levels of arrays and objects");
    // nlohmann's lexer takes a NUL byte for the end of the text: what follows one went unread
    // (`{"ids": "1"}\0{"ids": "zzz"` was a valid config). JSON allows none, in a string or out.
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
        return failAt(nul, "not valid JSON: a NUL byte");
    bool parsed = false;
    try {
        parsed = Json::sax_parse(text.begin(), text.end(), &handler);
    } catch (const std::bad_alloc&) {
        error.problem = "out of memory while parsing";
        return false;
    } catch (const std::exception& e) {  // not expected: the handlers throw nothing themselves
        error.problem = printableText(e.what());
        return false;
    }
    if (!parsed)
        return failAt(handler.errorOffset,
                      handler.errorMessage.empty() ? "not valid JSON" : handler.errorMessage);
    return true;
}

template <typename Json>
JsonParse<Json> parseGuarded(std::string_view text, const std::string& source,
                             const JsonLimits& limits) {
    JsonParse<Json> result;
    result.error.source = source;
    Json root;
    GuardedBuilder<Json> builder(root);
    if (!parseEvents<Json>(text, limits, builder, result.error)) return result;
    result.duplicateKeys = std::move(builder.duplicates);
    result.value = std::move(root);
    return result;
}

// Hands every event to a reader's handler and records where the text stops being JSON.
class ForwardingHandler {
public:
    using Json = nlohmann::json;
    explicit ForwardingHandler(nlohmann::json_sax<Json>& to) : to_(to) {}
    bool null() { return to_.null(); }
    bool boolean(bool v) { return to_.boolean(v); }
    bool number_integer(Json::number_integer_t v) { return to_.number_integer(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return to_.number_unsigned(v); }
    bool number_float(Json::number_float_t v, const Json::string_t& s) {
        return to_.number_float(v, s);
    }
    bool string(Json::string_t& v) { return to_.string(v); }
    bool binary(Json::binary_t&) { return false; }  // JSON text has none
    bool start_object(std::size_t n) { return to_.start_object(n); }
    bool key(Json::string_t& name) { return to_.key(name); }
    bool end_object() { return to_.end_object(); }
    bool start_array(std::size_t n) { return to_.start_array(n); }
    bool end_array() { return to_.end_array(); }
    bool parse_error(std::size_t position, const std::string& token,
                     const nlohmann::detail::exception& e) {
        describeParseError(position, token, e, errorOffset, errorMessage);
        return false;
    }

    size_t errorOffset = 0;
    std::string errorMessage;

private:
    nlohmann::json_sax<Json>& to_;
};

template <typename Json>
JsonParse<Json> readGuarded(const std::string& path, const JsonLimits& limits) {
    std::string why;
    auto text = readRegularFile(path, limits.maxBytes, &why);
    if (!text) {
        JsonParse<Json> result;
        result.error.source = path;
        result.error.problem = printableText(why);
        return result;
    }
    return parseGuarded<Json>(*text, path, limits);
}

template <typename Json>
std::string dumpGuarded(const Json& value, int indent) {
    try {
        return value.dump(indent, ' ', false, Json::error_handler_t::replace);
    } catch (const std::exception&) {  // only bad_alloc is left
        return "null";
    }
}

}  // namespace

std::string JsonError::toString() const {
    std::string out = source.empty() ? std::string("<input>") : printableText(source, 4096);
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    out += ": " + problem;
    return out;
}

std::string JsonError::placeAndProblem() const {
    if (line <= 0) return problem;
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + problem;
}

JsonParse<nlohmann::json> parseJson(std::string_view text, const std::string& source,
                                    const JsonLimits& limits) {
    return parseGuarded<nlohmann::json>(text, source, limits);
}

JsonParse<nlohmann::ordered_json> parseOrderedJson(std::string_view text, const std::string& source,
                                                   const JsonLimits& limits) {
    return parseGuarded<nlohmann::ordered_json>(text, source, limits);
}

bool parseJsonEvents(std::string_view text, const std::string& source, const JsonLimits& limits,
                     nlohmann::json_sax<nlohmann::json>& handler, JsonError* error,
                     const std::function<void()>& restart) {
    if (restart && text.size() <= limits.maxBytes) {
        // A handler that can start over hears the fast scanner's events at once; where it gives
        // up (or the handler stopped), nlohmann's parser reads the text again from the start
        // and words the error.
        if (PlainJsonScanner(text, limits.maxDepth).run(&handler)) return true;
        restart();
    } else if (text.size() <= limits.maxBytes &&
               PlainJsonScanner(text, limits.maxDepth).run(nullptr)) {
        // Plain text (most of it) goes through the fast scanner, once to check that it can, then
        // to hand the events over (a handler cannot take back what it was told).
        if (PlainJsonScanner(text, limits.maxDepth).run(&handler)) return true;
        if (error) {  // the handler stopped: said as the parser below says it
            *error = JsonError{source, 1, 1, "not valid JSON"};
        }
        return false;
    }
    JsonError found;
    found.source = source;
    ForwardingHandler forwarding(handler);
    if (parseEvents<nlohmann::json>(text, limits, forwarding, found)) return true;
    if (error) *error = std::move(found);
    return false;
}

JsonParse<nlohmann::json> readJsonFile(const std::string& path, const JsonLimits& limits) {
    return readGuarded<nlohmann::json>(path, limits);
}

JsonParse<nlohmann::ordered_json> readOrderedJsonFile(const std::string& path,
                                                      const JsonLimits& limits) {
    return readGuarded<nlohmann::ordered_json>(path, limits);
}

std::string dumpJson(const nlohmann::json& value, int indent) {
    return dumpGuarded(value, indent);
}
std::string dumpJson(const nlohmann::ordered_json& value, int indent) {
    return dumpGuarded(value, indent);
}

bool isValidUtf8(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        const size_t n = utf8SequenceLength(text, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string toValidUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const size_t n = utf8SequenceLength(text, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string printableText(std::string_view text, size_t maxBytes) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    out.reserve(std::min(text.size(), maxBytes) + 8);
    for (size_t i = 0; i < text.size();) {
        if (out.size() >= maxBytes) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        const size_t n = utf8SequenceLength(text, i);
        if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F) && c != '\n' && c != '\t')) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::pair<int, int> lineAndColumn(std::string_view text, size_t offset) {
    if (offset > text.size()) offset = text.size();
    int line = 1, column = 1;
    for (size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

}  // namespace probe::format
