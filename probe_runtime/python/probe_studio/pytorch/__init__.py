"""The code-level PyTorch API, msprobe compatible:

    from probe_studio.pytorch import PrecisionDebugger, seed_all

writes the msprobe dump layout (FORMATS.md section 2) with statistics computed by the C++
core. Documented msprobe examples run unchanged except for the import line.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
from ._config import ProbeConfigError
from ._debugger import PrecisionDebugger, module_dump, module_dump_end
from ._seed import seed_all

__all__ = ["PrecisionDebugger", "ProbeConfigError", "module_dump", "module_dump_end", "seed_all"]
