#!/usr/bin/python3
"""Cost of the code-level API (probe_studio.pytorch.PrecisionDebugger, task statistics) on a
training step: a 20-layer MLP (Linear 1024 + ReLU), batch 64, CPU, SGD.

The step is the msprobe documentation's loop body:

    debugger.start(); loss = mse(model(x), y); loss.backward(); debugger.stop()
    optimizer.step(); optimizer.zero_grad(); debugger.step()

and its wall time includes writing dump.json/stack.json/construct.json. With
--optimizer-inside the optimizer runs between start() and stop() too (its Tensor.* calls are
then dumped as well).

Each level (L1, mix) runs in its own process (the debugger wraps torch once per process).
In that process the same step is first timed without any debugger, then with the debugger
and a step list holding every other step, so dumped steps alternate with steps outside the
list. The machine is shared: alternating keeps the compared steps under the same conditions,
and the best step of each kind is the one least disturbed by other processes.

    /usr/bin/python3 bench/api_overhead.py [--steps 8] [--warmup 2] [--optimizer-inside]
    (PYTHONPATH must reach probe_studio: <build>/lib/python3/dist-packages; the CMake target
    `bench_api_overhead` sets it.)
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def child(level, steps, warmup, optimizer_inside, dump_root):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(1234)
    layers = []
    for _ in range(20):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(64, 1024)
    y = torch.randn(64, 1024)
    debugger = None

    def one_step():
        if debugger is not None:
            debugger.start()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        if optimizer_inside:
            optimizer.step()
            optimizer.zero_grad()
        if debugger is not None:
            debugger.stop()
        if not optimizer_inside:
            optimizer.step()
            optimizer.zero_grad()
        if debugger is not None:
            debugger.step()

    def timed():
        t0 = time.perf_counter()
        one_step()
        return time.perf_counter() - t0

    for _ in range(warmup):
        one_step()
    baseline = [timed() for _ in range(steps)]

    from probe_studio.pytorch import PrecisionDebugger
    total = 2 * (warmup + steps)
    path = os.path.join(dump_root, "config.json")
    with open(path, "w") as f:
        json.dump({"task": "statistics", "dump_path": dump_root, "level": level,
                   "step": list(range(0, total + 2, 2))}, f)  # the list outlasts the run
    debugger = PrecisionDebugger(config_path=path, model=model)
    dumped, skipped = [], []
    for i in range(total):
        t = timed()
        if i >= 2 * warmup:
            (dumped if i % 2 == 0 else skipped).append(t)
    with open(os.path.join(dump_root, "step0", os.listdir(os.path.join(dump_root, "step0"))[0], "dump.json")) as f:
        entries = len(json.load(f)["data"])
    pairs = [d / s for d, s in zip(dumped, skipped)]
    print(json.dumps({"baseline": baseline, "dumped": dumped, "skipped": skipped, "pairs": pairs,
                      "entries": entries}))


def run(level, args):
    dump_root = tempfile.mkdtemp(prefix="probe_bench_")
    try:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", level, "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--dump-root", dump_root]
        if args.optimizer_inside:
            cmd.append("--optimizer-inside")
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    finally:
        shutil.rmtree(dump_root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8, help="timed steps of each kind")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--optimizer-inside", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--dump-root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.steps, args.warmup, args.optimizer_inside, args.dump_root)
        return
    print("20-layer MLP (Linear 1024 + ReLU), batch 64, CPU, SGD, task statistics%s; %d steps of each kind"
          % (", optimizer inside start/stop" if args.optimizer_inside else "", args.steps))
    print("  %-38s %9s %9s" % ("", "best ms", "median ms"))
    ratios = {}
    for level in ("L1", "mix"):
        r = run(level, args)
        base = min(r["baseline"])
        print("  %-38s %9.1f %9.1f" % (level + ": without debugger", base * 1e3, statistics.median(r["baseline"]) * 1e3))
        print("  %-38s %9.1f %9.1f" % (level + ": step outside the step list", min(r["skipped"]) * 1e3,
                                       statistics.median(r["skipped"]) * 1e3))
        print("  %-38s %9.1f %9.1f   %d entries/step" % (level + ": dumped step", min(r["dumped"]) * 1e3,
                                                         statistics.median(r["dumped"]) * 1e3, r["entries"]))
        ratios[level] = (min(r["dumped"]) / base, statistics.median(r["pairs"]), min(r["skipped"]) / base)
    for level, (to_base, to_neighbour, skipped) in ratios.items():
        print("%-3s ratio to no dumping: %.2fx (best dumped step / best step without debugger); %.2fx (median of "
              "dumped step / the next step outside the list); outside the list: %.2fx"
              % (level, to_base, to_neighbour, skipped))
    print("msprobe's published figures: L1 26x, mix 38x")


if __name__ == "__main__":
    main()
