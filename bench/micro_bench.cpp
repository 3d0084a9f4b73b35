// probe_micro_bench: the hot kernels alone, with Google Benchmark. The memory-read baseline is
// a plain pass over the same bytes, so the statistics kernel's speed reads as a fraction of
// what the memory can deliver (bench/run_all.py prints that ratio).
//   build/bin/probe_micro_bench [--benchmark_filter=Stats]
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "probe/format/statistic_csv.h"
#include "probe/format/tensor_stats.h"

namespace {

using probe::format::DType;

// Larger than any cache of this machine: what a big activation costs.
constexpr size_t kBufferBytes = size_t{256} << 20;

const std::vector<uint8_t>& buffer(DType dtype) {
    static std::vector<uint8_t> f32, f16, bf16;
    auto& bytes = dtype == DType::Float ? f32 : dtype == DType::Float16 ? f16 : bf16;
    if (!bytes.empty()) return bytes;
    bytes.resize(kBufferBytes);
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal;
    if (dtype == DType::Float) {
        auto* p = reinterpret_cast<float*>(bytes.data());
        for (size_t i = 0; i < kBufferBytes / 4; ++i) p[i] = normal(rng);
    } else {
        auto* p = reinterpret_cast<uint16_t*>(bytes.data());
        for (size_t i = 0; i < kBufferBytes / 2; ++i) {
            float v = normal(rng);
            uint32_t bits;
            std::memcpy(&bits, &v, 4);
            // bf16: the top half; float16: a finite half with the same sign (1.0 .. 2.0).
            p[i] =
                dtype == DType::BF16
                    ? static_cast<uint16_t>(bits >> 16)
                    : static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x3c00u | (bits & 0x3ffu));
        }
    }
    return bytes;
}

// What the memory delivers to one core: 64-bit words summed with independent accumulators.
void BM_MemoryRead(benchmark::State& state) {
    const auto& bytes = buffer(DType::Float);
    const auto* words = reinterpret_cast<const uint64_t*>(bytes.data());
    const size_t n = bytes.size() / 8;
    for (auto _ : state) {
        uint64_t a = 0, b = 0, c = 0, d = 0;
        for (size_t i = 0; i < n; i += 4) {
            a += words[i];
            b += words[i + 1];
            c += words[i + 2];
            d += words[i + 3];
        }
        benchmark::DoNotOptimize(a + b + c + d);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                            static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_MemoryRead)->Unit(benchmark::kMillisecond)->MinTime(0.5);

void BM_Stats(benchmark::State& state, DType dtype) {
    const auto& bytes = buffer(dtype);
    const uint64_t count = bytes.size() / probe::format::dtypeSize(dtype);
    for (auto _ : state)
        benchmark::DoNotOptimize(probe::format::computeTensorStats(dtype, bytes.data(), count));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                            static_cast<int64_t>(bytes.size()));
}
BENCHMARK_CAPTURE(BM_Stats, float32, DType::Float)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_Stats, float16, DType::Float16)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_Stats, bfloat16, DType::BF16)->Unit(benchmark::kMillisecond)->MinTime(0.5);

// Statistics of the first N floats of the buffer, in cache: for small tensors the fixed cost of
// one call (a bias, a LayerNorm's mean); for a weight (a decoder reads each of its weights once
// per token, the probe's statistics just before) the bytes per second from L2, where the
// kernel's own speed shows, not the memory's.
void BM_StatsOfFloats(benchmark::State& state) {
    const auto& bytes = buffer(DType::Float);
    const auto count = static_cast<uint64_t>(state.range(0));
    for (auto _ : state)
        benchmark::DoNotOptimize(
            probe::format::computeTensorStats(DType::Float, bytes.data(), count));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                            static_cast<int64_t>(count * sizeof(float)));
}
BENCHMARK(BM_StatsOfFloats)->Arg(64)->Arg(1024)->Arg(256 * 688);

probe::format::StatRow typicalRow() {
    probe::format::StatRow row;
    row.devicePid = "0_39943";
    row.round = 12;
    row.opName = "layers.3/self_attn/q_proj/linear";
    row.opType = "aten::linear";
    row.opId = "4_1_0_2";
    row.isOutput = true;
    row.index = "0";
    row.dtype = "float";
    row.format = "nd";
    row.shape = "1x32x256";
    row.max = 3.1415926;
    row.min = -2.718281;
    row.mean = 0.0012345;
    row.norm = 45.678901;
    return row;
}

void BM_FormatStatRow(benchmark::State& state) {
    const auto row = typicalRow();
    for (auto _ : state) benchmark::DoNotOptimize(probe::format::formatStatRow(row));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_FormatStatRow);

void BM_ParseStatRow(benchmark::State& state) {
    const std::string line = probe::format::formatStatRow(typicalRow());
    std::string error;
    for (auto _ : state) benchmark::DoNotOptimize(probe::format::parseStatRow(line, &error));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                            static_cast<int64_t>(line.size()));
}
BENCHMARK(BM_ParseStatRow);

void BM_ContentHash64(benchmark::State& state) {
    const auto& bytes = buffer(DType::Float);
    const size_t n = size_t{16} << 20;
    for (auto _ : state) benchmark::DoNotOptimize(probe::format::contentHash64(bytes.data(), n));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
BENCHMARK(BM_ContentHash64)->Unit(benchmark::kMillisecond);

void BM_Crc32(benchmark::State& state) {
    const auto& bytes = buffer(DType::Float);
    const size_t n = size_t{16} << 20;
    for (auto _ : state) benchmark::DoNotOptimize(probe::format::crc32(bytes.data(), n));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
BENCHMARK(BM_Crc32)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
