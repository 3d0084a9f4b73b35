"""Put on PYTHONPATH by `probe run` and the load script: arms the probe for this process.

It installs nothing heavy: a finder that notices when `torch` is imported and then hooks it
(probe_studio.torch_hooks). Programs that never import torch pay nothing. Any other
sitecustomize further along sys.path (Debian ships one) still runs.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys


def _chain_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            namespace = {"__name__": "sitecustomize", "__file__": candidate}
            try:
                with open(candidate, "rb") as f:
                    exec(compile(f.read(), candidate, "exec"), namespace)
            except Exception as exc:  # the other sitecustomize's problem, not the model's
                sys.stderr.write("[probe] note: %s raised %r\n" % (candidate, exc))
            return


def _arm():
    try:
        # The package lives two levels up from this file.
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        if package_parent not in sys.path:
            sys.path.append(package_parent)
        from probe_studio import torch_hooks
        torch_hooks.arm()
    except Exception as exc:
        sys.stderr.write("[probe] error: could not arm the probe: %r; the program runs without it\n" % (exc,))


_chain_next_sitecustomize()
if os.environ.get("PROBE_OUTPUT_DIR") is not None or os.environ.get("PROBE_CONFIG") is not None:
    _arm()
