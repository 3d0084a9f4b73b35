"""A model whose outermost module calls aten ops itself (a scale after the embedding, a residual
add before the head), run for 4 steps. With --wake-at N the script itself replaces the probe's
config before step N, from sleeping (dump_enable false) to dumping every layer-level op."""
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


parser = argparse.ArgumentParser()
parser.add_argument("--wake-at", type=int, default=-1)
args = parser.parse_args()
torch.manual_seed(7)
model = RootOps().eval()
tokens = torch.arange(8).reshape(1, 8)
with torch.no_grad():
    for step in range(4):
        if step == args.wake_at:
            path = os.environ["PROBE_CONFIG"]
            with open(path) as f:
                config = json.load(f)
            config["dump_enable"] = True
            with open(path + ".tmp", "w") as f:
                json.dump(config, f)
            os.replace(path + ".tmp", path)
        model(tokens)
print("done")
