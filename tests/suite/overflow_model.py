"""A model with planted overflows, for probe overflow. It is called three times (rounds/steps 0..2)
with inputs of growing magnitude (max 2, 100, 400); layers.0 passes them on unchanged.

* layers.1 (HalfSquare) squares in float16: finite in rounds 0 and 1 (at most 10000), but 400^2
  overflows float16 in round 2: the Inf is born in its mul, everything after inherits it.
* layers.2 (Amplify) multiplies by 1000 in float32: 100 * 100 * 1000 = 1e7 in round 1 is finite in
  float32 but beyond float16's 65504: an overflow risk only when asked (--range float16).

    python overflow_model.py                      # plain (run it under probe run)
    python overflow_model.py --api DUMP_PATH      # dumped by PrecisionDebugger (msprobe layout)
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import json
import os

import torch
from torch import nn

SCALES = [2.0, 100.0, 400.0]


class HalfSquare(nn.Module):
    def forward(self, x):
        half = x.to(torch.float16)
        squared = half * half
        return squared.float()


class Amplify(nn.Module):
    def forward(self, x):
        return x * 1000.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        first = nn.Linear(4, 4, bias=False)
        with torch.no_grad():
            first.weight.copy_(torch.eye(4))
        self.layers = nn.ModuleList([first, HalfSquare(), Amplify(), nn.Linear(4, 2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", help="dump with PrecisionDebugger (level mix, statistics) into this dump_path")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Model()
    debugger = None
    if args.api:
        from probe_studio.pytorch import PrecisionDebugger
        config = os.path.join(os.path.dirname(os.path.abspath(args.api)), "overflow_api_config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "dump_path": args.api, "rank": [], "step": [], "level": "mix",
                       "statistics": {"scope": [], "list": [], "data_mode": ["all"],
                                      "summary_mode": "statistics"}}, f)
        debugger = PrecisionDebugger(config_path=config)
    base = torch.tensor([[0.5, -1.0, 0.25, 1.0], [1.0, 0.5, -0.5, -0.25]])
    with torch.no_grad():
        for scale in SCALES:
            if debugger:
                debugger.start(model=model)
            out = model(base * scale)
            if debugger:
                debugger.stop()
                debugger.step()
    print("finite output:", bool(torch.isfinite(out).all()))


if __name__ == "__main__":
    main()
