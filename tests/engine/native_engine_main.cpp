// probe_native_engine: runs the native test model under the probe in its own process, for the
// tests that need a real process (signals, crashes, exit, environment variables).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "native_model.h"
#include "probe/probe.h"

namespace {

// Dies of `how` the way a program really does (a fault, not a signal sent). Not checked by
// UndefinedBehaviorSanitizer: the null store is the fault wanted, not a report of it.
[[noreturn]] __attribute__((no_sanitize("undefined"))) void crash(const std::string& how) {
    // The compiler may drop what the language leaves undefined: the faults are made volatile
    // (a null store) or written in assembly (a division by zero).
    if (how == "segv") {
        volatile int* volatile nowhere = nullptr;
        *nowhere = 1;
    } else if (how == "fpe") {
#if defined(__x86_64__)
        int quotient = 1, zero = 0;
        asm volatile("cltd\n\tidivl %1" : "+a"(quotient) : "r"(zero) : "edx");
#else
        ::raise(SIGFPE);
#endif
    } else if (how == "ill") {
        __builtin_trap();
    } else if (how == "bus") {
        char path[] = "/tmp/probe-engine-bus-XXXXXX";
        const int fd = ::mkstemp(path);
        ::unlink(path);
        // A mapping beyond the end of an empty file: touching it is a bus error.
        auto* page =
            static_cast<volatile char*>(::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0));
        if (page != MAP_FAILED) (void)page[0];
    }
    std::abort();  // "abort", or a way above that did not fault
}

// "<round> <CLOCK_MONOTONIC ns>\n" with one write(2): on disk whatever kills the process next.
void journal(int fd, int round) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    char line[64];
    const int n = std::snprintf(line, sizeof line, "%d %lld\n", round,
                                static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
    if (::write(fd, line, static_cast<size_t>(n)) < 0) std::perror("journal");
}

// --own-sigint: the program's own SIGINT handler (as Python has one), installed before the probe
// starts; it writes "SIGINT\n" to this file descriptor, with one write(2).
int gSigintFd = -1;
void onOwnSigint(int) {
    static const char kLine[] = "SIGINT\n";
    if (::write(gSigintFd, kLine, sizeof kLine - 1) < 0) {
    }
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 3, threads = 1, layers = 2, sleepMs = 0, device = -1, crashAfter = -1,
        nudgeLayer = -1, lingerMs = 0;
    bool noStop = false, useEnv = true;
    std::string output, config, readyFile, journalFile, crashWith = "segv";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--rounds")
            rounds = std::atoi(value().c_str());
        else if (a == "--threads")
            threads = std::atoi(value().c_str());
        else if (a == "--layers")
            layers = std::atoi(value().c_str());
        else if (a == "--nudge-layer")
            nudgeLayer = std::atoi(value().c_str());
        else if (a == "--sleep-ms")
            sleepMs = std::atoi(value().c_str());
        else if (a == "--device")
            device = std::atoi(value().c_str());
        else if (a == "--output") {
            output = value();
            useEnv = false;
        } else if (a == "--config")
            config = value();
        else if (a == "--ready-file")
            readyFile = value();
        else if (a == "--journal")
            journalFile = value();
        else if (a == "--crash-after")
            crashAfter = std::atoi(value().c_str());
        else if (a == "--crash-with")
            crashWith = value();
        else if (a == "--tag")
            value();  // only seen in the command line
        else if (a == "--no-stop")
            noStop = true;
        else if (a == "--linger-ms")  // after the probe stops, as an interpreter's teardown
            lingerMs = std::atoi(value().c_str());
        else if (a == "--ignore-sigterm")  // as a program that will not be stopped so
            ::signal(SIGTERM, SIG_IGN);
        else if (a == "--own-sigint" || a == "--own-sigint-once") {
            gSigintFd = ::open(value().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            struct sigaction action {};
            action.sa_handler = onOwnSigint;
            sigemptyset(&action.sa_mask);
            // Once: "press Ctrl-C again to force quit".
            if (a == "--own-sigint-once") action.sa_flags = SA_RESETHAND;
            ::sigaction(SIGINT, &action, nullptr);
        } else {
            std::fprintf(
                stderr,
                "usage: probe_native_engine [--rounds N] [--threads N] [--layers N] [--nudge-layer "
                "N] [--sleep-ms N] "
                "[--device N] [--output DIR] [--config FILE] [--ready-file FILE] [--journal FILE] "
                "[--crash-after N [--crash-with segv|abort|fpe|ill|bus]] [--tag TEXT] "
                "[--no-stop] [--linger-ms N] [--own-sigint[-once] FILE] [--ignore-sigterm]\n");
            return 64;
        }
    }
    if (probe_start(useEnv ? nullptr : output.c_str(), config.empty() ? nullptr : config.c_str()) !=
        PROBE_OK) {
        std::fprintf(stderr, "probe_start failed: %s\n", probe_last_error());
        return 1;
    }
    const int journalFd =
        journalFile.empty()
            ? -1
            : ::open(journalFile.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (device >= 0) probe_set_device(device);
    probe_report_model("NativeDecoderModel", nullptr);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            probe::test::NativeModelOptions options;
            options.layers = layers;
            options.nudgeLayer = nudgeLayer;
            options.prefix = threads > 1 ? "T" + std::to_string(t) + "_" : "";
            probe::test::NativeModel model(options);
            for (int r = 0; r < rounds; ++r) {
                if (t == 0 && r == crashAfter) crash(crashWith);
                model.run();
                if (t == 0 && journalFd >= 0) journal(journalFd, r);
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
    if (lingerMs) std::this_thread::sleep_for(std::chrono::milliseconds(lingerMs));
    return 0;
}
