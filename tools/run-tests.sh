#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what is missing, builds, runs
# every test (unit, runtime, PyTorch end-to-end, GUI offscreen, install tree).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/tools/install-deps.sh"
"$here/tools/build.sh"
build=${PROBE_BUILD_DIR:-$here/build}
cd "$build"
ctest -j "${PROBE_JOBS:-2}" --output-on-failure --timeout 900 "$@"
