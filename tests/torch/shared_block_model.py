"""A model whose `shared` block runs twice per step and whose `branch` runs in odd steps only,
trained for 4 steps: a layer-level op's rounds count its own calls, so step 2's first call of
`shared` is its round 4 while the `head` after it is at round 2, and the branch of step 3 is
round 1. PROBE_TEST_NUDGE_STEP=N scales one weight element of `shared` by 1.05 before step N."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os

import torch

torch.manual_seed(0)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh())
        self.branch = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x, step):
        h = self.shared(self.shared(x))
        if step % 2 == 1:
            h = h + self.branch(h)
        return self.head(h)


model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
nudge = int(os.environ.get("PROBE_TEST_NUDGE_STEP", "-1"))
data = torch.Generator().manual_seed(1)
for step in range(4):
    if step == nudge:
        with torch.no_grad():
            model.shared[0].weight[2, 3] *= 1.05
    x, y = torch.randn(4, 8, generator=data), torch.randn(4, 4, generator=data)
    loss = ((model(x, step) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
