// probe compare REFERENCE CANDIDATE: two runs of the same model, tensor by tensor; where do
// they first diverge?
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "analysis/dump_reader.h"
#include "analysis/compare.h"
#include "commands.h"
#include "exit_codes.h"
#include "probe/format/file_util.h"

namespace probe::cli {
namespace {

const char* kCompareUsage =
    "Usage: probe compare REFERENCE CANDIDATE [--rtol R] [--atol A] [--min-cosine C] [--no-data] [--csv FILE]\n"
    "\n"
    "Compares two dumps of the same model tensor by tensor (op-level dumps: a --output directory,\n"
    "its atb_dump_data, or a directory in it; or msprobe dumps: a dump_path, step or rank folder),\n"
    "matched by round (step), op name, input/output and index, and reports the first tensor, in\n"
    "the reference's execution order, whose numbers diverge:\n"
    "  a statistic (max, min, mean, norm) differs by more than ATOL + RTOL * max(|reference|,\n"
    "  rms), rms being the reference elements' root mean square (defaults 1e-6 and 1e-3),\n"
    "  or a NaN or Inf is in one run only, or, where both runs kept the tensor's data, the cosine\n"
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
    std::optional<analysis::DumpIndex> indexes[2];
    for (int k = 0; k < 2; ++k) {
        std::string error;
        indexes[k] = analysis::readDump(dumps[static_cast<size_t>(k)], &error);
        if (!indexes[k]) {
            std::fprintf(stderr, "probe compare: %s\n", error.c_str());
            return kExitConfigUnreadable;
        }
    }
    std::fprintf(stderr, "probe compare: reference %s\n               candidate %s\n", indexes[0]->root().c_str(),
                 indexes[1]->root().c_str());
    const auto result = analysis::compareDumps(*indexes[0], *indexes[1], options);
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
