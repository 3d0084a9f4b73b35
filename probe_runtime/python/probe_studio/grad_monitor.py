"""Gradient monitor: per-parameter gradient statistics at every optimizer step, as CSV per rank.

    from probe_studio.grad_monitor import GradMonitor
    monitor = GradMonitor(model, "grads_out", optimizer=optimizer)   # steps counted by optimizer.step()
    ...                                                               # or call monitor.step() yourself

Each parameter that received a gradient since the previous step gets one row per step in
``<output_dir>/rank<R>/grad_reduced_<a>-<b>.csv`` with msprobe monitor's columns::

    vpp_stage,name,step,norm,max,min,mean,nans

(``norm`` the L2 norm, ``nans`` the count of NaN elements; values computed in float64 and written
with full precision, ``nan``/``inf`` as such). ``probe grads <output_dir>`` finds spikes, vanishing
and exploding norms and NaN in them.

How gradients are seen: a hook on each parameter (``Tensor.register_hook``) notes that a gradient
arrived and returns None, so nothing in the model's computation changes (tested bit-identical);
at the step, the accumulated ``param.grad`` is read under ``torch.no_grad``. With ``optimizer``
given, its ``step`` is wrapped on that instance (torch 1.13 has no optimizer step hooks) so that
the row is written right before the update, when the gradients are final. Call ``step()`` yourself
when an optimizer step can be skipped (AMP's GradScaler skips steps whose gradients overflowed) or
when there is no optimizer; call it before ``zero_grad()``.

``arm(model)`` is the one call that ``probe run`` and the code-level API use: it does nothing
unless the environment variable ``PROBE_GRAD_MONITOR`` names an output directory; then it watches
``model`` and counts steps at every optimizer's ``step``.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import functools
import math
import os
import sys
import threading
import weakref

from . import _distributed

ENVIRONMENT_VARIABLE = "PROBE_GRAD_MONITOR"
COLUMNS = ["vpp_stage", "name", "step", "norm", "max", "min", "mean", "nans"]
DEFAULT_STEPS_PER_FILE = 1000


def _rank():
    import torch

    rank = _distributed.current_rank(torch)
    return 0 if rank is None else rank


def _number(value):
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


def gradient_statistics(grad):
    """(norm, max, min, mean, nans) of a gradient tensor, computed in float64."""
    import torch
    with torch.no_grad():
        g = grad.detach()
        if g.is_sparse:
            g = g.coalesce().values()
        if g.numel() == 0:
            return (0.0, math.nan, math.nan, math.nan, 0)
        if g.is_complex():
            g = g.abs()
        g64 = g.to(torch.float64)
        nans = int(torch.isnan(g64).sum().item())
        return (torch.linalg.vector_norm(g64).item(), g64.max().item(), g64.min().item(), g64.mean().item(), nans)


class GradMonitor:
    """Watches the gradients of ``model``'s parameters (those that require grad)."""

    def __init__(self, model, output_dir, optimizer=None, steps_per_file=DEFAULT_STEPS_PER_FILE, start_step=0,
                 vpp_stage=0):
        self.output_dir = os.path.abspath(output_dir)
        self.steps_per_file = max(1, int(steps_per_file))
        self.current_step = int(start_step)
        self.vpp_stage = vpp_stage
        self._lock = threading.Lock()
        self._arrived = set()
        self._parameters = []
        self._handles = []
        self._optimizers = []
        self._rank = None
        self._errors = 0
        seen = set()
        for name, parameter in model.named_parameters():
            if not parameter.requires_grad or id(parameter) in seen:
                continue
            seen.add(id(parameter))
            self._parameters.append((name, parameter))
            self._handles.append(parameter.register_hook(self._hook_for(name)))
        if optimizer is not None:
            self.attach_optimizer(optimizer)

    # -------------------------------------------------------------------------------------
    def _hook_for(self, name):
        arrived, lock = self._arrived, self._lock

        def note_gradient(grad):  # must return None: the gradient stays as it is
            with lock:
                arrived.add(name)
        return note_gradient

    def attach_optimizer(self, optimizer):
        """Writes this monitor's rows right before every ``optimizer.step()``."""
        original = optimizer.step
        monitor = self  # kept alive by the optimizer: GradMonitor(model, dir, optimizer=o) needs no variable

        @functools.wraps(original)
        def step(*args, **kwargs):
            monitor._step_safely()
            return original(*args, **kwargs)
        optimizer.step = step
        self._optimizers.append((weakref.ref(optimizer), original))

    def _step_safely(self):
        try:
            self.step()
        except Exception as exc:  # the training must go on
            self._errors += 1
            if self._errors <= 3:
                sys.stderr.write("[probe] gradient monitor: %r (training continues)\n" % (exc,))

    def step(self):
        """Writes one row per parameter that received a gradient since the previous step, then
        counts the step. Returns the rows written as (name, norm, max, min, mean, nans)."""
        with self._lock:
            arrived = set(self._arrived)
            self._arrived.clear()
        rows = []
        for name, parameter in self._parameters:
            if name not in arrived or parameter.grad is None:
                continue
            rows.append((name,) + gradient_statistics(parameter.grad))
        if rows:
            self._write(rows)
        self.current_step += 1
        return rows

    def _write(self, rows):
        if self._rank is None:
            self._rank = _rank()
        directory = os.path.join(self.output_dir, "rank%d" % self._rank)
        os.makedirs(directory, exist_ok=True)
        first = self.current_step // self.steps_per_file * self.steps_per_file
        path = os.path.join(directory, "grad_reduced_%d-%d.csv" % (first, first + self.steps_per_file - 1))
        lines = []
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            lines.append(",".join(COLUMNS))
        for name, norm, maximum, minimum, mean, nans in rows:
            lines.append(",".join([str(self.vpp_stage), name, str(self.current_step), _number(norm), _number(maximum),
                                   _number(minimum), _number(mean), str(nans)]))
        # One write of whole lines: a reader never sees half a row.
        with open(path, "a") as f:
            f.write("\n".join(lines) + "\n")

    def remove(self):
        """Removes the hooks and gives the optimizers their own step back."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
        for optimizer_ref, original in self._optimizers:
            optimizer = optimizer_ref()
            if optimizer is not None:
                optimizer.step = original
        self._optimizers = []


# -----------------------------------------------------------------------------------------
# Armed from the environment (probe run, the code-level API).

_armed = {"patched": False, "monitors": []}


def _attach_to_new_optimizers():
    import torch
    original_init = torch.optim.Optimizer.__init__

    @functools.wraps(original_init)
    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        try:
            _attach_environment_monitors(self)
        except Exception as exc:
            sys.stderr.write("[probe] gradient monitor: %r (training continues)\n" % (exc,))
    torch.optim.Optimizer.__init__ = init


def _attach_environment_monitors(optimizer):
    owned = {id(p) for group in optimizer.param_groups for p in group["params"]}
    for monitor in _armed["monitors"]:
        if owned & {id(p) for _, p in monitor._parameters}:
            monitor.attach_optimizer(optimizer)


def _live_optimizers():
    import gc
    import warnings
    import torch
    # isinstance() on every object touches deprecated torch objects that warn (reduce_op): the
    # program's output must not change.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [o for o in gc.get_objects() if isinstance(o, torch.optim.Optimizer)]


def arm(model=None):
    """Does nothing unless $PROBE_GRAD_MONITOR names a directory. Then: from now on every
    optimizer created counts steps for the monitored models, and ``model`` (when given, once)
    is monitored, also by the optimizers that already exist. Returns the model's monitor or None.
    Never raises."""
    output_dir = os.environ.get(ENVIRONMENT_VARIABLE)
    if not output_dir:
        return None
    try:
        if not _armed["patched"]:
            _attach_to_new_optimizers()
            _armed["patched"] = True
        if model is None:
            return None
        for monitor in _armed["monitors"]:
            if monitor._model() is model:
                return monitor
        monitor = GradMonitor(model, output_dir)
        monitor._model = weakref.ref(model)
        _armed["monitors"].append(monitor)
        for optimizer in _live_optimizers():
            owned = {id(p) for group in optimizer.param_groups for p in group["params"]}
            if owned & {id(p) for _, p in monitor._parameters}:
                monitor.attach_optimizer(optimizer)
        return monitor
    except Exception as exc:
        sys.stderr.write("[probe] gradient monitor not armed: %r (the program runs without it)\n" % (exc,))
        return None
