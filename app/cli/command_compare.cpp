// probe compare REFERENCE CANDIDATE: two runs of the same model, tensor by tensor; where do
// they first diverge?
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "analysis/atb_dump.h"
#include "analysis/compare.h"
#include "commands.h"
#include "exit_codes.h"
#include "probe/format/file_util.h"

namespace probe::cli {
namespace {

const char* kCompareUsage =
    "Usage: probe compare REFERENCE CANDIDATE [--rtol R] [--atol A] [--min-cosine C] [--no-data] [--csv FILE]\n"
    "\n"
    "Compares two op-level dumps (each a --output directory, its atb_dump_data, or a directory in\n"
    "it) tensor by tensor, matched by round, op name, input/output and index, and reports the first\n"
    "tensor, in the reference's execution order, whose numbers diverge:\n"
    "  a statistic (max, min, mean, norm) differs by more than ATOL + RTOL * |reference|\n"
    "  (defaults 1e-6 and 1e-3), or, where both runs kept the tensor's data, the cosine\n"
    "  similarity is below C (default 0.999; --no-data compares statistics only).\n"
    "--csv FILE writes every compared tensor with its measures.\n"
    "Exit code: 0 when nothing diverges, 1 when something does, 64 usage, 66 no dump found.\n";

bool parseNumber(const std::string& text, double& out) {
    char* end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return !text.empty() && *end == '\0';
}

}  // namespace

int runCompareCommand(const Args& args) {
    std::vector<std::string> dumps;
    analysis::CompareOptions options;
    std::string csv;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "-h" || a == "--help") {
            std::fputs(kCompareUsage, stdout);
            return kExitOk;
        }
        auto number = [&](double& out) {
            if (i + 1 >= args.size() || !parseNumber(args[i + 1], out)) {
                std::fprintf(stderr, "probe compare: %s needs a number\n", a.c_str());
                return false;
            }
            ++i;
            return true;
        };
        if (a == "--rtol") {
            if (!number(options.rtol)) return kExitUsage;
        } else if (a == "--atol") {
            if (!number(options.atol)) return kExitUsage;
        } else if (a == "--min-cosine") {
            if (!number(options.minCosine)) return kExitUsage;
        } else if (a == "--no-data") {
            options.useTensorData = false;
        } else if (a == "--csv" && i + 1 < args.size()) {
            csv = args[++i];
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "probe compare: unknown option '%s'\n\n%s", a.c_str(), kCompareUsage);
            return kExitUsage;
        } else {
            dumps.push_back(a);
        }
    }
    if (dumps.size() != 2) {
        std::fprintf(stderr, "probe compare: give two dumps (reference, candidate)\n\n%s", kCompareUsage);
        return kExitUsage;
    }
    std::string roots[2];
    for (int k = 0; k < 2; ++k) {
        auto root = analysis::findAtbDumpRoot(dumps[static_cast<size_t>(k)]);
        if (!root) {
            std::fprintf(stderr, "probe compare: no atb_dump_data directory at or above %s\n", dumps[static_cast<size_t>(k)].c_str());
            return kExitConfigUnreadable;
        }
        roots[k] = *root;
    }
    std::fprintf(stderr, "probe compare: reference %s\n               candidate %s\n", roots[0].c_str(), roots[1].c_str());
    const auto result = analysis::compareAtbDumps(roots[0], roots[1], options);
    std::fputs(analysis::formatCompareReport(result).c_str(), stdout);
    if (!csv.empty()) {
        if (int err = format::writeFileAtomically(csv, analysis::compareResultCsv(result))) {
            std::fprintf(stderr, "probe compare: cannot write %s: %s\n", csv.c_str(), std::strerror(err));
            return kExitCannotCreate;
        }
        std::fprintf(stderr, "probe compare: every compared tensor is in %s\n", csv.c_str());
    }
    return result.firstDivergence ? kExitFailure : kExitOk;
}

}  // namespace probe::cli
