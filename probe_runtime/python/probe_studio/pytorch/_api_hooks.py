"""Level L1/mix: what a wrapped API call records (``Functional.linear.0.forward`` and its
backward), called by the wrappers of _api_wrap while the debugger collects."""
# SPDX-License-Identifier: GPL-3.0-or-later
import inspect

import torch

from . import _api_wrap
from ._overflow import held_copy
from ._records import backward_name

_tracing = torch._C._get_tracing_state  # None unless a tracer runs

_Tensor = torch.Tensor
_is_grad_enabled = torch.is_grad_enabled
_DROPOUT_APIS = frozenset((
    "Functional.dropout.", "Functional.dropout1d.", "Functional.dropout2d.", "Functional.dropout3d.",
    "Functional.alpha_dropout.", "Functional.feature_alpha_dropout.", "Torch.dropout.", "Torch.dropout_.",
    "Torch.alpha_dropout.", "Torch.alpha_dropout_.", "Torch.feature_alpha_dropout.",
    "Torch.feature_alpha_dropout_.", "Torch.feature_dropout.", "Torch.feature_dropout_."))


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


def _as_outputs(output):
    """The outputs of a call as Batch.output sees them: a tuple is its items (a namedtuple is
    one value)."""
    if isinstance(output, tuple) and not hasattr(output, "_fields"):
        return output
    return (output,)


_in_place_switches_by_prefix = {}


def _in_place_switches(prefix, original):
    """True when the API changes a tensor in place by its name (add_, __iadd__, __setitem__, a
    collective); else the parameters that make it do so when True, as (name, position): inplace
    (F.relu, F.dropout), and training / use_input_stats of the norms that update their running
    statistics (F.batch_norm, F.instance_norm)."""
    if (prefix.endswith("_.") or prefix.startswith("Tensor.__i") or "__setitem__" in prefix or
            prefix.startswith("Distributed.")):
        return True
    try:
        params = list(inspect.signature(original).parameters)
    except (TypeError, ValueError):  # a builtin without a signature: only out= can tell
        return ()
    names = ["inplace"] + (["training", "use_input_stats"] if "running_mean" in params else [])
    return tuple((n, params.index(n)) for n in names if n in params)


def _may_write_in_place(prefix, original, args, kwargs):
    """Whether the call may change tensors in place: the statistics still waiting are then
    taken before it."""
    switches = _in_place_switches_by_prefix.get(prefix)
    if switches is None:
        switches = _in_place_switches_by_prefix[prefix] = _in_place_switches(prefix, original)
    if switches is True or (kwargs and "out" in kwargs):
        return True
    for name, position in switches:
        value = kwargs[name] if name in kwargs else (args[position] if position < len(args) else None)
        if value is True:
            return True
    return False


def _dropout_p(args, kwargs):
    if "p" in kwargs:
        return kwargs["p"]
    if len(args) > 1 and isinstance(args[1], (int, float)):
        return args[1]
    return 0.5


class _BackwardHook:
    """The post-hook of the autograd node of a wrapped call's output: its backward entry. One
    object per hook, not a partial of a bound method and its arguments' tuple: each object alive
    through the step is one more for Python's garbage collector to promote and scan."""

    __slots__ = ("hooks", "prefix", "count", "parent", "serial")

    def __init__(self, hooks, prefix, count, parent, serial):
        self.hooks = hooks
        self.prefix = prefix
        self.count = count
        self.parent = parent
        self.serial = serial

    def __call__(self, grad_inputs, grad_outputs):
        self.hooks._backward_hook(self.prefix, self.count, self.parent, self.serial, grad_inputs, grad_outputs)


class ApiHooks:
    """The wrappers installed in torch (once, when the debugger is created) and what a call
    records. Counters restart at every step."""

    def __init__(self, service):
        self.service = service
        self.tls = service.tls  # read by the wrappers
        self.counts = {}
        self.wrapping = _api_wrap.ApiWrapping()
        self.wrapping.install(torch)

    def reset_step(self):
        self.counts = {}

    def set_active(self, active):
        _api_wrap.ACTIVE = self if active else None

    def uninstall(self):
        _api_wrap.ACTIVE = None
        self.wrapping.uninstall()

    def call_api(self, original, prefix, args, kwargs):
        service = self.service
        tls = service.tls
        # Nested in another wrapped API, our own work, module_dump; or run by a tracer
        # (torch.jit.trace, torch.onnx.export), whose graph our own work must not enter.
        if tls.inside or tls.suppress or _tracing():
            return original(*args, **kwargs)
        tls.inside = True
        watching = service.overflow is not None
        try:
            try:
                call = (self._begin_watch if watching else self._begin)(original, prefix, args, kwargs)
            except Exception as exc:
                call = None
                service.record_error("API forward (inputs)", exc)
            output = original(*args, **kwargs)
            if call is not None:
                try:
                    (self._end_watch if watching else self._end)(call, prefix, args, kwargs, output)
                except Exception as exc:
                    service.record_error("API forward (outputs)", exc)
            return output
        finally:
            tls.inside = False

    def _enter(self, prefix):
        """A call begins: its number and entry name, its parent module (mix), whether it is
        selected (the scope it may open counted)."""
        service = self.service
        count = self.counts.get(prefix, 0)
        self.counts[prefix] = count + 1
        name = prefix + str(count) + ".forward"
        parent = None
        if service.mix:
            stack = service.tls.module_stack
            parent = stack[-1] if stack else None
        scope = service.scope
        if scope.enabled:
            scope.begin(name)
        selected = service.selected(name) if service.filtered else True
        return name, count, parent, selected

    def _begin(self, original, prefix, args, kwargs):
        service = self.service
        name, count, parent, selected = self._enter(prefix)
        if service.mix:
            service.records.construct[name] = parent
        if selected:
            stack = service.stacks.capture() if service.config.extra_info else None
            entry = None
            if service.fwd_in:
                recorder = service.recorder
                if recorder.tensor_dir is None:  # the one loop per value, nothing saved
                    entry = {"input_args": recorder.items(args),
                             "input_kwargs": recorder.kwargs_items(kwargs) if kwargs else {}}
                    recorder.finish()
                else:
                    batch = recorder.batch(name)
                    entry = {"input_args": batch.args(args, "input"), "input_kwargs": batch.kwargs(kwargs)}
                    batch.finish()
            service.insert_with_stack(name, entry, stack)
        if _may_write_in_place(prefix, original, args, kwargs):
            # Statistics still waiting are taken now, before the call may change their tensors.
            service.recorder.settle()
        return (name, count, parent, selected, service.step_serial)

    def _end(self, call, prefix, args, kwargs, output):
        service = self.service
        name, count, parent, selected, serial = call
        if selected and service.fwd_out:
            recorder = service.recorder
            if recorder.tensor_dir is None:
                value = recorder.items(output if type(output) is tuple else _as_outputs(output))
                recorder.finish()
            else:
                batch = recorder.batch(name)
                value = batch.output(output)
                batch.finish()
            service.set_value(name, "output", value)
        if service.scope.enabled:
            service.scope.end(name)
        self._hook_backward(prefix, count, parent, serial, args, kwargs, output)

    def _begin_watch(self, original, prefix, args, kwargs):
        """Task overflow_check: the call is watched when it is selected and its inputs are
        finite; what it was given is held (a copy when it may change it in place)."""
        service = self.service
        name, count, parent, selected = self._enter(prefix)
        held = None
        overflow = service.overflow
        if selected and not overflow.ignored(prefix):
            if overflow.overflowed(args, kwargs):
                overflow.note_forward_overflowed(service.step_serial, prefix + str(count))
            else:
                held = ((held_copy(args), held_copy(kwargs)) if _may_write_in_place(prefix, original, args, kwargs)
                        else (args, kwargs))
        return (name, count, parent, selected, service.step_serial, held)

    def _end_watch(self, call, prefix, args, kwargs, output):
        service = self.service
        name, count, parent, selected, serial, held = call
        overflow = service.overflow
        if held is not None:
            reason = overflow.overflowed(output)
            if reason:
                overflow.note_forward_overflowed(serial, prefix + str(count))
                batch = service.recorder.batch(name, eager=True)
                entry = {"input_args": batch.args(held[0], "input"), "input_kwargs": batch.kwargs(held[1]),
                         "output": batch.output(output)}
                batch.finish()
                stack = service.stacks.capture() if service.config.extra_info else None
                service.record_birth(name, entry, stack, parent, reason)
        if service.scope.enabled:
            service.scope.end(name)
        if not service.ended:
            self._hook_backward(prefix, count, parent, serial, args, kwargs, output)

    def _hook_backward(self, prefix, count, parent, serial, args, kwargs, output):
        service = self.service
        if service.want_backward and _is_grad_enabled():
            var = output if isinstance(output, _Tensor) else _first_tensor(output)
            if var is None:
                return
            node = var.grad_fn
            if node is not None:
                if prefix in _DROPOUT_APIS and _dropout_p(args, kwargs) == 0:
                    return
                node.register_hook(_BackwardHook(self, prefix, count, parent, serial))

    def _backward_hook(self, prefix, count, parent, serial, grad_inputs, grad_outputs):
        service = self.service
        # Not gated by stop(): a backward that runs after stop() still belongs to the step.
        if serial != service.step_serial or service.ended or service.writer.step_dir is None:
            return
        tls = service.tls
        inside = tls.inside
        tls.inside = True
        try:
            service.recorder.settle_when_backward_ends()
            name = prefix + str(count) + ".backward"
            if service.mix and service.overflow is None:
                service.records.construct[name] = backward_name(parent)
            scope = service.scope
            if scope.enabled:
                scope.begin(name)
            selected = service.selected(name) if service.filtered else True
            if scope.enabled:
                scope.end(name)
            if service.overflow is not None:
                if (selected and not service.overflow.ignored(prefix)
                        and not service.overflow.forward_overflowed(serial, prefix + str(count))):
                    self._backward_watch(name, parent, grad_inputs, grad_outputs)
            elif selected:
                recorder = service.recorder
                entry = {}
                if recorder.tensor_dir is None and not recorder.eager_gradients:
                    if service.bwd_in:
                        entry["input"] = recorder.items(grad_outputs)
                    if service.bwd_out:
                        entry["output"] = recorder.items(grad_inputs)
                    recorder.finish()
                else:
                    batch = recorder.gradient_batch(name)
                    if service.bwd_in:
                        entry["input"] = batch.args(grad_outputs, "input")
                    if service.bwd_out:
                        entry["output"] = batch.args(grad_inputs, "output")
                    batch.finish()
                service.insert(name, entry)
        except Exception as exc:
            service.record_error("API backward hook", exc)
        finally:
            tls.inside = inside

    def _backward_watch(self, name, parent, grad_inputs, grad_outputs):
        """Task overflow_check: the backward is where an overflow is born when the gradients
        flowing in (of the forward's outputs) are finite and one flowing out is not."""
        service = self.service
        overflow = service.overflow
        if overflow.overflowed(grad_outputs):
            return
        reason = overflow.overflowed(grad_inputs)
        if not reason:
            return
        batch = service.recorder.batch(name, eager=True)
        entry = {"input": batch.args(grad_outputs, "input"), "output": batch.args(grad_inputs, "output")}
        batch.finish()
        service.record_birth(name, entry, None, backward_name(parent), reason)
