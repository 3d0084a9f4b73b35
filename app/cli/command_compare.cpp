// probe compare REFERENCE CANDIDATE: two runs of the same model (or two ranks of one run), op by
// op; where is the first divergence born?
// SPDX-License-Identifier: GPL-3.0-or-later
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "analysis/compare.h"
#include "analysis/compare_report.h"
#include "analysis/dump_reader.h"
#include "command_line.h"
#include "commands.h"
#include "exit_codes.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::cli {
namespace {

const char* kCompareUsage =
    "Usage: probe compare REFERENCE CANDIDATE [options]\n"
    "       probe compare DUMP --rank R --against-rank S [options]   (or --rank R --rank S)\n"
    "\n"
    "Compares two dumps of the same model op by op and names the op where the first divergence\n"
    "is born: its inputs match and an output (or a parameter it uses) differs. Every op after it\n"
    "that receives a differing tensor merely inherits the divergence. A dump is an op-level dump\n"
    "(a --output directory, its atb_dump_data, or a data/<dev_pid>[/<round>] folder in it) or an\n"
    "msprobe dump (a dump_path, a step<N> folder or a step<N>/rank<R> folder); a folder below the\n"
    "dump's root compares that process (rank) or round (step) only.\n"
    "\n"
    "Where both runs kept a tensor's data (.bin, or msprobe's .pt) every element is compared; an\n"
    "element differs when |candidate - reference| > ULPS x epsilon(dtype) x max(|reference|, "
    "scale)\n"
    "+ the dtype's smallest normal number, scale being the root mean square of the op's reference\n"
    "inputs and of the tensor itself. Elsewhere the statistics (max, min, mean, norm) are judged\n"
    "the same way. NaN or Inf in one run only and a different shape always diverge. Details:\n"
    "docs/compare.md.\n"
    "\n"
    "Options:\n"
    "  --rank R            the reference's process only: rank R (msprobe rank<R>; op-level\n"
    "                      data/R_<pid>, the device id, which probe run sets to the rank of a\n"
    "                      torch.distributed job), or a process key (proc4242, 0_4242)\n"
    "  --against-rank S    the candidate's process; with one DUMP, compares two of its ranks\n"
    "                      (a second --rank means the same)\n"
    "  --replicas          data-parallel replicas: only what they must share decides (module\n"
    "                      parameters, the gradients DDP reduced, what collectives return); on\n"
    "                      for two ranks of one dump (--no-replicas: off)\n"
    "  --exact             a tensor diverges when its bytes (statistics) differ at all: for two\n"
    "                      runs on the same machine; also names the first tensor that differs\n"
    "  --ulps DTYPE=N,...  the allowance in units of the dtype's epsilon (defaults float64=1024,\n"
    "                      float32=256, float16=4, bfloat16=2)\n"
    "  --no-data           compare statistics only\n"
    "  --threads N         worker threads (default: one per core)\n"
    "  --csv FILE          every compared tensor with its measures and verdict\n"
    "  --xlsx FILE         msprobe's compare_result layout (Cosine, EucDist, MaxAbsErr, ... or,\n"
    "                      statistics only, Max diff ... NormRelativeErr), plus a sheet of ops\n"
    "  --json              the whole result as JSON on stdout instead of the report\n"
    "  FILE '-' is standard output (the report then goes to standard error); a link is\n"
    "  followed, a FIFO or device written in place.\n"
    "Exit code: 0 nothing diverges, 1 something diverges (or ran in one run only, or could not\n"
    "be read: said as notes), 65 nothing pairs up (different models, layouts, rounds or ranks;\n"
    "as replicas: nothing they must agree on), 64 usage, 66 no dump found, 73 cannot write a\n"
    "file.\n";

// sysexits' EX_DATAERR: the dumps were read, but nothing in them can be compared.
constexpr int kExitNothingToCompare = kExitConfigInvalid;

bool parseUlps(const std::string& text, analysis::NoiseFloorUlps& ulps, std::string& why) {
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const std::string item =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const size_t eq = item.find('=');
        const auto value =
            eq == std::string::npos ? std::nullopt : parseNumber(item.substr(eq + 1));
        if (!value || *value < 0) {
            why = "'" + item + "' is not DTYPE=N (N a number >= 0)";
            return false;
        }
        const std::string dtype = item.substr(0, eq);
        if (dtype == "float64" || dtype == "double") {
            ulps.float64 = *value;
        } else if (dtype == "float32" || dtype == "float") {
            ulps.float32 = *value;
        } else if (dtype == "float16" || dtype == "half") {
            ulps.float16 = *value;
        } else if (dtype == "bfloat16" || dtype == "bf16") {
            ulps.bfloat16 = *value;
        } else {
            why = "unknown dtype '" + dtype + "' (float64, float32, float16, bfloat16)";
            return false;
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return true;
}

// Progress on stderr: on a terminal once it takes more than half a second, elsewhere a line
// every ten seconds once it takes that long.
class Progress {
public:
    Progress() : tty_(::isatty(STDERR_FILENO) == 1), start_(Clock::now()), last_(start_) {}
    void operator()(uint64_t done, uint64_t total) {
        // The clock costs microseconds on some machines: read for one call in 16 (and the last).
        if (++calls_ % 16 != 0 && done < total) return;
        const auto now = Clock::now();
        const double elapsed = seconds(now - start_);
        if (tty_) {
            if (elapsed < 0.5 || (seconds(now - last_) < 0.1 && done < total)) return;
            std::fprintf(stderr, "\rprobe compare: %llu/%llu tensors (%.0f%%)",
                         static_cast<unsigned long long>(done),
                         static_cast<unsigned long long>(total),
                         total ? 100.0 * double(done) / double(total) : 100.0);
            shown_ = true;
        } else {
            if (elapsed < 10 || seconds(now - last_) < 10) return;
            std::fprintf(stderr, "probe compare: %llu/%llu tensors compared\n",
                         static_cast<unsigned long long>(done),
                         static_cast<unsigned long long>(total));
        }
        last_ = now;
    }
    void finish() {
        if (shown_) std::fputs("\r\033[K", stderr);
    }

private:
    using Clock = std::chrono::steady_clock;
    static double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
    bool tty_;
    bool shown_ = false;
    uint64_t calls_ = 0;
    Clock::time_point start_, last_;
};

// "<root>", or "<root> (only rank0, step 0)": the part as summary and overflow say it.
std::string describeLocation(const analysis::DumpLocation& location, analysis::DumpLayout layout) {
    std::string out = format::printableText(location.root, 2000);
    if (!location.scope.whole())
        out += " (only " +
               format::printableText(analysis::describeScope(layout, location.scope), 200) + ")";
    return out;
}

}  // namespace

int runCompareCommand(const Args& args) {
    std::vector<std::string> dumps;
    analysis::CompareOptions options;
    std::string csv, xlsx, againstRank, ulps;
    std::vector<std::string> ranks;  // a second --rank names the candidate's rank
    bool json = false;
    CLI::App app{"", "probe compare"};
    prepareCommandLine(app);
    app.add_option("DUMP", dumps);
    app.add_option("--rank", ranks)->allow_extra_args(false);  // one value per --rank
    app.add_option("--against-rank", againstRank);
    auto* replicas = app.add_flag("--replicas,!--no-replicas", options.replicas);
    app.add_flag("--exact", options.exact);
    auto* ulpsGiven = app.add_option("--ulps", ulps);
    app.add_option("--threads", options.threads)->check(numberCheck(1, 256, true));
    app.add_flag("!--no-data", options.useTensorData);
    app.add_option("--csv", csv);
    app.add_option("--xlsx", xlsx);
    app.add_flag("--json", json);
    // Gone options, named so that their users learn what replaced them.
    std::string goneValue;
    std::vector<std::pair<const char*, CLI::Option*>> gone;
    for (const char* name : {"--rtol", "--atol", "--min-cosine"})
        gone.emplace_back(name, app.add_option(name, goneValue)->expected(0, 1)->group(""));
    if (auto exit = parseCommandLine(app, args, kCompareUsage)) return *exit;
    for (const auto& [name, option] : gone) {
        if (option->count() == 0) continue;
        std::fprintf(stderr,
                     "probe compare: %s is gone: a noise floor per dtype replaced the tolerances "
                     "(see --ulps and docs/compare.md)\n",
                     name);
        return kExitUsage;
    }
    std::string why;
    if (ulpsGiven->count() > 0 && !parseUlps(ulps, options.ulps, why)) {
        std::fprintf(stderr, "probe compare: --ulps %s: %s\n", ulps.c_str(), why.c_str());
        return kExitUsage;
    }
    const bool replicasSet = replicas->count() > 0;
    if (ranks.size() > 2 || (ranks.size() == 2 && !againstRank.empty())) {
        std::fprintf(stderr,
                     "probe compare: name two ranks at most: --rank R --rank S (or --rank R "
                     "--against-rank S)\n");
        return kExitUsage;
    }
    const std::string rank = ranks.empty() ? std::string() : ranks.front();
    if (ranks.size() == 2) againstRank = ranks.back();
    if (dumps.size() == 1 && !againstRank.empty()) dumps.push_back(dumps.front());
    if (dumps.size() != 2) {
        std::fprintf(
            stderr,
            "probe compare: give two dumps (reference, candidate), or one dump with --rank and "
            "--against-rank\n\n%s",
            kCompareUsage);
        return kExitUsage;
    }
    if (csv == "-" && xlsx == "-") {
        std::fprintf(stderr, "probe compare: --csv and --xlsx cannot both go to standard output\n");
        return kExitUsage;
    }
    // Said before the dumps are read and compared, which can take minutes.
    for (const std::string& file : {csv, xlsx}) {
        if (file.empty()) continue;
        if (const int err = format::checkUserFileWritable(file)) {
            std::fprintf(stderr, "probe compare: cannot write %s: %s\n", file.c_str(),
                         std::strerror(err));
            return kExitCannotCreate;
        }
    }
    // A result file on standard output ("-") has it alone: the report goes to standard error.
    FILE* const reportStream = csv == "-" || xlsx == "-" ? stderr : stdout;
    analysis::DumpLocation locations[2];
    for (int k = 0; k < 2; ++k) {
        std::string error;
        auto location = analysis::locateDump(dumps[static_cast<size_t>(k)], &error);
        if (!location) {
            std::fprintf(stderr, "probe compare: %s\n", error.c_str());
            return kExitConfigUnreadable;
        }
        locations[k] = std::move(*location);
    }
    if (!rank.empty()) locations[0].scope.process = rank;
    if (!againstRank.empty()) locations[1].scope.process = againstRank;
    options.referenceScope = locations[0].scope;
    options.candidateScope = locations[1].scope;
    const bool sameDump = locations[0].root == locations[1].root;
    if (sameDump && locations[0].scope.process == locations[1].scope.process &&
        locations[0].scope.round == locations[1].scope.round) {
        std::fprintf(
            stderr,
            "probe compare: both sides are the same part of %s: choose two ranks (--rank R "
            "--against-rank S, or two rank folders) or two dumps\n",
            locations[0].root.c_str());
        return kExitUsage;
    }
    if (sameDump && !replicasSet && locations[0].scope.process != locations[1].scope.process)
        options.replicas = true;

    keepFreedMemoryForReuse();
    std::vector<std::string> roots{locations[0].root}, errors;
    if (!sameDump) roots.push_back(locations[1].root);
    // Side by side; kept until exit rather than freed row by row (see keepUntilExit).
    auto& indexes = keepUntilExit(analysis::readDumps(roots, &errors));
    for (size_t k = 0; k < indexes.size(); ++k) {
        if (!indexes[k]) {
            std::fprintf(stderr, "probe compare: %s\n", errors[k].c_str());
            return kExitConfigUnreadable;
        }
    }
    const analysis::DumpIndex& reference = *indexes[0];
    const analysis::DumpIndex& candidate = sameDump ? *indexes[0] : *indexes[1];
    std::fprintf(stderr, "probe compare: reference %s\n               candidate %s\n",
                 describeLocation(locations[0], reference.layout()).c_str(),
                 describeLocation(locations[1], candidate.layout()).c_str());
    Progress progress;
    options.progress = [&](uint64_t done, uint64_t total) { progress(done, total); };
    const auto& result = keepUntilExit(analysis::compareDumps(reference, candidate, options));
    progress.finish();

    std::fputs(json ? analysis::compareResultJson(result).c_str()
                    : analysis::formatCompareReport(result).c_str(),
               reportStream);
    if (result.nothingCompared()) {
        for (const std::string& file : {csv, xlsx})
            if (!file.empty())
                std::fprintf(stderr, "probe compare: nothing was compared; %s not written\n",
                             file.c_str());
        return kExitNothingToCompare;
    }
    if (!csv.empty()) {
        if (int err = format::writeUserFile(csv, analysis::compareResultCsv(result))) {
            std::fprintf(stderr, "probe compare: cannot write %s: %s\n", csv.c_str(),
                         std::strerror(err));
            return kExitCannotCreate;
        }
        std::fprintf(stderr, "probe compare: every compared tensor is in %s\n", csv.c_str());
    }
    if (!xlsx.empty()) {
        std::string error;
        if (!analysis::writeCompareXlsx(result, xlsx, &error)) {
            std::fprintf(stderr, "probe compare: %s\n", error.c_str());
            return kExitCannotCreate;
        }
        std::fprintf(stderr, "probe compare: msprobe's compare_result layout is in %s\n",
                     xlsx.c_str());
    }
    // Replicas with nothing they must share compared: no verdict, as when nothing pairs up
    // (the tensors compared are in the files all the same).
    if (result.replicasJudgedNothing()) return kExitNothingToCompare;
    // Runs that did not run the same ops (one stopped early, or took another path) are not
    // the same, though nothing that both ran diverges; nor are runs partly unread (a row or a
    // tensor file that could not be read: "no tensor diverges of those that could be read").
    return result.diverges() || !result.pairsEverything() || !result.problems.empty() ? kExitFailure
                                                                                      : kExitOk;
}

}  // namespace probe::cli
