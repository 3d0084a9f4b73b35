"""Put on PYTHONPATH by `probe run` and the load script: arms the probe for this process.

It installs nothing heavy: a finder that notices when `torch` is imported and then hooks it
(probe_studio.torch_hooks). Programs that never import torch pay nothing. Any other
sitecustomize further along sys.path (Debian ships one) still runs.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys


def _arm():
    try:
        from probe_studio import torch_hooks
        torch_hooks.arm()
    except Exception as exc:
        sys.stderr.write("[probe] error: could not arm the probe: %r; the program runs without it\n" % (exc,))


_here = os.path.dirname(os.path.abspath(__file__))
try:
    _package_parent = os.path.dirname(os.path.dirname(_here))
    if _package_parent not in sys.path:
        sys.path.append(_package_parent)
    from probe_studio import _import_hook
    _import_hook.chain_next_sitecustomize(_here)
except Exception as exc:
    sys.stderr.write("[probe] note: the next sitecustomize was not run: %r\n" % (exc,))
if os.environ.get("PROBE_OUTPUT_DIR") is not None or os.environ.get("PROBE_CONFIG") is not None:
    _arm()
