"""A data-parallel training job as torch.distributed.run starts it (gloo, CPU): a small MLP under
DistributedDataParallel, a few SGD steps, every rank its own batch. Activations differ between
the ranks; the weights and the reduced (averaged) gradients must not.

    python3 -m torch.distributed.run --nproc_per_node=2 ddp_torchrun.py [--steps N]
        [--debugger DUMP_PATH] [--skew-weight-rank R] [--skew-grad-rank R]

--debugger dumps with PrecisionDebugger (task tensor, level mix) into DUMP_PATH, one step<S> per
training step; without it the program is unchanged (dump it under `probe run`).
--skew-weight-rank R changes fc2.weight[1, 3] on rank R after DDP's initial broadcast, so the
replicas disagree on that weight from the first step.
--skew-grad-rank R changes fc1.bias.grad[2] on rank R after the gradients were reduced, so the
replicas agree in step 0 and disagree on fc1.bias from step 1 on.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--debugger")
    parser.add_argument("--skew-weight-rank", type=int, default=-1)
    parser.add_argument("--skew-grad-rank", type=int, default=-1)
    args = parser.parse_args()

    dist.init_process_group("gloo")  # rank and world size from the launcher's environment
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(Mlp())
    if rank == args.skew_weight_rank:
        with torch.no_grad():
            model.module.fc2.weight[1, 3] += 0.25
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    debugger = None
    if args.debugger:
        from probe_studio.pytorch import PrecisionDebugger

        debugger = PrecisionDebugger(task="tensor", dump_path=args.debugger, level="mix")
    for step in range(args.steps):
        torch.manual_seed(100 * step + rank)  # every rank its own batch
        x = torch.randn(8, 16)
        if debugger:
            debugger.start(model=model.module)
        loss = model(x).square().mean()
        loss.backward()
        if debugger:
            debugger.stop()
        if rank == args.skew_grad_rank:
            with torch.no_grad():
                model.module.fc1.bias.grad[2] += 0.5
        optimizer.step()
        optimizer.zero_grad()
        if debugger:
            debugger.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
