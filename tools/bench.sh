#!/usr/bin/env bash
# Every performance figure against its target, in one run (about 4 minutes on two cores once built):
# builds what the benchmarks need in ./build (or $PROBE_BUILD_DIR), then runs bench/run_all.py.
# Extra arguments go to run_all.py (--only probe,api,writer,kernels,readers,app; --rounds N).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${PROBE_BUILD_DIR:-$here/build}
"$here/tools/install-deps.sh"
"$here/tools/build.sh" >/dev/null
exec /usr/bin/python3 "$here/bench/run_all.py" --build "$build" "$@"
