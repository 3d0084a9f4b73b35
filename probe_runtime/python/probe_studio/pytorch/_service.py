"""The collecting service behind PrecisionDebugger: when it collects (start/stop/step, the
config's step and rank lists, token_range), which entries it keeps (scope, list, data_mode),
and the rooms that do the work:

  * _module_hooks — module calls (L0, mix, module_dump);
  * _api_hooks    — wrapped API calls (L1, mix);
  * _records      — values turned into items, the step's entries, parents and stacks;
  * _step_writer  — the step's folder and files;
  * _overflow     — task overflow_check: only the calls where an overflow is born.

Rules that keep the model safe:
  * every hook catches everything (errors go to dump_error_info.log and stderr) and returns
    None, so nothing the model computes is replaced;
  * the autograd graph is never changed (see _module_hooks);
  * our own tensor work runs with the thread's "inside" flag set, so it is neither dumped nor
    counted, and it is done on detached tensors.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import functools
import os
import sys
import threading

import torch

from . import _step_writer
from ._api_hooks import ApiHooks
from ._config import BACKWARD, FORWARD, INPUT, OUTPUT
from ._module_hooks import ModuleHooks
from ._overflow import OverflowCheck
from ._records import Recorder, StackCapture, StepRecords

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_FLUSH_EVERY = 1000  # entries: dump.json is also rewritten during long steps


class _Patches:
    """Functions of torch replaced by wrappers while the debugger lives, each marked as ours, and
    put back at the dump's end (unless someone wrapped them again since: ours then stays under
    theirs, passing calls on)."""

    _MARK = "_probe_patch"

    def __init__(self):
        self._patched = []  # (owner, name, original)

    def wrap(self, owner, name, make_wrapper):
        original = getattr(owner, name, None) if owner is not None else None
        if original is None or getattr(original, self._MARK, False):
            return
        wrapper = functools.wraps(original)(make_wrapper(original))
        setattr(wrapper, self._MARK, True)
        setattr(owner, name, wrapper)
        self._patched.append((owner, name, original))

    def uninstall(self):
        while self._patched:
            owner, name, original = self._patched.pop()
            if getattr(getattr(owner, name, None), self._MARK, False):
                setattr(owner, name, original)


def _tracing_quiet(patches, tls):
    """torch.jit.trace runs the model under the tracer, and then again outside it to check the
    trace: neither run is a step's, and nothing is collected while it runs, as inside a module
    dumped whole. (The hooks also stand aside whenever a tracer runs, torch.onnx.export's too:
    their own work entered the graph and broke it, an INTERNAL ASSERT in torch's ir.cpp.)"""
    def make(original):
        def quiet(*args, **kwargs):
            tls.suppress += 1
            try:
                return original(*args, **kwargs)
            finally:
                tls.suppress -= 1
        return quiet

    for owner in (torch.jit, getattr(torch.jit, "_trace", None)):  # trace calls _trace's trace_module
        for name in ("trace", "trace_module"):
            patches.wrap(owner, name, make)


class _BackwardFailures:
    """What waits for the end of a backward pass (statistics to settle, parameter gradients to
    summarise) is handed to torch's autograd engine, which runs it only when the pass
    succeeds. A pass that raises (out of memory, caught by the program, which goes on) is
    counted here, through torch.autograd.backward and grad, so that the next pass starts
    afresh instead of waiting for an end that never comes."""

    def __init__(self, patches, service):
        self.count = 0

        def make(original):
            def counting(*args, **kwargs):
                try:
                    return original(*args, **kwargs)
                except BaseException:
                    self.count += 1
                    try:  # what the pass left waiting is taken now; the program's exception goes on
                        service.modules.backward_failed()
                        service.recorder.backward_failed()
                    except Exception as exc:
                        service.record_error("after a backward pass that raised", exc)
                    raise
            return counting

        for name in ("backward", "grad"):
            patches.wrap(torch.autograd, name, make)


def _say(message):
    sys.stderr.write("[probe] %s\n" % message)


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
        self.reset()

    def reset(self):
        self.inside = False      # in a wrapped API's original call, or in our own work
        self.module_stack = []   # forward entry names of the modules running on this thread
        self.module_calls = []   # _ModuleCall of those modules
        self.expand = 0          # mix: modules selected by `list` that are running
        self.suppress = 0        # module_dump: inside a module dumped as a whole
        self.dumped_calls = []   # module_dump: modules whose call raised `suppress`
        self.keyword_calls = []  # (module, kwargs) of the module calls given keyword arguments
        # The backward pass whose parameter gradients this thread's hooks take (_GradPass).
        self.grad_pass = None


class Service:
    def __init__(self, config):
        self.config = config
        self.pid = os.getpid()
        self.tls = _ThreadState()
        self.lock = threading.RLock()
        self.mix = config.level == "mix"
        allowed = config.allowed
        self.fwd_in = FORWARD in allowed and INPUT in allowed
        self.fwd_out = FORWARD in allowed and OUTPUT in allowed
        self.want_forward = FORWARD in allowed
        self.want_backward = BACKWARD in allowed
        self.bwd_in = BACKWARD in allowed and INPUT in allowed
        self.bwd_out = BACKWARD in allowed and OUTPUT in allowed
        self.list = tuple(config.list)
        self.filtered = bool(config.scope) or bool(self.list)  # else every entry is selected
        self.current_iter = 0
        self.step_serial = 0
        self.running = False   # start() .. stop() in a selected step and rank
        self.gate = True       # token_range
        self.active = False    # running and gate: hooks collect
        self.ended = False
        self._warned = set()
        self._error_count = 0
        # Task overflow_check: a call's tensors are judged as it runs, and only a birth is recorded.
        self.overflow = OverflowCheck(config) if config.checks_overflow else None
        # The API wrappers (L1, mix) see every call that may change a tensor in place: statistics
        # can wait for the step's end (or such a call) and be computed together.
        self.recorder = Recorder(config, self.record_error,
                                 deferred=config.dumps_apis and self.overflow is None)
        self.stacks = StackCapture(_PACKAGE_DIR)
        self.writer = _step_writer.StepWriter(config, self.lock, self._note_once)
        self._reset_step()
        self.modules = ModuleHooks(self)
        self.apis = ApiHooks(self) if config.dumps_apis else None
        self._patches = _Patches()
        _tracing_quiet(self._patches, self.tls)
        self.backward_failures = _BackwardFailures(self._patches, self)
        _step_writer.write_at_exit(self)

    # --------------------------------------------------------------------------------------
    # Step state

    def _reset_step(self):
        self.records = StepRecords()
        self.scope = _Scope(self.config.scope)
        self.writer.end_step()
        self.recorder.tensor_dir = None

    def _update_active(self):
        active = self.running and self.gate and not self.ended and os.getpid() == self.pid
        self.active = active
        self.recorder.stat_cache = None
        self.modules.root_depth = 0
        if self.apis is not None:
            self.apis.set_active(active)

    def set_gate(self, gate):
        if gate != self.gate:
            self.gate = gate
            self._update_active()

    def stop_in_forked_child(self):
        # A forked child (DataLoader workers) does not dump into its parent's files.
        self.running = False
        self.active = False
        self.lock = threading.RLock()
        self.writer.stop_in_forked_child(self.lock)
        if self.apis is not None:
            self.apis.set_active(False)

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
        if os.getpid() != self.pid:
            # A forked child does not dump into its parent's files (stop_in_forked_child); said,
            # where its steps had been announced and then nothing was written.
            self._note_once("forked", "pid %d is a fork of pid %d, where this PrecisionDebugger was made: it dumps "
                            "nothing here. Make the debugger in the child process (or start the child with "
                            "multiprocessing's spawn)" % (os.getpid(), self.pid))
            return
        if model is not None:
            self.add_model(model)
        elif self.config.dumps_modules and not self.modules.models:
            raise ValueError("PrecisionDebugger: level %s dumps modules, so PrecisionDebugger(model=...) or "
                             "start(model=...) must receive the model (a torch.nn.Module or a list of them)"
                             % self.config.level)
        if token_range is not None:
            self.modules.set_token_range(token_range)
            self.gate = False
        else:
            self.modules.token_range = None
            self.gate = True
        steps = self.config.step
        if steps and self.current_iter > steps[-1]:
            self._end("the last step of the config's step list is done")
            return
        if steps and self.current_iter not in steps:
            return
        rank = self._current_rank()
        self.recorder.eager_gradients = rank is not None
        if self.config.rank and (0 if rank is None else rank) not in self.config.rank:
            self._note_once("rank", "rank %s is not in the config's rank list %s: this process dumps nothing"
                            % ("0 (no torch.distributed)" if rank is None else rank, self.config.rank))
            return
        if self.writer.step_dir is None:
            if not self.writer.create_step_dir(self.current_iter, rank, self.pid):
                return
            self.recorder.tensor_dir = self.writer.tensor_dir
            self.writer.write_empty()
        self.running = True
        self._update_active()

    def stop(self):
        if self.ended or not self.running:
            return
        self.running = False
        self._update_active()
        self.flush(wait=False, here=True)

    def step(self):
        if self.ended:
            return
        self.flush(wait=False)
        self.running = False
        self._update_active()
        self.current_iter += 1
        self.step_serial += 1
        self._reset_step()
        self.modules.reset_step()
        if self.apis is not None:
            self.apis.reset_step()
        self.tls.reset()
        steps = self.config.step
        if steps and self.current_iter > steps[-1]:
            self._end("the last step of the config's step list is done")

    def set_init_step(self, step):
        self.current_iter = int(step)

    def _end(self, why):
        """After the last step of the config's step list (or the last overflow birth to dump):
        nothing more is collected and every hook is removed, so the rest of the run costs
        nothing. The process goes on."""
        self.writer.drain()  # the steps queued before
        self.flush(wait=True)
        self.running = False
        self.ended = True
        self._update_active()
        if self.apis is not None:
            self.apis.uninstall()
        self.modules.remove()
        self._patches.uninstall()
        line = "*" * 76
        _say("%s: nothing more is dumped\n%s\n*%s*\n%s" % (why, line, "probe_studio ends successfully.".center(74),
                                                          line))

    # --------------------------------------------------------------------------------------
    # Models (L0 / mix, token_range) and module_dump

    def add_model(self, model):
        self.modules.add_model(model)

    def module_dump(self, module, dump_name):
        self.modules.module_dump(module, dump_name)

    def module_dump_end(self):
        self.modules.module_dump_end()

    # --------------------------------------------------------------------------------------
    # Selection and the step's records, for the hooks

    def selected(self, name):
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

    def insert(self, name, entry):
        with self.lock:
            self.records.insert(name, entry)
        if self.records.unflushed >= _FLUSH_EVERY:
            self.flush(wait=False)

    def insert_with_stack(self, name, entry, formatted):
        """insert() of `entry` (unless None) after the stack of its call (unless None)."""
        records = self.records
        with self.lock:
            if formatted is not None:
                records.add_stack(formatted, name)
            if entry is not None:
                records.insert(name, entry)
        if records.unflushed >= _FLUSH_EVERY:
            self.flush(wait=False)

    def set_value(self, name, key, value):
        with self.lock:
            self.records.set_value(name, key, value)

    def record_birth(self, name, entry, formatted, parent, reason):
        """Task overflow_check: `entry` is where an overflow is born (`reason`: why its output
        counts as overflowed). The modules running around it are not; after the last birth to
        dump, nothing more is watched, or with stop_after_overflow the program ends."""
        for call in self.tls.module_calls:
            call.child_born = True
        if self.config.dumps_modules:
            with self.lock:
                self.records.construct[name] = parent
        self.insert_with_stack(name, entry, formatted)
        _say("overflow born in %s: output %s" % (name, reason))
        overflow = self.overflow
        if not overflow.born():
            return
        if overflow.stop:
            self.flush(wait=True)
            overflow.end_program(_say)
        self._end("overflow_nums (%d) overflow birth(s) dumped" % overflow.births)

    def record_stack(self, name):
        if not self.config.extra_info:
            return
        formatted = self.stacks.capture()
        with self.lock:
            self.records.add_stack(formatted, name)

    def flush(self, wait, timeout=None, here=False):
        """Takes the statistics still waiting (on this thread: the tensors may change once the
        model goes on) and has dump.json, stack.json and construct.json of the current step
        rewritten (StepWriter.write): rendered by the writer thread, or with `here` on this one
        and not waited for; with `wait`, returns once they, and every file queued before, are on
        disk. Never called holding the records' lock (the writer needs it)."""
        recorder = self.recorder
        if os.getpid() == self.pid:
            recorder.settle()  # on this thread: the tensors may change once it goes on
        if recorder.settled:
            # Statistics arrived (here or before an in-place call) maybe after the writer
            # rendered the records last: they are written again.
            with self.lock:
                recorder.settled = False
                self.records.dirty = True
        self.writer.write(self.records, wait, timeout, here)

    def record_error(self, where, exc):
        """An error inside our hooks: logged, never raised into the model."""
        self._error_count += 1
        if self._error_count <= 3:
            _say("error in %s: %s: %s (the model continues; details in dump_error_info.log)"
                 % (where, type(exc).__name__, exc))
        self.writer.log_error(where, exc)
