"""Module calls under `probe run` as torch_hooks reports them: names with any characters, a
module called twice in one forward, and the "<layer>.backward" ops with the gradients flowing
in (their inputs) and out (their outputs), checked against gradients recomputed here."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import textwrap

import torch

from probe_test_util import PYTHON, ProbeTestCase, read_bin, read_rows, run_probe, write_config


class ModuleCalls(ProbeTestCase):
    def run_script(self, source, **config):
        script = self.path("model.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(source))
        cfg = write_config(self.dir, **config)
        result = run_probe(["--output", self.path("out"), "--config", cfg, "--", PYTHON, script])
        self.assertNotIn("error", result.stderr)
        return read_rows(self.path("out", "atb_dump_data")), result

    def by_op(self, rows):
        ops = {}
        for row in rows:
            ops.setdefault(row["Op Name"], []).append(row)
        return ops

    def test_layers_named_with_lone_surrogates_stay_apart(self):
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn
            model = nn.Sequential()
            for i in range(13):
                model.add_module("layer\\udc80%d" % i, nn.Linear(4, 4))
            model(torch.randn(2, 4))
            """, task="statistics", exec_range="all")
        ops = self.by_op(rows)
        self.assertEqual(sorted(ops), sorted("layer\\udc80%d" % i for i in range(13)))
        for name, op_rows in ops.items():
            self.assertEqual(op_rows[0]["Op Type"], "Linear", name)
            self.assertEqual(sorted(r["Input/Output"] for r in op_rows), ["input", "output"], name)

    def test_backward_layer_ops_have_the_gradients_flowing_in_and_out(self):
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn
            torch.manual_seed(3)
            model = nn.Sequential()
            model.add_module("fc1", nn.Linear(8, 4))
            model.add_module("act", nn.Tanh())
            model.add_module("fc2", nn.Linear(4, 2))
            x = torch.randn(5, 8)
            model(x).square().sum().backward()
            """, task="all", exec_range="all")
        torch.manual_seed(3)
        fc1, fc2 = torch.nn.Linear(8, 4), torch.nn.Linear(4, 2)
        x = torch.randn(5, 8)
        h1 = fc1(x)
        h2 = torch.tanh(h1)
        out = fc2(h2)
        for t in (h1, h2, out):
            t.retain_grad()
        out.square().sum().backward()
        ops = self.by_op(rows)
        # (op, gradient flowing in: of its forward output, gradient flowing out: of its input)
        expected = {"fc2.backward": (out.grad, h2.grad), "act.backward": (h2.grad, h1.grad),
                    "fc1.backward": (h1.grad, None)}  # x needs no gradient: nothing flows out
        for name, (grad_in, grad_out) in expected.items():
            op_rows = ops[name]
            inputs = [r for r in op_rows if r["Input/Output"] == "input"]
            outputs = [r for r in op_rows if r["Input/Output"] == "output"]
            self.assertEqual(len(inputs), 1, name)
            self.assertTrue(torch.allclose(read_bin(inputs[0]["Tensor Path"])[1], grad_in), name)
            self.assertStatsMatch(inputs[0], grad_in)
            if grad_out is None:
                self.assertEqual(outputs, [], name)
                continue
            self.assertEqual(len(outputs), 1, name)
            self.assertTrue(outputs[0]["Index"].startswith("0"), outputs[0]["Index"])
            self.assertTrue(torch.allclose(read_bin(outputs[0]["Tensor Path"])[1], grad_out), name)
            self.assertStatsMatch(outputs[0], grad_out)

    def test_a_module_called_twice_has_both_gradients(self):
        # A shared embedding for two sequences: two forward calls, and the gradient of each
        # call's output flows into a backward op of the embedding (the two calls' backward nodes
        # run one after the other: they were one op, with one call's gradient).
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Pair(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = nn.Embedding(10, 4)
                    self.head = nn.Linear(4, 2)

                def forward(self, a, b):
                    return self.head(torch.cat([self.embed(a), self.embed(b) * 3.0]))

            torch.manual_seed(5)
            model = Pair()
            model(torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])).sum().backward()
            """, task="all", exec_range="all")
        torch.manual_seed(5)
        embed, head = torch.nn.Embedding(10, 4), torch.nn.Linear(4, 2)
        ea, eb = embed(torch.tensor([1, 2, 3])), embed(torch.tensor([4, 5, 6]))
        for t in (ea, eb):
            t.retain_grad()
        head(torch.cat([ea, eb * 3.0])).sum().backward()
        ops = self.by_op(rows)
        forward = [r for r in ops["embed"] if r["Input/Output"] == "output"]
        self.assertEqual(len(forward), 2)
        backward = [r for name, op_rows in ops.items() if name.startswith("embed.backward") for r in op_rows
                    if r["Input/Output"] == "input"]
        got = sorted((read_bin(r["Tensor Path"])[1] for r in backward), key=lambda t: t.abs().sum().item())
        self.assertEqual(len(got), 2, [r["Op Name"] for r in backward])
        want = sorted((ea.grad, eb.grad), key=lambda t: t.abs().sum().item())
        for g, w in zip(got, want):
            self.assertTrue(torch.allclose(g, w))


if __name__ == "__main__":
    import unittest
    unittest.main()
