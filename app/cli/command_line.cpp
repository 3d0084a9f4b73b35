// SPDX-License-Identifier: GPL-3.0-or-later
#include "command_line.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "analysis/compare.h"
#include "analysis/dump_summary.h"
#include "exit_codes.h"
#include "probe/format/json_input.h"

namespace probe::cli {

int exitCodeOfRead(const analysis::PartReading& reading, bool whole) {
    if (!whole && reading.rows == 0 && reading.ops == 0) return kExitConfigUnreadable;
    if (reading.problems.empty()) return kExitOk;
    return reading.rows == 0 ? kExitConfigUnreadable : kExitFailure;
}
analysis::DumpLocation partNamed(const analysis::DumpIndex& index, const std::string& path,
                                 const char* command, const char* done) {
    auto location = analysis::locationIn(index.root(), index.layout(), path);
    if (!location.scope.whole())
        std::fprintf(
            stderr, "%s: only %s of the dump %s is %s\n", command,
            format::printableText(analysis::describeScope(index.layout(), location.scope), 200)
                .c_str(),
            format::printableText(index.root(), 2000).c_str(), done);
    return location;
}

namespace {

std::string formatBound(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// The subcommand the words were for: the innermost one given ("probe config validate").
const CLI::App& innermostCommand(const CLI::App& app) {
    const CLI::App* current = &app;
    for (;;) {
        const auto given = current->get_subcommands();
        if (given.empty()) return *current;
        current = given.front();
    }
}

std::string commandName(const CLI::App& app) {
    const CLI::App* parent = app.get_parent();
    return parent ? commandName(*parent) + " " + app.get_name() : app.get_name();
}

}  // namespace

std::optional<double> parseNumber(const std::string& text) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value)) return std::nullopt;
    return value;
}

CLI::Validator numberCheck(double min, double max, bool whole) {
    std::string needed = whole ? "a whole number" : "a number";
    if (std::isinf(max))
        needed += " >= " + formatBound(min);
    else
        needed += " from " + formatBound(min) + " to " + formatBound(max);
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            const auto value = parseNumber(text);
            if (value && *value >= min && *value <= max && (!whole || *value == std::floor(*value)))
                return "";
            return "needs " + needed + ", not '" + text + "'";
        },
        needed == "a number" ? "NUMBER" : "N");
}

CLI::Validator nonEmpty(std::string what) {
    return CLI::Validator(
        [what](std::string& text) -> std::string { return text.empty() ? "needs " + what : ""; },
        "");
}

CLI::Validator oneOf(std::vector<std::string> accepted) {
    std::string list;
    for (size_t i = 0; i < accepted.size(); ++i)
        list += (i == 0                     ? ""
                 : i + 1 == accepted.size() ? " or "
                                            : ", ") +
                ("'" + accepted[i] + "'");
    return CLI::Validator(
        [accepted, list](std::string& text) -> std::string {
            for (const auto& word : accepted)
                if (text == word) return "";
            return "must be " + list + ", not '" + text + "'";
        },
        list);
}

void prepareCommandLine(CLI::App& app) {
    app.set_help_flag("-h,--help");
    app.allow_extras();  // named by parseCommandLine, in the probe's words
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

std::optional<int> parseCommandLine(CLI::App& app, const Args& args, const char* usage) {
    // CLI11 takes "--output= X" as "--output X"; an empty value after '=' is a mistake to say.
    for (const std::string& arg : args) {
        if (arg == "--" || (app.get_positionals_at_end() && !arg.empty() && arg[0] != '-')) break;
        if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' &&
            app.get_option_no_throw(arg.substr(0, arg.size() - 1))) {
            std::fprintf(stderr, "%s: %s needs a value (nothing follows '=')\n",
                         commandName(app).c_str(), arg.substr(0, arg.size() - 1).c_str());
            return kExitUsage;
        }
    }
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them so
    try {
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        std::fputs(usage, stdout);
        return kExitOk;
    } catch (const CLI::ParseError& e) {
        std::string what = e.what();
        // CLI11 says "--output: 1 required TEXT missing" for an option given without its value.
        const size_t colon = what.find(": ");
        if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && colon != std::string::npos &&
            what.find(" required ", colon) != std::string::npos)
            what = what.substr(0, colon) + " needs a value";
        // A check's message continues the option's name: "--threads needs a whole number ...".
        if (dynamic_cast<const CLI::ValidationError*>(&e) && colon != std::string::npos)
            what.erase(colon, 1);
        std::fprintf(stderr, "%s: %s\n", commandName(innermostCommand(app)).c_str(), what.c_str());
        return kExitUsage;
    }
    auto left = app.remaining(true);
    // CLI11 keeps the "--" that ends the options among what it did not take.
    left.erase(std::remove(left.begin(), left.end(), "--"), left.end());
    if (left.empty()) return std::nullopt;
    const CLI::App& command = innermostCommand(app);
    const std::string& word = left.front();
    const bool subcommandMissing =
        &command == &app && !app.get_subcommands(std::function<bool(CLI::App*)>()).empty();
    const char* kind = word.size() > 1 && word[0] == '-' ? "option"
                       : subcommandMissing               ? "subcommand"
                                                         : "argument";
    std::fprintf(stderr, "%s: unknown %s '%s'\n\n%s", commandName(command).c_str(), kind,
                 word.c_str(), usage);
    return kExitUsage;
}

void keepFreedMemoryForReuse() {
    // glibc: blocks up to 32 MiB (its largest threshold) come from the heap, which is neither
    // trimmed nor padded by less than 64 MiB at a time.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    // Two heaps, not one per thread: what one thread frees (the parts of a model parsed on the
    // pool, a batch of rows applied on another thread) is mostly reused by another instead of
    // staying in its own heap while the others take new memory. Not one heap for all: the
    // reading and the applying thread then wait for each other's every malloc, and each wait is
    // a system call (1M-row synthetic dump, interleaved runs, one heap -> two: probe summary
    // 0.51 -> 0.36 s, peak 201 -> 233 MB; probe compare 1.46 -> 1.30 s, peak 480 -> 501 MB; a
    // heap per thread: the time of two, compare's peak 546 MB).
    mallopt(M_ARENA_MAX, 2);
}

}  // namespace probe::cli
