"""The step writer: the step's folder (step<N>/rank<R> or proc<pid>) and its files, dump.json,
stack.json and construct.json exactly as msprobe writes them, and dump_error_info.log
(FORMATS.md section 2).

Two threads write, and the model's thread does no more than it must:
  * the files are written (under a temporary name, then renamed: never half-written under their
    real name) by the adapter's C++ file writer thread, which never takes the GIL (_jsonio);
  * the text is rendered, indented, by our C encoder while holding the records' lock (a
    consistent snapshot) and handed over under the same lock, so files are written in the order
    rendered.
    stop() takes the step's statistics and renders the text on the model's thread (a writer
    thread of our own would hold the GIL as long, and the model's thread would wait for it),
    hands it to the C++ writer and returns without waiting for the disk; a failure is said at
    the next stop()/step() or at exit, and the records, while still the current step's, are
    written again. step() only queues the step's records to this module's writer thread (and
    not even that when stop() handed them over already), which renders them and waits for
    their files. The model's thread waits only when the files of more than _BACKLOG writes are
    not yet on disk.
Everything handed over is on disk when the process exits (normally or on SIGTERM), when the
dump ends (after the config's last step, or overflow_nums) and when PrecisionDebugger.flush()
returns (StepWriter.flush); a forked child writes nothing."""
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
from .. import _os_exit

_BACKLOG = 2  # writes (a step's files each) that may wait for the disk before stop()/step() wait


def _say(message):
    sys.stderr.write("[probe] %s\n" % message)


def _planted_link(root, path):
    """The first folder from below `root` down to `path` and its dump_tensor_data that is a
    symbolic link, or None."""
    relative = os.path.relpath(path, root)
    current = root
    for part in relative.split(os.sep) + ["dump_tensor_data"]:
        current = os.path.join(current, part)
        if os.path.islink(current):
            return current
    return None


class StepWriter:
    def __init__(self, config, lock, note_once):
        self.config = config
        self.lock = lock            # the records' lock: hooks change records only holding it
        self.note_once = note_once  # (key, message): said once per key
        self.step_dir = None
        self.tensor_dir = None
        self._logged_errors = set()  # (where, exception type) already in this step's log
        self._jobs = collections.deque()  # (records, step_dir, tensor_dir) for the writer thread
        self._changed = threading.Condition(threading.Lock())
        self._thread = None
        self._unchecked = collections.deque()  # (ticket, records, step_dir) handed over unwaited
        self._stopped = False
        self._empty_dump = (None, None)  # (tensor_dir, the text of an empty step's dump.json)

    def create_step_dir(self, current_iter, rank, pid):
        """Chooses step<N>/rank<R> (proc<pid> without a distributed rank). When tensors are saved
        (on the model's thread, as they come), makes it and its dump_tensor_data here; else the
        C++ writer makes it before the step's first file (write_empty), off the model's thread.
        False (said once) when it cannot be made."""
        folder = "rank%d" % rank if rank is not None else "proc%d" % pid
        path = os.path.join(self.config.dump_path, "step%d" % current_iter, folder)
        # A link planted below dump_path (step0 -> /elsewhere) would have the step written where
        # it points: not followed, as msprobe and the op-level probe refuse links in a dump.
        link = _planted_link(self.config.dump_path, path)
        if link is not None:
            self.note_once(("link", link), "%s is a symbolic link, which is not followed: nothing is dumped for "
                           "this step (the model continues)" % link)
            return False
        try:
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
        self.note_once(("dir", path), "step %d dumps into %s" % (current_iter, path))
        return True

    def end_step(self):
        self.step_dir = None
        self.tensor_dir = None
        self._logged_errors = set()

    def write(self, records, wait, timeout=None, here=False):
        """Has `records` written into the current step's folder (unless nothing changed since
        they were last written). With `wait`, renders them here once everything queued before is
        on disk, and returns once their files are too, or writing them failed and was said (or
        after `timeout` seconds, when given). Else `here` renders them here and hands them to the
        C++ writer without waiting; without it they are queued to the writer thread (unless
        queued already). Either waits only while more than _BACKLOG writes are not yet done."""
        if self.step_dir is None or self._stopped:
            return
        place = (self.step_dir, self.tensor_dir)
        self._check_written()
        if wait:
            deadline = None if timeout is None else time.monotonic() + timeout
            self.drain(timeout)  # the files queued before are written first
            self._write(records, place, None if deadline is None else max(0.0, deadline - time.monotonic()))
            return
        if here:
            self._write(records, place, None, waits=False)
            return
        if records.queued or not records.dirty:
            return
        with self._changed:
            records.queued = True
            self._jobs.append((records, place))
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="probe_studio step writer", daemon=True)
                # Known before it starts: a KeyboardInterrupt raised in start() once the thread
                # runs must not leave room for a second one taking the same jobs.
                self._thread = thread
                try:
                    thread.start()
                except RuntimeError:  # no new threads at interpreter shutdown: written here
                    self._thread = None
                    self._jobs.pop()
                    self._write(records, place, None)
                    return
                except BaseException:  # interrupted before the thread began: the next write starts one
                    if thread.ident is None:
                        self._thread = None
                    raise
            self._changed.notify_all()
            # The model runs ahead of the disk by at most _BACKLOG steps: their texts wait in memory.
            while len(self._jobs) > _BACKLOG and self._thread.is_alive():
                self._changed.wait()

    def _check_written(self, keep=None, deadline=None):
        """Takes the results of the files handed over without waiting, in order, as far as they
        are written; with `keep`, first waits until no more than `keep` are not yet taken (or
        until the time.monotonic() `deadline`). A failure is said, and the records it belonged
        to are written again at their next write."""
        unchecked = self._unchecked
        while unchecked:
            ticket, records, step_dir = unchecked[0]
            timeout = 0
            if keep is not None and len(unchecked) > keep:
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                if not _jsonio.wait(ticket, timeout):
                    return
            except OSError as exc:
                with self.lock:
                    records.dirty = True
                self._say_failed(step_dir, exc)
            unchecked.popleft()

    def write_empty(self):
        """The step's files as they are before anything is recorded (msprobe writes them when
        the step begins): handed to the C++ writer, not waited for (a failure is said when the
        step's data is written)."""
        tensor_dir, text = self._empty_dump
        if text is None or tensor_dir != self.tensor_dir:  # the same text every step without tensors saved
            doc = {"task": self.config.task, "level": self.config.level, "framework": "pytorch",
                   "dump_data_dir": self.tensor_dir, "data": {}}
            text = _jsonio.indented(doc)
            self._empty_dump = (self.tensor_dir, text)
        try:
            self._queue_file("dump.json", self.step_dir, text, False)
            if self.config.extra_info:
                self._queue_file("stack.json", self.step_dir, "{}", False)
                self._queue_file("construct.json", self.step_dir, "{}", False)
        except OSError:
            pass

    def flush(self, timeout=None):
        """PrecisionDebugger.flush(): returns True once every file handed over so far (at stop(),
        step(), the step's beginning, every _FLUSH_EVERY entries) is whole on disk, False when
        `timeout` seconds passed first. The steps queued to this module's writer thread are
        rendered first (here, if that thread is gone); then the C++ writer writes what is queued
        (this thread writing what no thread is writing) and tries each file whose last write
        failed once more. Raises OSError (filename: the file) when one still fails; the records
        of the current step are written again at the next stop()/step() as after any failure.
        Writes nothing in a forked child (nothing there is this process's to write)."""
        if self._stopped:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while self._jobs and self._thread is not None and self._thread.is_alive():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._changed.wait(left)
            orphans = list(self._jobs)  # the thread is gone (interpreter shutdown): rendered here
            self._jobs.clear()
        for records, place in orphans:
            self._write(records, place, None, waits=False)
        try:
            return _jsonio.flush(None if deadline is None else max(0.0, deadline - time.monotonic()))
        finally:
            self._check_written()  # the results taken (all are known now): failures said

    def drain(self, timeout=None):
        """flush() where nothing may raise (at exit, the dump's end, before a synchronous
        write): a file that still fails is said."""
        try:
            self.flush(timeout)
        except OSError as exc:
            self._say_failed(os.path.dirname(exc.filename or "") or "?", exc)

    def stop_in_forked_child(self, lock):
        # The parent's writer threads do not exist in a forked child (their locks may have been
        # held at the fork): nothing is written there.
        self.lock = lock
        self.step_dir = None
        self._stopped = True
        self._jobs = collections.deque()
        self._unchecked = collections.deque()
        self._changed = threading.Condition(threading.Lock())
        self._thread = None

    def _run(self):
        while True:
            with self._changed:
                while not self._jobs:
                    self._changed.wait()
                records, place = self._jobs[0]
            try:
                self._write(records, place, None)
            except BaseException as exc:  # never let the thread die with jobs waiting on it
                _say("could not write the dump files in %s: %r" % (place[0], exc))
            with self._changed:
                self._jobs.popleft()
                self._changed.notify_all()

    def _queue_file(self, name, step_dir, text, waited):
        return _jsonio.queue(os.path.join(step_dir, name), text, waited)

    def _write(self, records, place, timeout, waits=True):
        """Renders dump.json, stack.json and construct.json of a step from its records, hands
        them to the C++ writer and (when `waits`) waits for them; on failure the data stays and
        is written again next time."""
        step_dir, tensor_dir = place
        config = self.config
        tickets = []
        waited = True if waits else _jsonio.LATER
        try:
            with self.lock:
                records.queued = False
                if not records.dirty:
                    return
                doc = {"task": config.task, "level": config.level, "framework": "pytorch",
                       "dump_data_dir": tensor_dir, "data": records.data}
                tickets.append(self._queue_file("dump.json", step_dir, _jsonio.indented(doc), waited))
                # An empty stack.json or construct.json is not written again: it holds "{}" since
                # the step began (write_empty), and msprobe, too, writes only the non-empty ones
                # (construct.json stays {} at level L1: one file fewer to wait for at each stop()).
                if config.extra_info and records.stack_groups:
                    stack = {}
                    for index, (frames, names) in enumerate(records.stack_groups.values()):
                        stack[str(index)] = [names, frames]
                    tickets.append(self._queue_file("stack.json", step_dir, _jsonio.indented(stack), waited))
                if config.extra_info and records.construct:
                    tickets.append(self._queue_file("construct.json", step_dir, _jsonio.indented(records.construct),
                                                    waited))
                records.dirty = False
                records.unflushed = 0
            if not waits:
                unchecked = self._unchecked
                for ticket in tickets:
                    unchecked.append((ticket, records, step_dir))
                if len(unchecked) > 3 * _BACKLOG:  # up to three files per write
                    self._check_written(3 * _BACKLOG)
                return
            deadline = None if timeout is None else time.monotonic() + timeout
            for ticket in tickets:
                if not _jsonio.wait(ticket, None if deadline is None else max(0.0, deadline - time.monotonic())):
                    return  # the time given is up: the files are written after
        except OSError as exc:
            with self.lock:
                records.dirty = True
            self._say_failed(step_dir, exc)

    def _say_failed(self, step_dir, exc):
        self.note_once(("write", step_dir, exc.errno),
                       "cannot write the dump files in %s: %s; the data stays in memory and is written "
                       "again at the next stop()/step() (the model continues)" % (step_dir, exc.strerror or exc))

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
            os.makedirs(self.step_dir, mode=0o750, exist_ok=True)  # the writer may not have made it yet
            with open(os.path.join(self.step_dir, "dump_error_info.log"), "a", encoding="utf-8") as f:
                f.write(text)
        except OSError:
            pass


# ------------------------------------------------------------------------------------------
# The end of the program

def write_at_exit(service):
    """Writes what `service` collected when the process ends normally, by SIGTERM or by
    os._exit; a forked child (DataLoader workers) stops collecting and writes nothing."""
    ref = weakref.ref(service)
    atexit.register(_flush_at_exit, ref)
    _install_fork_guard(ref)
    _install_sigterm_flush(ref)
    # os._exit (distributed scripts end with it right after step(), to skip a hanging
    # teardown): the dump.json on disk was an earlier, shorter one. Bounded as at SIGTERM.
    _os_exit.before_os_exit(lambda: _flush_at_exit(ref, timeout=10.0))


def _flush_at_exit(service_ref, timeout=None):
    service = service_ref()
    if service is not None and os.getpid() == service.pid:
        try:
            service.writer.drain(timeout)
            service.flush(wait=True, timeout=timeout)
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
