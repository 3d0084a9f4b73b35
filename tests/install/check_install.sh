#!/usr/bin/env bash
# Installs the build into a prefix, moves the prefix, and uses every piece from its new place.
set -euo pipefail
build=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/first-prefix" >/dev/null
mv "$work/first-prefix" "$work/moved prefix"   # a space, too: paths must be quoted everywhere
prefix="$work/moved prefix"
fail() { echo "FAIL: $*" >&2; exit 1; }

for f in bin/probe lib/libprobe_runtime.so include/probe/probe.h share/probe-studio/scripts/load_probe.sh \
         share/probe-studio/scripts/unload_probe.sh share/probe-studio/demo/llama_demo.py \
         lib/python3/dist-packages/probe_studio/__init__.py; do
    [[ -e "$prefix/$f" ]] || fail "missing $f"
done
"$prefix/bin/probe" --version | grep -q "probe " || fail "probe --version"
"$prefix/bin/probe" config default | "$prefix/bin/probe" config validate /dev/stdin --kind op >/dev/null || fail "config default/validate"
# No library found through the build tree: the RPATH must be relative.
if ldd "$prefix/bin/probe" | grep -q "$build"; then fail "probe links into the build tree"; fi

if [[ "${PROBE_BUILD_GUI:-OFF}" == "ON" && -x "$prefix/bin/probe-studio" ]]; then
    QT_QPA_PLATFORM=offscreen "$prefix/bin/probe-studio" --version | grep -qi "probe" || fail "probe-studio --version"
    if ldd "$prefix/bin/probe-studio" | grep -q "$build"; then fail "probe-studio links into the build tree"; fi
fi

if [[ "${PROBE_HAVE_TORCH:-OFF}" == "ON" ]]; then
    [[ -e "$prefix/lib/libprobe_torch.so" ]] || fail "missing lib/libprobe_torch.so"
    out="$work/run-out"
    "$prefix/bin/probe" run --output "$out" -- /usr/bin/python3 "$prefix/share/probe-studio/demo/msprobe_train.py" \
        >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "probe run from the moved prefix"; }
    grep -q "linear_1.backward" "$out"/atb_dump_data/data/*/0/statistic.csv || fail "no backward rows"
    # The load script, from the moved prefix.
    bash -c "source '$prefix/share/probe-studio/scripts/load_probe.sh' --output='$work/load-out' >/dev/null 2>&1 &&
             /usr/bin/python3 '$prefix/share/probe-studio/demo/msprobe_train.py' >/dev/null 2>&1 &&
             source '$prefix/share/probe-studio/scripts/unload_probe.sh' >/dev/null 2>&1" || fail "load script"
    ls "$work/load-out"/atb_dump_data/data/*/0/statistic.csv >/dev/null || fail "load script wrote no dump"
    # The code-level API, importable where Debian's python looks once the prefix is on the path.
    PYTHONPATH="$prefix/lib/python3/dist-packages" /usr/bin/python3 - "$work/api" <<'PY' || fail "code-level API"
import json, os, sys, torch
from probe_studio.pytorch import PrecisionDebugger, seed_all
seed_all(seed=1234, mode=False)
dump = sys.argv[1]
debugger = PrecisionDebugger(dump_path=dump, task="statistics", level="L1")
model = torch.nn.Linear(4, 2)
debugger.start()
model(torch.randn(3, 4)).sum().backward()
debugger.stop()
debugger.step()
# Read in this process: flush() first (stop() and step() do not wait for the disk).
assert debugger.flush() is True
entries = json.load(open(os.path.join(dump, "step0", "proc%d" % os.getpid(), "dump.json")))["data"]
assert "Functional.linear.0.forward" in entries, sorted(entries)
with open(os.path.join(dump, "pid"), "w") as f:
    f.write(str(os.getpid()))
PY
    # Read once the process has ended: stop() and step() do not wait for the disk, and every
    # file is whole at exit (docs/formats.md, section 2).
    /usr/bin/python3 - "$work/api" <<'PY' || fail "code-level API dump"
import json, os, sys
dump = sys.argv[1]
pid = open(os.path.join(dump, "pid")).read()
entries = json.load(open(os.path.join(dump, "step0", "proc" + pid, "dump.json")))["data"]
assert "Functional.linear.0.forward" in entries, sorted(entries)
PY
fi
echo "installed tree works from $prefix"
