"""Level L1/mix: the Python-level APIs (torch.nn.functional, torch, torch.Tensor, torch._VF,
torch.distributed) replaced by thin wrappers, the way msprobe does it, so that entry names
match (``Functional.linear.0.forward``, ``Tensor.__add__.0.forward``, ...).

A wrapper costs one global load and a call while nothing is collected (``ACTIVE is None``);
otherwise it hands the call to the collecting hooks (_api_hooks). Wrapping happens once, when the
PrecisionDebugger is created (so that APIs imported by name later are wrapped too), and is
undone when the dump has ended."""
# SPDX-License-Identifier: GPL-3.0-or-later
import functools
import inspect

from . import _wrap_lists

# The ApiHooks collecting right now, or None (set by _api_hooks; read by every wrapper).
ACTIVE = None


def _make_wrapper(original, api_prefix):
    def probe_api(*args, **kwargs):
        hooks = ACTIVE
        if hooks is None or hooks.tls.inside:  # not collecting, or nested in a wrapped call
            return original(*args, **kwargs)
        return hooks.call_api(original, api_prefix, args, kwargs)

    try:
        functools.update_wrapper(probe_api, original)
    except (AttributeError, TypeError):
        pass
    probe_api._probe_original = original
    probe_api._probe_api = api_prefix
    if inspect.isfunction(original):
        # torch.jit.script compiles the wrapped Python function instead of this wrapper (the
        # mechanism torch.jit._script_if_tracing uses).
        setattr(probe_api, "__script_if_tracing_wrapper", True)
        setattr(probe_api, "__original_fn", original)
    return probe_api


def _jit_builtin_table():
    """TorchScript's table of Python callables that are aten ops (id -> op name), or None."""
    try:
        from torch.jit import _builtins
        return _builtins._get_builtin_table()
    except Exception:
        return None


def _targets(torch):
    """(owner object, attribute, entry prefix) for every API of the lists present in this torch."""
    targets = []
    F = torch.nn.functional
    for name in _wrap_lists.FUNCTIONAL:
        targets.append((F, name, "Functional." + name + "."))
    for name in _wrap_lists.TENSOR:
        targets.append((torch.Tensor, name, "Tensor." + name + "."))
    for name in _wrap_lists.TORCH:
        if name.startswith("linalg."):
            # msprobe names torch.linalg.norm "Torch.norm" (shared counter with torch.norm).
            short = name.split(".")[-1]
            targets.append((torch.linalg, short, "Torch." + short + "."))
        else:
            targets.append((torch, name, "Torch." + name + "."))
    vf = getattr(torch, "_VF", None)
    if vf is not None:
        for name in _wrap_lists.VF:
            targets.append((vf, name, "VF." + name + "."))
    try:
        import torch.distributed as dist
        if dist.is_available():
            from torch.distributed import distributed_c10d
            for name in _wrap_lists.DISTRIBUTED:
                targets.append((dist, name, "Distributed." + name + "."))
                if distributed_c10d is not dist:
                    targets.append((distributed_c10d, name, "Distributed." + name + "."))
    except ImportError:
        pass
    return targets


def _wrappable(value):
    return value is not None and callable(value) and not isinstance(value, type)


class ApiWrapping:
    """The wrappers installed in torch, and how to put the originals back."""

    def __init__(self):
        self._patched = []  # (owner, attribute, original, owner had its own attribute)
        self._jit_ids = []  # our wrappers entered in TorchScript's builtin table
        self.count = 0

    def install(self, torch):
        if self._patched:
            return
        # Built now, from the originals; each wrapper of a builtin is then entered as the same
        # aten op, so that scripted code calling torch.add & co still compiles.
        jit_table = _jit_builtin_table()
        for owner, attr, prefix in _targets(torch):
            try:
                original = getattr(owner, attr, None)
            except Exception:
                continue
            if not _wrappable(original) or getattr(original, "_probe_original", None) is not None:
                continue
            owned = attr in vars(owner) if hasattr(owner, "__dict__") else True
            wrapper = _make_wrapper(original, prefix)
            try:
                setattr(owner, attr, wrapper)
            except (AttributeError, TypeError):
                continue
            self._patched.append((owner, attr, original, owned))
            if jit_table is not None and id(original) in jit_table:
                jit_table[id(wrapper)] = jit_table[id(original)]
                self._jit_ids.append(id(wrapper))
        self.count = len(self._patched)

    def uninstall(self):
        jit_table = _jit_builtin_table()
        if jit_table is not None:
            for key in self._jit_ids:
                jit_table.pop(key, None)
        self._jit_ids = []
        while self._patched:
            owner, attr, original, owned = self._patched.pop()
            try:
                if owned:
                    setattr(owner, attr, original)
                else:
                    delattr(owner, attr)  # back to the inherited attribute (torch.Tensor methods)
            except (AttributeError, TypeError):
                pass
        self.count = 0
