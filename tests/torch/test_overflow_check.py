"""Task overflow_check, live: PrecisionDebugger (msprobe's task and its overflow_check block) dumps
only the calls where an overflow is born, with their tensors, bounded by overflow_nums; and
stop_after_overflow ends the program with exit code 3 once the dump is on disk, under
PrecisionDebugger and under `probe run` (the op-level task). Everything is read back from the
files written: dump.json parsed, the .pt files loaded and their values checked."""
# SPDX-License-Identifier: GPL-3.0-or-later
import glob
import json
import math
import os
import subprocess
import unittest

import torch

from probe_test_util import LLAMA, PREFIX, PROBE, PYTHON, ProbeTestCase, read_bin, read_rows, run_probe, write_config

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "overflow_api_program.py")
ENV = dict(os.environ, PYTHONPATH=os.path.join(PREFIX, "lib", "python3", "dist-packages"))
STOP_EXIT_CODE = 3  # docs/formats.md: stop_after_overflow
X = torch.tensor([[100.0, 50.0, -25.0, 75.0], [1.0, 2.0, 3.0, 4.0]], dtype=torch.float16)
BIRTHS_L1 = ["Tensor.half.0.forward", "Tensor.__mul__.0.forward", "Torch.square.0.forward"]


class CodeLevelOverflowCheck(ProbeTestCase):
    def run_program(self, name, block=None, level="L1", task_arg=False, config_task="overflow_check", fails=False):
        """Runs the planted program under PrecisionDebugger; its process result."""
        dump_path = self.path(name)
        config = {"task": config_task, "dump_path": dump_path, "rank": [], "step": [], "level": level}
        if block is not None:
            config["overflow_check"] = block
        config_path = self.path(name + ".json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        command = [PYTHON, PROGRAM, config_path, self.path(name + "_result.pt"), "--level", level]
        result = subprocess.run(command + (["--task-arg"] if task_arg else []), env=ENV, capture_output=True,
                                text=True, timeout=300)
        if not fails:
            self.assertNotIn("Traceback", result.stderr)
        return result

    def dump(self, name):
        (folder,) = glob.glob(os.path.join(self.path(name), "step0", "proc*"))
        with open(os.path.join(folder, "dump.json")) as f:
            return folder, json.load(f)  # Infinity and NaN are read as Python floats

    def load_pt(self, folder, item):
        self.assertIn("data_name", item)
        return torch.load(os.path.join(folder, "dump_tensor_data", item["data_name"]))

    def test_only_the_call_where_the_overflow_is_born_is_dumped_with_its_tensors(self):
        result = self.run_program("one", task_arg=True, config_task="statistics")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("overflow born in Tensor.half.0.forward: output max=inf", result.stderr)
        folder, dump = self.dump("one")
        self.assertEqual(dump["task"], "overflow_check")
        self.assertEqual(dump["dump_data_dir"], os.path.join(folder, "dump_tensor_data"))
        # The default overflow_nums is msprobe's 1: only the first birth, the cast of the Linear's
        # float32 output to float16; the Linear and abs (which inherits the Inf) are not there.
        self.assertEqual(list(dump["data"]), ["Tensor.half.0.forward"])
        entry = dump["data"]["Tensor.half.0.forward"]
        self.assertEqual(list(entry), ["input_args", "input_kwargs", "output"])
        (in_item,) = entry["input_args"]
        self.assertEqual((in_item["dtype"], in_item["Max"]), ("torch.float32", 200000.0))
        linear_out = self.load_pt(folder, in_item)
        self.assertEqual(linear_out.dtype, torch.float32)
        self.assertTrue(torch.isfinite(linear_out).all())
        self.assertEqual(linear_out[0, 0].item(), 1000.0 * X[0].float().sum().item())
        (out_item,) = entry["output"]
        self.assertEqual((out_item["dtype"], out_item["Max"]), ("torch.float16", math.inf))
        out = self.load_pt(folder, out_item)
        self.assertEqual(out.dtype, torch.float16)
        self.assertTrue(torch.isinf(out[0, 0]))
        self.assertTrue(torch.isfinite(out[:, 1:]).all())  # only row 0 of the weight overflows
        self.assertTrue(torch.equal(out, linear_out.half()))
        # Nothing else was saved.
        saved = sorted(os.listdir(os.path.join(folder, "dump_tensor_data")))
        self.assertEqual(saved, ["Tensor.half.0.forward.input.0.pt", "Tensor.half.0.forward.output.0.pt"])
        with open(os.path.join(folder, "stack.json")) as f:
            stacks = json.load(f)
        self.assertEqual([names for names, _ in stacks.values()], [["Tensor.half.0.forward"]])
        # probe overflow, searching the dump afterwards, names the same call.
        found = subprocess.run([PROBE, "overflow", self.path("one")], capture_output=True, text=True, timeout=300)
        self.assertEqual(found.returncode, 1, found.stdout + found.stderr)
        self.assertIn("born in step 0, op Tensor.half.0.forward [Tensor.half]", found.stdout)

    def test_the_results_are_those_of_the_program_without_the_debugger(self):
        plain = self.path("plain.pt")
        subprocess.run([PYTHON, PROGRAM, "-", plain], env=ENV, check=True, capture_output=True, timeout=300)
        self.run_program("watched", {"overflow_nums": -1})
        for a, b in zip(torch.load(plain), torch.load(self.path("watched_result.pt"))):
            self.assertEqual(a.numpy().tobytes(), b.numpy().tobytes())

    def test_overflow_nums_bounds_the_births_dumped(self):
        for nums, births in ((1, BIRTHS_L1[:1]), (2, BIRTHS_L1[:2]), (-1, BIRTHS_L1)):
            with self.subTest(overflow_nums=nums):
                name = "nums%d" % nums
                result = self.run_program(name, {"overflow_nums": nums})
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(result.stdout.splitlines()[-1], "finished")
                folder, dump = self.dump(name)
                self.assertEqual(list(dump["data"]), births)
                for entry in dump["data"].values():
                    self.assertTrue(all(math.isfinite(i["Max"]) for i in entry["input_args"] if i and "Max" in i))
                    self.assertEqual(entry["output"][0]["Max"], math.inf)
                    self.assertTrue(torch.isinf(self.load_pt(folder, entry["output"][0])).any())
                if nums > 0:
                    self.assertIn("overflow_nums (%d) overflow birth(s) dumped: nothing more is dumped" % nums,
                                  result.stderr)

    def test_at_level_mix_the_innermost_call_is_the_birth_and_at_l0_the_module(self):
        self.run_program("mix", {"overflow_nums": -1}, level="mix")
        folder, dump = self.dump("mix")
        self.assertEqual(list(dump["data"]), BIRTHS_L1)  # not Module.cast nor Module.scale around them
        with open(os.path.join(folder, "construct.json")) as f:
            construct = json.load(f)
        self.assertEqual(construct, {"Tensor.half.0.forward": "Module.cast.ToHalf.forward.0",
                                     "Tensor.__mul__.0.forward": "Module.scale.Scale.forward.0",
                                     "Torch.square.0.forward": None})
        self.run_program("l0", {"overflow_nums": -1}, level="L0")
        folder, dump = self.dump("l0")
        # Module.fc's float32 output is finite: the cast around the Linear is the birth.
        self.assertEqual(list(dump["data"]), ["Module.cast.ToHalf.forward.0", "Module.scale.Scale.forward.0"])
        cast = dump["data"]["Module.cast.ToHalf.forward.0"]
        self.assertNotIn("parameters", cast)
        self.assertTrue(torch.isinf(self.load_pt(folder, cast["output"][0])[0, 0]))
        self.assertEqual(self.load_pt(folder, cast["input_args"][0]).max().item(), 200000.0)

    def test_an_api_backward_where_the_overflow_is_born_is_dumped(self):
        # Forward all finite (1e30 and 4e30 in float32); the gradient 1e30 flowing into the mul's
        # backward comes out as 1e30 * 1e30: Inf.
        config_path = self.path("backward.json")
        with open(config_path, "w") as f:
            json.dump({"task": "overflow_check", "dump_path": self.path("backward"), "level": "L1",
                       "overflow_check": {"overflow_nums": -1}}, f)
        code = ("import sys, torch\n"
                "from probe_studio.pytorch import PrecisionDebugger\n"
                "debugger = PrecisionDebugger(config_path=sys.argv[1])\n"
                "x = torch.ones(4, requires_grad=True)\n"
                "debugger.start()\n"
                "torch.sum(x * 1e30).backward(torch.tensor(1e30))\n"
                "debugger.stop()\n"
                "print(x.grad.tolist())\n")
        result = subprocess.run([PYTHON, "-c", code, config_path], env=ENV, capture_output=True, text=True,
                                timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), str([math.inf] * 4))
        folder, dump = self.dump("backward")
        self.assertEqual(list(dump["data"]), ["Tensor.__mul__.0.backward"])
        entry = dump["data"]["Tensor.__mul__.0.backward"]
        self.assertEqual(list(entry), ["input", "output"])
        grad_in = self.load_pt(folder, entry["input"][0])
        self.assertTrue(torch.equal(grad_in, torch.full((4,), 1e30)))
        self.assertTrue(torch.isinf(self.load_pt(folder, entry["output"][0])).all())

    def test_the_backward_of_a_call_that_read_a_nan_is_no_birth(self):
        # (w * x) ** 2 with a NaN in x: the pow's backward makes NaN from a finite gradient out of
        # what its forward saved. It was written as a birth every step; probe overflow on a
        # statistics dump of the same program finds none (the NaN came in with x).
        config_path = self.path("saved.json")
        with open(config_path, "w") as f:
            json.dump({"task": "overflow_check", "dump_path": self.path("saved"), "level": "L1",
                       "overflow_check": {"overflow_nums": -1}}, f)
        code = ("import sys, torch\n"
                "from probe_studio.pytorch import PrecisionDebugger\n"
                "debugger = PrecisionDebugger(config_path=sys.argv[1])\n"
                "w = torch.ones(4, requires_grad=True)\n"
                "for step in range(2):\n"
                "    debugger.start()\n"
                "    ((w * torch.tensor([1.0, float('nan'), 2.0, 3.0])) ** 2).sum().backward()\n"
                "    debugger.stop()\n"
                "    debugger.step()\n"
                "print(w.grad.isnan().any().item())\n")
        result = subprocess.run([PYTHON, "-c", code, config_path], env=ENV, capture_output=True, text=True,
                                timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "True")
        self.assertNotIn("overflow born", result.stderr)
        dumps = glob.glob(os.path.join(self.path("saved"), "step*", "*", "dump.json"))
        self.assertTrue(dumps)
        for path in dumps:
            with open(path) as f:
                self.assertEqual(json.load(f)["data"], {}, path)

    def test_stop_after_overflow_ends_the_program_once_the_dump_is_on_disk(self):
        result = self.run_program("stop", {"overflow_nums": 2, "stop_after_overflow": True})
        self.assertEqual(result.returncode, STOP_EXIT_CODE, result.stderr)
        self.assertNotIn("finished", result.stdout)  # the program did not go on
        self.assertIn("stop_after_overflow: overflow_nums (2) overflow birth(s) dumped; ending the program with "
                      "exit code 3", result.stderr)
        self.assertFalse(os.path.exists(self.path("stop_result.pt")))
        folder, dump = self.dump("stop")
        self.assertEqual(list(dump["data"]), BIRTHS_L1[:2])
        for entry in dump["data"].values():
            self.assertTrue(torch.isinf(self.load_pt(folder, entry["output"][0])).any())

    def test_bad_overflow_check_values_are_refused_with_the_key(self):
        for block, key in (({"overflow_nums": 0}, "overflow_check.overflow_nums"),
                           ({"stop_after_overflow": "yes"}, "overflow_check.stop_after_overflow")):
            with self.subTest(block=block):
                result = self.run_program("bad", block, fails=True)
                self.assertNotEqual(result.returncode, 0)
                self.assertIn("ProbeConfigError", result.stderr + result.stdout)
                self.assertIn(key, result.stderr)


class OpLevelStopAfterOverflow(ProbeTestCase):
    def test_probe_run_ends_the_program_after_the_birth_is_written(self):
        out = self.path("out")
        os.makedirs(out)
        logits = self.path("logits.pt")
        config = write_config(out, task="overflow_check", save_child=True, overflow_nums=1, stop_after_overflow=True)
        result = run_probe(["--output", out, "--config", config, "--quiet", "--", PYTHON, LLAMA, "--save-logits",
                            logits, "--tokens", "4", "--fp16-layer", "1", "--fp16-step", "2"], check=False)
        self.assertEqual(result.returncode, STOP_EXIT_CODE, result.stdout + result.stderr)
        self.assertIn("stop_after_overflow", result.stderr)  # said even with --quiet
        self.assertNotIn("Traceback", result.stderr)
        self.assertFalse(os.path.exists(logits))  # the demo did not reach its end
        root = os.path.join(out, "atb_dump_data")
        rows = read_rows(root)
        self.assertEqual({(r["Execution Count"], r["Op Name"]) for r in rows}, {("2", "layers.1/mul")})
        (output,) = [r for r in rows if r["Input/Output"] == "output"]
        _, tensor = read_bin(output["Tensor Path"])
        self.assertTrue(torch.isinf(tensor).any())
        with open(os.path.join(root, "probe_status.json")) as f:
            status = json.load(f)
        (process,) = status["processes"]
        self.assertEqual(process["state"], "complete")
        self.assertEqual(process["ended_by"]["how"], "exited")
        self.assertEqual(process["ended_by"]["code"], STOP_EXIT_CODE)
        self.assertTrue(any("stop_after_overflow" in m["text"] for m in process["messages"]))

    def test_a_birth_of_inf_and_minus_inf_is_not_said_to_be_nan(self):
        # +inf and -inf together make the mean NaN: the birth read "output 0: nan max=inf
        # min=-inf" of a tensor without any NaN.
        out = self.path("out")
        os.makedirs(out)
        script = self.write_script(
            "signs.py",
            "import torch\n"
            "class Scale(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        return x * 10.0\n"
            "Scale()(torch.tensor([3e38, -3e38, 1.0]))\n")
        config = write_config(out, task="overflow_check", save_child=True, overflow_nums=1)
        result = run_probe(["--output", out, "--config", config, "--", PYTHON, script], check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        # The probe's own line, and probe run's summary, which reads it back from the dump.
        born = [line for line in result.stderr.splitlines() if "overflow born" in line]
        self.assertEqual(len(born), 2, result.stderr)
        self.assertTrue(born[0].endswith("[aten::mul]: output 0: max=inf min=-inf"), born[0])
        self.assertTrue(born[1].endswith("[aten::mul], output 0: max=inf min=-inf"), born[1])


    def test_live_births_follow_the_rule_probe_overflow_applies_to_the_dump(self):
        # A backward that scales by 1e39 makes +Inf gradients (a birth in round 0); clipping their
        # infinite norm makes the weights NaN. From round 1 on the NaN weights came in: the live
        # task wrote l0/fc as a birth each round (probe overflow on a statistics dump said none),
        # and the backward ops computing from NaN their forward saved would be too.
        script = self.write_script(
            "scaled.py",
            "import torch\n"
            "torch.manual_seed(0)\n"
            "class Scale(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x): return x.clone()\n"
            "    @staticmethod\n"
            "    def backward(ctx, g): return g * 1e39\n"
            "class Block(torch.nn.Module):\n"
            "    def __init__(self, scaled):\n"
            "        super().__init__(); self.fc = torch.nn.Linear(8, 8); self.scaled = scaled\n"
            "    def forward(self, x):\n"
            "        h = torch.relu(self.fc(x))\n"
            "        return Scale.apply(h) if self.scaled else h\n"
            "class Net(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__(); self.l0 = Block(False); self.l1 = Block(True)\n"
            "        self.head = torch.nn.Linear(8, 1)\n"
            "    def forward(self, x): return self.head(self.l1(self.l0(x)))\n"
            "m = Net(); opt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
            "x, y = torch.randn(4, 8), torch.randn(4, 1)\n"
            "for step in range(3):\n"
            "    opt.zero_grad()\n"
            "    ((m(x) - y) ** 2).mean().backward()\n"
            "    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)\n"
            "    opt.step()\n"
            "    print(step, m.l0.fc.weight.isnan().any().item())\n")
        births = self.live_and_offline_births(script, save_child=True, expected_stdout="0 True 1 True 2 True")
        self.assertTrue(births["statistics"])
        self.assertEqual({round_ for round_, _ in births["statistics"]}, {"0"})
        self.assertEqual(births["overflow_check"], births["statistics"])

        # A no_grad forward between a step's forward and its backward interleaves the rounds (the
        # layers' counts run ahead of their backward ops'): the live task forgot round 0's NaN
        # weight at round 1's forward and wrote sq.backward as births, probe overflow did not.
        script = self.write_script(
            "interleaved.py",
            "import torch\n"
            "torch.manual_seed(0)\n"
            "class Sq(torch.nn.Module):\n"
            "    def forward(self, x): return x * x\n"
            "class Net(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__(); self.fc = torch.nn.Linear(4, 4); self.sq = Sq()\n"
            "    def forward(self, x): return self.sq(self.fc(x))\n"
            "m = Net()\n"
            "with torch.no_grad(): m.fc.weight[0, 0] = float('nan')\n"
            "x = torch.randn(2, 4)\n"
            "for step in range(2):\n"
            "    out = m(x)\n"
            "    with torch.no_grad(): m(x)\n"
            "    out.sum().backward()\n"
            "print('done')\n")
        births = self.live_and_offline_births(script, save_child=False, expected_stdout="done")
        self.assertEqual({name for _, name in births["statistics"]}, {"fc"})
        self.assertEqual(births["overflow_check"], births["statistics"])

    def test_an_inf_born_in_the_backward_of_a_layer_level_aten_op_is_found(self):
        # sqrt's backward divides by zero where relu left zeros: an Inf born in sqrt_0.backward
        # (the outermost module calls sqrt itself). Its backward op had no outputs, so the live
        # task wrote nothing and probe overflow blamed something outside the dumped ops.
        script = self.write_script(
            "sqrt.py",
            "import torch\n"
            "torch.manual_seed(0)\n"
            "class M(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__(); self.l1 = torch.nn.Linear(8, 8); self.l2 = torch.nn.Linear(8, 2)\n"
            "    def forward(self, x): return self.l2(torch.sqrt(torch.relu(self.l1(x))))\n"
            "m = M()\n"
            "m(torch.randn(4, 8)).sum().backward()\n"
            "print('done')\n")
        births = self.live_and_offline_births(script, save_child=False, expected_stdout="done")
        self.assertEqual(births["statistics"], {("0", "sqrt_0.backward")})
        self.assertEqual(births["overflow_check"], births["statistics"])

    def test_a_nan_made_of_an_attention_masks_infinities_is_born_where_it_is_made(self):
        # An attention mask of -inf comes in with the model's input: every op after it reads
        # Inf, so a NaN born there (round 2: one batch row with every key masked, softmax of a
        # row all -inf) was no birth by "every input finite": the live task wrote nothing, probe
        # overflow named only the mask. A NaN from inputs holding Inf and no NaN is born there;
        # the healthy rounds, whose -inf stays -inf or turns to 0, have no birth.
        script = self.write_script(
            "masked.py",
            "import torch\n"
            "torch.manual_seed(0)\n"
            "class Attn(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__(); self.q = torch.nn.Linear(8, 8); self.k = torch.nn.Linear(8, 8)\n"
            "    def forward(self, x, mask):\n"
            "        scores = self.q(x) @ self.k(x).transpose(-1, -2) + mask\n"
            "        return torch.softmax(scores, -1) @ x\n"
            "class Net(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__(); self.attn = Attn(); self.head = torch.nn.Linear(8, 2)\n"
            "    def forward(self, x, mask): return self.head(self.attn(x, mask))\n"
            "m = Net().eval()\n"
            "with torch.no_grad():\n"
            "    for step in range(4):\n"
            "        mask = torch.zeros(2, 5, 5)\n"
            "        mask[1, :, 3:] = float('-inf')\n"
            "        if step == 2: mask[0] = float('-inf')\n"
            "        print(step, m(torch.randn(2, 5, 8), mask).isnan().any().item())\n")
        births = self.live_and_offline_births(
            script, save_child=True, expected_stdout="0 False 1 False 2 True 3 False")
        self.assertEqual(births["statistics"], {("2", "attn/softmax/_softmax")})
        self.assertEqual(births["overflow_check"], births["statistics"])

    def test_a_nan_of_a_mask_is_not_hidden_by_an_unrelated_inf_nor_a_python_number(self):
        # Found by review, each a NaN made of Inf that no op made of finite inputs: a log(0)
        # clamped at once in another layer earlier in the round hid a softmax NaN of an all
        # masked row (the live task and probe overflow disagreed); the classic buggy mask
        # triu(ones) * float('-inf') (0 * -inf) was no birth with save_child, mul's child reading
        # the number marked mul as fed from inside; and sqrt's backward in the layer that reads
        # the mask (a layer whose forward read the -inf had no births in its backward).
        script = self.write_script(
            "masks.py",
            "import torch\n"
            "torch.manual_seed(0)\n"
            "class Feat(torch.nn.Module):\n"
            "    def forward(self, counts): return torch.log(counts).clamp_min(-10.0)\n"
            "class Attn(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__(); self.l = torch.nn.Linear(4, 4)\n"
            "    def forward(self, x, pad, step):\n"
            "        sc = (self.l(x) @ x.transpose(-1, -2)).masked_fill(pad[:, None, :], float('-inf'))\n"
            "        if step == 2: sc = sc + torch.triu(torch.ones(3, 3), 1) * float('-inf')\n"
            "        return torch.sqrt(torch.softmax(sc, -1))\n"
            "class Net(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__(); self.feat = Feat(); self.attn = Attn()\n"
            "    def forward(self, x, counts, pad, step): return self.attn(x + self.feat(counts)[..., None], pad, step)\n"
            "net = Net()\n"
            "for step in range(4):\n"
            "    x = torch.randn(2, 3, 4)\n"
            "    counts = torch.tensor([[1., 0., 2.], [3., 1., 1.]])\n"
            "    pad = torch.zeros(2, 3, dtype=torch.bool)\n"
            "    if step == 1: pad[0] = True\n"
            "    if step == 3: pad[:, 2] = True\n"
            "    y = net(x, counts, pad, step)\n"
            "    y.sum().backward() if step == 3 else None\n"
            "    print(step, y.isnan().any().item())\n")
        births = self.live_and_offline_births(
            script, save_child=True, expected_stdout="0 False 1 True 2 True 3 False")
        self.assertEqual(births["overflow_check"], births["statistics"])
        found = births["statistics"]
        self.assertIn(("1", "attn/softmax/_softmax"), found)  # the all-masked row
        self.assertIn(("2", "attn/mul"), found)  # 0 * -inf
        # sqrt's backward at 0, in the one backward pass (its round numbers its own calls)
        self.assertIn(("0", "attn.backward/SqrtBackward0/div"), found)
        self.assertEqual({name for _, name in found} - {"attn/softmax/_softmax", "attn/mul",
                                                        "attn.backward/SqrtBackward0/div"},
                         {"feat/log"})

    def live_and_offline_births(self, script, save_child, expected_stdout):
        """The (round, op name) births the live task writes, and those probe overflow --all
        finds in a statistics dump of the same program."""
        births = {}
        for task in ("overflow_check", "statistics"):
            out = self.path("%s_%s" % (os.path.basename(script), task))
            os.makedirs(out)
            config = write_config(out, task=task, save_child=save_child, overflow_nums=-1)
            result = run_probe(["--output", out, "--quiet", "--config", config, "--", PYTHON, script])
            self.assertEqual(result.stdout.split(), expected_stdout.split())
            if task == "overflow_check":
                rows = read_rows(os.path.join(out, "atb_dump_data"))
                births[task] = {(r["Execution Count"], r["Op Name"]) for r in rows}
            else:
                report = subprocess.run([PROBE, "overflow", out, "--all"], capture_output=True, text=True)
                births[task] = {(line.split("born in round ")[1].split(",")[0],
                                 line.split(", op ")[1].split(" (")[0])
                                for line in report.stdout.splitlines() if "born in round" in line}
        return births


if __name__ == "__main__":
    unittest.main()
