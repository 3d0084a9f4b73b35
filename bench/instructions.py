#!/usr/bin/python3
"""Instructions the probe costs per step, counted by valgrind's callgrind (not a test).

Wall-clock ratios on a shared machine move by a quarter from run to run; instruction counts do
not, so a change to the probe's per-op path can be judged in one run. Each model runs its
warm-up steps uncounted, then --steps counted ones (callgrind's collection switched on around
them by a client request), without the probe and under `probe run` with each config; the
probe's cost is the difference. Kernel time (syscalls, page faults) and cache misses are not
counted: confirm a gain with interleaved timings (run_all.py) before believing its size.

    python3 bench/instructions.py [--build build] [--steps 200] [--only small_mlp,small_op]
                                  [--configs sleeping,layer,all] [--keep DIR]

--keep DIR leaves callgrind's files there (callgrind_annotate reads them).

Needs valgrind, its headers (valgrind/callgrind.h) and a C compiler. Slow: each run is some
minutes under valgrind.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"  # the python with torch (TOOLCHAIN.md)
CONFIGS = {
    "sleeping": {"task": "statistics", "dump_enable": False},
    "layer": {"task": "statistics", "dump_enable": True, "exec_range": "all"},
    "all": {"task": "statistics", "dump_enable": True, "exec_range": "all", "save_child": True},
}
TOGGLE_C = """#include <valgrind/callgrind.h>
void probe_bench_count_on(void) { CALLGRIND_ZERO_STATS; CALLGRIND_TOGGLE_COLLECT; }
void probe_bench_count_off(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS; }
"""
# valgrind 3.19 does not know the rdtscp instruction, which libhwy's static initialiser runs on
# some CPUs (torch links libhwy): the model would die of SIGILL under callgrind. Preloaded, this
# answers in its place; it runs once at start, before counting begins.
HWY_SHIM_C = """unsigned long _ZN3hwy8platform15TimerResolutionEv(void) { return 1; }
"""
RUNNER = """import ctypes, sys
sys.argv = [sys.argv[0]]
sys.path.insert(0, {bench!r})
import workloads, torch
torch.set_num_threads(1)
torch.manual_seed(1234)
model, step = workloads.MODELS[{model!r}]()
count = ctypes.CDLL({toggle!r})
for _ in range({warmup}):
    step()
count.probe_bench_count_on()
for _ in range({steps}):
    step()
count.probe_bench_count_off()
"""


def counted(command, work, name):
    """Instructions callgrind counted between the runner's client requests."""
    out = os.path.join(work, name + ".%p.out")
    result = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--callgrind-out-file=" + out]
                            + command, capture_output=True, text=True, env=valgrind_env(work))
    found = re.findall(r"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or not found:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(command), result.returncode, result.stderr[-2000:]))
    return int(found[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(here, "..", "build"), help="build tree (or install prefix)")
    parser.add_argument("--steps", type=int, default=200, help="counted steps per run")
    parser.add_argument("--warmup", type=int, default=50, help="uncounted steps first")
    parser.add_argument("--only", default="small_mlp,small_op", help="comma-separated models of workloads.py")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--keep", help="a folder to keep callgrind's files in")
    args = parser.parse_args()
    for tool in ("valgrind", "cc"):
        if not shutil.which(tool):
            sys.exit("instructions.py needs %s" % tool)
    probe = os.path.join(os.path.abspath(args.build), "bin", "probe")
    configs = args.configs.split(",")
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error("unknown config(s): " + ", ".join(unknown))
    work = tempfile.mkdtemp(prefix="probe-instructions-")
    try:
        toggle = os.path.join(work, "count.so")
        with open(os.path.join(work, "count.c"), "w") as f:
            f.write(TOGGLE_C)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", toggle, os.path.join(work, "count.c")], check=True)
        with open(os.path.join(work, "hwy_shim.c"), "w") as f:
            f.write(HWY_SHIM_C)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", os.path.join(work, "hwy_shim.so"),
                        os.path.join(work, "hwy_shim.c")], check=True)
        print("instructions per step (%d counted after %d warm-up steps; callgrind)" % (args.steps, args.warmup))
        for model in args.only.split(","):
            runner = os.path.join(work, model + ".py")
            with open(runner, "w") as f:
                f.write(RUNNER.format(bench=here, model=model, toggle=toggle, warmup=args.warmup, steps=args.steps))
            none = counted([PYTHON, runner], work, model + "_none") / args.steps
            print("  %-10s no probe %12.0f" % (model, none), flush=True)
            for name in configs:
                config = CONFIGS[name]
                config_path = os.path.join(work, name + ".json")
                with open(config_path, "w") as f:
                    json.dump(config, f)
                output = os.path.join(work, "%s_%s_dump" % (model, name))
                total = probed(probe, config_path, output, runner, work, model + "_" + name) / args.steps
                print("  %-10s %-5s    %12.0f   probe %10.0f (%.2fx)" % (model, name, total, total - none, total / none),
                      flush=True)
                shutil.rmtree(output, ignore_errors=True)
    finally:
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for name in os.listdir(work):
                if ".out" in name:
                    shutil.move(os.path.join(work, name), os.path.join(args.keep, name))
        shutil.rmtree(work, ignore_errors=True)


def valgrind_env(work):
    env = dict(os.environ)
    env["LD_PRELOAD"] = " ".join(filter(None, [os.path.join(work, "hwy_shim.so"), env.get("LD_PRELOAD")]))
    return env


def probed(probe, config_path, output, runner, work, name):
    """Instructions counted in the model's process under `probe run` (valgrind inside it, so
    that the probe injects itself into the process being counted)."""
    out = os.path.join(work, name + ".%p.out")
    result = subprocess.run([probe, "run", "--quiet", "--output", output, "--config", config_path, "--", "valgrind",
                             "--tool=callgrind", "--collect-atstart=no", "--callgrind-out-file=" + out, PYTHON, runner],
                            capture_output=True, text=True, env=valgrind_env(work))
    found = re.findall(r"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or not found:
        raise RuntimeError("probe run of %s failed (%d):\n%s" % (runner, result.returncode, result.stderr[-2000:]))
    return int(found[-1])


if __name__ == "__main__":
    main()
