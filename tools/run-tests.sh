#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what is missing, builds, runs
# every test (unit, runtime, PyTorch end-to-end, GUI offscreen, install tree), then the readers
# of untrusted input again under AddressSanitizer + UndefinedBehaviorSanitizer
# (tools/run-sanitized-subset.sh, about 3 minutes cold on two cores; skipped when ctest
# arguments select tests, or with PROBE_SKIP_SANITIZERS=1).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/tools/install-deps.sh"
"$here/tools/build.sh"
build=${PROBE_BUILD_DIR:-$here/build}
(cd "$build" && ctest -j "${PROBE_JOBS:-2}" --output-on-failure --timeout 900 "$@")
if [ $# -eq 0 ] && [ "${PROBE_SKIP_SANITIZERS:-0}" != 1 ]; then
    "$here/tools/run-sanitized-subset.sh"
fi
