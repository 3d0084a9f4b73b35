#!/usr/bin/env bash
# Configures and builds Probe Studio in ./build (or $PROBE_BUILD_DIR), two jobs, ccache when
# present. Extra arguments go to cmake's configure step.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${PROBE_BUILD_DIR:-$here/build}
jobs=${PROBE_JOBS:-2}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$build" -j "$jobs"
