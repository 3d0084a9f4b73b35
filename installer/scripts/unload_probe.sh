# Probe Studio: undo load_probe.sh in this shell. Source it:
#     source <prefix>/share/probe-studio/scripts/unload_probe.sh
# SPDX-License-Identifier: GPL-3.0-or-later
if [[ -n "${PROBE_LOADED_PREFIX:-}" ]]; then
    if [[ "${_PROBE_SAVED_PYTHONPATH-__probe_unset__}" == "__probe_unset__" ]]; then
        unset PYTHONPATH
    else
        export PYTHONPATH=$_PROBE_SAVED_PYTHONPATH
    fi
    echo "[probe] unloaded (the dump stays in $PROBE_OUTPUT_DIR/atb_dump_data)" >&2
    unset _PROBE_SAVED_PYTHONPATH PROBE_OUTPUT_DIR PROBE_CONFIG PROBE_LOADED_PREFIX
    unset -f probe_exec
else
    echo "[probe] not loaded in this shell" >&2
fi
