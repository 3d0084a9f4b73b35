"""`probe compare` end to end: the demo decoder dumped under `probe run` (task all, save_child,
filter_level 1) as it is, again, with one weight element nudged and with one Linear computed in
bfloat16; a data-parallel job's two ranks dumped by PrecisionDebugger (.pt files); and dumps
that do not pair up. The tests check what the command names against the files themselves,
read here with torch."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import zipfile

import torch

from probe_test_util import DEMO_DIR, PREFIX, PROBE, PYTHON, TEST_DIR, read_bin, read_rows, run_probe, write_config

VARIANT = os.path.join(TEST_DIR, "llama_variant.py")
DDP = os.path.join(TEST_DIR, "ddp_train.py")
NUDGE = "layers.1.mlp.down_proj.weight[3,5]*1.05"
BF16 = "layers.1.mlp.down_proj"


def compare(*args):
    return subprocess.run([PROBE, "compare"] + list(args), capture_output=True, text=True)


class DemoRuns(unittest.TestCase):
    """Four runs of the demo, made once: a, b (the same), nudged, bf16."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="probe-compare-")
        config = write_config(cls.dir, task="all", save_child=True, filter_level=1)
        cls.dumps = {}
        for name, env in (("a", {}), ("b", {}), ("nudged", {"PROBE_TEST_NUDGE": NUDGE}),
                          ("bf16", {"PROBE_TEST_BF16": BF16})):
            out = os.path.join(cls.dir, name)
            run_probe(["--output", out, "--config", config, "--", PYTHON, VARIANT, "--tokens", "2", "--layers", "3"],
                      env=dict(os.environ, PROBE_DEMO_DIR=DEMO_DIR, **env))
            cls.dumps[name] = os.path.join(out, "atb_dump_data")

    @classmethod
    def tearDownClass(cls):
        if not os.environ.get("PROBE_KEEP_TEST_DIRS"):
            shutil.rmtree(cls.dir, ignore_errors=True)

    def weight_rows(self, dump):
        return [r for r in read_rows(dump) if r["Op Name"] == "layers.1/mlp/down_proj/linear" and r["Index"] == "1_weight"]

    @staticmethod
    def verdicts_before(report, name):
        """The verdicts of the ops that began before the first `name` (round 0): the enclosing
        layer and MLP by name, the others as a set."""
        ops = report["ops"][:[op["name"] for op in report["ops"]].index(name)]
        out = {"others": set()}
        for op in ops:
            if op["name"] in ("layers.1", "layers.1/mlp"):
                out[op["name"]] = op["verdict"]
            else:
                out["others"].add(op["verdict"])
        return out

    def test_identical_runs_report_nothing(self):
        result = compare(self.dumps["a"], self.dumps["b"])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("no tensor diverges", result.stdout)
        self.assertRegex(result.stdout, r"compared (\d+) tensors .*\((\1) by their data")
        exact = compare(self.dumps["a"], self.dumps["b"], "--exact")
        self.assertEqual(exact.returncode, 0, exact.stdout)

    def test_a_run_that_stopped_early_is_not_the_same(self):
        # b without its last round: nothing both ran diverges, yet the runs are not the same
        # (exit 0 and "no tensor diverges" was all a script checking the exit code saw).
        short = os.path.join(self.dir, "short", "atb_dump_data")
        shutil.copytree(self.dumps["b"], short)
        data = os.path.join(short, "data")
        (process,) = os.listdir(data)
        rounds = sorted(int(r) for r in os.listdir(os.path.join(data, process)))
        self.assertGreater(len(rounds), 1)
        shutil.rmtree(os.path.join(data, process, str(rounds[-1])))
        result = compare(self.dumps["a"], short)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("no tensor diverges of those that could be read (see the notes below), but the runs "
                      "did not run the same ops:", result.stdout)
        self.assertIn("reference round %d  embed_tokens (Embedding)" % rounds[-1], result.stdout)
        # The probe's row order file says the rows were written: they are said to be missing.
        self.assertRegex(result.stdout, r"note: the candidate: .*/probe_row_order/.*\.csv: its runs place \d+ rows "
                         r"the dump does not have \(round %d \(0 of \d+\)\): a round removed" % rounds[-1])

    def test_a_nudged_weight_is_born_where_it_is_used(self):
        result = compare(self.dumps["a"], self.dumps["nudged"], "--json")
        self.assertEqual(result.returncode, 1, result.stderr)
        report = json.loads(result.stdout)
        first = report["firstBornHere"]
        self.assertEqual(first["name"], "layers.1/mlp/down_proj/linear")
        self.assertEqual(first["round"], 0)
        self.assertEqual(first["tensor"]["index"], "1_weight")
        self.assertEqual(first["tensor"]["rule"], "elements")
        self.assertEqual(first["tensor"]["data"]["worstElement"], "[3, 5]")
        self.assertEqual(first["enclosingOpsBornHereToo"][-1].split("  ")[-1], "layers.1 (DecoderLayer)")
        # The numbers, from the files: one element 5% off, nothing else.
        (ref_row,) = [r for r in self.weight_rows(self.dumps["a"]) if r["Execution Count"] == "0"]
        (cand_row,) = [r for r in self.weight_rows(self.dumps["nudged"]) if r["Execution Count"] == "0"]
        ref, cand = read_bin(ref_row["Tensor Path"])[1], read_bin(cand_row["Tensor Path"])[1]
        rel = ((cand.double() - ref.double()) / ref.double()).abs()
        self.assertEqual(divmod(int(rel.argmax()), ref.shape[1]), (3, 5))
        self.assertAlmostEqual(first["tensor"]["data"]["maxRelativeErr"], rel.max().item(), places=9)
        self.assertAlmostEqual(rel.max().item(), 0.05, places=6)
        self.assertEqual(int((rel > 0).sum()), 1)
        # The first op after it to receive it.
        self.assertEqual(report["firstInherited"]["name"], "layers.1/add")
        # Every op before it matches, but for the ones it is inside of.
        self.assertEqual(self.verdicts_before(report, "layers.1/mlp/down_proj"),
                         {"layers.1": "born here", "layers.1/mlp": "born here", "others": {"matches"}})
        # Every later round uses the weight again: born there too.
        born = [(op["round"], op["name"]) for op in report["ops"] if op["verdict"] == "born here"
                and op["name"] == "layers.1/mlp/down_proj/linear"]
        self.assertEqual(born, [(0, "layers.1/mlp/down_proj/linear"), (1, "layers.1/mlp/down_proj/linear"),
                                (2, "layers.1/mlp/down_proj/linear")])
        # The terminal report says the same.
        text = compare(self.dumps["a"], self.dumps["nudged"]).stdout
        self.assertIn("first divergence, born here: round 0  layers.1/mlp/down_proj/linear (aten::linear)", text)
        self.assertIn("input 1_weight [float 64x172]: element [3, 5]", text)

    def test_an_op_in_bfloat16_is_born_there(self):
        result = compare(self.dumps["a"], self.dumps["bf16"], "--json")
        self.assertEqual(result.returncode, 1, result.stderr)
        report = json.loads(result.stdout)
        first = report["firstBornHere"]
        self.assertTrue(first["name"].startswith("layers.1/mlp/down_proj"), first["name"])
        self.assertEqual(first["round"], 0)
        self.assertEqual(first["tensor"]["dtype"], ["float", "bf16"])
        # Nothing before it diverges; the casts the bf16 run added are reported as unpaired.
        self.assertEqual(self.verdicts_before(report, "layers.1/mlp/down_proj"),
                         {"layers.1": "born here", "layers.1/mlp": "born here", "others": {"matches"}})
        self.assertTrue(report["unpaired"])
        self.assertTrue(all(u.startswith("candidate") and "layers.1/mlp/down_proj/" in u for u in report["unpaired"]))

    def test_outputs_for_other_tools(self):
        csv_path, xlsx_path = os.path.join(self.dir, "out.csv"), os.path.join(self.dir, "out.xlsx")
        result = compare(self.dumps["a"], self.dumps["nudged"], "--csv", csv_path, "--xlsx", xlsx_path)
        self.assertEqual(result.returncode, 1, result.stderr)
        with open(csv_path) as f:
            lines = f.read().splitlines()
        tensors = int(result.stdout.split()[1])
        self.assertEqual(len(lines), tensors + 1)
        with zipfile.ZipFile(xlsx_path) as z:
            sheet = z.read("xl/worksheets/sheet1.xml").decode()
            ops = z.read("xl/worksheets/sheet2.xml").decode()
        for column in ("NPU Name", "Bench Name", "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                       "One Thousandth Err Ratio", "Five Thousandths Err Ratio", "Err_message"):
            self.assertIn(">%s<" % column, sheet)
        self.assertIn("layers.1/mlp/down_proj/linear.0.input.1_weight", sheet)
        self.assertIn(">born here<", ops)


def debugger_runs(test, script_text, runs, level="mix"):
    """Runs `script_text` (it takes its config's path as its argument) once per (name, extra
    environment) of `runs`, dumping with PrecisionDebugger (statistics, `level`) into
    <dir>/<name>; returns the directory, removed after the test."""
    directory = tempfile.mkdtemp(prefix="probe-compare-api-")
    test.addCleanup(shutil.rmtree, directory, True)
    script = os.path.join(directory, "model.py")
    with open(script, "w") as f:
        f.write(script_text)
    env = dict(os.environ, PYTHONPATH=os.path.join(PREFIX, "lib", "python3", "dist-packages"))
    for name, extra in runs:
        config = os.path.join(directory, name + ".json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": level, "dump_path": os.path.join(directory, name)}, f)
        subprocess.run([PYTHON, script, config], env=dict(env, **extra), check=True, capture_output=True)
    return directory


STATISTICS_MODEL = """
import os, sys
import torch
from probe_studio.pytorch import PrecisionDebugger
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act = torch.nn.Linear(8, 16), torch.nn.GELU()
        self.fc2, self.fc3 = torch.nn.Linear(16, 16), torch.nn.Linear(16, 4)
    def forward(self, x):
        return self.fc3(torch.tanh(self.fc2(self.act(self.fc1(x)))))
model = M()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
debugger = PrecisionDebugger(config_path=sys.argv[1])
x, y = torch.randn(4, 8), torch.randn(4, 4)
for step in range(3):
    if os.environ.get("CHANGE") and step == 2:
        with torch.no_grad():
            model.fc2.weight[3, 5] *= 1.01
    debugger.start(model=model)
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    debugger.stop()
    optimizer.step()
    optimizer.zero_grad()
    debugger.step()
"""


class StatisticsOnly(unittest.TestCase):
    """A weight element changed by 1% before step 2, dumped with statistics alone: its
    statistics move by less than rounding could, so the first op called born here is downstream
    (the loss's square). The report sends the user upstream, to the weight."""

    def test_a_change_below_the_floor_upstream_is_pointed_at(self):
        directory = debugger_runs(self, STATISTICS_MODEL, (("a", {}), ("b", {"CHANGE": "1"})))
        # Independently: the weight's statistics differ in step 2, by little.
        weights = []
        for name in ("a", "b"):
            (rank,) = os.listdir(os.path.join(directory, name, "step2"))
            with open(os.path.join(directory, name, "step2", rank, "dump.json")) as f:
                weights.append(json.load(f)["data"]["Module.fc2.Linear.forward.0"]["parameters"]["weight"]["Norm"])
        self.assertNotEqual(weights[0], weights[1])
        self.assertLess(abs(weights[0] - weights[1]) / weights[0], 1e-4)

        result = compare(os.path.join(directory, "a"), os.path.join(directory, "b"), "--json")
        self.assertEqual(result.returncode, 1, result.stderr)
        first = json.loads(result.stdout)["firstBornHere"]
        self.assertNotIn("Module.fc2", first["name"])  # born downstream, by statistics
        given = first["differenceGiven"]
        self.assertIn("Module.fc2.Linear.forward.0", given["startsAt"])
        self.assertTrue(given["startTensor"].endswith("parameters.weight"), given)
        text = compare(os.path.join(directory, "a"), os.path.join(directory, "b")).stdout
        self.assertIn("already differs, below the floor; followed upstream, that difference starts at", text)


# The end of a model script: one call of `model` dumped as a step.
ONE_CALL_DUMPED = """
debugger = PrecisionDebugger(config_path=sys.argv[1])
debugger.start(model=model)
model(torch.randn(4, 8))
debugger.stop()
debugger.step()
"""

PATHS_MODEL = """
import os, sys
import torch
from probe_studio.pytorch import PrecisionDebugger
torch.manual_seed(0)
class Block(torch.nn.Module):
    def __init__(self, scaled):
        super().__init__()
        self.fc, self.scaled = torch.nn.Linear(8, 8), scaled
    def forward(self, x):
        y = self.fc(x)
        return y * 2.0 if self.scaled else y
which = int(os.environ["SCALED_BLOCK"])
model = torch.nn.Sequential(*[Block(i == which) for i in range(3)])
""" + ONE_CALL_DUMPED


class DifferentPaths(unittest.TestCase):
    """msprobe names an API call by its count: Tensor.__mul__.0 is block 1's in one run and block
    2's in the other. The report says the pair is two different calls (it said an op that was
    not dumped, a cast, changed the input)."""

    def test_calls_paired_across_modules_are_said_to_be_different_calls(self):
        directory = debugger_runs(self, PATHS_MODEL, (("a", {"SCALED_BLOCK": "1"}), ("b", {"SCALED_BLOCK": "2"})))
        # Independently: construct.json puts the call in block 1 in one run, block 2 in the other.
        parents = []
        for name in ("a", "b"):
            (rank,) = os.listdir(os.path.join(directory, name, "step0"))
            with open(os.path.join(directory, name, "step0", rank, "construct.json")) as f:
                parents.append(json.load(f)["Tensor.__mul__.0.forward"])
        self.assertEqual(parents, ["Module.1.Block.forward.0", "Module.2.Block.forward.0"])
        result = compare(os.path.join(directory, "a"), os.path.join(directory, "b"))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("first divergence, born here: round 0", result.stdout)
        self.assertIn("Tensor.__mul__.0.forward\n", result.stdout)
        self.assertIn("(these are two different calls: the reference made it in Module.1.Block.forward.0, the "
                      "candidate in Module.2.Block.forward.0: the runs took different paths here", result.stdout)
        self.assertNotIn("a cast for example", result.stdout)


SHIFTED_MODEL = """
import os, sys
import torch
from probe_studio.pytorch import PrecisionDebugger
torch.manual_seed(0)
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 8)
    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(3)])
    def forward(self, x):
        for i, block in enumerate(self.blocks):
            if i == 2 and os.environ.get("SHIFT"):
                x = x + 0.1  # between the modules: no module of L0 records it
            x = block(x)
        return x
model = Model()
""" + ONE_CALL_DUMPED


class ModuleLevel(unittest.TestCase):
    """msprobe L0 records modules alone: a block fed a changed input is born at its input when it
    begins. The report named a module inside it instead (fc2, whose input comes from a relu L0
    does not record), and said the divergence surfaced in the block."""

    def test_a_module_given_a_changed_input_is_the_first_divergence(self):
        directory = debugger_runs(self, SHIFTED_MODEL, (("a", {}), ("b", {"SHIFT": "1"})), level="L0")
        # Independently: the block's input differs by 0.1, the blocks before it not at all.
        data = []
        for name in ("a", "b"):
            (rank,) = os.listdir(os.path.join(directory, name, "step0"))
            with open(os.path.join(directory, name, "step0", rank, "dump.json")) as f:
                data.append(json.load(f)["data"])
        block = "Module.blocks.2.Block.forward.0"
        self.assertAlmostEqual(data[1][block]["input_args"][0]["Max"] - data[0][block]["input_args"][0]["Max"], 0.1,
                               places=5)
        self.assertEqual(data[0]["Module.blocks.1.Block.forward.0"], data[1]["Module.blocks.1.Block.forward.0"])
        result = compare(os.path.join(directory, "a"), os.path.join(directory, "b"), "--json")
        self.assertEqual(result.returncode, 1, result.stderr)
        report = json.loads(result.stdout)
        first = report["firstBornHere"]
        self.assertTrue(first["name"].endswith(block), first["name"])
        self.assertEqual(first["tensor"]["io"], "input", first["tensor"])
        self.assertFalse(first.get("enclosingOpsBornHereToo"), first)
        text = compare(os.path.join(directory, "a"), os.path.join(directory, "b")).stdout
        self.assertIn("first divergence, born here: round 0", text)
        self.assertIn(block + "\n", text)
        self.assertNotIn("it surfaces in the enclosing ops too", text)


class BlockCalledTwicePerStep(unittest.TestCase):
    """A layer-level op's rounds count its own calls: with `shared` run twice per step and
    `branch` in odd steps only, step 2's first call of `shared` is its round 4, while the head
    after it is at round 2. A weight of `shared` changed before step 2 was named at `branch`
    round 1 (step 3), its input made by `shared` round 7, walked after it round by round."""

    def test_the_first_divergence_is_the_first_use_of_the_changed_weight(self):
        with tempfile.TemporaryDirectory() as tmp:
            config = write_config(tmp, save_child=True)
            dumps = {}
            for name, env in (("a", {}), ("b", {"PROBE_TEST_NUDGE_STEP": "2"})):
                run_probe(["--output", os.path.join(tmp, name), "--config", config, "--", PYTHON,
                           os.path.join(TEST_DIR, "shared_block_model.py")], env=dict(os.environ, **env))
                dumps[name] = os.path.join(tmp, name, "atb_dump_data")
            # Independently, from the files: the weight's statistics are the same up to round 3
            # of shared's linear, and differ from round 4 on.
            weights = []
            for name in ("a", "b"):
                weights.append({int(r["Execution Count"]): (r["Max"], r["Min"], r["Mean"], r["Norm"])
                                for r in read_rows(dumps[name])
                                if r["Op Name"] == "shared/0/linear" and r["Index"] == "1_weight"})
            self.assertEqual(sorted(weights[0]), list(range(8)))
            self.assertEqual([r for r in range(8) if weights[0][r] != weights[1][r]], [4, 5, 6, 7])

            result = compare(dumps["a"], dumps["b"], "--json")
            self.assertEqual(result.returncode, 1, result.stderr)
            report = json.loads(result.stdout)
            first = report["firstBornHere"]
            self.assertEqual((first["name"], first["round"]), ("shared/0/linear", 4), first)
            self.assertEqual(first["tensor"]["index"], "1_weight")
            # The layer-level ops are listed in the order they ran (add_0: the outermost
            # module's own h + branch(h)).
            layers = [(op["name"], op["round"]) for op in report["ops"]
                      if "/" not in op["name"] and not op["name"].endswith(("backward", "backward_1"))]
            self.assertEqual(layers[:8], [("shared", 0), ("shared", 1), ("head", 0), ("shared", 2),
                                          ("shared", 3), ("branch", 0), ("add_0", 0), ("head", 1)])
            text = compare(dumps["a"], dumps["b"]).stdout
            self.assertIn("first divergence, born here: round 4  shared/0/linear (aten::linear)", text)


GENERATION_LOOP = """
import os, torch, torch.nn as nn
torch.manual_seed(0)
class M(nn.Module):
    def __init__(s):
        super().__init__()
        s.emb = nn.Embedding(32, 8); s.fc = nn.Linear(8, 8); s.head = nn.Linear(8, 32)
    def forward(s, tok):
        return s.head(torch.tanh(s.fc(s.emb(tok))))
m = M().eval()
if os.environ.get("PROBE_TEST_NUDGE_HEAD"):
    with torch.no_grad():
        m.head.bias += 2 * torch.randn(32)
tok = torch.tensor([1])
with torch.no_grad():
    for step in range(6):
        tok = (m(tok).argmax(-1) + 5 * step) % 32  # the next token, made outside the model
"""


class GenerationLoop(unittest.TestCase):
    """Greedy decoding: each step's token comes from the last step's output through argmax,
    outside the model. With the head's bias changed, the head is born in step 0, and the tokens
    that differ after it are inherited (fed back by the program), not a birth at each step."""

    def test_tokens_made_from_a_diverged_output_are_inherited(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "generate.py")
            with open(script, "w") as f:
                f.write(GENERATION_LOOP)
            config = write_config(tmp)
            dumps = {}
            for name, env in (("a", {}), ("b", {"PROBE_TEST_NUDGE_HEAD": "1"})):
                run_probe(["--output", os.path.join(tmp, name), "--config", config, "--", PYTHON, script],
                          env=dict(os.environ, **env))
                dumps[name] = os.path.join(tmp, name, "atb_dump_data")
            # From the files: the rounds whose token (emb's input) differs between the runs.
            tokens = [{int(r["Execution Count"]): (r["Max"], r["Min"]) for r in read_rows(dumps[name])
                       if r["Op Name"] == "emb" and r["Input/Output"] == "input"} for name in ("a", "b")]
            self.assertEqual(sorted(tokens[0]), list(range(6)))
            differing = [r for r in range(6) if tokens[0][r] != tokens[1][r]]
            self.assertGreaterEqual(len(differing), 3, tokens)
            self.assertNotIn(0, differing)

            result = compare(dumps["a"], dumps["b"], "--json")
            self.assertEqual(result.returncode, 1, result.stderr)
            report = json.loads(result.stdout)
            self.assertEqual((report["firstBornHere"]["name"], report["firstBornHere"]["round"]), ("head", 0))
            emb = {op["round"]: op for op in report["ops"] if op["name"] == "emb"}
            for r in range(1, 6):
                if r in differing:
                    self.assertEqual(emb[r]["verdict"], "inherited", emb[r])
                    self.assertTrue(emb[r].get("fedBack"), emb[r])
                else:
                    self.assertEqual(emb[r]["verdict"], "matches", emb[r])
            self.assertEqual(report["summary"]["fedBackOps"], len(differing))
            # Born: the head wherever its input matched (its own bias differs), nothing else.
            born = [(op["name"], op["round"]) for op in report["ops"] if op["verdict"] == "born here"]
            self.assertEqual(born, [("head", r) for r in range(6) if r == 0 or r not in differing], born)
            text = compare(dumps["a"], dumps["b"]).stdout
            self.assertIn("inputs from outside the model that differ after an earlier divergence", text)


class NothingToCompare(unittest.TestCase):
    def test_an_op_level_dump_against_an_msprobe_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            config = write_config(tmp, task="statistics")
            run_probe(["--output", os.path.join(tmp, "atb"), "--config", config, "--", PYTHON,
                       os.path.join(DEMO_DIR, "llama_demo.py"), "--tokens", "1", "--layers", "1"])
            env = dict(os.environ, PYTHONPATH=os.path.join(PREFIX, "lib", "python3", "dist-packages"))
            subprocess.run([PYTHON, DDP, os.path.join(tmp, "ms"), "1", "--task", "statistics"], env=env, check=True,
                           capture_output=True)
            result = compare(os.path.join(tmp, "atb"), os.path.join(tmp, "ms"))
            self.assertEqual(result.returncode, 65, result.stdout + result.stderr)
            self.assertIn("nothing to compare", result.stdout)
            self.assertIn("reference round 0  embed_tokens (Embedding)", result.stdout)
            self.assertIn("Module.fc1.Linear.forward.0", result.stdout)
            self.assertNotIn("no tensor diverges", result.stdout)


class Ranks(unittest.TestCase):
    """Two ranks of a DDP job: different batches, the same weights (or not, with a skew)."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="probe-ranks-")
        env = dict(os.environ, PYTHONPATH=os.path.join(PREFIX, "lib", "python3", "dist-packages"))
        for name, extra in (("ddp", []), ("skewed", ["--skew-rank", "1"])):
            subprocess.run([PYTHON, DDP, os.path.join(cls.dir, name), "2"] + extra, env=env, check=True,
                           capture_output=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        if not os.environ.get("PROBE_KEEP_TEST_DIRS"):
            shutil.rmtree(cls.dir, ignore_errors=True)

    def rank(self, dump, r):
        return os.path.join(self.dir, dump, "step0", "rank%d" % r)

    def test_the_rank_folders_compare_the_ranks(self):
        # The issue: both folders resolved to the dump's root and it compared itself.
        result = compare(self.rank("ddp", 0), self.rank("ddp", 1))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("as data-parallel replicas", result.stdout)
        self.assertIn("(only rank0, step 0)", result.stderr)
        self.assertIn("(only rank1, step 0)", result.stderr)
        self.assertNotIn("nothing to compare", result.stdout)
        # Their activations do differ: judged as ordinary runs they diverge at the input.
        everything = compare(self.rank("ddp", 0), self.rank("ddp", 1), "--no-replicas", "--json")
        self.assertEqual(everything.returncode, 1)
        self.assertEqual(json.loads(everything.stdout)["summary"]["tensorsWithData"],
                         json.loads(everything.stdout)["summary"]["tensors"])  # .pt files read

    def test_replicas_that_disagree_name_the_weight(self):
        for args in ((self.rank("skewed", 0), self.rank("skewed", 1)),
                     (os.path.join(self.dir, "skewed"), "--rank", "0", "--against-rank", "1")):
            result = compare(*(list(args) + ["--json"]))
            self.assertEqual(result.returncode, 1, result.stderr)
            first = json.loads(result.stdout)["firstBornHere"]
            self.assertEqual(first["name"], "Module.fc2.Linear.forward.0")
            self.assertEqual(first["process"], "rank0")
            self.assertEqual(first["candidateProcess"], "rank1")
            self.assertEqual(first["tensor"]["index"], "parameters.weight")
            self.assertEqual(first["tensor"]["data"]["worstElement"], "[1, 3]")
        # The .pt files say the same, read by torch.
        name = "Module.fc2.Linear.forward.0.parameters.weight.pt"
        w0 = torch.load(os.path.join(self.rank("skewed", 0), "dump_tensor_data", name))
        w1 = torch.load(os.path.join(self.rank("skewed", 1), "dump_tensor_data", name))
        diff = (w1 - w0).abs()
        self.assertEqual(divmod(int(diff.argmax()), w0.shape[1]), (1, 3))
        self.assertAlmostEqual(json.loads(result.stdout)["firstBornHere"]["tensor"]["data"]["maxAbsErr"],
                               diff.max().item(), places=6)

    def test_one_dump_needs_two_ranks(self):
        result = compare(os.path.join(self.dir, "ddp"))
        self.assertEqual(result.returncode, 64)
        same = compare(self.rank("ddp", 0), self.rank("ddp", 0))
        self.assertEqual(same.returncode, 64)
        self.assertIn("both sides are the same part", same.stderr)
        missing = compare(os.path.join(self.dir, "ddp"), "--rank", "0", "--against-rank", "5")
        self.assertEqual(missing.returncode, 65, missing.stdout)
        self.assertIn("no process (rank) 5; it has rank0, rank1", missing.stdout)


if __name__ == "__main__":
    unittest.main()
