#!/usr/bin/env python3
"""Benchmark (not a test): what flushing statistic.csv rows every 50 ms (so that a crash loses at
most the last 100 ms) costs a tiny model stepped thousands of times, against another build.

A 2-layer MLP (Linear, ReLU, Linear: three layer-level ops) runs STEPS forward steps under
`probe run` with statistics of every layer-level op, each step its own round. The loop's time is
measured inside the program; processes of both builds (and without the probe) are interleaved,
and medians compared:

    /usr/bin/python3 bench/flush_overhead.py --build build --baseline /path/to/other/prefix
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MLP = r"""
import json, sys, time
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
x = torch.randn(16, 64)
steps = int(sys.argv[1])
with torch.no_grad():
    for _ in range(50):
        model(x)
    start = time.perf_counter()
    for _ in range(steps):
        model(x)
    seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "steps": steps}))
"""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(here, "..", "build"), help="build tree (or prefix) measured")
    parser.add_argument("--baseline", required=True, help="build tree (or prefix) to compare with")
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7, help="processes per build, interleaved")
    args = parser.parse_args()
    python = "/usr/bin/python3"
    builds = {"baseline": os.path.abspath(args.baseline), "this build": os.path.abspath(args.build)}
    samples = {"no probe": [], "baseline": [], "this build": []}
    rows = {}
    with tempfile.TemporaryDirectory(prefix="probe-bench-flush-") as work:
        script = os.path.join(work, "mlp.py")
        with open(script, "w") as f:
            f.write(MLP)
        config = os.path.join(work, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "dump_enable": True, "exec_range": "all"}, f)

        def seconds(command):
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            return json.loads([l for l in out.splitlines() if l.startswith("{")][-1])["seconds"]

        for round_ in range(args.rounds):
            samples["no probe"].append(seconds([python, script, str(args.steps)]))
            for name, prefix in builds.items():
                out = os.path.join(work, "%s_%d" % (name.replace(" ", "_"), round_))
                samples[name].append(seconds([os.path.join(prefix, "bin", "probe"), "run", "--quiet", "--output", out,
                                              "--config", config, "--", python, script, str(args.steps)]))
                with open(os.path.join(out, "atb_dump_data", "probe_status.json")) as f:
                    rows[name] = json.load(f)["rows"]
            print("round %d done" % (round_ + 1), file=sys.stderr)
    median = {name: statistics.median(times) for name, times in samples.items()}
    print("%d steps of a 2-layer MLP, layer-level statistics; medians of %d processes each" % (args.steps, args.rounds))
    for name, value in median.items():
        spread = "%.3f-%.3f" % (min(samples[name]), max(samples[name]))
        extra = "" if name == "no probe" else "  (%.2fx no probe, %d rows)" % (value / median["no probe"], rows[name])
        print("  %-10s %.3f s  [%s]%s" % (name, value, spread, extra))
    print("this build / baseline: %.3fx" % (median["this build"] / median["baseline"]))


if __name__ == "__main__":
    main()
