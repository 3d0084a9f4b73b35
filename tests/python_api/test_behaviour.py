"""The debugger never harms the model (bit-identical results, in-place modules, failures of its
own), loses nothing at the end of a loop or at exit, and costs nothing outside its steps."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import signal
import unittest
import textwrap

import torch

import support
from support import check_layout, load_dump

# Trains a model that exercises in-place modules, residuals, shared inputs, layer norm,
# embedding and dropout; saves the losses and final parameters. With a config path argument
# the whole run is dumped (task tensor at mix: the most intrusive setting).
TRAIN = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.fc1 = nn.Linear(16, 16)
        self.act = nn.ReLU(inplace=True)
        self.norm = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 16)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(16, 5)

    def forward(self, tokens):
        x = self.embed(tokens).mean(1)
        h = self.act(self.fc1(x))
        h = self.norm(h + x)
        h = self.drop(self.fc2(h)) + self.fc2(x)  # fc2 called twice, x used twice
        return self.head(h)

torch.manual_seed(0)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
debugger = None
if len(sys.argv) > 2:
    from probe_studio.pytorch import PrecisionDebugger
    debugger = PrecisionDebugger(config_path=sys.argv[2], model=model)
losses = []
for step in range(3):
    tokens = torch.randint(0, 20, (8, 6))
    labels = torch.randint(0, 5, (8,))
    if debugger:
        debugger.start()
    loss = F.cross_entropy(model(tokens), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if debugger:
        debugger.stop()
        debugger.step()
    losses.append(loss.detach())
with torch.no_grad():
    probe = model(torch.arange(12).reshape(2, 6))
torch.save({"losses": losses, "params": model.state_dict(), "probe": probe}, sys.argv[1])
"""


class NeverHarmsTheModel(support.TempDirTestCase):
    def test_results_are_bit_identical_with_and_without_dumping(self):
        with open(os.path.join(self.tmp, "train.py"), "w") as f:
            f.write(TRAIN)
        self.run_python("train.py", ["plain.pt"])
        configs = {
            "mix_tensor": {"task": "tensor", "dump_path": "./mix_tensor", "level": "mix"},
            "L1_md5": {"task": "statistics", "dump_path": "./l1_md5", "level": "L1",
                       "statistics": {"summary_mode": "md5"}},
            "L0_stats": {"task": "statistics", "dump_path": "./l0", "level": "L0"},
        }
        plain = torch.load(os.path.join(self.tmp, "plain.pt"))
        self.assertTrue(plain["losses"])
        for name, config in configs.items():
            path = self.write_config(config, name + ".json")
            proc = self.run_python("train.py", [name + ".pt", path])
            self.assertNotIn("error", proc.stderr.lower(), (name, proc.stderr))
            dumped = torch.load(os.path.join(self.tmp, name + ".pt"))
            self.assertEqual(len(dumped["losses"]), len(plain["losses"]), name)
            for a, b in zip(plain["losses"], dumped["losses"]):
                self.assertTrue(torch.equal(a, b), name)
            for key, value in plain["params"].items():
                self.assertTrue(torch.equal(value, dumped["params"][key]), (name, key))
            self.assertTrue(torch.equal(plain["probe"], dumped["probe"]), name)
            for step in range(3):
                check_layout(self, self.only_dump(config["dump_path"], step), task=config["task"],
                             level=config["level"], md5=name == "L1_md5")

    def test_model_can_be_copied_and_saved_while_hooked(self):
        self.write_config({"dump_path": "./dump", "level": "mix"})
        proc = self.run_python("""
            import copy
            import torch
            import torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger
            model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            debugger.start()
            model(torch.ones(3)).sum().backward()
            twin = copy.deepcopy(model)
            torch.save(model, "model.pt")
            loaded = torch.load("model.pt")
            twin(torch.ones(3))
            debugger.stop()
            print("OK", torch.equal(loaded(torch.ones(3)), model(torch.ones(3))))
            """)
        self.assertIn("OK True", proc.stdout)
        names = list(load_dump(self.only_dump("dump"))["data"])
        # The copy is not the model given to the debugger: only its APIs are entries.
        self.assertEqual([n for n in names if n.startswith("Module.") and ".forward." in n],
                         ["Module.0.Linear.forward.0", "Module.1.ReLU.forward.0"])
        self.assertIn("Functional.linear.1.forward", names)

    def test_torchscript_compiles_after_wrapping(self):
        self.write_config({"dump_path": "./dump", "level": "L1"})
        proc = self.run_python("""
            import torch
            import torch.nn.functional as F
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./config.json")

            def g(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
                y = F.relu(torch.add(x, 1.0))  # a Python functional and a builtin, both wrapped
                y = F.softmax(F.linear(y, w), dim=-1)
                return torch.matmul(y, w) + y.sum()

            scripted = torch.jit.script(g)
            x, w = torch.randn(3, 4), torch.randn(4, 4)
            debugger.start()
            same = torch.equal(scripted(x, w), g(x, w))
            debugger.stop()
            print("SAME", same)
            """)
        self.assertIn("SAME True", proc.stdout)
        # The eager call is dumped; the scripted one runs inside TorchScript.
        self.assertIn("Functional.linear.0.forward", load_dump(self.only_dump("dump"))["data"])

    def test_torch_jit_trace_and_onnx_export_while_dumping(self):
        # The hooks' own work entered the tracer's graph: an INTERNAL ASSERT in torch's ir.cpp
        # at L0, TracerWarnings at L1 and mix (torch.onnx.export traces too). A trace, and
        # jit.trace's check of it, are the tracer's runs, not the model's step.
        for level, entries in (("L0", ["Module.0.Linear.forward.0", "Module.1.ReLU.forward.0"]),
                               ("L1", ["Functional.linear.0.forward", "Functional.relu.0.forward"]),
                               ("mix", ["Functional.linear.0.forward", "Module.0.Linear.forward.0",
                                        "Functional.relu.0.forward", "Module.1.ReLU.forward.0"])):
            with self.subTest(level=level):
                dump = "./dump_" + level
                self.write_config({"dump_path": dump, "level": level})
                proc = self.run_python("""
                    import io
                    import warnings
                    import torch
                    from probe_studio.pytorch import PrecisionDebugger
                    debugger = PrecisionDebugger(config_path="./config.json")
                    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
                    x = torch.ones(1, 2)
                    debugger.start(model)
                    with warnings.catch_warnings():
                        warnings.simplefilter("error")
                        traced = torch.jit.trace(model, x)
                        onnx = io.BytesIO()
                        torch.onnx.export(model, x, onnx)
                        assert onnx.getvalue()
                    y = model(x)
                    debugger.stop()
                    print("SAME", torch.equal(traced(x), y))
                    """)
                self.assertIn("SAME True", proc.stdout, proc.stderr)
                self.assertEqual(list(load_dump(self.only_dump(dump))["data"]), entries)

    def test_in_place_module_gradients(self):
        with open(os.path.join(self.tmp, "train.py"), "w") as f:
            f.write(TRAIN)
        path = self.write_config({"task": "tensor", "dump_path": "./dump", "level": "mix", "step": [0]})
        self.run_python("train.py", ["out.pt", path])
        dump = load_dump(self.only_dump("dump"))
        data = dump["data"]
        tensor_dir = dump["dump_data_dir"]

        def saved(item):
            return torch.load(os.path.join(tensor_dir, item["data_name"]))

        # nn.ReLU(inplace=True): the gradient flowing out is the incoming one masked by the output.
        backward = data["Module.act.ReLU.backward.0"]
        grad_out = saved(backward["input"][0])
        grad_in = saved(backward["output"][0])
        relu_out = saved(data["Module.act.ReLU.forward.0"]["output"][0])
        self.assertTrue(torch.equal(grad_in, grad_out * (relu_out > 0)))
        # fc1's output gradient is the gradient with respect to the ReLU's input.
        self.assertTrue(torch.equal(saved(data["Module.fc1.Linear.backward.0"]["input"][0]), grad_in))
        # fc2 is called twice: two forward and two backward entries.
        for name in ("Module.fc2.Linear.forward.0", "Module.fc2.Linear.forward.1", "Module.fc2.Linear.backward.0",
                     "Module.fc2.Linear.backward.1", "Module.fc2.Linear.parameters_grad.0"):
            self.assertIn(name, data)
        # Dropout forward entries exist, with their p.
        self.assertEqual(data["Functional.dropout.0.forward"]["input_args"][1], {"type": "float", "value": 0.1})
        # Parameter gradient = the accumulated .grad (fc2 was used twice).
        grad = saved(data["Module.fc2.Linear.parameters_grad.0"]["weight"][0])
        self.assertEqual(list(grad.shape), [16, 16])

    def test_meta_tensors_and_failing_output_directory(self):
        blocker = os.path.join(self.tmp, "a_file")
        with open(blocker, "w") as f:
            f.write("not a directory")
        self.write_config({"task": "tensor", "dump_path": os.path.join(blocker, "dump")})
        proc = self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./config.json")
            debugger.start()
            y = torch.add(torch.ones(3), 1)
            debugger.stop()
            print("RESULT", y.tolist())
            """)
        self.assertIn("RESULT [2.0, 2.0, 2.0]", proc.stdout)
        self.assertIn("cannot create the dump directory", proc.stderr)
        # Without tensors the step's folder is made by the file writer, off the model's thread:
        # the failure is said when the step's files are written, and the model goes on.
        self.write_config({"task": "statistics", "dump_path": os.path.join(blocker, "dump")}, "stats.json")
        proc = self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./stats.json")
            debugger.start()
            y = torch.add(torch.ones(3), 1)
            debugger.stop()
            print("RESULT", y.tolist())
            """)
        self.assertIn("RESULT [2.0, 2.0, 2.0]", proc.stdout)
        self.assertRegex(proc.stderr, r"cannot write the dump files in .*a_file/dump/step0/proc\d+: Not a directory")
        # Meta tensors have no data: statistics are null, no file; a write failure in the middle
        # of a step keeps the data for the next write. stop() does not wait for the disk: the
        # writer's drain() (what exit does) lets the write fail before the folder comes back.
        self.write_config({"task": "tensor", "dump_path": "./dump"}, "ok.json")
        proc = self.run_python("""
            import os, shutil, torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./ok.json")
            debugger.start()
            torch.add(torch.empty(2, 3, device="meta"), 1)
            step_dir = os.path.join("dump", "step0")
            shutil.move(step_dir, "moved_away")
            with open(step_dir, "w") as f:
                f.write("in the way")
            debugger.stop()
            debugger.service.writer.drain()
            os.remove(step_dir)
            shutil.move("moved_away", step_dir)
            debugger.start()
            torch.mul(torch.ones(2), 3)
            debugger.stop()
            print("FINISHED")
            """)
        self.assertIn("FINISHED", proc.stdout)
        self.assertIn("cannot write the dump files", proc.stderr)
        data = load_dump(self.only_dump("dump"))["data"]
        self.assertEqual(list(data), ["Torch.add.0.forward", "Torch.mul.0.forward"])
        meta = data["Torch.add.0.forward"]["input_args"][0]
        self.assertEqual([meta["Max"], meta["Min"], meta["Mean"], meta["Norm"]], [None] * 4)
        self.assertNotIn("data_name", meta)
        self.assertEqual(meta["shape"], [2, 3])

    def test_a_link_planted_below_the_dump_path_is_not_followed(self):
        # step0 -> elsewhere had the step's dump.json (or .pt files) written where it pointed.
        for task in ("statistics", "tensor"):
            with self.subTest(task=task):
                dump, elsewhere = os.path.join(self.tmp, task), os.path.join(self.tmp, task + "_elsewhere")
                os.makedirs(dump)
                os.makedirs(elsewhere)
                os.symlink(elsewhere, os.path.join(dump, "step0"))
                self.write_config({"task": task, "dump_path": dump, "level": "L1"})
                proc = self.run_python("""
                    import torch
                    from probe_studio.pytorch import PrecisionDebugger
                    debugger = PrecisionDebugger(config_path="./config.json")
                    for step in range(2):
                        debugger.start()
                        y = torch.add(torch.ones(3), 1)
                        debugger.stop()
                        debugger.step()
                    print("RESULT", y.tolist())
                    """)
                self.assertIn("RESULT [2.0, 2.0, 2.0]", proc.stdout)
                self.assertIn("%s is a symbolic link, which is not followed" % os.path.join(dump, "step0"),
                              proc.stderr)
                self.assertEqual(os.listdir(elsewhere), [])
                data = load_dump(self.only_dump(dump, step=1))["data"]  # the next step dumps as usual
                self.assertEqual(list(data), ["Torch.add.0.forward"])


class ForkedChild(support.TempDirTestCase):
    def test_a_debugger_made_before_a_fork_says_it_dumps_nothing_in_the_child(self):
        # The child does not dump into its parent's files; it announced "step 0 dumps into" and
        # wrote nothing.
        self.write_config({"task": "statistics", "dump_path": "./dump", "level": "L1"})
        proc = self.run_python("""
            import os
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./config.json")
            pid = os.fork()
            if pid == 0:
                debugger.start()
                torch.ones(3).sum()
                debugger.stop()
                debugger.step()
                os._exit(0)
            os.waitpid(pid, 0)
            print("child", pid, "parent", os.getpid())
            """)
        words = proc.stdout.split()
        child, parent = int(words[words.index("child") + 1]), int(words[words.index("parent") + 1])
        self.assertIn("pid %d is a fork of pid %d, where this PrecisionDebugger was made: it dumps nothing here"
                      % (child, parent), proc.stderr)
        self.assertNotIn("dumps into", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "dump", "step0", "proc%d" % child)))


class ModuleCalledTwice(support.TempDirTestCase):
    def test_both_calls_have_their_backward_entry_with_their_gradient(self):
        # A shared embedding for two sequences; the backward nodes of the two calls run one
        # after the other (as under `probe run`, where they were one op).
        script = """
            import sys
            import torch
            import torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger

            class Pair(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = nn.Embedding(10, 4)
                    self.head = nn.Linear(4, 2)

                def forward(self, a, b):
                    return self.head(torch.cat([self.embed(a), self.embed(b) * 3.0]))

            torch.manual_seed(5)
            model = Pair()
            debugger = PrecisionDebugger(config_path=sys.argv[1], model=model)
            debugger.start()
            model(torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])).sum().backward()
            debugger.stop()
            """
        torch.manual_seed(5)
        embed, head = torch.nn.Embedding(10, 4), torch.nn.Linear(4, 2)
        ea, eb = embed(torch.tensor([1, 2, 3])), embed(torch.tensor([4, 5, 6]))
        for t in (ea, eb):
            t.retain_grad()
        head(torch.cat([ea, eb * 3.0])).sum().backward()
        for level in ("L0", "mix"):
            path = self.write_config({"task": "tensor", "dump_path": "./" + level, "level": level}, level + ".json")
            self.run_python(script, [path])
            dump = check_layout(self, self.only_dump(level), task="tensor", level=level)
            data = dump["data"]
            for call, grad in ((0, ea.grad), (1, eb.grad)):
                self.assertIn("Module.embed.Embedding.forward.%d" % call, data)
                entry = data["Module.embed.Embedding.backward.%d" % call]
                saved = torch.load(os.path.join(dump["dump_data_dir"], entry["input"][0]["data_name"]))
                self.assertTrue(torch.equal(saved, grad), (level, call))
                self.assertEqual(entry["output"], [])  # the token ids need no gradient


# The shared modules (Attn, Inner, Two, Pass) and a model made of them.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support",
                       "shared_input_modules.py")) as _f:
    MODEL_WITH_SHARED_INPUTS = _f.read() + """

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.norm, self.lin = nn.Linear(4, 4), nn.LayerNorm(4), nn.Linear(4, 4)
        self.attn, self.inner, self.two, self.pas = Attn(), Inner(), Two(), Pass()

    def forward(self, x):
        h = self.inp(x)
        h = h + self.lin(self.norm(h))
        h = h + self.attn(h)
        a, _ = self.two(h)
        same, l = self.pas(a)
        return self.inner(same * l, torch.sigmoid(l))

torch.manual_seed(6)
model = Net()
x = torch.randn(3, 4, requires_grad=True)  # a leaf: inp's input too has a gradient
"""


class ModuleBackwardShares(support.TempDirTestCase):
    def test_a_modules_backward_output_is_its_own_share_of_an_input_used_elsewhere_too(self):
        # msprobe takes a module's backward with torch's full backward hook: its output is what
        # the module passes back to each input. The whole gradient of an input used elsewhere
        # too was taken (norm in h + lin(norm(h)) had the residual's share; attn.q had k's and
        # v's). Also a module whose second output is unused (two: the sum of its input's shares
        # waited for q's node, which never runs) and one returning its input (pas). Checked
        # against torch's own full backward hooks on the same model.
        script = MODEL_WITH_SHARED_INPUTS + textwrap.dedent("""
            import sys
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path=sys.argv[1])
            debugger.start(model=model)
            model(x).square().sum().backward()
            debugger.stop()
            debugger.step()
            """)
        built = {}
        exec(MODEL_WITH_SHARED_INPUTS, built)
        model, x = built["model"], built["x"]
        shares = {}

        def keep(name, grad_input):
            shares.setdefault(name, grad_input)  # None returned: the gradients stay as they are

        for name, module in model.named_modules():
            if name:
                module.register_full_backward_hook(
                    lambda module, grad_input, grad_output, name=name: keep(name, grad_input))
        model(x).square().sum().backward()
        # two.q's output is unused: its node runs only under torch's hooks (their identity node
        # on two's outputs gives it zeros), and the dump has no backward entry of it.
        self.assertTrue(all(g is None or not g.any() for g in shares.pop("two.q")))
        for level in ("L0", "mix"):
            path = self.write_config({"task": "tensor", "dump_path": "./" + level, "level": level}, level + ".json")
            self.run_python(script, [path])
            dump = check_layout(self, self.only_dump(level), task="tensor", level=level)
            data = dump["data"]
            for name, module in model.named_modules():
                entry_name = "Module.%s.%s.backward.0" % (name, type(module).__name__)
                if name not in shares:
                    self.assertNotIn(entry_name, data)
                    continue
                entry = data[entry_name]
                self.assertEqual(len(entry["output"]), len(shares[name]), (level, name))
                for item, share in zip(entry["output"], shares[name]):
                    saved = torch.load(os.path.join(dump["dump_data_dir"], item["data_name"]))
                    self.assertTrue(torch.allclose(saved, share, rtol=1e-5, atol=1e-6),
                                    (level, name, saved, share))


class TwoModels(support.TempDirTestCase):
    def test_a_second_model_named_like_the_first_is_said_and_a_list_keeps_them_apart(self):
        # start(enc) then start(dec): both Linears were Module.0.Linear, the decoder's read as a
        # second call of the encoder's, unsaid (compare pairs them).
        for how, warned, entries in (
                ("debugger.start(enc)\ndebugger.start(dec)", True,
                 ["Module.0.Linear.forward.0", "Module.0.Linear.forward.1"]),
                ("debugger.start([enc, dec])", False, ["Module.0.0.Linear.forward.0", "Module.1.0.Linear.forward.0"])):
            with self.subTest(how=how):
                dump = "./dump_%d" % warned
                self.write_config({"dump_path": dump, "level": "L0"})
                proc = self.run_python("""
                    import torch
                    from probe_studio.pytorch import PrecisionDebugger
                    debugger = PrecisionDebugger(config_path="./config.json")
                    enc = torch.nn.Sequential(torch.nn.Linear(8, 8))
                    dec = torch.nn.Sequential(torch.nn.Linear(8, 3))
                    %s
                    dec(enc(torch.ones(1, 8)))
                    debugger.stop()
                    """ % how.replace("\n", "\n                    "))
                self.assertEqual("names 1 of its modules as one given before (Module.0.Linear...)" in proc.stderr, warned,
                                 proc.stderr)
                self.assertEqual(list(load_dump(self.only_dump(dump))["data"]), entries)


class GradientAccumulation(support.TempDirTestCase):
    def test_each_backward_pass_has_its_parameter_gradients(self):
        # Two backward passes in one step: the second adds to .grad in place, so each pass's
        # parameters_grad entry is taken when that pass ends.
        self.write_config({"task": "tensor", "dump_path": "./dump", "level": "mix"})
        self.run_python("""
            import torch
            import torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger
            torch.manual_seed(2)
            model = nn.Sequential(nn.Linear(3, 2))
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            debugger.start()
            for _ in range(2):
                model(torch.randn(4, 3)).square().sum().backward()
            debugger.stop()
            """)
        torch.manual_seed(2)
        model = torch.nn.Sequential(torch.nn.Linear(3, 2))
        grads = []
        for _ in range(2):
            model(torch.randn(4, 3)).square().sum().backward()
            grads.append(model[0].weight.grad.clone())
        dump = load_dump(self.only_dump("dump"))
        for index, grad in enumerate(grads):
            item = dump["data"]["Module.0.Linear.parameters_grad.%d" % index]["weight"][0]
            self.assertTrue(torch.equal(torch.load(os.path.join(dump["dump_data_dir"], item["data_name"])), grad))
            self.assertAlmostEqual(item["Max"], grad.max().item(), places=6)

    def test_backward_passes_of_several_threads_each_have_their_entry(self):
        # Six threads' passes through one model: the entries' numbering was shared among them
        # (entries lost, merged or split) and a pass's end summarised another's gradients
        # ("'NoneType' object has no attribute 'dtype'"), in about one run of three.
        for level in ("L0", "mix"):
            with self.subTest(level=level):
                dump = "./dump_" + level
                self.write_config({"dump_path": dump, "level": level})
                proc = self.run_python("""
                    import threading
                    import torch
                    from probe_studio.pytorch import PrecisionDebugger
                    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
                    debugger = PrecisionDebugger(config_path="./config.json", model=model)
                    for step in range(3):
                        debugger.start()
                        def work():
                            for _ in range(10):
                                model(torch.randn(64, 8)).sum().backward()
                        threads = [threading.Thread(target=work) for _ in range(6)]
                        for t in threads:
                            t.start()
                        for t in threads:
                            t.join()
                        debugger.stop()
                        debugger.step()
                    """)
                # (At mix a pass may change in place a gradient another thread's API entry holds:
                # that one stays null, said. Threads sharing .grad race by nature.)
                self.assertNotIn("error in parameter gradient hook", proc.stderr)
                for step in range(3):
                    data = load_dump(self.only_dump(dump, step))["data"]
                    for layer in ("Module.0.Linear", "Module.2.Linear"):
                        entries = sorted((k for k in data if k.startswith(layer + ".parameters_grad.")),
                                         key=lambda k: int(k.rsplit(".", 1)[1]))
                        self.assertEqual(entries, ["%s.parameters_grad.%d" % (layer, i) for i in range(60)])
                        for name in entries:
                            self.assertEqual(sorted(data[name]), ["bias", "weight"], name)
                            for (item,) in data[name].values():
                                self.assertIsNotNone(item["Max"], name)

    def test_a_backward_pass_that_raises_leaves_the_next_ones_whole(self):
        # torch runs what waits for a pass's end only when the pass succeeds: after one that
        # raised (out of memory, caught by the program), the next passes' parameter gradients
        # all became parameters_grad.0 with null statistics, and at L1 the weights' statistics
        # of later steps stayed null.
        for level in ("L0", "L1", "mix"):
            with self.subTest(level=level):
                dump = "./dump_" + level
                self.write_config({"dump_path": dump, "level": level})
                proc = self.run_python("""
                    import torch
                    from probe_studio.pytorch import PrecisionDebugger
                    torch.manual_seed(4)
                    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 2))
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, foreach=True)
                    debugger = PrecisionDebugger(config_path="./config.json", model=model)

                    def fail(grad):
                        raise RuntimeError("out of memory (planted)")

                    for step in range(2):
                        debugger.start()
                        for attempt in range(3):
                            h = model[0](torch.randn(4, 3))
                            if step == 0 and attempt == 0:  # after the second layer's backward
                                h.register_hook(fail)
                            y = model[1](h).square().sum()
                            try:
                                y.backward()
                            except RuntimeError:
                                pass
                        optimizer.step()
                        debugger.stop()
                        debugger.step()
                    print("FINISHED")
                    """)
                self.assertIn("FINISHED", proc.stdout, proc.stderr)
                self.assertNotIn("changed in place", proc.stderr)
                for step in range(2):
                    data = load_dump(self.only_dump(dump, step))["data"]
                    if level != "L1":
                        # The passes that reached each layer: the one that raised reached the
                        # second layer only.
                        for layer, want in (("Module.0.Linear", 2 if step == 0 else 3), ("Module.1.Linear", 3)):
                            grads = sorted(k for k in data if k.startswith(layer + ".parameters_grad."))
                            self.assertEqual(grads, ["%s.parameters_grad.%d" % (layer, i) for i in range(want)])
                            for name in grads:
                                for (item,) in data[name].values():
                                    self.assertIsNotNone(item["Max"], name)
                    if level != "L0":
                        weights = [data[k]["input_args"][1] for k in data if k.startswith("Functional.linear.")
                                   and k.endswith(".forward")]
                        self.assertEqual(len(weights), 6)
                        for weight in weights:
                            self.assertIsNotNone(weight["Max"])


class NamesSurvive(support.TempDirTestCase):
    def test_module_names_with_any_characters_keep_their_tensors(self):
        # add_module accepts any name without a dot: a "/" (not allowed in a file name), a lone
        # surrogate (UTF-8 cannot encode it: torch.save and JSON readers refuse it) and a "%".
        self.write_config({"task": "tensor", "dump_path": "./dump", "level": "mix"})
        proc = self.run_python("""
            import torch
            import torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger
            model = nn.Sequential()
            for name in ("enc/dec", "x\\udc80y", "x\\udc81y", "100%"):
                model.add_module(name, nn.Linear(3, 3))
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            debugger.start()
            model(torch.randn(2, 3)).sum().backward()
            debugger.stop()
            print("DONE")
            """)
        self.assertIn("DONE", proc.stdout)
        self.assertNotIn("error", proc.stderr)
        rank_dir = self.only_dump("dump")
        with open(os.path.join(rank_dir, "dump.json"), encoding="utf-8") as f:
            text = f.read()
        self.assertNotRegex(text, r"(?<!\\)\\ud[89a-f]", "a lone surrogate escape: strict JSON readers refuse it")
        dump = load_dump(rank_dir)
        modules = [n for n in dump["data"] if n.startswith("Module.") and ".forward." in n]
        self.assertEqual(modules, ["Module.enc/dec.Linear.forward.0", "Module.x\\udc80y.Linear.forward.0",
                                   "Module.x\\udc81y.Linear.forward.0", "Module.100%.Linear.forward.0"])
        tensor_dir = dump["dump_data_dir"]
        files = set(os.listdir(tensor_dir))
        checked = 0
        for name, entry in dump["data"].items():
            for item in support.tensor_items(entry):
                self.assertIn(item["data_name"], files, name)
                self.assertEqual(list(torch.load(os.path.join(tensor_dir, item["data_name"])).shape), item["shape"])
                checked += 1
        self.assertGreater(checked, 40)
        self.assertIn("Module.enc%2Fdec.Linear.forward.0.output.0.pt", files)
        self.assertIn("Module.100%25.Linear.backward.0.input.0.pt", files)
        self.assertIn("Module.x\\udc81y.Linear.parameters_grad.0.weight.pt", files)


class InferenceMode(support.TempDirTestCase):
    def test_inference_mode_tensors(self):
        # Inference tensors have no version counter and no autograd: dumped all the same.
        self.write_config({"dump_path": "./dump", "level": "mix", "task": "tensor"})
        proc = self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            debugger.start()
            with torch.inference_mode():
                y = model(torch.randn(2, 4))
            debugger.stop()
            """)
        self.assertNotIn("error", proc.stderr)
        rank_dir = self.only_dump("dump")
        dump = check_layout(self, rank_dir, task="tensor", level="mix")
        self.assertEqual(list(dump["data"]), ["Functional.linear.0.forward", "Module.0.Linear.forward.0",
                                              "Functional.relu.0.forward", "Module.1.ReLU.forward.0"])
        self.assertFalse(os.path.exists(os.path.join(rank_dir, "dump_error_info.log")))


class NothingLost(support.TempDirTestCase):
    def test_loop_ending_without_a_final_step_call_keeps_the_last_step(self):
        # step() at the top of the loop: the last step is never followed by stop() or step().
        self.write_config({"dump_path": "./dump", "level": "mix"})
        self.run_python("""
            import torch
            import torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            loader = torch.utils.data.DataLoader(torch.randn(12, 4), batch_size=4)
            for i, batch in enumerate(loader):
                if i:
                    debugger.step()
                debugger.start()
                model(batch).sum().backward()
            """)
        for step in range(3):
            data = load_dump(self.only_dump("dump", step))["data"]
            self.assertIn("Module.0.Linear.parameters_grad.0", data, step)
            self.assertIn("Functional.linear.0.backward", data, step)

    def test_an_exception_in_the_model_leaves_every_step_written(self):
        # The model raises in the middle of step 1 and the program ends with the traceback: step
        # 0 (stop(), step()) and what step 1 recorded before the exception are in their files at
        # exit, whole, with statistics recomputed here from the values the script printed.
        self.write_config({"dump_path": "./dump", "level": "mix"})
        proc = self.run_python("""
            import torch
            import torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger

            class Boom(nn.Module):
                def forward(self, x):
                    y = torch.tanh(x)
                    print("TANH", repr(y.max().item()), repr(y.min().item()), flush=True)
                    raise ValueError("the model failed")

            torch.manual_seed(3)
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), Boom())
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            x = torch.randn(2, 4)
            debugger.start()
            try:
                model(x)
            except ValueError:
                pass
            debugger.stop()
            debugger.step()
            debugger.start()
            model(x)
            """, expect_ok=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("ValueError: the model failed", proc.stderr)
        printed = [line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("TANH")]
        self.assertEqual(len(printed), 2)
        expected = ["Functional.linear.0.forward", "Module.0.Linear.forward.0", "Functional.relu.0.forward",
                    "Module.1.ReLU.forward.0", "Torch.tanh.0.forward", "Tensor.max.0.forward", "Tensor.min.0.forward"]
        for step in (0, 1):
            rank_dir = self.only_dump("dump", step)
            dump = check_layout(self, rank_dir, level="mix")
            self.assertEqual(list(dump["data"]), expected, step)
            out = dump["data"]["Torch.tanh.0.forward"]["output"][0]
            self.assertEqual((out["Max"], out["Min"]), (float(printed[step][0]), float(printed[step][1])))
            self.assertEqual(out["shape"], [2, 4])

    def test_stop_and_step_leave_the_files_to_the_writer_thread(self):
        # stop() and step() hand the step's files over without writing them on the model's
        # thread: in no step does its write(2) count (/proc/thread-self/io's wchar) move by the
        # size of even the smallest dump.json (before: by all the step's files; a few bytes that
        # are not ours may move it now and then). Every step's files are whole at exit, in their own folders,
        # with the statistics recomputed here.
        self.write_config({"dump_path": "./dump"})
        proc = self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger

            def written():
                with open("/proc/thread-self/io") as f:
                    return int(next(line for line in f if line.startswith("wchar")).split()[1])

            debugger = PrecisionDebugger(config_path="./config.json")
            x = torch.linspace(-1.0, 1.0, 64)
            most = 0
            for k in range(25):
                debugger.start()
                y = x
                for _ in range(k + 1):
                    y = torch.exp(y * 0.5)
                before = written()
                debugger.stop()
                debugger.step()
                most = max(most, written() - before)
            print("MOST", most)
            """)
        most = int(proc.stdout.split("MOST")[1].split()[0])
        x = torch.linspace(-1.0, 1.0, 64)
        smallest = None
        for k in range(25):
            rank_dir = self.only_dump("dump", k)
            size = os.path.getsize(os.path.join(rank_dir, "dump.json"))
            smallest = size if smallest is None else min(smallest, size)
            data = check_layout(self, rank_dir)["data"]
            exps = [name for name in data if name.startswith("Torch.exp.")]
            self.assertEqual(exps, ["Torch.exp.%d.forward" % i for i in range(k + 1)], k)
            y = x
            for _ in range(k + 1):
                y = torch.exp(y * 0.5)
            out = data["Torch.exp.%d.forward" % k]["output"][0]
            self.assertEqual((out["Max"], out["Min"]), (y.max().item(), y.min().item()), k)
        self.assertGreater(smallest, 500)
        self.assertLess(most, smallest)

    def test_os_exit_right_after_step_writes_the_whole_step(self):
        # os._exit skips atexit: the step's files were still with the writer threads, and the
        # dump.json on disk was an earlier, shorter one (1,254 of 2,000 entries). A forked
        # child's os._exit still writes nothing, and the exit code is the one asked for.
        self.write_config({"dump_path": "./exit"}, "exit.json")
        proc = self.run_python("""
            import os, torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./exit.json")
            x = torch.randn(8)
            debugger.start()
            pid = os.fork()
            if pid == 0:
                torch.relu(x)
                os._exit(5)
            assert os.waitpid(pid, 0)[1] >> 8 == 5
            for _ in range(2000):
                x = torch.relu(x)
            debugger.step()
            os._exit(3)
            """, expect_ok=False)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        data = load_dump(self.only_dump("exit"))["data"]
        self.assertEqual(list(data), ["Torch.relu.%d.forward" % i for i in range(2000)])

    def test_sigterm_and_keyboard_interrupt_write_the_files(self):
        self.write_config({"dump_path": "./term"}, "term.json")
        proc = self.run_python("""
            import os, signal, torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./term.json")
            debugger.start()
            torch.relu(torch.randn(3))
            os.kill(os.getpid(), signal.SIGTERM)
            """, expect_ok=False)
        self.assertEqual(proc.returncode, -signal.SIGTERM)
        self.assertEqual(list(load_dump(self.only_dump("term"))["data"]), ["Torch.relu.0.forward"])
        self.write_config({"dump_path": "./int"}, "int.json")
        proc = self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./int.json")
            debugger.start()
            torch.relu(torch.randn(3))
            raise KeyboardInterrupt
            """, expect_ok=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertEqual(list(load_dump(self.only_dump("int"))["data"]), ["Torch.relu.0.forward"])

    def test_dataloader_workers_do_not_dump(self):
        self.write_config({"dump_path": "./dump"})
        self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger

            class Data(torch.utils.data.Dataset):
                def __len__(self):
                    return 8
                def __getitem__(self, i):
                    return torch.sin(torch.ones(2) * i)  # wrapped APIs, in a forked worker

            debugger = PrecisionDebugger(config_path="./config.json")
            debugger.start()
            for batch in torch.utils.data.DataLoader(Data(), batch_size=4, num_workers=2):
                torch.cos(batch)
            debugger.stop()
            """)
        self.assertEqual(list(load_dump(self.only_dump("dump"))["data"]),
                         ["Torch.cos.0.forward", "Torch.cos.1.forward"])


class CostOutsideSteps(support.TempDirTestCase):
    def test_unselected_steps_collect_nothing_and_the_debugger_is_a_singleton(self):
        self.write_config({"dump_path": "./dump", "step": [2], "level": "mix"})
        proc = self.run_python("""
            import torch
            import torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger
            from probe_studio.pytorch import _api_wrap
            model = nn.Sequential(nn.Linear(3, 3))
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            again = PrecisionDebugger(level="L0")
            print("SAME", again is debugger, debugger.config.level)
            from torch.nn.modules import module as module_module
            for step in range(4):
                debugger.start()
                print("STEP", step, "collecting" if _api_wrap.ACTIVE is not None else "idle",
                      "wrapped" if hasattr(torch.nn.functional.linear, "_probe_original") else "plain",
                      len(module_module._global_forward_hooks) + len(module_module._global_forward_pre_hooks))
                model(torch.ones(3)).sum().backward()
                debugger.stop()
                debugger.step()
            """)
        self.assertIn("SAME True mix", proc.stdout)
        self.assertIn("arguments of this second construction are ignored", proc.stderr)
        self.assertIn("STEP 0 idle wrapped 2", proc.stdout)
        self.assertIn("STEP 2 collecting wrapped", proc.stdout)
        self.assertIn("STEP 3 idle plain 0", proc.stdout)  # after the last listed step: unhooked
        self.assertEqual(os.listdir(os.path.join(self.tmp, "dump")), ["step2"])


if __name__ == "__main__":
    unittest.main()
