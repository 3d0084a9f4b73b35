"""A model whose outermost module calls aten ops itself (a scale after the embedding, a residual
add before the head), run for 4 steps. With --wake-at N the script itself replaces the probe's
config before step N, from sleeping (dump_enable false) to dumping every layer-level op.
With --sequential the model is an nn.Sequential instead (its outermost module calls only its
modules), trained: forward and backward at each step (--calls N: N forward calls, their losses
summed, before each backward pass, as when gradients are accumulated; --raise-at N: at step N a
last call whose first layer raises, which the script catches)."""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import json
import os

import torch


class RootOps(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(32, 16)
        self.block = torch.nn.Linear(16, 16)
        self.head = torch.nn.Linear(16, 32)

    def forward(self, tokens):
        h = self.embed(tokens) * 4.0
        h = h + self.block(h)
        return self.head(h)


def wake_up():
    path = os.environ["PROBE_CONFIG"]
    with open(path) as f:
        config = json.load(f)
    config["dump_enable"] = True
    with open(path + ".tmp", "w") as f:
        json.dump(config, f)
    os.replace(path + ".tmp", path)


parser = argparse.ArgumentParser()
parser.add_argument("--wake-at", type=int, default=-1)
parser.add_argument("--sequential", action="store_true")
parser.add_argument("--calls", type=int, default=1)
parser.add_argument("--raise-at", type=int, default=-1)
args = parser.parse_args()
torch.manual_seed(7)
tokens = torch.arange(8).reshape(1, 8)
if args.sequential:
    model = torch.nn.Sequential(torch.nn.Embedding(32, 16), torch.nn.Linear(16, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 32))
    for step in range(4):
        if step == args.wake_at:
            wake_up()
        sum(model(tokens + call).square().mean() for call in range(args.calls)).backward()
        model.zero_grad()
        if step == args.raise_at:
            try:
                model(tokens + 1000)  # out of the embedding's range: its call raises
            except IndexError:
                pass
else:
    model = RootOps().eval()
    with torch.no_grad():
        for step in range(4):
            if step == args.wake_at:
                wake_up()
            model(tokens)
try:  # layer calls the adapter counted without beginning them (while the probe slept)
    from probe_studio import torch_hooks
    counted = torch_hooks._adapter.probe_torch_layer_calls_counted() if torch_hooks._adapter else 0
except ImportError:
    counted = 0
print("counted", counted)
print("done")
