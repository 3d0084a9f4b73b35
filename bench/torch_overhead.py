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
    parser.add_argument("--repeats", type=int, default=5)
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
    results = {}
    with tempfile.TemporaryDirectory(prefix="probe-bench-") as work:
        def median_time(command):
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            line = [l for l in out.splitlines() if l.startswith("{")][-1]
            return statistics.median(json.loads(line)["times"])

        results["none"] = median_time([python, timing, demo, str(args.repeats)])
        for name, config in configs:
            cfg = os.path.join(work, name.replace(" ", "_") + ".json")
            with open(cfg, "w") as f:
                json.dump(config, f)
            out = os.path.join(work, name.replace(" ", "_"))
            results[name] = median_time([probe, "run", "--quiet", "--output", out, "--config", cfg, "--",
                                         python, timing, demo, str(args.repeats)])
    base = results["none"]
    print("demo decoder (6 layers, hidden 256, 32-token prompt + 24 tokens), median of %d, CPU:" % args.repeats)
    print("  %-12s %8.3f s" % ("no probe", base))
    for name, _ in configs:
        print("  %-12s %8.3f s   %5.2fx" % (name, results[name], results[name] / base))


if __name__ == "__main__":
    sys.exit(main())
