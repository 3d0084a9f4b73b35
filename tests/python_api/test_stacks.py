"""stack.json of the code-level API: each entry's stack is the Python stack of its call, made once
per call path (the path's identity comes from probe_studio._module_call.stack_key), and equal
stacks share one group. The expected stacks are taken independently, with traceback, inside
the script that makes the calls."""
# SPDX-License-Identifier: GPL-3.0-or-later
import inspect
import json
import os
import sys
import unittest

import support
from support import load

try:
    from probe_studio._module_call import stack_key
except ImportError:  # built without the PyTorch adapter: the API is not there either
    stack_key = None

SCRIPT = r'''
import json, os, sys, traceback
import torch
import torch.nn.functional as F
from probe_studio.pytorch import PrecisionDebugger

debugger = PrecisionDebugger(config_path="./config.json")
expected = {}  # entry name -> the stack of its call, innermost frame first

def frames_here(depth_up, line_offset):
    """The stack as stack.json writes it, of the caller `depth_up` frames up, with that frame's
    line moved by `line_offset` (the call on the next line)."""
    summary = traceback.extract_stack(sys._getframe(depth_up))
    summary[-1] = traceback.FrameSummary(summary[-1].filename, summary[-1].lineno + line_offset,
                                         summary[-1].name)
    lines = ["File %s, line %d, in %s, \n %s" % (f.filename, f.lineno, f.name, f.line)
             for f in reversed(summary) if f.line]
    return lines

count = {"relu": 0, "tanh": 0}

def site_a(x):
    here = frames_here(1, 1)
    y = F.relu(x)
    expected["Functional.relu.%d.forward" % count["relu"]] = here
    count["relu"] += 1
    return y

def site_b(x):
    here = frames_here(1, 1)
    y = torch.tanh(x)
    expected["Torch.tanh.%d.forward" % count["tanh"]] = here
    count["tanh"] += 1
    return y

def path_one(x):
    return site_a(x)

def path_two(x):
    return site_a(site_b(x))

x = torch.randn(3, 4)
debugger.start()
for _ in range(3):
    path_one(x)
    path_two(x)
    site_b(x)
debugger.stop()
with open("expected.json", "w") as f:
    json.dump(expected, f)
'''


class StackKey(unittest.TestCase):
    @unittest.skipIf(stack_key is None, "built without the PyTorch adapter")
    def test_key_is_the_call_path(self):
        def key_here():
            return stack_key(1)  # the caller of key_here, outward

        def from_one_place():
            return [key_here() for _ in range(2)]

        def from_two_places():
            return key_here(), key_here()

        same = from_one_place()
        self.assertEqual(same[0], same[1])  # one call site by one path: equal keys
        first, second = from_two_places()
        self.assertNotEqual(first, second)  # two call sites: different keys
        self.assertNotEqual(same[0], first)
        # One (code, position) pair of 16 bytes per frame from the caller outward.
        self.assertEqual(len(stack_key(0)), 16 * len(inspect.stack(0)))
        self.assertEqual(len(key_here()), 16 * len(inspect.stack(0)))
        self.assertEqual(len(stack_key(1)), len(stack_key(0)) - 16)
        self.assertEqual(stack_key(10 ** 6), b"")  # past the outermost frame: no frames
        with self.assertRaises(TypeError):
            stack_key("1")


class StackJson(support.TempDirTestCase):
    def test_each_entry_has_the_stack_of_its_call_and_equal_stacks_share_a_group(self):
        self.write_config({"task": "statistics", "dump_path": os.path.join(self.tmp, "dump"), "level": "L1"})
        self.run_python(SCRIPT)
        with open(os.path.join(self.tmp, "expected.json")) as f:
            expected = json.load(f)
        rank_dir = self.only_dump("dump")
        stack = load(os.path.join(rank_dir, "stack.json"))
        self.assertEqual(list(stack), [str(i) for i in range(len(stack))])
        found = {}
        for names, frames in stack.values():
            for name in names:
                self.assertNotIn(name, found)
                found[name] = frames
        self.assertEqual(len(expected), 12)  # 6 relu and 6 tanh calls
        self.assertEqual(sorted(found), sorted(expected))
        for name, frames in expected.items():
            self.assertTrue(frames)
            self.assertEqual(found[name], frames, name)
        # Groups: relu by path_one, relu by path_two, tanh by path_two, tanh from the loop.
        groups = sorted(sorted(names) for names, _ in stack.values())
        self.assertEqual(groups, sorted([
            ["Functional.relu.0.forward", "Functional.relu.2.forward", "Functional.relu.4.forward"],
            ["Functional.relu.1.forward", "Functional.relu.3.forward", "Functional.relu.5.forward"],
            ["Torch.tanh.0.forward", "Torch.tanh.2.forward", "Torch.tanh.4.forward"],
            ["Torch.tanh.1.forward", "Torch.tanh.3.forward", "Torch.tanh.5.forward"]]))


if __name__ == "__main__":
    sys.exit(unittest.main())
