"""Where the installed pieces are, found from this file's own location (relocatable)."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os

# <prefix>/lib/python3/dist-packages/probe_studio/_paths.py
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(PACKAGE_DIR)
PREFIX = os.path.abspath(os.path.join(PYTHON_DIR, "..", "..", ".."))
LIB_DIR = os.path.join(PREFIX, "lib")
DATA_DIR = os.path.join(PREFIX, "share", "probe-studio")
INJECT_DIR = os.path.join(PACKAGE_DIR, "_inject")

RUNTIME_LIBRARY = os.path.join(LIB_DIR, "libprobe_runtime.so")
TORCH_ADAPTER_LIBRARY = os.path.join(LIB_DIR, "libprobe_torch.so")
