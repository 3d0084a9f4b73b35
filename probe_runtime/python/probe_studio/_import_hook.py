"""Small pieces every injected sitecustomize needs: run the next sitecustomize on sys.path (Debian
ships one), and call a function right after a module is first imported (without importing it)."""
# SPDX-License-Identifier: GPL-3.0-or-later
import importlib.abc
import os
import sys


def chain_next_sitecustomize(here):
    """Runs the first sitecustomize.py on sys.path that is not in `here` (the caller's folder)."""
    here = os.path.abspath(here)
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            namespace = {"__name__": "sitecustomize", "__file__": candidate}
            try:
                with open(candidate, "rb") as f:
                    exec(compile(f.read(), candidate, "exec"), namespace)
            except Exception as exc:  # the other sitecustomize's problem, not the program's
                sys.stderr.write("[probe] note: %s raised %r\n" % (candidate, exc))
            return


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the real loader of `name` so `callback(module)` runs once the
    module has executed."""

    def __init__(self, name, callback):
        self.name, self.callback = name, callback

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            if finder is self or getattr(finder, "find_spec", None) is None:
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None or spec.loader is None:
                continue
            original, watcher = spec.loader, self

            class _Loader(importlib.abc.Loader):
                def create_module(self, s):
                    return original.create_module(s)

                def exec_module(self, module):
                    original.exec_module(module)
                    if watcher in sys.meta_path:
                        sys.meta_path.remove(watcher)
                    watcher.callback(module)

            spec.loader = _Loader()
            return spec
        return None


def call_after_import(name, callback):
    """callback(module) once `name` is imported: now when it already is."""
    if name in sys.modules:
        callback(sys.modules[name])
        return
    sys.meta_path.insert(0, _AfterImport(name, callback))
