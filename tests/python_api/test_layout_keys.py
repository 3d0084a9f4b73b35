"""The msprobe layout is written in Python and read in C++: the keys the Python writer puts in
dump.json are those of the format library's one table (probe/format/msprobe_layout.h, read
here through the adapter), in its order."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import unittest

import support
from support import API_ENTRY, MODULE_ENTRY, PARAM_GRAD_ENTRY, load_ordered

# Every kind of entry and item: APIs and modules forward and backward, parameters and their
# gradients, task tensor with md5 (data_name and md5 in every tensor item).
SCRIPT = """
import json
import torch
import torch.nn as nn
from probe_studio.pytorch import PrecisionDebugger, _ops
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
debugger = PrecisionDebugger(config_path="./config.json", model=model)
debugger.start()
model(torch.randn(3, 4)).sum().backward()
debugger.stop()
print(json.dumps(_ops.msprobe_tables()["layout"]))
"""


class LayoutKeys(support.TempDirTestCase):
    def test_the_writer_uses_the_format_librarys_keys(self):
        self.write_config({"task": "tensor", "dump_path": "./dump", "level": "mix",
                           "tensor": {"summary_mode": "md5"}})
        proc = self.run_python(SCRIPT)
        layout = json.loads(proc.stdout.strip().splitlines()[-1])
        rank_dir = self.only_dump("dump")
        self.assertEqual(sorted(os.listdir(rank_dir)),
                         sorted(f for f in layout["files"] if f != "dump_error_info.log"))
        ordered = load_ordered(os.path.join(rank_dir, "dump.json"))
        self.assertEqual([k for k, _ in ordered], layout["dump_keys"])
        seen = {"forward": set(), "backward": set(), "tensor": set(), "grad": 0}

        def in_order(keys, table):
            self.assertEqual(keys, [k for k in table if k in keys])

        def items(value):
            if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
                keys = [k for k, _ in value]
                if dict(value).get("type") == layout["tensor_type"]:
                    in_order(keys, layout["tensor_keys"])
                    seen["tensor"].update(keys)
                    return
                value = [v for _, v in value]
            if isinstance(value, list):
                for v in value:
                    items(v)

        for name, entry in dict(ordered)["data"]:
            keys = [k for k, _ in entry]
            api, module, grad = API_ENTRY.match(name), MODULE_ENTRY.match(name), PARAM_GRAD_ENTRY.match(name)
            self.assertTrue(api or module or grad, name)
            if api:
                self.assertIn(api.group(1), layout["api_prefixes"], name)
            else:
                self.assertTrue(name.startswith(layout["module_prefix"] + "."), name)
            if grad:
                self.assertIn("." + layout["parameters_grad"] + ".", name)
                seen["grad"] += 1
            elif name.endswith(".forward") or ".forward." in name:
                in_order(keys, layout["forward_keys"])
                seen["forward"].update(keys)
            else:
                in_order(keys, layout["backward_keys"])
                seen["backward"].update(keys)
            items(entry)
        # Every key of the table was written at least once.
        self.assertEqual(seen["forward"], set(layout["forward_keys"]))
        self.assertEqual(seen["backward"], set(layout["backward_keys"]))
        self.assertEqual(seen["tensor"], set(layout["tensor_keys"]))
        self.assertGreater(seen["grad"], 0)


if __name__ == "__main__":
    unittest.main()
