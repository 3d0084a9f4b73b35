"""Dumps an unchanged PyTorch program: modules become the layer-level ops.

Armed by ``probe_studio/_inject/sitecustomize.py`` (``probe run``, the load script). Once
``torch`` is imported it loads the C++ adapter, starts the runtime (output directory and
config from ``PROBE_OUTPUT_DIR`` / ``PROBE_CONFIG``), and wraps ``nn.Module.__call__`` (rather
than global forward hooks, so that a module's own hooks count as part of it and an exception
closes exactly the ops it left; the wrapper is C, ``_module_call``, calling the functions below
only for the outermost module and for tensors):

* the outermost module called is the model; the modules it calls directly are layer-level
  ops (named by attribute path, typed by class), nested modules their children;
* aten ops, seen by the adapter through ``at::RecordFunction``, become children of the
  innermost module; aten ops the outermost module calls itself are layer-level ops;
* ``torch.autograd.backward``/``grad`` are bracketed so backward nodes group per layer
  ("<layer>.backward" ops: the gradients flowing in are their inputs, those flowing out, to
  the layer's inputs, their outputs).

Nothing here may disturb the model: every hook catches everything and returns None, tensors
are only read.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import atexit
import ctypes
import dataclasses
import functools
import inspect
import json
import math
import os
import sys
import threading
import weakref

from . import _distributed, _import_hook, _native, _os_exit, _paths, grad_monitor
from ._names import name_bytes, safe_text

try:
    from . import _build_info
except ImportError:  # an unbuilt source tree
    _build_info = None

_armed = False
_installed = False
_report_tensors = None  # torch.ops.probe.report_tensors
_report_backward_outputs = None  # torch.ops.probe.report_backward_outputs
_report_tensor = None  # the adapter's probe_torch_report_tensor (ctypes), when _cdata is usable
_report_backward_output = None  # its probe_torch_report_backward_output
_hook_input_gradient = None  # its probe_torch_hook_input_gradient
_plain_tensor_types = ()  # tensor types whose _cdata is their TensorImpl (no __torch_function__)
_torch_tensor = None  # torch.Tensor
_WANTS_TENSORS = _native.WANTS_TENSORS
_LAYER_AWAKE = 1 << 16  # probe_torch_module_begin's flag for a layer-level op: the probe is awake
_LAYER_GRAD_ENABLED = 1 << 17  # and with it: grad mode is on (torch.is_grad_enabled())
_encoded_names = {}  # argument name -> name_bytes(name)
_layer_count = None  # _module_call.layer_count
_original_call = None  # nn.Module.__call__ before _wrap_module_call
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


# probe/format/dump_status.h kInjectionLogName; probe run reads it back (readInjectionLog).
_INJECTION_LOG_NAME = "probe_injection.jsonl"


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
        with open(os.path.join(root, _INJECTION_LOG_NAME), "a") as f:
            f.write(line)
    except OSError:
        pass


# ------------------------------------------------------------------------------------------
# Arming: wait for torch to be imported.

def arm():
    """Install the probe when torch gets imported (now, if it already is)."""
    global _armed
    if _armed:
        return
    _armed = True
    _import_hook.call_after_import("torch", install)


# ------------------------------------------------------------------------------------------
# Installing

def _major_minor(version):
    parts = str(version).split("+")[0].split(".")
    return tuple(int("".join(ch for ch in p if ch.isdigit()) or 0) for p in parts[:2])


def install(torch):
    """Load the adapter, start the runtime, hook modules and autograd. Safe to call twice."""
    global _installed, _report_tensors, _report_backward_outputs, _runtime, _adapter
    global _report_tensor, _report_backward_output, _hook_input_gradient, _plain_tensor_types
    if _installed:
        return True
    if _distributed.is_launcher():
        # It starts the ranks (each probed into a folder of its own) and runs no model itself.
        return False
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
        _report_backward_outputs = torch.ops.probe.report_backward_outputs
        _runtime = _native.runtime()
        from . import _module_call  # built for this Python: may be missing for another one
        if _cdata_is_tensor_impl(torch):
            _report_tensor = _adapter.probe_torch_report_tensor
            _report_backward_output = _adapter.probe_torch_report_backward_output
            _hook_input_gradient = _adapter.probe_torch_hook_input_gradient
            _plain_tensor_types = (torch.Tensor, torch.nn.Parameter)
        rank = _distributed.launcher_rank()
        if rank is not None:  # the rank names this process's folder: data/<rank>_<pid>
            _runtime.probe_set_device(rank)
        if _runtime.probe_start(None, None) != 0:
            message = "the probe could not start: %s" % _runtime.probe_last_error().decode(errors="replace")
            _say("error: " + message)
            _record_injection("start_failed", message)
            return False
    except Exception as exc:
        _say("error: could not load the PyTorch adapter: %r; the program runs without the probe" % (exc,))
        _record_injection("load_failed", repr(exc))
        return False

    _wrap_module_call(torch, _module_call)
    _wrap_autograd_functions(torch)
    _bracket_autograd(torch, _module_call)
    _watch_own_config_writes(_module_call)
    _flush_before_exec(_module_call)
    if rank is None:
        _name_rank_at_init(torch)
    atexit.register(_at_exit)
    # os._exit skips atexit: the rows still queued were lost (a program of five quick steps
    # ending with it left none, and a status saying it was cut off).
    _os_exit.before_os_exit(_at_exit)
    _installed = True
    _record_injection("attached")
    _arm_gradient_monitor(None)
    return True


def _arm_gradient_monitor(model):
    """The gradient monitor, when `probe run --grads DIR` set $PROBE_GRAD_MONITOR or the config
    in force has "grad_monitor": true (then it writes into the dump: <dump>/grad_monitor).
    Called at install (optimizers created from then on count steps) and when a model is first
    called (its parameters are watched). Never raises."""
    try:
        if not os.environ.get(grad_monitor.ENVIRONMENT_VARIABLE):
            directory = _runtime.probe_grad_monitor_dir()
            if not directory:
                return
            os.environ[grad_monitor.ENVIRONMENT_VARIABLE] = directory.decode(errors="surrogateescape")
        grad_monitor.arm(model)
    except Exception as exc:
        _failure("gradient monitor", exc)


def _cdata_is_tensor_impl(torch):
    """True when torch.Tensor._cdata is the tensor's TensorImpl, as the adapter takes it (then
    tensors go to it through ctypes, far cheaper than through torch.ops)."""
    try:
        probe = torch.empty(3, 5)
        return (isinstance(probe._cdata, int) and probe._cdata != 0
                and _adapter.probe_torch_impl_numel(probe._cdata) == 15)
    except Exception:
        return False


def _at_exit():
    try:
        _runtime.probe_stop()
    except Exception:
        pass


def _name_rank_at_init(torch):
    """A job whose launcher set no RANK (torch.multiprocessing.spawn, say) has its rank once it
    calls init_process_group: from then on its dump goes to data/<rank>_<pid>."""
    try:
        dist = torch.distributed
        original = dist.init_process_group
    except Exception:  # no torch.distributed in this build: no ranks either
        return
    if getattr(original, "_probe_wrapped", False):
        return

    @functools.wraps(original)
    def init_process_group(*args, **kwargs):
        result = original(*args, **kwargs)
        try:
            rank = _distributed.current_rank(torch)
            if rank is not None:
                _runtime.probe_set_device(rank)
        except Exception as exc:
            _failure("init_process_group", exc)
        return result

    init_process_group._probe_wrapped = True
    dist.init_process_group = init_process_group


def _address(function):
    """The address of a ctypes function of the adapter, for _module_call to call it directly."""
    return ctypes.cast(function, ctypes.c_void_p).value


def _watch_own_config_writes(module_call):
    """The program's Python code that writes files (open for writing, os.replace, ...) is seen by
    an audit hook (config_writes.cpp), so the runtime asks the kernel whether the config changed
    only while the program is writing it, not at every round (a system call, which slows a small
    model's step by about 25 us on a virtual machine). Without the hook, every round asks."""
    try:
        if module_call.watch_config_writes(_address(_runtime.probe_note_file_written)):
            _runtime.probe_report_own_config_writes(1)
    except Exception as exc:
        _failure("watching the config's writes", exc)


def _flush_before_exec(module_call):
    """os.exec*() replaces the program without the probe's stop: what is queued is written out
    first (from the audit hook of _watch_own_config_writes)."""
    try:
        module_call.flush_before_exec(_address(_runtime.probe_before_exec))
    except Exception as exc:
        _failure("flushing before exec", exc)


def _bracket_autograd(torch, module_call):
    """Mark each backward pass so its nodes group under per-layer backward ops (the marks are
    made from C: module_call.bracket)."""
    autograd = torch.autograd
    begin, end = _address(_adapter.probe_torch_backward_begin_from), _address(_adapter.probe_torch_backward_end)
    for name in ("backward", "grad"):
        original = getattr(autograd, name)
        if not getattr(original, "_probe_bracketed", False):
            setattr(autograd, name, module_call.bracket(original, begin, end))


# ------------------------------------------------------------------------------------------
# Module calls

_names_by_root = weakref.WeakKeyDictionary()
_params_by_module = weakref.WeakKeyDictionary()
_arg_names_by_class = {}


def _module_names(root):
    """id(module) -> (attribute path, attribute name, class name, LayerCount), the names encoded
    once per model (any characters: see _names); the LayerCount is what _module_call needs to
    count the module's calls while the probe sleeps."""
    names = _names_by_root.get(root)
    if names is None:
        names = {}
        for path, module in root.named_modules():
            if path:
                names[id(module)] = (name_bytes(path), name_bytes(path.rsplit(".", 1)[-1]),
                                     name_bytes(type(module).__name__), _layer_count())
        _warn_of_shared_layer_names(root, names)
        _names_by_root[root] = names
        _report_weights(root)
        _arm_gradient_monitor(root)
    return names


_shared_names_said = set()  # (class, class) pairs of models warned of


def _warn_of_shared_layer_names(root, names):
    """Two models alive at once (a teacher and a student, a model and its EMA copy) whose
    layer-level modules have the same names: each name is one op of the dump, whose rounds
    alternate between the models. Said once per pair of model classes (on standard error and in
    probe_status.json, by the runtime). Never raises."""
    try:
        layers = {n[0] for n in names.values() if b"." not in n[0]}
        if not layers:
            return
        for other, other_names in list(_names_by_root.items()):
            if other is root:
                continue
            shared = layers & {n[0] for n in other_names.values() if b"." not in n[0]}
            pair = (type(other).__name__, type(root).__name__)
            if not shared or pair in _shared_names_said:
                continue
            _shared_names_said.add(pair)
            listed = ", ".join(sorted(safe_text(n.decode("utf-8", "replace")) for n in shared)[:5])
            message = ("two models of this program, %s and %s, have layer-level modules of the same names "
                       "(%s%s): each name is one op of the dump, its rounds alternating between the models. "
                       "To tell them apart, call them through one module holding both (an nn.ModuleDict)"
                       % (safe_text(pair[0]), safe_text(pair[1]), listed, ", ..." if len(shared) > 5 else ""))
            _runtime.probe_warn(message.encode("utf-8", "replace"))  # also on standard error
            return
    except Exception as exc:  # never harm the model: the dump just goes without the warning
        _failure("comparing models' names", exc)


def _report_weights(root):
    """The model's parameters and buffers, by the memory they hold: info/model lists those its
    ops read as weightTensors."""
    try:
        for name, tensor in list(root.named_parameters()) + list(root.named_buffers()):
            address = tensor.data_ptr()  # the adapter's buffer id of a tensor that starts there
            if address:
                _runtime.probe_report_weight(name_bytes(name), address)
    except Exception:  # never harm the model: the structure just lists no weights
        pass


def _param_value(value):
    """A setting as JSON holds it: text made safe, and infinity and NaN, which JSON has no number
    for, spelled "inf", "-inf" and "nan" (as the aten ops' parameters are; json.dumps wrote
    -Infinity, which the runtime refused as JSON)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"
    return value


def _module_param(module):
    """The module's simple settings (in_features, eps, p, ...) as JSON, computed once."""
    cached = _params_by_module.get(module)
    if cached is None:
        params = {}
        for key, value in vars(module).items():
            if key.startswith("_"):
                continue
            if isinstance(value, (bool, int, float, str)):
                params[safe_text(key)] = _param_value(value)
            elif isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str)) for v in value):
                params[safe_text(key)] = [_param_value(v) for v in value]
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


def _encoded_arg_names(module):
    """_arg_names() as the adapter takes them (for _module_call, which keeps them per class)."""
    return tuple(_encoded(name) for name in _arg_names(module))


def _flatten(value, name, tensors, names, torch_tensor):
    """Collect the tensors in a (nested) value, each with a name for its file: the argument
    name, with the position appended inside lists ("past0"), the key inside dicts, the field
    inside dataclasses."""
    if isinstance(value, torch_tensor):
        tensors.append(value)
        names.append(name)
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            _flatten(item, "%s%d" % (name, i) if name else "", tensors, names, torch_tensor)
    elif isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, safe_text(str(key)), tensors, names, torch_tensor)
    elif hasattr(type(value), "__dataclass_fields__"):  # a dataclass instance: by its fields
        for field in dataclasses.fields(value):
            _flatten(getattr(value, field.name, None), safe_text(field.name), tensors, names, torch_tensor)


def _inputs(module, args, kwargs):
    """The tensors among a call's arguments, in the order the op's inputs are numbered, and
    their names."""
    torch_tensor = _torch_tensor
    tensors, names = [], []
    arg_names = _arg_names(module)
    for i, item in enumerate(args):
        _flatten(item, arg_names[i] if i < len(arg_names) else "", tensors, names, torch_tensor)
    for key, item in kwargs.items():
        _flatten(item, safe_text(key), tensors, names, torch_tensor)
    return tensors, names


def _hook_input_gradients(layer, tensors, names):
    """The gradients that will flow out of a layer-level op's backward (those of its inputs)
    become that "<layer>.backward" op's outputs, numbered like the forward inputs. A tensor hook
    runs once the gradient is complete, before its producer's node: the layer's backward op is
    still the open one (the adapter checks). Plain tensors get the adapter's hook (no Python in
    the backward pass), others a Python one."""
    hook_in_adapter = _hook_input_gradient
    plain = _plain_tensor_types
    for index, t in enumerate(tensors):
        if hook_in_adapter is not None and type(t) in plain:
            if hook_in_adapter(layer, index, _encoded(names[index]), t._cdata) >= 0:
                continue
        _hook_input_gradient_in_python(layer, index, names[index], t)


_hooked = {}  # id(tensor) -> (weak reference to it, the (layer, index, name) it has hooks of)


def _hook_input_gradient_in_python(layer, index, name, t):
    """A Python hook on the gradient of a layer's input (one the adapter could not hook). A tensor
    kept from step to step (a leaf, or one whose graph is retained) gets one per (layer, input),
    as in the adapter (NodeHooks): a tensor hook fires at every backward through its tensor."""
    if not t.requires_grad:
        return
    entry = _hooked.get(id(t))
    if entry is None or entry[0]() is not t:
        entry = _hooked[id(t)] = (weakref.ref(t, functools.partial(_forget_hooked, id(t))), set())
    if (layer, index, name) in entry[1]:
        return
    entry[1].add((layer, index, name))
    t.register_hook(functools.partial(_report_input_gradient, layer, index, name))


def _forget_hooked(key, reference):
    entry = _hooked.get(key)
    if entry is not None and entry[0] is reference:
        del _hooked[key]


def _encoded(name):
    encoded = _encoded_names.get(name)
    if encoded is None:
        if len(_encoded_names) > 10000:  # names made from list positions or dict keys
            _encoded_names.clear()
        encoded = _encoded_names[name] = name_bytes(name)
    return encoded


def _report_input_gradient(layer, index, name, grad):
    try:
        if _report_backward_output is not None and type(grad) in _plain_tensor_types:
            _report_backward_output(layer, index, _encoded(name), grad._cdata)
        else:
            _report_backward_outputs(layer.decode(), index, [grad], [name])
    except Exception as exc:
        _failure("backward gradient", exc)
    return None  # a tensor hook's result would replace the gradient


def _report(io, tensors, names):
    """The top op's inputs (io 0) or outputs (1), numbered in order."""
    if _report_tensor is not None:
        plain = _plain_tensor_types
        for t in tensors:
            if type(t) not in plain:
                break
        else:
            report = _report_tensor
            for index, t in enumerate(tensors):
                report(io, index, _encoded(names[index]), t._cdata)
            return
    _report_tensors(io, tensors, names)


def _report_outputs(output):
    tensors, names = [], []
    _flatten(output, "", tensors, names, _torch_tensor)
    if tensors:
        _report(1, tensors, names)


def _enter_root(module):
    """The outermost module's call begins (the first call of this model on this thread, or any
    call of one that cannot be weakly referenced): returns (the model's names, its class name)
    for _module_call, which begins the root op."""
    return _module_names(module), name_bytes(type(module).__name__)


def _names_of(module):
    """The names of a module made on the fly (not an attribute of the model): its class's."""
    return (name_bytes(type(module).__name__),) * 3


def _enter_tensors(module, args, kwargs, depth, wants, names):
    """After a module call's op began (module_call.cpp), when its tensors are wanted or it is a
    layer-level op of an awake probe: report its inputs, hook its input gradients."""
    layer_gradients = depth == 1 and wants & _LAYER_AWAKE and wants & _LAYER_GRAD_ENABLED
    if not (wants & _WANTS_TENSORS or layer_gradients):
        return
    tensors, arg_names = _inputs(module, args, kwargs)
    if wants & _WANTS_TENSORS:
        # Parameters are kept for the observed structure and beside tensor files: not
        # wanted by statistics alone.
        if wants & _native.WANTS_METADATA or not wants & _native.WANTS_STATISTICS_ONLY:
            param = _module_param(module)
            if param:
                _runtime.probe_op_set_param(param)
        if tensors:
            _report(0, tensors, arg_names)
    if layer_gradients:
        _hook_input_gradients(names[0], tensors, arg_names)


def _has_parameters(module):
    """Whether `module` holds a parameter (parameters() may be overridden: any iterable)."""
    for _ in module.parameters():
        return True
    return False


def _after_fork_in_child(module_class):
    """A forked child runs unprobed (the runtime's threads stayed in the parent; a process that
    execs is probed). Its modules get torch's own call back, and the first module with
    parameters it calls (a model, not a DataLoader worker's transform) says, once, that its ops
    are not in the dump: they went missing without a word. probe run repeats it at the end."""
    try:
        parent = os.getppid()
        original = _original_call

        # No named first parameter: a module may take a keyword argument of any name (module=).
        def first_model_call(*args, **kwargs):
            try:
                module = args[0]
                if module_class.__call__ is first_model_call and _has_parameters(module):
                    module_class.__call__ = original
                    message = ("pid %d is a fork of pid %d: the probe does not follow fork(), so its calls of %s "
                               "are not dumped (processes started by exec, subprocess or multiprocessing's "
                               "spawn are)" % (os.getpid(), parent, safe_text(type(module).__name__)))
                    _say(message)
                    _record_injection("forked_unprobed", message)
            except Exception as exc:  # never into the program's call
                _failure("after fork", exc)
            return original(*args, **kwargs)

        module_class.__call__ = first_model_call
    except Exception as exc:
        _failure("after fork", exc)


_forwards_running = threading.local()  # .ctx: ids of the ctxs whose forward runs on this thread


def _wrap_autograd_functions(torch):
    """The outputs of an autograd Function (``Sq.apply(x, w)``, torch.utils.checkpoint's) are its
    op's outputs: RecordFunction gives none of them, so the Function's op had inputs only, and a
    Function that changed its values compared as a match while the op after it was blamed. Each
    Function class's ``forward`` is wrapped (those defined already, and those defined later, as
    FunctionMeta makes them) to report what it returns while its op is still the open one. The
    wrapper only reads; whatever fails is said and the model goes on."""
    function_class = torch.autograd.Function
    meta = type(function_class)
    original_init = meta.__init__
    if getattr(original_init, "_probe_wrapped", False):
        return

    def init(cls, *args, **kwargs):
        original_init(cls, *args, **kwargs)
        _wrap_function_forward(cls)

    init._probe_wrapped = True
    meta.__init__ = init
    classes, seen = [function_class], set()
    while classes:
        cls = classes.pop()
        for sub in type.__subclasses__(cls):
            if sub not in seen:
                seen.add(sub)
                _wrap_function_forward(sub)
                classes.append(sub)


def _wrap_function_forward(cls):
    try:
        forward = cls.__dict__.get("forward")
        if not isinstance(forward, staticmethod) or getattr(forward.__func__, "_probe_wrapped", False):
            return
        cls.forward = staticmethod(_observed_forward(forward.__func__, cls.__name__))
    except Exception as exc:
        _failure("autograd Function", exc)


def _observed_forward(forward, defined_by):
    wanted = _adapter.probe_torch_function_outputs_wanted
    default_name = name_bytes(defined_by)
    names = {}  # the type of the first argument (a ctx) -> the name of the Function applied

    @functools.wraps(forward)
    def observed(*args, **kwargs):
        # A forward that calls another's with its own ctx (Sub.forward calling Sq.forward(ctx,
        # x), as super() does): the outermost call's result is the op's output, the inner one's
        # an intermediate (reported too, it was a second output 0).
        ctx_id = id(args[0]) if args else None
        active = _forwards_running.__dict__.setdefault("ctx", set())
        if ctx_id in active:
            return forward(*args, **kwargs)
        active.add(ctx_id)
        try:
            output = forward(*args, **kwargs)
        finally:
            active.discard(ctx_id)
        try:
            # The op is named by the class applied (a subclass may inherit this forward): its ctx
            # (torch 1.x) knows it. Found once per ctx type: this runs at every apply, the
            # probe asleep too.
            ctx_type = type(args[0]) if args else None
            name = names.get(ctx_type)
            if name is None:
                applied = getattr(ctx_type, "_forward_cls", None)
                name = names[ctx_type] = name_bytes(applied.__name__) if applied is not None else default_name
            if wanted(name):
                _report_outputs(output)
        except Exception as exc:
            _failure("autograd Function outputs", exc)
        return output

    observed._probe_wrapped = True
    return observed


def _wrap_module_call(torch, module_call):
    """nn.Module.__call__ becomes module_call.cpp's (see there why in C), which calls the
    functions above."""
    global _torch_tensor, _layer_count
    module_class = torch.nn.Module
    original_call = module_class.__call__
    if getattr(original_call, "_probe_wrapped", False):
        return
    global _original_call
    _original_call = original_call
    _torch_tensor = torch.Tensor
    _layer_count = module_call.layer_count
    os.register_at_fork(after_in_child=functools.partial(_after_fork_in_child, module_class))

    module_class.__call__ = module_call.install(
        original_call, _enter_root, _enter_tensors, _report_outputs, _names_of, _failure,
        _address(_adapter.probe_torch_root_begin), _address(_adapter.probe_torch_root_end),
        _address(_adapter.probe_torch_module_begin), _address(_adapter.probe_torch_module_end),
        _address(_adapter.probe_torch_unwind_to), _address(_adapter.probe_torch_in_backward_pass))
    if _report_tensor is not None:  # plain tensors' _cdata is their TensorImpl
        module_call.enable_plain_tensors(
            *_plain_tensor_types, _encoded_arg_names, _hook_input_gradient_in_python,
            _address(_report_tensor), _address(_hook_input_gradient))
    module_call.enable_counting(
        _address(_runtime.probe_counting_only), _address(_runtime.probe_layer_counter_of),
        _address(_runtime.probe_layer_counter_add), _address(_adapter.probe_torch_sequence_number),
        _address(_adapter.probe_torch_layer_index), _address(_adapter.probe_torch_counted_layer_call))
