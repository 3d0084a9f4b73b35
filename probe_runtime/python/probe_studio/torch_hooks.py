"""Dumps an unchanged PyTorch program: modules become the layer-level ops.

Armed by ``probe_studio/_inject/sitecustomize.py`` (``probe run``, the load script). Once
``torch`` is imported it loads the C++ adapter, starts the runtime (output directory and
config from ``PROBE_OUTPUT_DIR`` / ``PROBE_CONFIG``), and installs global nn.Module forward
hooks:

* the outermost module called is the model; the modules it calls directly are layer-level
  ops (named by attribute path, typed by class), nested modules their children;
* aten ops, seen by the adapter through ``at::RecordFunction``, become children of the
  innermost module; aten ops the outermost module calls itself are layer-level ops;
* ``torch.autograd.backward``/``grad`` are bracketed so backward nodes group per layer.

Nothing here may disturb the model: every hook catches everything and returns None, tensors
are only read.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import atexit
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import sys
import threading
import weakref

from . import _native, _paths

try:
    from . import _build_info
except ImportError:  # an unbuilt source tree
    _build_info = None

_armed = False
_installed = False
_report_tensors = None  # torch.ops.probe.report_tensors
_runtime = None
_adapter = None
_failures = {}


def _say(message):
    sys.stderr.write("[probe] %s\n" % message)


def _failure(where, exc):
    count = _failures.get(where, 0)
    _failures[where] = count + 1
    if count < 3:
        _say("error in %s: %r (the model continues)" % (where, exc))


def _record_injection(status, message=""):
    """One line per process in <output>/atb_dump_data/probe_injection.jsonl, read by `probe run`."""
    out = os.environ.get("PROBE_OUTPUT_DIR")
    if not out:
        return
    try:
        root = os.path.join(out, "atb_dump_data")
        os.makedirs(root, exist_ok=True)
        line = json.dumps({"pid": os.getpid(), "status": status, "message": message,
                           "python": sys.executable}) + "\n"
        with open(os.path.join(root, "probe_injection.jsonl"), "a") as f:
            f.write(line)
    except OSError:
        pass


# ------------------------------------------------------------------------------------------
# Arming: wait for torch to be imported.

class _TorchImportWatcher(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps torch's loader so the probe installs right after torch."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None and spec.loader is not None:
                original = spec.loader

                class _Loader(importlib.abc.Loader):
                    def create_module(self, s):
                        return original.create_module(s)

                    def exec_module(self, module):
                        original.exec_module(module)
                        _remove_watcher()
                        install(module)

                spec.loader = _Loader()
                return spec
        return None


_watcher = None


def _remove_watcher():
    global _watcher
    if _watcher is not None and _watcher in sys.meta_path:
        sys.meta_path.remove(_watcher)
    _watcher = None


def arm():
    """Install the probe when torch gets imported (now, if it already is)."""
    global _armed, _watcher
    if _armed:
        return
    _armed = True
    if "torch" in sys.modules:
        install(sys.modules["torch"])
        return
    _watcher = _TorchImportWatcher()
    sys.meta_path.insert(0, _watcher)


# ------------------------------------------------------------------------------------------
# Installing

def _major_minor(version):
    parts = str(version).split("+")[0].split(".")
    return tuple(int("".join(ch for ch in p if ch.isdigit()) or 0) for p in parts[:2])


def install(torch):
    """Load the adapter, start the runtime, hook modules and autograd. Safe to call twice."""
    global _installed, _report_tensors, _runtime, _adapter
    if _installed:
        return True
    built = getattr(_build_info, "TORCH_BUILT_VERSION", "unknown") if _build_info else "unknown"
    if _build_info is None or not _build_info.HAVE_TORCH_ADAPTER or not os.path.exists(_paths.TORCH_ADAPTER_LIBRARY):
        message = "this Probe Studio was built without the PyTorch adapter; the program runs without the probe"
        _say("error: " + message)
        _record_injection("no_adapter", message)
        return False
    if _major_minor(torch.__version__) != _major_minor(built):
        message = ("torch %s is not the version the adapter was built for (%s); the program runs without "
                   "the probe. Use the interpreter of that torch (Debian: /usr/bin/python3)."
                   % (torch.__version__, built))
        _say("error: " + message)
        _record_injection("torch_mismatch", message)
        return False
    try:
        _adapter = _native.load_adapter(torch)
        _report_tensors = torch.ops.probe.report_tensors
        _runtime = _native.runtime()
        if _runtime.probe_start(None, None) != 0:
            message = "the probe could not start: %s" % _runtime.probe_last_error().decode(errors="replace")
            _say("error: " + message)
            _record_injection("start_failed", message)
            return False
    except Exception as exc:
        _say("error: could not load the PyTorch adapter: %r; the program runs without the probe" % (exc,))
        _record_injection("load_failed", repr(exc))
        return False

    torch.nn.modules.module.register_module_forward_pre_hook(_pre_hook)
    torch.nn.modules.module.register_module_forward_hook(_post_hook)
    _bracket_autograd(torch)
    atexit.register(_at_exit)
    _installed = True
    _record_injection("attached")
    return True


def _at_exit():
    try:
        _runtime.probe_stop()
    except Exception:
        pass


def _bracket_autograd(torch):
    """Mark each backward pass so its nodes group under per-layer backward ops."""
    autograd = torch.autograd
    for name in ("backward", "grad"):
        original = getattr(autograd, name)
        if getattr(original, "_probe_bracketed", False):
            continue

        def bracketed(*args, _original=original, **kwargs):
            try:
                _adapter.probe_torch_backward_begin()
            except Exception as exc:
                _failure("backward", exc)
            try:
                return _original(*args, **kwargs)
            finally:
                try:
                    _adapter.probe_torch_backward_end()
                except Exception as exc:
                    _failure("backward", exc)

        bracketed._probe_bracketed = True
        bracketed.__wrapped__ = original
        bracketed.__doc__ = original.__doc__
        setattr(autograd, name, bracketed)


# ------------------------------------------------------------------------------------------
# Module hooks

_ROOT = 0
_CHILD = 1


class _ThreadState(threading.local):
    def __init__(self):
        self.stack = []      # [(module, kind, wants)], the root first
        self.names = {}      # id(module) -> attribute path, for the current root


_state = _ThreadState()
_names_by_root = weakref.WeakKeyDictionary()
_params_by_module = weakref.WeakKeyDictionary()
_arg_names_by_class = {}


def _module_names(root):
    names = _names_by_root.get(root)
    if names is None:
        names = {id(m): path for path, m in root.named_modules() if path}
        _names_by_root[root] = names
    return names


def _module_param(module):
    """The module's simple settings (in_features, eps, p, ...) as JSON, computed once."""
    cached = _params_by_module.get(module)
    if cached is None:
        params = {}
        for key, value in vars(module).items():
            if key.startswith("_"):
                continue
            if isinstance(value, (bool, int, float, str)):
                params[key] = value
            elif isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str)) for v in value):
                params[key] = list(value)
        cached = json.dumps(params).encode() if params else b""
        _params_by_module[module] = cached
    return cached


def _arg_names(module):
    cls = type(module)
    names = _arg_names_by_class.get(cls)
    if names is None:
        try:
            parameters = list(inspect.signature(cls.forward).parameters.values())[1:]
            names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            names = []
        _arg_names_by_class[cls] = names
    return names


def _flatten(value, name, tensors, names, torch_tensor):
    """Collect the tensors in a (nested) value, each with a name for its file: the argument
    name, with the position appended inside lists ("past0"), the key inside dicts."""
    if isinstance(value, torch_tensor):
        tensors.append(value)
        names.append(name)
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            _flatten(item, "%s%d" % (name, i) if name else "", tensors, names, torch_tensor)
    elif isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, str(key), tensors, names, torch_tensor)


def _report(io, value, arg_names):
    import torch
    tensors, names = [], []
    if io == 0:
        for i, item in enumerate(value):
            _flatten(item, arg_names[i] if i < len(arg_names) else "", tensors, names, torch.Tensor)
    elif isinstance(value, torch.Tensor):
        tensors.append(value)
        names.append("")
    else:
        _flatten(value, "", tensors, names, torch.Tensor)
    if tensors:
        _report_tensors(io, tensors, names)


def _unwind(depth):
    """Close ops left open by an exception that went through modules: keep `depth` entries."""
    state = _state
    del state.stack[depth:]
    _adapter.probe_torch_unwind_to(max(0, depth - 1))
    if depth == 0:
        _adapter.probe_torch_root_end()


def _pre_hook(module, args):
    try:
        state = _state
        stack = state.stack
        if stack and stack[0][0] is module:
            _unwind(0)  # the model called again while it seemed to run: an exception ended the last call
        if not stack:
            state.names = _module_names(module)
            _adapter.probe_torch_root_begin(type(module).__name__.encode())
            stack.append((module, _ROOT, 0))
            return None
        path = state.names.get(id(module))
        if path is None:
            name = type(module).__name__  # created on the fly, not an attribute of the model
        elif len(stack) == 1:
            name = path  # a layer-level op: its full attribute path ("layers.0")
        else:
            name = path.rsplit(".", 1)[-1]  # a child: its attribute name ("self_attn")
        wants = _adapter.probe_torch_module_begin(name.encode(), type(module).__name__.encode())
        stack.append((module, _CHILD, wants))
        if wants & _native.WANTS_TENSORS:
            param = _module_param(module)
            if param:
                _runtime.probe_op_set_param(param)
            _report(0, args, _arg_names(module))
    except Exception as exc:
        _failure("module pre-hook", exc)
    return None


def _post_hook(module, args, output):
    try:
        stack = _state.stack
        if not stack:
            return None
        if stack[-1][0] is not module:
            # An exception inside this module's forward skipped some post-hooks; close those.
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] is module:
                    _unwind(depth + 1)
                    break
            else:
                return None
        if stack[-1][1] == _ROOT:
            stack.pop()
            _adapter.probe_torch_root_end()
            return None
        if stack[-1][2] & _native.WANTS_TENSORS:
            _report(1, output, ())
        _adapter.probe_torch_module_end()
        stack.pop()
    except Exception as exc:
        _failure("module post-hook", exc)
    return None
