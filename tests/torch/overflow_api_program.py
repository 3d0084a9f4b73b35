"""A float16 program with three planted overflow births, for PrecisionDebugger task
overflow_check. Its input x holds values up to 100 (finite in float16, max 65504):

  1. Module.cast.ToHalf (Tensor.half inside): Module.fc, a float32 Linear whose weight row 0 is
     1000, gives 1000 * (sum of x's row 0) = 2e5, finite in float32 but beyond 65504: Inf in
     float16. Torch.abs after it only inherits the Inf.
  2. Module.scale.Scale (Tensor.__mul__ inside): x * 1000 = 1e5: Inf.
  3. Torch.square: (x + 200)^2 = 9e4: Inf.
Tensor.float, Functional.linear, Torch.neg and Torch.add are finite neighbours. (Only ops this
torch has float16 CPU kernels for.)

    python overflow_api_program.py CONFIG_JSON RESULT_PT [--level L1|L0|mix] [--task-arg]

writes the outputs to RESULT_PT (to compare with a run without the debugger: CONFIG_JSON "-")
and prints "finished" as its last line.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse

import torch
from torch import nn

X = [[100.0, 50.0, -25.0, 75.0], [1.0, 2.0, 3.0, 4.0]]


class ToHalf(nn.Module):
    def forward(self, x):
        return x.half()


class Scale(nn.Module):
    def forward(self, x):
        return x * 1000.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4, bias=False)
        with torch.no_grad():
            self.fc.weight.copy_(torch.tensor([[1000.0] * 4, [0.5] * 4, [-0.5] * 4, [0.25] * 4]))
        self.cast = ToHalf()
        self.scale = Scale()

    def forward(self, x):
        h = torch.abs(self.cast(self.fc(x.float())))  # birth 1 (in cast); abs inherits it
        near = torch.neg(x)                          # finite
        y = self.scale(x)                            # birth 2 (the mul inside scale)
        e = torch.square(torch.add(x, 200.0))        # birth 3 (square; the add is finite)
        s = torch.add(near, 1.0)                     # finite
        return h, y, e, s


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("result")
    parser.add_argument("--level", default="L1")
    parser.add_argument("--task-arg", action="store_true",
                        help="give task=\"overflow_check\" as the constructor's argument")
    args = parser.parse_args()
    model = Net()
    x = torch.tensor(X, dtype=torch.float16)
    debugger = None
    if args.config != "-":
        from probe_studio.pytorch import PrecisionDebugger
        debugger = PrecisionDebugger(config_path=args.config, level=args.level,
                                     task="overflow_check" if args.task_arg else None)
        debugger.start(model=model)
    with torch.no_grad():
        outputs = model(x)
    if debugger:
        debugger.stop()
        debugger.step()
    torch.save(outputs, args.result)
    print("finished", flush=True)


if __name__ == "__main__":
    main()
