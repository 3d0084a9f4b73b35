"""Statistics written by the C++ core, checked against values recomputed independently from the
saved .pt tensors (task tensor), the md5 (CRC-32) field, and the JSON form of non-tensors."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import math
import os
import unittest
import zlib

import torch

import support
from support import check_layout, is_float32, tensor_items

DTYPE_SCRIPT = """
import torch
from probe_studio.pytorch import PrecisionDebugger, seed_all
seed_all(7)
debugger = PrecisionDebugger(config_path="./config.json")
values = [
    torch.randn(5, 7).half(),                                  # 0 float16
    torch.randn(5, 7).bfloat16(),                              # 1 bfloat16
    torch.randn(3, 3, dtype=torch.float64),                    # 2 float64
    torch.randint(-5, 5, (4,), dtype=torch.int32),             # 3 int32
    torch.tensor([2 ** 60 + 1, -3, 7]),                        # 4 int64 beyond 2^53
    torch.tensor([True, False, True]),                         # 5 bool
    torch.randn(4, dtype=torch.complex64),                     # 6 complex
    torch.tensor(-2.5),                                        # 7 0-d float
    torch.tensor(7),                                           # 8 0-d int
    torch.empty(0, 3),                                         # 9 empty
    torch.tensor([1.0, float("nan"), 2.0]),                    # 10 NaN
    torch.tensor([1.0, float("inf"), -3.0]),                   # 11 inf
    torch.randn(6, 4).t(),                                     # 12 not contiguous
    torch.tensor([0, 255, 7], dtype=torch.uint8),              # 13 uint8
    torch.tensor([True, True]),                                # 14 all true
    torch.randn(300, 301) * 1000,                              # 15 larger float32
]
debugger.start()
for v in values:
    torch.clone(v)
debugger.stop()
"""


def _bits_equal_half(x, dtype):
    return torch.tensor(x, dtype=dtype).item() == x


class TensorTaskStatistics(support.TempDirTestCase):
    def _recompute_and_compare(self, rank_dir, dump):
        """Every tensor item: its .pt file exists, holds a contiguous tensor of the item's dtype
        and shape, and the statistics recomputed from it agree with the item."""
        tensor_dir = dump["dump_data_dir"]
        referenced = set()
        checked = 0
        for name, entry in dump["data"].items():
            for item in tensor_items(entry):
                self.assertIn("data_name", item, name)
                path = os.path.join(tensor_dir, item["data_name"])
                referenced.add(item["data_name"])
                t = torch.load(path)
                self.assertIsInstance(t, torch.Tensor)
                self.assertTrue(t.is_contiguous())
                self.assertEqual(str(t.dtype), item["dtype"], path)
                self.assertEqual(list(t.shape), item["shape"], path)
                self.assertFalse(t.requires_grad)
                self._compare(item, t, path)
                checked += 1
        on_disk = set(os.listdir(tensor_dir))
        self.assertEqual(on_disk, referenced, "every .pt file is referenced, every reference exists")
        return checked

    def _compare(self, item, t, where):
        if t.numel() == 0:
            self.assertEqual([item["Max"], item["Min"], item["Mean"], item["Norm"]], [None] * 4, where)
            return
        if t.dtype == torch.bool:
            self.assertIs(item["Max"], bool(t.any()), where)
            self.assertIs(item["Min"], bool(t.all()), where)
            self.assertIsNone(item["Mean"])
            self.assertIsNone(item["Norm"])
            return
        if t.is_complex():
            a = t.abs().double()
            self.assertAlmostEqual(item["Max"], a.max().item(), places=5)
            self.assertAlmostEqual(item["Min"], a.min().item(), places=5)
            self.assertAlmostEqual(item["Mean"], a.mean().item(), places=5)
            self.assertIsNone(item["Norm"])
            return
        if not t.is_floating_point():
            self.assertEqual(item["Max"], t.max().item(), where)
            self.assertEqual(item["Min"], t.min().item(), where)
            self.assertIsInstance(item["Max"], int)
            if t.dim() == 0:
                self.assertEqual(item["Mean"], t.item())
                self.assertEqual(item["Norm"], t.item())
            else:
                self.assertIsNone(item["Mean"], where)
                self.assertIsNone(item["Norm"], where)
            return
        d = t.double()
        if t.dim() == 0:
            expected = [d.item()] * 4  # msprobe: a scalar's four statistics are its value
        else:
            expected = [d.max().item(), d.min().item(), d.mean().item(), d.norm().item()]
        for key, want in zip(("Max", "Min", "Mean", "Norm"), expected):
            got = item[key]
            if math.isnan(want):
                self.assertTrue(math.isnan(got), (where, key))
            elif math.isinf(want):
                self.assertEqual(got, want, (where, key))
            elif key in ("Max", "Min") or t.dim() == 0:
                self.assertEqual(got, want, (where, key))  # exact
            else:
                tolerance = {torch.float16: 2e-3, torch.bfloat16: 1e-2}.get(t.dtype, 1e-6)
                self.assertLessEqual(abs(got - want), tolerance * max(1.0, abs(want)), (where, key, got, want))
            # The value is the tensor dtype's own result, written as a Python double.
            if t.dtype == torch.float32:
                self.assertTrue(is_float32(got), (where, key, got))
            elif t.dtype in (torch.float16, torch.bfloat16) and not math.isnan(got):
                self.assertTrue(_bits_equal_half(got, t.dtype), (where, key, got))

    def test_training_example_tensors_recomputed_from_pt_files(self):
        self.copy_example("quickstart_2025.py")
        with open(os.path.join(self.tmp, "quickstart_2025.py")) as f:
            source = f.read().replace("PrecisionDebugger()", "PrecisionDebugger('./config.json')")
        with open(os.path.join(self.tmp, "train_tensor.py"), "w") as f:
            f.write(source)
        self.write_config({"task": "tensor", "dump_path": "./tensor_dump", "level": "mix"})
        self.run_python("train_tensor.py")
        rank_dir = self.only_dump("tensor_dump")
        dump = check_layout(self, rank_dir, task="tensor", level="mix")
        self.assertGreater(self._recompute_and_compare(rank_dir, dump), 30)
        data = dump["data"]
        self.assertEqual(data["Functional.linear.0.forward"]["input_args"][0]["data_name"],
                         "Functional.linear.0.forward.input.0.pt")
        self.assertEqual(data["Functional.linear.0.backward"]["output"][2]["data_name"],
                         "Functional.linear.0.backward.output.2.pt")
        self.assertIsNone(data["Functional.linear.0.backward"]["output"][1])  # no file for a null gradient
        self.assertEqual(data["Module.linear_1.Linear.forward.0"]["parameters"]["weight"]["data_name"],
                         "Module.linear_1.Linear.forward.0.parameters.weight.pt")
        self.assertEqual(data["Module.linear_1.Linear.parameters_grad.0"]["weight"][0]["data_name"],
                         "Module.linear_1.Linear.parameters_grad.0.weight.pt")
        # The saved gradient is the parameter's .grad after backward.
        grad = torch.load(os.path.join(dump["dump_data_dir"], "Module.linear_1.Linear.parameters_grad.0.weight.pt"))
        grad_t = torch.load(os.path.join(dump["dump_data_dir"], "Functional.linear.0.backward.output.2.pt"))
        self.assertTrue(torch.equal(grad, grad_t.t()))

    def test_statistics_task_module_items_match_the_tensors_saved_by_the_tensor_task(self):
        # Task statistics keeps a module's parameters, backward gradients and parameter gradients
        # in the places of their entries until the step's statistics are taken; the same seeded
        # steps under task tensor save those tensors: statistics recomputed from the .pt files
        # must equal the statistics task's items, place by place.
        script = """
            import torch, torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger, seed_all
            seed_all(3)
            debugger = PrecisionDebugger(config_path="./config.json")
            model = nn.Sequential(nn.Linear(6, 5), nn.LayerNorm(5), nn.ReLU(), nn.Linear(5, 3))
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(4, 6)
            for _ in range(2):
                debugger.start(model=model)
                loss = model(x).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                debugger.stop()
                debugger.step()
            """
        for task in ("statistics", "tensor"):
            self.write_config({"task": task, "dump_path": "./" + task, "level": "mix"})
            self.run_python(script)
        kinds = {"parameters": 0, "backward": 0, "parameters_grad": 0}
        for step in range(2):
            stats = check_layout(self, self.only_dump("statistics", step), level="mix")
            tensors = check_layout(self, self.only_dump("tensor", step), task="tensor", level="mix")
            self.assertEqual(list(stats["data"]), list(tensors["data"]))
            for name, entry in stats["data"].items():
                if not name.startswith("Module."):
                    continue
                saved = tensors["data"][name]
                for key in entry:
                    items, saved_items = list(tensor_items(entry[key])), list(tensor_items(saved[key]))
                    self.assertEqual(len(items), len(saved_items), (name, key))
                    for item, saved_item in zip(items, saved_items):
                        t = torch.load(os.path.join(tensors["dump_data_dir"], saved_item["data_name"]))
                        self.assertEqual(item["dtype"], str(t.dtype))
                        self.assertEqual(item["shape"], list(t.shape))
                        self._compare(item, t, (step, name, key))
                        kind = ("parameters_grad" if ".parameters_grad." in name else
                                "parameters" if key == "parameters" else
                                "backward" if ".backward." in name else None)
                        if kind:
                            kinds[kind] += 1
        # Both steps: 6 parameters (2 Linear, 1 LayerNorm) in each forward and as gradients;
        # backward items of the 4 modules' inputs and outputs.
        self.assertEqual(kinds["parameters"], 12)
        self.assertEqual(kinds["parameters_grad"], 12)
        self.assertGreaterEqual(kinds["backward"], 12)

    def test_generate_example_tensors_recomputed_from_pt_files(self):
        self.copy_example("generate.py")
        self.write_config({"task": "tensor", "level": "mix"})
        self.run_python("generate.py")
        rank_dir = self.only_dump("dump_path")
        dump = check_layout(self, rank_dir, task="tensor", level="mix")
        self.assertGreater(self._recompute_and_compare(rank_dir, dump), 300)
        tokens = torch.load(os.path.join(dump["dump_data_dir"], "Functional.embedding.0.forward.input.0.pt"))
        self.assertEqual(tokens.dtype, torch.int64)
        self.assertEqual(list(tokens.shape), [1, 5])

    def test_every_dtype_recomputed_from_pt_files(self):
        self.write_config({"task": "tensor", "dump_path": "./dtypes", "level": "L1"})
        self.run_python(DTYPE_SCRIPT)
        rank_dir = self.only_dump("dtypes")
        dump = check_layout(self, rank_dir, task="tensor", level="L1")
        self.assertEqual(len(dump["data"]), 16)
        self._recompute_and_compare(rank_dir, dump)
        data = dump["data"]
        self.assertEqual(data["Torch.clone.4.forward"]["input_args"][0]["Max"], 2 ** 60 + 1)
        self.assertEqual(data["Torch.clone.7.forward"]["input_args"][0]["shape"], [])
        self.assertEqual(data["Torch.clone.12.forward"]["input_args"][0]["shape"], [4, 6])
        self.assertEqual(data["Torch.clone.15.forward"]["output"][0]["dtype"], "torch.float32")

    def test_md5_is_crc32_of_the_tensor_bytes_and_statistics_stay(self):
        self.write_config({"task": "tensor", "dump_path": "./as_tensor", "level": "L1"}, "tensor.json")
        self.write_config({"task": "statistics", "dump_path": "./as_md5", "level": "L1",
                           "statistics": {"summary_mode": "md5"}})
        script = DTYPE_SCRIPT.replace('config_path="./config.json"', 'config_path=__import__("sys").argv[1]')
        self.run_python(script, ["tensor.json"])
        self.run_python(script, ["config.json"])
        with_tensors = support.load_dump(self.only_dump("as_tensor"))
        rank_dir = self.only_dump("as_md5")
        with_md5 = check_layout(self, rank_dir, task="statistics", level="L1", md5=True)
        tensor_dir = with_tensors["dump_data_dir"]
        compared = 0
        for name, entry in with_md5["data"].items():
            md5_items = list(tensor_items(entry))
            saved_items = list(tensor_items(with_tensors["data"][name]))
            self.assertEqual(len(md5_items), len(saved_items))
            for md5_item, saved in zip(md5_items, saved_items):
                t = torch.load(os.path.join(tensor_dir, saved["data_name"]))
                if t.dtype == torch.bfloat16:
                    raw = t.view(torch.int16).numpy().tobytes()
                else:
                    raw = t.numpy().tobytes()
                self.assertEqual(md5_item["md5"], "%08x" % zlib.crc32(raw), name)
                for key in ("Max", "Min", "Mean", "Norm"):
                    a, b = md5_item[key], saved[key]
                    self.assertTrue(a == b or (a != a and b != b), (name, key, a, b))
                compared += 1
        self.assertGreater(compared, 0, "no tensor item to compare")


class ValuesAtTheCall(support.TempDirTestCase):
    def test_statistics_are_of_the_values_at_the_call_when_tensors_change_later(self):
        # Statistics are taken together, later (at stop(), or before a call that may change a
        # tensor in place): they must still be those the tensors had at each call.
        self.write_config({"dump_path": "./dump", "level": "mix"})
        proc = self.run_python("""
            import json
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            from probe_studio.pytorch import PrecisionDebugger
            torch.manual_seed(3)
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True), nn.Linear(4, 4))
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            x = torch.randn(5, 4)
            debugger.start()
            y = torch.relu(x)           # changed below by wrapped in-place calls
            y.mul_(3)
            y += 1
            y[0] = 7.0
            z = model(x)                # ReLU(inplace=True) changes the first Linear's output
            w = F.dropout(z, 0.5, True, True)  # inplace positionally
            bn = nn.BatchNorm1d(4)
            F.batch_norm(z, bn.running_mean, bn.running_var, None, None, True)  # updates running stats
            v = torch.relu(x)
            torch.ops.aten.mul_(v, 2)   # not a wrapped call: the change is seen, not its values
            debugger.stop()
            print(json.dumps({"relu": torch.relu(x).max().item(), "mul": (torch.relu(x) * 3).max().item(),
                              "linear": model[0](x).min().item()}))
            """)
        want = json.loads(proc.stdout.strip().splitlines()[-1])
        data = support.load_dump(self.only_dump("dump"))["data"]

        def close(a, b):
            self.assertAlmostEqual(a, b, delta=1e-6 * max(1.0, abs(b)))

        close(data["Torch.relu.0.forward"]["output"][0]["Max"], want["relu"])
        close(data["Tensor.mul_.0.forward"]["input_args"][0]["Max"], want["relu"])
        close(data["Tensor.mul_.0.forward"]["output"][0]["Max"], want["mul"])
        close(data["Tensor.__iadd__.0.forward"]["input_args"][0]["Max"], want["mul"])
        close(data["Tensor.__iadd__.0.forward"]["output"][0]["Max"], want["mul"] + 1)
        # The first Linear's output before ReLU(inplace=True) made it non-negative.
        close(data["Functional.linear.0.forward"]["output"][0]["Min"], want["linear"])
        close(data["Module.0.Linear.forward.0"]["output"][0]["Min"], want["linear"])
        self.assertLess(want["linear"], 0)
        self.assertIn("Functional.dropout.0.forward", data)
        # An unwrapped in-place change: null statistics, said in dump_error_info.log.
        self.assertEqual([data["Torch.relu.1.forward"]["output"][0][k] for k in ("Max", "Min", "Mean", "Norm")],
                         [None] * 4)
        with open(os.path.join(self.only_dump("dump"), "dump_error_info.log")) as f:
            self.assertIn("changed in place before their statistics were taken", f.read())

    def test_an_optimizer_and_gradient_accumulation_after_backward_leave_the_statistics_alone(self):
        # msprobe's loop (backward, optimizer.step(), then stop()): a foreach optimizer changes the
        # parameters in place by calls the wrappers never see, and the second backward pass of
        # gradient accumulation adds to the .grad the first one recorded. Both were taken at
        # stop(): every weight's statistics and the first pass's weight gradients were null.
        for level in ("L1", "mix"):
            with self.subTest(level=level):
                dump = "./dump_" + level
                self.write_config({"dump_path": dump, "level": level})
                proc = self.run_python("""
                    import json
                    import torch
                    from probe_studio.pytorch import PrecisionDebugger
                    torch.manual_seed(3)
                    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, foreach=True)
                    debugger = PrecisionDebugger(config_path="./config.json", model=model)
                    debugger.start()
                    weight = model[0].weight.detach().clone()
                    grads = []
                    for _ in range(2):  # gradient accumulation; the gradients start as None
                        model(torch.randn(4, 8)).sum().backward()
                        grads.append(model[0].weight.grad.clone())
                    optimizer.step()
                    debugger.stop()
                    print(json.dumps({"weight": weight.abs().max().item(), "grad0": grads[0].t().abs().max().item(),
                                      "grad1": (grads[1] - grads[0]).t().abs().max().item()}))
                    """)
                want = json.loads(proc.stdout.strip().splitlines()[-1])
                data = support.load_dump(self.only_dump(dump))["data"]

                def close(a, b):
                    self.assertIsNotNone(a)
                    self.assertAlmostEqual(a, b, delta=1e-6 * max(1.0, abs(b)))

                weight = data["Functional.linear.0.forward"]["input_args"][1]
                close(max(abs(weight["Max"]), abs(weight["Min"])), want["weight"])
                # addmm's node: grad of bias, of the input (not needed: null), of the weight (transposed)
                for entry, grad in (("Functional.linear.0.backward", "grad0"), ("Functional.linear.2.backward", "grad1")):
                    item = data[entry]["output"][2]
                    close(max(abs(item["Max"]), abs(item["Min"])), want[grad])
                self.assertNotIn("changed in place", proc.stderr)


class NonTensorValues(support.TempDirTestCase):
    def test_arguments_that_are_not_tensors(self):
        self.write_config({"task": "statistics", "dump_path": "./values", "level": "L1"})
        self.run_python("""
            import torch
            import torch.nn.functional as F
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./config.json")
            x = torch.ones(2, 3)
            debugger.start()
            torch.sum(x, dim=1, keepdim=True)
            x.to(torch.float16)
            x.to(dtype=torch.float64)
            x.reshape(torch.Size([3, 2]))
            F.pad(x, (1, 1), mode="constant", value=0.5)
            x[..., 0] = 1.0
            x[0:1] = 2.0
            torch.max(x, dim=1)
            torch.cat([x, x], 0)
            debugger.stop()
            """)
        data = support.load_dump(self.only_dump("values"))["data"]
        self.assertEqual(data["Torch.sum.0.forward"]["input_kwargs"],
                         {"dim": {"type": "int", "value": 1}, "keepdim": {"type": "bool", "value": True}})
        self.assertEqual(data["Torch.sum.0.forward"]["output"][0]["shape"], [2, 1])
        self.assertEqual(data["Tensor.to.0.forward"]["input_args"][1], {})  # positional dtype, as msprobe
        self.assertEqual(data["Tensor.to.1.forward"]["input_kwargs"]["dtype"],
                         {"type": "torch.dtype", "value": "torch.float64"})
        self.assertEqual(data["Tensor.reshape.0.forward"]["input_args"][1], {"type": "torch.Size", "value": [3, 2]})
        pad = data["Functional.pad.0.forward"]
        self.assertEqual(pad["input_args"][1], [{"type": "int", "value": 1}, {"type": "int", "value": 1}])
        self.assertEqual(pad["input_kwargs"], {"mode": {"type": "str", "value": "constant"},
                                               "value": {"type": "float", "value": 0.5}})
        setitem = data["Tensor.__setitem__.0.forward"]
        self.assertEqual(setitem["input_args"][1], [{"type": "ellipsis", "value": "..."}, {"type": "int", "value": 0}])
        self.assertEqual(setitem["output"], [None])
        self.assertEqual(data["Tensor.__setitem__.1.forward"]["input_args"][1],
                         {"type": "slice", "value": [0, 1, None]})
        # torch.max(dim) returns a (values, indices) pair: a flat output list.
        self.assertEqual([o["dtype"] for o in data["Torch.max.0.forward"]["output"]], ["torch.float32", "torch.int64"])
        self.assertEqual(len(data["Torch.cat.0.forward"]["input_args"][0]), 2)



class ModuleKeywordArguments(support.TempDirTestCase):
    """A tensor given to a module by keyword (blk(x, bias=b)) is one of its inputs: recorded in
    input_kwargs (torch 1.x gives module hooks no keyword arguments: it was always {}), and an
    overflow brought in by it is not said to be born in the module."""

    SCRIPT = """
        import json, os
        import torch
        from probe_studio.pytorch import PrecisionDebugger
        torch.manual_seed(0)
        class Blk(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 4)
            def forward(self, x, bias=None, scale=1.0):
                return self.fc(x) * scale + bias
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.blk = Blk()
            def forward(self, x):
                bias = torch.log(x - float(os.environ["SHIFT"]))  # NaN for a shift above 1
                return self.blk(x, bias=bias, scale=3.0), bias
        model, x = M(), torch.rand(2, 4) + 0.5
        debugger = PrecisionDebugger(config_path="./config.json")
        debugger.start(model=model)
        with torch.no_grad():
            y, bias = model(x)
        debugger.stop()
        debugger.step()
        print(json.dumps({"max": bias.max().item(), "min": bias.min().item()}))
        """

    def test_keyword_tensors_are_inputs(self):
        self.write_config({"task": "statistics", "dump_path": "./dump", "level": "L0"})
        proc = self.run_python(self.SCRIPT, env={"SHIFT": "0"})
        want = json.loads(proc.stdout.strip().splitlines()[-1])
        entry = support.load_dump(self.only_dump("dump"))["data"]["Module.blk.Blk.forward.0"]
        self.assertEqual(sorted(entry["input_kwargs"]), ["bias", "scale"])
        self.assertEqual(entry["input_kwargs"]["scale"], {"type": "float", "value": 3.0})
        bias = entry["input_kwargs"]["bias"]
        self.assertEqual(bias["shape"], [2, 4])
        self.assertAlmostEqual(bias["Max"], want["max"], places=6)
        self.assertAlmostEqual(bias["Min"], want["min"], places=6)
        self.assertEqual(len(entry["input_args"]), 1)  # x, positional

    def test_keywords_of_any_name_and_a_module_calling_itself(self):
        # The wrapper takes no named parameter (module=b raised TypeError in the model), and a
        # module's inner call of itself, given no keywords, is not given the outer call's.
        self.write_config({"task": "statistics", "dump_path": "./dump", "level": "L0"})
        proc = self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            torch.manual_seed(0)
            class Rec(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = torch.nn.Linear(4, 4)
                def forward(self, x, module=None, depth=1):
                    y = self.fc(x) + (module if module is not None else 0)
                    return self(y, None, 0) if depth else y
            class Top(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rec = Rec()
                def forward(self, x):
                    return self.rec(x, module=torch.full((2, 4), 100.0))
            model, x = Top(), torch.rand(2, 4)
            plain = model(x)
            debugger = PrecisionDebugger(config_path="./config.json")
            debugger.start(model=model)
            probed = model(x)
            debugger.stop()
            debugger.step()
            print("same", torch.equal(plain, probed))
            """)
        self.assertIn("same True", proc.stdout)
        data = support.load_dump(self.only_dump("dump"))["data"]
        outer, inner = data["Module.rec.Rec.forward.0"], data["Module.rec.Rec.forward.1"]
        self.assertEqual(list(outer["input_kwargs"]), ["module"])
        self.assertEqual(outer["input_kwargs"]["module"]["Max"], 100.0)
        self.assertEqual(inner["input_kwargs"], {})
        self.assertEqual(len(inner["input_args"]), 3)

    def test_a_call_that_raises_leaves_the_module_stack(self):
        # Its post-hook never runs: the calls after it were parented under it in construct.json.
        self.write_config({"task": "statistics", "dump_path": "./dump", "level": "L0"})
        self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            class Fails(torch.nn.Module):
                def forward(self, x):
                    raise ValueError("no")
            class Top(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fails, self.fc = Fails(), torch.nn.Linear(4, 4)
                def forward(self, x):
                    try:
                        self.fails(x)
                    except ValueError:
                        pass
                    return self.fc(x)
            model = Top()
            debugger = PrecisionDebugger(config_path="./config.json")
            debugger.start(model=model)
            model(torch.rand(2, 4))
            debugger.stop()
            debugger.step()
            """)
        rank_dir = self.only_dump("dump")
        construct = support.load(os.path.join(rank_dir, "construct.json"))
        self.assertIsNone(construct["Module.fc.Linear.forward.0"], construct)
        self.assertIn("Module.fc.Linear.forward.0", support.load_dump(rank_dir)["data"])

        # A module dumped whole that raises: what comes after it is dumped still.
        self.write_config({"task": "statistics", "dump_path": "./whole", "level": "L1"})
        self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger, module_dump, module_dump_end
            class Fails(torch.nn.Module):
                def forward(self, x):
                    raise ValueError("no")
            fails, x = Fails(), torch.rand(2, 4)
            debugger = PrecisionDebugger(config_path="./config.json")
            debugger.start()
            module_dump(fails, "fails")
            try:
                fails(x)
            except ValueError:
                pass
            module_dump_end()
            torch.relu(x)
            debugger.stop()
            debugger.step()
            """)
        self.assertIn("Torch.relu.0.forward", support.load_dump(self.only_dump("whole"))["data"])

    def test_an_overflow_given_by_keyword_is_not_born_in_the_module(self):
        self.write_config({"task": "overflow_check", "dump_path": "./overflow", "level": "L0"})
        self.run_python(self.SCRIPT, env={"SHIFT": "10"})  # the bias is all NaN
        births = []
        for root, _, files in os.walk(os.path.join(self.tmp, "overflow")):
            if "dump.json" in files:
                births += list(support.load(os.path.join(root, "dump.json"))["data"])
        # Blk was given the NaN: it turned no finite input into it (it was its only entry).
        self.assertNotIn("Module.blk.Blk.forward.0", births)


class OverflowBirthItems(support.TempDirTestCase):
    def test_a_birth_in_an_in_place_call_says_its_inputs_requires_grad(self):
        # The inputs of a call that changes them in place are held as copies until the call has
        # run: the copies were detached, and the entry said requires_grad false of a tensor that
        # requires it.
        self.write_config({"task": "overflow_check", "dump_path": "./overflow", "level": "L1"})
        self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./config.json")
            fc = torch.nn.Linear(4, 4)
            debugger.start()
            h = fc(torch.ones(1, 4))
            h.mul_(1e39)
            debugger.stop()
            print("REQUIRES_GRAD", h.requires_grad)
            """)
        data = support.load_dump(self.only_dump("overflow"))["data"]
        self.assertEqual(list(data), ["Tensor.mul_.0.forward"])
        (held,) = data["Tensor.mul_.0.forward"]["input_args"][:1]
        self.assertTrue(held["requires_grad"])
        self.assertLess(held["Max"], 1e3)  # the input as given, before the call changed it

    def test_a_birth_of_inf_and_minus_inf_is_not_said_to_be_nan(self):
        # +inf and -inf together make the mean NaN: the reason read "output nan max=inf min=-inf"
        # of a tensor without any NaN; a real NaN is still said.
        self.write_config({"task": "overflow_check", "dump_path": "./overflow", "level": "L1",
                           "overflow_check": {"overflow_nums": -1}})
        proc = self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(config_path="./config.json")
            debugger.start()
            torch.tensor([1.0, -1.0, 2.0]) * 1e39
            torch.tensor([0.0]) / torch.tensor([0.0])
            debugger.stop()
            """)
        self.assertIn("overflow born in Tensor.__mul__.0.forward: output max=inf min=-inf\n", proc.stderr)
        self.assertIn("overflow born in Tensor.__truediv__.0.forward: output nan", proc.stderr)


if __name__ == "__main__":
    unittest.main()
