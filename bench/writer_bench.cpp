// probe_bench_writer: how fast the probe writes tensors (task "tensor") next to a plain
// sequential write of the same bytes to the same disk, and how much memory its queue holds
// meanwhile. Prints one JSON line for bench/run_all.py.
//   probe_bench_writer [--dir DIR] [--tensors N] [--mib M]
// SPDX-License-Identifier: GPL-3.0-or-later
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "probe/probe.h"

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

long statusKiB(const char* key) {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    const size_t n = std::strlen(key);
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, key, n) == 0) kb = std::strtol(line + n, nullptr, 10);
    std::fclose(f);
    return kb;
}

// The baseline: each tensor's bytes written to a file of its own with write(2), one after
// another, as plainly as a program can: the same count and size of files (the probe's have a
// .bin header of about 110 bytes more) from the same source buffer, into a fresh folder. The
// probe does more for the same bytes: a copy into its queue on the op's thread, a temporary
// name and a rename per file, a round folder and a statistic.csv per op (every op is a round
// here), and its start and stop (threads, status file). Neither side syncs: both time the bytes
// handed to the kernel, from a synced page cache.
double plainWrite(const std::string& dir, const std::vector<uint8_t>& data, int tensors) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < tensors; ++i) {
        const std::string path = dir + "/plain" + std::to_string(i) + ".bin";
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) return -1;
        size_t done = 0;
        while (done < data.size()) {
            const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
            if (n <= 0) break;
            done += static_cast<size_t>(n);
        }
        ::close(fd);
    }
    return seconds(start);
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir;
    int tensors = 48, mib = 16;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else if (a == "--tensors" && i + 1 < argc)
            tensors = std::atoi(argv[++i]);
        else if (a == "--mib" && i + 1 < argc)
            mib = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: probe_bench_writer [--dir DIR] [--tensors N] [--mib M]\n");
            return 64;
        }
    }
    bool made = false;
    if (dir.empty()) {
        char pattern[] = "/tmp/probe-bench-writer-XXXXXX";
        if (!::mkdtemp(pattern)) return 73;
        dir = pattern;
        made = true;
    }
    const std::string config = dir + "/config.json";
    if (FILE* f = std::fopen(config.c_str(), "w")) {
        std::fputs("{\"task\": \"tensor\", \"dump_enable\": true, \"exec_range\": \"all\"}\n", f);
        std::fclose(f);
    }
    const size_t bytes = static_cast<size_t>(mib) << 20;
    std::vector<uint8_t> data(bytes);
    for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
    const long baseKiB = statusKiB("VmRSS:");

    // Interleaved, each side first in turn, from a synced page cache; the best of each.
    double plainBest = 1e30, probeBest = 1e30;
    auto timePlain = [&](int rep) {
        const std::string plainDir = dir + "/plain" + std::to_string(rep);
        ::mkdir(plainDir.c_str(), 0755);
        ::sync();
        const double p = plainWrite(plainDir, data, tensors);
        if (p > 0 && p < plainBest) plainBest = p;
        std::system(("rm -rf '" + plainDir + "'").c_str());
    };
    auto timeProbe = [&](int rep) {
        const std::string out = dir + "/probe" + std::to_string(rep);
        ::setenv("PROBE_QUIET", "1", 1);
        ::setenv("PROBE_CONTROL", "0", 1);
        ::sync();
        const auto start = std::chrono::steady_clock::now();
        if (probe_start(out.c_str(), config.c_str()) != PROBE_OK) {
            std::fprintf(stderr, "probe_start: %s\n", probe_last_error());
            std::exit(1);
        }
        const int64_t dims[1] = {static_cast<int64_t>(bytes / 4)};
        for (int i = 0; i < tensors; ++i) {
            probe_op_begin("Layer", "Layer", nullptr);
            probe_op_tensor(PROBE_OUTPUT, 0, nullptr, PROBE_DTYPE_FLOAT, PROBE_FORMAT_ND, dims, 1,
                            data.data(), bytes);
            probe_op_end();
        }
        probe_stop();  // drains the queue: every byte is handed to the kernel
        const double t = seconds(start);
        if (t < probeBest) probeBest = t;
        std::system(("rm -rf '" + out + "'").c_str());
    };
    for (int rep = 0; rep < 4; ++rep) {
        if (rep % 2 == 0) {
            timePlain(rep);
            timeProbe(rep);
        } else {
            timeProbe(rep);
            timePlain(rep);
        }
    }
    const long peakKiB = statusKiB("VmHWM:");
    const double total = static_cast<double>(bytes) * tensors;
    std::printf(
        "{\"bytes\": %.0f, \"plain_s\": %.4f, \"probe_s\": %.4f, \"plain_mb_s\": %.1f, "
        "\"probe_mb_s\": %.1f, "
        "\"queue_peak_mib\": %.1f}\n",
        total, plainBest, probeBest, total / plainBest / 1e6, total / probeBest / 1e6,
        static_cast<double>(peakKiB - baseKiB) / 1024.0);
    if (made) std::system(("rm -rf '" + dir + "'").c_str());
    return 0;
}
