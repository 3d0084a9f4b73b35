// probe config validate FILE [--kind op|api]
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "commands.h"
#include "exit_codes.h"
#include "probe/format/api_config.h"
#include "probe/format/config_issue.h"
#include "probe/format/json_input.h"
#include "probe/format/op_config.h"

namespace probe::cli {
namespace {

const char* kConfigUsage =
    "Usage: probe config validate FILE [--kind op|api]\n"
    "       probe config default [--kind op|api]\n"
    "\n"
    "default prints a config to start from (op: statistics of every layer-level op, every\n"
    "round; api: the code-level defaults).\n"
    "\n"
    "Checks a config file exactly as the runtime would and prints every problem. FILE - reads\n"
    "standard input; any other FILE must be a regular file (a FIFO or device is refused).\n"
    "  op   the injected probe's op-level config (task, dump_enable, exec_range, ids, ...)\n"
    "  api  the code-level API's config (task, dump_path, level, step, rank, ...)\n"
    "Without --kind the kind is recognised from the keys.\n"
    "Exit code 0 when valid, 65 when not, 66 when the file cannot be read.\n";

// "-" or /dev/stdin reads standard input (a pipe there is what was asked for), up to the config
// size limit. Any other path must be a regular file: a FIFO or a device is refused, not read.
std::optional<std::string> readConfigText(const std::string& file, std::string* error) {
    const uint64_t limit = format::kConfigJsonLimits.maxBytes;
    if (file != "-" && file != "/dev/stdin") return format::readTextFile(file, error, limit);
    std::string text;
    char buffer[65536];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) {
        text.append(buffer, n);
        if (text.size() > limit) {
            *error = "more than the limit of " + std::to_string(limit) + " bytes";
            return std::nullopt;
        }
    }
    if (std::ferror(stdin)) {
        *error = "standard input cannot be read";
        return std::nullopt;
    }
    return text;
}

void printIssues(const std::vector<format::ConfigIssue>& issues) {
    for (const auto& issue : issues) std::printf("%s\n", issue.toString().c_str());
}

}  // namespace

int runConfigCommand(const Args& args) {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::fputs(kConfigUsage, args.empty() ? stderr : stdout);
        return args.empty() ? kExitUsage : kExitOk;
    }
    if (args[0] == "default") {
        std::string kind = "op";
        for (size_t i = 1; i < args.size(); ++i) {
            if (args[i] == "--kind" && i + 1 < args.size()) kind = args[++i];
            else if (args[i].rfind("--kind=", 0) == 0) kind = args[i].substr(7);
            else {
                std::fprintf(stderr, "probe config default: unknown argument '%s'\n", args[i].c_str());
                return kExitUsage;
            }
        }
        if (kind == "op") {
            std::fputs(format::OpConfig::startingPoint().toFileText().c_str(), stdout);
        } else if (kind == "api") {
            std::printf("%s\n", format::dumpJson(format::ApiConfig{}.toJson(), 4).c_str());
        } else {
            std::fprintf(stderr, "probe config default: --kind must be 'op' or 'api', not '%s'\n", kind.c_str());
            return kExitUsage;
        }
        return kExitOk;
    }
    if (args[0] != "validate") {
        std::fprintf(stderr, "probe config: unknown subcommand '%s'\n\n%s", args[0].c_str(), kConfigUsage);
        return kExitUsage;
    }
    std::string file, kind;
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--kind" && i + 1 < args.size()) {
            kind = args[++i];
        } else if (args[i].rfind("--kind=", 0) == 0) {
            kind = args[i].substr(7);
        } else if (args[i] == "--help" || args[i] == "-h") {
            std::fputs(kConfigUsage, stdout);
            return kExitOk;
        } else if (args[i].size() > 1 && args[i][0] == '-') {  // "-" alone: standard input
            std::fprintf(stderr, "probe config validate: unknown option '%s'\n\n%s", args[i].c_str(), kConfigUsage);
            return kExitUsage;
        } else if (file.empty()) {
            file = args[i];
        } else {
            std::fprintf(stderr, "probe config validate: only one FILE, got '%s' too\n", args[i].c_str());
            return kExitUsage;
        }
    }
    if (file.empty()) {
        std::fprintf(stderr, "probe config validate: no FILE given\n\n%s", kConfigUsage);
        return kExitUsage;
    }
    if (!kind.empty() && kind != "op" && kind != "api") {
        std::fprintf(stderr, "probe config validate: --kind must be 'op' or 'api', not '%s'\n", kind.c_str());
        return kExitUsage;
    }
    std::string error;
    const std::string shownFile = format::printableText(file, 4096);
    auto text = readConfigText(file, &error);
    if (!text) {
        std::fprintf(stderr, "%s: cannot be read: %s\n", shownFile.c_str(), error.c_str());
        return kExitConfigUnreadable;
    }
    if (kind.empty()) {
        // Text that is not JSON is judged as an op-level config: its error says where it breaks.
        auto parsed = format::parseJson(*text, file, format::kConfigJsonLimits);
        kind = parsed.ok() ? format::guessConfigKind(*parsed.value) : "op";
        if (kind.empty()) {
            std::printf(
                "%s: cannot tell which kind of config this is; use --kind op or --kind api\n",
                shownFile.c_str());
            return kExitConfigInvalid;
        }
    }
    std::vector<format::ConfigIssue> issues;
    bool ok = false;
    if (kind == "op") {
        auto result = format::parseOpConfig(*text, file);
        ok = result.ok();
        issues = std::move(result.issues);
    } else {
        auto result = format::parseApiConfig(*text, file);
        ok = result.ok();
        issues = std::move(result.issues);
    }
    printIssues(issues);
    size_t errors = 0;
    for (const auto& i : issues) errors += i.warning ? 0 : 1;
    const size_t warnings = issues.size() - errors;
    const char* kindName = kind == "op" ? "op-level" : "code-level";
    if (!ok) {
        std::printf("%s: invalid %s config (%zu problem%s)\n", shownFile.c_str(), kindName, errors,
                    errors == 1 ? "" : "s");
        return kExitConfigInvalid;
    }
    if (warnings)
        std::printf("%s: valid %s config (%zu warning%s)\n", shownFile.c_str(), kindName, warnings,
                    warnings == 1 ? "" : "s");
    else
        std::printf("%s: valid %s config\n", shownFile.c_str(), kindName);
    return kExitOk;
}

}  // namespace probe::cli
