"""Every key of the code-level config (FORMATS.md section 3) shown by its effect on a real dump,
and invalid configs refused at construction with the key and the accepted values."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import subprocess
import unittest
import zlib

from torch import load as torch_load

import support
from support import check_layout, load, load_dump

# A small training loop: `python train.py CONFIG [STEPS] [extra PrecisionDebugger kwargs as JSON]`.
TRAIN = """
import json, sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from probe_studio.pytorch import PrecisionDebugger

class ModuleOP(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_1 = nn.Linear(8, 4)
        self.linear_2 = nn.Linear(4, 2)
    def forward(self, x):
        return F.relu(self.linear_2(self.linear_1(x)))

torch.manual_seed(0)
model = ModuleOP()
kwargs = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
debugger = PrecisionDebugger(config_path=sys.argv[1], model=model, **kwargs)
for step in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
    debugger.start()
    loss = model(torch.randn(10, 8)).sum()
    loss.backward()
    debugger.stop()
    debugger.step()
print("DONE", "unwrapped" if torch.nn.functional.linear is torch._C._nn.linear else "wrapped")
"""

FORWARD_L1 = ["Functional.linear.0.forward", "Functional.linear.1.forward", "Functional.relu.0.forward",
              "Tensor.sum.0.forward"]
BACKWARD_L1 = ["Tensor.sum.0.backward", "Functional.relu.0.backward", "Functional.linear.1.backward",
               "Functional.linear.0.backward"]


class ConfigKeys(support.TempDirTestCase):
    def train(self, config, steps=1, kwargs=None, expect_ok=True):
        with open(os.path.join(self.tmp, "train.py"), "w") as f:
            f.write(TRAIN)
        path = self.write_config(config)
        args = [path, str(steps)] + ([json.dumps(kwargs)] if kwargs else [])
        return self.run_python("train.py", args, expect_ok=expect_ok)

    def names(self, dump_path="dump", step=0):
        return list(load_dump(self.only_dump(dump_path, step))["data"])

    # --- task ---------------------------------------------------------------------------------
    def test_task(self):
        self.train({"task": "statistics", "dump_path": "./stats"})
        rank_dir = self.only_dump("stats")
        self.assertFalse(os.path.exists(os.path.join(rank_dir, "dump_tensor_data")))
        self.assertFalse(any("data_name" in i for i in support.tensor_items(load_dump(rank_dir)["data"])))
        self.train({"task": "tensor", "dump_path": "./tensors"})
        rank_dir = self.only_dump("tensors")
        dump = check_layout(self, rank_dir, task="tensor")
        self.assertTrue(os.listdir(os.path.join(rank_dir, "dump_tensor_data")))
        # A constructor argument wins over the file.
        self.train({"task": "tensor", "dump_path": "./override"}, kwargs={"task": "statistics"})
        check_layout(self, self.only_dump("override"), task="statistics")
        self.assertTrue(dump["data"])

    # --- level --------------------------------------------------------------------------------
    def test_level(self):
        self.train({"level": "L1", "dump_path": "./l1"})
        self.assertEqual(self.names("l1"), FORWARD_L1 + BACKWARD_L1)
        self.train({"level": "L0", "dump_path": "./l0"})
        rank_dir = self.only_dump("l0")
        check_layout(self, rank_dir, level="L0")
        names = list(load_dump(rank_dir)["data"])
        self.assertEqual(names[:2], ["Module.linear_1.Linear.forward.0", "Module.linear_2.Linear.forward.0"])
        self.assertTrue(all(n.startswith("Module.") for n in names), names)
        self.assertEqual(load(os.path.join(rank_dir, "construct.json")), {
            "Module.linear_1.Linear.forward.0": None, "Module.linear_2.Linear.forward.0": None,
            "Module.linear_2.Linear.backward.0": None, "Module.linear_1.Linear.backward.0": None})
        self.train({"level": "mix", "dump_path": "./mix"})
        names = self.names("mix")
        self.assertTrue(set(FORWARD_L1 + BACKWARD_L1) < set(names))
        self.assertIn("Module.linear_2.Linear.parameters_grad.0", names)
        # The constructor's level wins; a level that dumps modules needs the model.
        self.train({"level": "L1", "dump_path": "./l0arg"}, kwargs={"level": "L0"})
        self.assertTrue(all(n.startswith("Module.") for n in self.names("l0arg")))
        proc = self.run_python("""
            from probe_studio.pytorch import PrecisionDebugger
            debugger = PrecisionDebugger(level="mix", dump_path="./nomodel")
            try:
                debugger.start()
            except ValueError as exc:
                print("ERROR:", exc)
            """)
        self.assertIn("ERROR: PrecisionDebugger: level mix dumps modules", proc.stdout)

    # --- step ---------------------------------------------------------------------------------
    def test_step_list_and_ranges(self):
        proc = self.train({"dump_path": "./steps", "step": [1, "3-4"]}, steps=7)
        self.assertEqual(sorted(os.listdir(os.path.join(self.tmp, "steps"))), ["step1", "step3", "step4"])
        for step in (1, 3, 4):
            self.assertEqual(self.names("steps", step), FORWARD_L1 + BACKWARD_L1)
        # After the last listed step the process goes on and torch is unwrapped again.
        self.assertIn("DONE unwrapped", proc.stdout)
        self.assertIn("probe_studio ends successfully.", proc.stderr)
        # The constructor's step replaces the file's.
        self.train({"dump_path": "./steparg", "step": [1]}, steps=3, kwargs={"step": [0, 2]})
        self.assertEqual(sorted(os.listdir(os.path.join(self.tmp, "steparg"))), ["step0", "step2"])

    # --- rank ---------------------------------------------------------------------------------
    def test_rank_with_torch_distributed(self):
        script = TRAIN.replace("torch.manual_seed(0)", """torch.manual_seed(0)
import torch.distributed as dist
dist.init_process_group("gloo", init_method="file://" + sys.argv[1] + ".store", rank=0, world_size=1)""")
        with open(os.path.join(self.tmp, "dist_train.py"), "w") as f:
            f.write(script)
        for rank_list, dump_path in (([], "all"), ([0], "zero"), ([1], "one")):
            path = self.write_config({"dump_path": "./" + dump_path, "rank": rank_list}, dump_path + ".json")
            self.run_python("dist_train.py", [path, "1"])
        self.assertEqual(os.listdir(os.path.join(self.tmp, "all", "step0")), ["rank0"])
        self.assertEqual(os.listdir(os.path.join(self.tmp, "zero", "step0")), ["rank0"])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "one")))
        self.assertEqual(list(load_dump(os.path.join(self.tmp, "all", "step0", "rank0"))["data"]),
                         FORWARD_L1 + BACKWARD_L1)
        # Collectives are wrapped too.
        self.run_python("""
            import torch, torch.distributed as dist
            from probe_studio.pytorch import PrecisionDebugger
            dist.init_process_group("gloo", init_method="file://%s", rank=0, world_size=1)
            debugger = PrecisionDebugger(dump_path="./collective")
            t = torch.ones(3)
            debugger.start()
            dist.all_reduce(t)
            debugger.stop()
            """ % os.path.join(self.tmp, "collective.store"))
        data = load_dump(os.path.join(self.tmp, "collective", "step0", "rank0"))["data"]
        self.assertEqual(list(data), ["Distributed.all_reduce.0.forward"])
        self.assertEqual(data["Distributed.all_reduce.0.forward"]["input_args"][0]["shape"], [3])

    def test_rank_without_torch_distributed_is_rank_0(self):
        self.train({"dump_path": "./r0", "rank": ["0-1"]})
        self.assertRegex(os.path.basename(self.only_dump("r0")), r"^proc\d+$")
        proc = self.train({"dump_path": "./r1", "rank": [1]})
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "r1")))
        self.assertIn("rank 0 (no torch.distributed) is not in the config's rank list [1]", proc.stderr)

    # --- scope --------------------------------------------------------------------------------
    def test_scope(self):
        self.train({"dump_path": "./api", "statistics": {
            "scope": ["Functional.linear.1.forward", "Functional.relu.0.forward"]}})
        self.assertEqual(self.names("api"), ["Functional.linear.1.forward", "Functional.relu.0.forward"])
        self.train({"dump_path": "./bwd", "statistics": {
            "scope": ["Functional.relu.0.backward", "Functional.linear.1.backward"]}})
        self.assertEqual(self.names("bwd"), ["Functional.relu.0.backward", "Functional.linear.1.backward"])
        self.train({"dump_path": "./module", "level": "L0", "statistics": {
            "scope": ["Module.linear_2.Linear.forward.0", "Module.linear_2.Linear.forward.0"]}})
        # A module in scope also has its parameters' gradients dumped (as msprobe does).
        self.assertEqual(self.names("module"), ["Module.linear_2.Linear.forward.0",
                                                "Module.linear_2.Linear.parameters_grad.0"])
        # mix: a module range takes in the APIs called inside it.
        self.train({"dump_path": "./mixed", "level": "mix", "statistics": {
            "scope": ["Module.linear_2.Linear.forward.0", "Functional.relu.0.forward"]}})
        self.assertEqual(self.names("mixed"), ["Functional.linear.1.forward", "Module.linear_2.Linear.forward.0",
                                               "Functional.relu.0.forward", "Module.linear_2.Linear.parameters_grad.0"])
        # The tensor section is the one read for task tensor.
        self.train({"dump_path": "./tscope", "task": "tensor", "tensor": {
            "scope": ["Functional.relu.0.forward", "Tensor.sum.0.forward"]}})
        self.assertEqual(self.names("tscope"), ["Functional.relu.0.forward", "Tensor.sum.0.forward"])
        # ... and its list and data_mode; the statistics section is then ignored.
        self.train({"dump_path": "./tlist", "task": "tensor", "statistics": {"list": ["linear"]},
                    "tensor": {"list": ["relu"], "data_mode": ["forward"]}})
        rank_dir = self.only_dump("tlist")
        self.assertEqual(list(load_dump(rank_dir)["data"]), ["Functional.relu.0.forward"])
        self.assertEqual(sorted(os.listdir(os.path.join(rank_dir, "dump_tensor_data"))),
                         ["Functional.relu.0.forward.input.0.pt", "Functional.relu.0.forward.output.0.pt"])

    # --- list ---------------------------------------------------------------------------------
    def test_list(self):
        self.train({"dump_path": "./relu", "statistics": {"list": ["relu"]}})
        self.assertEqual(self.names("relu"), ["Functional.relu.0.forward", "Functional.relu.0.backward"])
        self.train({"dump_path": "./full", "statistics": {"list": ["Functional.linear.1.forward", "Tensor.sum"]}})
        self.assertEqual(self.names("full"), ["Functional.linear.1.forward", "Tensor.sum.0.forward",
                                              "Tensor.sum.0.backward"])
        # mix: a fragment of a module's name takes in everything that module runs.
        self.train({"dump_path": "./module", "level": "mix", "statistics": {"list": ["linear_1"]}})
        names = self.names("module")
        self.assertEqual(names[:2], ["Functional.linear.0.forward", "Module.linear_1.Linear.forward.0"])
        self.assertIn("Module.linear_1.Linear.backward.0", names)
        self.assertIn("Module.linear_1.Linear.parameters_grad.0", names)
        self.assertFalse([n for n in names if "linear_2" in n or "relu" in n or "sum" in n], names)

    # --- data_mode ----------------------------------------------------------------------------
    def test_data_mode(self):
        cases = {
            "forward": (["forward"], {"input_args", "input_kwargs", "output"}, None),
            "backward": (["backward"], None, {"input", "output"}),
            "input": (["input"], {"input_args", "input_kwargs"}, {"input"}),
            "output": (["output"], {"output"}, {"output"}),
            "fwdin": (["forward", "input"], {"input_args", "input_kwargs"}, None),
            "all": (["all"], {"input_args", "input_kwargs", "output"}, {"input", "output"}),
        }
        for dump_path, (modes, forward_keys, backward_keys) in cases.items():
            self.train({"dump_path": "./" + dump_path, "level": "mix", "statistics": {"data_mode": modes}})
            data = load_dump(self.only_dump(dump_path))["data"]
            for name in FORWARD_L1:
                if forward_keys is None:
                    self.assertNotIn(name, data, (modes, name))
                else:
                    self.assertEqual(set(data[name]), forward_keys, (modes, name))
            for name in BACKWARD_L1:
                if backward_keys is None:
                    self.assertNotIn(name, data, (modes, name))
                else:
                    self.assertEqual(set(data[name]), backward_keys, (modes, name))
            module = data.get("Module.linear_1.Linear.forward.0")
            if forward_keys is None:
                self.assertIsNone(module)
            else:
                self.assertEqual(set(module), forward_keys | {"parameters"}, modes)
            grads = [n for n in data if "parameters_grad" in n]
            self.assertEqual(bool(grads), backward_keys is not None, modes)

    # --- summary_mode -------------------------------------------------------------------------
    def test_summary_mode(self):
        self.train({"dump_path": "./md5", "statistics": {"summary_mode": "md5"}})
        items = list(support.tensor_items(load_dump(self.only_dump("md5"))["data"]))
        self.assertTrue(items and all(len(i["md5"]) == 8 and i["Max"] is not None for i in items))
        self.train({"dump_path": "./plain", "statistics": {"summary_mode": "statistics"}})
        items = list(support.tensor_items(load_dump(self.only_dump("plain"))["data"]))
        self.assertTrue(items and not any("md5" in i for i in items))

    def test_summary_mode_in_the_tensor_block(self):
        # msprobe reads summary_mode in every task block: task tensor with md5 writes both the .pt
        # file and the CRC-32 of its bytes (after data_name, as msprobe orders them).
        proc = self.train({"task": "tensor", "dump_path": "./tmd5", "tensor": {"summary_mode": "md5"}})
        self.assertNotIn("summary_mode", proc.stderr)
        rank_dir = self.only_dump("tmd5")
        dump = check_layout(self, rank_dir, task="tensor", md5=True)
        items = list(support.tensor_items(dump["data"]))
        self.assertTrue(items)
        for item in items:
            with open(os.path.join(rank_dir, "dump_tensor_data", item["data_name"]), "rb") as f:
                tensor = torch_load(f)
            self.assertEqual(item["md5"], "%08x" % zlib.crc32(tensor.contiguous().numpy().tobytes()))

    # --- tensor_list --------------------------------------------------------------------------
    def test_tensor_list_saves_the_tensors_of_the_entries_it_names(self):
        self.train({"dump_path": "./tl", "statistics": {"tensor_list": ["relu", "Functional.linear.1"]}})
        rank_dir = self.only_dump("tl")
        dump = load_dump(rank_dir)
        self.assertEqual(dump["dump_data_dir"], os.path.join(rank_dir, "dump_tensor_data"))
        saved = set()
        for name, entry in dump["data"].items():
            items = list(support.tensor_items(entry))
            self.assertTrue(items, name)
            listed = "relu" in name or "Functional.linear.1" in name
            for item in items:
                self.assertEqual("data_name" in item, listed, name)
                self.assertIsNotNone(item["Max"], name)  # statistics as always
                if listed:
                    saved.add(item["data_name"])
        self.assertEqual(saved, set(os.listdir(os.path.join(rank_dir, "dump_tensor_data"))))
        self.assertIn("Functional.relu.0.backward.input.0.pt", saved)
        self.assertIn("Functional.linear.1.forward.output.0.pt", saved)

    # --- every key msprobe reads --------------------------------------------------------------
    def test_every_key_msprobe_reads_is_accepted_and_said_plainly(self):
        # The format library's table of msprobe's keys (read here through the adapter): a config
        # holding any of them is accepted; the keys without effect say so, naming themselves; a
        # block of a task not run here is said to be ignored as a whole.
        proc = self.run_python("""
            import json, os, sys, tempfile
            import torch
            from probe_studio.pytorch import _config, _ops
            _ops.load(torch)
            values = {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "md5", "tensor_list": ["relu"],
                      "white_list": [], "black_list": [], "step": [0], "rank": [0], "level": "mix", "task": "tensor",
                      "dump_path": "./d", "seed": 3, "is_deterministic": False, "extra_info": True,
                      "statistics": {}, "tensor": {}, "overflow_check": {}, "stop_after_overflow": False}
            rows = _ops.msprobe_tables()["config_keys"]
            print("ROWS", len(rows))
            for row in rows:
                value = values.get(row["key"], {} if row["use"] == "other_task" and not row["block"] else 1)
                config = {row["key"]: value} if not row["block"] else {row["block"]: {row["key"]: value}}
                said_at = row["block"] if row["use"] == "other_task" and row["block"] else (
                    row["block"] + "." + row["key"] if row["block"] else row["key"])
                path = os.path.join(tempfile.mkdtemp(), "c.json")
                with open(path, "w") as f:
                    json.dump(config, f)
                sys.stderr.write("CONFIG %s\\n" % said_at)
                sys.stderr.flush()
                try:
                    _config.build_config(path)
                    print("ACCEPTED", row["use"], said_at)
                except _config.ProbeConfigError as exc:
                    print("REFUSED", json.dumps(config), str(exc).replace("\\n", " | "))
            """)
        lines = proc.stdout.splitlines()
        rows = int(lines[0].split()[1])
        self.assertGreater(rows, 40)
        self.assertEqual(len(lines), rows + 1, proc.stdout)
        self.assertFalse([l for l in lines if l.startswith("REFUSED")])
        # What each config made the validator say, from the stderr between its CONFIG markers.
        said = {}
        for part in proc.stderr.split("CONFIG ")[1:]:
            key, _, text = part.partition("\n")
            said[key] = [l for l in text.splitlines() if ": warning: " in l]
        for line in lines[1:]:
            _, use, key = line.split(" ", 2)
            warnings = said[key]
            if use == "honoured":
                self.assertEqual(warnings, [], key)
            else:
                self.assertEqual(len(warnings), 1, (key, warnings))
                self.assertIn('key "%s": ' % key, warnings[0])
                self.assertIn("has no effect" if use == "no_effect" else "does not run", warnings[0])

    def test_unknown_keys_are_ignored_with_the_closest_known_key(self):
        proc = self.train({"dump_path": "./unknown", "levle": "L0",
                           "statistics": {"summary_mod": "md5", "scop": []}, "tensor": {"tensor_list": ["x"]}})
        # The misspelt keys do nothing (level stays L1, no md5) and each is named with its
        # closest known key.
        self.assertEqual(self.names("unknown"), FORWARD_L1 + BACKWARD_L1)
        self.assertFalse(any("md5" in i for i in support.tensor_items(load_dump(self.only_dump("unknown"))["data"])))
        self.assertIn('key "levle": unknown key, ignored; the closest known key is "level"', proc.stderr)
        self.assertIn('key "statistics.summary_mod": unknown key, ignored; the closest known key is "summary_mode"',
                      proc.stderr)
        self.assertIn('key "statistics.scop": unknown key, ignored; the closest known key is "scope"', proc.stderr)
        self.assertIn('key "tensor.tensor_list": unknown key here, ignored: msprobe reads "tensor_list" at the '
                      '"statistics" block', proc.stderr)

    # --- dump_path ----------------------------------------------------------------------------
    def test_dump_path(self):
        os.makedirs(os.path.join(self.tmp, "sub"))
        with open(os.path.join(self.tmp, "train.py"), "w") as f:
            f.write(TRAIN)
        config = self.write_config({"task": "tensor", "dump_path": "rel/out"})
        # Relative to the working directory of the program, written as an absolute path.
        subprocess.run([support.PYTHON, os.path.join(self.tmp, "train.py"), config], cwd=os.path.join(self.tmp, "sub"),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rank_dir = self.only_dump(os.path.join("sub", "rel", "out"))
        self.assertEqual(load_dump(rank_dir)["dump_data_dir"], os.path.join(rank_dir, "dump_tensor_data"))
        self.train({"dump_path": "./from_file"}, kwargs={"dump_path": "./from_argument"})
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "from_file")))
        self.assertTrue(self.names("from_argument"))

    # --- seed, is_deterministic ---------------------------------------------------------------
    def test_seed_and_is_deterministic(self):
        script = """
            import json, random, sys
            import numpy, torch
            from probe_studio.pytorch import PrecisionDebugger
            torch.manual_seed(999); random.seed(999); numpy.random.seed(999)
            PrecisionDebugger(config_path=sys.argv[1])
            print(json.dumps([torch.rand(3).tolist(), random.random(), numpy.random.rand(),
                              torch.are_deterministic_algorithms_enabled()]))
            """
        seeded = self.write_config({"dump_path": "./d", "seed": 42, "is_deterministic": True}, "seeded.json")
        unseeded = self.write_config({"dump_path": "./d"}, "unseeded.json")
        got = json.loads(self.run_python(script, [seeded]).stdout)
        plain = json.loads(self.run_python(script, [unseeded]).stdout)
        reference = json.loads(self.run_python("""
            import json, random
            import numpy, torch
            torch.manual_seed(42); random.seed(42); numpy.random.seed(42)
            print(json.dumps([torch.rand(3).tolist(), random.random(), numpy.random.rand()]))
            """).stdout)
        self.assertEqual(got[:3], reference)
        self.assertTrue(got[3])
        self.assertNotEqual(plain[:3], reference)  # without the keys the program's own seeds stay
        self.assertFalse(plain[3])

    # --- extra_info ---------------------------------------------------------------------------
    def test_extra_info(self):
        self.train({"dump_path": "./noextra", "extra_info": False})
        self.assertEqual(os.listdir(self.only_dump("noextra")), ["dump.json"])


class InvalidConfigs(support.TempDirTestCase):
    CASES = [
        ({"task": "free_benchmark"}, 'key "task"', '"statistics", "tensor", "overflow_check"'),
        ({"level": "L2"}, 'key "level"', '"L0"'),
        ({"step": [-1]}, 'key "step"', '"a-b" ranges'),
        ({"step": ["5-3"]}, 'key "step"', '"a-b" ranges'),
        ({"rank": "0"}, 'key "rank"', "a list of whole numbers"),
        ({"dump_path": 3}, 'key "dump_path"', "a directory path"),
        ({"seed": -1}, 'key "seed"', "0..4294967295"),
        ({"is_deterministic": "yes"}, 'key "is_deterministic"', "true or false"),
        ({"statistics": {"data_mode": ["all", "input"]}}, 'key "statistics.data_mode"', '"forward", "backward"'),
        ({"statistics": {"data_mode": ["inputs"]}}, 'key "statistics.data_mode"', '"forward", "backward"'),
        ({"statistics": {"summary_mode": "xor"}}, 'key "statistics.summary_mode"', '"statistics", "md5"'),
        ({"statistics": {"scope": ["Functional.linear.0.forward"]}}, 'key "statistics.scope"', "two full entry names"),
        ({"level": "L0", "statistics": {"scope": ["Functional.linear.0.forward", "Functional.relu.0.forward"]}},
         'key "statistics.scope"', "two full entry names"),
        ({"tensor": {"list": "relu"}}, 'key "tensor.list"', "entry names or name fragments"),
        ({"statistics": {"tensor_list": "relu"}}, 'key "statistics.tensor_list"', "entry names or name fragments"),
        ({"tensor": {"summary_mode": "xor"}}, 'key "tensor.summary_mode"', '"statistics", "md5"'),
    ]

    def test_invalid_files_are_refused_with_key_and_accepted_values(self):
        paths = [self.write_config(config, "bad%d.json" % i) for i, (config, _, _) in enumerate(self.CASES)]
        with open(os.path.join(self.tmp, "syntax.json"), "w") as f:
            f.write('{"task": "statistics",\n "level": L1}')
        paths += [os.path.join(self.tmp, "syntax.json"), os.path.join(self.tmp, "missing.json")]
        proc = self.run_python("""
            import sys
            from probe_studio.pytorch import PrecisionDebugger, ProbeConfigError
            for path in sys.argv[1:]:
                try:
                    PrecisionDebugger(config_path=path)
                    print("ACCEPTED", path)
                except ProbeConfigError as exc:
                    print("REFUSED", str(exc).replace("\\n", " | "))
            """, paths)
        lines = proc.stdout.strip().splitlines()
        self.assertEqual(len(lines), len(paths), proc.stdout)
        for line, (config, key, accepted) in zip(lines, self.CASES):
            self.assertTrue(line.startswith("REFUSED"), (config, line))
            self.assertIn(key, line, config)
            self.assertIn("accepted: ", line, config)
            self.assertIn(accepted, line, config)
        self.assertIn("syntax.json:2:", lines[-2])
        self.assertIn("not valid JSON", lines[-2])
        self.assertIn("missing.json: cannot be read", lines[-1])

    def test_what_is_not_a_config_file_is_refused_without_being_read(self):
        # Opened as a plain file, a FIFO blocked the constructor for good, a link to /dev/zero
        # read until memory ran out, a sparse 1 GiB file was read whole before its size was
        # refused, and bytes that are not UTF-8 raised UnicodeDecodeError (a user walk).
        tmp = self.tmp
        os.mkfifo(os.path.join(tmp, "fifo.json"))
        os.symlink("/dev/zero", os.path.join(tmp, "zero.json"))
        os.mkdir(os.path.join(tmp, "folder.json"))
        with open(os.path.join(tmp, "big.json"), "w") as f:
            f.write('{"task": "statistics"}')
            f.truncate(1 << 30)
        with open(os.path.join(tmp, "latin1.json"), "wb") as f:
            f.write(b'{"task": "statistics", "dump_path": "./d\xff", "level": "L1"}')
        proc = self.run_python("""
            import resource, sys
            import torch
            from probe_studio.pytorch import PrecisionDebugger, ProbeConfigError
            for path in sys.argv[1:]:
                before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                try:
                    PrecisionDebugger(config_path=path)
                    print("ACCEPTED", path)
                except ProbeConfigError as exc:
                    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
                    print("REFUSED", grew // 1024, str(exc).replace("\\n", " | "))
            """, ["fifo.json", "zero.json", "folder.json", "big.json", "latin1.json"], timeout=120)
        lines = proc.stdout.strip().splitlines()
        self.assertEqual(len(lines), 5, proc.stdout + proc.stderr)
        expected = ["named pipe (FIFO), not a regular file", "character device", "directory",
                    "more than the limit of", "latin1.json:1:"]
        for line, name, what in zip(lines, ["fifo", "zero", "folder", "big", "latin1"], expected):
            self.assertTrue(line.startswith("REFUSED"), line)
            self.assertIn(name + ".json", line)
            self.assertIn(what, line)
            self.assertLess(int(line.split()[1]), 64, line)  # MiB of peak memory the refusal took

    def test_invalid_constructor_arguments_are_refused(self):
        proc = self.run_python("""
            import torch
            from probe_studio.pytorch import PrecisionDebugger, ProbeConfigError
            for kwargs in ({"task": "bogus"}, {"level": "L9"}, {"step": "1"}, {"step": [1.5]}, {"dump_path": 3},
                           {"model": 3}, {"level": "L0", "config_path": None, "dump_path": "./x"}):
                try:
                    debugger = PrecisionDebugger(**kwargs)
                    print("ACCEPTED", sorted(kwargs))
                except (ProbeConfigError, TypeError) as exc:
                    print("REFUSED", type(exc).__name__, str(exc).replace("\\n", " | "))
            """)
        lines = proc.stdout.strip().splitlines()
        self.assertIn('REFUSED ProbeConfigError PrecisionDebugger: the argument task is not valid: |   '
                      'PrecisionDebugger(task=\'bogus\'): key "task": "bogus" is not a supported task; '
                      'accepted: "statistics", "tensor"', lines[0])
        self.assertIn('key "level"', lines[1])
        self.assertIn('key "step"', lines[2])
        self.assertIn('key "step"', lines[3])
        self.assertIn('key "dump_path"', lines[4])
        self.assertIn("REFUSED TypeError PrecisionDebugger: model must be a torch.nn.Module", lines[5])
        self.assertEqual(lines[6], "ACCEPTED ['config_path', 'dump_path', 'level']")

    def test_a_bom_a_bytes_path_and_a_path_that_is_not_utf8(self):
        # A config file with a UTF-8 BOM passed the check and then raised json's JSONDecodeError;
        # dump_path=b"..." raised TypeError; a path that is not UTF-8 was refused pointing at a
        # column of JSON the user never wrote (an adversary's walk).
        with open(os.path.join(self.tmp, "bom.json"), "wb") as f:
            f.write(b'\xef\xbb\xbf{"task": "statistics", "dump_path": "./from_bom", "level": "L1"}')
        for kwargs, said in (('config_path="bom.json"', "ACCEPTED .*/from_bom$"),
                             ('dump_path=b"./from_bytes", level="L1"', "ACCEPTED .*/from_bytes$"),
                             ('dump_path=os.fsdecode(b"./x\\xff"), level="L1"',
                              r"REFUSED .*dump_path '\./x\\udcff' is not UTF-8 text")):
            with self.subTest(kwargs=kwargs):
                proc = self.run_python("""
                    import os
                    import torch
                    from probe_studio.pytorch import PrecisionDebugger, ProbeConfigError
                    try:
                        print("ACCEPTED", PrecisionDebugger(%s).service.config.dump_path)
                    except ProbeConfigError as exc:
                        print("REFUSED", exc)
                    """ % kwargs)
                self.assertRegex(proc.stdout.strip(), said)

    def test_a_nul_in_a_path_is_refused_and_the_file_before_it_is_left_alone(self):
        # The system cuts a path at its first NUL: dump_path "notes.txt\0/dump" wrote stack.json
        # over notes.txt, and config_path "real.json\0junk" read real.json (an adversary's walk).
        notes = os.path.join(self.tmp, "notes.txt")
        with open(notes, "w") as f:
            f.write("my notes\n")
        config = self.write_config({"task": "statistics", "dump_path": notes + "\0/dump", "level": "L1"})
        real = self.write_config({"task": "statistics", "dump_path": os.path.join(self.tmp, "d"), "level": "L1"},
                                 name="real.json")
        proc = self.run_python("""
            import sys
            import torch
            from probe_studio.pytorch import PrecisionDebugger, ProbeConfigError
            notes, config, real = sys.argv[1:]
            for kwargs in ({"dump_path": notes + "\\0/dump", "level": "L1"}, {"config_path": config},
                           {"config_path": real + "\\0junk"}):
                try:
                    debugger = PrecisionDebugger(**kwargs)
                    debugger.start()
                    torch.ones(2) + 1
                    debugger.stop()
                    debugger.step()
                    print("ACCEPTED", sorted(kwargs))
                except ProbeConfigError as exc:
                    print("REFUSED", str(exc).replace("\\n", " | "))
            """, [notes, config, real])
        lines = proc.stdout.strip().splitlines()
        self.assertEqual(len(lines), 3, proc.stdout + proc.stderr)
        for line in lines[:2]:
            self.assertIn('key "dump_path": holds a NUL character', line)
        self.assertIn("config_path", lines[2])
        self.assertIn("holds a NUL character", lines[2])
        with open(notes) as f:
            self.assertEqual(f.read(), "my notes\n")


if __name__ == "__main__":
    unittest.main()
