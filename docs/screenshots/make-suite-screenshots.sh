#!/usr/bin/env bash
# Remakes the precision suite's screenshots in this folder (suite-*.png) from real runs with
# planted defects: the demo decoder with a float16 overflow in layer 1 at step 2, the replay test
# model with a wrong aten::gelu, the gradient test model with a blow-up at step 5 and a NaN at
# step 7. The application is driven as a user would: under Xvfb, keys sent with xdotool, the
# window captured with ImageMagick's import. Needs a build (with PyTorch), xvfb, xdotool,
# imagemagick.
#   docs/screenshots/make-suite-screenshots.sh [BUILD_DIR]
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail
if [ -z "${PROBE_SHOTS_IN_XVFB:-}" ]; then
    PROBE_SHOTS_IN_XVFB=1 exec xvfb-run -a -s "-screen 0 1600x1000x24" "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
models=$(cd "$here/../../tests/suite" && pwd)
work=$(mktemp -d -t probe-studio-suite.XXXXXX)
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data
probe=$build/bin/probe
cd "$work"

echo '{"task": "statistics", "dump_enable": true, "exec_range": "all", "save_child": true}' > stats.json
echo '{"task": "tensor", "dump_enable": true, "exec_range": "all", "save_child": true}' > tensor.json
echo '{"task": "statistics", "dump_enable": true, "exec_range": "all", "grad_monitor": true}' > grads.json
"$probe" run --quiet --output overflow --config stats.json -- \
    /usr/bin/python3 "$build/share/probe-studio/demo/llama_demo.py" --tokens 4 --fp16-layer 1 --fp16-step 2 > /dev/null
"$probe" run --quiet --output replay --config tensor.json -- /usr/bin/python3 "$models/replay_model.py" --wrong-gelu \
    > /dev/null 2>&1
"$probe" run --quiet --output grads --config grads.json -- \
    /usr/bin/python3 "$models/grad_model.py" result.pt --blowup 5 --nan 7 > /dev/null

# studio NAME KEYS... -- ARGS...: opens probe-studio with ARGS, waits until it has read the dump,
# sends each key (xdotool names), then captures the window as NAME.png (256 colours).
studio() {
    local name=$1 keys=()
    shift
    while [ "$1" != "--" ]; do keys+=("$1"); shift; done
    shift
    "$build/bin/probe-studio" --size 1400x860 "$@" &
    local pid=$!
    local window
    window=$(xdotool search --sync --onlyvisible --name "Probe Studio" | head -1)
    sleep 3  # the dump read, the overflow search and the plots done (a script, not a test)
    for key in "${keys[@]}"; do
        if [[ $key == wait:* ]]; then sleep "${key#wait:}"; continue; fi
        xdotool windowfocus --sync "$window" key --clearmodifiers "$key"
        sleep 1
    done
    import -window "$window" "$work/$name.png"
    kill "$pid"
    wait "$pid" || true
    convert "$work/$name.png" -colors 256 "PNG8:$here/$name.png"
}

# The status bar's "Overflow born" (Ctrl+Shift+O does what its click does): the op selected.
studio suite-overflow ctrl+shift+o -- "$work/overflow"
# The wrong gelu selected, Replay the selected op (Ctrl+R; also a button and the tree's context
# menu): probe replay runs in the background, its verdict shown under the op.
studio suite-replay ctrl+r wait:8 -- "$work/replay" --op 1_0 --round 0
# The gradient monitor's files in the dump: the Gradients tab (Ctrl+6).
studio suite-gradients ctrl+6 -- "$work/grads"
ls -l "$here"/suite-*.png
