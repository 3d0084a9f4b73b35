"""The step writer: the step's folder (step<N>/rank<R> or proc<pid>) and its files, dump.json,
stack.json and construct.json exactly as msprobe writes them, and dump_error_info.log
(FORMATS.md section 2).

The files are written by a writer thread: the model's thread only queues a step's records (at
step(), without waiting; at stop(), waiting until they are on disk). The writer renders them
with Python's C encoder while holding the records' lock (a consistent snapshot, a fraction of
a millisecond) and indents and writes them in C++ without the GIL, each file under a temporary
name and then renamed, so a file is never half-written under its real name. The queue is
drained at exit and on SIGTERM; a forked child writes nothing."""
# SPDX-License-Identifier: GPL-3.0-or-later
import atexit
import collections
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


class _Job:
    __slots__ = ("records", "step_dir", "tensor_dir", "done")

    def __init__(self, records, step_dir, tensor_dir):
        self.records = records
        self.step_dir = step_dir
        self.tensor_dir = tensor_dir
        self.done = False


class StepWriter:
    def __init__(self, config, lock, note_once):
        self.config = config
        self.lock = lock            # the records' lock: hooks change records only holding it
        self.note_once = note_once  # (key, message): said once per key
        self.step_dir = None
        self.tensor_dir = None
        self._logged_errors = set()  # (where, exception type) already in this step's log
        self._jobs = collections.deque()
        self._changed = threading.Condition(threading.Lock())
        self._thread = None
        self._pid = os.getpid()
        self._stopped = False

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

    def write(self, records, wait, timeout=None):
        """Queues `records` to be written into the current step's folder (unless they are queued
        already); with `wait`, returns once they are on disk or writing them failed and was said
        (or after `timeout` seconds, when given)."""
        if self.step_dir is None or self._stopped or (records.queued and not wait):
            return
        job = _Job(records, self.step_dir, self.tensor_dir)
        with self._changed:
            records.queued = True
            self._jobs.append(job)
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="probe_studio step writer", daemon=True)
                try:
                    thread.start()
                    self._thread = thread
                except RuntimeError:  # no new threads at interpreter shutdown: written here
                    self._jobs.pop()
                    self._write(job)
                    return
            self._changed.notify_all()
            deadline = None if timeout is None else time.monotonic() + timeout
            while wait and not job.done:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._changed.wait(left)

    def drain(self):
        """Returns once every queued write is done (at exit)."""
        with self._changed:
            while self._jobs and self._thread is not None and self._thread.is_alive():
                self._changed.wait()

    def stop_in_forked_child(self, lock):
        # The parent's writer thread does not exist in a forked child (its locks may have been
        # held at the fork): nothing is written there.
        self.lock = lock
        self.step_dir = None
        self._stopped = True
        self._jobs = collections.deque()
        self._changed = threading.Condition(threading.Lock())
        self._thread = None

    def _run(self):
        while True:
            with self._changed:
                while not self._jobs:
                    self._changed.wait()
                job = self._jobs[0]
            try:
                self._write(job)
            except BaseException as exc:  # never let the thread die with jobs waiting on it
                _say("could not write the dump files in %s: %r" % (job.step_dir, exc))
            with self._changed:
                self._jobs.popleft()
                job.done = True
                self._changed.notify_all()

    def _write(self, job):
        """Writes dump.json, stack.json and construct.json of a step from its records; on
        failure the data stays and is written again next time."""
        records = job.records
        config = self.config
        with self.lock:
            records.queued = False
            if not records.dirty:
                return
            doc = {"task": config.task, "level": config.level, "framework": "pytorch",
                   "dump_data_dir": job.tensor_dir, "data": records.data}
            dump_text = _jsonio.compact(doc)
            stack_text = construct_text = None
            if config.extra_info:
                stack = {}
                for index, (frames, names) in enumerate(records.stack_groups.items()):
                    stack[str(index)] = [names, frames]
                stack_text = _jsonio.compact(stack)
                construct_text = _jsonio.compact(records.construct)
            records.dirty = False
            records.unflushed = 0
        try:
            _jsonio.write_compact_atomic(os.path.join(job.step_dir, "dump.json"), dump_text)
            if stack_text is not None:
                _jsonio.write_compact_atomic(os.path.join(job.step_dir, "stack.json"), stack_text)
                _jsonio.write_compact_atomic(os.path.join(job.step_dir, "construct.json"), construct_text)
        except OSError as exc:
            with self.lock:
                records.dirty = True
            self.note_once(("write", job.step_dir, exc.errno),
                           "cannot write the dump files in %s: %s; the data stays in memory and is written "
                           "again at the next stop()/step() (the model continues)"
                           % (job.step_dir, exc.strerror or exc))

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


def _flush_at_exit(service_ref, timeout=None):
    service = service_ref()
    if service is not None and os.getpid() == service.pid:
        try:
            service.flush(wait=True, timeout=timeout)
            if timeout is None:
                service.writer.drain()
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
        # Bounded: the signal may have interrupted a hook of this thread holding the records'
        # lock, which the writer needs. The files on disk are whole either way.
        _flush_at_exit(ref, timeout=10.0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    try:
        signal.signal(signal.SIGTERM, on_sigterm)
    except (ValueError, OSError):
        pass
