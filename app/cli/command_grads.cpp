// probe grads DIR: which parameters' gradients misbehave over training (from the gradient
// monitor's CSV files).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analysis/grad_monitor.h"
#include "commands.h"
#include "exit_codes.h"

namespace probe::cli {
namespace {

const char* kGradsUsage =
    "Usage: probe grads DIR [--spike N] [--vanish X] [--explode X] [--window STEPS] [--max LINES] "
    "[--json]\n"
    "\n"
    "Reads the gradient monitor's CSV files below DIR (grad_reduced_<a>-<b>.csv, written by\n"
    "probe_studio.grad_monitor or msprobe's monitor; one folder per rank) and prints, with the "
    "step\n"
    "and the parameter:\n"
    "  nan        a gradient holding NaN (the nans column, or a NaN norm)\n"
    "  inf        an infinite gradient norm\n"
    "  spike      a norm beyond N times the median of its previous WINDOW steps (--spike, default "
    "10;\n"
    "             judged from the 4th step on)\n"
    "  exploding  a norm above X (--explode; off unless given)\n"
    "  vanishing  a norm below X (--vanish, default 1e-8), once per run of steps\n"
    "\n"
    "  --window STEPS  steps in the running median (default 20)\n"
    "  --max LINES     findings printed (default 50; the rest are counted)\n"
    "  --json          the findings as JSON on standard output\n"
    "\n"
    "Exit code: 0 nothing found, 1 findings, 64 usage, 66 no monitor files in DIR.\n";

bool parseDouble(const std::string& text, double& out) {
    char* end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return !text.empty() && end && *end == '\0';
}

}  // namespace

int runGradsCommand(const Args& args) {
    std::string dir;
    analysis::GradThresholds thresholds;
    bool json = false;
    double maxLines = 50;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "-h" || a == "--help") {
            std::fputs(kGradsUsage, stdout);
            return kExitOk;
        }
        if (a == "--json") {
            json = true;
            continue;
        }
        if (a == "--spike" || a == "--vanish" || a == "--explode" || a == "--window" ||
            a == "--max") {
            double v = 0;
            if (i + 1 >= args.size() || !parseDouble(args[i + 1], v) || !(v >= 0)) {
                std::fprintf(stderr, "probe grads: %s needs a number >= 0\n", a.c_str());
                return kExitUsage;
            }
            ++i;
            if (a == "--spike") thresholds.spike = v;
            if (a == "--vanish") thresholds.vanish = v;
            if (a == "--explode") thresholds.explode = v;
            if (a == "--window") thresholds.window = std::max(1, static_cast<int>(v));
            if (a == "--max") maxLines = v;
            continue;
        }
        if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "probe grads: unknown option '%s'\n\n%s", a.c_str(), kGradsUsage);
            return kExitUsage;
        }
        if (!dir.empty()) {
            std::fprintf(stderr, "probe grads: one directory at a time ('%s' and '%s')\n",
                         dir.c_str(), a.c_str());
            return kExitUsage;
        }
        dir = a;
    }
    if (dir.empty()) {
        std::fputs(kGradsUsage, stderr);
        return kExitUsage;
    }
    std::string error;
    auto data = analysis::readGradMonitor(dir, &error);
    if (!data) {
        std::fprintf(stderr, "probe grads: %s\n", error.c_str());
        return kExitConfigUnreadable;
    }
    const auto findings = analysis::analyzeGradients(*data, thresholds);
    if (json) {
        std::printf("%s\n", analysis::gradFindingsJson(*data, findings).c_str());
    } else {
        size_t samples = 0;
        for (const auto& s : data->series) samples += s.samples.size();
        std::printf("gradients: %zu parameter(s), %zu sample(s) in %zu file(s) below %s\n",
                    data->series.size(), samples, data->files.size(), dir.c_str());
        size_t shown = 0;
        for (const auto& f : findings) {
            if (shown >= static_cast<size_t>(maxLines)) break;
            std::printf("  %s\n", analysis::formatGradFinding(f).c_str());
            ++shown;
        }
        if (findings.size() > shown)
            std::printf("  (%zu more findings; --max to see them)\n", findings.size() - shown);
        if (findings.empty()) std::printf("  no NaN, spike, vanishing or exploding gradient\n");
        for (const auto& p : data->problems) std::printf("  problem: %s\n", p.c_str());
    }
    return findings.empty() ? kExitOk : kExitFailure;
}

}  // namespace probe::cli
