"""os._exit ends the process without atexit: what is still queued (the probe's rows, the
debugger's step files) would be lost. before_os_exit() has it done first, by the injected probe
and by PrecisionDebugger alike."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os


def before_os_exit(callback):
    """Wraps os._exit so that it calls `callback()` first, then ends the process as asked, the
    callback's failure included. Only in this process: a forked child (every multiprocessing
    worker ends with os._exit) goes straight on, since what is queued is its parent's, and locks
    may have been held by a parent's thread at the fork."""
    previous = os._exit
    owner = os.getpid()

    def _exit(status):
        try:
            if os.getpid() == owner:
                callback()
        finally:
            previous(status)

    _exit.__doc__ = previous.__doc__
    os._exit = _exit
