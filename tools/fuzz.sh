#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, AddressSanitizer + UndefinedBehaviorSanitizer) in a
# build directory of their own and runs each for a bounded time, niced, one after the other.
# Usage: tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 s, every target)
# Targets: bin_file stat_row atb_dump structure_json op_config api_config msprobe_dump control_message
# Findings (crash-*, leak-*, timeout-*, oom-*) land in $build/fuzz-work/<target>/artifacts; the
# inputs each run found stay in $build/fuzz-work/<target>/corpus for the next run.
# See docs/fuzzing.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${PROBE_FUZZ_BUILD_DIR:-$here/build-fuzz}
seconds=${1:-60}
[ $# -gt 0 ] && shift
all=(bin_file stat_row atb_dump structure_json op_config api_config msprobe_dump control_message)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPROBE_FUZZ=ON -DPROBE_BUILD_GUI=OFF -DPROBE_BUILD_TESTS=OFF -DPROBE_WITH_TORCH=OFF >/dev/null
cmake --build "$build" -j "${PROBE_JOBS:-2}" --target "${targets[@]/#/fuzz_}"

summary=""
status=0
for target in "${targets[@]}"; do
    work=$build/fuzz-work/$target
    mkdir -p "$work/corpus" "$work/artifacts"
    dict=()
    [ -f "$here/fuzz/dict/$target.dict" ] && dict=(-dict="$here/fuzz/dict/$target.dict")
    echo "== fuzz_$target: $seconds s"
    # -timeout: one input taking longer is a finding (a hang); -rss_limit_mb: so is memory
    # growing past 2 GB; -malloc_limit_mb: and so is one allocation over 512 MB.
    set +e
    nice -n 10 "$build/bin/fuzz_$target" "$work/corpus" "$here/fuzz/corpus/$target" "${dict[@]}" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -max_len="${PROBE_FUZZ_MAX_LEN:-16384}" -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
        >"$work/log" 2>&1
    code=$?
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    findings=$(find "$work/artifacts" -type f | wc -l)
    summary+=$(printf '%-16s %12s executions  exit %d  %d finding(s)' "$target" "${runs:-?}" "$code" "$findings")$'\n'
    if [ "$code" -ne 0 ] || [ "$findings" -ne 0 ]; then
        status=1
        tail -40 "$work/log"
    fi
done
printf '\n%s' "$summary"
exit $status
