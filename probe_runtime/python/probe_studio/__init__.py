"""Probe Studio: find where a neural network's numbers go wrong.

The package has three parts:
  * ``probe_studio.torch_hooks`` — injected into an unchanged PyTorch program by ``probe run``
    or the load script: modules become layer-level ops, aten ops their children.
  * ``probe_studio.pytorch`` — the code-level API (``PrecisionDebugger``, ``seed_all``) writing
    the msprobe dump layout.
  * ``probe_studio._native`` — the ctypes bindings to the C++ runtime.
"""
# SPDX-License-Identifier: GPL-3.0-or-later

try:
    from ._build_info import VERSION as __version__
except ImportError:  # running from a source tree that was never built
    __version__ = "0.0.0+unbuilt"

__all__ = ["__version__"]
