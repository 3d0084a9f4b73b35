#!/usr/bin/env python3
"""Times the demo decoder's generate loop in this process: prints one JSON line with the wall
time of each repeat (the first, warm-up, excluded). Used by torch_overhead.py, which runs it
with and without the probe."""
# SPDX-License-Identifier: GPL-3.0-or-later
import importlib.util
import json
import os
import sys
import time

# One thread for the BLAS as for torch's kernels (set_num_threads below), as bench/workloads.py:
# OpenBLAS's second thread spins on the other core, stalling the probe's writer there; medians of
# the same configuration moved from 0.167 s to 0.22 s between runs.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch

demo = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
spec = importlib.util.spec_from_file_location("llama_demo", demo)
llama = importlib.util.module_from_spec(spec)
spec.loader.exec_module(llama)

torch.manual_seed(1234)
torch.set_num_threads(1)
model = llama.TinyLlama(hidden=256, layers=6, heads=8, intermediate=688).eval()
prompt = torch.randint(0, 256, (1, 32), generator=torch.Generator().manual_seed(1235))
times = []
for i in range(repeats + 1):
    start = time.perf_counter()
    llama.generate(model, prompt, 24)
    elapsed = time.perf_counter() - start
    if i:
        times.append(elapsed)
print(json.dumps({"times": times}))
