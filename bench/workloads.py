#!/usr/bin/python3
"""The models the benchmarks time (not a test). Run in its own process, with or without the
probe around it; prints one JSON line: the wall time of each timed repeat (warm-up excluded),
and how many repeats ran in all (the dump holds the warm-up's ops too).

    /usr/bin/python3 bench/workloads.py MODEL [--repeats N] [--warmup N] [--steps N]
                                        [--debugger L1|mix --dump-path DIR]

MODEL:
  small_mlp   a training loop of a small MLP (Linear 32-64-64-10, batch 16, SGD): one repeat is
              --steps training steps (default 500); what users of small models feel per op
  mlp20       a training step of a 20-layer MLP (Linear 1024 + ReLU, batch 64, SGD)
  small_op    forward + backward of a 2-layer TransformerEncoder (d=64, 4 heads, batch 8,
              sequence 16): many small aten ops
  decoder     the demo decoder generating 24 tokens after a 32-token prompt

--debugger wraps every step in the code-level API (PrecisionDebugger, task statistics) at that
level, writing under --dump-path (PYTHONPATH must reach probe_studio).

--alternate-hooks (under `probe run`) times the probe's hooks in this one process: each repeat
runs once with them (nn.Module.__call__, torch.autograd.backward and grad as the probe set them)
and once with torch's own, in alternating order, and prints both times. A ratio of two processes
moves by a few percent with where each one's memory landed; this one does not, and shows what the
hooks alone cost (not the probe's threads and libraries).
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import importlib.util
import json
import os
import sys
import time

# One thread for the BLAS as for torch's own kernels (torch.set_num_threads below): OpenBLAS's
# second thread spins on the other core, and whatever else runs there (the probe's threads, the
# benchmark's other processes) stalls it for a time slice, which made ratios swing by 0.5x.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))


def small_mlp():
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    x, y = torch.randn(16, 32), torch.randn(16, 10)

    def step():
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return model, step


def mlp20():
    layers = []
    for _ in range(20):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, 1024), torch.randn(64, 1024)

    def step():
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return model, step


def small_op():
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    x = torch.randn(8, 16, 64)

    def step():
        model(x).float().pow(2).mean().backward()
        model.zero_grad()
    return model, step


def decoder():
    demo = os.environ.get("PROBE_DEMO") or os.path.join(here, "..", "resources", "demo", "llama_demo.py")
    spec = importlib.util.spec_from_file_location("llama_demo", demo)
    llama = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(llama)
    model = llama.TinyLlama(hidden=256, layers=6, heads=8, intermediate=688).eval()
    prompt = torch.randint(0, 256, (1, 32), generator=torch.Generator().manual_seed(1235))
    return model, lambda: llama.generate(model, prompt, 24)


MODELS = {"small_mlp": small_mlp, "mlp20": mlp20, "small_op": small_op, "decoder": decoder}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--steps", type=int, default=None, help="steps per repeat (default: 500 for small_mlp, 1 else)")
    parser.add_argument("--debugger", choices=("L1", "mix"))
    parser.add_argument("--dump-path")
    parser.add_argument("--profile", help="write a cProfile of the timed repeats to this file")
    parser.add_argument("--alternate-hooks", action="store_true",
                        help="time each repeat with the probe's hooks and with torch's own (under probe run)")
    args = parser.parse_args()
    torch.manual_seed(1234)
    torch.set_num_threads(1)
    model, step = MODELS[args.model]()
    steps = args.steps or (500 if args.model == "small_mlp" else 1)
    debugger = None
    if args.debugger:
        from probe_studio.pytorch import PrecisionDebugger
        config = os.path.join(args.dump_path, "config.json")
        os.makedirs(args.dump_path, exist_ok=True)
        with open(config, "w") as f:
            json.dump({"task": "statistics", "dump_path": args.dump_path, "level": args.debugger}, f)
        debugger = PrecisionDebugger(config_path=config)

    def one_step():
        if debugger is None:
            step()
            return
        debugger.start(model=model)
        step()
        debugger.stop()
        debugger.step()

    if args.alternate_hooks:
        return alternate_hooks(step, steps, args.warmup, args.repeats)

    times, cpu_times = [], []
    profiler = None
    for i in range(args.warmup + args.repeats):
        if i == args.warmup and args.profile:
            import cProfile
            profiler = cProfile.Profile()
            profiler.enable()
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(steps):
            one_step()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        if i >= args.warmup:
            times.append(elapsed)
            cpu_times.append(cpu)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    # cpu: the process's CPU time (all its threads): on a shared machine it varies far less
    # than the wall time.
    print(json.dumps({"times": times, "cpu": cpu_times, "runs": args.warmup + args.repeats, "steps": steps}))


def alternate_hooks(step, steps, warmup, repeats):
    module, autograd = torch.nn.Module, torch.autograd
    hooked = (module.__call__, autograd.backward, autograd.grad)
    if not all(hasattr(h, "__wrapped__") for h in hooked):
        sys.exit("--alternate-hooks runs under `probe run` (the probe's hooks are not in place)")
    own = tuple(h.__wrapped__ for h in hooked)

    def timed(hooks, n):
        module.__call__, autograd.backward, autograd.grad = hooks
        for _ in range(warmup * steps):
            step()
        start = time.perf_counter()
        for _ in range(n):
            step()
        return time.perf_counter() - start

    times = {"hooked": [], "own": []}
    for i in range(repeats):
        order = (("hooked", hooked), ("own", own)) if i % 2 == 0 else (("own", own), ("hooked", hooked))
        for name, hooks in order:
            times[name].append(timed(hooks, steps))
    module.__call__, autograd.backward, autograd.grad = hooked
    print(json.dumps({"times_hooked": times["hooked"], "times_own": times["own"], "steps": steps}))


if __name__ == "__main__":
    sys.exit(main())
