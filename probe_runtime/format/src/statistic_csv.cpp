// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/statistic_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "probe/format/dtype.h"

namespace probe::format {

const char* const kStatisticCsvHeader =
    "Device and PID,Execution Count,Op Name,Op Type,Op Id,Input/Output,Index,Dtype,Format,Shape,"
    "Max,Min,Mean,Norm,Tensor Path";

namespace {

constexpr int kColumns = 15;

// Fields are short and almost never quoted: one pass over the bytes (find_first_of would
// call memchr once per byte of the field).
bool needsQuotes(std::string_view field) {
    for (const char c : field)
        if (c == ',' || c == '"' || c == '\r' || c == '\n') return true;
    return false;
}

// A row formatted on the stack, then appended to its batch at once: every append to a
// std::string is a call that checks its room, and a row made of thirty of them cost as much as
// the formatting itself. Fields go to either (the templates below).
class StackText {
public:
    static constexpr size_t kCapacity = 1024;
    void operator+=(char c) { *end_++ = c; }
    void operator+=(std::string_view text) {
        std::memcpy(end_, text.data(), text.size());
        end_ += text.size();
    }
    void append(const char* begin, const char* end) {
        *this += std::string_view(begin, end - begin);
    }
    std::string_view view() const { return {data_, static_cast<size_t>(end_ - data_)}; }

private:
    char data_[kCapacity];
    char* end_ = data_;
};

template <class Out>
void appendField(Out& out, std::string_view field) {
    if (!needsQuotes(field)) {
        out += field;
        return;
    }
    out += '"';
    for (char c : field) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

// Where the first ',' at or after `pos` is (line.size() when none). Fields are short (a dozen
// bytes): eight bytes are tested at a time, without a memchr call per field.
size_t findComma(std::string_view line, size_t pos) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
    for (; pos + 8 <= line.size(); pos += 8) {
        uint64_t word;
        std::memcpy(&word, line.data() + pos, sizeof word);
        const uint64_t x = word ^ (kOnes * ',');
        // The lowest set bit marks the first zero byte of x exactly (borrows only reach up).
        if (const uint64_t zero = (x - kOnes) & ~x & kHighs)
            return pos + static_cast<size_t>(__builtin_ctzll(zero) >> 3);
    }
#endif
    while (pos < line.size() && line[pos] != ',') ++pos;
    return pos;
}

#if defined(__SSE2__)
// Splits a line holding no quote at every comma, sixteen bytes at a time (one comparison finds
// every comma in them, where findComma takes a loop per field); nullopt when the line holds a
// quote (splitCsvLine decides then). Otherwise what splitCsvLine would say.
[[gnu::always_inline]] inline std::optional<bool> splitLineWithoutQuotes(
    std::string_view line, std::string_view (&fields)[kColumns], int& count) {
    count = 0;
    const size_t size = line.size();
    const char* const data = line.data();
    size_t fieldStart = 0;
    // The fields ending at the commas of `mask` (bit i: byte base + i); false past 15 columns.
    auto takeFields = [&](uint32_t mask, size_t base) {
        for (; mask != 0; mask &= mask - 1) {
            if (count == kColumns) return false;
            const size_t comma = base + static_cast<size_t>(__builtin_ctz(mask));
            fields[count++] = std::string_view(data + fieldStart, comma - fieldStart);
            fieldStart = comma + 1;
        }
        return true;
    };
    const __m128i commas = _mm_set1_epi8(','), quotes = _mm_set1_epi8('"');
    auto masks = [&](size_t at, uint32_t& commaMask) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + at));
        commaMask = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, commas)));
        return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, quotes)));
    };
    size_t pos = 0;
    for (; pos + 16 <= size; pos += 16) {
        uint32_t commaMask;
        if (masks(pos, commaMask)) return std::nullopt;
        if (!takeFields(commaMask, pos)) return false;
    }
    if (pos < size) {
        if (size >= 16) {  // the last sixteen bytes again, those seen already masked off
            uint32_t commaMask;
            const size_t at = size - 16, seen = pos - at;
            if (masks(at, commaMask) >> seen) return std::nullopt;
            if (!takeFields(commaMask >> seen << seen, at)) return false;
        } else {
            uint32_t commaMask = 0;
            for (size_t i = 0; i < size; ++i) {
                if (data[i] == '"') return std::nullopt;
                if (data[i] == ',') commaMask |= 1u << i;
            }
            if (!takeFields(commaMask, 0)) return false;
        }
    }
    if (count == kColumns) return false;
    fields[count++] = std::string_view(data + fieldStart, size - fieldStart);
    return true;
}
#endif

// Splits one line into its fields without copying them: a quoted field is unquoted into
// `scratch` (rare: only names holding commas or quotes are quoted).
bool splitCsvLine(std::string_view line, std::string_view (&fields)[kColumns], int& count,
                  std::vector<std::string>& scratch) {
#if defined(__SSE2__)
    if (const auto split = splitLineWithoutQuotes(line, fields, count)) return *split;
#endif
    count = 0;
    scratch.clear();
    scratch.reserve(kColumns);  // views into it must stay valid
    size_t pos = 0;
    while (true) {
        if (count == kColumns) return false;
        if (pos < line.size() && line[pos] == '"') {
            std::string unquoted;
            size_t i = pos + 1;
            for (;; ++i) {
                if (i >= line.size()) return false;  // unterminated
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        unquoted += '"';
                        ++i;
                    } else {
                        break;
                    }
                } else {
                    unquoted += line[i];
                }
            }
            scratch.push_back(std::move(unquoted));
            fields[count++] = scratch.back();
            pos = i + 1;
            if (pos == line.size()) return true;
            if (line[pos] != ',') return false;
            ++pos;
            continue;
        }
        const size_t comma = findComma(line, pos);
        fields[count++] = line.substr(pos, comma - pos);
        if (comma == line.size()) return true;
        pos = comma + 1;
    }
}

// "-12.345678" (what formatStatValue writes) without from_chars when the digits fit a double's
// mantissa: the integer of all digits divided by a power of ten, both exact, rounds once and so
// gives from_chars' (correctly rounded) result. False for any other text (from_chars decides).
[[gnu::always_inline]] inline bool parsePlainDecimal(std::string_view text, double& value) {
    static constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                              1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                              1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* p = text.data();
    const char* const end = p + text.size();
    const bool negative = p != end && *p == '-';
    if (negative) ++p;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    // Six decimals, as the runtime writes every value: the fraction's digits eight bytes at a time
    // (the '.' and the byte before it read as the leading zeros of an eight-digit number).
    if (text.size() >= 8 && end[-7] == '.') {
        uint64_t word;
        std::memcpy(&word, end - 8, sizeof word);
        constexpr uint64_t kDigitBytes = 0xFFFFFFFFFFFF0000ull, kZeros = 0x3030303030300000ull;
        const uint64_t digitHighs = word & (kDigitBytes & 0xF0F0F0F0F0F0F0F0ull);
        const uint64_t sixHighs = (word + 0x0606060606060000ull) & 0xF0F0F0F0F0F00000ull;
        if (digitHighs == kZeros && sixHighs == kZeros) {  // bytes '0'..'9' only
            uint64_t v = (word & kDigitBytes) - kZeros;
            v = v * 10 + (v >> 8);
            v = ((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32)) +
                 ((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32))) >>
                32;
            const uint64_t fraction = v & 0xFFFFFFFFull;
            const char* const point = end - 7;
            if (p == point || point - p > 13) return false;  // 19 digits at most in all
            uint64_t whole = 0;
            for (; p != point; ++p) {
                const unsigned digit = static_cast<unsigned char>(*p) - unsigned{'0'};
                if (digit >= 10) return false;
                whole = whole * 10 + digit;
            }
            const uint64_t digits = whole * 1000000 + fraction;
            if (digits > (uint64_t{1} << 53)) return false;
            const double magnitude = static_cast<double>(digits) / 1e6;
            value = negative ? -magnitude : magnitude;
            return true;
        }
    }
#endif
    uint64_t digits = 0;  // wraps past 19 digits, which are refused below
    auto readDigits = [&] {
        const char* from = p;
        for (; p != end && static_cast<unsigned char>(*p - '0') < 10; ++p)
            digits = digits * 10 + static_cast<uint64_t>(*p - '0');
        return p - from;
    };
    const auto integerDigits = readDigits();
    if (integerDigits == 0) return false;
    std::ptrdiff_t fraction = 0;
    if (p != end && *p == '.') {
        ++p;
        fraction = readDigits();
        if (fraction == 0) return false;
    }
    if (p != end || integerDigits + fraction > 19 || digits > (uint64_t{1} << 53) || fraction > 22)
        return false;
    const double magnitude = static_cast<double>(digits) / kPowersOfTen[fraction];
    value = negative ? -magnitude : magnitude;
    return true;
}

}  // namespace

std::string csvField(std::string_view field) {
    std::string out;
    appendField(out, field);
    return out;
}

namespace {

// Below it (2^53 / 10^6) appendFixedSixDecimals prints a value, in at most 24 bytes.
constexpr double kFixedSixDecimalsBound = 9007199254740992.0 / 1e6;

// printf("%f") of a finite `v` with |v| < 2^53 / 10^6 (nearly every statistic): the exact binary
// value times 10^6 rounded to an integer, half to even, as printf rounds, without printf or
// to_chars (ten times the cost; a row has four values). p + e is v * 10^6 exactly (fma), and p's
// fraction d decides unless it is exactly one half, where the sign of e does.
template <class Out>
void appendFixedSixDecimals(Out& out, double v) {
    const double p = v * 1e6;
    const double e = std::fma(v, 1e6, -p);
    double n = std::floor(p);
    const double d = p - n;  // exact, in [0, 1)
    if (d > 0.5 || (d == 0.5 && (e > 0 || (e == 0 && std::fmod(n, 2.0) != 0)))) n += 1;
    // (d < 0.5: d + e < 0.5 too, since |e| is at most half of p's last place.)
    const uint64_t scaled = static_cast<uint64_t>(std::fabs(n));
    char buffer[32];
    char* end = buffer + sizeof buffer;
    char* begin = end;
    uint64_t fraction = scaled % 1000000;
    for (int i = 0; i < 6; ++i, fraction /= 10) *--begin = static_cast<char>('0' + fraction % 10);
    *--begin = '.';
    uint64_t whole = scaled / 1000000;
    do {
        *--begin = static_cast<char>('0' + whole % 10);
        whole /= 10;
    } while (whole);
    if (std::signbit(v)) *--begin = '-';
    out.append(begin, end);
}

// Values printed by appendFixedSixDecimals or as a word; others may take 400 bytes.
bool shortStatValue(std::optional<double> value) {
    return !value || !std::isfinite(*value) || std::fabs(*value) < kFixedSixDecimalsBound;
}

template <class Out>
void appendStatValue(Out& out, std::optional<double> value) {
    if (!value) {
        out += "N/A";
        return;
    }
    const double v = *value;
    if (std::isnan(v)) {
        out += "nan";
    } else if (std::isinf(v)) {
        out += v > 0 ? "inf" : "-inf";
    } else if (std::fabs(v) < kFixedSixDecimalsBound) {
        appendFixedSixDecimals(out, v);
    } else {
        // Same digits as printf("%f") (both round the exact binary value).
        char buffer[400];
        auto [end, ec] =
            std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed, 6);
        if (ec == std::errc())
            out.append(buffer, end);
        else
            out += "nan";
    }
}

}  // namespace

std::string formatStatValue(std::optional<double> value) {
    std::string out;
    appendStatValue(out, value);
    return out;
}

std::optional<double> parseStatValue(std::string_view text, bool* ok) {
    if (ok) *ok = true;
    double v = 0;
    if (parsePlainDecimal(text, v)) return v;  // almost every value
    if (text == "N/A") return std::nullopt;
    if (text == "nan" || text == "-nan") return std::nan("");
    if (text == "inf") return HUGE_VAL;
    if (text == "-inf") return -HUGE_VAL;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    const bool whole = !text.empty() && ptr == text.data() + text.size();
    // A number beyond a double's range (1e999, as a spreadsheet may save an infinity) is one:
    // from_chars leaves it unread, strtod gives its infinity (or, below the range, 0).
    if (whole && ec == std::errc::result_out_of_range)
        return std::strtod(std::string(text).c_str(), nullptr);
    if (!whole || ec != std::errc()) {
        if (ok) *ok = false;
        return std::nullopt;
    }
    return v;
}

namespace {

// A row's fields from a StatRow to a StatRowView (views into it) or back (owned copies).
template <class To, class From>
To copyStatRow(const From& from) {
    To to;
    to.devicePid = from.devicePid;
    to.round = from.round;
    to.opName = from.opName;
    to.opType = from.opType;
    to.opId = from.opId;
    to.isOutput = from.isOutput;
    to.index = from.index;
    to.dtype = from.dtype;
    to.format = from.format;
    to.shape = from.shape;
    to.max = from.max;
    to.min = from.min;
    to.mean = from.mean;
    to.norm = from.norm;
    to.tensorPath = from.tensorPath;
    return to;
}

}  // namespace

namespace {

template <class Out>
void writeStatRow(Out& out, const StatRowView& row) {
    appendField(out, row.devicePid);
    out += ',';
    char round[24];
    out.append(round, std::to_chars(round, round + sizeof round, row.round).ptr);
    out += ',';
    appendField(out, row.opName);
    out += ',';
    appendField(out, row.opType);
    out += ',';
    appendField(out, row.opId);
    out += row.isOutput ? ",output," : ",input,";
    appendField(out, row.index);
    out += ',';
    appendField(out, row.dtype);
    out += ',';
    appendField(out, row.format);
    out += ',';
    appendField(out, row.shape);
    for (const auto& value : {row.max, row.min, row.mean, row.norm}) {
        out += ',';
        appendStatValue(out, value);
    }
    out += ',';
    appendField(out, row.tensorPath.empty() ? std::string_view("N/A") : row.tensorPath);
    out += '\n';
}

}  // namespace

void appendStatRow(std::string& out, const StatRowView& row) {
    size_t bound = 64;  // the round, the commas, "output", a path's "N/A"
    for (const std::string_view field : {row.devicePid, row.opName, row.opType, row.opId, row.index,
                                         row.dtype, row.format, row.shape, row.tensorPath})
        bound += 2 * field.size() + 2;  // every byte a doubled quote, and the quotes
    for (const auto& value : {row.max, row.min, row.mean, row.norm})
        bound += shortStatValue(value) ? 32 : 400;
    if (bound > StackText::kCapacity) {
        writeStatRow(out, row);
        return;
    }
    StackText text;
    writeStatRow(text, row);
    out += text.view();
}

namespace {

// What a packed row starts with; its texts follow, in this order, unterminated, then its dims.
struct PackedRowHead {
    int64_t round;
    double values[4];  // max, min, mean, norm
    // devicePid, opName, opType, opId (all empty for a row of the same op), argName, path
    uint32_t lengths[6];
    int32_t index, dtype, format;
    uint32_t ndims;
    uint8_t valuesPresent;  // bit i: values[i] is there (else N/A)
    uint8_t flags;
};
constexpr uint8_t kPackedOutput = 1, kPackedSameOp = 2;

}  // namespace

void packStatRow(std::string& packed, const StatRowCodes& row, bool sameOp) {
    PackedRowHead head{};
    head.round = row.round;
    head.flags =
        static_cast<uint8_t>((row.isOutput ? kPackedOutput : 0) | (sameOp ? kPackedSameOp : 0));
    head.index = row.index;
    head.dtype = row.dtype;
    head.format = row.format;
    head.ndims = row.ndims;
    const std::optional<double>* const values[4] = {&row.max, &row.min, &row.mean, &row.norm};
    for (int i = 0; i < 4; ++i) {
        if (!*values[i]) continue;
        head.values[i] = **values[i];
        head.valuesPresent |= static_cast<uint8_t>(1u << i);
    }
    const std::string_view texts[6] = {sameOp ? std::string_view() : row.devicePid,
                                       sameOp ? std::string_view() : row.opName,
                                       sameOp ? std::string_view() : row.opType,
                                       sameOp ? std::string_view() : row.opId,
                                       row.argName,
                                       row.tensorPath};
    const std::string_view dims(reinterpret_cast<const char*>(row.dims),
                                row.ndims * sizeof(int64_t));
    // Gathered on the stack and appended at once when they fit, since every append to a
    // std::string is a call that checks its room (and resize() zero-fills before the copy).
    size_t total = sizeof head + dims.size();
    for (int i = 0; i < 6; ++i) {
        head.lengths[i] = static_cast<uint32_t>(texts[i].size());
        total += texts[i].size();
    }
    constexpr size_t kStack = 512;
    if (total > kStack) {
        packed.reserve(packed.size() + total);
        packed.append(reinterpret_cast<const char*>(&head), sizeof head);
        for (const auto& text : texts) packed += text;
        packed += dims;
        return;
    }
    char bytes[kStack];
    char* to = bytes;
    std::memcpy(to, &head, sizeof head);
    to += sizeof head;
    for (const auto& text : texts) {
        if (text.empty()) continue;
        std::memcpy(to, text.data(), text.size());
        to += text.size();
    }
    if (!dims.empty()) std::memcpy(to, dims.data(), dims.size());
    packed.append(bytes, total);
}

size_t appendPackedStatRows(std::string& out, std::string_view packed) {
    size_t rows = 0;
    std::string_view op[4];  // devicePid, opName, opType, opId of the row before
    // The row's codes spelled out (memory kept from row to row).
    std::string index, dtype, format, shape;
    std::vector<int64_t> dims;
    while (packed.size() >= sizeof(PackedRowHead)) {
        PackedRowHead head;
        std::memcpy(&head, packed.data(), sizeof head);
        packed.remove_prefix(sizeof head);
        std::string_view texts[6];
        for (int i = 0; i < 6; ++i) {
            texts[i] = packed.substr(0, head.lengths[i]);
            packed.remove_prefix(texts[i].size());
        }
        if (head.flags & kPackedSameOp)
            std::copy(op, op + 4, texts);
        else
            std::copy(texts, texts + 4, op);
        const size_t dimBytes = std::min<size_t>(packed.size(), head.ndims * sizeof(int64_t));
        dims.resize(dimBytes / sizeof(int64_t));
        if (!dims.empty()) std::memcpy(dims.data(), packed.data(), dims.size() * sizeof dims[0]);
        packed.remove_prefix(dimBytes);
        char digits[16];
        index.assign(digits, std::to_chars(digits, digits + sizeof digits, head.index).ptr);
        if (!texts[4].empty()) index.append(1, '_').append(texts[4]);
        dtype.clear();
        appendDtypeName(dtype, head.dtype);
        format.clear();
        appendFormatName(format, head.format);
        shape.clear();
        appendShape(shape, dims.data(), dims.size());
        StatRowView row;
        row.devicePid = texts[0];
        row.round = head.round;
        row.opName = texts[1];
        row.opType = texts[2];
        row.opId = texts[3];
        row.isOutput = head.flags & kPackedOutput;
        row.index = index;
        row.dtype = dtype;
        row.format = format;
        row.shape = shape;
        row.tensorPath = texts[5];
        std::optional<double>* values[4] = {&row.max, &row.min, &row.mean, &row.norm};
        for (int i = 0; i < 4; ++i)
            if (head.valuesPresent & (1u << i)) *values[i] = head.values[i];
        appendStatRow(out, row);
        ++rows;
    }
    return rows;
}

StatRowView viewOf(const StatRow& row) {
    return copyStatRow<StatRowView>(row);
}

std::string formatStatRow(const StatRow& row) {
    const auto view = viewOf(row);
    std::string out;
    out.reserve(256 + row.tensorPath.size() + row.opName.size());
    appendStatRow(out, view);
    return out;
}

namespace {

// A round of up to 18 plain digits (what the runtime writes) read without from_chars; false
// for any other text (from_chars decides: a sign, more digits, not a number).
[[gnu::always_inline]] inline bool readPlainCount(std::string_view text, int64_t& value) {
    if (text.empty() || text.size() > 18) return false;
    int64_t v = 0;
    for (const char c : text) {
        const unsigned digit = static_cast<unsigned char>(c) - unsigned{'0'};
        if (digit >= 10) return false;
        v = v * 10 + static_cast<int64_t>(digit);
    }
    value = v;
    return true;
}

// A split row (its `count` fields in `f`) checked and read into `row`.
[[gnu::always_inline]] inline bool readStatFields(const std::string_view (&f)[kColumns], int count,
                                                  StatRowView& row, std::string* error) {
    if (count != kColumns) {
        if (error) *error = "expected 15 columns, found " + std::to_string(count);
        return false;
    }
    row.devicePid = f[0];
    if (!readPlainCount(f[1], row.round)) {  // almost every round: no call for it
        auto [ptr, ec] = std::from_chars(f[1].data(), f[1].data() + f[1].size(), row.round);
        if (f[1].empty() || ec != std::errc() || ptr != f[1].data() + f[1].size()) {
            if (error) *error = "Execution Count is not a number: " + std::string(f[1]);
            return false;
        }
    }
    // Readers keep a round in 32 bits: 2^31 wrapped to round -2147483648 (and a negative count
    // read as no round at all).
    if (row.round < 0 || row.round > std::numeric_limits<int32_t>::max()) {
        if (error) *error = "Execution Count out of range (0 to 2147483647): " + std::string(f[1]);
        return false;
    }
    row.opName = f[2];
    row.opType = f[3];
    row.opId = f[4];
    const bool isOutput = f[5].size() == 6 && std::memcmp(f[5].data(), "output", 6) == 0;
    if (!isOutput && !(f[5].size() == 5 && std::memcmp(f[5].data(), "input", 5) == 0)) {
        if (error) *error = "Input/Output must be input or output: " + std::string(f[5]);
        return false;
    }
    row.isOutput = isOutput;
    row.index = f[6];
    row.dtype = f[7];
    row.format = f[8];
    row.shape = f[9];
    std::optional<double>* values[] = {&row.max, &row.min, &row.mean, &row.norm};
    for (int i = 0; i < 4; ++i) {
        double value;
        if (parsePlainDecimal(f[10 + i], value)) {  // almost every value: no call for it
            *values[i] = value;
            continue;
        }
        bool ok = true;
        *values[i] = parseStatValue(f[10 + i], &ok);
        if (!ok) {
            if (error) *error = "not a number: " + std::string(f[10 + i]);
            return false;
        }
    }
    // All four or none (task tensor): a row with some N/A is none the runtime writes, and read
    // as it was it compared as a match on the numbers left.
    const int present = !!row.max + !!row.min + !!row.mean + !!row.norm;
    if (present != 0 && present != 4) [[unlikely]] {
        if (error) {
            static const char* const kNames[] = {"Max", "Min", "Mean", "Norm"};
            std::string missing;
            for (int i = 0; i < 4; ++i)
                if (!*values[i]) missing += std::string(missing.empty() ? "" : ", ") + kNames[i];
            *error = missing + (4 - present > 1 ? " are" : " is") +
                     " N/A while the other statistics are numbers (all four are N/A, or none)";
        }
        return false;
    }
    const bool noPath = f[14].size() == 3 && f[14][0] == 'N' && f[14][1] == '/' && f[14][2] == 'A';
    row.tensorPath = noPath ? std::string_view() : f[14];
    return true;
}

void stripLineEnd(std::string_view& line) {
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
}

}  // namespace

bool parseStatRow(std::string_view line, StatRowView& row, std::vector<std::string>& scratch,
                  std::string* error) {
    stripLineEnd(line);
    std::string_view f[kColumns];
    int count = 0;
    if (!splitCsvLine(line, f, count, scratch)) {
        if (error) *error = count == kColumns ? "more than 15 columns" : "unterminated quote";
        return false;
    }
    return readStatFields(f, count, row, error);
}

std::optional<bool> parseUnquotedStatRow(std::string_view line, StatRowView& row,
                                         std::string* error) {
    stripLineEnd(line);
    std::string_view f[kColumns];
    int count = 0;
#if defined(__SSE2__)
    const auto split = splitLineWithoutQuotes(line, f, count);
    if (!split) return std::nullopt;
#else
    if (line.find('"') != std::string_view::npos) return std::nullopt;
    std::vector<std::string> unused;  // (no quoted field to unquote)
    const std::optional<bool> split = splitCsvLine(line, f, count, unused);
#endif
    if (!*split) {
        if (error) *error = "more than 15 columns";  // (no quote: none unterminated)
        return false;
    }
    return readStatFields(f, count, row, error);
}

std::optional<StatRow> parseStatRow(std::string_view line, std::string* error) {
    thread_local std::vector<std::string> scratch;
    StatRowView view;
    if (!parseStatRow(line, view, scratch, error)) return std::nullopt;
    return copyStatRow<StatRow>(view);
}

}  // namespace probe::format
