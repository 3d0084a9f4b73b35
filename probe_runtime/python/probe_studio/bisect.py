"""probe bisect: which op's lower precision makes two runs of a program diverge?

    probe bisect --target autocast-bf16 -- /usr/bin/python3 model.py
    probe bisect --target-env DTYPE=bfloat16 --reference-env DTYPE=float32 -- /usr/bin/python3 model.py

The program runs unchanged, once per trial, with probe_studio/_bisect_inject on PYTHONPATH and a
plan (probe_studio.bisect_runtime) saying which of its parts run at reference precision. Its final
output is the outermost module's output of its last call. The error of a run is the relative L2
distance of that output to the reference run's: ||run - reference|| / ||reference|| over all its
floating tensors, in float64 (infinite when the run has NaN/Inf the reference has not).

1. The reference run (reference environment, no autocast) and the target run (target environment
   and/or autocast around the model) give the divergence to remove. The reference runs twice: a
   program that does not compute the same thing twice (unseeded randomness) would have trials
   judged by its noise, so the search stops there when the two differ by more than 1% of the
   divergence. The target run also lists
   what ran: the layers (modules the model calls itself), the torch functions called in each
   module, and the dtypes of their outputs.
2. A trial passes when its error is at most the threshold: --threshold, or by default the error
   with every layer kept at reference precision plus 10% of the way from there to the target's
   error (removing 90% of the divergence).
3. Layers: the smallest set of layers (and of the model's own ops) that, kept at reference
   precision, passes, found by splitting in halves: a half that passes alone is searched further;
   when neither half does, each half is searched with the other kept (one culprit costs about
   2 log2(n) trials).
4. Ops: the same within each culprit layer (the other culprit layers kept whole).
5. Each culprit op's own effect: the error with it alone kept.

Every trial is a line of the log (JSON lines); --resume LOG re-reads it and runs only the trials it
does not hold (the search is deterministic, so it takes the same path). The log's header gives the
program and the precisions when they are not given again. The program must compute the same thing
every run (seeded randomness, no time-dependent control flow).

Exit code: 0 culprits found (or no divergence), 1 the divergence could not be attributed, 64 usage,
66 --resume log unreadable or for another command, 69 no torch, 70 the program failed in the
reference or target run.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import json
import math
import os
import shlex
import stat
import subprocess
import sys
import time

from . import _paths, _tool

EXIT_OK, EXIT_UNEXPLAINED, EXIT_USAGE, EXIT_BAD_LOG, EXIT_PROGRAM_FAILED = 0, 1, 64, 66, 70
EXIT_NO_TORCH = _tool.EXIT_NO_TORCH
NAME = "probe bisect"
TARGETS = {"autocast-bf16": "bfloat16", "autocast-fp16": "float16"}
LOG_VERSION = 1

_torch = None


def _command_name():
    return _tool.command_name(NAME)


def _say(message):
    _tool.say(NAME, message)


def _env_assignments(items, option):
    env = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError("%s %s: expected NAME=VALUE" % (option, item))
        env[key] = value
    return env


def relative_error(output, reference):
    """||output - reference|| / ||reference|| over the floating tensors of two outputs, in float64;
    inf when the output has NaN/Inf where the reference is finite, or their shapes differ."""
    torch = _torch
    out = [t for t in output if t.is_floating_point()]
    ref = [t for t in reference if t.is_floating_point()]
    if len(out) != len(ref) or not ref:
        return math.inf
    diff, norm = 0.0, 0.0
    for o, r in zip(out, ref):
        if tuple(o.shape) != tuple(r.shape):
            return math.inf
        o64, r64 = o.to(torch.float64), r.to(torch.float64)
        finite = torch.isfinite(r64)
        if bool((~torch.isfinite(o64) & finite).any()):
            return math.inf
        d = (o64 - r64)[finite]
        diff += float((d * d).sum())
        norm += float((r64[finite] ** 2).sum())
    if norm == 0:
        return math.sqrt(diff)
    return math.sqrt(diff / norm)


class TrialLog:
    """The JSON-lines log: a header, then one line per trial. Trials are keyed by their plan."""

    @staticmethod
    def read(path):
        """The log's lines, its header first; ValueError when it is no probe bisect log (OSError
        when it cannot be read; a FIFO is refused, not waited on)."""
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ValueError("%s: not a regular file; is it a probe bisect log?" % path)
        with open(path) as f:
            try:
                lines = [json.loads(line) for line in f if line.strip()]
            except ValueError as exc:
                raise ValueError("%s: not JSON lines (%s); is it a probe bisect log?" % (path, exc))
        if not lines or not all(isinstance(line, dict) for line in lines) or lines[0].get("type") != "header":
            raise ValueError("%s: no header line; is it a probe bisect log?" % path)
        for key in ("target_env", "reference_env"):
            if not isinstance(lines[0].get(key) or {}, dict):
                raise ValueError("%s: its header's %s is not an object; is it a probe bisect log?" % (path, key))
        return lines

    def __init__(self, path, header, resume):
        self.path = path
        self.done = {}
        if resume:
            lines = self.read(path)
            old = lines[0]
            for key in ("command", "target", "target_env", "reference_env"):
                if old.get(key) != header.get(key):
                    raise ValueError("%s was written for another %s (%r, now %r)" % (path, key.replace("_", " "),
                                                                                     old.get(key), header.get(key)))
            for line in lines[1:]:
                if line.get("type") == "trial":
                    self.done[self.key(line)] = line
            self.count = len(self.done)
        else:
            with open(path, "w") as f:
                f.write(json.dumps(header) + "\n")
            self.count = 0

    @staticmethod
    def key(trial):
        return json.dumps([trial["run"], sorted(trial.get("keep_modules", [])), sorted(trial.get("keep_ops", []))])

    def append(self, record):
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
        self.done[self.key(record)] = record


class Bisector:
    def __init__(self, options, command):
        self.options = options
        self.command = command
        self.target_env = _env_assignments(options.target_env, "--target-env")
        self.reference_env = _env_assignments(options.reference_env, "--reference-env")
        self.autocast = TARGETS.get(options.target) if options.target else None
        self.log_path = os.path.abspath(options.resume or options.log or "probe_bisect_%s.jsonl" %
                                        time.strftime("%Y%m%d_%H%M%S"))
        self.work = self.log_path + ".d"
        os.makedirs(self.work, exist_ok=True)
        # Where the program runs: where a resumed bisection's program was started, when it came from
        # the log (a relative path in its command names a file there).
        self.cwd = getattr(options, "program_cwd", None)
        header = {"type": "header", "version": LOG_VERSION, "command": command, "target": options.target,
                  "target_env": self.target_env, "reference_env": self.reference_env,
                  "threshold": options.threshold, "cwd": self.cwd or os.getcwd()}
        self.log = TrialLog(self.log_path, header, bool(options.resume))
        self.reference = None
        self.threshold = None
        self.trials_run = 0

    # -------------------------------------------------------------------------------------
    def run_program(self, run, keep_modules=(), keep_ops=(), catalog=False):
        """Runs the program once; returns (output tensors or None, exit code, seconds, log file)."""
        torch = _torch
        name = "%s_%d" % (run, self.trials_run)
        output = os.path.join(self.work, name + ".pt")
        plan = {"output": output, "catalog": os.path.join(self.work, "catalog.json") if catalog else None,
                "dtypes": os.path.join(self.work, "catalog.json") if run == "trial" else None,
                "autocast": self.autocast if run != "reference" else None,
                "keep_modules": sorted(keep_modules), "keep_ops": sorted(keep_ops)}
        plan_path = os.path.join(self.work, name + ".plan.json")
        with open(plan_path, "w") as f:
            json.dump(plan, f)
        env = dict(os.environ)
        env.update(self.reference_env if run == "reference" else self.target_env)
        inject = os.path.join(_paths.PACKAGE_DIR, "_bisect_inject")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (inject, _paths.PYTHON_DIR, env.get("PYTHONPATH")) if p)
        env["PROBE_BISECT_PLAN"] = plan_path
        for variable in ("PROBE_OUTPUT_DIR", "PROBE_CONFIG", "PROBE_COMMAND_NAME"):
            env.pop(variable, None)  # no dumping inside a trial
        program_log = os.path.join(self.work, name + ".log")
        started = time.monotonic()
        self.trials_run += 1
        with open(program_log, "w") as log:
            try:
                code = subprocess.run(self.command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, cwd=self.cwd).returncode
            except OSError as exc:
                log.write("cannot run: %s\n" % exc)
                code = 127
        seconds = time.monotonic() - started
        tensors = None
        if code == 0 and os.path.exists(output):
            tensors = torch.load(output)
        for path in (output, plan_path):
            if os.path.exists(path):
                os.remove(path)
        return tensors, code, seconds, program_log

    def trial(self, kind, keep_modules=(), keep_ops=(), describe=""):
        """The error with these units kept (a logged trial, or the log's record of it)."""
        record = {"type": "trial", "run": "trial", "kind": kind, "keep_modules": sorted(keep_modules),
                  "keep_ops": sorted(keep_ops)}
        old = self.log.done.get(TrialLog.key(record))
        if old is not None:
            self._progress(old, describe, resumed=True)
            return float(old["error"])
        tensors, code, seconds, program_log = self.run_program("trial", keep_modules, keep_ops)
        error = relative_error(tensors, self.reference) if tensors is not None else math.inf
        record.update({"n": self.log.count + 1, "error": error if math.isfinite(error) else str(error),
                       "passed": error <= self.threshold if self.threshold is not None else None,
                       "exit_code": code, "seconds": round(seconds, 2)})
        if tensors is None:
            record["failure"] = self._tail(program_log)
        self.log.count += 1
        self.log.append(record)
        self._progress(record, describe)
        return error

    @staticmethod
    def _tail(path, lines=6):
        try:
            with open(path, errors="replace") as f:
                return "".join(f.readlines()[-lines:]).strip()
        except OSError:
            return ""

    def _progress(self, record, describe, resumed=False):
        error = float(record["error"]) if not isinstance(record["error"], float) else record["error"]
        verdict = "" if self.threshold is None else ("pass" if error <= self.threshold else "fail")
        line = "trial %3s %s: %s -> error %s %s" % (record.get("n", "?"), "(again)" if resumed else "", describe,
                                                      _fmt(error), verdict)
        if record.get("failure"):
            line += "\n    the program failed (exit %s): %s" % (record.get("exit_code"),
                                                               record["failure"].splitlines()[-1])
        _say(line)

    def passes(self, modules, ops, kind, describe):
        return self.trial(kind, modules, ops, describe) <= self.threshold

    def minimal(self, units, base, kind):
        """The smallest subset S of `units` (each ("module"|"op", name)) with base + S passing,
        given that base + units passes: found by halves, then pruned."""
        def passes(kept):
            return self._passes_with(kept, kind)
        return without_unneeded(smallest_by_halves(units, base, passes), base, passes)

    def _passes_with(self, units, kind):
        modules = [n for k, n in units if k == "module"]
        ops = [n for k, n in units if k == "op"]
        return self.passes(modules, ops, kind, _describe(units))

    # -------------------------------------------------------------------------------------
    def reference_and_target(self):
        """Runs (or finds in the work directory) the reference and the catalogued target run."""
        torch = _torch
        ref_path = os.path.join(self.work, "reference_output.pt")
        catalog_path = os.path.join(self.work, "catalog.json")
        target_path = os.path.join(self.work, "target_output.pt")
        if not (self.options.resume and os.path.exists(ref_path)):
            _say("reference run: %s" % _shell(self.command, self.reference_env))
            tensors, code, seconds, program_log = self.run_program("reference")
            if tensors is None:
                return self._program_failed("reference", code, program_log)
            torch.save(tensors, ref_path)
        self.reference = torch.load(ref_path)
        again_path = os.path.join(self.work, "reference_again_output.pt")
        if not (self.options.resume and os.path.exists(again_path)):
            _say("reference run again (the program must compute the same thing twice)")
            tensors, code, seconds, program_log = self.run_program("reference")
            if tensors is None:
                return self._program_failed("second reference", code, program_log)
            torch.save(tensors, again_path)
        self.reference_repeat_error = relative_error(torch.load(again_path), self.reference)
        if not (self.options.resume and os.path.exists(target_path) and os.path.exists(catalog_path)):
            _say("target run: %s%s" % (_shell(self.command, self.target_env),
                                       " under autocast(%s)" % self.autocast if self.autocast else ""))
            tensors, code, seconds, program_log = self.run_program("target", catalog=True)
            if tensors is None or not os.path.exists(catalog_path):
                return self._program_failed("target", code, program_log)
            torch.save(tensors, target_path)
        with open(catalog_path) as f:
            self.catalog = json.load(f)
        return relative_error(torch.load(target_path), self.reference)

    def _program_failed(self, run, code, program_log):
        _say("the %s run failed (exit %s); its output:\n%s" % (run, code, self._tail(program_log, 20)))
        if code == 0:
            _say("it exited normally but saved no output: did it call an nn.Module (the model)?")
        return None

    def layer_units(self):
        modules = self.catalog["modules"]
        layers = sorted((info["order"], path) for path, info in modules.items()
                        if info.get("parent") == "" and path)
        units = [("module", path) for _, path in layers]
        root_ops = sorted((info["order"], key) for key, info in self.catalog["ops"].items()
                          if info["module"] == "" and not info["in_place"])
        units += [("op", key) for _, key in root_ops]
        return units

    def op_units(self, layer):
        ops = sorted((info["order"], key) for key, info in self.catalog["ops"].items()
                     if (info["module"] == layer or info["module"].startswith(layer + "."))
                     and not info["in_place"])
        return [("op", key) for _, key in ops]

    def run(self):
        error_target = self.reference_and_target()
        if error_target is None:
            return EXIT_PROGRAM_FAILED, None
        result = {"log": self.log_path, "target_error": error_target, "culprit_layers": [], "culprit_ops": []}
        _say("target error against the reference: %s" % _fmt(error_target))
        floor_limit = self.options.threshold if self.options.threshold is not None else 0.0
        if error_target <= max(floor_limit, 1e-7):
            _say("the runs do not diverge (error %s): nothing to bisect" % _fmt(error_target))
            return EXIT_OK, result
        repeat = self.reference_repeat_error
        result["reference_repeat_error"] = repeat
        if not repeat <= 0.01 * error_target:  # NaN or inf too
            _say("the program does not compute the same thing twice: two reference runs differ by %s, against the "
                 "target's %s; no trial can be judged. Seed its randomness (torch.manual_seed, or "
                 "probe_studio.pytorch.seed_all) and remove time-dependent control flow, then bisect again"
                 % (_fmt(repeat), _fmt(error_target)))
            return EXIT_UNEXPLAINED, result
        layers = self.layer_units()
        if not layers:
            _say("the model called no layer and no op that could be kept at reference precision")
            return EXIT_UNEXPLAINED, result
        error_floor = self.trial("all", [n for k, n in layers if k == "module"], [n for k, n in layers if k == "op"],
                                 "every layer kept (%d units)" % len(layers))
        result["all_kept_error"] = error_floor
        if self.options.threshold is not None:
            self.threshold = self.options.threshold
        elif math.isfinite(error_target):
            self.threshold = error_floor + 0.1 * (error_target - error_floor)
        else:
            self.threshold = max(10 * error_floor, 1e-3)
        result["threshold"] = self.threshold
        _say("threshold: error <= %s (every layer kept: %s)" % (_fmt(self.threshold), _fmt(error_floor)))
        if not error_floor <= self.threshold:
            _say("even with every layer at reference precision the error stays above the threshold: the divergence "
                 "is not in the model's layers (inputs? code outside the model?) or the program is not deterministic")
            return EXIT_UNEXPLAINED, result
        if self._passes_with([], "layers"):
            _say("the target run passes with nothing kept: raise --threshold or check that the program is deterministic")
            return EXIT_OK, result
        culprit_layers = self.minimal(layers, [], "layers")
        for kind, name in culprit_layers:
            error = self.trial("effect", [name] if kind == "module" else [], [name] if kind == "op" else [],
                               "only %s kept" % name)
            result["culprit_layers"].append({"unit": name, "kind": kind, "error_alone": error,
                                             "removed": _removed(error_target, error, error_floor)})
        # Ops inside each culprit layer, the other culprit layers kept whole.
        culprit_ops = []
        for kind, name in culprit_layers:
            if kind == "op":
                culprit_ops.append((kind, name))
                continue
            others = [u for u in culprit_layers if u != (kind, name)]
            ops = self.op_units(name)
            if not ops or not self._passes_with(others + ops, "ops"):
                _say("%s: no set of its ops kept one by one passes: the precision is lost between its ops (in the "
                     "dtype of what they hand on); keep the whole module" % name)
                culprit_ops.append((kind, name))
                continue
            culprit_ops += self.minimal(ops, others, "ops")
        for kind, name in culprit_ops:
            error = self.trial("effect", [name] if kind == "module" else [], [name] if kind == "op" else [],
                               "only %s kept" % name)
            info = self.catalog["ops"].get(name) or self.catalog["modules"].get(name) or {}
            result["culprit_ops"].append({"unit": name, "kind": kind, "module": info.get("module", name),
                                          "function": info.get("function", info.get("class")),
                                          "target_dtypes": info.get("outputs"), "error_alone": error,
                                          "removed": _removed(error_target, error, error_floor)})
        modules = [n for k, n in culprit_ops if k == "module"]
        ops = [n for k, n in culprit_ops if k == "op"]
        result["culprits_kept_error"] = self.trial("culprits", modules, ops, "all culprits kept")
        # Each op was found with the other culprit layers kept whole: together they are pruned
        # too, so that each is needed by the others (the report says so of one that makes the
        # error worse alone). When together they do not pass, nothing is said of that.
        result["culprit_ops_needed"] = result["culprits_kept_error"] <= self.threshold
        if result["culprit_ops_needed"] and len(culprit_ops) > 1:
            kept = without_unneeded(culprit_ops, [], lambda units: self._passes_with(units, "culprits"))
            if len(kept) < len(culprit_ops):
                result["culprit_ops"] = [item for item in result["culprit_ops"]
                                         if (item["kind"], item["unit"]) in kept]
                result["culprits_kept_error"] = self.trial(
                    "culprits", [n for k, n in kept if k == "module"], [n for k, n in kept if k == "op"],
                    "all culprits kept")
        result["trials"] = self.log.count
        return EXIT_OK, result


def smallest_by_halves(units, base, passes):
    """A subset S of `units` with passes(base + S), given passes(base + units): a half that passes
    alone is searched further; when neither does, each half with the other kept."""
    if len(units) <= 1:
        return list(units)
    half = len(units) // 2
    left, right = units[:half], units[half:]
    for part in (left, right):
        if passes(base + part):
            return smallest_by_halves(part, base, passes)
    a = smallest_by_halves(left, base + right, passes)
    b = smallest_by_halves(right, base + a, passes)
    return a + b


def without_unneeded(units, base, passes):
    """`units` less each one the rest pass without (each left out in turn, the rest kept).

    The halves' search chose the left half's units with all of the right half kept; once the right
    half is cut down, some of them may no longer be needed. The error is not monotone in what is
    kept (one op upcast alone can make the error worse), so such a unit was listed as a culprit
    that made the error worse alone and that nothing needed."""
    kept = list(units)
    dropped = True
    while dropped and len(kept) > 1:  # again after a drop: another may be unneeded now
        dropped = False
        for unit in list(kept):
            if len(kept) > 1 and passes(base + [u for u in kept if u != unit]):
                kept.remove(unit)
                dropped = True
    return kept


def _removed(target, error, floor):
    """(target - error) / (target - floor): negative when keeping it alone makes the error worse
    (shown as 0%, that read as a culprit that does nothing)."""
    if not math.isfinite(target):
        return 1.0 if math.isfinite(error) else 0.0
    if not math.isfinite(error):
        return -math.inf
    span = target - floor
    return (target - error) / span if span > 0 else 0.0


def _share(removed, among=1):
    """The share a unit kept alone removes, as the report says it; one of `among` culprits that
    makes the error worse alone is needed by the others (the search left out any they pass
    without)."""
    needed = "; the others do not pass without it" if among > 1 else ""
    if not math.isfinite(removed):
        return "makes it worse alone" + needed
    if removed < -0.0005:
        return "makes it %.1f%% worse alone%s" % (-100 * removed, needed)
    return "removes %.1f%% of the divergence" % (100 * max(removed, 0.0))


def _finite_or_text(value):
    """JSON has no inf/nan: they become the strings "inf", "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite_or_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite_or_text(v) for v in value]
    return value


def _fmt(value):
    return "%.3e" % value if math.isfinite(value) else str(value)


def _describe(units):
    if not units:
        return "nothing kept"
    names = [n for _, n in units]
    shown = ", ".join(names[:4]) + (", ... (%d)" % len(names) if len(names) > 4 else "")
    return "keep " + shown


def _shell(command, env):
    return " ".join(["%s=%s" % (k, shlex.quote(v)) for k, v in env.items()] + [shlex.quote(c) for c in command])


def format_result(result):
    line = "bisect: target error %s against the reference" % _fmt(result["target_error"])
    if "threshold" in result:
        line += "; threshold %s" % _fmt(result["threshold"])
    if "reference_repeat_error" in result:
        line += "; two reference runs differ by %s" % _fmt(result["reference_repeat_error"])
    lines = [line]
    layers = result.get("culprit_layers", [])
    for item in layers:
        lines.append("  layer %s: kept alone, error %s (%s)" % (
            item["unit"], _fmt(item["error_alone"]), _share(item["removed"], len(layers))))
    if result.get("culprit_ops"):
        lines.append("culprit ops (kept at reference precision, each alone):")
        for item in result["culprit_ops"]:
            where = "%s in %s" % (item["function"], item["module"] or "the model") if item["kind"] == "op" \
                else "module %s (%s)" % (item["unit"], item["function"])
            lines.append("  %s  [%s, %s in the target run]: error %s, %s" % (
                item["unit"], where, "/".join(item.get("target_dtypes") or []) or "?", _fmt(item["error_alone"]),
                _share(item["removed"], len(result["culprit_ops"]) if result.get("culprit_ops_needed", True) else 1)))
        lines.append("  all of them kept: error %s" % _fmt(result.get("culprits_kept_error", math.nan)))
        culprits = result["culprit_ops"]
        most = max(item["removed"] for item in culprits)
        if len(culprits) > 1 and most < 0.5:
            lines.append("  no one of them accounts for most of it (at most %.0f%% alone): the divergence is "
                         "spread over them, the rounding of the target precision adding up, rather than one "
                         "op's" % (100 * max(most, 0.0)))
    lines.append("trials: %s (log: %s)" % (result.get("trials", "?"), result["log"]))
    return "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    command = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(
        prog=_command_name(), usage="%(prog)s [options] -- COMMAND [ARGS...]",
        description="Runs a PyTorch program at reference and at target precision and narrows down, by bisection "
                    "over layers and then ops, which part kept at reference precision removes the divergence of "
                    "the final output.",
        epilog="--python PATH names the interpreter that runs the bisection (default $PROBE_PYTHON, else "
               "/usr/bin/python3); COMMAND names its own. Exit code: 0 culprits found or no divergence, 1 not "
               "attributable, 64 usage, 66 --resume log unusable, 69 no torch, 70 the program failed.")
    parser.add_argument("--target", choices=sorted(TARGETS), help="the target precision as autocast around the "
                        "outermost module (autocast-fp16 needs CUDA)")
    parser.add_argument("--target-env", action="append", metavar="NAME=VALUE",
                        help="environment of the target runs (a program taking its dtype from a variable)")
    parser.add_argument("--reference-env", action="append", metavar="NAME=VALUE",
                        help="environment of the reference run")
    parser.add_argument("--threshold", type=float, help="the error a trial must reach to pass (default: 10%% of "
                        "the way from the error with every layer kept to the target's)")
    parser.add_argument("--log", help="the trial log (JSON lines; default probe_bisect_<time>.jsonl here); its "
                        "runs' outputs go to LOG.d/")
    parser.add_argument("--resume", metavar="LOG", help="continue the bisection that LOG records (its program "
                        "and precisions, unless given again)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on standard output")
    try:
        options = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    if options.resume:
        # The bisection the log records, as it was started: what is not given again (its
        # program, its precisions, its threshold) is taken from the log.
        try:
            header = TrialLog.read(options.resume)[0]
        except (OSError, ValueError) as exc:
            _say(str(exc))
            return EXIT_BAD_LOG
        if not command:
            command = list(header.get("command") or [])
            where = header.get("cwd")
            if isinstance(where, str) and os.path.isdir(where) and os.path.realpath(where) != os.getcwd():
                options.program_cwd = where
                _say("the log's program runs in %s, where it was started" % where)
        if not (options.target or options.target_env or options.reference_env):
            options.target = header.get("target")
            options.target_env = ["%s=%s" % kv for kv in (header.get("target_env") or {}).items()]
            options.reference_env = ["%s=%s" % kv for kv in (header.get("reference_env") or {}).items()]
        if options.threshold is None and isinstance(header.get("threshold"), (int, float)):
            options.threshold = float(header["threshold"])
    if not command:
        _say("no program to run: put it after --, e.g. %s --target autocast-bf16 -- /usr/bin/python3 model.py" %
             _command_name())
        return EXIT_USAGE
    if not options.target and not options.target_env:
        _say("say what the target precision is: --target autocast-bf16, or --target-env NAME=VALUE")
        return EXIT_USAGE
    if options.resume and options.log:
        _say("--resume LOG continues LOG: --log is not needed")
        return EXIT_USAGE
    global _torch
    _torch = _tool.import_torch(NAME)
    if _torch is None:
        return EXIT_NO_TORCH
    try:
        bisector = Bisector(options, command)
    except (OSError, ValueError) as exc:
        _say(str(exc))
        return EXIT_BAD_LOG if options.resume else EXIT_USAGE
    _say("log: %s" % bisector.log_path)
    code, result = bisector.run()
    if result is not None:
        result.setdefault("trials", bisector.log.count)
        if options.json:
            print(json.dumps(_finite_or_text(result), indent=1))
        else:
            print(format_result(result))
    return code


if __name__ == "__main__":
    sys.exit(main())
