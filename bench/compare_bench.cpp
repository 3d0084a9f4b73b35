// How many statistic rows `probe compare` compares per second: two synthetic op-level dumps of
// 1,000,000 rows each (100,000 ops), the second with a planted overflow, compared by their
// statistics on one thread and on all cores (the best of three runs each). Reading the dumps is not
// timed (probe summary's business); pairing, measuring, the walk that finds where divergences are
// born and the report are.
//   cmake --build build --target bench_compare     (or run probe_bench_compare [--rows N])
// SPDX-License-Identifier: GPL-3.0-or-later
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "analysis/compare.h"
#include "analysis/compare_report.h"
#include "analysis/dump_reader.h"
#include "synthetic_dump.h"

namespace {

probe::analysis::DumpIndex read(const std::string& root) {
    std::string error;
    auto index = probe::analysis::readDump(root, &error);
    if (!index) {
        std::fprintf(stderr, "probe_bench_compare: %s\n", error.c_str());
        std::exit(1);
    }
    return std::move(*index);
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t rows = 1000000;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--rows") rows = std::strtoull(argv[i + 1], nullptr, 10);
    const auto dir = std::filesystem::temp_directory_path() /
                     ("probe-bench-compare-" + std::to_string(::getpid()));
    probe::synthetic::SyntheticDumpOptions options;
    options.rows = rows;
    options.ops = rows / 10;
    options.layers = 100;
    std::printf("writing two dumps of %llu rows in %s ...\n", static_cast<unsigned long long>(rows),
                dir.c_str());
    const auto dumps =
        probe::synthetic::writeSyntheticPair(options, dir.string(), options.layers / 2, 3);
    const auto a = read(dumps.reference.root), b = read(dumps.candidate.root);
    std::printf("reference: %zu rows, candidate: %zu rows\n", a.rowCount(), b.rowCount());

    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    double oneThread = 0;
    for (unsigned threads : {1u, cores}) {
        probe::analysis::CompareOptions compareOptions;
        compareOptions.useTensorData = false;
        compareOptions.threads = threads;
        // The best of three: the machine may be shared.
        double seconds = 1e9;
        probe::analysis::CompareResult result;
        for (int repeat = 0; repeat < 3; ++repeat) {
            const auto start = std::chrono::steady_clock::now();
            result = probe::analysis::compareDumps(a, b, compareOptions);
            const std::string report = probe::analysis::formatCompareReport(result);
            seconds = std::min(
                seconds,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        const double rate = static_cast<double>(result.tensors.size()) / seconds;
        if (threads == 1) oneThread = rate;
        std::printf(
            "%u thread(s): %zu tensors compared in %.2f s: %.2f M rows/s (%.2fx one thread); %llu "
            "born here\n",
            threads, result.tensors.size(), seconds, rate / 1e6, rate / oneThread,
            static_cast<unsigned long long>(result.bornHereOps));
        if (!result.firstBornHere) std::printf("  (the planted overflow was not found!)\n");
    }
    std::filesystem::remove_all(dir);
    return 0;
}
