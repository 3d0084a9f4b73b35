// probe: the command line tool (run a model under the probe, check configs, summarise dumps).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "command_line.h"
#include "commands.h"
#include "exit_codes.h"
#include "probe_config.h"

namespace {

const char* kUsage =
    "Usage: probe <command> [options]\n"
    "\n"
    "Find where a neural network's numbers go wrong.\n"
    "\n"
    "Commands:\n"
    "  run [--output DIR] [--config FILE] [--] COMMAND [ARGS...]\n"
    "                    Run COMMAND (a PyTorch program, unchanged) with the probe injected and\n"
    "                    dump what the config selects; prints a summary at the end.\n"
    "  summary DIR       What a dump holds: ops, rounds, rows, files, the first NaN/Inf.\n"
    "  compare REF CAND  Two runs (or two ranks) op by op: where is the first divergence born?\n"
    "  overflow DIR      Where each Inf/NaN is born: the op with finite inputs and an overflowed\n"
    "                    output, per process/rank (msprobe overflow_check's anomaly_analyze "
    "JSON).\n"
    "  replay DIR [--op ID|NAME] [--round N]\n"
    "                    Re-run dumped aten ops on the CPU (float64 and their own dtype): is the "
    "op\n"
    "                    itself wrong, or does it inherit bad inputs?\n"
    "  bisect [--target autocast-bf16 | --target-env K=V] -- COMMAND [ARGS...]\n"
    "                    Which layers and ops, kept at reference precision, remove the divergence\n"
    "                    of a program's output at lower precision.\n"
    "  grads DIR         Gradient spikes, vanishing/exploding norms and NaN per parameter and "
    "step\n"
    "                    (from probe_studio.grad_monitor's CSV files).\n"
    "  config validate FILE [--kind op|api]\n"
    "                    Check a config file exactly as the runtime would and print every\n"
    "                    problem (file, key, what is wrong, accepted values).\n"
    "  config default    Print the config probe run uses without --config (statistics of every\n"
    "                    layer-level op, every round), to start one of your own from.\n"
    "\n"
    "Options:\n"
    "  -h, --help        Show this help (also: probe <command> --help)\n"
    "  -V, --version     Show the version\n"
    "\n"
    "Exit codes: 0 success, 1 problems found, 64 usage error, 65 invalid config,\n"
    "66 unreadable input, 69 no torch, 70 internal error, 73 output not writable,\n"
    "76 torch version mismatch, 127 command not found. `probe run` returns the command's own.\n";

// What was printed must have reached standard output: a report lost to a full disk or a
// closed pipe (`probe summary D > /dev/full`) made an exit code of 0 say it had been delivered.
// `probe run` keeps its command's exit code and says so.
int withStandardOutputDelivered(const std::string& command, int code) {
    errno = 0;
    if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
    std::fprintf(stderr, "probe %s: cannot write standard output%s%s\n", command.c_str(),
                 errno ? ": " : "", errno ? std::strerror(errno) : "");
    return command == "run" || (code != probe::cli::kExitOk && code != probe::cli::kExitFailure)
               ? code
               : probe::cli::kExitCannotCreate;
}

int runCommand(const std::string& command, const probe::cli::Args& rest) {
    using namespace probe::cli;
    if (command == "config") return runConfigCommand(rest);
    if (command == "run") return runRunCommand(rest);
    if (command == "summary") return runSummaryCommand(rest);
    if (command == "compare") return runCompareCommand(rest);
    if (command == "overflow") return runOverflowCommand(rest);
    if (command == "replay") return runReplayCommand(rest);
    if (command == "bisect") return runBisectCommand(rest);
    if (command == "grads") return runGradsCommand(rest);
    std::fprintf(stderr, "probe: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace probe::cli;
    try {
        Args args(argv + 1, argv + argc);
        if (args.empty()) {
            std::fputs(kUsage, stderr);
            return kExitUsage;
        }
        const std::string command = args.front();
        if (command == "-h" || command == "--help" || command == "help") {
            std::fputs(kUsage, stdout);
            return kExitOk;
        }
        if (command == "-V" || command == "--version") {
            std::printf("probe %s\n", PROBE_VERSION_STRING);
            return kExitOk;
        }
        return withStandardOutputDelivered(command,
                                           runCommand(command, Args(args.begin() + 1, args.end())));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "probe: internal error: %s\n", e.what());
        return kExitInternal;
    }
}
