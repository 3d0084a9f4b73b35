"""The live task overflow_check under probe run, on the demo decoder with a float16 overflow
planted in one aten::mul (llama_demo.py --fp16-layer 1 --fp16-step 2): that op is the only one
dumped, with its tensors; probe overflow on the dump agrees; the model's results are bit-identical
with and without the probe; overflow_nums bounds how many births are written."""
# SPDX-License-Identifier: GPL-3.0-or-later
import glob
import json
import os
import subprocess
import unittest

import torch

from suite_util import PYTHON, ProbeTestCase, probe, read_bin, read_rows, run_probe, write_config
from probe_test_util import LLAMA

PLANTED = ["--tokens", "4", "--fp16-layer", "1", "--fp16-step", "2"]


class LiveOverflowCheck(ProbeTestCase):
    def run_demo(self, name, demo_args, probed=True, **config):
        out = self.path(name)
        os.makedirs(out)
        logits = self.path(name + "_logits.pt")
        if probed:
            config_path = write_config(out, task="overflow_check", save_child=True, **config)
            result = run_probe(["--output", out, "--config", config_path, "--quiet", "--", PYTHON, LLAMA,
                                "--save-logits", logits] + demo_args)
        else:
            result = subprocess.run([PYTHON, LLAMA, "--save-logits", logits] + demo_args, capture_output=True,
                                    text=True, check=True)
        self.assertNotIn("Traceback", result.stderr)
        return os.path.join(out, "atb_dump_data"), torch.load(logits)

    def assertBitIdentical(self, a, b):
        self.assertEqual(a.dtype, b.dtype)
        self.assertEqual(a.numpy().tobytes(), b.numpy().tobytes())

    def test_only_the_op_where_the_float16_overflow_is_born_is_dumped(self):
        _, plain = self.run_demo("plain", PLANTED, probed=False)
        root, watched = self.run_demo("live", PLANTED)
        self.assertTrue(torch.isnan(plain).any())  # the planted overflow spreads to the logits
        self.assertBitIdentical(plain, watched)

        rows = read_rows(root)
        self.assertTrue(rows)
        ops = {(r["Execution Count"], r["Op Id"], r["Op Name"], r["Op Type"]) for r in rows}
        self.assertEqual(len(ops), 1, ops)
        ((round_, op_id, name, op_type),) = ops
        self.assertEqual((round_, name, op_type), ("2", "layers.1/mul", "aten::mul"))
        # Its inputs are finite float16, its output holds inf: recomputed from the tensor files.
        inputs = [r for r in rows if r["Input/Output"] == "input"]
        outputs = [r for r in rows if r["Input/Output"] == "output"]
        self.assertTrue(inputs and outputs)
        for row in inputs:
            _, tensor = read_bin(row["Tensor Path"])
            self.assertTrue(torch.isfinite(tensor.float()).all())
            self.assertEqual(tensor.dtype, torch.float16)
        _, out = read_bin(outputs[0]["Tensor Path"])
        self.assertTrue(torch.isinf(out).any())
        self.assertEqual(outputs[0]["Max"], "inf")
        (data_dir,) = glob.glob(os.path.join(root, "data", "*"))
        self.assertEqual(sorted(os.listdir(data_dir)), ["2"])

        # probe overflow on that dump finds the same op.
        result = probe("overflow", os.path.dirname(root), "--json")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        (births,) = json.loads(result.stdout).values()
        self.assertEqual([(b["op_id"], b["round"]) for b in births], [(op_id, 2)])

    def test_a_run_without_overflow_writes_no_op_and_overflow_nums_bounds_the_births(self):
        root, _ = self.run_demo("clean", ["--tokens", "3"], overflow_nums=-1)
        self.assertEqual(read_rows(root), [])
        self.assertEqual(probe("overflow", os.path.dirname(root)).returncode, 0)
        # No limit: the float16 birth alone. The NaN that layer's KV cache holds from step 2 on is
        # read at step 3 by the ops inside the layers: it came in there, no birth (as probe
        # overflow says of a statistics dump; the live task wrote those layers as births).
        root, _ = self.run_demo("unbounded", PLANTED, overflow_nums=-1)
        ops = {(r["Execution Count"], r["Op Id"]) for r in read_rows(root)}
        self.assertEqual(len(ops), 1)
        self.assertEqual(min(ops)[0], "2")
        # Two births a step, three steps: overflow_nums 2 writes the first two.
        script = self.path("births.py")
        with open(script, "w") as f:
            f.write("import torch\n"
                    "class Twice(torch.nn.Module):\n"
                    "    def forward(self, x):\n"
                    "        return x * 1e39, x * -1e39\n"
                    "for step in range(3):\n"
                    "    Twice()(torch.rand(4) + 1)\n")
        births = {}
        for limit in (-1, 2):
            out = self.path("births_%d" % limit)
            os.makedirs(out)
            config = write_config(out, task="overflow_check", save_child=True, overflow_nums=limit)
            run_probe(["--output", out, "--config", config, "--quiet", "--", PYTHON, script])
            births[limit] = sorted({(r["Execution Count"], r["Op Id"])
                                    for r in read_rows(os.path.join(out, "atb_dump_data"))})
        self.assertEqual(len(births[-1]), 6)
        self.assertEqual(births[2], births[-1][:2])


if __name__ == "__main__":
    unittest.main()
