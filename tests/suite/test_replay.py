"""probe replay on real op-level dumps: a deliberately wrong aten::gelu (its CPU kernel replaced in
the program) is flagged while its neighbours pass; the same model unpatched passes; random ops are
not replayable; an overflow is told from an inherited one."""
# SPDX-License-Identifier: GPL-3.0-or-later
import glob
import json
import os
import shutil
import unittest

from suite_util import PYTHON, ProbeTestCase, model, probe, read_bin, read_rows, run_probe, write_config


NON_FINITE_PARAMS = """
import torch
torch.manual_seed(0)


class Masked(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.floor = float("-inf")  # a module's setting: its layer op's parameters

    def forward(self, x):
        mask = torch.ones(3, 3, dtype=torch.bool).tril().logical_not()
        scores = x.masked_fill(mask, float("-inf")).softmax(-1)
        return torch.clamp(scores, max=float("inf")) + torch.full((3, 3), float("nan")).nan_to_num(0.5)


m = torch.nn.Sequential(Masked())
with torch.no_grad():
    m(torch.rand(3, 3))
"""

SEQUENTIAL = """
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 2))
for _ in range(2):
    with torch.no_grad():
        m(torch.rand(3, 4))
"""


class Replay(ProbeTestCase):
    def dump(self, *model_args, name="out", script="replay_model.py", **config):
        cfg = write_config(self.dir, **dict(dict(task="tensor", save_child=True), **config))
        run_probe(["--quiet", "--output", self.path(name), "--config", cfg, "--", PYTHON, model(script)]
                  + list(model_args))
        return self.path(name)

    @staticmethod
    def tensor(rows, name, io):
        """The data of an op's first input/output, following a de-duplicated file ("data=<op id>_<file>")
        to the row of its first copy."""
        row = next(r for r in rows if r["Op Name"] == name and r["Input/Output"] == io)
        header, tensor = read_bin(row["Tensor Path"])
        while tensor is None:
            alias = header["data"]
            split = alias.find("_outtensor") if "_outtensor" in alias else alias.find("_intensor")
            op_id, file_name = alias[:split], alias[split + 1:]
            first = next(r for r in rows if r["Op Id"] == op_id and os.path.basename(r["Tensor Path"]) == file_name)
            header, tensor = read_bin(first["Tensor Path"])
        return tensor

    def replay(self, out, *args):
        result = probe("replay", out, "--json", *args)
        self.assertIn(result.returncode, (0, 1), result.stderr)
        return result.returncode, {r["op_id"]: r for r in json.loads(result.stdout)["results"]}

    def test_a_wrong_gelu_is_flagged_and_its_neighbours_pass(self):
        out = self.dump("--wrong-gelu")
        rows = read_rows(os.path.join(out, "atb_dump_data"))
        ids = {r["Op Name"]: r["Op Id"] for r in rows}
        code, results = self.replay(out)
        self.assertEqual(code, 1)
        gelu = results[ids["act/gelu"]]
        self.assertEqual(gelu["verdict"], "WRONG", gelu)
        # Independently: the dumped gelu output is not gelu of the dumped input.
        import torch
        x = self.tensor(rows, "act/gelu", "input")
        y = self.tensor(rows, "act/gelu", "output")
        self.assertGreater((y.double() - torch.nn.functional.gelu(x.double())).abs().max().item(), 1e-3)
        measures = gelu["outputs"][0]
        self.assertGreater(measures["dump"]["max_abs_err"], 10 * measures["rerun"]["max_abs_err"])
        self.assertLess(measures["dump"]["thousandth_ratio"], 0.5)
        for name in ("fc1/linear", "fc1/linear/addmm", "fc2/linear", "fc2/linear/addmm", "act/gelu/sigmoid"):
            self.assertEqual(results[ids[name]]["verdict"], "ok", (name, results[ids[name]]))
        self.assertEqual([r["op_name"] for r in results.values() if r["verdict"] == "WRONG"], ["act/gelu"])
        text = probe("replay", out, "--op", "gelu")
        self.assertEqual(text.returncode, 1)
        self.assertIn("act/gelu (%s) [aten::gelu]  WRONG output 0: max abs error" % ids["act/gelu"], text.stdout)
        # A round, process or op the dump does not have is a usage error, said as such (a round
        # not there was "no aten op matches --op gelu", exit 0).
        missing = probe("replay", out, "--op", "gelu", "--round", "5")
        self.assertEqual(missing.returncode, 64, missing.stdout)
        self.assertIn("the dump has no round 5 (it has 0)", missing.stderr)
        missing = probe("replay", out, "--process", "0_1")
        self.assertEqual(missing.returncode, 64, missing.stdout)
        self.assertIn("the dump has no process 0_1 (it has ", missing.stderr)
        missing = probe("replay", out, "--op", "softmax")
        self.assertEqual(missing.returncode, 64, missing.stdout)
        self.assertIn("no aten op matches --op softmax", missing.stdout)

    def test_the_unpatched_model_passes_and_random_ops_are_not_replayable(self):
        out = self.dump("--dropout")
        code, results = self.replay(out)
        self.assertEqual(code, 0)
        self.assertTrue(results)
        verdicts = {r["op_name"]: r["verdict"] for r in results.values()}
        self.assertEqual(verdicts["act/gelu"], "ok")
        self.assertEqual(verdicts["dropout_0"], "not replayable")
        self.assertEqual(verdicts["dropout_0/bernoulli_"], "not replayable")
        self.assertIn("random", next(r["reason"] for r in results.values() if r["op_name"] == "dropout_0"))
        self.assertNotIn("WRONG", verdicts.values())

    def test_a_sequential_models_ops_are_found_by_their_folders(self):
        # nn.Sequential names its layers "0", "1", "2": op 1's folder is "1_1", which the lookup
        # of de-duplicated files skipped (a digit after "1_"), so nothing could be replayed.
        script = self.write_script("sequential.py", SEQUENTIAL)
        cfg = write_config(self.dir, task="tensor", save_child=True, filter_level=1)
        run_probe(["--quiet", "--output", self.path("sequential"), "--config", cfg, "--", PYTHON, script])
        self.assertTrue(os.path.isdir(glob.glob(self.path("sequential", "atb_dump_data", "data", "*", "0", "1_1"))[0]))
        code, results = self.replay(self.path("sequential"))
        self.assertEqual(code, 0)
        # Without --round, the first round with tensor data, said so beside the others.
        text = probe("replay", self.path("sequential")).stdout
        self.assertIn("  round 0 (the first with tensor data) of rounds 0..1; --round N replays another\n", text)
        self.assertTrue(results)
        self.assertEqual({r["verdict"] for r in results.values()}, {"ok"}, results)

    def test_non_finite_parameters_are_written_so_and_replay(self):
        # A mask filled with -inf (attention), a clamp to +inf, a tensor full of NaN: JSON has no
        # such numbers, and they were written as null, which no op takes for a float: the ops
        # could not be replayed (the demo's masked_fill, and where its overflow is born).
        script = self.write_script("non_finite.py", NON_FINITE_PARAMS)
        cfg = write_config(self.dir, task="tensor", save_child=True)
        run_probe(["--quiet", "--output", self.path("nonfinite"), "--config", cfg, "--", PYTHON, script])
        params = {}
        for path in glob.glob(self.path("nonfinite", "atb_dump_data", "data", "*", "0", "**", "op_param.json"),
                              recursive=True):
            with open(path) as f:
                params[os.path.basename(os.path.dirname(path))] = json.load(f)  # strict JSON
        masked = [p for name, p in params.items() if name.endswith("_masked_fill")]
        self.assertTrue(masked, sorted(params))
        self.assertEqual(masked[0]["value"], "-inf")
        clamp = [p for name, p in params.items() if name.endswith("_clamp")]
        self.assertTrue(clamp, sorted(params))
        self.assertEqual(clamp[0]["max"], "inf")
        full = [p for name, p in params.items() if name.endswith("_full")]
        self.assertTrue(full, sorted(params))
        self.assertEqual(full[0]["fill_value"], "nan")
        # The module's own setting, in its layer op's parameters (json.dumps wrote -Infinity,
        # which the runtime refused as JSON).
        layer = [p for name, p in params.items() if "floor" in p]
        self.assertTrue(layer, params)
        self.assertEqual(layer[0]["floor"], "-inf")
        code, results = self.replay(self.path("nonfinite"))
        verdicts = {r["op_name"]: r for r in results.values()}
        for name in ("0/masked_fill", "0/clamp", "0/full"):
            self.assertIn(name, verdicts)
            # Re-run with the parameters read back, each gives the dumped output exactly (the
            # -inf of the mask is by the op's math: said so, not "ok").
            self.assertIn(verdicts[name]["verdict"], ("ok", "inherits"), verdicts[name])
            if verdicts[name]["verdict"] == "inherits":  # why, without "finite inputs" for full
                self.assertIn("from its arguments" if name == "0/full" else "from finite inputs",
                              verdicts[name]["reason"])
            self.assertTrue(verdicts[name]["outputs"], verdicts[name])
            for output in verdicts[name]["outputs"]:
                self.assertEqual(output["dump"]["nonfinite_mismatch"], 0, verdicts[name])
                self.assertEqual(output["dump"]["max_ulp_err"], 0.0, verdicts[name])

    def test_tensors_filter_level_2_does_not_keep_are_no_damage(self):
        # Kernel-level tensors left out by filter_level 2 name themselves: the ops needing them are
        # not replayable, as the dump chose, not "a file could not be read" (exit 1).
        out = self.dump(name="level2", filter_level=2)
        result = probe("replay", out, "--json")
        self.assertEqual(result.returncode, 0, result.stdout)
        results = json.loads(result.stdout)["results"]
        self.assertTrue(results)
        self.assertIn("ok", [r["verdict"] for r in results])
        self.assertFalse([r for r in results if r["unreadable"]])
        self.assertTrue([r for r in results if "filter_level 2" in r["reason"]], results)
        self.assertEqual(json.loads(result.stdout)["unread_statistics"], 0)

    def test_statistics_alone_cannot_be_replayed(self):
        out = self.dump(task="statistics", name="stats")
        result = probe("replay", out)
        self.assertEqual(result.returncode, 66)  # nothing replayed is not "nothing wrong" (0)
        self.assertIn("no aten op with tensor data", result.stdout)
        self.assertEqual(probe("replay", self.dir).returncode, 66)
        # An op or a round asked for by name: every op "not replayable" for want of data was exit 0,
        # "nothing wrong" to a script (a user walk).
        for asked in (["--op", "linear"], ["--round", "0"]):
            result = probe("replay", out, *asked)
            self.assertEqual(result.returncode, 66, result.stdout)
            self.assertIn("not replayable", result.stdout)
            self.assertIn("no op could be replayed: nothing was judged", result.stdout)

    def test_an_overflow_in_float16_is_told_from_the_ops_that_inherit_it(self):
        out = self.dump(script="overflow_model.py", name="overflow", task="all")
        code, results = self.replay(out, "--round", "2")
        self.assertEqual(code, 0)
        verdicts = {r["op_name"]: r["verdict"] for r in results.values()}
        self.assertEqual(verdicts["layers.1/mul"], "overflow")
        self.assertEqual(verdicts["layers.2/mul"], "inherits")
        self.assertEqual(verdicts["layers.3/linear"], "inherits")
        self.assertNotIn("WRONG", verdicts.values())

    def test_a_broken_dump_is_said_file_by_file_and_the_other_ops_still_replay(self):
        # Each of these stopped replay with a Python traceback, or hung (a user walk).
        script = self.write_script("sequential.py", SEQUENTIAL)
        cfg = write_config(self.dir, task="tensor", save_child=True, filter_level=1)
        run_probe(["--quiet", "--output", self.path("good"), "--config", cfg, "--", PYTHON, script])

        def broken(name):
            shutil.copytree(self.path("good"), self.path(name), symlinks=True)
            return glob.glob(self.path(name, "atb_dump_data", "data", "*", "0"))[0]

        round_dir = broken("files")
        at = lambda *parts: os.path.join(round_dir, *parts)  # noqa: E731
        # An output whose header claims 512 MiB, in a sparse file of that size.
        sparse = at("0_0", "0_linear", "1_addmm", "after", "outtensor0.bin")
        with open(sparse, "rb") as f:
            text = f.read().split(b"$End=1\n")[0].decode()
        header = "\n".join("$Object.Length=536870912" if line.startswith("$Object.Length=") else line
                           for line in text.splitlines())
        with open(sparse, "wb") as f:
            f.write((header + "\n$End=1\n").encode())
            f.truncate(1 << 29)
        # A FIFO for an output, op parameters that are no object or nested too deep.
        fifo = at("0_0", "0_linear", "1_addmm", "1_copy_", "after", "outtensor0.bin")
        os.remove(fifo)
        os.mkfifo(fifo)
        with open(at("1_1", "0_gelu", "op_param.json"), "w") as f:
            f.write("[1, 2]")
        with open(at("2_2", "0_linear", "1_addmm", "op_param.json"), "w") as f:
            f.write("[" * 100000)
        # Two links to the round folder and a header-only file naming a copy 30 id parts deep.
        os.symlink(".", at("1_x"))
        os.symlink(".", at("1_y"))
        with open(at("2_2", "0_linear", "1_addmm", "1_copy_", "after", "outtensor0.bin"), "w") as f:
            f.write("$Version=1.0\n$Object.Count=0\n$Object.Length=0\nformat=2\ndtype=0\ndims=3,2\n"
                    "data=%s7_outtensor0.bin\n$End=1\n" % ("1_" * 30))
        result = probe("replay", self.path("files"), "--json", timeout=240)
        # Files that could not be read may hide a wrong op: not "nothing wrong" (it was 0).
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertTrue(any(r["unreadable"] for r in json.loads(result.stdout)["results"]))
        reasons = [r["reason"] for r in json.loads(result.stdout)["results"]]
        said = "\n".join(reasons)
        self.assertIn("data length 536870912 does not match dims", said)
        self.assertIn("is a named pipe (FIFO), not a regular file", said)
        self.assertIn("op_param.json holds list, not a JSON object", said)
        self.assertIn("its parameters cannot be read: op_param.json: nested too deep", said)
        unreadable = {r["op_name"]: r["unreadable"] for r in json.loads(result.stdout)["results"]}
        self.assertTrue(unreadable["1/gelu"], unreadable)  # its op_param.json holds a list
        self.assertIn("7_outtensor0.bin) is not in its round", said)
        self.assertIn("ok", [r["verdict"] for r in json.loads(result.stdout)["results"]])
        self.assertNotIn("Traceback", result.stderr)

        broken("text")
        tables = glob.glob(self.path("text", "atb_dump_data", "data", "*", "*", "statistic.csv"))
        self.assertEqual(len(tables), 2)  # the model's two calls
        for table in tables:
            with open(table, "ab") as f:
                f.write(b"\xff\xfe not text\n")
        result = probe("replay", self.path("text"), timeout=240)
        self.assertEqual(result.returncode, 66, result.stderr)
        self.assertEqual(result.stderr.count("statistic.csv: 'utf-8' codec can't decode byte 0xff"), 2,
                         result.stderr)
        self.assertIn("2 statistic.csv files could not be read", result.stdout)
        self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
    unittest.main()
