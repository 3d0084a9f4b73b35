"""Shared helpers of the code-level API tests: running scripts in a fresh interpreter (the
debugger wraps torch once per process), finding their dump, and checking the files against
the msprobe layout of FORMATS.md section 2."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "examples")
PYTHON = os.environ.get("PROBE_TEST_PYTHON", sys.executable)

API_ENTRY = re.compile(r"^(Functional|Torch|Tensor|VF|Distributed|Aten)\.(.+)\.(\d+)\.(forward|backward)$")
MODULE_ENTRY = re.compile(r"^Module\.(.+)\.([A-Za-z_][A-Za-z0-9_]*)\.(forward|backward)\.(\d+)$")
PARAM_GRAD_ENTRY = re.compile(r"^Module\.(.+)\.([A-Za-z_][A-Za-z0-9_]*)\.parameters_grad\.(\d+)$")
STACK_FRAME = re.compile(r"^File .+, line \d+, in .+, \n .+$", re.S)
TENSOR_KEYS = ["type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad"]


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="probe_api_test_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    # ---------------------------------------------------------------------------------------
    def write_config(self, config, name="config.json"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            json.dump(config, f)
        return path

    def copy_example(self, *names):
        for name in names:
            shutil.copy(os.path.join(EXAMPLES, name), os.path.join(self.tmp, name))

    def run_python(self, script, args=(), expect_ok=True, env=None, timeout=300):
        """Runs `script` (a file name in self.tmp, or source text) in a fresh interpreter with
        the working directory self.tmp. Returns the CompletedProcess."""
        if "\n" in script:
            path = os.path.join(self.tmp, "script_%d.py" % len(os.listdir(self.tmp)))
            with open(path, "w") as f:
                f.write(textwrap.dedent(script))
            script = path
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run([PYTHON, script] + list(args), cwd=self.tmp, env=full_env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
        if expect_ok and proc.returncode != 0:
            self.fail("%s failed (%d):\nstdout:\n%s\nstderr:\n%s" % (script, proc.returncode, proc.stdout,
                                                                     proc.stderr))
        return proc

    def rank_dirs(self, dump_path, step=0):
        step_dir = os.path.join(self.tmp, dump_path, "step%d" % step)
        self.assertTrue(os.path.isdir(step_dir), "no %s" % step_dir)
        return [os.path.join(step_dir, d) for d in sorted(os.listdir(step_dir))]

    def only_dump(self, dump_path, step=0):
        dirs = self.rank_dirs(dump_path, step)
        self.assertEqual(len(dirs), 1, dirs)
        return dirs[0]


def load_ordered(path):
    """The JSON file with every object as a list of (key, value) pairs, so key order is checked."""
    with open(path) as f:
        return json.load(f, object_pairs_hook=lambda pairs: pairs)


def load(path):
    with open(path) as f:
        return json.load(f)


def load_dump(rank_dir):
    return load(os.path.join(rank_dir, "dump.json"))


def tensor_items(value):
    """Every tensor item (dict with "type" torch.Tensor) inside a JSON value."""
    if isinstance(value, dict):
        if value.get("type") == "torch.Tensor":
            yield value
        else:
            for v in value.values():
                yield from tensor_items(v)
    elif isinstance(value, list):
        for v in value:
            yield from tensor_items(v)


def check_layout(test, rank_dir, task="statistics", level="L1", md5=False, module_dump=False):
    """Checks dump.json, stack.json and construct.json of one rank directory against the
    schema of FORMATS.md section 2 (`module_dump`: module entries are expected at level L1
    too). Returns the parsed dump.json."""
    ordered = load_ordered(os.path.join(rank_dir, "dump.json"))
    test.assertEqual([k for k, _ in ordered], ["task", "level", "framework", "dump_data_dir", "data"])
    top = dict(ordered)
    test.assertEqual(top["task"], task)
    test.assertEqual(top["level"], level)
    test.assertEqual(top["framework"], "pytorch")
    if task == "tensor":
        test.assertTrue(os.path.isabs(top["dump_data_dir"]), top["dump_data_dir"])
        test.assertEqual(os.path.realpath(top["dump_data_dir"]),
                         os.path.realpath(os.path.join(rank_dir, "dump_tensor_data")))
    else:
        test.assertIsNone(top["dump_data_dir"])
    # One-space indent, as json.dump(..., indent=1) writes it.
    with open(os.path.join(rank_dir, "dump.json")) as f:
        text = f.read()
    test.assertEqual(text, json.dumps(json.loads(text), indent=1))

    for name, entry in top["data"]:
        keys = [k for k, _ in entry]
        if API_ENTRY.match(name):
            test.assertIn(level, ("L1", "mix"), name)
            if name.endswith(".forward"):
                test.assertTrue(set(keys) <= {"input_args", "input_kwargs", "output"}, (name, keys))
                test.assertEqual(keys, [k for k in ("input_args", "input_kwargs", "output") if k in keys], name)
            else:
                test.assertEqual(keys, [k for k in ("input", "output") if k in keys], name)
        elif MODULE_ENTRY.match(name):
            if not module_dump:
                test.assertIn(level, ("L0", "mix"), name)
            if ".forward." in name:
                order = ("input_args", "input_kwargs", "output", "parameters")
                test.assertEqual(keys, [k for k in order if k in keys], name)
                # The keyword arguments of the call, as for an API (torch 1.x's hooks do not see
                # them: the debugger hands them over itself).
                test.assertIsInstance(dict(entry).get("input_kwargs", []), list, name)
            else:
                test.assertEqual(keys, [k for k in ("input", "output") if k in keys], name)
        elif PARAM_GRAD_ENTRY.match(name):
            for pname, value in entry:
                test.assertIsInstance(value, list, name)
                test.assertEqual(len(value), 1, name)
        else:
            test.fail("entry name %r follows no msprobe convention" % name)
        check_items(test, name, entry, task, md5)

    stack = load(os.path.join(rank_dir, "stack.json"))
    test.assertEqual(list(stack), [str(i) for i in range(len(stack))])
    for key, (names, frames) in stack.items():
        test.assertTrue(names, key)
        for name in names:
            test.assertTrue(name.endswith(".forward") or ".forward." in name, name)
        for frame in frames:
            test.assertRegex(frame, STACK_FRAME)

    construct = load(os.path.join(rank_dir, "construct.json"))
    if level == "L1":
        test.assertEqual(construct, {})
    for name, parent in construct.items():
        test.assertTrue(API_ENTRY.match(name) or MODULE_ENTRY.match(name), name)
        if parent is not None:
            test.assertRegex(parent, MODULE_ENTRY)
            test.assertEqual(".forward." in parent, name.endswith(".forward") or ".forward." in name, (name, parent))
    return json.loads(text)


def check_items(test, name, value, task, md5):
    """Tensor items inside an entry (given as ordered pairs): key order and value types."""
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        pairs = value  # a JSON object, as (key, value) pairs
    else:
        pairs = None
    if pairs is not None:
        keys = [k for k, _ in pairs]
        if keys and keys[0] == "type" and dict(pairs).get("type") == "torch.Tensor":
            expected = list(TENSOR_KEYS)
            if task == "tensor":
                expected.append("data_name")
            if md5:
                expected.append("md5")
            test.assertEqual(keys, expected, name)
            item = dict(pairs)
            test.assertRegex(item["dtype"], r"^torch\.\w+$")
            test.assertTrue(all(isinstance(d, int) for d in item["shape"]), name)
            test.assertIsInstance(item["requires_grad"], bool)
            if md5:
                test.assertRegex(item["md5"], r"^[0-9a-f]{8}$")
            if task == "tensor":
                test.assertTrue(item["data_name"].startswith(name + "."), (name, item["data_name"]))
                test.assertTrue(item["data_name"].endswith(".pt"))
            return
        for _, v in pairs:
            check_items(test, name, v, task, md5)
    elif isinstance(value, list):
        for v in value:
            check_items(test, name, v, task, md5)


def is_float32(x):
    import struct
    if x is None or isinstance(x, bool) or not isinstance(x, float) or math.isnan(x) or math.isinf(x):
        return True
    return struct.unpack("f", struct.pack("f", x))[0] == x
