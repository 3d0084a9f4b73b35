"""A small MLP for probe replay. With --wrong-gelu, aten::gelu's CPU kernel is replaced (through
torch.library) by a wrong formula, x * sigmoid(1.5 x) instead of x * Phi(x): the dump records it
as aten::gelu, and only a replay of that op from its own inputs can tell it computed something
else. With --dropout, a dropout in training mode (random: not replayable) follows."""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(32, 8)
        self.dropout = dropout

    def forward(self, x):
        y = self.fc2(self.act(self.fc1(x)))
        if self.dropout:
            y = nn.functional.dropout(y, 0.5, training=True)
        return y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--wrong-gelu", action="store_true")
    parser.add_argument("--dropout", action="store_true")
    args = parser.parse_args()
    keep = None
    if args.wrong_gelu:
        keep = torch.library.Library("aten", "IMPL")

        def sloppy_gelu(x, approximate="none"):
            return x * torch.sigmoid(1.5 * x)
        keep.impl("gelu", sloppy_gelu, "CPU")
    torch.manual_seed(0)
    model = MLP(args.dropout)
    with torch.no_grad():
        out = model(torch.randn(4, 16))
    print("output sum %.6f" % out.sum().item())
    del keep


if __name__ == "__main__":
    main()
