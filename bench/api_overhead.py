#!/usr/bin/python3
"""Cost of the code-level API (probe_studio.pytorch.PrecisionDebugger, task statistics, every
step dumped) as ratios to the same steps without any debugger, on the models of workloads.py
(small_op: the 2-layer TransformerEncoder of the issue's targets; mlp20: large ops, where
statistics dominate). bench/run_all.py --only api reports the same wall-time figure against
its target; this bench adds the CPU time and a profile, to find where the time goes.

The debugger wraps torch once per process, so "without" and "with" run in separate processes,
interleaved (none, L1, mix, none, L1, mix, ...) for --rounds rounds so that changes of the
machine's load hit all alike, each on one thread. A ratio is the median over rounds of (median
repeat with the debugger / median repeat of the process without it in the same round), for the
wall time and for the process's CPU time (writer thread included; on a loaded machine it
varies far less than the wall time).

    /usr/bin/python3 bench/api_overhead.py [--model small_op] [--rounds 5] [--profile mix]
                                           [--baseline OTHER_BUILD/lib/python3/dist-packages]
    (PYTHONPATH must reach probe_studio: <build>/lib/python3/dist-packages; the CMake target
    `bench_api_overhead` sets it.) --profile LEVEL also writes a cProfile of that level's steps.
    --baseline also runs L1 and mix with another build's probe_studio in the same rounds (e.g.
    main's, to judge a change: both against the same runs without a debugger).
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = os.path.join(here, "workloads.py")
REPEATS = {"small_op": ["--repeats", "3", "--steps", "20"], "mlp20": ["--repeats", "3", "--steps", "2"]}
LEVELS = ("none", "L1", "mix")


def run_workload(model, level, work, profile=None, pythonpath=None):
    """{"times": [...], "cpu": [...]} of one process of workloads.py (with probe_studio from
    `pythonpath` when given, else from $PYTHONPATH), dumping into a new folder of `work`: every
    dump stays until the end (see run_all.py: deleting one slowed the next runs' files)."""
    dump_root = tempfile.mkdtemp(prefix="dump_", dir=work)
    cmd = [sys.executable, WORKLOADS, model] + REPEATS[model]
    if level != "none":
        cmd += ["--debugger", level, "--dump-path", dump_root]
    if profile:
        cmd += ["--profile", profile]
    # One thread per process (BLAS pools spin, which shows as CPU time): the machine is shared.
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(cmd), proc.returncode, proc.stderr[-3000:]))
    return json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(REPEATS), action="append", help="default: small_op and mlp20")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of processes")
    parser.add_argument("--profile", choices=LEVELS[1:], help="also write a cProfile of one process at LEVEL")
    parser.add_argument("--baseline", help="another build's lib/python3/dist-packages, run in the same rounds")
    args = parser.parse_args()
    # (label, level, pythonpath): every run of a round, interleaved.
    runs = [(level, level, None) for level in LEVELS]
    if args.baseline:
        runs += [(level + " baseline", level, args.baseline) for level in LEVELS[1:]]
    with tempfile.TemporaryDirectory(prefix="probe_bench_") as work:
        for model in args.model or ["small_op", "mlp20"]:
            measure(args, model, runs, work)


def measure(args, model, runs, work):
    if args.profile:
        path = os.path.abspath("api_overhead_%s_%s.prof" % (model, args.profile))
        run_workload(model, args.profile, work, path)
        print("cProfile of %s at %s: %s" % (model, args.profile, path))
    medians = {label: {"times": [], "cpu": []} for label, _, _ in runs}
    for _ in range(args.rounds):
        for label, level, pythonpath in runs:
            result = run_workload(model, level, work, pythonpath=pythonpath)
            for kind in ("times", "cpu"):
                medians[label][kind].append(statistics.median(result[kind]))
    steps = int(REPEATS[model][-1])
    print("%s, task statistics, every step dumped, %d rounds" % (model, args.rounds))
    if args.baseline:
        print("  baseline: %s" % args.baseline)
    print("  %-14s %14s %14s" % ("", "wall ms/step", "CPU ms/step"))
    for label, _, _ in runs:
        print("  %-14s %14.2f %14.2f" % ("no debugger" if label == "none" else label,
                                         statistics.median(medians[label]["times"]) / steps * 1e3,
                                         statistics.median(medians[label]["cpu"]) / steps * 1e3))
    for label, _, _ in runs[1:]:
        for kind, name in (("times", "wall"), ("cpu", "CPU")):
            ratios = [a / b for a, b in zip(medians[label][kind], medians["none"][kind])]
            print("  %-13s %-4s ratio %.2fx (per round: %s)"
                  % (label, name, statistics.median(ratios), " ".join("%.2f" % r for r in ratios)))


if __name__ == "__main__":
    main()
