"""One training step of a small MLP under DistributedDataParallel (gloo, CPU), dumped with
PrecisionDebugger: each rank sees its own batch, so activations differ between ranks while the
weights (and the reduced gradients) must not.

    ddp_train.py DUMP_PATH WORLD_SIZE [--task tensor|statistics] [--skew-rank R]

Starts WORLD_SIZE processes itself. --skew-rank R changes one weight element on rank R before
DDP's first broadcast is undone (after wrapping), so the replicas disagree on that weight.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def rank_main(rank, args, store):
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=args.world)
    from probe_studio.pytorch import PrecisionDebugger

    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(Mlp())
    if rank == args.skew_rank:
        with torch.no_grad():
            model.module.fc2.weight[1, 3] += 0.25
    debugger = PrecisionDebugger(task=args.task, dump_path=args.dump_path, level="mix")
    torch.manual_seed(100 + rank)  # every rank its own batch
    x = torch.randn(8, 16)
    debugger.start(model=model.module)
    loss = model(x).square().mean()
    loss.backward()
    debugger.stop()
    debugger.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dump_path")
    parser.add_argument("world", type=int)
    parser.add_argument("--task", default="tensor")
    parser.add_argument("--skew-rank", type=int, default=-1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(rank_main, args=(args, os.path.join(tmp, "store")), nprocs=args.world, join=True)


if __name__ == "__main__":
    sys.exit(main())
