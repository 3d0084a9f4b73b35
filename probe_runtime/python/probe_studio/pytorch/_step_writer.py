"""The step writer: the step's folder (step<N>/rank<R> or proc<pid>) and its files, dump.json,
stack.json and construct.json exactly as msprobe writes them, each written atomically, and
dump_error_info.log (FORMATS.md section 2). Also what makes sure they are written when the
program ends: at exit and on SIGTERM; a forked child writes nothing."""
# SPDX-License-Identifier: GPL-3.0-or-later
import atexit
import os
import signal
import sys
import threading
import time
import traceback
import weakref

from . import _jsonio


def _say(message):
    sys.stderr.write("[probe] %s\n" % message)


class StepWriter:
    def __init__(self, config, note_once):
        self.config = config
        self.note_once = note_once  # (key, message): said once per key
        self.step_dir = None
        self.tensor_dir = None
        self._logged_errors = set()  # (where, exception type) already in this step's log

    def create_step_dir(self, current_iter, rank, pid):
        """Makes step<N>/rank<R> (proc<pid> without a distributed rank) and, for task tensor,
        its dump_tensor_data when tensors are saved. False (said once) when it cannot be made."""
        folder = "rank%d" % rank if rank is not None else "proc%d" % pid
        path = os.path.join(self.config.dump_path, "step%d" % current_iter, folder)
        try:
            os.makedirs(path, mode=0o750, exist_ok=True)
            tensor_dir = None
            if self.config.saves_tensors:
                tensor_dir = os.path.join(path, "dump_tensor_data")
                os.makedirs(tensor_dir, mode=0o750, exist_ok=True)
        except OSError as exc:
            self.note_once(("mkdir", path), "cannot create the dump directory %s: %s; nothing is dumped for "
                           "this step (the model continues)" % (path, exc.strerror or exc))
            return False
        self.step_dir = path
        self.tensor_dir = tensor_dir
        self.note_once(("dir", path), "dump data of step %d is written to %s" % (current_iter, path))
        return True

    def end_step(self):
        self.step_dir = None
        self.tensor_dir = None
        self._logged_errors = set()

    def write(self, records):
        """Rewrites dump.json, stack.json and construct.json of the current step (atomically)
        from `records`; on failure the data stays and is written again next time."""
        if self.step_dir is None or not records.dirty:
            return
        config = self.config
        doc = {"task": config.task, "level": config.level, "framework": "pytorch",
               "dump_data_dir": self.tensor_dir, "data": records.data}
        try:
            dump_text = _jsonio.dumps(doc)
            stack_text = construct_text = None
            if config.extra_info:
                stack = {}
                for index, (frames, names) in enumerate(records.stack_groups.items()):
                    stack[str(index)] = [list(names), list(frames)]
                stack_text = _jsonio.dumps(stack)
                construct_text = _jsonio.dumps(records.construct)
            _jsonio.write_text_atomic(os.path.join(self.step_dir, "dump.json"), dump_text)
            if stack_text is not None:
                _jsonio.write_text_atomic(os.path.join(self.step_dir, "stack.json"), stack_text)
                _jsonio.write_text_atomic(os.path.join(self.step_dir, "construct.json"), construct_text)
            records.dirty = False
            records.unflushed = 0
        except OSError as exc:
            self.note_once(("write", self.step_dir, exc.errno),
                           "cannot write the dump files in %s: %s; the data stays in memory and is written "
                           "again at the next stop()/step() (the model continues)"
                           % (self.step_dir, exc.strerror or exc))

    def log_error(self, where, exc):
        """Appends an error of our hooks to the step's dump_error_info.log, once per kind."""
        key = (where, type(exc).__name__)
        if key in self._logged_errors or self.step_dir is None:
            return
        self._logged_errors.add(key)
        try:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S %z")
            text = "[%s] %s: %s: %s\nCall stack (most recent call last):\n%s\n" % (
                stamp, where, type(exc).__name__, exc, "".join(traceback.format_tb(exc.__traceback__)))
            with open(os.path.join(self.step_dir, "dump_error_info.log"), "a", encoding="utf-8") as f:
                f.write(text)
        except OSError:
            pass


# ------------------------------------------------------------------------------------------
# The end of the program

def write_at_exit(service):
    """Writes what `service` collected when the process ends normally or by SIGTERM; a forked
    child (DataLoader workers) stops collecting and writes nothing."""
    ref = weakref.ref(service)
    atexit.register(_flush_at_exit, ref)
    _install_fork_guard(ref)
    _install_sigterm_flush(ref)


def _flush_at_exit(service_ref):
    service = service_ref()
    if service is not None and os.getpid() == service.pid:
        try:
            service.flush()
        except Exception as exc:
            _say("could not write the dump files at exit: %r" % (exc,))


def _install_fork_guard(ref):
    def after_in_child():
        s = ref()
        if s is not None:
            s.stop_in_forked_child()

    try:
        os.register_at_fork(after_in_child=after_in_child)
    except AttributeError:
        pass


def _install_sigterm_flush(ref):
    """SIGTERM normally ends Python without atexit: when nobody handles it, the dump files are
    written first, then the default action runs."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return
    except (ValueError, OSError):
        return

    def on_sigterm(signum, frame):
        _flush_at_exit(ref)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    try:
        signal.signal(signal.SIGTERM, on_sigterm)
    except (ValueError, OSError):
        pass
