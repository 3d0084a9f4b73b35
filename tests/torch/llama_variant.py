"""The demo decoder with one planted change, for the comparison tests: runs llama_demo.py's main()
unchanged except for what the environment asks (nothing: the demo as it is).

  PROBE_TEST_NUDGE=<module>.weight[<row>,<col>]*<factor>   scale one weight element
  PROBE_TEST_BF16=<module>                                 that Linear computes in bfloat16

<module> is a dotted path in the model ("layers.1.mlp.down_proj").
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import re
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.environ["PROBE_DEMO_DIR"])
import llama_demo  # noqa: E402


def module_at(model, path):
    for part in path.split("."):
        model = getattr(model, part)
    return model


def plant(model):
    nudge = os.environ.get("PROBE_TEST_NUDGE")
    if nudge:
        match = re.fullmatch(r"([\w.]+)\.weight\[(\d+),(\d+)\]\*([\d.]+)", nudge)
        if not match:
            raise SystemExit("PROBE_TEST_NUDGE=%r is not <module>.weight[<row>,<col>]*<factor>" % nudge)
        linear = module_at(model, match.group(1))
        with torch.no_grad():
            linear.weight[int(match.group(2)), int(match.group(3))] *= float(match.group(4))
    bf16 = os.environ.get("PROBE_TEST_BF16")
    if bf16:
        linear = module_at(model, bf16)

        def forward(x, linear=linear):
            return F.linear(x.bfloat16(), linear.weight.bfloat16()).float()
        linear.forward = forward


original_init = llama_demo.TinyLlama.__init__


def init(self, *args, **kwargs):
    original_init(self, *args, **kwargs)  # weights seeded as in the demo
    plant(self)


llama_demo.TinyLlama.__init__ = init

if __name__ == "__main__":
    llama_demo.main()
