// probe_gen_synthetic_dump: writes a synthetic op-level dump of any size (see synthetic_dump.h).
//   probe_gen_synthetic_dump --output DIR [--ops 100000] [--rows 1000000] [--layers 100]
//                            [--nan-layer L --nan-round R] [--tensors] [--running]
// SPDX-License-Identifier: GPL-3.0-or-later
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "analysis/dump_summary.h"
#include "synthetic_dump.h"

namespace {

const char* kUsage =
    "Usage: probe_gen_synthetic_dump --output DIR [--ops N] [--rows N] [--layers N]\n"
    "                                [--nan-layer L --nan-round R] [--tensors] [--running]\n"
    "Writes DIR/atb_dump_data: N ops (layer ops, operations, kernels), N statistic rows over as\n"
    "many rounds as needed (two rows per op per round). --tensors also writes .bin files for the\n"
    "layer-level ops; --running leaves probe_status.json saying running.\n";

}  // namespace

int main(int argc, char** argv) {
    probe::synthetic::SyntheticDumpOptions options;
    options.ops = 100000;
    options.rows = 1000000;
    options.layers = 100;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "probe_gen_synthetic_dump: %s needs a value\n%s", arg.c_str(),
                             kUsage);
                std::exit(64);
            }
            return argv[++i];
        };
        try {
            if (arg == "--output")
                options.output = value();
            else if (arg == "--ops")
                options.ops = std::stoull(value());
            else if (arg == "--rows")
                options.rows = std::stoull(value());
            else if (arg == "--layers")
                options.layers = std::stoi(value());
            else if (arg == "--nan-layer")
                options.nanLayer = std::stoi(value());
            else if (arg == "--nan-round")
                options.nanRound = std::stoi(value());
            else if (arg == "--tensors")
                options.tensors = true;
            else if (arg == "--running")
                options.complete = false;
            else if (arg == "-h" || arg == "--help") {
                std::fputs(kUsage, stdout);
                return 0;
            } else {
                std::fprintf(stderr, "probe_gen_synthetic_dump: unknown option %s\n%s", arg.c_str(),
                             kUsage);
                return 64;
            }
        } catch (const std::logic_error&) {
            std::fprintf(stderr, "probe_gen_synthetic_dump: %s needs a number\n", arg.c_str());
            return 64;
        }
    }
    if (options.output.empty()) {
        std::fputs(kUsage, stderr);
        return 64;
    }
    try {
        const auto start = std::chrono::steady_clock::now();
        const auto result = probe::synthetic::writeSyntheticDump(options);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("wrote %s: %llu ops, %llu rows, %llu rounds, %llu tensor files, %s in %.2f s\n",
                    result.root.c_str(), static_cast<unsigned long long>(result.ops),
                    static_cast<unsigned long long>(result.rows),
                    static_cast<unsigned long long>(result.rounds),
                    static_cast<unsigned long long>(result.tensorFiles),
                    probe::analysis::humanBytes(result.bytes).c_str(), seconds);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "probe_gen_synthetic_dump: %s\n", e.what());
        return 73;
    }
    return 0;
}
