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
    python3 bench/instructions.py --api L1,mix [--build build] [--steps 20] [--only small_op]

--api counts the code-level API instead (PrecisionDebugger, task statistics, every step dumped:
start, the step, stop, step, as bench/workloads.py --debugger runs it), with the build's
probe_studio: the model's thread and all threads (the writers) apart.

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
API_RUNNER = """import ctypes, json, os, sys
sys.argv = [sys.argv[0]]
sys.path.insert(0, {bench!r})
import workloads, torch
torch.set_num_threads(1)
torch.manual_seed(1234)
model, step = workloads.MODELS[{model!r}]()
from probe_studio.pytorch import PrecisionDebugger
with open(os.path.join({dump!r}, "config.json"), "w") as f:
    json.dump({{"task": "statistics", "dump_path": {dump!r}, "level": {level!r}}}, f)
debugger = PrecisionDebugger(config_path=os.path.join({dump!r}, "config.json"))
count = ctypes.CDLL({toggle!r})

def one_step():
    debugger.start(model=model)
    step()
    debugger.stop()
    debugger.step()

for _ in range({warmup}):
    one_step()
count.probe_bench_count_on()
for _ in range({steps}):
    one_step()
count.probe_bench_count_off()
"""

# torch (Debian's, through OpenCV and libjxl) loads libhwy, whose initialiser executes rdtscp;
# valgrind refuses that instruction on a CPU whose cpuid does not list it (this VM's). libjxl is
# never called here, so a library of the five functions it links, doing nothing, takes libhwy's
# place under valgrind.
HWY_STUB_C = """#include <stddef.h>
#include <stdint.h>
namespace hwy {
struct AlignedDeleter { static void DeleteAlignedArray(void*, void (*)(void*, void*), void*, void (*)(void*, size_t)); };
void AlignedDeleter::DeleteAlignedArray(void*, void (*)(void*, void*), void*, void (*)(void*, size_t)) {}
struct ChosenTarget;
ChosenTarget& GetChosenTarget() { static char target[64]; return *reinterpret_cast<ChosenTarget*>(target); }
void FreeAlignedBytes(const void*, void (*)(void*, void*), void*) {}
int64_t SupportedTargets() { return 0; }
void* AllocateAlignedBytes(size_t, void* (*)(void*, size_t), void*) { return nullptr; }
}
"""


def valgrind_env(work, env=None):
    """The environment to run valgrind in: with libhwy replaced (above) when the CPU hides
    rdtscp and libhwy is installed."""
    env = dict(os.environ if env is None else env)
    # One hash seed for every run: with a random one, Python's dicts and sets differ from run
    # to run, and so did a run's count without the probe, by up to 5,000 instructions a step
    # on the small MLP (a fifth of what a sleeping probe costs it).
    env.setdefault("PYTHONHASHSEED", "0")
    with open("/proc/cpuinfo") as f:
        hides_rdtscp = " rdtscp" not in f.read()
    if hides_rdtscp and os.path.exists("/usr/lib/x86_64-linux-gnu/libhwy.so.1"):
        stub = os.path.join(work, "hwy")
        os.makedirs(stub, exist_ok=True)
        with open(os.path.join(stub, "hwy.cc"), "w") as f:
            f.write(HWY_STUB_C)
        with open(os.path.join(stub, "hwy.map"), "w") as f:
            f.write("HWY_0 { global: *; };\n")
        subprocess.run(["c++", "-shared", "-fPIC", "-O1", "-Wl,--version-script=" + os.path.join(stub, "hwy.map"),
                        "-Wl,-soname,libhwy.so.1", "-o", os.path.join(stub, "libhwy.so.1"),
                        os.path.join(stub, "hwy.cc")], check=True)
        env["LD_LIBRARY_PATH"] = stub + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


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
    parser.add_argument("--only", help="comma-separated models of workloads.py (default: small_mlp,small_op; "
                        "with --api small_op)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--keep", help="a folder to keep callgrind's files in (callgrind_annotate reads them)")
    parser.add_argument("--api", help="comma-separated levels (L1, mix, L0) of the code-level API to count")
    args = parser.parse_args()
    if args.api:
        return count_api(args)
    args.only = args.only or "small_mlp,small_op"
    for tool in ("valgrind", "cc"):
        if not shutil.which(tool):
            sys.exit("instructions.py needs %s" % tool)
    configs = args.configs.split(",")
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        sys.exit("unknown config(s): " + ", ".join(unknown))
    probe = os.path.join(os.path.abspath(args.build), "bin", "probe")
    work = tempfile.mkdtemp(prefix="probe-instructions-")
    try:
        toggle = os.path.join(work, "count.so")
        with open(os.path.join(work, "count.c"), "w") as f:
            f.write(TOGGLE_C)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", toggle, os.path.join(work, "count.c")], check=True)
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
        keep(work, args.keep)
        shutil.rmtree(work, ignore_errors=True)


def keep(work, folder):
    """Moves callgrind's files from `work` to `folder` (when given)."""
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(work):
        if ".out" in name:
            shutil.move(os.path.join(work, name), os.path.join(folder, name))


def count_api(args):
    """The code-level API's instructions per step: the model's own thread (where the debugger's
    cost is felt) and all threads (its writers included), each level against the same steps
    without a debugger."""
    for tool in ("valgrind", "cc"):
        if not shutil.which(tool):
            sys.exit("instructions.py needs %s" % tool)
    build = os.path.abspath(args.build)
    pythonpath = os.path.join(build, "lib", "python3", "dist-packages")
    work = tempfile.mkdtemp(prefix="probe-instructions-")
    env = valgrind_env(work, dict(os.environ, PYTHONPATH=pythonpath, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    try:
        toggle = os.path.join(work, "count.so")
        with open(os.path.join(work, "count.c"), "w") as f:
            f.write(TOGGLE_C)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", toggle, os.path.join(work, "count.c")], check=True)
        print("code-level API, instructions per step (%d counted after %d warm-up steps; callgrind; %s)"
              % (args.steps, args.warmup, pythonpath))
        for model in (args.only or "small_op").split(","):
            runner = os.path.join(work, model + ".py")
            with open(runner, "w") as f:
                f.write(RUNNER.format(bench=here, model=model, toggle=toggle, warmup=args.warmup, steps=args.steps))
            none = threads_counted([PYTHON, runner], work, model + "_none", env)
            print("  %-10s no debugger   model thread %12.0f" % (model, none[0] / args.steps), flush=True)
            for level in args.api.split(","):
                dump = os.path.join(work, "%s_%s_dump" % (model, level))
                os.makedirs(dump)
                runner = os.path.join(work, "%s_%s.py" % (model, level))
                with open(runner, "w") as f:
                    f.write(API_RUNNER.format(bench=here, model=model, toggle=toggle, warmup=args.warmup,
                                              steps=args.steps, dump=dump, level=level))
                main, total = threads_counted([PYTHON, runner], work, "%s_%s" % (model, level), env)
                print("  %-10s %-5s model thread %12.0f (debugger %10.0f, %.2fx)   all threads %12.0f"
                      % (model, level, main / args.steps, (main - none[0]) / args.steps, main / none[0],
                         total / args.steps), flush=True)
                shutil.rmtree(dump, ignore_errors=True)
    finally:
        keep(work, args.keep)
        shutil.rmtree(work, ignore_errors=True)


def threads_counted(command, work, name, env):
    """(instructions of the main thread, of all threads) callgrind counted between the runner's
    client requests."""
    out = os.path.join(work, name + ".out")
    result = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--separate-threads=yes",
                             "--callgrind-out-file=" + out] + command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(command), result.returncode, result.stderr[-2000:]))
    per_thread = {}
    for file_name in os.listdir(work):
        found = re.match(re.escape(name) + r"\.out(?:\.\d+)?-(\d+)$", file_name)
        if not found:
            continue
        with open(os.path.join(work, file_name)) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    per_thread[int(found.group(1))] = per_thread.get(int(found.group(1)), 0) + int(line.split()[1])
                    break
    if 1 not in per_thread:
        raise RuntimeError("no count of the main thread for %s" % name)
    return per_thread[1], sum(per_thread.values())


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
