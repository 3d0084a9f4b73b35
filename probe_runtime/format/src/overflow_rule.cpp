// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/overflow_rule.h"

#include <cctype>
#include <cmath>

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

}  // namespace probe::format
