"""Which rank of a torch.distributed job this process is, and whether it is the job's launcher.

A rank's dump is named by its rank: data/<rank>_<pid> in the op-level layout (the rank stands for
the device id), step<S>/rank<R> in msprobe's. The rank is the one torch.distributed reports once
its process group is up, else the one the launcher put in the environment (torch.distributed.run,
torchrun and torch.distributed.launch set RANK and LOCAL_RANK).
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys

# Launchers that start a job's ranks as processes of their own and run no model themselves.
LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch")
LAUNCHER_SCRIPTS = ("torchrun",)


def launcher_rank():
    """The global rank the launcher gave this process (RANK, else LOCAL_RANK), or None."""
    for variable in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(variable, "").strip()
        if value.isdigit():
            return int(value)
    return None


def current_rank(torch):
    """torch.distributed's rank once its process group is initialised, else the launcher's, else
    None (not a distributed job)."""
    try:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except Exception:  # a torch without distributed support: the environment may still say
        pass
    return launcher_rank()


def _command_line():
    original = getattr(sys, "orig_argv", None)  # the interpreter's own arguments (-m ... too)
    if original:
        return list(original)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return list(sys.argv)


def is_launcher(command_line=None):
    """This process is torch.distributed's launcher (python -m torch.distributed.run or .launch,
    torchrun): it imports torch to start the ranks, and runs no model itself."""
    args = _command_line() if command_line is None else command_line
    skip = False
    for i, arg in enumerate(args[1:], start=1):
        if skip:  # the value of -W or -X
            skip = False
            continue
        if arg in ("-W", "-X", "--check-hash-based-pycs"):
            skip = True
            continue
        if arg.startswith("-m"):  # the interpreter's -m: the module it runs; what follows is its own
            module = arg[2:] or (args[i + 1] if i + 1 < len(args) else "")
            return module in LAUNCHER_MODULES
        if not arg.startswith("-"):  # a script: the arguments that follow are its own
            break
    # A console script runs as "python3 /usr/bin/torchrun ..." (or is itself argv[0]).
    return any(os.path.basename(a) in LAUNCHER_SCRIPTS for a in args[:2])
