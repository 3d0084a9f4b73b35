"""Helpers for the end-to-end tests: run programs under the probe, and read what it wrote
with readers of our own (independent of the C++ ones)."""
# SPDX-License-Identifier: GPL-3.0-or-later
import csv
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

PROBE = os.environ.get("PROBE_BIN", "probe")
PREFIX = os.environ.get("PROBE_PREFIX", "")
DEMO_DIR = os.environ.get("PROBE_DEMO_DIR", "")
TEST_DIR = os.environ.get("PROBE_TEST_DIR", os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"
LLAMA = os.path.join(DEMO_DIR, "llama_demo.py")
TRAIN = os.path.join(DEMO_DIR, "msprobe_train.py")

HEADER = ("Device and PID,Execution Count,Op Name,Op Type,Op Id,Input/Output,Index,Dtype,Format,Shape,"
          "Max,Min,Mean,Norm,Tensor Path")

DTYPES = {0: torch.float32, 1: torch.float16, 2: torch.int8, 3: torch.int32, 4: torch.uint8, 6: torch.int16,
          9: torch.int64, 11: torch.float64, 12: torch.bool, 27: torch.bfloat16}


def write_config(directory, **keys):
    config = {"task": "statistics", "dump_enable": True, "exec_range": "all", "ids": "", "op_name": "",
              "save_child": False, "device": "", "filter_level": 1}
    config.update(keys)
    path = os.path.join(directory, "config.json")
    with open(path + ".tmp", "w") as f:
        json.dump(config, f)
    os.replace(path + ".tmp", path)
    return path


def run_probe(args, check=True, **kwargs):
    result = subprocess.run([PROBE, "run"] + args, capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError("probe run failed (%d):\n%s\n%s" % (result.returncode, result.stdout, result.stderr))
    return result


def read_bin(path):
    """(header dict, tensor or None) of a .bin file, parsed from its documented layout."""
    with open(path, "rb") as f:
        data = f.read()
    header = {}
    pos = 0
    while True:
        end = data.index(b"\n", pos)
        key, value = data[pos:end].decode().split("=", 1)
        header[key] = value
        pos = end + 1
        if key == "$End":
            break
    dims = [int(d) for d in header["dims"].split(",")] if header["dims"] else []
    if header["$Object.Count"] == "0":
        return header, None
    length = int(header["$Object.Length"])
    assert len(data) - pos == length, "%s: %d bytes after the header, %d promised" % (path, len(data) - pos, length)
    dtype = DTYPES[int(header["dtype"])]
    tensor = torch.frombuffer(bytearray(data[pos:]), dtype=dtype).reshape(dims) if length else torch.empty(dims, dtype=dtype)
    return header, tensor


def read_rows(root):
    """Every statistic.csv row below root/data, as dicts, in (process, round, file) order."""
    rows = []
    for path in sorted(glob.glob(os.path.join(root, "data", "*", "*", "statistic.csv")),
                       key=lambda p: (p.split(os.sep)[-3], int(p.split(os.sep)[-2]))):
        with open(path, newline="") as f:
            lines = f.read().splitlines()
        assert lines[0] == HEADER, path
        for record in csv.DictReader(lines):
            record["_csv"] = path
            rows.append(record)
    return rows


def stat_value(text):
    return None if text == "N/A" else float(text)


def expected_stats(tensor):
    t = tensor.detach().to(torch.float64)
    if torch.isnan(t).any():
        return (math.nan,) * 4
    return (t.max().item(), t.min().item(), t.mean().item(), t.norm().item())


class ProbeTestCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="probe-torch-")

    def tearDown(self):
        if not os.environ.get("PROBE_KEEP_TEST_DIRS"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def write_script(self, name, source):
        """A program of the test's own, written into its folder: its path."""
        path = self.path(name)
        with open(path, "w") as f:
            f.write(source)
        return path

    def assertStatsMatch(self, row, tensor, places=5):
        got = [stat_value(row[k]) for k in ("Max", "Min", "Mean", "Norm")]
        want = expected_stats(tensor)
        for name, g, w in zip(("Max", "Min", "Mean", "Norm"), got, want):
            if math.isnan(w):
                self.assertTrue(math.isnan(g), "%s %s" % (row["Op Name"], name))
            else:
                self.assertAlmostEqual(g, w, delta=10 ** -places * max(1.0, abs(w)),
                                       msg="%s %s round %s" % (row["Op Name"], name, row["Execution Count"]))
