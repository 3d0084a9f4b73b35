"""Helpers of the precision suite's end-to-end tests, beside those of tests/torch (probe runs,
configs, reading .bin files)."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "torch"))

from probe_test_util import PROBE, PYTHON, ProbeTestCase, read_bin, read_rows, run_probe, write_config  # noqa: E402

__all__ = ["PYTHON", "ProbeTestCase", "read_bin", "read_rows", "run_probe", "write_config", "model", "probe"]


def model(name):
    return os.path.join(HERE, name)


def probe(*args, cwd=None, env=None, timeout=None):
    """Runs `probe ARGS` and returns the CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([PROBE] + list(args), capture_output=True, text=True, cwd=cwd, env=full_env,
                          timeout=timeout)
