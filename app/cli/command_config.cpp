// probe config validate FILE [--kind op|api]
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "command_line.h"
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
    if (args.empty()) {
        std::fputs(kConfigUsage, stderr);
        return kExitUsage;
    }
    std::string kind;
    std::vector<std::string> files;
    CLI::App app{"", "probe config"};
    prepareCommandLine(app);
    CLI::App* validate = app.add_subcommand("validate");
    validate->add_option("FILE", files);
    validate->add_option("--kind", kind)->check(oneOf({"op", "api"}));
    CLI::App* startingPoint = app.add_subcommand("default");
    startingPoint->add_option("--kind", kind)->check(oneOf({"op", "api"}));
    if (auto exit = parseCommandLine(app, args, kConfigUsage)) return *exit;
    if (startingPoint->parsed()) {
        if (kind == "api")
            std::printf("%s\n", format::dumpJson(format::ApiConfig{}.toJson(), 4).c_str());
        else
            std::fputs(format::OpConfig::startingPoint().toFileText().c_str(), stdout);
        return kExitOk;
    }
    if (!validate->parsed()) {  // options only, no subcommand
        std::fputs(kConfigUsage, stderr);
        return kExitUsage;
    }
    if (files.empty()) {
        std::fprintf(stderr, "probe config validate: no FILE given\n\n%s", kConfigUsage);
        return kExitUsage;
    }
    if (files.size() > 1) {
        std::fprintf(stderr, "probe config validate: only one FILE, got '%s' too\n",
                     files[1].c_str());
        return kExitUsage;
    }
    const std::string& file = files.front();
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
