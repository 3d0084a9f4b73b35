"""The JSON writer of the msprobe layout produces exactly what json.dump(..., indent=1) does."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import tempfile
import unittest

from probe_studio.pytorch import _jsonio


class _Raw:
    def __init__(self, text):
        self.text = text

    def raw_json(self):
        return self.text


def _random_document(rng, atoms, keys, depth, max_depth, atom_below, list_below, key_chance):
    """A random JSON-able value: an atom (always past max_depth), a list or a dict whose keys are
    taken from `keys` with key_chance (else "key<i>"), nested with the same rule."""
    r = rng.random()
    if depth > max_depth or r < atom_below:
        return rng.choice(atoms)
    nested = (rng, atoms, keys, depth + 1, max_depth, atom_below, list_below, key_chance)
    if r < list_below:
        return [_random_document(*nested) for _ in range(rng.randint(0, 4))]
    return {(rng.choice(keys) if rng.random() < key_chance else "key%d" % i): _random_document(*nested)
            for i in range(rng.randint(0, 4))}


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

    def test_tensor_items_rendered_in_cpp_write_numbers_as_python_does(self):
        # The C++ side renders each tensor item with its statistics; json.dumps would write
        # every float with repr(): the texts must be the same, digit for digit.
        import random
        import torch
        from probe_studio.pytorch import _ops
        _ops.load(torch)
        values = [0.0, -0.0, 0.1, 1e-05, 0.0001, 1e15, 1e16, 1e17, 123456789.0, 5e-324, 2.2250738585072014e-308,
                  1.7976931348623157e308, float("inf"), float("-inf"), float("nan"), 1 / 3, -2.5, 100.0, 1e22]
        rng = random.Random(5)
        values += [rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30) for _ in range(500)]
        tensors = [torch.tensor(v, dtype=torch.float64) for v in values]  # 0-d: all four are the value
        cores, _ = _ops.tensor_items(tensors, ["torch.float64"] * len(tensors), False)
        self.assertEqual(len(cores), len(values))
        for value, core in zip(values, cores):
            item = {"type": "torch.Tensor", "dtype": "torch.float64", "shape": [], "Max": value, "Min": value,
                    "Mean": value, "Norm": value, "requires_grad": False}
            self.assertEqual(core + "}", json.dumps(item, separators=(",", ": ")), repr(value))
        # Every kind of item, through dumps(): the same text as json.dumps of the dict.
        for t, name in ((torch.tensor([1, -7, 2 ** 60 + 1]), "torch.int64"), (torch.tensor([True, False]), "torch.bool"),
                        (torch.tensor([3.0 + 4.0j, 1j]), "torch.complex64"), (torch.zeros(0, 3), "torch.float32"),
                        (torch.randn(4, 5).half(), "torch.float16"), (torch.tensor(9, dtype=torch.int32), "torch.int32")):
            cores, md5s = _ops.tensor_items([t], [name], True)
            item = json.loads(cores[0] + "}")
            self.assertEqual(_jsonio.dumps([_Raw(cores[0] + ',"md5": "%s"}' % md5s[0])]),
                             json.dumps([dict(item, md5=md5s[0])], indent=1))

    def test_compact_json_indents_to_the_same_file_as_json_dumps(self):
        # compact() is _module_call.compact_json: json.dumps's text except that a raw JSON string
        # (the mark, then printable ASCII with closed strings and balanced brackets) stands in
        # place, unescaped. Indented by the C++ writer, both must give the same text for any
        # value: random documents of every JSON type, subclasses, objects only `default` can
        # write, odd keys, and marked strings the writer must still splice as before.
        import enum
        import random
        import torch
        from probe_studio._module_call import compact_json
        from probe_studio.pytorch import _ops
        _ops.load(torch)

        class Count(enum.IntEnum):
            THREE = 3

        class Real(float):
            pass

        class Text(str):
            pass

        class Other:
            def __str__(self):
                return "other \u00e9"

        mark = _jsonio.RAW_JSON_MARK
        atoms = [None, True, False, 0, -1, 2 ** 70, -2 ** 64, Count.THREE, 1.5, -0.0, float("nan"), float("inf"),
                 -float("inf"), 1e16, 1e-05, 123456789.125, Real(2.5), "", "plain", 'q"uote\\back',
                 "\n\t\r\b\f\x00\x1f\x7f", "\u00e9\u4e2d", "\U0001f600", "\udc80", Text("sub"), Other(),
                 mark + '{"type": "torch.Tensor","shape": [2,3],"Max": 1.0}', mark + "[1,2]", mark + '{"a": "}"}',
                 mark + "{unbalanced", mark + '{"x": "\u00e9"}', mark, mark + "5", mark + '{"a": "\\\\"}',
                 _Raw('{"type": "torch.Tensor","dtype": "torch.float32","Max": null}'), (1, 2), [], {},
                 ()]
        keys = ["k", "input_args", "\u00e9", 'q"', mark + "{}", 1, 2.5, True, None, False, -3, float("nan")]
        rng = random.Random(11)

        def document(depth):
            return _random_document(rng, atoms, keys, depth, max_depth=4, atom_below=0.4, list_below=0.7,
                                    key_chance=0.3)

        unescaped = 0
        for _ in range(5000):
            value = document(0)
            expected = json.dumps(value, separators=(",", ": "), default=_jsonio._default)
            text = compact_json(value, _jsonio._default)
            self.assertIsNotNone(text)
            self.assertEqual(_ops.json_indent(text), _ops.json_indent(expected), repr(value))
            self.assertEqual(_jsonio.dumps(value), _ops.json_indent(expected))
            unescaped += text != expected
        self.assertGreater(unescaped, 1000)  # the raw strings were written in place
        # A raw item in place; json.dumps escaped it.
        item = mark + '{"type": "torch.Tensor","Max": 1.0}'
        self.assertEqual(compact_json([item], _jsonio._default), '[{"type": "torch.Tensor","Max": 1.0}]')
        # What json.dumps refuses or reports is left to it (compact_json gives None).
        self.assertIsNone(compact_json({(1, 2): 3}, _jsonio._default))
        with self.assertRaises(TypeError):
            _jsonio.compact({(1, 2): 3})
        nested = []
        for _ in range(300):
            nested = [nested]
        self.assertIsNone(compact_json(nested, _jsonio._default))
        self.assertEqual(_jsonio.compact(nested), json.dumps(nested))

    def test_the_encoder_indents_in_one_pass_as_the_indenter_indents_its_compact_text(self):
        # compact_json(value, default, True) is the file itself: exactly what probe::json_indent
        # makes of compact_json(value, default), for strings whose escapes the indenter changes
        # (lone surrogates, alone, paired or not, in keys too), marked strings it splices (as
        # values and keys, nested in raw items, with escapes), control characters and every
        # JSON type, at any depth.
        import random
        import torch
        from probe_studio._module_call import compact_json
        from probe_studio.pytorch import _ops
        _ops.load(torch)
        mark = _jsonio.RAW_JSON_MARK
        strings = ["", "name", "\udc80", "\ud800", "\ud83d\ude00", "\ud800\ud83d\ude00x", "\ude00\ud83d",
                   "a\ud800b\udfffc", "\U0001f600", "\u00e9\n\t\x00\x1f\x7f", 'q"\\', mark,
                   mark + '{"a": 1}', mark + '{"a": [1, {"b": []}], "c": {}}', mark + '{"s": "\\u0001{}"}',
                   mark + '{"s": "\\u0001{\\"x\\": [1,2]}"}', mark + '{"s": "\\udc80"}', mark + '{"a": "\u00e9"}',
                   mark + "{", mark + "[1]", mark + '{"a": "}"}', mark + "\udc80{}", mark + '{"a":\n1}']
        atoms = strings + [None, True, False, 0, -5, 2 ** 70, 1.5, -0.0, float("nan"), float("-inf"), 1e-07,
                           1e16, [], {}, (), _Raw('{"type": "torch.Tensor","shape": [2,3],"Max": 1.0}'),
                           _Raw('{"type": "torch.Tensor","shape": [],"md5": "0a1b2c3d"}')]
        keys = strings + [1, 2.5, True, None, -3]
        rng = random.Random(23)

        def document(depth):
            return _random_document(rng, atoms, keys, depth, max_depth=5, atom_below=0.35, list_below=0.65,
                                    key_chance=0.4)

        spliced = surrogates = 0
        for _ in range(5000):
            value = document(0)
            compact = compact_json(value, _jsonio._default)
            indented = compact_json(value, _jsonio._default, True)
            self.assertIsNotNone(indented)
            self.assertEqual(indented, _ops.json_indent(compact), repr(value))
            self.assertEqual(indented, _ops.json_indent(json.dumps(value, separators=(",", ": "),
                                                                    default=_jsonio._default)), repr(value))
            spliced += '"a": 1' in indented  # mark + '{"a": 1}' read as an object
            surrogates += "\\\\udc80" in indented  # a lone surrogate's escape written as its text
        self.assertGreater(spliced, 100)
        self.assertGreater(surrogates, 100)
        # What the one pass leaves to json.dumps, indented() still writes.
        self.assertIsNone(compact_json({(1, 2): 3}, _jsonio._default, True))
        nested = []
        for _ in range(300):
            nested = [nested]
        self.assertIsNone(compact_json(nested, _jsonio._default, True))
        self.assertEqual(_jsonio.indented(nested), json.dumps(nested, indent=1))

    def test_a_users_string_that_begins_with_the_mark_is_written_as_a_string(self):
        # Only a tensor item (an object) is raw JSON: a user's string that begins with U+0001 and
        # whose rest is not an object's text is written as json.dumps writes it, and no text
        # makes the indenter fail (an unbalanced one used to end the user's step with a
        # ValueError: basic_string::_M_replace_aux).
        import torch
        from probe_studio.pytorch import _ops
        _ops.load(torch)
        mark = _jsonio.RAW_JSON_MARK
        strings = [mark, mark + "]", mark + "}{", mark + '"', mark + "[\n]", mark + "\u00e9[]", mark + "[[[",
                   mark + "\\", mark + "abc", mark + "[1]", mark + '"x"', mark + "1", mark + "{", mark + "{}}",
                   mark + "{\n}", "]]]", "}"]
        checked = 0
        for s in strings:
            document = {"input_kwargs": {"s": s}, "args": [s, [s]]}
            text = _jsonio.dumps(document)
            self.assertEqual(text, json.dumps(document, indent=1), repr(s))
            self.assertEqual(json.loads(text), document)
            checked += 1
        self.assertEqual(checked, len(strings))
        for compact in ("]]]}}", "}", '"\\u0001]"', '["\\u0001{"]'):
            _ops.json_indent(compact)  # text that is not JSON: indented as it comes, never raised

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
