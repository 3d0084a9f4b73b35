"""A small MLP that rewrites the probe's config itself before every step, choosing which
layer-level op to dump (step % 3), and writing it a different way each time: in place, replaced
with os.replace, with pathlib. The next step must dump exactly that op, however quickly it
follows the write."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import pathlib
import sys

import torch

steps = int(sys.argv[1])
path = os.environ["PROBE_CONFIG"]
with open(path) as f:
    config = json.load(f)
torch.manual_seed(3)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
batch = torch.randn(2, 8)
for step in range(steps):
    config["dump_enable"] = True
    config["ids"] = str(step % 3)
    text = json.dumps(config)
    way = step % 3
    if way == 0:
        with open(path, "w") as f:
            f.write(text)
    elif way == 1:
        with open(path + ".new", "w") as f:
            f.write(text)
        os.replace(path + ".new", path)
    else:
        pathlib.Path(path).write_text(text)
    model(batch).sum().backward()
print("done")
