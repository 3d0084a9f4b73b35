"""The demo models under `probe run` with several configs; every file checked against what the
script itself saved and against statistics recomputed here."""
# SPDX-License-Identifier: GPL-3.0-or-later
import glob
import json
import os
import shutil
import subprocess
import unittest

import torch

from probe_test_util import (LLAMA, PREFIX, PROBE, PYTHON, TRAIN, ProbeTestCase, expected_stats, read_bin,
                             read_rows, run_probe, stat_value, write_config)

LAYERS = ["embed_tokens", "layers.0", "layers.1", "layers.2", "layers.3", "norm", "lm_head"]
TOKENS = 3  # rounds 0 (the prompt) .. 3


class LlamaUnderProbe(ProbeTestCase):
    def run_llama(self, *extra, out_name="out", **config):
        out = self.path(out_name)
        cfg = write_config(self.dir, **config)
        run_probe(["--output", out, "--config", cfg, "--", PYTHON, LLAMA, "--tokens", str(TOKENS),
                   "--save-reference", self.path("ref")] + list(extra))
        return os.path.join(out, "atb_dump_data")

    def reference(self, layer, step):
        return torch.load(self.path("ref", "%s.%d.pt" % (layer, step)))

    def test_statistics_of_every_layer_op_every_round(self):
        root = self.run_llama(task="statistics")
        rows = read_rows(root)
        self.assertEqual(len(rows), len(LAYERS) * (TOKENS + 1) * 2)
        ids = {}
        for row in rows:
            self.assertEqual(row["Tensor Path"], "N/A")
            self.assertEqual(row["Op Id"].count("_"), 0)  # layer-level only
            ids.setdefault(row["Op Name"], row["Op Id"])
            self.assertEqual(ids[row["Op Name"]], row["Op Id"], "one id per layer op across rounds")
            if row["Input/Output"] == "output":
                self.assertStatsMatch(row, self.reference(row["Op Name"], int(row["Execution Count"])))
        self.assertEqual(list(ids), LAYERS)
        self.assertEqual([ids[name] for name in LAYERS], [str(i) for i in range(len(LAYERS))])
        types = {row["Op Name"]: row["Op Type"] for row in rows}
        self.assertEqual(types["layers.2"], "DecoderLayer")
        self.assertEqual(types["embed_tokens"], "Embedding")
        status = json.load(open(os.path.join(root, "probe_status.json")))
        self.assertEqual(status["state"], "complete")
        self.assertEqual(status["rows"], len(rows))
        # info/model: the layers in execution order, the model's parameters and buffers that its
        # ops read as weightTensors (internal to no node), the last layer's output as the model's.
        (model_file,) = glob.glob(os.path.join(root, "info", "model", "*", "TinyLlama.json"))
        model = json.load(open(model_file))
        self.assertEqual([n["opName"] for n in model["nodes"]], ["%s_%d" % (n, i) for i, n in enumerate(LAYERS)])
        demo = subprocess.run([PYTHON, "-c", "import sys; sys.path.insert(0, %r); import llama_demo; m = llama_demo.TinyLlama();"
                               "print(len(list(m.parameters())) + len(list(m.buffers())))" % os.path.dirname(LLAMA)],
                              capture_output=True, text=True, check=True)
        self.assertEqual(len(model["weightTensors"]), int(demo.stdout))
        weights, read = set(model["weightTensors"]), set()

        def visit(node):
            self.assertFalse(weights & set(node["internalTensors"]), node["opName"])
            read.update(weights & set(node["inTensors"]))
            for child in node["nodes"]:
                visit(child)
        for node in model["nodes"]:
            visit(node)
        self.assertEqual(read, weights)
        self.assertEqual(model["outTensors"], model["nodes"][-1]["outTensors"])
        self.assertFalse(set(model["outTensors"]) & set(model["internalTensors"]))

    def test_tensor_task_bins_hold_the_scripts_values(self):
        root = self.run_llama(task="tensor", exec_range="0,1")
        rows = read_rows(root)
        self.assertEqual({int(r["Execution Count"]) for r in rows}, {0, 1})
        for row in rows:
            self.assertEqual(row["Max"], "N/A")
            header, tensor = read_bin(row["Tensor Path"])
            self.assertEqual(header["$Version"], "1.0")
            self.assertEqual(header["format"], "2")
            if row["Input/Output"] == "output":
                expected = self.reference(row["Op Name"], int(row["Execution Count"]))
                self.assertTrue(torch.equal(tensor, expected), row["Tensor Path"])
        # Paths as documented: data/<pid>/<round>/<id>_<name>/after/outtensor0.bin
        pid = os.listdir(os.path.join(root, "data"))[0]
        self.assertTrue(os.path.exists(os.path.join(root, "data", pid, "1", "3_layers.2", "after", "outtensor0.bin")))
        self.assertTrue(os.path.exists(os.path.join(root, "data", pid, "0", "3_layers.2", "before", "intensor0_x.bin")))

    def test_exec_range(self):
        rows = read_rows(self.run_llama(exec_range="2,3"))
        self.assertEqual({int(r["Execution Count"]) for r in rows}, {2, 3})

    def test_ids_selects_one_layer(self):
        rows = read_rows(self.run_llama(ids="3"))
        self.assertEqual({r["Op Name"] for r in rows}, {"layers.2"})
        self.assertEqual(len(rows), (TOKENS + 1) * 2)

    def test_op_name_selects_one_layer_and_its_children_with_save_child(self):
        rows = read_rows(self.run_llama(op_name="LAYERS.1", save_child=True, exec_range="0,0"))
        names = {r["Op Name"] for r in rows}
        self.assertIn("layers.1", names)
        self.assertIn("layers.1/self_attn", names)
        self.assertIn("layers.1/self_attn/q_proj", names)
        self.assertIn("layers.1/self_attn/q_proj/linear", names)  # an aten op below the module
        self.assertTrue(all(n.startswith("layers.1") for n in names), names)
        by_name = {r["Op Name"]: r for r in rows}
        self.assertEqual(by_name["layers.1/self_attn/q_proj/linear"]["Op Type"], "aten::linear")
        self.assertEqual(by_name["layers.1/mlp"]["Op Type"], "SwiGLU")
        # Children's ids extend the layer's id.
        self.assertTrue(all(r["Op Id"] == "2" or r["Op Id"].startswith("2_") for r in rows))

    def test_save_child_filter_levels(self):
        census = {}
        for level in (0, 1, 2):
            root = self.run_llama(task="tensor", ids="1", save_child=True, exec_range="0,0", filter_level=level,
                                  out_name="out%d" % level)
            rows = read_rows(root)
            full = aliases = own = 0
            round_dir = os.path.dirname(rows[0]["_csv"])
            for row in rows:
                header, tensor = read_bin(row["Tensor Path"])
                if tensor is not None:
                    full += 1
                    continue
                name = os.path.basename(row["Tensor Path"])
                if header["data"] == name:
                    own += 1
                    continue
                aliases += 1
                # "<op id>_<file name>" names a full copy elsewhere in the same round.
                target = [r for r in rows if r["Op Id"] + "_" + os.path.basename(r["Tensor Path"]) == header["data"]]
                self.assertEqual(len(target), 1, header["data"])
                first_header, first = read_bin(target[0]["Tensor Path"])
                self.assertIsNotNone(first)
                self.assertEqual(first_header["dims"], header["dims"])
            census[level] = (full, aliases, own, len(rows))
            self.assertTrue(all(r["_csv"].startswith(round_dir) for r in rows))
        full0, aliases0, own0, total0 = census[0]
        self.assertEqual((aliases0, own0), (0, 0))
        self.assertEqual(full0, total0)
        full1, aliases1, own1, total1 = census[1]
        self.assertEqual(total1, total0)
        self.assertGreater(aliases1, 0)
        self.assertEqual(own1, 0)
        full2, aliases2, own2, total2 = census[2]
        self.assertGreater(own2, 0)  # kernel-level tensors: header only
        self.assertLess(full2, full1)

    def test_planted_overflow_is_found(self):
        root = self.run_llama("--nan-layer", "1", "--nan-step", "2", exec_range="all")
        summary = subprocess.run([PROBE, "summary", root], capture_output=True, text=True, check=True).stdout
        self.assertIn("first Inf: round 2, op layers.1 (2) [DecoderLayer], output 0", summary)
        self.assertIn("first NaN: round 2, op layers.2 (3) [DecoderLayer]", summary)


class TrainingUnderProbe(ProbeTestCase):
    def test_backward_ops_are_linked_to_their_layers(self):
        out = self.path("out")
        cfg = write_config(self.dir, task="all", exec_range="all")
        result = run_probe(["--output", out, "--config", cfg, "--", PYTHON, TRAIN])
        self.assertIn("loss:", result.stdout)
        rows = read_rows(os.path.join(out, "atb_dump_data"))
        names = [r["Op Name"] for r in rows]
        for name in ("linear_1", "linear_2", "relu", "relu.backward", "linear_2.backward", "linear_1.backward"):
            self.assertIn(name, names)
        by_name = {}
        for r in rows:
            by_name.setdefault(r["Op Name"], []).append(r)
        self.assertEqual(by_name["linear_1.backward"][0]["Op Type"], "LinearBackward")
        # Recompute the gradients flowing into each layer independently.
        torch.manual_seed(1234)
        exec(compile(open(TRAIN).read().split('if __name__ == "__main__":')[0], TRAIN, "exec"), namespace := {})
        module = namespace["ModuleOP"]()
        x = torch.randn(10, 8)
        x1 = module.linear_1(x)
        x2 = module.linear_2(x1)
        r1 = module.relu(x2)
        for t in (x1, x2, r1):
            t.retain_grad()
        r1.sum().backward()
        for name, grad in (("relu.backward", r1.grad), ("linear_2.backward", x2.grad), ("linear_1.backward", x1.grad)):
            row = by_name[name][0]
            self.assertEqual(row["Input/Output"], "input")
            _, tensor = read_bin(row["Tensor Path"])
            self.assertTrue(torch.allclose(tensor, grad), name)
            self.assertStatsMatch(row, grad)


class Faithfulness(ProbeTestCase):
    def test_results_are_bit_identical_with_and_without_the_probe(self):
        plain = self.path("plain.pt")
        subprocess.run([PYTHON, LLAMA, "--tokens", "4", "--save-logits", plain], check=True, capture_output=True)
        cfg = write_config(self.dir, task="all", save_child=True, filter_level=0)
        probed = self.path("probed.pt")
        run_probe(["--output", self.path("out"), "--config", cfg, "--", PYTHON, LLAMA, "--tokens", "4",
                   "--save-logits", probed])
        a, b = torch.load(plain), torch.load(probed)
        self.assertEqual(a.dtype, b.dtype)
        self.assertTrue(torch.equal(a.view(torch.int32), b.view(torch.int32)), "logits differ in some bit")
        self.assertGreater(len(read_rows(self.path("out", "atb_dump_data"))), 1000)

    def test_a_config_leaving_dump_enable_false_says_why_nothing_was_dumped(self):
        # dump_enable is false unless set (msprobe's default): {"task", "exec_range"} alone
        # dumped nothing, and the summary's zeros did not say why.
        said = 'nothing was dumped: the config\'s "dump_enable" is false'
        for enable, rows_expected in ((None, False), (True, True)):
            with self.subTest(dump_enable=enable):
                config = {"task": "statistics", "exec_range": "all"}
                if enable is not None:
                    config["dump_enable"] = enable
                cfg = self.path("config%s.json" % enable)
                with open(cfg, "w") as f:
                    json.dump(config, f)
                out = self.path("out%s" % enable)
                result = run_probe(["--output", out, "--config", cfg, "--", PYTHON, LLAMA, "--tokens", "1"])
                self.assertEqual(bool(read_rows(os.path.join(out, "atb_dump_data"))), rows_expected)
                if rows_expected:
                    self.assertNotIn(said, result.stderr)
                else:
                    self.assertIn(said + " (its default); set it true in " + cfg, result.stderr)

    def test_the_demo_refuses_more_tokens_than_its_positions_hold(self):
        # It failed at token 245 with a shape error deep in attention, after minutes of dumping.
        result = subprocess.run([PYTHON, LLAMA, "--tokens", "245"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--tokens must be between 0 and 244", result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_bf16_model(self):
        plain = self.path("plain.pt")
        subprocess.run([PYTHON, LLAMA, "--tokens", "2", "--dtype", "bfloat16", "--save-logits", plain], check=True,
                       capture_output=True)
        cfg = write_config(self.dir, task="all", exec_range="0,0")
        probed = self.path("probed.pt")
        run_probe(["--output", self.path("out"), "--config", cfg, "--", PYTHON, LLAMA, "--tokens", "2", "--dtype",
                   "bfloat16", "--save-logits", probed])
        self.assertTrue(torch.equal(torch.load(plain).view(torch.int32), torch.load(probed).view(torch.int32)))
        rows = read_rows(self.path("out", "atb_dump_data"))
        self.assertIn("bf16", {r["Dtype"] for r in rows})
        for row in rows:
            if row["Dtype"] == "bf16":
                _, tensor = read_bin(row["Tensor Path"])
                self.assertStatsMatch(row, tensor.float())


# A tiny model stepped quickly, then killed the way the test asks: its three layer-level
# modules (Linear, ReLU, Linear) give 6 rows a step.
CRASHING = """
import ctypes, os, signal, sys, time
import torch
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
x = torch.ones(4, 8)
for step in range(5):
    model(x)
how = sys.argv[1]
if how == "segv":
    ctypes.string_at(0)
if how == "os_exit":  # no exit handler runs
    os._exit(7)
if how == "exec":  # the new program never stops this one's probe
    os.execv("/bin/true", ["/bin/true"])
if how == "fork_exec":  # the child's exec is not this process's: it ends normally
    child = os.fork()
    if child == 0:
        os.execv("/bin/true", ["/bin/true"])
    os.waitpid(child, 0)
    sys.exit(0)
time.sleep(0.3)  # the steps are 300 ms old when it is killed: rows older than 100 ms are on disk
os.kill(os.getpid(), signal.SIGKILL)
"""
ROWS_PER_STEP = 6


class Crashes(ProbeTestCase):
    def crash(self, how, launcher=None):
        """Runs CRASHING with `how`, by itself or under the shell command `launcher` (which gets
        the python and the script as $0 and $1, and `how` as $2)."""
        script = self.path("crashing.py")
        with open(script, "w") as f:
            f.write(CRASHING)
        out = self.path("out")
        command = [PYTHON, script, how] if launcher is None else ["/bin/sh", "-c", launcher, PYTHON, script, how]
        result = run_probe(["--output", out, "--config", write_config(self.dir), "--"] + command, check=False)
        root = os.path.join(out, "atb_dump_data")
        with open(os.path.join(root, "probe_status.json")) as f:
            status = json.load(f)
        summary = subprocess.run([PROBE, "summary", root], capture_output=True, text=True, check=True).stdout
        return result, status, read_rows(root), summary

    def assertEveryStepDumped(self, rows):
        rounds = {}
        for row in rows:
            rounds.setdefault(int(row["Execution Count"]), []).append(row)
        self.assertEqual(sorted(rounds), [0, 1, 2, 3, 4])
        for step, step_rows in rounds.items():
            self.assertEqual(len(step_rows), ROWS_PER_STEP, "step %d" % step)

    def test_a_segfault_after_five_quick_steps_keeps_their_rows_and_says_so(self):
        result, status, rows, summary = self.crash("segv")
        self.assertEqual(result.returncode, 128 + 11, result.stderr)
        self.assertEqual(status["state"], "incomplete")
        (process,) = status["processes"]
        self.assertEqual(process["ended_by"]["signal"], "SIGSEGV")
        self.assertFalse(process["cut_off"])  # the probe drained before the program died
        self.assertEveryStepDumped(rows)
        self.assertIn("(incomplete; the program was killed by SIGSEGV; its probe wrote out what was queued", summary)

    def endedWhole(self, how, code):
        """Crashes the way `how` says, which ends the program with exit code `code` and its probe
        having written every row: returns the process's status entry."""
        result, status, rows, summary = self.crash(how)
        self.assertEqual(result.returncode, code, result.stderr)
        self.assertEqual(status["state"], "complete")
        (process,) = status["processes"]
        self.assertFalse(process["cut_off"])
        self.assertEqual(process["rows"], 5 * ROWS_PER_STEP)
        self.assertEveryStepDumped(rows)
        self.assertIn("(complete; the program exited with code %d)" % code, summary)
        return process

    def test_os_exit_right_after_the_steps_keeps_their_rows(self):
        # os._exit skips atexit: the rows still queued were lost (here all of them), and the
        # status said the program was cut off.
        process = self.endedWhole("os_exit", 7)
        self.assertEqual(process["ended_by"], {"how": "exited", "code": 7, "seen_by": "probe run"})

    def test_exec_right_after_the_steps_keeps_their_rows(self):
        # The new program never stops the probe: what was queued was lost (here all of it),
        # and the status said the program was cut off.
        process = self.endedWhole("exec", 0)
        self.assertIn("the program called exec(/bin/true): what its probe had queued was written out first",
                      [m["text"] for m in process["messages"]])

    def test_a_forked_childs_exec_leaves_the_parents_probe_alone(self):
        process = self.endedWhole("fork_exec", 0)
        self.assertEqual(process["messages"], [])

    def test_a_launcher_that_runs_no_model_has_its_end_recorded_and_said(self):
        # A launcher (torchrun) is not probed and has no entry: a job whose launcher failed or
        # was killed read "complete", its end said nowhere.
        for launcher, code, end, said in (
                ('"$0" "$1" "$2"; exit 3', 3, {"how": "exited", "code": 3, "seen_by": "probe run"},
                 "(complete; the program (not probed itself) exited with code 3)"),
                ('"$0" "$1" "$2"; kill -9 $$', 128 + 9,
                 {"how": "signal", "code": 9, "signal": "SIGKILL", "seen_by": "probe run"},
                 "(complete; the program (not probed itself) was killed by SIGKILL)")):
            with self.subTest(launcher=launcher):
                shutil.rmtree(self.path("out"), ignore_errors=True)
                result, status, rows, summary = self.crash("fork_exec", launcher)
                self.assertEqual(result.returncode, code, result.stderr)
                self.assertEqual(status["state"], "complete")  # the model's process dumped whole
                (process,) = status["processes"]
                self.assertIsNone(process["ended_by"])  # its parent was the launcher, not probe run
                (program,) = status["programs"]
                self.assertEqual(program["command"].split()[0], "/bin/sh")
                self.assertNotEqual(program["pid"], process["pid"])
                self.assertEqual(program["ended_by"], end)
                self.assertEveryStepDumped(rows)
                self.assertIn(said, summary)

    def test_kill_9_is_recorded_by_probe_run_and_older_rows_are_kept(self):
        result, status, rows, summary = self.crash("kill")
        self.assertEqual(result.returncode, 128 + 9, result.stderr)
        self.assertEqual(status["state"], "incomplete")
        (process,) = status["processes"]
        self.assertEqual(process["ended_by"], {"how": "signal", "code": 9, "signal": "SIGKILL", "seen_by": "probe run"})
        self.assertTrue(process["cut_off"])
        self.assertEveryStepDumped(rows)
        self.assertIn("was killed by SIGKILL before its probe could write out what was queued", summary)
        self.assertIn("killed by SIGKILL", result.stderr)  # probe run's own summary says it too


SCOPED_WRITE = """
import sys
import torch
from torch.autograd.profiler import record_function
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
    def forward(self, x):
        h = self.fc(x)
        a = h * 3.0
        h.numpy()[:] += 1000.0  # behind the version counter
        with record_function("user_scope"):
            b = h + 1.0
        print("h max %.6f" % h.max().item())
        return a.sum() + b.sum()
with torch.no_grad():
    print("out %r" % M()(torch.rand(4, 8)).item())
"""


class StatisticsCache(ProbeTestCase):
    def test_a_record_function_scope_forgets_what_was_known_of_memory(self):
        # h was read by mul, then written through numpy (no version bump): the add inside the
        # program's scope was given mul's statistics of h from before the write.
        script = self.write_script("scoped.py", SCOPED_WRITE)
        out = self.path("out")
        result = run_probe(["--quiet", "--output", out, "--config", write_config(self.dir, save_child=True), "--",
                            PYTHON, script])
        plain = subprocess.run([PYTHON, script], capture_output=True, text=True, check=True)
        self.assertEqual(result.stdout, plain.stdout)  # the model's results, bit-identical
        true_max = float(result.stdout.split("h max ")[1].split()[0])
        rows = read_rows(os.path.join(out, "atb_dump_data"))
        (add,) = [r for r in rows if r["Op Name"] == "add_0" and r["Index"] == "0_self"]
        self.assertAlmostEqual(float(add["Max"]), true_max, places=5)
        self.assertFalse([r for r in rows if "user_scope" in r["Op Name"]])  # no op of the model


EMPTY_SLICE = """
import torch
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
    def forward(self, x):
        h = self.fc(x)
        return h.sum() + h[:, :0].sum()
with torch.no_grad():
    M()(torch.rand(2, 4, 8))
"""


class ZeroElements(ProbeTestCase):
    def test_a_tensor_without_elements_has_its_row_and_file(self):
        # Its data pointer is null: it was reported as metadata alone, so task tensor wrote neither
        # row nor file for h[:, :0], and a change of that shape (2x0x8 to 2x0x3) compared equal.
        script = self.write_script("empty.py", EMPTY_SLICE)
        for task in ("statistics", "tensor"):
            out = self.path(task)
            run_probe(["--quiet", "--output", out, "--config", write_config(self.dir, task=task, save_child=True),
                       "--", PYTHON, script])
            rows = [r for r in read_rows(os.path.join(out, "atb_dump_data")) if r["Shape"] == "2x0x8"]
            # the slice's output, the sum's input and its own sum's inside it
            self.assertEqual(len(rows), 3, task)
            tensors = []
            for row in rows:
                self.assertEqual([row[k] for k in ("Max", "Min", "Mean", "Norm")], ["N/A"] * 4)
                if task == "tensor":
                    header, tensor = read_bin(row["Tensor Path"])  # no tensor: a copy's alias
                    self.assertEqual(header["dims"], "2,0,8")
                    tensors += [tensor] if tensor is not None else []
                else:
                    self.assertEqual(row["Tensor Path"], "N/A")
            if task == "tensor":
                self.assertTrue(tensors)
                self.assertEqual({tuple(t.shape) for t in tensors}, {(2, 0, 8)})


EMPTY_WIRING = """
import torch
class A(torch.nn.Module):
    def forward(self, x): return x.new_zeros(0, 8) + 0, x * 2
class B(torch.nn.Module):
    def forward(self, e, y): return e.sum() + y.sum()
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.a = A(); self.b = B()
    def forward(self, x):
        e, y = self.a(x)
        z = torch.zeros(0, 8)  # another empty tensor, read by nobody
        return self.b(e, y)
with torch.no_grad(): Net()(torch.rand(2, 8))
"""


class ZeroElementsWiring(ProbeTestCase):
    def test_empty_tensors_are_told_apart_in_the_model_structure(self):
        # A fresh empty tensor has no storage address: all of them were one buffer, and b read
        # the zeros nobody read instead of a's output.
        script = self.write_script("wiring.py", EMPTY_WIRING)
        out = self.path("out")
        run_probe(["--quiet", "--output", out, "--config", write_config(self.dir, task="tensor", save_child=True),
                   "--", PYTHON, script])
        (model_file,) = glob.glob(os.path.join(out, "atb_dump_data", "info", "model", "*", "Net.json"))
        with open(model_file) as f:
            nodes = {node["opName"]: node for node in json.load(f)["nodes"]}
        (a,) = [node for name, node in nodes.items() if name.startswith("a_")]
        (b,) = [node for name, node in nodes.items() if name.startswith("b_")]
        self.assertEqual(b["inTensors"], a["outTensors"])


FORKING = """
import os, sys
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
scale = torch.nn.Identity()  # no parameters: a worker's transform, not a model
class Listed(torch.nn.Module):  # parameters() returns a list, not an iterator
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4))
    def parameters(self, recurse=True):
        return [self.w]
    def forward(self, x, module=None):  # a keyword of any name
        return x * self.w
listed = Listed()
x = torch.randn(2, 4)
model(x)
pid = os.fork()
if pid == 0:
    scale(x)
    listed(x, module=None)
    model(x)
    model(x)
    os._exit(0)
os.waitpid(pid, 0)
model(x)
print("child", pid)
"""


class Forks(ProbeTestCase):
    def test_a_forked_child_calling_the_model_says_its_ops_are_not_dumped(self):
        # A forked child runs unprobed (its parent's dump is the parent's): that was silent. Its
        # first module with parameters says so (one whose parameters() returns a list too).
        script = self.write_script("forking.py", FORKING)
        out = self.path("out")
        result = run_probe(["--output", out, "--config", write_config(self.dir), "--", PYTHON, script])
        child = int(result.stdout.split("child ")[1])
        root = os.path.join(out, "atb_dump_data")
        rows = read_rows(root)
        self.assertEqual({r["Execution Count"] for r in rows}, {"0", "1"})  # the parent's two calls
        self.assertNotIn("Traceback", result.stderr)  # the child's calls went through
        message = ("pid %d is a fork of pid %d: the probe does not follow fork(), so its calls of Listed are "
                   "not dumped" % (child, int(rows[0]["Device and PID"])))
        self.assertEqual(result.stderr.count(message), 2, result.stderr)  # the child's, and probe run's
        self.assertIn("probe run: process %d: %s" % (child, message), result.stderr)
        with open(os.path.join(root, "probe_injection.jsonl")) as f:
            records = [json.loads(line) for line in f]
        self.assertEqual([(r["pid"], r["status"]) for r in records][-1], (child, "forked_unprobed"))


class LoadScript(ProbeTestCase):
    def test_load_run_unload(self):
        scripts = os.path.join(PREFIX, "share", "probe-studio", "scripts")
        out = self.path("out")
        cfg = write_config(self.dir, exec_range="0,0")
        script = """
set -e
source {s}/load_probe.sh --output={out} --config={cfg}
{py} {train}
source {s}/unload_probe.sh
echo "PYTHONPATH=${{PYTHONPATH-unset}} CONFIG=${{PROBE_CONFIG-unset}}"
{py} {train}
""".format(s=scripts, out=out, cfg=cfg, py=PYTHON, train=TRAIN)
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={
            k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("PYTHONPATH=unset CONFIG=unset", result.stdout)
        rows = read_rows(os.path.join(out, "atb_dump_data"))
        # One process dumped (the second run, after unload, did not).
        self.assertEqual(len(glob.glob(os.path.join(out, "atb_dump_data", "data", "*"))), 1)
        self.assertIn("linear_1", {r["Op Name"] for r in rows})


    def test_probe_exec_records_how_the_program_ended(self):
        scripts = os.path.join(PREFIX, "share", "probe-studio", "scripts")
        out = self.path("out")
        cfg = write_config(self.dir)
        killed = self.path("killed.py")
        with open(killed, "w") as f:
            f.write("import os, signal, torch\ntorch.nn.Linear(2, 2)(torch.ones(1, 2))\nos.kill(os.getpid(), signal.SIGKILL)\n")
        script = """
source {s}/load_probe.sh --output={out} --config={cfg}
{py} {train} > /dev/null
probe_exec {py} {killed}
echo "exit $?"
source {s}/unload_probe.sh
type probe_exec > /dev/null 2>&1 || echo "probe_exec gone"
""".format(s=scripts, out=out, cfg=cfg, py=PYTHON, train=TRAIN, killed=killed)
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={
            k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        self.assertIn("exit 137", result.stdout, result.stderr)
        self.assertIn("probe_exec gone", result.stdout)
        with open(os.path.join(out, "atb_dump_data", "probe_status.json")) as f:
            status = json.load(f)
        # Both programs in the shell's one dump; the one run by probe_exec says how it ended.
        self.assertEqual(len(status["processes"]), 2)
        ends = [p["ended_by"] for p in status["processes"]]
        self.assertIn(None, ends)  # run directly: nobody saw it end, it stopped its probe normally
        self.assertIn({"how": "signal", "code": 9, "signal": "SIGKILL", "seen_by": "probe run"}, ends)
        self.assertEqual(status["state"], "incomplete")


if __name__ == "__main__":
    unittest.main()
