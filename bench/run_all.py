#!/usr/bin/python3
"""Every performance figure Probe Studio promises, measured in one run on this machine and
printed as a ratio to its baseline, against its target, with peak memory (not a test).

    tools/bench.sh                     # builds what it needs, then runs this
    /usr/bin/python3 bench/run_all.py [--build DIR] [--rounds N] [--only SECTION,...]

Sections (each run interleaved with its baseline, so that the load of a shared machine hits
both alike; medians over --rounds processes, ratios paired round by round):
  probe    the injected probe (`probe run`) on a small MLP training loop, a 20-layer MLP, the
           demo decoder and a small-op model (2-layer TransformerEncoder): sleeping, layer-level
           statistics, every-op statistics; fixed cost per layer-level op, cost per row
  api      the code-level API (PrecisionDebugger, statistics) at L1 and mix on the small-op model
  writer   tensor writing against a plain sequential write of the same bytes; queue memory
  kernels  statistics kernel against a plain memory read per dtype; CSV rows; hashing
  readers  `probe summary` and `probe compare` on a synthetic dump of 1,000,000 rows
  app      probe-studio opening that dump: time to ready, longest GUI stall, switching
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import csv
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"


class Report:
    def __init__(self):
        self.rows = []

    def add(self, section, name, value, unit, target=None, better="lower", peak_mib=None, note=""):
        ok = None
        if target is not None and value is not None:
            ok = value <= target if better == "lower" else value >= target
        self.rows.append((section, name, value, unit, target, better, ok, peak_mib, note))
        self.print_row(self.rows[-1])

    @staticmethod
    def print_row(row):
        section, name, value, unit, target, better, ok, peak, note = row
        shown = "n/a" if value is None else ("%.3g" % value if abs(value) < 1000 else "%.0f" % value)
        goal = "" if target is None else ("%s %g%s" % ("≤" if better == "lower" else "≥", target, unit))
        verdict = "" if ok is None else ("ok" if ok else "MISSED")
        mem = "" if peak is None else "%.0f MiB" % peak
        print("  %-56s %9s %-6s %-15s %-7s %8s  %s" % (name, shown, unit, goal, verdict, mem, note), flush=True)

    def summary(self):
        judged = [r for r in self.rows if r[6] is not None]
        missed = [r for r in judged if not r[6]]
        print("\n%d figures against a target: %d met, %d missed%s" % (
            len(judged), len(judged) - len(missed), len(missed),
            "" if not missed else ": " + "; ".join(r[1] for r in missed)))
        return len(missed)


def run_child(command, env=None):
    """Runs a command; returns (stdout, stderr, seconds, peak resident MiB of it and of the
    children it waited for: wait4's own account of this child alone)."""
    start = time.perf_counter()
    out_file = tempfile.TemporaryFile(mode="w+")
    err_file = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(command, stdout=out_file, stderr=err_file, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    out_file.seek(0)
    err_file.seek(0)
    out, err = out_file.read(), err_file.read()
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(command), proc.returncode, err[-3000:]))
    return out, err, elapsed, usage.ru_maxrss / 1024.0


def paired_ratio(samples, baselines):
    """The median of each round's ratio to the baseline measured just before it in the same
    round, and a note with every round's: a VM's speed drifts by a quarter from one minute to
    the next, which a ratio of two medians taken across rounds swallowed whole."""
    ratios = [t / b for t, b in zip(samples, baselines)]
    return statistics.median(ratios), "rounds: " + ", ".join("%.2f" % r for r in ratios)


def file_creation_us(directory, count=200):
    """Median microseconds to create (and close) an empty file in a new folder of `directory`."""
    folder = tempfile.mkdtemp(dir=directory, prefix="creation-")
    times = []
    for i in range(count):
        start = time.perf_counter()
        os.close(os.open(os.path.join(folder, str(i)), os.O_WRONLY | os.O_CREAT, 0o644))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def tree_bytes(directory):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(directory)
               for name in names if not os.path.islink(os.path.join(root, name)))


def last_json(text):
    lines = [l for l in text.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError("no JSON line in:\n" + text[-2000:])
    return json.loads(lines[-1])


# ------------------------------------------------------------------------------------------
# The injected probe

def layer_op_executions(dump):
    """Executions of layer-level ops in an op-level dump (distinct round and op id without
    '_'), and the statistic rows in all."""
    executions, rows = set(), 0
    for path in glob.glob(os.path.join(dump, "atb_dump_data", "data", "*", "*", "statistic.csv")):
        with open(path, newline="") as f:
            reader = csv.reader(f)
            next(reader, None)
            for row in reader:
                rows += 1
                if len(row) > 4 and "_" not in row[4]:
                    executions.add((path, row[4]))
    return len(executions), rows


def bench_probe(args, report, work):
    probe = os.path.join(args.build, "bin", "probe")
    workloads = os.path.join(here, "workloads.py")
    configs = {
        "sleeping": {"task": "statistics", "dump_enable": False},
        "layer": {"task": "statistics", "dump_enable": True, "exec_range": "all"},
        "all": {"task": "statistics", "dump_enable": True, "exec_range": "all", "save_child": True},
    }
    paths = {}
    for name, config in configs.items():
        paths[name] = os.path.join(work, "config_%s.json" % name)
        with open(paths[name], "w") as f:
            json.dump(config, f)
    env = dict(os.environ, PROBE_DEMO=os.path.join(args.build, "share", "probe-studio", "demo", "llama_demo.py"))
    env.pop("LD_PRELOAD", None)  # glibc's default allocator, as users have it
    plans = [
        # model, extra args, configurations, label
        ("small_mlp", ["--repeats", "3", "--steps", "400"], ["sleeping", "layer", "all"],
         "small MLP training loop (Linear 32-64-64-10, batch 16)"),
        ("mlp20", ["--repeats", "4"], ["sleeping", "layer"], "20-layer MLP training step (1024 wide, batch 64)"),
        ("decoder", ["--repeats", "3"], ["sleeping", "layer", "all"], "demo decoder, 24 generated tokens"),
        ("small_op", ["--repeats", "3", "--steps", "20"], ["all"],
         "small-op model (2-layer TransformerEncoder d=64, fwd+bwd)"),
    ]
    for model, extra, names, label in plans:
        print("\n%s:" % label, flush=True)
        samples = {"none": [], **{n: [] for n in names}}
        peaks = {"none": 0, **{n: 0 for n in names}}
        counts = {}
        for round_ in range(args.rounds):
            out, _, _, peak = run_child([PYTHON, workloads, model] + extra, env=env)
            samples["none"].append(statistics.median(last_json(out)["times"]))
            peaks["none"] = max(peaks["none"], peak)
            for name in names:
                dump = os.path.join(work, "%s_%s_%d" % (model, name, round_))
                out, _, _, peak = run_child([probe, "run", "--quiet", "--output", dump, "--config", paths[name], "--",
                                             PYTHON, workloads, model] + extra, env=env)
                result = last_json(out)
                samples[name].append(statistics.median(result["times"]))
                peaks[name] = max(peaks[name], peak)
                if round_ == 0 and name != "sleeping":
                    executions, rows = layer_op_executions(dump)
                    # per timed repeat (the dump also holds the warm-up's)
                    counts[name] = (executions / result["runs"], rows / result["runs"])
        base = statistics.median(samples["none"])
        report.add("probe", "%s: no probe (s per repeat)" % model, base, "s", peak_mib=peaks["none"])
        for name in names:
            ratio, note = paired_ratio(samples[name], samples["none"])
            t = ratio * base
            target = None
            if name == "sleeping":
                target = 1.02
            elif name == "layer":
                target = {"small_mlp": 1.5, "mlp20": 1.15}.get(model)
            elif name == "all":
                target = {"decoder": 1.5}.get(model)
            report.add("probe", "%s: %s statistics" % (model, name) if name != "sleeping" else "%s: probe sleeping" % model,
                       ratio, "x", target, peak_mib=peaks[name], note=note)
            if name in counts and counts[name][0] > 0:
                executions, rows = counts[name]
                extra_s = max(0.0, t - base)
                if name == "layer" and model == "small_mlp":
                    report.add("probe", "small_mlp: fixed cost per layer-level op", extra_s / executions * 1e6, "µs", 10,
                               note="%.0f layer-op executions per repeat" % executions)
                if name == "all" and model == "small_op":
                    report.add("probe", "small_op: cost per statistic row (every op)", extra_s / rows * 1e6, "µs", 2,
                               note="%.0f rows per repeat" % rows)
        if model == "small_mlp":
            # The sleeping probe's hooks alone, timed against torch's own in one process
            # (workloads.py --alternate-hooks): free of the few percent a ratio of two processes
            # moves by with where each one's memory landed.
            out, _, _, _ = run_child([probe, "run", "--quiet", "--output", os.path.join(work, "hooks"), "--config",
                                      paths["sleeping"], "--", PYTHON, workloads, model, "--alternate-hooks",
                                      "--repeats", "30", "--steps", "200"], env=env)
            result = last_json(out)
            ratios = [h / o for h, o in zip(result["times_hooked"], result["times_own"])]
            report.add("probe", "small_mlp: sleeping probe's hooks, in one process", statistics.median(ratios), "x",
                       note="30 alternating repeats, %.3f-%.3f; not its threads and libraries" % (min(ratios),
                                                                                                  max(ratios)))


def bench_api(args, report, work):
    workloads = os.path.join(here, "workloads.py")
    env = dict(os.environ, PYTHONPATH=os.path.join(args.build, "lib", "python3", "dist-packages"),
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("LD_PRELOAD", None)
    print("\ncode-level API (PrecisionDebugger, statistics) on the small-op model, every step dumped:", flush=True)
    extra = ["--repeats", "3", "--steps", "20"]
    samples = {"none": [], "L1": [], "mix": []}
    peaks = dict.fromkeys(samples, 0)
    for round_ in range(args.rounds):
        for level in samples:
            command = [PYTHON, workloads, "small_op"] + extra
            if level != "none":
                command += ["--debugger", level, "--dump-path", os.path.join(work, "api_%s_%d" % (level, round_))]
            out, _, _, peak = run_child(command, env=env)
            samples[level].append(statistics.median(last_json(out)["times"]))
            peaks[level] = max(peaks[level], peak)
    base = statistics.median(samples["none"])
    report.add("api", "small_op: no debugger (s per 20 steps)", base, "s", peak_mib=peaks["none"])
    for level, target in (("L1", 2.0), ("mix", 2.5)):
        ratio, note = paired_ratio(samples[level], samples["none"])
        report.add("api", "small_op: %s statistics" % level, ratio, "x", target, peak_mib=peaks[level], note=note)


def bench_writer(args, report, work):
    print("\ntensor writing (task tensor, 48 tensors of 16 MiB), against plain write(2) of the same bytes:", flush=True)
    out, _, _, peak = run_child([os.path.join(args.build, "bin", "probe_bench_writer"), "--dir", work])
    r = last_json(out)
    report.add("writer", "plain sequential write", r["plain_mb_s"], "MB/s", better="higher")
    report.add("writer", "probe tensor writing, ratio to plain", r["probe_mb_s"] / r["plain_mb_s"], "x", 0.7,
               better="higher", peak_mib=peak)
    cap = float(os.environ.get("PROBE_MEMORY_CAP_MB", "512"))
    report.add("writer", "memory held by the write queue (cap %.0f MiB)" % cap, r["queue_peak_mib"], "MiB", cap)


def bench_kernels(args, report, work):
    print("\nkernels (Google Benchmark, CPU time):", flush=True)
    binary = os.path.join(args.build, "bin", "probe_micro_bench")
    if not os.path.exists(binary):
        print("  (probe_micro_bench not built: Google Benchmark missing)")
        return
    out, _, _, _ = run_child([binary, "--benchmark_format=json"])
    data = json.loads(out)
    by_name = {b["name"].split("/min_time")[0]: b for b in data["benchmarks"]}
    read = by_name["BM_MemoryRead"]["bytes_per_second"] / 1e9
    report.add("kernels", "memory read, one core", read, "GB/s", better="higher")
    for dtype, target in (("float32", 0.8), ("float16", 0.5), ("bfloat16", 0.5)):
        rate = by_name["BM_Stats/" + dtype]["bytes_per_second"] / 1e9
        report.add("kernels", "statistics %s, ratio to memory read" % dtype, rate / read, "x", target, better="higher",
                   note="%.1f GB/s" % rate)
    report.add("kernels", "statistics float32 of a 256x688 weight in cache", by_name["BM_StatsOfFloats/176128"][
        "bytes_per_second"] / 1e9, "GB/s", better="higher", note="the kernel's own speed, not the memory's")
    report.add("kernels", "statistics of 64 floats (fixed cost)", by_name["BM_StatsOfFloats/64"]["cpu_time"], "ns")
    report.add("kernels", "statistic.csv row formatting", by_name["BM_FormatStatRow"]["cpu_time"], "ns")
    report.add("kernels", "statistic.csv row parsing", by_name["BM_ParseStatRow"]["bytes_per_second"] / 1e6, "MB/s",
               better="higher")
    report.add("kernels", "content hash (XXH64)", by_name["BM_ContentHash64"]["bytes_per_second"] / 1e9, "GB/s",
               better="higher")
    report.add("kernels", "CRC-32 (md5 field)", by_name["BM_Crc32"]["bytes_per_second"] / 1e9, "GB/s", better="higher")


def synthetic_dump(args, work, name):
    path = os.path.join(work, name)
    if not os.path.isdir(path):
        run_child([os.path.join(args.build, "bin", "probe_gen_synthetic_dump"), "--output", path, "--ops", "100000",
                   "--rows", "1000000"])
    return path


def csv_bytes(dump):
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(dump, "**", "statistic.csv"), recursive=True))


def run_timed(command, env=None, ok_codes=(0,)):
    """Runs a command; returns (wall seconds, CPU seconds (user + system, its children's
    included), peak resident MiB, stdout)."""
    start = time.perf_counter()
    out_file = tempfile.TemporaryFile(mode="w+")
    err_file = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(command, stdout=out_file, stderr=err_file, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    out_file.seek(0)
    err_file.seek(0)
    if code not in ok_codes:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(command), code, err_file.read()[-3000:]))
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, out_file.read()


def bench_readers(args, report, work):
    print("\nreaders on a synthetic dump of 100,000 ops and 1,000,000 rows (medians of %d interleaved runs):"
          % args.rounds, flush=True)
    probe = os.path.join(args.build, "bin", "probe")
    a = synthetic_dump(args, work, "synthetic_a")
    b = os.path.join(work, "synthetic_b")
    if not os.path.isdir(b):
        shutil.copytree(a, b, symlinks=True)
    size = csv_bytes(a)
    rows = 1e6
    summary, compare = [], []
    for _ in range(args.rounds):  # interleaved: the load of a shared machine hits both alike
        summary.append(run_timed([probe, "summary", a]))
        compare.append(run_timed([probe, "compare", a, b], ok_codes=(0, 1)))
    for name, runs, rate_name in (("probe summary", summary, "rows per second"),
                                  ("probe compare", compare, "row pairs per second (1,000,000 rows in each dump)")):
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        peak = max(r[2] for r in runs)
        report.add("readers", "%s, %s" % (name, rate_name), rows / wall, "rows/s", 1e6, better="higher",
                   peak_mib=peak, note="wall %.2f s, CPU %.2f s (%s)" % (
                       wall, cpu, ", ".join("%.2f/%.2f" % (r[0], r[1]) for r in runs)))
        if name == "probe summary":
            report.add("readers", "probe summary, statistic.csv read rate", size / 1e6 / wall, "MB/s", 300,
                       better="higher", note="%.0f MB of statistic.csv" % (size / 1e6))
        report.add("readers", "%s, rows per CPU second" % name, rows / cpu, "rows/s", better="higher")
    bench_compare_big_tensors(args, report, work)


BIG_TENSOR_MODEL = """
import sys, torch
torch.manual_seed(0)
class Scale(torch.nn.Module):
    def forward(self, x):
        return x * float(sys.argv[1])
with torch.no_grad():
    Scale()(torch.randn(1 << 25))
"""


def bench_compare_big_tensors(args, report, work):
    """`probe compare` of two runs that kept a 128 MiB tensor's data: what it holds at once."""
    probe = os.path.join(args.build, "bin", "probe")
    model = os.path.join(work, "big_tensor.py")
    config = os.path.join(work, "config_tensor.json")
    with open(model, "w") as f:
        f.write(BIG_TENSOR_MODEL)
    with open(config, "w") as f:
        json.dump({"task": "tensor", "dump_enable": True, "exec_range": "all"}, f)
    dumps = []
    for name, scale in (("big_a", "1"), ("big_b", "1.0000001")):
        dumps.append(os.path.join(work, name))
        run_child([probe, "run", "--quiet", "--output", dumps[-1], "--config", config, "--", PYTHON, model, scale])
    wall, cpu, peak, _ = run_timed([probe, "compare"] + dumps, ok_codes=(0, 1))
    report.add("readers", "probe compare, two runs of a 128 MiB tensor: peak memory", peak, "MiB",
               note="wall %.2f s, CPU %.2f s; the tensors are read a piece at a time" % (wall, cpu))
    for dump in dumps:
        shutil.rmtree(dump, ignore_errors=True)


def bench_app(args, report, work):
    binary = os.path.join(args.build, "bin", "probe_bench_gui_load")
    if not os.path.exists(binary):
        print("\n(probe_bench_gui_load not built: no GUI)")
        return
    print("\nprobe-studio opening the synthetic dump (offscreen; medians of %d runs):" % args.rounds, flush=True)
    dump = synthetic_dump(args, work, "synthetic_a")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    results, peak, cpus = [], 0, []
    for _ in range(args.rounds):
        _, cpu, p, out = run_timed([binary, "--dump", dump], env=env)
        results.append(last_json(out))
        peak = max(peak, p)
        cpus.append(cpu)

    def median(key):
        return statistics.median(r[key] for r in results)

    def runs(key):
        return "runs: " + ", ".join("%.0f" % r[key] for r in results)

    # The load's own peak (before the reference is opened) where the benchmark says it; the whole
    # process's (a second 1M-row dump and two comparison results) on the comparison's row.
    load_peak = max(r["load_peak_mib"] for r in results) if "load_peak_mib" in results[0] else peak
    report.add("app", "1,000,000 rows ready", median("load_ms") / 1e3, "s", 2.0, peak_mib=load_peak,
               note=runs("load_ms"))
    report.add("app", "longest GUI stall while loading", median("longest_stall_ms"), "ms", 50,
               note=runs("longest_stall_ms") + ("; the GUI thread ran %s ms of it" % ", ".join(
                   "%.0f" % r["longest_stall_cpu_ms"] for r in results) if "longest_stall_cpu_ms" in results[0] else ""))
    report.add("app", "switching round", median("switch_round_ms"), "ms", 50, note=runs("switch_round_ms"))
    report.add("app", "switching op", median("switch_op_ms"), "ms", 50, note=runs("switch_op_ms"))
    if "filter_ms" in results[0]:
        report.add("app", "searching or filtering the op tree (the longest of 6 changes)", median("filter_ms"),
                   "ms", 50, note=runs("filter_ms"))
    if "compare_ms" in results[0]:
        report.add("app", "comparing with a 1,000,000-row reference: ready", median("compare_ms") / 1e3, "s",
                   peak_mib=peak, note=runs("compare_ms"))
        report.add("app", "longest GUI stall while opening it and comparing", median("compare_stall_ms"), "ms", 50,
                   note=runs("compare_stall_ms") + "; the GUI thread ran %s ms of it" % ", ".join(
                       "%.0f" % r["compare_stall_cpu_ms"] for r in results))
        report.add("app", "starting a comparison: the call (snapshots)", median("compare_start_call_ms"), "ms", 50,
                   note="runs: " + ", ".join("%.2f" % r["compare_start_call_ms"] for r in results))
        report.add("app", "starting a comparison: with the redraws it causes", median("compare_start_ms"), "ms", 50,
                   note=runs("compare_start_ms"))
        report.add("app", "longest GUI stall while comparing again", median("compare_again_stall_ms"), "ms", 50,
                   note=runs("compare_again_stall_ms"))
        report.add("app", "sorting the compared ops by a column: sorted", median("sort_ms"), "ms",
                   note=runs("sort_ms") + " (the slowest of three sorts)")
        report.add("app", "longest GUI stall while sorting the compared ops", median("sort_stall_ms"), "ms", 50,
                   note=runs("sort_stall_ms") + "; the GUI thread ran %s ms of it" % ", ".join(
                       "%.0f" % r["sort_stall_cpu_ms"] for r in results))
    report.add("app", "whole benchmark process, CPU time", statistics.median(cpus), "s",
               note="load, browse and compare")


SECTIONS = {"probe": bench_probe, "api": bench_api, "writer": bench_writer, "kernels": bench_kernels,
            "readers": bench_readers, "app": bench_app}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(here, "..", "build"), help="build tree (or install prefix)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved processes per configuration")
    parser.add_argument("--only", help="comma-separated sections: " + ", ".join(SECTIONS))
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    chosen = args.only.split(",") if args.only else list(SECTIONS)
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        parser.error("unknown section(s): " + ", ".join(unknown))
    started = time.perf_counter()
    print("Probe Studio benchmarks (%s, %d cores); ratios to each figure's baseline, medians of %d interleaved runs"
          % (os.uname().nodename, os.cpu_count(), args.rounds))
    print("  %-56s %16s %-15s %-7s %8s" % ("figure", "measured", "target", "", "peak mem"))
    report = Report()
    # Every dump stays until the end of the run: on a file system without a journal, ext4 skips
    # inodes freed in the last minutes when it allocates one, scanning past each, so deleting a
    # dump made the next runs' files cost up to 0.6 ms each (5-20 us otherwise), on the probe's
    # writer thread, which then took a core from the model (small_mlp sleeping 1.18x; the API's
    # L1 2.4x against 1.9x with no deletion before it).
    with tempfile.TemporaryDirectory(prefix="probe-bench-") as work:
        report.add("setup", "creating a file in the work directory", file_creation_us(work), "µs",
                   note="%s; 5-20 µs is usual, more slows every probe run" % work)
        for section in chosen:
            try:
                SECTIONS[section](args, report, work)
            except Exception as exc:  # one broken section must not hide the others' figures
                print("  %s: failed: %s" % (section, exc), flush=True)
                report.add(section, section + " (failed)", None, "", note=str(exc).splitlines()[0][:120])
        report.add("setup", "creating a file in the work directory, at the end", file_creation_us(work), "µs",
                   note="the dumps kept until now: %.1f GB" % (tree_bytes(work) / 1e9))
    missed = report.summary()
    print("total %.0f s" % (time.perf_counter() - started))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
