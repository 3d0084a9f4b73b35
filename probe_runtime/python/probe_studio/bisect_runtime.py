"""The in-process part of `probe bisect`: applies one trial's plan to an unchanged PyTorch program.

Installed by probe_studio/_bisect_inject/sitecustomize.py once torch is imported. The plan is a
JSON file named by $PROBE_BISECT_PLAN:

    {"output": "<file>",        # torch.save'd list of the final output's tensors
     "catalog": "<file>"|null,  # write what ran: modules and ops, with their output dtypes
     "dtypes": "<file>"|null,   # a catalog of the target run: the dtypes kept units cast back to
     "autocast": "bfloat16"|"float16"|null,   # the target precision as autocast around the model
     "keep_modules": ["layers.2", ...],       # run at reference precision, as a whole
     "keep_ops": ["layers.2.mlp:linear#1", ...]}  # run at reference precision, one call each

The model is the first module called while no module runs (the outermost module); the final
output is what its last call returned. Its submodules are named by attribute path
(model.named_modules()); the torch functions called while a module is the innermost one running
are counted per module call with a torch function mode (torch.overrides.TorchFunctionMode):
"<module path>:<function>#<n>" is the n-th call of that function in one call of that module, the
same in every run of a program whose control flow does not depend on precision.

A kept unit runs at reference precision: autocast is off inside it and its floating float16 /
bfloat16 inputs (for ops inside a kept module also the module's parameters, which reach the ops
as inputs) are upcast to float32. Its floating outputs are then cast back to the dtypes they had
in the target run, so that a kept unit changes the precision of its own computation only, not of
what follows. In-place ops are never kept (an upcast copy would take the write).
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import atexit
import json
import os
import sys
import threading

PLAN_VARIABLE = "PROBE_BISECT_PLAN"
LOW_PRECISION = ("float16", "bfloat16")
IN_PLACE_DUNDERS = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
                    "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__setitem__", "__set__"}

_torch = None
_state = None


def _say(message):
    sys.stderr.write("[probe bisect] %s\n" % message)


def function_name(func):
    name = getattr(func, "__name__", None)
    if name in ("__get__", "__set__"):
        owner = getattr(func, "__self__", None)
        name = "%s.%s" % (getattr(owner, "__name__", "attr"), name)
    return name or type(func).__name__


def is_in_place(name, kwargs):
    base = name.rsplit(".", 1)[-1]
    if base in IN_PLACE_DUNDERS or kwargs.get("out") is not None:
        return True
    return base.endswith("_") and not base.startswith("__")


def map_tensors(value, fn):
    """`value` with fn applied to every tensor inside tuples, lists and dicts (types kept)."""
    torch = _torch
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, tuple):
        mapped = [map_tensors(v, fn) for v in value]
        return type(value)(*mapped) if hasattr(value, "_fields") else tuple(mapped)
    if isinstance(value, list):
        return [map_tensors(v, fn) for v in value]
    if isinstance(value, dict):
        return type(value)((k, map_tensors(v, fn)) for k, v in value.items()) if type(value) is not dict \
            else {k: map_tensors(v, fn) for k, v in value.items()}
    return value


def floating_dtypes(value):
    """Dtype names of the floating tensors inside `value`, in map_tensors order."""
    names = []

    def note(t):
        if t.is_floating_point():
            names.append(str(t.dtype).replace("torch.", ""))
        return t
    map_tensors(value, note)
    return names


def upcast(value):
    torch = _torch

    def one(t):
        if t.is_floating_point() and t.dtype in (torch.float16, torch.bfloat16):
            return t.float()
        return t
    return map_tensors(value, one)


def cast_back(value, dtypes):
    """Floating tensors of `value` to the dtypes the target run gave them (in order)."""
    torch = _torch
    if not dtypes:
        return value
    position = [0]

    def one(t):
        if not t.is_floating_point():
            return t
        i = position[0]
        position[0] += 1
        if i < len(dtypes):
            wanted = getattr(torch, dtypes[i])
            if t.dtype != wanted:
                return t.to(wanted)
        return t
    return map_tensors(value, one)


class _Frame:
    __slots__ = ("path", "counters", "kept")

    def __init__(self, path, kept):
        self.path, self.counters, self.kept = path, {}, kept


class _State(threading.local):
    def __init__(self):
        self.stack = []  # the modules running on this thread, innermost last


class _Trial:
    def __init__(self, plan):
        self.plan = plan
        self.keep_modules = set(plan.get("keep_modules") or [])
        self.keep_ops = set(plan.get("keep_ops") or [])
        self.autocast = plan.get("autocast")
        self.recording = bool(plan.get("catalog"))
        self.root = None
        self.names = {}
        self.last_output = None
        self.modules, self.ops = {}, {}
        self.target_modules, self.target_ops = {}, {}
        if plan.get("dtypes"):
            with open(plan["dtypes"]) as f:
                catalog = json.load(f)
            self.target_modules = catalog.get("modules", {})
            self.target_ops = catalog.get("ops", {})
        self.local = _State()
        self.lock = threading.Lock()
        self.device_type = "cpu"

    # -------------------------------------------------------------------------------------
    def module_path(self, module, parent):
        path = self.names.get(id(module))
        if path is not None:
            return path
        # A module not among the model's (made on the fly): named under its caller.
        return "%s.<%s>" % (parent.path if parent else "", type(module).__name__)

    def call_module(self, original, module, args, kwargs):
        torch = _torch
        stack = self.local.stack
        top = not stack
        if top:
            if self.root is None:
                self.root = module
                self.names = {id(m): name for name, m in module.named_modules()}
                for p in module.parameters():
                    self.device_type = p.device.type
                    break
            path = "" if module is self.root else "@%s" % type(module).__name__
        else:
            path = self.module_path(module, stack[-1])
        parent = stack[-1] if stack else None
        kept_here = path in self.keep_modules and not (parent and parent.kept)
        frame = _Frame(path, kept_here or bool(parent and parent.kept))
        if self.recording and not frame.kept and path not in self.modules:
            self.modules[path] = {"class": type(module).__name__, "order": len(self.modules),
                                  "parent": parent.path if parent else None, "outputs": None}
        contexts = []
        try:
            if top and module is self.root:
                if self.autocast:
                    contexts.append(torch.autocast(device_type=self.device_type,
                                                   dtype=getattr(torch, self.autocast)))
                if self.recording or self.keep_ops or self.keep_modules:  # the reference run needs no counting
                    contexts.append(_FunctionCounter(self))
            if kept_here:
                contexts.append(torch.autocast(device_type=self.device_type, enabled=False))
                args, kwargs = upcast(args), upcast(kwargs)
            for c in contexts:
                c.__enter__()
            stack.append(frame)
            try:
                output = original(module, *args, **kwargs)
            finally:
                stack.pop()
        finally:
            for c in reversed(contexts):
                c.__exit__(None, None, None)
        if kept_here:
            output = cast_back(output, (self.target_modules.get(path) or {}).get("outputs"))
        if self.recording and path in self.modules and self.modules[path]["outputs"] is None:
            self.modules[path]["outputs"] = floating_dtypes(output)
        if module is self.root:
            self.last_output = map_tensors(output, lambda t: t.detach())
        return output

    def call_function(self, func, args, kwargs):
        torch = _torch
        stack = self.local.stack
        if not stack:
            return func(*args, **kwargs)
        frame = stack[-1]
        name = function_name(func)
        n = frame.counters.get(name, 0)
        frame.counters[name] = n + 1
        if frame.kept:
            with torch.autocast(device_type=self.device_type, enabled=False):
                return func(*upcast(args), **upcast(kwargs))
        key = "%s:%s#%d" % (frame.path, name, n)
        if key in self.keep_ops and not is_in_place(name, kwargs):
            with torch.autocast(device_type=self.device_type, enabled=False):
                result = func(*upcast(args), **upcast(kwargs))
            return cast_back(result, (self.target_ops.get(key) or {}).get("outputs"))
        result = func(*args, **kwargs)
        if self.recording and key not in self.ops:
            outputs = floating_dtypes(result)
            if outputs:
                self.ops[key] = {"module": frame.path, "function": name, "order": len(self.ops),
                                 "outputs": outputs, "in_place": is_in_place(name, kwargs)}
        return result

    # -------------------------------------------------------------------------------------
    def finish(self):
        torch = _torch
        try:
            if self.last_output is None:
                _say("no module of the program was called: nothing to compare (is the model an nn.Module?)")
                return
            tensors = []
            map_tensors(self.last_output, lambda t: tensors.append(t.detach().cpu()) or t)
            torch.save(tensors, self.plan["output"])
            if self.recording:
                root = type(self.root).__name__
                with open(self.plan["catalog"] + ".tmp", "w") as f:
                    json.dump({"root": root, "modules": self.modules, "ops": self.ops}, f)
                os.replace(self.plan["catalog"] + ".tmp", self.plan["catalog"])
        except Exception as exc:
            _say("could not save the trial's output: %r" % (exc,))


def _function_counter_class(torch):
    class FunctionCounter(torch.overrides.TorchFunctionMode):
        def __init__(self, trial):
            super().__init__()
            self.trial = trial

        def __torch_function__(self, func, types, args=(), kwargs=None):
            return self.trial.call_function(func, args, kwargs or {})
    return FunctionCounter


_FunctionCounter = None


def install(torch):
    """Applies the plan of $PROBE_BISECT_PLAN to this process."""
    global _torch, _state, _FunctionCounter
    if _state is not None:
        return
    _torch = torch
    try:
        with open(os.environ[PLAN_VARIABLE]) as f:
            plan = json.load(f)
    except (OSError, ValueError, KeyError) as exc:
        _say("cannot read the plan %s: %r" % (os.environ.get(PLAN_VARIABLE), exc))
        return
    # Child processes (data loaders) inherit the environment: only this process runs the trial.
    os.environ.pop(PLAN_VARIABLE, None)
    _FunctionCounter = _function_counter_class(torch)
    trial = _state = _Trial(plan)
    original = torch.nn.Module.__call__

    def __call__(self, *args, **kwargs):
        return trial.call_module(original, self, args, kwargs)
    torch.nn.Module.__call__ = __call__
    atexit.register(trial.finish)
