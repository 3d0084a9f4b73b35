// probe_native_engine: runs the native test model under the probe in its own process, for the
// tests that need a real process (signals, exit, environment variables).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "native_model.h"
#include "probe/probe.h"

int main(int argc, char** argv) {
    int rounds = 3, threads = 1, layers = 2, sleepMs = 0, device = -1;
    bool noStop = false, useEnv = true;
    std::string output, config, readyFile;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--rounds") rounds = std::atoi(value().c_str());
        else if (a == "--threads") threads = std::atoi(value().c_str());
        else if (a == "--layers") layers = std::atoi(value().c_str());
        else if (a == "--sleep-ms") sleepMs = std::atoi(value().c_str());
        else if (a == "--device") device = std::atoi(value().c_str());
        else if (a == "--output") { output = value(); useEnv = false; }
        else if (a == "--config") config = value();
        else if (a == "--ready-file") readyFile = value();
        else if (a == "--no-stop") noStop = true;
        else {
            std::fprintf(stderr, "usage: probe_native_engine [--rounds N] [--threads N] [--layers N] [--sleep-ms N] "
                                 "[--device N] [--output DIR] [--config FILE] [--ready-file FILE] [--no-stop]\n");
            return 64;
        }
    }
    if (probe_start(useEnv ? nullptr : output.c_str(), config.empty() ? nullptr : config.c_str()) != PROBE_OK) {
        std::fprintf(stderr, "probe_start failed: %s\n", probe_last_error());
        return 1;
    }
    if (device >= 0) probe_set_device(device);
    probe_report_model("NativeDecoderModel", nullptr);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            probe::test::NativeModelOptions options;
            options.layers = layers;
            options.prefix = threads > 1 ? "T" + std::to_string(t) + "_" : "";
            probe::test::NativeModel model(options);
            for (int r = 0; r < rounds; ++r) {
                model.run();
                if (t == 0 && r == 0 && !readyFile.empty()) {
                    FILE* f = std::fopen(readyFile.c_str(), "w");
                    if (f) std::fclose(f);
                }
                if (sleepMs) std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
            }
        });
    }
    for (auto& w : workers) w.join();
    std::printf("engine done: %d rounds x %d threads\n", rounds, threads);
    if (!noStop) probe_stop();
    return 0;
}
