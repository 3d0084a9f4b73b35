"""Task overflow_check (msprobe's config key): only the calls where an overflow is born are
dumped, with their input and output tensors (.pt files, as task tensor writes them).

A call is where an overflow is born when every input tensor it is given (and, for a module, its
parameters) is finite, an output is not, no call inside it was where it was born already (the
innermost is the one), and its type is not one that makes Inf on purpose (fill, full, empty).
Whether a tensor counts as overflowed is decided in C++ by the rule the op-level task and
`probe overflow` apply (probe/format/overflow_rule.h): nothing of it is repeated here.

After `overflow_nums` births nothing more is watched (-1: no limit); with `stop_after_overflow`
the program is then ended, its files on disk, with the documented exit code."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import sys

import torch

from . import _ops

_Tensor = torch.Tensor
_MAX_DEPTH = 16


def tensors_of(value, out, depth=0):
    """The tensors among `value` (recursively through lists, tuples and dicts)."""
    if isinstance(value, _Tensor):
        out.append(value)
    elif depth < _MAX_DEPTH:
        if isinstance(value, (list, tuple)):
            for v in value:
                tensors_of(v, out, depth + 1)
        elif isinstance(value, dict):
            for v in value.values():
                tensors_of(v, out, depth + 1)
    return out


def held_copy(value, depth=0):
    """`value` with each tensor replaced by a detached copy: what a call that changes its inputs
    in place was given (its requires_grad as the tensor's, which the entry says)."""
    if isinstance(value, _Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_() if value.requires_grad else copy
    if depth < _MAX_DEPTH:
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(held_copy(v, depth + 1) for v in value)
        if isinstance(value, list):
            return [held_copy(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {k: held_copy(v, depth + 1) for k, v in value.items()}
    return value


class OverflowCheck:
    """The births counted in this process and what happens at the last one."""

    def __init__(self, config):
        self.limit = config.overflow_nums
        self.stop = config.stop_after_overflow
        self.births = 0
        self._ignored = {}  # entry prefix or module class -> bool
        # The API calls of the step whose inputs or outputs overflowed ("Tensor.__pow__.0."):
        # their backward computes from what they saved, and is no birth (the rule probe
        # overflow applies to a dump).
        self._overflowed_serial = None
        self._overflowed_calls = set()

    @property
    def exhausted(self):
        return 0 <= self.limit <= self.births

    def ignored(self, kind):
        """Whether an API (its entry prefix, "Torch.full.") or module class is never a birth."""
        known = self._ignored.get(kind)
        if known is None:
            known = self._ignored[kind] = bool(_ops.overflow_ignored(kind))
        return known

    @staticmethod
    def overflowed(*values):
        """Why the first overflowed tensor among `values` counts as overflowed, "" when none is."""
        for reason in _ops.overflow_reasons(tensors_of(values, [])):
            if reason:
                return reason
        return ""

    def note_forward_overflowed(self, serial, call):
        if serial != self._overflowed_serial:
            self._overflowed_serial = serial
            self._overflowed_calls = set()
        self._overflowed_calls.add(call)

    def forward_overflowed(self, serial, call):
        return serial == self._overflowed_serial and call in self._overflowed_calls

    def born(self):
        """Counts a birth that was dumped; True when it was the last one to watch."""
        self.births += 1
        return self.exhausted

    def end_program(self, say):
        """stop_after_overflow: the dump files are on disk; the program ends here with the
        exit code of the op-level task's stop (no exit handler runs: they could run model code)."""
        code = _ops.overflow_stop_exit_code()
        say("stop_after_overflow: overflow_nums (%d) overflow birth(s) dumped; ending the program with exit "
            "code %d" % (self.births, code))
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)
