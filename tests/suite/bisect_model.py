"""A small model with one precision-sensitive op, for probe bisect: layer 2 adds a large offset
and its projection cancels it again (every row of its weight sums to zero), so the projection
computes a difference of large magnitudes. In bfloat16 (8 significant bits) the offset input
loses everything below 4, the result is noise; every other op loses only about 1% of precision.

    python bisect_model.py [--steps N]     # dtype from $BISECT_DTYPE (default float32)
    BISECT_UNSEEDED=1 python bisect_model.py   # its input seeded from the clock
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import os
import time

import torch
from torch import nn

WIDTH = 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(WIDTH, 2 * WIDTH)
        self.act = nn.GELU()
        self.down = nn.Linear(2 * WIDTH, WIDTH)

    def forward(self, x):
        return x + self.down(self.act(self.up(x)))


class Canceller(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(WIDTH, WIDTH, bias=False)
        with torch.no_grad():
            self.proj.weight -= self.proj.weight.mean(dim=1, keepdim=True)
        self.register_buffer("offset", torch.full((WIDTH,), 1000.0))

    def forward(self, x):
        shifted = x + self.offset
        return x + self.proj(shifted) * 4.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block(), Canceller(), Block()])
        self.head = nn.Linear(WIDTH, 8)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    dtype = getattr(torch, os.environ.get("BISECT_DTYPE", "float32"))
    torch.manual_seed(0)
    model = Model().to(dtype)
    if os.environ.get("BISECT_UNSEEDED"):  # an input that differs from run to run
        torch.manual_seed(time.time_ns())
    x = torch.randn(16, WIDTH).to(dtype)
    with torch.no_grad():
        for _ in range(args.steps):
            out = model(x)
    print("output sum %.6f" % out.float().sum().item())


if __name__ == "__main__":
    main()
