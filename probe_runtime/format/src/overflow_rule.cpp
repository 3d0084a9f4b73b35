// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/overflow_rule.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "probe/format/statistic_csv.h"

namespace probe::format {

std::string overflowReason(double max, double min, bool nan) {
    std::string why;
    auto say = [&](const std::string& what) { why += (why.empty() ? "" : " ") + what; };
    if (nan || std::isnan(max) || std::isnan(min)) say("nan");
    if (std::isinf(max)) say("max=" + formatStatValue(max));
    if (std::isinf(min) && !(std::isinf(max) && min == max)) say("min=" + formatStatValue(min));
    return why;
}

bool statisticsShowNan(double max, double min, double mean) {
    if (std::isnan(max) || std::isnan(min)) return true;
    return std::isnan(mean) && !(max == INFINITY && min == -INFINITY);
}

const std::vector<std::string>& defaultOverflowIgnoredTypes() {
    static const std::vector<std::string> types = {"empty", "fill", "full", "parameters_grad"};
    return types;
}

bool isOverflowIgnoredType(std::string_view type, const std::vector<std::string>& fragments) {
    std::string text(type);
    for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& fragment : fragments) {
        if (fragment.empty()) continue;
        std::string lowered = fragment;
        for (auto& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (text.find(lowered) != std::string::npos) return true;
    }
    return false;
}

OverflowFingerprint overflowFingerprint(std::string_view dtype, std::string_view shape, double max,
                                        double min, std::optional<double> mean,
                                        std::optional<double> norm) {
    const auto bits = [](double value) {
        uint64_t out = 0;
        if (std::isnan(value)) value = std::numeric_limits<double>::quiet_NaN();
        std::memcpy(&out, &value, sizeof out);
        return out;
    };
    const std::hash<std::string_view> hash;
    return {hash(dtype),           hash(shape), bits(max), bits(min), mean ? bits(*mean) : 0,
            norm ? bits(*norm) : 0};
}

size_t backwardMarkAt(std::string_view name, char callSeparator) {
    constexpr std::string_view kBackward = ".backward";
    const size_t at = name.rfind(kBackward);
    if (at == std::string_view::npos) return at;
    const std::string_view call = name.substr(at + kBackward.size());
    if (!call.empty() && (call[0] != callSeparator || call.size() == 1 ||
                          call.find_first_not_of("0123456789", 1) != std::string_view::npos))
        return std::string_view::npos;
    return at;
}

std::string_view forwardOfBackwardLayerOp(std::string_view name) {
    const size_t at = backwardMarkAt(name, '_');
    return at == std::string_view::npos || at == 0 ? std::string_view() : name.substr(0, at);
}

}  // namespace probe::format
