#!/usr/bin/env bash
# The part of the suite CI also runs under AddressSanitizer + UndefinedBehaviorSanitizer: the
# format library, which parses every untrusted input (configs, socket lines, .bin headers,
# statistic.csv, structure files), with its unit tests and the replays of the fuzz targets'
# corpora. A build folder of its own (build-asan-subset; objects with and without sanitizers do
# not mix), no GUI, no PyTorch adapter, only the targets these tests need. The whole suite under
# ASan is docs/sanitizers.md's command (over an hour on two cores: beyond CI's budget).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${PROBE_ASAN_BUILD_DIR:-$here/build-asan-subset}
jobs=${PROBE_JOBS:-2}
# -O1 -g1: what ASan's reports need (line tables); a cold build takes less than half the CPU
# time of -O2 -g (300 s against 680 s, gcc 12); assertions stay on.
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DPROBE_SANITIZE=address,undefined \
    -DPROBE_BUILD_GUI=OFF -DPROBE_WITH_TORCH=OFF >/dev/null
targets=(test_format)
while IFS= read -r target; do
    targets+=("$target")
done < <(sed -n 's/^ *\([a-z_]*\):probe_[a-z]*)\{0,1\}$/fuzz_replay_\1/p' "$here/fuzz/CMakeLists.txt")
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
cd "$build"
# Only what was built: test_format's tests (GoogleTest suites discovered from it) and the replays.
suites=$("$build/bin/test_format" --gtest_list_tests | sed -n 's/^\([A-Za-z0-9_]*\)\.$/\1/p' | paste -sd'|')
ctest -j "$jobs" --output-on-failure --timeout 900 -R "^((${suites})[./]|fuzz\.replay\.)"
