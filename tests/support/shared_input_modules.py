"""Modules whose inputs reach the rest of a model in more than one way, for the tests of a
module's own share of its inputs' gradients (what torch's full backward hook gives): under
`probe run` (tests/torch/test_module_calls.py) and the code-level API
(tests/python_api/test_behaviour.py). The tests put this text before their programs and run it
themselves for the reference."""
# SPDX-License-Identifier: GPL-3.0-or-later
import torch
import torch.nn as nn


class Attn(nn.Module):  # its input read by three nodes: q, k and v
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        return torch.softmax(self.q(x) @ self.k(x).transpose(-1, -2), -1) @ self.v(x)


class Inner(nn.Module):
    def forward(self, a, b):
        return a * b + a


class Two(nn.Module):  # two outputs, a program may use one
    def __init__(self):
        super().__init__()
        self.p, self.q = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        return self.p(x), self.q(x)


class Pass(nn.Module):  # returns its input as it is
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x):
        return x, self.l(x)
