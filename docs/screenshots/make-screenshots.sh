#!/usr/bin/env bash
# Remakes the screenshots in this folder from a real dump of the demo model, with the planted
# overflow (layer 1 overflows at step 2; NaN follows). Needs a build (with PyTorch) and xvfb.
#   docs/screenshots/make-screenshots.sh [BUILD_DIR]
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
work=$(mktemp -d -t probe-studio-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Every op, statistics and tensors.
echo '{"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true}' > "$work/config.json"
"$build/bin/probe" run --output "$work/dump" --config "$work/config.json" -- \
    /usr/bin/python3 "$build/share/probe-studio/demo/llama_demo.py" --nan-layer 1 --nan-step 2 > "$work/run.log"

shot() {  # shot NAME ARGS...: the main window, then a smaller 256-colour PNG
    local name=$1
    shift
    xvfb-run -a -s "-screen 0 1600x1000x24" "$build/bin/probe-studio" "$work/dump" --size 1400x860 \
        --screenshot "$work/$name.png" "$@"
    convert "$work/$name.png" -colors 256 "PNG8:$here/$name.png"
}
# Opens where the first NaN appears: its op, round and tensors.
shot tree
# Norm of layer 1's output (orange: Inf at step 2) with layer 2's (blue: NaN from step 2 on).
shot plot-rounds --view plot --op 2 --pin 3 --stat norm
# Norm of every layer-level op in step 2, step 1 pinned for comparison.
shot plot-ops --view plot --plot ops --round 2 --stat norm --op 2 --pin round:1
# Layer 1's output in the prefill (12 tokens x 64), negative values in blue.
shot tensor --view tensor --op 2 --round 0 --overlay
# The overflowing multiplication of step 2: +Inf among its values.
shot tensor-histogram --view tensor --op 2_8 --round 2 --tensor-page histogram
ls -l "$here"/*.png
