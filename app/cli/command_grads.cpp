// probe grads DIR: which parameters' gradients misbehave over training (from the gradient
// monitor's CSV files).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <cstdio>
#include <string>

#include "analysis/grad_monitor.h"
#include "command_line.h"
#include "commands.h"
#include "exit_codes.h"
#include "probe/format/json_input.h"

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
    "Exit code: 0 nothing found, 1 findings or problems (a file or line that could not be read),\n"
    "64 usage, 66 no monitor files in DIR, or no gradient sample in them.\n";

}  // namespace

int runGradsCommand(const Args& args) {
    std::vector<std::string> dirs;
    analysis::GradThresholds thresholds;
    bool json = false;
    double window = thresholds.window, maxLines = 50;
    CLI::App app{"", "probe grads"};
    prepareCommandLine(app);
    app.add_option("DIR", dirs);
    app.add_option("--spike", thresholds.spike)->check(numberCheck(0));
    app.add_option("--vanish", thresholds.vanish)->check(numberCheck(0));
    double explode = 0;
    auto* explodeGiven = app.add_option("--explode", explode)->check(numberCheck(0));
    app.add_option("--window", window)->check(numberCheck(0, 1e9));
    app.add_option("--max", maxLines)->check(numberCheck(0));
    app.add_flag("--json", json);
    if (auto exit = parseCommandLine(app, args, kGradsUsage)) return *exit;
    if (dirs.size() > 1) {
        std::fprintf(stderr, "probe grads: one directory at a time ('%s' and '%s')\n",
                     dirs[0].c_str(), dirs[1].c_str());
        return kExitUsage;
    }
    if (dirs.empty()) {
        std::fputs(kGradsUsage, stderr);
        return kExitUsage;
    }
    const std::string& dir = dirs.front();
    thresholds.window = std::max(1, static_cast<int>(window));
    if (explodeGiven->count() > 0) thresholds.explode = explode;
    std::string error;
    auto data = analysis::readGradMonitor(dir, &error);
    if (!data) {
        std::fprintf(stderr, "probe grads: %s\n", format::printableText(error, 4096).c_str());
        return kExitConfigUnreadable;
    }
    const auto findings = analysis::analyzeGradients(*data, thresholds);
    size_t samples = 0;
    for (const auto& s : data->series) samples += s.samples.size();
    if (json) {
        std::printf("%s\n", analysis::gradFindingsJson(*data, findings).c_str());
    } else {
        std::printf("gradients: %zu parameter(s), %zu sample(s) in %zu file(s) below %s\n",
                    data->series.size(), samples, data->files.size(),
                    format::printableText(dir, 4096).c_str());
        size_t shown = 0;
        for (const auto& f : findings) {
            if (static_cast<double>(shown) >= maxLines) break;
            std::printf("  %s\n", analysis::formatGradFinding(f).c_str());
            ++shown;
        }
        if (findings.size() > shown)
            std::printf("  (%zu more findings; --max to see them)\n", findings.size() - shown);
        // Not "none" of what was never read: a file skipped held a NaN once.
        if (samples == 0)
            std::printf("  no gradient sample could be read: nothing was judged\n");
        else if (findings.empty())
            std::printf(data->problems.empty()
                            ? "  no NaN, spike, vanishing or exploding gradient\n"
                            : "  no NaN, spike, vanishing or exploding gradient in what could be "
                              "read (see the problems)\n");
        for (const auto& p : data->problems)
            std::printf("  problem: %s\n", format::printableText(p, 4096).c_str());
    }
    if (samples == 0 && data->problems.empty()) return kExitConfigUnreadable;  // nothing judged
    return findings.empty() && data->problems.empty() ? kExitOk : kExitFailure;
}

}  // namespace probe::cli
