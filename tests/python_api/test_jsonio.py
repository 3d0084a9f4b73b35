"""The JSON writer of the msprobe layout produces exactly what json.dump(..., indent=1) does."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import tempfile
import unittest

from probe_studio.pytorch import _jsonio


class JsonWriter(unittest.TestCase):
    def test_same_text_as_json_dump_indent_1(self):
        item = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [10, 8], "Max": 1.5, "Min": -0.25,
                "Mean": 1e-07, "Norm": 123456789012345.6, "requires_grad": False, "md5": "0a1b2c3d"}
        documents = [
            {"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None,
             "data": {"Functional.linear.0.forward": {"input_args": [item, None, {"type": "int", "value": 3}],
                                                      "input_kwargs": {}, "output": [[item], []]}}},
            {"0": [["a", "b"], ["File x.py, line 3, in f, \n y = g(x)"]]},
            {},
            [],
            {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "big": 2 ** 70, "neg0": -0.0,
             "tiny": 5e-324, "unicode": "é中\n\t\"\\", "nested": [[[]], [{}], {"k": [1, 2.0, True]}]},
        ]
        for document in documents:
            self.assertEqual(_jsonio.dumps(document), json.dumps(document, indent=1))

    def test_a_lone_surrogate_is_written_as_the_text_of_its_escape(self):
        # UTF-8 cannot carry a lone surrogate and strict JSON readers refuse its escape: it is
        # written the way probe_studio._names writes names; a surrogate pair stays a pair.
        value = {"a\udc80b": ["\ud800", "x\\udc80", "\U0001f600", "\udbff\udfff", "\udfff\udbff"]}
        text = _jsonio.dumps(value)
        self.assertEqual(json.loads(text), {"a\\udc80b": ["\\ud800", "x\\udc80", "\U0001f600", "\U0010ffff",
                                                          "\\udfff\\udbff"]})
        text.encode("ascii")

    def test_atomic_write_leaves_no_temporary_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "dump.json")
            _jsonio.write_json_atomic(path, {"a": [1]})
            _jsonio.write_json_atomic(path, {"a": [2]})
            self.assertEqual(os.listdir(tmp), ["dump.json"])
            with open(path) as f:
                self.assertEqual(json.load(f), {"a": [2]})


if __name__ == "__main__":
    unittest.main()
