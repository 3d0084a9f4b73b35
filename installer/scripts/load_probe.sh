# Probe Studio: inject the probe into whatever this shell runs next. Source it:
#
#     source <prefix>/share/probe-studio/scripts/load_probe.sh --output=DIR --config=FILE
#     python3 train.py            # runs unchanged; its modules and ops are dumped
#     probe_exec python3 train.py # the same, and how it ended (exit code, or the signal that
#                                 # killed it, kill -9 too) is recorded in probe_status.json
#     # edit FILE while it runs: changes apply at the next layer-level op
#     source <prefix>/share/probe-studio/scripts/unload_probe.sh
#
# --output defaults to the current directory, --config to DIR/probe_config.json (written with
# the defaults of `probe config default` when absent). Only processes started from this shell
# (and their children) see the probe, through PYTHONPATH and PROBE_* variables. Programs run
# from this shell add to the same dump, each process its own entry.
# SPDX-License-Identifier: GPL-3.0-or-later

_probe_load() {
    local script_dir prefix output="" config="" arg
    script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) || return 1
    prefix=$(cd "$script_dir/../../.." && pwd) || return 1
    for arg in "$@"; do
        case "$arg" in
            --output=*) output=${arg#--output=} ;;
            --config=*) config=${arg#--config=} ;;
            -h|--help)
                sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
                return 0 ;;
            *) echo "load_probe.sh: unknown argument '$arg' (expected --output=DIR --config=FILE)" >&2; return 64 ;;
        esac
    done
    [[ -n "$output" ]] || output=$PWD
    mkdir -p "$output" 2>/dev/null || { echo "load_probe.sh: cannot create $output" >&2; return 73; }
    [[ -w "$output" ]] || { echo "load_probe.sh: $output is not writable" >&2; return 73; }
    output=$(cd "$output" && pwd)
    if [[ -z "$config" ]]; then
        config=$output/probe_config.json
        [[ -e "$config" ]] || "$prefix/bin/probe" config default --kind op > "$config" || return 1
    fi
    case "$config" in /*) ;; *) config=$PWD/$config ;; esac
    if [[ -e "$config" ]]; then
        "$prefix/bin/probe" config validate --kind op "$config" >&2 || echo "load_probe.sh: fix the config; the probe keeps dumping disabled until it is valid" >&2
    else
        echo "load_probe.sh: $config does not exist yet; dumping stays disabled until it is written" >&2
    fi
    if [[ -n "${PROBE_LOADED_PREFIX:-}" ]]; then
        echo "load_probe.sh: the probe was loaded already; reloading with the new settings" >&2
        source "$script_dir/unload_probe.sh"
    fi
    export _PROBE_SAVED_PYTHONPATH=${PYTHONPATH-__probe_unset__}
    local python_dir=$prefix/lib/python3/dist-packages
    export PYTHONPATH=$python_dir/probe_studio/_inject:$python_dir${PYTHONPATH:+:$PYTHONPATH}
    export PROBE_OUTPUT_DIR=$output
    export PROBE_CONFIG=$config
    export PROBE_LOADED_PREFIX=$prefix
    echo "[probe] loaded: dump to $output/atb_dump_data, config $config" >&2
}

# probe_exec COMMAND [ARGS...]: runs COMMAND under the probe as `probe run` does, into this
# shell's dump (added to it), so that its end is recorded whatever ends it: a program killed
# outright cannot say so itself, its parent does. Returns COMMAND's exit code (128+N for signal N).
probe_exec() {
    if [[ -z "${PROBE_LOADED_PREFIX:-}" ]]; then
        echo "probe_exec: the probe is not loaded in this shell (source load_probe.sh first)" >&2
        return 64
    fi
    "$PROBE_LOADED_PREFIX/bin/probe" run --append --output="$PROBE_OUTPUT_DIR" --config="$PROBE_CONFIG" -- "$@"
}

_probe_load "$@"
_probe_status=$?
unset -f _probe_load
return $_probe_status 2>/dev/null || exit $_probe_status
