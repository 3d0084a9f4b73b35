"""The msprobe documentation's examples run under probe_studio.pytorch with only the import line
changed, and write the msprobe layout (FORMATS.md section 2)."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import re
import unittest

import support
from support import check_layout, load

TRAINING_L1_ORDER = [
    "Functional.linear.0.forward", "Functional.linear.1.forward", "Functional.relu.0.forward",
    "Tensor.sum.0.forward", "Tensor.sum.0.backward", "Functional.relu.0.backward",
    "Functional.linear.1.backward", "Functional.linear.0.backward",
]


class QuickStartExamples(support.TempDirTestCase):
    def test_quickstart_without_config_dumps_L1_in_proc_folder(self):
        # PrecisionDebugger() with no config: task statistics, level L1, ./dump_path.
        self.copy_example("quickstart_2025.py")
        proc = self.run_python("quickstart_2025.py")
        rank_dir = self.only_dump("dump_path")
        self.assertRegex(os.path.basename(rank_dir), r"^proc\d+$")
        dump = check_layout(self, rank_dir, level="L1")
        self.assertEqual(list(dump["data"]), TRAINING_L1_ORDER)
        # F.linear on 2-D input: backward output is addmm's: grad bias, grad input (none: x needs
        # no gradient), grad of the transposed weight [in, out].
        backward = dump["data"]["Functional.linear.0.backward"]
        self.assertEqual(backward["input"][0]["shape"], [10, 4])
        self.assertEqual(backward["output"][0]["shape"], [4])
        self.assertIsNone(backward["output"][1])
        self.assertEqual(backward["output"][2]["shape"], [8, 4])
        self.assertEqual(dump["data"]["Functional.linear.1.backward"]["output"][1]["shape"], [10, 4])
        forward = dump["data"]["Functional.linear.0.forward"]
        self.assertEqual([a["shape"] for a in forward["input_args"]], [[10, 8], [4, 8], [4]])
        self.assertEqual([a["requires_grad"] for a in forward["input_args"]], [False, True, True])
        self.assertEqual(forward["input_kwargs"], {})
        self.assertEqual(dump["data"]["Tensor.sum.0.forward"]["output"][0]["shape"], [])
        stack = load(os.path.join(rank_dir, "stack.json"))
        grouped = [name for names, _ in stack.values() for name in names]
        self.assertEqual(sorted(grouped), sorted(n for n in TRAINING_L1_ORDER if n.endswith("forward")))
        frames = {tuple(names): frames for names, frames in stack.values()}
        self.assertTrue(any("quickstart_2025.py" in f and "x1 = self.linear_1(x)" in f
                            for f in frames[("Functional.linear.0.forward",)]))
        self.assertNotIn("error", proc.stderr)

    def test_newest_quickstart_with_the_documented_config(self):
        self.copy_example("quickstart_new.py")
        # The documentation's config.json, dump_path pointed at the test's directory; its keys
        # without effect here (async_dump, tensor_list) are accepted with a warning.
        self.write_config({
            "task": "statistics", "dump_path": os.path.join(self.tmp, "data_dump"), "rank": [], "step": [],
            "level": "L1", "async_dump": False, "extra_info": True,
            "statistics": {"scope": [], "list": [], "tensor_list": [], "data_mode": ["all"],
                           "summary_mode": "statistics"}})
        proc = self.run_python("quickstart_new.py")
        self.assertIn("async_dump", proc.stderr)
        dump = check_layout(self, self.only_dump("data_dump"), level="L1")
        self.assertEqual(list(dump["data"]), [
            "Functional.linear.0.forward", "Functional.relu.0.forward", "Tensor.sum.0.forward",
            "Tensor.sum.0.backward", "Functional.relu.0.backward", "Functional.linear.0.backward"])

    def test_quickstart_at_mix_level_names_modules_like_msprobe(self):
        self.copy_example("quickstart_2025.py")
        with open(os.path.join(self.tmp, "quickstart_2025.py")) as f:
            source = f.read()
        source = source.replace("PrecisionDebugger()", "PrecisionDebugger('./config.json')")
        with open(os.path.join(self.tmp, "quickstart_mix.py"), "w") as f:
            f.write(source)
        self.write_config({"task": "statistics", "dump_path": "./mix_dump", "level": "mix"})
        self.run_python("quickstart_mix.py")
        rank_dir = self.only_dump("mix_dump")
        dump = check_layout(self, rank_dir, level="mix")
        names = list(dump["data"])
        # The root model is not an entry; an API's forward entry precedes its module's.
        self.assertFalse(any("ModuleOP" in n for n in names))
        self.assertEqual(names[:6], [
            "Functional.linear.0.forward", "Module.linear_1.Linear.forward.0",
            "Functional.linear.1.forward", "Module.linear_2.Linear.forward.0",
            "Functional.relu.0.forward", "Tensor.sum.0.forward"])
        for name in ("Module.linear_1.Linear.backward.0", "Module.linear_2.Linear.backward.0",
                     "Module.linear_1.Linear.parameters_grad.0", "Module.linear_2.Linear.parameters_grad.0"):
            self.assertIn(name, names)
        # A module whose input needs no gradient has an empty backward "output".
        self.assertEqual(dump["data"]["Module.linear_1.Linear.backward.0"]["output"], [])
        self.assertEqual(dump["data"]["Module.linear_2.Linear.backward.0"]["output"][0]["shape"], [10, 4])
        grads = dump["data"]["Module.linear_1.Linear.parameters_grad.0"]
        self.assertEqual(sorted(grads), ["bias", "weight"])
        self.assertEqual(grads["weight"][0]["shape"], [4, 8])
        params = dump["data"]["Module.linear_1.Linear.forward.0"]["parameters"]
        self.assertEqual(list(params), ["weight", "bias"])
        construct = load(os.path.join(rank_dir, "construct.json"))
        self.assertIsNone(construct["Module.linear_1.Linear.forward.0"])
        self.assertEqual(construct["Functional.linear.0.forward"], "Module.linear_1.Linear.forward.0")
        self.assertEqual(construct["Functional.linear.1.forward"], "Module.linear_2.Linear.forward.0")
        self.assertIsNone(construct["Functional.relu.0.forward"])
        self.assertEqual(construct["Functional.linear.0.backward"], "Module.linear_1.Linear.backward.0")
        self.assertNotIn("Module.linear_1.Linear.parameters_grad.0", construct)


class LoopAndCrossFileExamples(support.TempDirTestCase):
    def test_training_loop_writes_one_folder_per_step(self):
        self.copy_example("loop_train.py")
        self.write_config({"task": "statistics", "level": "L1"})
        proc = self.run_python("loop_train.py", ["4"])
        self.assertIn("TRAINING DONE", proc.stdout)
        names = None
        for step in range(4):
            dump = check_layout(self, self.only_dump("dump_path", step), level="L1")
            if names is None:
                names = list(dump["data"])
            self.assertEqual(list(dump["data"]), names, "counters restart at every step")
        self.assertIn("Functional.cross_entropy.0.forward", names)
        self.assertIn("Functional.linear.1.backward", names)
        # The optimizer's in-place updates run between start() and stop(): Tensor.add_ entries.
        self.assertIn("Tensor.add_.0.forward", names)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "dump_path", "step4")))

    def test_class_level_calls_across_files(self):
        self.copy_example("cross_file_train.py", "cross_file_module.py")
        self.write_config({"task": "statistics", "dump_path": "./cross_dump", "level": "L1"})
        self.run_python("cross_file_train.py")
        dump = check_layout(self, self.only_dump("cross_dump"), level="L1")
        # Only linear_1 ran between PrecisionDebugger.start() and .stop(); its backward runs after
        # stop() and is still part of the step (written at exit: the script never calls stop again).
        self.assertEqual(list(dump["data"]), ["Functional.linear.0.forward", "Functional.linear.0.backward"])

    def test_class_level_call_without_instance_says_what_to_do(self):
        proc = self.run_python("""
            from probe_studio.pytorch import PrecisionDebugger
            try:
                PrecisionDebugger.start()
            except RuntimeError as exc:
                print("ERROR:", exc)
            """)
        self.assertIn("ERROR: PrecisionDebugger instance is not created", proc.stdout)


class GenerateExample(support.TempDirTestCase):
    def test_token_range_dumps_forward_calls_one_to_three(self):
        self.copy_example("generate.py")
        self.write_config({"task": "statistics", "level": "mix"})
        proc = self.run_python("generate.py")
        self.assertIn("GENERATED", proc.stdout)
        rank_dir = self.only_dump("dump_path")
        dump = check_layout(self, rank_dir, level="mix")
        names = list(dump["data"])
        embeds = [n for n in names if n.startswith("Module.embed.Embedding.forward.")]
        self.assertEqual(embeds, ["Module.embed.Embedding.forward.0", "Module.embed.Embedding.forward.1",
                                  "Module.embed.Embedding.forward.2"])
        self.assertEqual([n for n in names if n.startswith("Functional.embedding.")],
                         ["Functional.embedding.0.forward", "Functional.embedding.1.forward",
                          "Functional.embedding.2.forward"])
        # Inference under no_grad: no backward entries.
        self.assertFalse([n for n in names if "backward" in n or "parameters_grad" in n])
        # Token 1 has a 5-token sequence (4 prompt tokens + 1 generated), token 3 has 7.
        self.assertEqual(dump["data"]["Module.embed.Embedding.forward.0"]["output"][0]["shape"], [1, 5, 16])
        self.assertEqual(dump["data"]["Module.embed.Embedding.forward.2"]["output"][0]["shape"], [1, 7, 16])
        construct = load(os.path.join(rank_dir, "construct.json"))
        self.assertEqual(construct["Module.blocks.0.attn.MultiheadAttention.forward.0"],
                         "Module.blocks.0.Block.forward.0")
        self.assertEqual(construct["Module.blocks.0.mlp.0.Linear.forward.0"], "Module.blocks.0.mlp.Sequential.forward.0")
        self.assertIsNone(construct["Module.blocks.0.Block.forward.0"])
        attn = [n for n in names if re.match(r"^Functional\.multi_head_attention_forward\.\d+\.forward$", n)]
        self.assertEqual(len(attn), 6)  # 2 blocks x 3 tokens
        # The APIs multi_head_attention_forward calls are nested: neither entries nor counted.
        inside_attention = {n.split(".")[0] + "." + n.split(".")[1] for n in names
                            if construct.get(n) == "Module.blocks.0.attn.MultiheadAttention.forward.0"}
        self.assertEqual(inside_attention, {"Functional.multi_head_attention_forward", "Tensor.transpose"})

class ModuleDumpAndSeedAllExamples(support.TempDirTestCase):
    def test_module_dump_makes_the_module_one_entry(self):
        self.copy_example("module_dump.py")
        self.write_config({"task": "statistics", "dump_path": "./md", "level": "L1"})
        self.run_python("module_dump.py")
        rank_dir = self.only_dump("md")
        dump = check_layout(self, rank_dir, level="L1", module_dump=True)
        # Nothing inside the module (its linears, its relu) is an entry.
        self.assertEqual(list(dump["data"]), ["Module.MyModuleOP.ModuleOP.forward.0", "Tensor.sum.0.forward",
                                              "Tensor.sum.0.backward", "Module.MyModuleOP.ModuleOP.backward.0"])
        forward = dump["data"]["Module.MyModuleOP.ModuleOP.forward.0"]
        self.assertEqual(forward["input_args"][0]["shape"], [10, 8])
        self.assertEqual(forward["output"][0]["shape"], [10, 2])
        self.assertEqual(dump["data"]["Module.MyModuleOP.ModuleOP.backward.0"]["output"], [])

    def test_seed_all_example(self):
        self.copy_example("seed_all_example.py")
        first = self.run_python("seed_all_example.py").stdout
        second = self.run_python("seed_all_example.py").stdout
        reference = self.run_python("""
            import random
            import numpy, torch
            torch.manual_seed(1234)
            print(torch.mean(torch.randn(2,2)))
            print(torch.mean(torch.randn(2,2)))
            """).stdout
        self.assertEqual(first, second)
        self.assertEqual(first, reference)
        proc = self.run_python("""
            import os, random
            import numpy, torch
            from probe_studio.pytorch import seed_all
            seed_all(seed=5, mode=True)
            a = (random.random(), numpy.random.rand(), torch.rand(1).item())
            print("DETERMINISTIC", torch.are_deterministic_algorithms_enabled(), os.environ["PYTHONHASHSEED"])
            random.seed(5); numpy.random.seed(5); torch.manual_seed(5)
            print("SAME", a == (random.random(), numpy.random.rand(), torch.rand(1).item()))
            seed_all(seed=5, mode=False, rm_dropout=True)
            x = torch.ones(1000)
            print("DROPOUT OFF", torch.equal(torch.nn.functional.dropout(x, 0.5), x),
                  torch.are_deterministic_algorithms_enabled())
            for kwargs in ({"seed": -1}, {"seed": "1"}, {"seed": 2 ** 32}, {"mode": 1}, {"rm_dropout": None}):
                try:
                    seed_all(**kwargs)
                except (TypeError, ValueError) as exc:
                    print("REFUSED", exc)
            """)
        self.assertIn("DETERMINISTIC True 5", proc.stdout)
        self.assertIn("SAME True", proc.stdout)
        self.assertIn("DROPOUT OFF True False", proc.stdout)
        self.assertIn("REFUSED seed_all: seed must be between 0 and 4294967295, not -1", proc.stdout)
        self.assertIn("REFUSED seed_all: seed must be an integer 0..4294967295, not '1'", proc.stdout)
        self.assertIn("REFUSED seed_all: mode must be True or False", proc.stdout)
        self.assertIn("REFUSED seed_all: rm_dropout must be True or False", proc.stdout)
        self.assertEqual(proc.stdout.count("REFUSED"), 5)


if __name__ == "__main__":
    unittest.main()
