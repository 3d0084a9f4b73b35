"""PrecisionDebugger: msprobe's code-level dump API, writing the msprobe layout."""
# SPDX-License-Identifier: GPL-3.0-or-later
import sys
import threading

from .. import grad_monitor
from . import _ops
from ._config import ProbeConfigError, build_config
from ._seed import seed_all


class PrecisionDebugger:
    """Dumps a PyTorch program's APIs (level L1), modules (L0) or both (mix) as msprobe does.

    ``PrecisionDebugger(config_path=None, task=None, dump_path=None, level=None, model=None,
    step=None)`` reads the config (FORMATS.md section 3; arguments given here win over the
    file) and refuses an invalid one with ProbeConfigError. One instance per process: creating
    it again returns the same debugger. ``start``, ``stop`` and ``step`` work on the instance
    and on the class (``PrecisionDebugger.start()`` inside a loop or another file).
    """

    _instance = None
    _lock = threading.RLock()

    def __new__(cls, *args, **kwargs):
        with cls._lock:
            if cls._instance is None:
                instance = super().__new__(cls)
                instance._initialized = False
                cls._instance = instance
            return cls._instance

    def __init__(self, config_path=None, task=None, dump_path=None, level=None, model=None, step=None):
        with self._lock:
            if self._initialized:
                if any(v is not None for v in (config_path, task, dump_path, level, model, step)):
                    sys.stderr.write("[probe] warning: PrecisionDebugger exists already in this process; the "
                                     "arguments of this second construction are ignored\n")
                return
            import torch
            _ops.load(torch)
            config = build_config(config_path, task, dump_path, level, step)
            from ._service import Service
            if config.seed_requested:
                seed_all(config.seed, config.is_deterministic)
            service = Service(config)
            if model is not None:
                service.add_model(model)
            self.config = config
            self.service = service
            self._initialized = True

    @classmethod
    def _get(cls):
        instance = cls._instance
        if instance is None or not instance._initialized:
            raise RuntimeError("PrecisionDebugger instance is not created: create PrecisionDebugger(...) before "
                               "calling start(), stop() or step()")
        return instance

    @classmethod
    def start(cls, model=None, token_range=None):
        """Turns dumping on (if the current step and rank are selected). At level L0 and mix the
        model must be given here or to the constructor. ``token_range=[a, b]`` dumps only the
        model's forward calls a..b (counted from 0 at this start)."""
        with cls._lock:
            cls._get().service.start(model, token_range)
        grad_monitor.arm(model)  # only when $PROBE_GRAD_MONITOR names a folder; never raises

    @classmethod
    def stop(cls):
        """Turns dumping off and has dump.json, stack.json and construct.json written: the
        statistics are taken here, the files written by a writer thread (all are on disk when
        the process exits, the dump ends, or flush() returns)."""
        with cls._lock:
            cls._get().service.stop()

    @classmethod
    def step(cls):
        """Ends the step: has its files written (as stop()); what follows belongs to the next
        step."""
        with cls._lock:
            cls._get().service.step()

    @classmethod
    def flush(cls, timeout=None):
        """Probe Studio's own (msprobe has no such call, its stop() writes before it returns):
        returns once every file stop(), step() and the steps before handed over is whole on
        disk, so that this process may read dump.json, stack.json and construct.json; the
        entries of a step still being dumped (start() without stop()) are not in them yet.
        Writes what is still queued on this thread and tries once more each file whose last
        write failed. Returns True, or False when `timeout` seconds passed first; raises
        OSError (its filename the file) when writing one still fails (disk full, folder gone):
        its text stays in memory, and a later flush() (or the exit) tries it again, as stop()
        and step() write the current step's files again. Never waits for a writer thread that
        is gone."""
        with cls._lock:
            return cls._get().service.writer.flush(timeout)

    @classmethod
    def forward_backward_dump_end(cls):
        """Same as stop() (msprobe 2025 API)."""
        cls.stop()

    @classmethod
    def set_init_step(cls, step):
        """The number of the current step (what step<N> and the config's step list count)."""
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError("PrecisionDebugger.set_init_step: step must be a whole number >= 0, not %r" % (step,))
        with cls._lock:
            cls._get().service.set_init_step(step)


def module_dump(module, dump_name):
    """Dumps `module` as one entry, Module.<dump_name>.<Class>.forward.<n> (and its backward),
    until module_dump_end(); the APIs and child modules it runs are not dumped."""
    import torch
    if not isinstance(module, torch.nn.Module):
        raise TypeError("module_dump: module must be a torch.nn.Module, not %s" % type(module).__name__)
    if not isinstance(dump_name, str) or not dump_name:
        raise TypeError("module_dump: dump_name must be a non-empty str, not %r" % (dump_name,))
    with PrecisionDebugger._lock:
        PrecisionDebugger._get().service.module_dump(module, dump_name)


def module_dump_end():
    """Ends module_dump(): the module is no longer dumped as a whole."""
    with PrecisionDebugger._lock:
        PrecisionDebugger._get().service.module_dump_end()


__all__ = ["PrecisionDebugger", "ProbeConfigError", "module_dump", "module_dump_end", "seed_all"]
