"""Put on PYTHONPATH by `probe bisect` for each run of the program: once torch is imported, the
plan named by $PROBE_BISECT_PLAN is applied (probe_studio.bisect_runtime). Any other
sitecustomize further along sys.path still runs."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys


def _setup():
    here = os.path.dirname(os.path.abspath(__file__))
    package_parent = os.path.dirname(os.path.dirname(here))
    if package_parent not in sys.path:
        sys.path.append(package_parent)
    from probe_studio import _import_hook
    _import_hook.chain_next_sitecustomize(here)
    if os.environ.get("PROBE_BISECT_PLAN"):
        from probe_studio import bisect_runtime
        _import_hook.call_after_import("torch", bisect_runtime.install)


try:
    _setup()
except Exception as exc:
    sys.stderr.write("[probe bisect] error: could not arm the trial: %r\n" % (exc,))
