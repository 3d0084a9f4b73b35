#!/usr/bin/env bash
# The demo on a fresh Debian 12 machine: installs what is missing, builds, then opens Probe
# Studio with the bundled LLaMA-style decoder launched and dumping (a planted overflow in
# layer 1 at token step 6 to find). Without a display, runs the same capture with `probe run`
# and prints the summary.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/tools/install-deps.sh"
"$here/tools/build.sh"
build=${PROBE_BUILD_DIR:-$here/build}
demo=$build/share/probe-studio/demo/llama_demo.py
output=${PROBE_DEMO_OUTPUT:-$(mktemp -d "${TMPDIR:-/tmp}/probe-demo-XXXXXX")}
model=(/usr/bin/python3 "$demo" --tokens 16 --nan-layer 1 --nan-step 6)
# The probe (and the app's config editor) rewrite the config file they run with: give them a
# copy, so the shipped demo config stays as it is.
mkdir -p "$output"
config=$output/demo_config.json
cp "$build/share/probe-studio/configs/demo.json" "$config"

if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" && -x "$build/bin/probe-studio" ]]; then
    echo "Opening Probe Studio with the demo model running (dump in $output, config $config)" >&2
    exec "$build/bin/probe-studio" --output "$output" --config "$config" --launch -- "${model[@]}" --delay 0.3
fi
if [[ -x "$build/bin/probe-studio" ]]; then
    echo "No display here: running the same capture with probe run instead of the app." >&2
fi
exec "$build/bin/probe" run --output "$output" --config "$config" -- "${model[@]}"
