// A synthetic op-level dump (docs/formats.md, the op-level layout), written with the format
// library: a layered op tree of any size, statistic rows over several rounds, structure files,
// optionally real tensor files, and an optional planted overflow. For tests of the readers and
// the application, and for the benchmarks at scale (bench/ links this; tests link no bench
// code).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <string>

namespace probe::synthetic {

struct SyntheticDumpOptions {
    std::string output;     // the dump goes to <output>/atb_dump_data
    uint64_t ops = 1000;    // ops in the tree (layer-level ops, operations, kernels)
    uint64_t rows = 10000;  // statistic rows in all (two per op per round: input 0, output 0)
    int layers = 10;        // layer-level ops; the rest are spread below them
    std::string devicePid = "0_4242";
    // Plant an overflow: this layer's output turns +inf at this round, every later layer NaN.
    int nanLayer = -1, nanRound = -1;
    bool tensors = false;  // write .bin files for the layer-level ops' tensors
    bool complete = true;  // probe_status.json says complete (else running)
};

struct SyntheticDumpResult {
    std::string root;  // the atb_dump_data directory
    uint64_t ops = 0, rows = 0, rounds = 0, tensorFiles = 0, bytes = 0;
};

// Throws std::runtime_error when the output cannot be written.
SyntheticDumpResult writeSyntheticDump(const SyntheticDumpOptions& options);

// Two runs to compare: `options` written to <directory>/reference, and again to
// <directory>/candidate with an overflow planted in layer `nanLayer` at round `nanRound`
// (options.output and its planted overflow are ignored).
struct SyntheticPair {
    SyntheticDumpResult reference, candidate;
};
SyntheticPair writeSyntheticPair(SyntheticDumpOptions options, const std::string& directory,
                                 int nanLayer, int nanRound);

}  // namespace probe::synthetic
