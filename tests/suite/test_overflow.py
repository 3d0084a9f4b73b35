"""probe overflow on real dumps of a model with planted overflows (overflow_model.py), in both
layouts: the round/step and op where each is born, the msprobe anomaly_analyze file, the range
option and the exit codes."""
# SPDX-License-Identifier: GPL-3.0-or-later
import glob
import json
import os
import unittest

from suite_util import PYTHON, ProbeTestCase, model, probe, read_rows, run_probe, write_config


SCALED = """
import sys
import torch
class Scaled(torch.nn.Module):
    def forward(self, h):
        return h * 5e5, h.sum() * 5e5
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scaled = Scaled()
    def forward(self, x):
        return self.scaled(x)
M()(torch.tensor([[0.5, -0.25], [2.0, float(sys.argv[1])]]))
"""


MADE = """
import torch
class Stats(torch.nn.Module):
    def forward(self, x):
        return x.double().sum()
class Scale(torch.nn.Module):
    def forward(self, x, s):
        return x * s
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stats, self.scale = Stats(), Scale()
    def forward(self, x):
        return self.scale(x, self.stats(x))
M()(torch.full((200,), 500.0))
"""


class OverflowInOpLevelDump(ProbeTestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.shared = tempfile.mkdtemp(prefix="probe-suite-overflow-")
        config = write_config(cls.shared, task="statistics", save_child=True)
        run_probe(["--quiet", "--output", os.path.join(cls.shared, "out"), "--config", config, "--",
                   PYTHON, model("overflow_model.py")])
        cls.out = os.path.join(cls.shared, "out")

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.shared, ignore_errors=True)

    def test_the_float16_overflow_is_born_in_the_square_of_round_2(self):
        # Independently of the analysis: the first row holding inf is layers.1/mul's output in round 2.
        rows = read_rows(os.path.join(self.out, "atb_dump_data"))
        first = next(r for r in rows if "inf" in (r["Max"], r["Min"]))
        self.assertEqual((first["Execution Count"], first["Op Name"], first["Input/Output"]), ("2", "layers.1/mul", "output"))
        op_id = first["Op Id"]
        result = probe("overflow", self.out)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        lines = result.stdout.splitlines()
        born = [l for l in lines if ": born in " in l]
        self.assertEqual(len(born), 1, result.stdout)
        self.assertIn("born in round 2, op layers.1/mul (%s) [aten::mul]" % op_id, born[0])
        self.assertIn("why: output 0: max=inf, every input finite", result.stdout)

    def test_the_result_file_has_msprobes_shape(self):
        results = os.path.join(self.dir, "results")
        result = probe("overflow", self.out, "--output", results)
        self.assertEqual(result.returncode, 1, result.stderr)
        (path,) = glob.glob(os.path.join(results, "anomaly_analyze_*.json"))
        with open(path) as f:
            data = json.load(f)
        (rank,) = data
        self.assertTrue(rank.startswith("rank_"), rank)
        (node,) = data[rank]
        self.assertEqual(node["op_name"], "layers.1/mul")
        self.assertEqual(node["round"], 2)
        self.assertEqual(node["construct_info"], ["layers.1", "layers.1/mul"])
        self.assertEqual(list(node["data_info"]), ["input_args", "input_kwargs", "output"])
        self.assertEqual([i["Max"] for i in node["data_info"]["input_args"]], [400.0, 400.0])
        self.assertEqual(node["data_info"]["output"][0]["Max"], float("inf"))
        self.assertEqual(node["data_info"]["output"][0]["dtype"], "float16")

    def test_a_float32_value_beyond_float16_is_an_overflow_only_when_asked(self):
        plain = probe("overflow", self.out, "--all")
        self.assertNotIn("layers.2/mul", plain.stdout)
        ranged = probe("overflow", self.out, "--range", "float16", "--all")
        self.assertEqual(ranged.returncode, 1)
        born = [l for l in ranged.stdout.splitlines() if ": born in " in l]
        self.assertEqual(len(born), 2, ranged.stdout)
        self.assertIn("born in round 1, op layers.2/mul", born[0])  # 1e7: finite in float32
        self.assertIn("born in round 2, op layers.1/mul", born[1])
        self.assertIn("max=1e+07 min=625000 beyond float16's 65504", ranged.stdout)
        self.assertEqual(probe("overflow", self.out, "--range", "bfloat16").stdout.count("born in round 1"), 0)

    def test_a_dump_without_overflow_exits_0_and_no_dump_exits_66(self):
        config = write_config(self.dir, task="statistics", save_child=True, exec_range="0,1")
        run_probe(["--quiet", "--output", self.path("clean"), "--config", config, "--", PYTHON,
                   model("overflow_model.py")])
        result = probe("overflow", self.path("clean"), "--output", self.path("results"))
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn(": no overflow", result.stdout)
        self.assertFalse(os.path.exists(self.path("results")))
        self.assertEqual(probe("overflow", self.dir).returncode, 66)
        self.assertEqual(probe("overflow").returncode, 64)
        self.assertEqual(probe("overflow", self.out, "--range", "int8").returncode, 64)

    def test_a_number_beyond_float16_is_a_constant_and_values_in_from_outside_exit_1(self):
        # h * 5e5: aten::mul is given 5e5 as a 0-d double (and makes a 0-d float of it inside):
        # a constant, not an input already beyond float16. The mul is where the risk is born.
        script = self.write_script("scaled.py", SCALED)
        config = write_config(self.dir, task="statistics", save_child=True)
        run_probe(["--quiet", "--output", self.path("scaled"), "--config", config, "--", PYTHON, script, "1"])
        rows = read_rows(os.path.join(self.path("scaled"), "atb_dump_data"))
        number = [r for r in rows if r["Op Name"] == "scaled/mul" and r["Index"] == "1_other"]
        self.assertEqual([(r["Dtype"], r["Shape"], r["Max"]) for r in number], [("double", "", "500000.000000")] * 2)
        ranged = probe("overflow", self.path("scaled"), "--range", "float16")
        self.assertEqual(ranged.returncode, 1, ranged.stdout)
        born = [l for l in ranged.stdout.splitlines() if ": born in " in l]
        self.assertEqual(len(born), 1, ranged.stdout)
        self.assertIn("born in round 0, op scaled/mul (", born[0])
        self.assertIn("max=1e+06 min=-125000 beyond float16's 65504, every input finite, the floating tensors "
                      "within float16's range",
                      ranged.stdout)
        self.assertIn("input 1_other: double [] max=500000.000000 min=500000.000000 mean=500000.000000 "
                      "norm=500000.000000  (a number the program gave: checked for Inf and NaN only)\n",
                      ranged.stdout)
        # A 0-d tensor times the number is no constant: its product is a birth too (the sum of
        # the input is 3.25 when its last element is 1: 1.625e6).
        every = probe("overflow", self.path("scaled"), "--range", "float16", "--all")
        births = [l for l in every.stdout.splitlines() if ": born in " in l]
        self.assertEqual(len(births), 2, every.stdout)
        self.assertIn("born in round 0, op scaled/mul (", births[1])
        self.assertIn("max=1.625e+06 min=1.625e+06 beyond float16's 65504", every.stdout)

        # The model's input holds an Inf: no dumped op makes it, yet an overflow was found (exit 1).
        run_probe(["--quiet", "--output", self.path("given"), "--config", config, "--", PYTHON, script, "inf"])
        given = probe("overflow", self.path("given"))
        self.assertEqual(given.returncode, 1, given.stdout)
        self.assertIn("but no dumped op turns finite inputs into them", given.stdout)

    def test_a_0d_double_an_op_makes_is_checked_like_any_tensor(self):
        # x.double().sum() is 1e5: a 0-d double the program made, not a number it gave. It is
        # born in the sum, and the mul that takes it inherits it (it was "every input finite").
        script = self.write_script("made.py", MADE)
        config = write_config(self.dir, task="statistics", save_child=True)
        run_probe(["--quiet", "--output", self.path("made"), "--config", config, "--", PYTHON, script])
        ranged = probe("overflow", self.path("made"), "--range", "float16", "--all")
        self.assertEqual(ranged.returncode, 1, ranged.stdout)
        born = [l for l in ranged.stdout.splitlines() if ": born in " in l]
        self.assertEqual(len(born), 1, ranged.stdout)
        self.assertIn("op stats/sum", born[0])
        self.assertIn("output 0: max=100000 min=100000 beyond float16's 65504", ranged.stdout)


class OverflowInMsprobeDump(ProbeTestCase):
    def test_the_overflow_is_born_in_tensor_mul_of_step_2_with_its_stack(self):
        import subprocess
        dump = self.path("dump")
        subprocess.run([PYTHON, model("overflow_model.py"), "--api", dump], check=True, capture_output=True,
                       cwd=self.dir)
        result = probe("overflow", dump, "--output", self.path("results"))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        born = [l for l in result.stdout.splitlines() if ": born in " in l]
        self.assertEqual(len(born), 1, result.stdout)
        self.assertRegex(born[0], r"born in step 2, op Tensor\.__mul__\.\d+\.forward \[Tensor\.__mul__\]")
        self.assertIn("in: Module.layers.1.HalfSquare.forward.0", result.stdout)
        self.assertIn("squared = half * half", result.stdout)  # the stack, from stack.json
        (path,) = glob.glob(self.path("results", "anomaly_analyze_*.json"))
        with open(path) as f:
            data = json.load(f)
        (node,) = data["rank_0"]
        self.assertRegex(node["op_name"], r"^Tensor\.__mul__\.\d+\.forward$")
        self.assertEqual(node["step"], 2)
        self.assertEqual(node["construct_info"], ["Module.layers.1.HalfSquare.forward.0", node["op_name"]])
        # data_info: the entry's items exactly as dump.json has them.
        with open(glob.glob(os.path.join(dump, "step2", "*", "dump.json"))[0]) as f:
            entry = json.load(f)["data"][node["op_name"]]
        self.assertEqual(node["data_info"], {"input_args": entry["input_args"], "input_kwargs": entry["input_kwargs"],
                                             "output": entry["output"]})
        self.assertTrue(any("squared = half * half" in frame for frame in node["stack_info"]))


if __name__ == "__main__":
    unittest.main()
