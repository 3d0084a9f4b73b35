#!/usr/bin/env bash
# Remakes the screenshots in this folder from real runs of the demo model, with the planted
# overflow (layer 1 overflows at step 2 in the dump opened, at step 6 in the live session; NaN
# follows). Needs a build (with PyTorch) and xvfb.
#   docs/screenshots/make-screenshots.sh [BUILD_DIR]
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
work=$(mktemp -d -t probe-studio-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Settings (the start page's recent sessions) and data of these runs only.
export XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data
demo=$build/share/probe-studio/demo/llama_demo.py

# Every op, statistics and tensors.
echo '{"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true}' > "$work/config.json"
"$build/bin/probe" run --output "$work/dump" --config "$work/config.json" -- \
    /usr/bin/python3 "$demo" --nan-layer 1 --nan-step 2 > "$work/run.log"

studio() {  # studio NAME ARGS...: probe-studio's window, then a smaller 256-colour PNG
    local name=$1
    shift
    xvfb-run -a -s "-screen 0 1600x1000x24" "$build/bin/probe-studio" --size 1400x860 --screenshot "$work/$name.png" "$@"
    convert "$work/$name.png" -colors 256 "PNG8:$here/$name.png"
}
shot() {  # shot NAME ARGS...: the dump opened
    local name=$1
    shift
    studio "$name" "$work/dump" "$@"
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

# Live: the demo launched from the app (as tools/run-demo.sh does), shown once its dump holds 9
# rounds: the log and state below, the tree, and layer 1's statistics with the overflow of step 6.
cp "$build/share/probe-studio/configs/demo.json" "$work/demo_config.json"
studio live-session --view plot --op 2 --wait-rounds 9 --output "$work/live" --config "$work/demo_config.json" \
    --launch -- /usr/bin/python3 "$demo" --tokens 16 --nan-layer 1 --nan-step 6 --delay 0.3
# The launch form, filled with the same command.
studio launch-form --view launch --output "$work/live2" --config "$work/demo_config.json" \
    -- /usr/bin/python3 "$demo" --tokens 16 --nan-layer 1 --nan-step 6 --delay 0.3
# The config editor in a live session: the ops ticked in the tree are the config's ids, the
# one the probe has in force.
cat > "$work/ticked_config.json" <<'JSON'
{
    "task": "statistics",
    "dump_enable": true,
    "exec_range": "all",
    "ids": "2,3",
    "save_child": true
}
JSON
studio config-live --view config --wait-rounds 4 --output "$work/live3" --config "$work/ticked_config.json" \
    --launch -- /usr/bin/python3 "$demo" --tokens 16 --nan-layer 1 --nan-step 6 --delay 0.3
# The config editor with a config that has two mistakes, shown where they are.
cat > "$work/my_config.json" <<'JSON'
{
    "task": "statistics",
    "dump_enable": true,
    "exec_range": "2,",
    "ids": "1,3",
    "op_name": "",
    "save_child": "yes",
    "device": "",
    "filter_level": 1
}
JSON
studio config-editor "$work/dump" --view config --config "$work/my_config.json"
# Two runs compared: the demo as it is, and again with one weight element of layer 1's MLP
# down-projection scaled by 1.05 (tests/torch/llama_variant.py plants it).
variant=$here/../../tests/torch/llama_variant.py
echo '{"task": "all", "dump_enable": true, "exec_range": "all", "save_child": true, "filter_level": 1}' > "$work/compare.json"
for run in good nudged; do
    nudge=""
    [ "$run" = nudged ] && nudge="layers.1.mlp.down_proj.weight[3,5]*1.05"
    PROBE_DEMO_DIR=$(dirname "$demo") PROBE_TEST_NUDGE=$nudge "$build/bin/probe" run --output "$work/$run" \
        --config "$work/compare.json" -- /usr/bin/python3 "$variant" --tokens 2 --layers 3 > "$work/$run.log"
done
# The op tree coloured by verdict, at the first divergence (F8): born here, inherited, matches.
studio compare-tree --compare "$work/good" "$work/nudged" --jump
# The comparison tab: the error of every op in execution order, the weight in both runs.
studio compare-plots --compare "$work/good" "$work/nudged" --jump --view compare
# The start page, with the sessions above among the recent ones.
studio start --view start
ls -l "$here"/*.png
