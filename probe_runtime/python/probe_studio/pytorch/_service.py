"""The collecting service behind PrecisionDebugger: hooks, entry naming, selection, statistics
(by the C++ core, one call per batch of tensors) and the msprobe layout on disk
(FORMATS.md section 2).

Rules that keep the model safe:
  * every hook catches everything (errors go to dump_error_info.log and stderr) and returns
    None, so nothing the model computes is replaced;
  * the autograd graph is never changed: backward data comes from hooks on the autograd nodes
    that the forward already created (post-hooks of grad_fn / AccumulateGrad), not from extra
    identity nodes, so in-place modules keep working and results are bit-identical;
  * our own tensor work runs with the thread's "inside" flag set, so it is neither dumped nor
    counted, and it is done on detached tensors.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import atexit
import functools
import linecache
import os
import signal
import sys
import threading
import time
import traceback
import weakref

import torch

from . import _api_wrap, _jsonio, _ops
from ._jsonio import TensorItem
from ._config import BACKWARD, FORWARD, INPUT, OUTPUT

_Tensor = torch.Tensor
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_DROPOUT_APIS = frozenset((
    "Functional.dropout.", "Functional.dropout1d.", "Functional.dropout2d.", "Functional.dropout3d.",
    "Functional.alpha_dropout.", "Functional.feature_alpha_dropout.", "Torch.dropout.", "Torch.dropout_.",
    "Torch.alpha_dropout.", "Torch.alpha_dropout_.", "Torch.feature_alpha_dropout.",
    "Torch.feature_alpha_dropout_.", "Torch.feature_dropout.", "Torch.feature_dropout_."))
_MEMORY_FORMATS = {torch.contiguous_format: "contiguous_format", torch.channels_last: "channels_last",
                   torch.channels_last_3d: "channels_last_3d", torch.preserve_format: "preserve_format"}
_MAX_DEPTH = 64
_FLUSH_EVERY = 1000  # entries: dump.json is also rewritten during long steps


def _say(message):
    sys.stderr.write("[probe] %s\n" % message)


# ------------------------------------------------------------------------------------------
# dtype names and kinds

_dtype_cache = {}


def _dtype_info(dtype):
    info = _dtype_cache.get(dtype)
    if info is None:
        if dtype is torch.bool:
            kind = "b"
        elif dtype.is_complex:
            kind = "c"
        elif dtype.is_floating_point:
            kind = "f"
        else:
            kind = "i"
        info = _dtype_cache[dtype] = (str(dtype), kind)
    return info


try:
    import numpy as _np
except ImportError:  # numpy is optional for torch
    _np = None


# ------------------------------------------------------------------------------------------
# One batch of values turned into JSON; all tensors summarised by one C++ call.

class _Batch:
    __slots__ = ("service", "entry", "items", "tensors", "kinds")

    def __init__(self, service, entry):
        self.service = service
        self.entry = entry
        self.items = []
        self.tensors = []
        self.kinds = []

    def tensor(self, t, suffix):
        name, kind = _dtype_info(t.dtype)
        item = TensorItem(type="torch.Tensor", dtype=name, shape=list(t.shape), Max=None, Min=None, Mean=None,
                          Norm=None, requires_grad=t.requires_grad)
        service = self.service
        if service.tensor_dir is not None:
            file_name = "%s.%s.pt" % (self.entry, suffix)
            if service.save_tensor(t, file_name):
                item["data_name"] = file_name
        md5 = service.md5
        if md5:
            item["md5"] = None
        cache = service.stat_cache
        if cache is not None:
            # The same tensor, unchanged since it was summarised in this forward pass (a module's
            # parameters after the API that used them, a module's output after its last API).
            hit = cache.get(id(t))
            if hit is not None and hit[0]() is t and hit[1] == _version(t):
                item["Max"], item["Min"], item["Mean"], item["Norm"] = hit[2]
                if md5:
                    item["md5"] = hit[3]
                return item
        self.items.append(item)
        self.tensors.append(t)
        self.kinds.append(kind)
        return item

    def value(self, v, suffix, key=None, depth=0):
        if isinstance(v, _Tensor):
            return self.tensor(v, suffix)
        if v is None:
            return None
        if key is not None:
            if key == "dtype" or key == "output_dtype":
                return {"type": "torch.dtype", "value": str(v)}
            if key == "device":
                if isinstance(v, (int, str)):
                    return {"type": "torch.device", "value": v}
                if isinstance(v, torch.device):
                    return {"type": "torch.device", "value": "%s:%s" % (v.type, v.index)}
                return {"type": "torch.device"}
        t = type(v)
        if t is bool or t is int or t is float or t is str:
            return {"type": t.__name__, "value": v}
        if depth > _MAX_DEPTH:
            return None
        if isinstance(v, torch.Size):
            return {"type": "torch.Size", "value": [int(x) for x in v]}
        if isinstance(v, (list, tuple)):
            fields = getattr(v, "_fields", None)
            if fields is not None and isinstance(v, tuple):  # a namedtuple: an object of its fields
                return {f: self.value(x, "%s.%s" % (suffix, f), f, depth + 1) for f, x in zip(fields, v)}
            return [self.value(x, "%s.%d" % (suffix, i), None, depth + 1) for i, x in enumerate(v)]
        if isinstance(v, dict):
            return {str(k): self.value(x, "%s.%s" % (suffix, k), k if isinstance(k, str) else None, depth + 1)
                    for k, x in v.items()}
        if isinstance(v, (int, float, str)):  # subclasses (IntEnum, ...)
            return {"type": t.__name__, "value": v}
        if v is Ellipsis:
            return {"type": "ellipsis", "value": "..."}
        if isinstance(v, slice):
            return {"type": "slice", "value": [_slice_part(v.start), _slice_part(v.stop), _slice_part(v.step)]}
        if isinstance(v, torch.memory_format):
            return {"type": "torch.memory_format", "format": _MEMORY_FORMATS.get(v)}
        if isinstance(v, (torch.dtype, torch.device)):
            return {}
        if _np is not None:
            if isinstance(v, _np.ndarray):
                return _ndarray(v)
            if isinstance(v, _np.generic):
                return {"type": type(v).__name__, "value": v.item()}
        return None

    def args(self, args, category):
        return [self.value(v, "%s.%d" % (category, i)) for i, v in enumerate(args)]

    def kwargs(self, kwargs):
        return {str(k): self.value(v, "kwargs.%s" % k, k) for k, v in kwargs.items()}

    def output(self, output):
        if not isinstance(output, tuple) or hasattr(output, "_fields"):
            output = (output,)
        return [self.value(v, "output.%d" % i) for i, v in enumerate(output)]

    def finish(self):
        """Computes the statistics of every tensor of the batch in one call to the C++ core."""
        if not self.tensors:
            return
        service = self.service
        md5 = service.md5
        rows, ints = _ops.tensor_summaries(self.tensors, md5)
        if rows is None or ints is None:  # the C++ side could not allocate its result: statistics stay null
            self.tensors = []
            return
        rows = rows.tolist()
        ints = ints.tolist()
        for item, kind, row, exact in zip(self.items, self.kinds, rows, ints):
            if row[4]:
                if kind == "f":
                    item["Max"] = row[0]
                    item["Min"] = row[1]
                    item["Mean"] = row[2]
                    item["Norm"] = row[3]
                elif kind == "i":
                    item["Max"] = exact[0]
                    item["Min"] = exact[1]
                    if not item["shape"]:
                        item["Mean"] = item["Norm"] = exact[0]
                elif kind == "b":
                    item["Max"] = row[0] != 0.0
                    item["Min"] = row[1] != 0.0
                else:  # complex: statistics of the magnitude, no norm
                    item["Max"] = row[0]
                    item["Min"] = row[1]
                    item["Mean"] = row[2]
            if md5:
                item["md5"] = "%08x" % int(row[5])
        cache = service.stat_cache
        if cache is not None:
            for item, t in zip(self.items, self.tensors):
                version = _version(t)
                if version is not None:
                    cache[id(t)] = (weakref.ref(t), version, (item["Max"], item["Min"], item["Mean"], item["Norm"]),
                                    item.get("md5"))
        self.tensors = []


def _version(t):
    """The tensor's version counter (bumped by every in-place change), None when it has none
    (inference-mode tensors)."""
    try:
        return t._version
    except RuntimeError:
        return None


def _slice_part(x):
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    try:
        return int(x)
    except Exception:
        return None


def _ndarray(a):
    info = {"type": "numpy.ndarray", "dtype": str(a.dtype), "shape": list(a.shape),
            "Max": None, "Min": None, "Mean": None, "Norm": None}
    try:
        if a.size and a.dtype.kind in "biuf":
            info["Max"] = a.max().item()
            info["Min"] = a.min().item()
            if a.dtype.kind == "f":
                info["Mean"] = a.mean().item()
                info["Norm"] = float(_np.linalg.norm(a))
    except Exception:
        pass
    return info


def _first_tensor(value, depth=0):
    """msprobe's choice of the output whose autograd node gets the API's backward hook."""
    if isinstance(value, _Tensor):
        return value
    if depth > 8:
        return None
    if isinstance(value, dict):
        for v in value.values():
            if isinstance(v, _Tensor):
                return v
        return None
    if isinstance(value, (list, tuple)) and value:
        return _first_tensor(value[0], depth + 1)
    return None


def _grad_tensors(value, out, depth=0):
    """Tensors among `value` (recursively) that take part in autograd."""
    if isinstance(value, _Tensor):
        if value.requires_grad:
            out.append(value)
    elif depth < 16:
        if isinstance(value, (list, tuple)):
            for v in value:
                _grad_tensors(v, out, depth + 1)
        elif isinstance(value, dict):
            for v in value.values():
                _grad_tensors(v, out, depth + 1)
    return out


def _backward_name(forward_name):
    """Module.a.Linear.forward.3 -> Module.a.Linear.backward.3 (None stays None)."""
    if forward_name is None:
        return None
    if forward_name.startswith("Module."):
        head, _, tail = forward_name.rpartition(".forward.")
        return head + ".backward." + tail
    return forward_name[: -len("forward")] + "backward"


# ------------------------------------------------------------------------------------------
# Selection: scope (a range of entries) and list (names or fragments)

class _Scope:
    """Entries from the one named scope[0] to the one named scope[1], inclusive, in the order
    they are met: an API's forward begins at its call, a module's at its forward pre-hook."""

    __slots__ = ("first", "last", "enabled", "inside")

    def __init__(self, scope):
        self.enabled = bool(scope)
        self.first, self.last = (scope[0], scope[1]) if scope else (None, None)
        self.inside = False

    def begin(self, name):
        if name == self.first:
            self.inside = True

    def end(self, name):
        if name == self.last:
            self.inside = False


class _ThreadState(threading.local):
    def __init__(self):
        super().__init__()
        self.inside = False      # in a wrapped API's original call, or in our own work
        self.module_stack = []   # forward entry names of the modules running on this thread
        self.module_calls = []   # _ModuleCall of those modules
        self.expand = 0          # mix: modules selected by `list` that are running
        self.suppress = 0        # module_dump: inside a module dumped as a whole
        self.dumped_calls = []   # module_dump: modules whose call raised `suppress`


class _ModuleCall:
    __slots__ = ("module", "prefix", "name", "parent", "depth", "serial", "inputs", "expands")

    def __init__(self, module, prefix, name, parent, depth, serial, inputs, expands):
        self.module = module
        self.prefix = prefix
        self.name = name
        self.parent = parent
        self.depth = depth
        self.serial = serial
        self.inputs = inputs
        self.expands = expands


class _ModuleBackward:
    """One module call's backward entry, filled as autograd reaches the module's outputs
    (its "input": gradients of the outputs) and inputs (its "output")."""

    __slots__ = ("service", "name", "parent", "serial", "n_out", "n_in", "entry", "selected")

    def __init__(self, service, name, parent, serial, n_out, n_in):
        self.service = service
        self.name = name
        self.parent = parent
        self.serial = serial
        self.n_out = n_out
        self.n_in = n_in
        self.entry = None
        self.selected = None

    def node_output(self, index, output_nr, grad_inputs, grad_outputs):
        grad = grad_outputs[output_nr] if output_nr < len(grad_outputs) else None
        self.service.module_backward_grad(self, "input", index, grad)

    def node_input(self, index, output_nr, grad_inputs, grad_outputs):
        grad = grad_outputs[output_nr] if output_nr < len(grad_outputs) else None
        self.service.module_backward_grad(self, "output", index, grad)

    def leaf_output(self, index, grad):
        self.service.module_backward_grad(self, "input", index, grad)

    def leaf_input(self, index, grad):
        self.service.module_backward_grad(self, "output", index, grad)


def _autograd_place(t):
    """(node, output number) whose post-hook sees the gradient of `t` as it is now, or
    (None, None) for a leaf (hooked on the tensor itself)."""
    fn = t.grad_fn
    if fn is None:
        return None, None
    return fn, t.output_nr


# ------------------------------------------------------------------------------------------

class Service:
    def __init__(self, config):
        self.config = config
        self.pid = os.getpid()
        self.tls = _ThreadState()
        self.lock = threading.RLock()
        self.md5 = config.summary_mode == "md5"
        self.mix = config.level == "mix"
        allowed = config.allowed
        self.fwd_in = FORWARD in allowed and INPUT in allowed
        self.fwd_out = FORWARD in allowed and OUTPUT in allowed
        self.want_forward = FORWARD in allowed
        self.want_backward = BACKWARD in allowed
        self.bwd_in = BACKWARD in allowed and INPUT in allowed
        self.bwd_out = BACKWARD in allowed and OUTPUT in allowed
        self.list = tuple(config.list)
        self.current_iter = 0
        self.step_serial = 0
        self.running = False   # start() .. stop() in a selected step and rank
        self.gate = True       # token_range
        self.active = False    # running and gate: hooks collect
        self.ended = False
        self.token_range = None
        self.token_id = 0
        self.models = []
        self.stat_cache = None  # id(tensor) -> statistics, only during a forward pass of the model
        self.root_depth = 0
        self._roots = {}          # id(model) -> weakref: the models given to the debugger
        self._prefixes = {}       # id(submodule) -> (weakref, "Module.<path>.<Class>.")
        self._global_handles = []
        self._dump_handles = []
        self._param_hooks = {}
        self._stack_cache = {}
        self._warned = set()
        self._error_count = 0
        self.wrapping = None
        self._reset_step()
        if config.dumps_apis:
            self.wrapping = _api_wrap.ApiWrapping()
            self.wrapping.install(torch)
        atexit.register(_flush_at_exit, weakref.ref(self))
        _install_fork_guard(self)
        _install_sigterm_flush(self)

    # --------------------------------------------------------------------------------------
    # Step state

    def _reset_step(self):
        self.api_counts = {}
        self.module_counts = {}
        self.data = {}
        self.stack_groups = {}
        self.construct = {}
        self.scope = _Scope(self.config.scope)
        self.param_grad_index = {}
        self.selected_modules = set()
        self.step_dir = None
        self.tensor_dir = None
        self.dirty = False
        self.unflushed = 0
        self.errors_this_step = set()

    def _update_active(self):
        active = self.running and self.gate and not self.ended and os.getpid() == self.pid
        self.active = active
        self.stat_cache = None
        self.root_depth = 0
        if self.wrapping is not None:
            _api_wrap.ACTIVE = self if active else None

    def _current_rank(self):
        try:
            dist = torch.distributed
            if dist.is_available() and dist.is_initialized():
                return dist.get_rank()
        except Exception:
            pass
        return None

    def _note_once(self, key, message):
        if key not in self._warned:
            self._warned.add(key)
            _say(message)

    # --------------------------------------------------------------------------------------
    # start / stop / step

    def start(self, model=None, token_range=None):
        if self.ended:
            return
        if model is not None:
            self.add_model(model)
        elif self.config.dumps_modules and not self.models:
            raise ValueError("PrecisionDebugger: level %s dumps modules, so PrecisionDebugger(model=...) or "
                             "start(model=...) must receive the model (a torch.nn.Module or a list of them)"
                             % self.config.level)
        if token_range is not None:
            self._set_token_range(token_range)
        else:
            self.token_range = None
            self.gate = True
        steps = self.config.step
        if steps and self.current_iter > steps[-1]:
            self._end()
            return
        if steps and self.current_iter not in steps:
            return
        rank = self._current_rank()
        if self.config.rank and (0 if rank is None else rank) not in self.config.rank:
            self._note_once("rank", "rank %s is not in the config's rank list %s: this process dumps nothing"
                            % ("0 (no torch.distributed)" if rank is None else rank, self.config.rank))
            return
        if self.step_dir is None and not self._create_step_dir(rank):
            return
        self.running = True
        self._update_active()

    def stop(self):
        if self.ended or not self.running:
            return
        self.running = False
        self._update_active()
        self.flush()

    def step(self):
        if self.ended:
            return
        self.flush()
        self.running = False
        self._update_active()
        self.current_iter += 1
        self.step_serial += 1
        self._reset_step()
        tls = self.tls
        tls.module_stack = []
        tls.module_calls = []
        tls.expand = 0
        tls.suppress = 0
        tls.dumped_calls = []
        steps = self.config.step
        if steps and self.current_iter > steps[-1]:
            self._end()

    def set_init_step(self, step):
        self.current_iter = int(step)

    def _end(self):
        """After the last step of the config's step list: nothing more is collected and every
        hook is removed, so the rest of the run costs nothing. The process goes on."""
        self.flush()
        self.running = False
        self.ended = True
        self._update_active()
        _api_wrap.ACTIVE = None
        if self.wrapping is not None:
            self.wrapping.uninstall()
        for handle in self._global_handles + self._dump_handles:
            try:
                handle.remove()
            except Exception:
                pass
        self._global_handles = []
        self._dump_handles = []
        for _, handle in self._param_hooks.values():
            try:
                handle.remove()
            except Exception:
                pass
        self._param_hooks = {}
        line = "*" * 76
        _say("the last step of the config's step list is done: nothing more is dumped\n%s\n*%s*\n%s"
             % (line, "probe_studio ends successfully.".center(74), line))

    def _set_token_range(self, token_range):
        if (not isinstance(token_range, (list, tuple)) or len(token_range) != 2 or
                not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in token_range) or
                token_range[0] > token_range[1]):
            raise ValueError("PrecisionDebugger.start: token_range must be [first, last], two whole numbers with "
                             "0 <= first <= last (forward calls of the model, counted from 0), not %r"
                             % (token_range,))
        if not self.models:
            raise ValueError("PrecisionDebugger.start: token_range counts the model's forward calls, so start() "
                             "must receive model=...")
        self.token_range = (token_range[0], token_range[1])
        self.token_id = 0
        self.gate = False

    def _create_step_dir(self, rank):
        folder = "rank%d" % rank if rank is not None else "proc%d" % self.pid
        path = os.path.join(self.config.dump_path, "step%d" % self.current_iter, folder)
        try:
            os.makedirs(path, mode=0o750, exist_ok=True)
            tensor_dir = None
            if self.config.task == "tensor":
                tensor_dir = os.path.join(path, "dump_tensor_data")
                os.makedirs(tensor_dir, mode=0o750, exist_ok=True)
        except OSError as exc:
            self._note_once(("mkdir", path), "cannot create the dump directory %s: %s; nothing is dumped for "
                            "this step (the model continues)" % (path, exc.strerror or exc))
            return False
        self.step_dir = path
        self.tensor_dir = tensor_dir
        self.dirty = True
        self.flush()
        self._note_once(("dir", path), "dump data of step %d is written to %s" % (self.current_iter, path))
        return True

    # --------------------------------------------------------------------------------------
    # Models and module hooks (L0 / mix)

    def add_model(self, model):
        """Registers the model(s) whose submodules are dumped (L0, mix) and whose forward calls
        count tokens (token_range). The hooks are process-wide module hooks that look the module
        up here: nothing is stored in the model, so copy.deepcopy(model) and torch.save(model)
        work as without the debugger."""
        models = list(model) if isinstance(model, (list, tuple)) else [model]
        for m in models:
            if not isinstance(m, torch.nn.Module):
                raise TypeError("PrecisionDebugger: model must be a torch.nn.Module or a list of them, not %s"
                                % type(m).__name__)
        is_list = isinstance(model, (list, tuple))
        for index, m in enumerate(models):
            known = self._roots.get(id(m))
            if known is not None and known() is m:
                continue
            self._roots[id(m)] = weakref.ref(m)
            self.models.append(m)
            if not self.config.dumps_modules:
                continue
            for path, sub in m.named_modules():
                if sub is m:
                    continue  # the model itself is not an entry
                known = self._prefixes.get(id(sub))
                if known is not None and known[0]() is sub:
                    continue  # a module shared with a model registered before keeps its first name
                prefix = "Module.%s%s.%s." % ("%d." % index if is_list else "", path, sub.__class__.__name__)
                self._prefixes[id(sub)] = (weakref.ref(sub), prefix)
        if not self._global_handles:
            from torch.nn.modules import module as module_module
            self._global_handles = [module_module.register_module_forward_pre_hook(self._global_pre_hook),
                                    module_module.register_module_forward_hook(self._global_post_hook)]

    def _global_pre_hook(self, module, args):
        key = id(module)
        root = self._roots.get(key)
        if root is not None and root() is module:
            self._root_pre_hook(module, args)
        if self.active:
            info = self._prefixes.get(key)
            if info is not None and info[0]() is module:
                self._module_pre_hook(info[1], module, args)
        return None

    def _global_post_hook(self, module, args, output):
        key = id(module)
        if self.tls.module_calls:
            info = self._prefixes.get(key)
            if info is not None and info[0]() is module:
                self._module_post_hook(info[1], module, args, output)
        root = self._roots.get(key)
        if root is not None and root() is module:
            self._root_post_hook(module, args, output)
        return None

    def _root_pre_hook(self, module, args):
        if self.token_range is not None and self.running:
            # token_range: the model's forward calls are the tokens; both ends inclusive.
            token = self.token_id
            self.token_id = token + 1
            gate = self.token_range[0] <= token <= self.token_range[1]
            if gate != self.gate:
                self.gate = gate
                self._update_active()
        if self.active and self.config.dumps_modules:
            self.root_depth += 1
            if self.stat_cache is None:
                self.stat_cache = {}
        return None

    def _root_post_hook(self, module, args, output):
        if self.root_depth > 0:
            self.root_depth -= 1
            if self.root_depth == 0:
                self.stat_cache = None
        return None

    def _module_pre_hook(self, prefix, module, args):
        if not self.active:
            return None
        tls = self.tls
        if tls.inside or tls.suppress:
            return None
        self._module_begin(prefix, module, args)
        return None

    def _module_begin(self, prefix, module, args):
        tls = self.tls
        tls.inside = True
        try:
            count = self.module_counts.get(prefix, 0)
            self.module_counts[prefix] = count + 1
            name = prefix + "forward." + str(count)
            stack = tls.module_stack
            parent = stack[-1] if stack else None
            if self.config.dumps_modules:  # construct.json stays {} at L1 (module_dump included)
                self.construct[name] = parent
            self.scope.begin(name)
            inputs = None
            if self.want_backward and torch.is_grad_enabled():
                # Where the inputs' gradients will arrive, taken now: an in-place module changes them.
                inputs = [(t,) + _autograd_place(t) for t in _grad_tensors(args, [])]
            expands = bool(self.mix and self.list and any(s in name for s in self.list))
            if expands:
                tls.expand += 1
            tls.module_calls.append(_ModuleCall(module, prefix, name, parent, len(stack), self.step_serial,
                                                inputs, expands))
            stack.append(name)
        except Exception as exc:
            self.record_error("module forward pre-hook", exc)
        finally:
            tls.inside = False

    def _module_post_hook(self, prefix, module, args, output):
        tls = self.tls
        calls = tls.module_calls
        if not calls or tls.inside:
            return None
        try:
            i = len(calls) - 1
            while i >= 0 and calls[i].module is not module:
                i -= 1
            if i < 0:
                return None
            call = calls[i]
            for later in calls[i:]:
                if later.expands:
                    tls.expand -= 1
            del calls[i:]
            del tls.module_stack[call.depth:]
            if not self.active or call.serial != self.step_serial:
                return None
            tls.inside = True
            try:
                self._module_forward(call, module, args, output)
            finally:
                tls.inside = False
        except Exception as exc:
            self.record_error("module forward hook", exc)
        return None

    def _module_forward(self, call, module, args, output):
        name = call.name
        selected = self._selected(name) or call.expands
        if selected:
            self.selected_modules.add(call.prefix)
            self._record_stack(name)
            if self.want_forward:
                batch = _Batch(self, name)
                entry = {}
                if self.fwd_in:
                    entry["input_args"] = batch.args(args if isinstance(args, tuple) else (args,), "input")
                    entry["input_kwargs"] = {}  # torch < 2 gives module hooks no kwargs
                if self.fwd_out:
                    entry["output"] = batch.output(output)
                params = {}
                for pname, p in module._parameters.items():
                    if p is not None:
                        params[pname] = batch.tensor(p, "parameters." + pname)
                if params:
                    entry["parameters"] = params
                batch.finish()
                self._insert(name, entry)
        self.scope.end(name)
        if self.want_backward and torch.is_grad_enabled():
            self._hook_module_backward(call, output)
            self._hook_param_grads(module, call.prefix)

    # module_dump(module, name) .. module_dump_end(): the module is one entry
    # (Module.<name>.<Class>.forward.<n>); the APIs and modules it runs are not dumped.

    def module_dump(self, module, dump_name):
        prefix = "Module.%s.%s." % (dump_name, module.__class__.__name__)
        self._dump_handles.append(module.register_forward_pre_hook(
            functools.partial(self._dumped_module_pre_hook, prefix)))
        self._dump_handles.append(module.register_forward_hook(
            functools.partial(self._dumped_module_post_hook, prefix)))

    def module_dump_end(self):
        for handle in self._dump_handles:
            handle.remove()
        self._dump_handles = []

    def _dumped_module_pre_hook(self, prefix, module, args):
        tls = self.tls
        if not self.active or tls.inside or tls.suppress:
            return None
        self._module_begin(prefix, module, args)
        tls.suppress += 1
        tls.dumped_calls.append(module)
        return None

    def _dumped_module_post_hook(self, prefix, module, args, output):
        tls = self.tls
        if tls.dumped_calls and tls.dumped_calls[-1] is module:
            tls.dumped_calls.pop()
            tls.suppress -= 1
            self._module_post_hook(prefix, module, args, output)
        return None

    def _hook_module_backward(self, call, output):
        outs = _grad_tensors(output, [])
        if not outs:
            return
        inputs = call.inputs or []
        record = _ModuleBackward(self, _backward_name(call.name), _backward_name(call.parent), call.serial,
                                 len(outs), len(inputs))
        for index, t in enumerate(outs):
            node, nr = _autograd_place(t)
            if node is not None:
                node.register_hook(functools.partial(record.node_output, index, nr))
            else:
                t.register_hook(functools.partial(record.leaf_output, index))
        for index, (t, node, nr) in enumerate(inputs):
            if node is not None:
                node.register_hook(functools.partial(record.node_input, index, nr))
            else:
                t.register_hook(functools.partial(record.leaf_input, index))

    def module_backward_grad(self, record, side, index, grad):
        if not self.active or record.serial != self.step_serial:
            return
        tls = self.tls
        inside = tls.inside
        tls.inside = True
        try:
            name = record.name
            if record.selected is None:
                if self.mix or self.config.level == "L0":
                    self.construct[name] = record.parent
                record.selected = self._selected(name)
                self.scope.end(name)
                if record.selected:
                    entry = {}
                    if self.bwd_in:
                        entry["input"] = [None] * record.n_out
                    if self.bwd_out:
                        entry["output"] = [None] * record.n_in
                    record.entry = entry
                    self._insert(name, entry)
                    self.selected_modules.add(name.rpartition("backward.")[0])
            if not record.selected:
                return
            values = record.entry.get(side)
            if values is None or index >= len(values):
                return
            if grad is None:
                values[index] = None
            else:
                batch = _Batch(self, name)
                values[index] = batch.tensor(grad, "%s.%d" % (side, index))
                batch.finish()
            self.dirty = True
        except Exception as exc:
            self.record_error("module backward hook", exc)
        finally:
            tls.inside = inside

    def _hook_param_grads(self, module, prefix):
        for pname, p in module._parameters.items():
            if p is None or not p.requires_grad:
                continue
            key = (prefix, pname)
            if key in self._param_hooks:
                continue
            # The parameter's AccumulateGrad node; holding it keeps autograd from making a new
            # one per graph, so the hook registered here stays in effect.
            with torch.enable_grad():
                node = p.expand_as(p).grad_fn.next_functions[0][0]
            handle = node.register_hook(functools.partial(self._param_grad_hook, prefix, pname, weakref.ref(p)))
            self._param_hooks[key] = (node, handle)

    def _param_grad_hook(self, prefix, pname, param_ref, grad_inputs, grad_outputs):
        if not self.active or prefix not in self.selected_modules:
            return
        tls = self.tls
        inside = tls.inside
        tls.inside = True
        try:
            param = param_ref()
            if param is None:
                return
            state = self.param_grad_index.get(prefix)
            if state is None:
                state = self.param_grad_index[prefix] = [0, pname]
            elif state[1] == pname:
                state[0] += 1
            name = "%sparameters_grad.%d" % (prefix, state[0])
            grad = param.grad
            batch = _Batch(self, name)
            value = [batch.tensor(grad, pname) if grad is not None else None]
            batch.finish()
            with self.lock:
                entry = self.data.get(name)
                if entry is None:
                    entry = self.data[name] = {}
                entry[pname] = value
                self.dirty = True
        except Exception as exc:
            self.record_error("parameter gradient hook", exc)
        finally:
            tls.inside = inside

    # --------------------------------------------------------------------------------------
    # APIs (L1 / mix)

    def call_api(self, original, prefix, args, kwargs):
        tls = self.tls
        if tls.inside or tls.suppress:  # nested in another wrapped API, our own work, module_dump
            return original(*args, **kwargs)
        tls.inside = True
        try:
            try:
                call = self._api_begin(prefix, args, kwargs)
            except Exception as exc:
                call = None
                self.record_error("API forward (inputs)", exc)
            output = original(*args, **kwargs)
            if call is not None:
                try:
                    self._api_end(call, prefix, args, kwargs, output)
                except Exception as exc:
                    self.record_error("API forward (outputs)", exc)
            return output
        finally:
            tls.inside = False

    def _api_begin(self, prefix, args, kwargs):
        count = self.api_counts.get(prefix, 0)
        self.api_counts[prefix] = count + 1
        name = prefix + str(count) + ".forward"
        parent = None
        if self.mix:
            stack = self.tls.module_stack
            parent = stack[-1] if stack else None
            self.construct[name] = parent
        scope = self.scope
        if scope.enabled:
            scope.begin(name)
        selected = self._selected(name)
        if selected:
            self._record_stack(name)
            if self.fwd_in:
                batch = _Batch(self, name)
                entry = {"input_args": batch.args(args, "input"), "input_kwargs": batch.kwargs(kwargs)}
                batch.finish()
                self._insert(name, entry)
        return (name, count, parent, selected, self.step_serial)

    def _api_end(self, call, prefix, args, kwargs, output):
        name, count, parent, selected, serial = call
        if selected and self.fwd_out:
            batch = _Batch(self, name)
            value = batch.output(output)
            batch.finish()
            with self.lock:
                entry = self.data.get(name)
                if entry is None:
                    entry = self.data[name] = {}
                entry["output"] = value
                self.dirty = True
        if self.scope.enabled:
            self.scope.end(name)
        if self.want_backward and torch.is_grad_enabled():
            var = _first_tensor(output)
            if var is not None and var.requires_grad and var.grad_fn is not None:
                if prefix in _DROPOUT_APIS and _dropout_p(args, kwargs) == 0:
                    return
                var.grad_fn.register_hook(functools.partial(
                    self._api_backward_hook, prefix + str(count) + ".backward", _backward_name(parent), serial))

    def _api_backward_hook(self, name, parent, serial, grad_inputs, grad_outputs):
        # Not gated by stop(): a backward that runs after stop() still belongs to the step.
        if serial != self.step_serial or self.ended or self.step_dir is None:
            return
        tls = self.tls
        inside = tls.inside
        tls.inside = True
        try:
            if self.mix:
                self.construct[name] = parent
            scope = self.scope
            if scope.enabled:
                scope.begin(name)
            selected = self._selected(name)
            if scope.enabled:
                scope.end(name)
            if selected:
                batch = _Batch(self, name)
                entry = {}
                if self.bwd_in:
                    entry["input"] = [batch.value(g, "input.%d" % i) for i, g in enumerate(grad_outputs)]
                if self.bwd_out:
                    entry["output"] = [batch.value(g, "output.%d" % i) for i, g in enumerate(grad_inputs)]
                batch.finish()
                self._insert(name, entry)
        except Exception as exc:
            self.record_error("API backward hook", exc)
        finally:
            tls.inside = inside

    # --------------------------------------------------------------------------------------
    # Selection, entries, stacks

    def _selected(self, name):
        if self.scope.enabled and not self.scope.inside:
            return False
        if self.list:
            if self.tls.expand:
                return True
            for fragment in self.list:
                if fragment in name:
                    return True
            return False
        return True

    def _insert(self, name, entry):
        with self.lock:
            self.data[name] = entry
            self.dirty = True
            self.unflushed += 1
        if self.unflushed >= _FLUSH_EVERY:
            self.flush()

    def _record_stack(self, name):
        if not self.config.extra_info:
            return
        frame = sys._getframe(1)
        raw = []
        while frame is not None:
            code = frame.f_code
            filename = code.co_filename
            if not filename.startswith(_PACKAGE_DIR):
                raw.append((filename, frame.f_lineno, code.co_name))
            frame = frame.f_back
        raw = tuple(raw)
        formatted = self._stack_cache.get(raw)
        if formatted is None:
            lines = []
            for filename, lineno, func in raw:
                source = linecache.getline(filename, lineno).strip()
                if source:
                    lines.append("File %s, line %d, in %s, \n %s" % (filename, lineno, func, source))
            formatted = self._stack_cache[raw] = tuple(lines)
        with self.lock:
            names = self.stack_groups.get(formatted)
            if names is None:
                self.stack_groups[formatted] = [name]
            else:
                names.append(name)

    def save_tensor(self, t, file_name):
        """task tensor: the tensor as torch.save writes it, contiguous and detached."""
        path = os.path.join(self.tensor_dir, file_name)
        try:
            data = t.detach()
            if data.is_meta:
                return False
            if data.device.type != "cpu":
                data = data.cpu()
            if data.is_conj():
                data = data.resolve_conj()
            if data.is_neg():
                data = data.resolve_neg()
            data = data.clone(memory_format=torch.contiguous_format)
            tmp = path + ".tmp"
            torch.save(data, tmp)
            os.replace(tmp, path)
            return True
        except Exception as exc:
            self.record_error("saving %s" % file_name, exc)
            return False

    # --------------------------------------------------------------------------------------
    # Output

    def flush(self):
        """Rewrites dump.json, stack.json and construct.json of the current step (atomically)."""
        with self.lock:
            if self.step_dir is None or not self.dirty:
                return
            config = self.config
            doc = {"task": config.task, "level": config.level, "framework": "pytorch",
                   "dump_data_dir": self.tensor_dir, "data": self.data}
            try:
                dump_text = _jsonio.dumps(doc)
                stack_text = construct_text = None
                if config.extra_info:
                    stack = {}
                    for index, (frames, names) in enumerate(self.stack_groups.items()):
                        stack[str(index)] = [list(names), list(frames)]
                    stack_text = _jsonio.dumps(stack)
                    construct_text = _jsonio.dumps(self.construct)
                _jsonio.write_text_atomic(os.path.join(self.step_dir, "dump.json"), dump_text)
                if stack_text is not None:
                    _jsonio.write_text_atomic(os.path.join(self.step_dir, "stack.json"), stack_text)
                    _jsonio.write_text_atomic(os.path.join(self.step_dir, "construct.json"), construct_text)
                self.dirty = False
                self.unflushed = 0
            except OSError as exc:
                self._note_once(("write", self.step_dir, exc.errno),
                                "cannot write the dump files in %s: %s; the data stays in memory and is written "
                                "again at the next stop()/step() (the model continues)"
                                % (self.step_dir, exc.strerror or exc))

    def record_error(self, where, exc):
        """An error inside our hooks: logged, never raised into the model."""
        self._error_count += 1
        if self._error_count <= 3:
            _say("error in %s: %s: %s (the model continues; details in dump_error_info.log)"
                 % (where, type(exc).__name__, exc))
        key = (where, type(exc).__name__)
        if key in self.errors_this_step or self.step_dir is None:
            return
        self.errors_this_step.add(key)
        try:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S %z")
            text = "[%s] %s: %s: %s\nCall stack (most recent call last):\n%s\n" % (
                stamp, where, type(exc).__name__, exc, "".join(traceback.format_tb(exc.__traceback__)))
            with open(os.path.join(self.step_dir, "dump_error_info.log"), "a", encoding="utf-8") as f:
                f.write(text)
        except OSError:
            pass


def _dropout_p(args, kwargs):
    if "p" in kwargs:
        return kwargs["p"]
    if len(args) > 1 and isinstance(args[1], (int, float)):
        return args[1]
    return 0.5


def _flush_at_exit(service_ref):
    service = service_ref()
    if service is not None and os.getpid() == service.pid:
        try:
            service.flush()
        except Exception as exc:
            _say("could not write the dump files at exit: %r" % (exc,))


def _install_fork_guard(service):
    ref = weakref.ref(service)

    def after_in_child():
        # A forked child (DataLoader workers) does not dump into its parent's files.
        s = ref()
        if s is not None:
            s.running = False
            s.active = False
        _api_wrap.ACTIVE = None

    try:
        os.register_at_fork(after_in_child=after_in_child)
    except AttributeError:
        pass


def _install_sigterm_flush(service):
    """SIGTERM normally ends Python without atexit: when nobody handles it, the dump files are
    written first, then the default action runs."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return
    except (ValueError, OSError):
        return
    ref = weakref.ref(service)

    def on_sigterm(signum, frame):
        s = ref()
        if s is not None:
            _flush_at_exit(ref)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    try:
        signal.signal(signal.SIGTERM, on_sigterm)
    except (ValueError, OSError):
        pass
