// probe overflow DIR: the op where each Inf/NaN (or out-of-range value) is born, per process.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "analysis/compare.h"
#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "analysis/overflow_check.h"
#include "command_line.h"
#include "commands.h"
#include "exit_codes.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::cli {
namespace {

const char* kOverflowUsage =
    "Usage: probe overflow DIR [--range float16|bfloat16] [--all] [--ignore TEXT]... [--output "
    "DIR] [--json]\n"
    "\n"
    "Finds, per process (rank), the op where an overflow is born: its inputs are finite while one\n"
    "of its outputs holds Inf or NaN. Ops after it merely inherit the values. DIR is a dump of\n"
    "either layout (probe run's --output or atb_dump_data; a PrecisionDebugger dump_path or\n"
    "step/rank folder); every process and rank in it is checked (of a rank or step folder,\n"
    "that rank or step alone).\n"
    "\n"
    "  --range FORMAT  also count floating values beyond FORMAT's largest finite value (float16:\n"
    "                  65504, bfloat16: 3.39e38) as overflowed: for a float32 run that should "
    "also\n"
    "                  work in that format. Without it only Inf and NaN count (a float32 value of\n"
    "                  70000 is no overflow in a float32 run).\n"
    "  --all           every birth in every round/step, not only the first of each process\n"
    "  --ignore TEXT   ops whose type contains TEXT are never a birth (repeatable; replaces\n"
    "                  the default: empty, fill, full, parameters_grad; an Inf a program fills in "
    "on\n"
    "                  purpose, as an attention mask, is no overflow)\n"
    "  --output DIR    also write DIR/anomaly_analyze_<ns>.json (msprobe overflow_check's file)\n"
    "  --json          print that JSON on standard output instead of the report\n"
    "\n"
    "Exit code: 0 no overflow, 1 an overflow was found (born in a dumped op, or already in the\n"
    "inputs of the first op dumped) or some of the dump could not be read (the problems say\n"
    "what; no overflow there is no answer), 64 usage, 66 no dump in DIR, nothing in it could\n"
    "be read, or the rank or step folder named holds nothing, 73 the result file cannot be\n"
    "written.\n";

}  // namespace

int runOverflowCommand(const Args& args) {
    std::vector<std::string> dirs, ignore;
    std::string range, outputDir;
    bool json = false;
    analysis::OverflowOptions options;
    CLI::App app{"", "probe overflow"};
    prepareCommandLine(app);
    app.add_option("DIR", dirs);
    const CLI::Validator rangeFormat(
        [](std::string& text) -> std::string {
            if (analysis::parseRangeLimit(text)) return "";
            return "must be float16 or bfloat16, not '" + text + "'";
        },
        "FORMAT");
    auto* rangeGiven = app.add_option("--range", range)->check(rangeFormat);
    app.add_flag("--all", options.allBirths);
    app.add_option("--ignore", ignore)->take_all()->allow_extra_args(false);
    app.add_option("-o,--output", outputDir);
    app.add_flag("--json", json);
    if (auto exit = parseCommandLine(app, args, kOverflowUsage)) return *exit;
    if (dirs.size() > 1) {
        std::fprintf(stderr, "probe overflow: one dump at a time ('%s' and '%s')\n",
                     dirs[0].c_str(), dirs[1].c_str());
        return kExitUsage;
    }
    if (dirs.empty()) {
        std::fputs(kOverflowUsage, stderr);
        return kExitUsage;
    }
    const std::string& dir = dirs.front();
    if (rangeGiven->count() > 0) options.range = *analysis::parseRangeLimit(range);
    if (!ignore.empty()) options.ignore = ignore;  // replaces the default list
    std::string error;
    auto index = analysis::readDump(dir, &error);
    if (!index) {
        std::fprintf(stderr, "probe overflow: %s\n", error.c_str());
        return kExitConfigUnreadable;
    }
    // A rank or step folder named: that part alone is checked, as compare takes it.
    const auto location = partNamed(*index, dir, "probe overflow", "checked");
    options.scope = location.scope;
    const bool whole = location.scope.whole();
    const auto reading = analysis::readingOfPart(*index, location.scope, location.folder);
    if (!whole && reading.rows == 0 && reading.ops == 0) {
        // Nothing read of it: dumped so, or out of reach (a folder the user may not read).
        std::fprintf(
            stderr, "probe overflow: nothing of %s %s\n",
            format::printableText(analysis::describeScope(index->layout(), location.scope), 200)
                .c_str(),
            reading.problems.empty()
                ? "was dumped"
                : ("could be read: " + format::printableText(reading.problems.front(), 400))
                      .c_str());
        return kExitConfigUnreadable;
    }
    auto report = analysis::findOverflowBirths(*index, options);
    report.problems = reading.problems.size();
    // What could not be read may change the answer (a damaged row order file: round by round).
    const auto& problems = reading.problems;
    for (size_t i = 0; i < problems.size() && i < 5; ++i)
        std::fprintf(stderr, "probe overflow: problem: %s\n", problems[i].c_str());
    if (problems.size() > 5)
        std::fprintf(stderr, "probe overflow: (%zu more problems)\n", problems.size() - 5);
    // Overflowed values that no dumped op made came in with the first op dumped: an overflow
    // was found all the same, only not where it was born.
    const bool found = !report.births.empty() ||
                       std::any_of(report.unexplained.begin(), report.unexplained.end(),
                                   [](const std::string& said) { return !said.empty(); });
    if (json)
        std::fputs((analysis::anomalyAnalyzeJson(*index, report) + "\n").c_str(), stdout);
    else
        std::fputs(analysis::formatOverflowReport(*index, report).c_str(), stdout);
    if (!outputDir.empty()) {
        if (!found) {
            // As msprobe: no anomaly, no file.
            std::fprintf(stderr,
                         "probe overflow: no overflow is born in any op; no result file written\n");
        } else {
            const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
            const std::string path = format::absolutePath(outputDir) + "/anomaly_analyze_" +
                                     std::to_string(ns) + ".json";
            int err = format::makeDirectories(format::absolutePath(outputDir));
            if (!err)
                err = format::writeFileAtomically(
                    path, analysis::anomalyAnalyzeJson(*index, report) + "\n");
            if (err) {
                std::fprintf(stderr, "probe overflow: cannot write %s: %s\n", path.c_str(),
                             std::strerror(err));
                return kExitCannotCreate;
            }
            std::fprintf(stderr, "probe overflow: result written to %s\n", path.c_str());
        }
    }
    // "No overflow" holds for what was read: a dump read in part is no clean bill (it exited 0
    // with "no overflow" for a statistic.csv of garbage), and one read not at all no dump.
    return found ? kExitFailure : exitCodeOfRead(reading, whole);
}

}  // namespace probe::cli
