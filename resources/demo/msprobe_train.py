#!/usr/bin/env python3
"""The small training example from the msprobe documentation, without any debugger code:
two Linear layers and a ReLU, a forward and a backward. Under `probe run` the three modules
are the layer-level ops and their backward passes are dumped as "<layer>.backward" ops."""
# SPDX-License-Identifier: GPL-3.0-or-later
import torch
import torch.nn as nn


class ModuleOP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear_1 = nn.Linear(in_features=8, out_features=4)
        self.linear_2 = nn.Linear(in_features=4, out_features=2)
        self.relu = nn.ReLU()

    def forward(self, x):
        x1 = self.linear_1(x)
        x2 = self.linear_2(x1)
        r1 = self.relu(x2)
        return r1


if __name__ == "__main__":
    torch.manual_seed(1234)
    module = ModuleOP()
    x = torch.randn(10, 8)
    out = module(x)
    loss = out.sum()
    loss.backward()
    print("loss: %.6f" % loss.item())
    print("linear_1.weight.grad norm: %.6f" % module.linear_1.weight.grad.norm().item())
