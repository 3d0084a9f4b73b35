"""What the command-line tools written in Python (probe replay, probe bisect) share: their name in
messages (`probe <command>` when started by probe, set in $PROBE_COMMAND_NAME) and finding torch."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys

EXIT_NO_TORCH = 69


def command_name(default):
    return os.environ.get("PROBE_COMMAND_NAME", default)


def say(default_name, message):
    sys.stderr.write("%s: %s\n" % (command_name(default_name), message))
    sys.stderr.flush()


def import_torch(default_name):
    """torch, or None after saying how to get an interpreter that has it."""
    try:
        import torch
        return torch
    except ImportError:
        say(default_name, "this Python (%s) has no torch; run with the interpreter that has it (Debian: "
            "/usr/bin/python3): --python PATH or PROBE_PYTHON" % sys.executable)
        return None
