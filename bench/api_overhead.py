#!/usr/bin/python3
"""Cost of the code-level API (probe_studio.pytorch.PrecisionDebugger, task statistics) on a
training step, as ratios to the same step without any debugger.

Models (--model, both by default):
  transformer  torch.nn.TransformerEncoder, 2 layers, d_model 64, 4 heads, feed-forward 128,
               sequence 16 x batch 8: a small-op model (forward+backward about 1.5 ms), where
               the per-call cost of the debugger shows.
  mlp          20 x (Linear 1024 + ReLU), batch 64: large ops, where statistics dominate.

The step is the msprobe documentation's loop body, with the files written at stop()/step():

    debugger.start(); loss = model(x).square().mean(); loss.backward(); debugger.stop()
    optimizer.step(); optimizer.zero_grad(); debugger.step()

The debugger wraps torch once per process, so "without" and "with" run in separate processes,
interleaved (none, L1, mix, none, L1, mix, ...) for --rounds rounds so that changes of the
machine's load hit all alike. Each process times --steps steps after --warmup and reports their
median; a ratio is the median over rounds of (median step with the debugger / median step of
the process without it in the same round).

    /usr/bin/python3 bench/api_overhead.py [--model transformer] [--rounds 5] [--steps 40]
    (PYTHONPATH must reach probe_studio: <build>/lib/python3/dist-packages; the CMake target
    `bench_api_overhead` sets it.) --profile LEVEL writes a cProfile of that level's steps.
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

MODELS = {
    "transformer": {"steps": 40, "warmup": 10, "title": "TransformerEncoder 2 layers, d=64, seq 16 x batch 8"},
    "mlp": {"steps": 8, "warmup": 2, "title": "20-layer MLP (Linear 1024 + ReLU), batch 64"},
}


def build(model_name):
    import torch

    torch.manual_seed(1234)
    if model_name == "transformer":
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.1)
        model = torch.nn.TransformerEncoder(layer, num_layers=2)
        x = torch.randn(16, 8, 64)
    else:
        layers = []
        for _ in range(20):
            layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers)
        x = torch.randn(64, 1024)
    return model, x


def child(model_name, level, steps, warmup, dump_root, profile_path):
    import torch

    torch.set_num_threads(1)  # the machine is shared: one core per process keeps runs comparable
    model, x = build(model_name)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    debugger = None
    if level != "none":
        from probe_studio.pytorch import PrecisionDebugger
        path = os.path.join(dump_root, "config.json")
        with open(path, "w") as f:
            json.dump({"task": "statistics", "dump_path": dump_root, "level": level}, f)
        debugger = PrecisionDebugger(config_path=path, model=model)

    def one_step():
        if debugger is not None:
            debugger.start()
        loss = model(x).square().mean()
        loss.backward()
        if debugger is not None:
            debugger.stop()
        optimizer.step()
        optimizer.zero_grad()
        if debugger is not None:
            debugger.step()

    for _ in range(warmup):
        one_step()
    profiler = None
    if profile_path:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        one_step()
        times.append(time.perf_counter() - t0)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile_path)
    entries = 0
    if debugger is not None:
        debugger.stop()
        step_dir = os.path.join(dump_root, "step0")
        with open(os.path.join(step_dir, os.listdir(step_dir)[0], "dump.json")) as f:
            entries = len(json.load(f)["data"])
    print(json.dumps({"median": statistics.median(times), "best": min(times), "entries": entries}))


def run_child(model_name, level, args, profile_path=None):
    dump_root = tempfile.mkdtemp(prefix="probe_bench_")
    try:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", level, "--model", model_name,
               "--steps", str(args.steps or MODELS[model_name]["steps"]),
               "--warmup", str(args.warmup or MODELS[model_name]["warmup"]), "--dump-root", dump_root]
        if profile_path:
            cmd += ["--profile-out", profile_path]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            sys.exit("%s failed (%d):\n%s" % (" ".join(cmd), proc.returncode, proc.stderr))
        return json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(dump_root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), action="append", help="model(s) to time (default: both)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of processes")
    parser.add_argument("--steps", type=int, help="timed steps per process")
    parser.add_argument("--warmup", type=int)
    parser.add_argument("--profile", choices=("L1", "mix"), help="also write a cProfile of one process at LEVEL")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--dump-root", help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.model[0], args.child, args.steps, args.warmup, args.dump_root, args.profile_out)
        return
    levels = ("L1", "mix")
    for model_name in args.model or ["transformer", "mlp"]:
        if args.profile:
            path = os.path.abspath("api_overhead_%s_%s.prof" % (model_name, args.profile))
            run_child(model_name, args.profile, args, path)
            print("cProfile of %s at %s: %s" % (model_name, args.profile, path))
        medians = {level: [] for level in ("none",) + levels}
        ratios = {level: [] for level in levels}
        entries = {}
        for _ in range(args.rounds):
            base = run_child(model_name, "none", args)
            medians["none"].append(base["median"])
            for level in levels:
                r = run_child(model_name, level, args)
                medians[level].append(r["median"])
                ratios[level].append(r["median"] / base["median"])
                entries[level] = r["entries"]
        print("%s, task statistics, %d rounds" % (MODELS[model_name]["title"], args.rounds))
        print("  %-20s %12s" % ("", "median ms"))
        for level, values in medians.items():
            print("  %-20s %12.2f%s" % ("no debugger" if level == "none" else level, statistics.median(values) * 1e3,
                                        "   %d entries/step" % entries[level] if level in entries else ""))
        for level in levels:
            print("  %-4s ratio %.2fx (median of rounds; per round: %s)"
                  % (level, statistics.median(ratios[level]), " ".join("%.2f" % r for r in ratios[level])))


if __name__ == "__main__":
    main()
