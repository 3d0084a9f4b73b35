"""The code-level config (FORMATS.md section 3): read, merged with the constructor's
arguments, and validated by the C++ validator (probe::format::parseApiConfig), which is the
one place the rules live; this module only turns its verdict into Python values."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import sys

from . import _ops

FORWARD, BACKWARD, INPUT, OUTPUT = "forward", "backward", "input", "output"


class ProbeConfigError(ValueError):
    """The config (file or constructor arguments) cannot be used. The message lists every
    problem with the key it concerns and the accepted values."""


def _say(message):
    sys.stderr.write("[probe] %s\n" % message)


def _raise_issues(issues, intro):
    errors = [i["text"] for i in issues if not i["warning"]]
    raise ProbeConfigError(intro + "\n  " + "\n  ".join(errors))


def allowed_data_modes(modes):
    """msprobe's rule: "all" is everything; otherwise the given modes, completed with both
    directions when none is given and with both sides when none is given."""
    if "all" in modes:
        return frozenset((FORWARD, BACKWARD, INPUT, OUTPUT))
    allowed = set(modes)
    if not allowed & {FORWARD, BACKWARD}:
        allowed |= {FORWARD, BACKWARD}
    if not allowed & {INPUT, OUTPUT}:
        allowed |= {INPUT, OUTPUT}
    return frozenset(allowed)


class DebuggerConfig:
    """What PrecisionDebugger does, fully validated."""

    def __init__(self, normalised, raw, label):
        self.label = label
        self.task = normalised["task"]
        self.dump_path = os.path.abspath(normalised["dump_path"])
        self.rank = list(normalised["rank"])
        self.step = list(normalised["step"])
        self.level = normalised["level"]
        self.seed = normalised["seed"]
        self.is_deterministic = normalised["is_deterministic"]
        # msprobe 1.0 seeded at construction; we do when the config asks for it explicitly.
        self.seed_requested = "seed" in raw or "is_deterministic" in raw
        self.extra_info = normalised.get("extra_info", True)
        section = normalised[self.task if self.task in ("tensor", "overflow_check") else "statistics"]
        self.scope = list(section["scope"])
        self.list = list(section["list"])
        # overflow_check: an entry always holds its inputs and outputs (msprobe sets ["all"]).
        self.data_mode = ["all"] if self.task == "overflow_check" else list(section["data_mode"])
        # overflow_check: births dumped before nothing more is watched (-1: no limit), and
        # whether the program is then ended (Probe Studio's stop_after_overflow).
        overflow = normalised["overflow_check"]
        self.overflow_nums = overflow["overflow_nums"]
        self.stop_after_overflow = overflow["stop_after_overflow"]
        self.summary_mode = section.get("summary_mode", "statistics")
        # statistics task: entries (names or fragments) whose tensors are saved as with task tensor
        self.tensor_list = list(section.get("tensor_list", [])) if self.task == "statistics" else []
        self.allowed = allowed_data_modes(self.data_mode)

    @property
    def saves_tensors(self):
        """Whether the step has a dump_tensor_data folder (task tensor or overflow_check, or a
        tensor_list)."""
        return self.task in ("tensor", "overflow_check") or bool(self.tensor_list)

    @property
    def checks_overflow(self):
        return self.task == "overflow_check"

    @property
    def dumps_modules(self):
        return self.level in ("L0", "mix")

    @property
    def dumps_apis(self):
        return self.level in ("L1", "mix")

    def __repr__(self):
        return ("DebuggerConfig(task=%r, level=%r, dump_path=%r, step=%r, rank=%r, scope=%r, list=%r, "
                "data_mode=%r, summary_mode=%r, tensor_list=%r, overflow_nums=%r, stop_after_overflow=%r)"
                % (self.task, self.level, self.dump_path, self.step, self.rank, self.scope, self.list, self.data_mode,
                   self.summary_mode, self.tensor_list, self.overflow_nums, self.stop_after_overflow))


def _say_warnings(issues):
    for issue in issues:
        if issue["warning"]:
            _say(issue["text"])  # "<file>: warning: key ...: has no effect ..."


def _check(text, label):
    config, issues = _ops.check_config(text, label)
    _say_warnings(issues)
    return config, issues


def build_config(config_path=None, task=None, dump_path=None, level=None, step=None):
    """Reads `config_path` (None: the defaults), applies the constructor's arguments the way
    msprobe does (an argument given wins over the file) and validates everything."""
    raw = {}
    label = "<default config>"
    if config_path is not None:
        if not isinstance(config_path, (str, os.PathLike)):
            raise ProbeConfigError("PrecisionDebugger: config_path must be a path to a config.json (str), not %s"
                                   % type(config_path).__name__)
        label = os.fsdecode(config_path)
        if "\0" in label:  # the system would read the file named by what comes before it
            raise ProbeConfigError("PrecisionDebugger: config_path %r holds a NUL character, which no path can hold"
                                   % label)
        try:
            checked = _ops.check_config_file(label)
        except UnicodeError:  # a path of bytes that are not UTF-8 (surrogate-escaped)
            checked = {"unreadable": "its name is not UTF-8 text"}
        if "unreadable" in checked:
            raise ProbeConfigError("%s: cannot be read: %s; config_path must name a readable JSON config file "
                                   "(docs/formats.md section 5)" % (label, checked["unreadable"])) from None
        _say_warnings(checked["issues"])
        if checked["config"] is None:
            _raise_issues(checked["issues"], "PrecisionDebugger: the config file %s is not valid:" % label)
        text = checked["text"]
        raw = json.loads(text[1:] if text.startswith("\ufeff") else text)  # a BOM, as the check allows

    overrides = {}
    for key, value in (("task", task), ("dump_path", dump_path), ("level", level), ("step", step)):
        if value is None:
            continue
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if key == "dump_path" and isinstance(value, bytes):
            value = os.fsdecode(value)
        if key == "dump_path" and isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # bytes that are not UTF-8, surrogate-escaped by Python
                raise ProbeConfigError("PrecisionDebugger: the argument dump_path %r is not UTF-8 text, which the "
                                       "dump's files (and msprobe's) name paths in; choose a folder whose name is UTF-8"
                                       % value) from None
        arg_label = "PrecisionDebugger(%s=%r)" % (key, value)
        try:
            text = json.dumps({key: value})
        except (TypeError, ValueError):
            text = json.dumps({key: repr(value)})  # the validator says why a repr is not accepted
        config, issues = _check(text, arg_label)
        if config is None:
            _raise_issues(issues, "PrecisionDebugger: the argument %s is not valid:" % key)
        overrides[key] = value

    merged = dict(raw)
    merged.update(overrides)
    if overrides:
        label = "%s with PrecisionDebugger(%s)" % (label, ", ".join("%s=%r" % kv for kv in overrides.items()))
    config, issues = _ops.check_config(json.dumps(merged), label)
    if config is None:
        _raise_issues(issues, "PrecisionDebugger: the config is not valid:")
    return DebuggerConfig(config, raw, label)
