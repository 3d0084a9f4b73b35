#!/usr/bin/env python3
"""Benchmark (not a test): the demo decoder's wall time under the injected probe, as ratios to
the time without it, from one run of this script:

  sleeping      probe loaded, dump_enable false
  layer stats   statistics of every layer-level op (the default config)
  all stats     statistics of every op: modules, aten ops, kernels (save_child)

    /usr/bin/python3 bench/torch_overhead.py [--build BUILD_DIR] [--repeats N]
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(here, "..", "build"), help="build tree (or install prefix)")
    parser.add_argument("--repeats", type=int, default=5, help="timed generate loops per process")
    parser.add_argument("--rounds", type=int, default=3,
                        help="processes per configuration, run interleaved so that load changes hit all alike")
    args = parser.parse_args()
    prefix = os.path.abspath(args.build)
    probe = os.path.join(prefix, "bin", "probe")
    demo = os.path.join(prefix, "share", "probe-studio", "demo", "llama_demo.py")
    timing = os.path.join(here, "decoder_timing.py")
    python = "/usr/bin/python3"

    configs = [
        ("sleeping", {"task": "statistics", "dump_enable": False}),
        ("layer stats", {"task": "statistics", "dump_enable": True, "exec_range": "all"}),
        ("all stats", {"task": "statistics", "dump_enable": True, "exec_range": "all", "save_child": True}),
    ]
    samples = {"none": []}
    samples.update({name: [] for name, _ in configs})
    with tempfile.TemporaryDirectory(prefix="probe-bench-") as work:
        def times_of(command):
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            line = [l for l in out.splitlines() if l.startswith("{")][-1]
            return json.loads(line)["times"]

        paths = {}
        for name, config in configs:
            cfg = os.path.join(work, name.replace(" ", "_") + ".json")
            with open(cfg, "w") as f:
                json.dump(config, f)
            paths[name] = cfg
        for round_ in range(args.rounds):
            samples["none"] += times_of([python, timing, demo, str(args.repeats)])
            for name, _ in configs:
                out = os.path.join(work, "%s_%d" % (name.replace(" ", "_"), round_))
                samples[name] += times_of([probe, "run", "--quiet", "--output", out, "--config", paths[name], "--",
                                           python, timing, demo, str(args.repeats)])
    results = {name: statistics.median(values) for name, values in samples.items()}
    base = results["none"]
    print("demo decoder (6 layers, hidden 256, 32-token prompt + 24 tokens), CPU, median of %d loops"
          " (%d interleaved processes x %d):" % (args.rounds * args.repeats, args.rounds, args.repeats))
    print("  %-12s %8.3f s" % ("no probe", base))
    for name, _ in configs:
        print("  %-12s %8.3f s   %5.2fx" % (name, results[name], results[name] / base))


if __name__ == "__main__":
    sys.exit(main())
