"""Two gloo ranks as pipeline stages (for test_ranks.py): rank 1 receives rank 0's activation
into a torch.empty buffer, and both gather into torch.empty buffers, inside the model's forward.
Before each step the heap is filled with junk that differs from run to run, so that a row of a
buffer read before it is written differs between two runs of the same job."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os

import torch
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class Stage(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        if rank == 0:
            dist.send(x, 1)
            h = x
        else:
            h = torch.empty(2, 8)
            dist.recv(h, 0)
        gathered = [torch.empty(2, 8) for _ in range(2)]
        dist.all_gather(gathered, h)
        return self.lin(h) + gathered[0].sum() + gathered[1].sum()


model = Stage()
for step in range(2):
    junk = [torch.full((64,), -5e21 * (step + 1) - os.getpid()) for _ in range(100)]
    del junk
    model(torch.arange(16.0).view(2, 8) / (7 + step))
dist.destroy_process_group()
