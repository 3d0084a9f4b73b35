"""Level L1/mix: what a wrapped API call records (``Functional.linear.0.forward`` and its
backward), called by the wrappers of _api_wrap while the debugger collects."""
# SPDX-License-Identifier: GPL-3.0-or-later
import functools

import torch

from . import _api_wrap
from ._records import backward_name, tensor_version

_Tensor = torch.Tensor
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


_writes_by_name = {}


def _may_write_inputs(prefix, args, kwargs):
    """Whether a call may change its inputs in place (their statistics are then taken before
    it): in-place methods and functions (add_, __iadd__, __setitem__), collectives, an out= or
    inplace=True, and any positional True of a functional (F.dropout(x, p, training, inplace))."""
    by_name = _writes_by_name.get(prefix)
    if by_name is None:
        by_name = _writes_by_name[prefix] = (prefix.endswith("_.") or prefix.startswith("Tensor.__i") or
                                             "__setitem__" in prefix or prefix.startswith("Distributed."))
    if by_name:
        return True
    if kwargs and ("out" in kwargs or kwargs.get("inplace") is True):
        return True
    if prefix.startswith("Functional."):
        for arg in args:
            if arg is True:
                return True
    return False


def _dropout_p(args, kwargs):
    if "p" in kwargs:
        return kwargs["p"]
    if len(args) > 1 and isinstance(args[1], (int, float)):
        return args[1]
    return 0.5


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
        if tls.inside or tls.suppress:  # nested in another wrapped API, our own work, module_dump
            return original(*args, **kwargs)
        tls.inside = True
        try:
            try:
                call = self._begin(prefix, args, kwargs)
            except Exception as exc:
                call = None
                service.record_error("API forward (inputs)", exc)
            output = original(*args, **kwargs)
            if call is not None:
                try:
                    self._end(call, prefix, args, kwargs, output)
                except Exception as exc:
                    service.record_error("API forward (outputs)", exc)
            return output
        finally:
            tls.inside = False

    def _begin(self, prefix, args, kwargs):
        service = self.service
        count = self.counts.get(prefix, 0)
        self.counts[prefix] = count + 1
        name = prefix + str(count) + ".forward"
        parent = None
        if service.mix:
            stack = service.tls.module_stack
            parent = stack[-1] if stack else None
            service.records.construct[name] = parent
        scope = service.scope
        if scope.enabled:
            scope.begin(name)
        selected = service.selected(name)
        batch = versions = None
        if selected:
            service.record_stack(name)
            if service.fwd_in:
                batch = service.recorder.batch(name)
                entry = {"input_args": batch.args(args, "input"), "input_kwargs": batch.kwargs(kwargs)}
                if service.fwd_out and not _may_write_inputs(prefix, args, kwargs):
                    # The inputs' statistics are taken with the outputs' after the call, in one
                    # call to the C++ core; their versions show if the call changed them anyway.
                    versions = [tensor_version(t) for t in batch.tensors]
                else:
                    batch.finish()
                    batch = None
                service.insert(name, entry)
        return (name, count, parent, selected, service.step_serial, batch, versions)

    def _end(self, call, prefix, args, kwargs, output):
        service = self.service
        name, count, parent, selected, serial, batch, versions = call
        if selected and service.fwd_out:
            if batch is None:
                batch = service.recorder.batch(name)
            elif versions:
                batch.drop_changed(versions, name)
            value = batch.output(output)
            batch.finish()
            service.set_value(name, "output", value)
        if service.scope.enabled:
            service.scope.end(name)
        if service.want_backward and torch.is_grad_enabled():
            var = _first_tensor(output)
            if var is not None and var.requires_grad and var.grad_fn is not None:
                if prefix in _DROPOUT_APIS and _dropout_p(args, kwargs) == 0:
                    return
                var.grad_fn.register_hook(functools.partial(
                    self._backward_hook, prefix + str(count) + ".backward", backward_name(parent), serial))

    def _backward_hook(self, name, parent, serial, grad_inputs, grad_outputs):
        service = self.service
        # Not gated by stop(): a backward that runs after stop() still belongs to the step.
        if serial != service.step_serial or service.ended or service.writer.step_dir is None:
            return
        tls = service.tls
        inside = tls.inside
        tls.inside = True
        try:
            if service.mix:
                service.records.construct[name] = parent
            scope = service.scope
            if scope.enabled:
                scope.begin(name)
            selected = service.selected(name)
            if scope.enabled:
                scope.end(name)
            if selected:
                batch = service.recorder.batch(name)
                entry = {}
                if service.bwd_in:
                    entry["input"] = [batch.value(g, "input.%d" % i) for i, g in enumerate(grad_outputs)]
                if service.bwd_out:
                    entry["output"] = [batch.value(g, "output.%d" % i) for i, g in enumerate(grad_inputs)]
                batch.finish()
                service.insert(name, entry)
        except Exception as exc:
            service.record_error("API backward hook", exc)
        finally:
            tls.inside = inside
