"""A small training loop for the gradient monitor and probe grads.

    python grad_model.py OUT [--monitor DIR | --arm before|after] [--blowup STEP] [--nan STEP]

--monitor: GradMonitor(model, DIR, optimizer=...); --arm: grad_monitor.arm(model) (the one call
probe run and the code-level API make; $PROBE_GRAD_MONITOR names the directory) before or after
the optimizer is made. --blowup S: at step S a loss term 1e4 * fc2.weight.sum() blows up that one
parameter's gradient; --nan S: at step S fc1.bias's gradient becomes NaN. OUT gets the losses and
the final parameters (torch.save) for bit-identity checks.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse

import torch
from torch import nn

STEPS = 8


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--monitor")
    parser.add_argument("--arm", choices=["before", "after"])
    parser.add_argument("--blowup", type=int, default=-1)
    parser.add_argument("--nan", type=int, default=-1)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Net()
    from probe_studio import grad_monitor
    if args.arm == "before":
        grad_monitor.arm(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)
    if args.arm == "after":
        grad_monitor.arm(model)
    if args.monitor:
        grad_monitor.GradMonitor(model, args.monitor, optimizer=optimizer)
    data = torch.randn(STEPS, 32, 8)
    target = torch.randn(STEPS, 32, 4)
    losses = []
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(data[step]), target[step])
        if step == args.blowup:
            loss = loss + 1e4 * model.fc2.weight.sum()
        if step == args.nan:
            loss = loss + (model.fc1.bias * float("nan")).sum()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().clone())
    torch.save({"losses": losses, "parameters": {n: p.detach().clone() for n, p in model.named_parameters()}},
               args.out)


if __name__ == "__main__":
    main()
