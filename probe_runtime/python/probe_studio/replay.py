"""probe replay: is one aten op numerically wrong by itself, or does it only inherit bad inputs?

Started by ``probe replay DIR [--op ID|NAME] [--round N]`` (or ``python -m probe_studio.replay``).
For each aten op of an op-level dump (written with task ``tensor`` or ``all`` and ``save_child``),
the call is rebuilt from the dumped inputs (``before/intensor<i>_<arg>.bin``) and the non-tensor
arguments (``op_param.json``) by the argument names of ``torch.ops.aten.<op>``'s schema, and run on
the CPU twice: with floating inputs in float64 (the reference) and as dumped (the re-run in the op's
own dtype). The dumped output is then compared with the reference, using the measures of msprobe's
acc_check (max absolute and relative error, ULP error, the share of elements within a thousandth
and five thousandths), and the verdict weighs it against the re-run's error:

* ``ok``: the dumped output is as close to the float64 result as the op's dtype allows (its error
  is at most 10x the re-run's, plus 4 units of the dtype's epsilon at the output's scale);
* ``WRONG``: beyond that: the op itself computed something else;
* ``inherits``: the output holds NaN/Inf that the op's inputs already held;
* ``overflow``: the inputs are finite, the float64 result is finite, but the op's dtype cannot hold it;
* ``not replayable: why``: random ops, storage-level views (as_strided), allocations, missing
  input data, ops unknown to this torch.

Exit code: 0 nothing wrong, 1 an op is wrong or part of the dump could not be read (a tensor file, an
op's parameters, a statistic.csv), 64 usage (an op, round or process the dump does not have), 66 no
op-level dump, or no op with tensor data to replay, 69 no torch.
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import argparse
import csv
import io
import json
import os
import stat
import sys

from . import _tool

EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_NO_DUMP, EXIT_NO_TORCH = 0, 1, 64, 66, _tool.EXIT_NO_TORCH
NAME = "probe replay"

STAT_HEADER = ("Device and PID,Execution Count,Op Name,Op Type,Op Id,Input/Output,Index,Dtype,Format,Shape,"
               "Max,Min,Mean,Norm,Tensor Path")

# Ops whose result depends on a random generator (beside any op whose schema takes a Generator).
RANDOM_OPS = {"bernoulli", "bernoulli_", "rand", "rand_like", "randn", "randn_like", "randint", "randint_like",
              "randperm", "normal", "normal_", "uniform_", "random_", "exponential_", "geometric_", "cauchy_",
              "log_normal_", "multinomial", "poisson", "rrelu", "rrelu_", "rrelu_with_noise", "rrelu_with_noise_"}
DROPOUTS = {"dropout", "dropout_", "native_dropout", "feature_dropout", "feature_dropout_", "alpha_dropout",
            "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_"}
# Ops that look at the input's storage rather than its values, which the dump does not hold.
STORAGE_OPS = {"as_strided", "as_strided_", "_reshape_alias", "set_", "resize_", "resize_as_", "_unsafe_view"}
ALLOCATIONS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
# In-place ops that replace their first argument without reading it: the probe keeps no data for
# it (often an uninitialised buffer); replayed into zeros of the output's shape and dtype.
OVERWRITING = {"copy_", "fill_", "zero_"}

BENCHMARK_RATIO = 10.0  # msprobe's benchmark standard: error ratio to the bench
EPS_ALLOWANCE = 4.0

_torch = None


def _say(message):
    _tool.say(NAME, message)


# -----------------------------------------------------------------------------------------
# Reading the op-level dump


def find_dump_root(path):
    """The atb_dump_data directory: given it, the --output directory, or a directory inside it."""
    path = os.path.abspath(path)
    if os.path.isdir(os.path.join(path, "atb_dump_data")):
        return os.path.join(path, "atb_dump_data")
    probe = path
    while True:
        if os.path.basename(probe) == "atb_dump_data" and os.path.isdir(os.path.join(probe, "data")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


DTYPE_CODES = {0: "float32", 1: "float16", 2: "int8", 3: "int32", 4: "uint8", 6: "int16", 9: "int64",
               11: "float64", 12: "bool", 16: "complex64", 17: "complex128", 27: "bfloat16"}


# How op_param.json spells the numbers JSON has none for (float() reads them).
NON_FINITE_PARAMS = ("inf", "-inf", "nan")
PARAM_LIMIT = 1 << 20  # op_param.json: bytes read at most (the runtime writes a few hundred)
_NOT_REGULAR = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def open_regular(path):
    """`path` opened for reading (binary) when it is a regular file; else ValueError saying what
    is there. Opened without blocking first: a FIFO is refused, never read (read, it hung)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a file")
            raise ValueError("%s: is %s, not a regular file" % (path, kind))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bin_header(f, path):
    """(header dict, offset of the data) of the .bin file open as `f` (FORMATS.md section 1)."""
    header = {}
    head = f.read(4096)
    pos = 0
    while True:
        end = head.find(b"\n", pos)
        if end < 0:
            raise ValueError("%s: the header has no $End line" % path)
        key, _, value = head[pos:end].decode("ascii", "replace").partition("=")
        header[key] = value
        pos = end + 1
        if key == "$End":
            return header, pos


def _find_op_dir(round_dir, id_parts, searched=None):
    """The directory of op id "2_1_0" below a round directory: "2_<name>/1_<name>/0_<name>" (each
    level named by its own part of the id). A name may begin with digits (an nn.Sequential's
    layers are "0", "1": op 1's folder is "1_1"), so every folder of the level's prefix is tried
    until the rest of the id is found below one. Each folder is searched once per part of the id
    (`searched`), however many links lead to it: two links to "." and an id of 22 parts were 4
    million searches."""
    if not id_parts:
        return round_dir
    searched = set() if searched is None else searched
    try:
        st = os.stat(round_dir)
        names = sorted(os.listdir(round_dir))
    except OSError:
        return None
    if (st.st_dev, st.st_ino, len(id_parts)) in searched:
        return None
    searched.add((st.st_dev, st.st_ino, len(id_parts)))
    prefix = id_parts[0] + "_"
    for name in names:
        path = os.path.join(round_dir, name)
        if name.startswith(prefix) and os.path.isdir(path):
            found = _find_op_dir(path, id_parts[1:], searched)
            if found:
                return found
    return None


def resolve_alias(path, alias):
    """A header-only file's data= names the first copy, "<op id>_<file>", in the same round."""
    split = min([i for i in (alias.find("_intensor"), alias.find("_outtensor")) if i > 0], default=-1)
    if split <= 0:
        return None
    op_id, name = alias[:split], alias[split + 1:]
    if not all(part.isdigit() for part in op_id.split("_")):
        return None
    round_dir = os.path.dirname(path)
    while round_dir and not os.path.basename(round_dir).isdigit():
        parent = os.path.dirname(round_dir)
        if parent == round_dir:
            return None
        round_dir = parent
    op_dir = _find_op_dir(round_dir, op_id.split("_"))
    if not op_dir:
        return None
    candidate = os.path.join(op_dir, "after" if name.startswith("outtensor") else "before", name)
    return candidate if os.path.lexists(candidate) else None  # whatever is there is read, or said


class MissingData(Exception):
    pass


class NoDataKept(MissingData):
    """A tensor whose data the dump chose not to keep (filter_level 2's kernel-level tensors): not
    a file that could not be read."""


def _whole_number(header, key, name):
    text = header.get(key, "")
    if not text.isdigit():  # digits only: no sign, no space (as the format library reads it)
        raise MissingData("%s: bad %s in %s=%s" % (name, key.lstrip("$"), key, text[:40]))
    return int(text)


def load_tensor(path, depth=0):
    """The tensor a .bin file holds (following a de-duplicated file to its first copy). Whatever
    cannot be read is MissingData naming the file and why: the header is checked before the data
    is read (a sparse file claiming 512 MiB was read whole, then refused by reshape)."""
    torch = _torch
    name = os.path.basename(path)
    try:
        f = open_regular(path)
    except (OSError, ValueError) as exc:
        raise MissingData("%s: %s" % (name, _why(exc, path)))
    with f:
        header, offset = read_bin_header(f, name)
        size = os.fstat(f.fileno()).st_size
        code = int(header["dtype"]) if header.get("dtype", "").isdigit() else -1
        if code not in DTYPE_CODES:
            raise MissingData("%s: dtype code %s has no torch dtype here" % (name, header.get("dtype", "")[:40]))
        dtype = getattr(torch, DTYPE_CODES[code])
        dims_text = header.get("dims", "")
        dims = [d for d in dims_text.split(",") if d != ""]
        if not all(d.isdigit() for d in dims):
            raise MissingData("%s: bad dims in dims=%s" % (name, dims_text[:80]))
        dims = [int(d) for d in dims]
        alias = header.get("data")
        if header.get("$Object.Count") == "0" or alias:
            if not alias or depth > 4:
                raise MissingData("%s holds no data" % name)
            if alias == name:  # naming itself: no data kept (filter_level 2's kernel-level tensors)
                raise NoDataKept("%s holds no data (a dump with filter_level 2 keeps no kernel-level tensors)"
                                  % name)
            first = resolve_alias(path, alias)
            if not first or os.path.abspath(first) == os.path.abspath(path):
                raise MissingData("%s holds no data, and the copy it names (data=%s) is not in its round" %
                                  (name, alias))
            return load_tensor(first, depth + 1)
        length = _whole_number(header, "$Object.Length", name)
        count = 1
        for d in dims:
            count *= d
        expected = count * torch.empty((), dtype=dtype).element_size()
        if length != expected:
            raise MissingData("%s: data length %d does not match dims %s of %s (%d bytes)" % (
                name, length, "x".join(map(str, dims)) or "[]", DTYPE_CODES[code], expected))
        if offset + length > size:
            raise MissingData("%s: %d bytes of data, %d promised" % (name, max(size - offset, 0), length))
        f.seek(offset)
        data = f.read(length)
    if len(data) != length:
        raise MissingData("%s: %d bytes of data, %d promised" % (name, len(data), length))
    if length == 0:
        return torch.empty(dims, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(dims).clone()


def relocated(csv_path, recorded):
    """A row's tensor path inside the dump as it is now (dumps get copied and moved)."""
    round_dir = os.path.dirname(csv_path)
    parts = round_dir.split(os.sep)
    marker = os.sep + os.sep.join(parts[-3:]) + os.sep  # /data/<dev_pid>/<round>/
    at = recorded.rfind(marker)
    if at < 0:
        return recorded
    return os.path.join(round_dir, recorded[at + len(marker):])


class DumpedOp:
    def __init__(self, process, round_, op_id, name, op_type):
        self.process, self.round, self.id, self.name, self.type = process, round_, op_id, name, op_type
        self.inputs = []   # (position, arg name, path or None, dtype, shape)
        self.outputs = []
        self.directory = None

    def describe(self):
        return "%s (%s) [%s]" % (self.name, self.id, self.type)


def _index_parts(index):
    position, _, name = index.partition("_")
    return (int(position) if position.isdigit() else 0), name


def _why(exc, path):
    """What an exception says of `path`, without the path (open_regular's messages start with it)."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return text[len(path) + 2:] if text.startswith(path + ": ") else text


def _listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        if os.path.lexists(path):
            _say("%s: cannot be listed: %s; what it holds is not read" % (path, exc.strerror or exc))
        return []


def read_round_ops(root):
    """({(process, round): [DumpedOp in execution order]} from every statistic.csv, the number of
    those that could not be read). One that cannot be read (a FIFO, a folder, text that is not
    UTF-8) is said, and its round skipped."""
    data = os.path.join(root, "data")
    rounds, unread = {}, 0
    for process in _listing(data):
        pdir = os.path.join(data, process)
        if not os.path.isdir(pdir):
            continue
        for round_name in sorted((r for r in _listing(pdir) if r.isdigit()), key=int):
            csv_path = os.path.join(pdir, round_name, "statistic.csv")
            if not os.path.lexists(csv_path):
                continue
            try:
                order = _read_statistic_csv(csv_path, process, int(round_name))
            except (OSError, ValueError, csv.Error) as exc:  # UnicodeDecodeError is a ValueError
                _say("%s: %s; its ops are not replayed" % (csv_path, _why(exc, csv_path)))
                unread += 1
                continue
            if order is not None:
                rounds[(process, int(round_name))] = order
    return rounds, unread


def _read_statistic_csv(csv_path, process, round_):
    """The ops of one statistic.csv in execution order; None when its header is not one."""
    ops, order = {}, []
    with open_regular(csv_path) as raw, io.TextIOWrapper(raw, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or ",".join(header) != STAT_HEADER:
            _say("%s: not a statistic.csv header; skipped" % csv_path)
            return None
        for row in reader:
            if len(row) != 15:
                continue
            key = (row[4], row[2])
            op = ops.get(key)
            if op is None:
                op = ops[key] = DumpedOp(process, round_, row[4], row[2], row[3])
                order.append(op)
            path = None if row[14] in ("", "N/A") else relocated(csv_path, row[14])
            position, arg = _index_parts(row[6])
            item = (position, arg, path, row[7], row[9])
            (op.outputs if row[5] == "output" else op.inputs).append(item)
            if path and op.directory is None:
                op.directory = os.path.dirname(os.path.dirname(path))
    return order


def read_op_params(directory):
    """An op's op_param.json ({} when it has none), or NotReplayable saying why it cannot be read."""
    path = os.path.join(directory, "op_param.json") if directory else None
    if not path or not os.path.lexists(path):
        return {}
    try:
        with open_regular(path) as f:
            text = f.read(PARAM_LIMIT + 1)
        if len(text) > PARAM_LIMIT:
            raise ValueError("more than %d bytes" % PARAM_LIMIT)
        params = json.loads(text.decode("utf-8"))
    except (OSError, ValueError) as exc:  # not UTF-8, not JSON, not a regular file
        raise NotReplayable("its parameters cannot be read: op_param.json: %s" % _why(exc, path))
    except RecursionError:
        raise NotReplayable("its parameters cannot be read: op_param.json: nested too deep")
    if not isinstance(params, dict):
        raise NotReplayable("its parameters cannot be read: op_param.json holds %s, not a JSON object" %
                            type(params).__name__)
    return params


# -----------------------------------------------------------------------------------------
# Rebuilding the call


class NotReplayable(Exception):
    pass


def _is_tensor_type(text):
    return text in ("Tensor", "Optional[Tensor]")


def _is_tensor_list_type(text):
    return text in ("List[Tensor]", "Optional[List[Tensor]]")


def _convert(value, type_text, integral_inputs):
    torch = _torch
    if value is None:
        return None
    base = type_text[len("Optional["):-1] if type_text.startswith("Optional[") else type_text
    if base in ("int", "SymInt"):
        return int(value)
    if base == "float":
        return float(value)
    if base == "bool":
        return bool(value)
    if base == "number":
        if value in NON_FINITE_PARAMS:
            return float(value)
        if isinstance(value, float) and value.is_integer() and integral_inputs:
            return int(value)
        return value
    if base == "Device":
        return torch.device(value)
    if base in ("List[int]", "List[SymInt]"):
        return [int(v) for v in value]
    if base == "List[float]":
        return [float(v) for v in value]
    if base == "str":
        return str(value)
    return value


def build_call(op, params, tensors):
    """(overload, args, kwargs) for the dumped op. `tensors`: {arg name: tensor}, "<name><k>" for
    list items. Raises NotReplayable."""
    torch = _torch
    short = op.type.split("::", 1)[1]
    packet = getattr(torch.ops.aten, short, None)
    if packet is None:
        raise NotReplayable("torch.ops.aten has no %s" % short)
    names = set(tensors) | set(params)
    names.discard("out")
    integral_inputs = all(not t.is_floating_point() and not t.is_complex() for t in tensors.values())
    problems = []
    for overload_name in packet.overloads():
        overload = getattr(packet, overload_name)
        schema = overload._schema
        if any(a.name == "out" or (a.kwarg_only and a.alias_info is not None and a.alias_info.is_write)
               for a in schema.arguments):
            continue
        args, kwargs, used, fits = [], {}, set(), True
        for a in schema.arguments:
            type_text = str(a.type)
            if a.name in tensors and (_is_tensor_type(type_text)):
                value = tensors[a.name]
            elif _is_tensor_list_type(type_text) and (a.name + "0") in tensors:
                value, k = [], 0
                while (a.name + str(k)) in tensors:
                    used.add(a.name + str(k))
                    value.append(tensors[a.name + str(k)])
                    k += 1
            elif a.name in params and not _is_tensor_type(type_text) and not _is_tensor_list_type(type_text):
                if params[a.name] is not None and "Tensor" in type_text:
                    fits = False  # a list of optional tensors, recorded by its kind only
                    problems.append("argument %s (%s) was not dumped" % (a.name, type_text))
                    break
                value = _convert(params[a.name], type_text, integral_inputs)
            elif a.name in params and params[a.name] is None and type_text == "Optional[Tensor]":
                value = None
            elif a.has_default_value():
                continue
            else:
                fits = False
                break
            used.add(a.name)
            if a.kwarg_only:
                kwargs[a.name] = value
            else:
                args.append(value)
        if fits and names <= used:
            return overload, args, kwargs
    if problems:
        raise NotReplayable(problems[0])
    raise NotReplayable("no overload of aten::%s takes the dumped arguments (%s)" % (short, ", ".join(sorted(names))))


def _clone_args(args, kwargs, convert):
    torch = _torch

    def one(v):
        if isinstance(v, torch.Tensor):
            return convert(v)
        if isinstance(v, list):
            return [one(x) for x in v]
        return v
    return [one(a) for a in args], {k: one(v) for k, v in kwargs.items()}


def _to_float64(t):
    torch = _torch
    if t.is_floating_point() and t.dtype != torch.float64:
        return t.to(torch.float64)
    return t.clone()


def _to_float32(t):
    torch = _torch
    if t.is_floating_point() and t.dtype in (torch.float16, torch.bfloat16):
        return t.to(torch.float32)
    return t.clone()


def _outputs(result):
    torch = _torch
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        out = []
        for r in result:
            out.extend(_outputs(r))
        return out
    return []


# -----------------------------------------------------------------------------------------
# Measures (msprobe acc_check's) and the verdict

ULP_PARAMETERS = {"float16": (-14, 10), "bfloat16": (-126, 7), "float32": (-126, 23), "float64": (-1022, 52)}


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def _eps(dtype_name):
    torch = _torch
    if dtype_name == "bfloat16":
        return 2.0 ** -8
    return torch.finfo(getattr(torch, dtype_name)).eps


def measures(actual, reference, dtype_name):
    """Errors of `actual` against `reference` (float64 tensors of one shape), over elements where
    both are finite; non-finite elements that differ are counted apart."""
    torch = _torch
    a = actual.to(torch.float64).reshape(-1)
    r = reference.to(torch.float64).reshape(-1)
    finite = torch.isfinite(a) & torch.isfinite(r)
    same_special = (~finite) & ((torch.isnan(a) & torch.isnan(r)) | (a == r))
    nonfinite_mismatch = int(((~finite) & ~same_special).sum().item())
    a_f, r_f = a[finite], r[finite]
    result = {"elements": int(a.numel()), "nonfinite_mismatch": nonfinite_mismatch, "max_abs_err": 0.0,
              "max_rel_err": 0.0, "max_ulp_err": 0.0, "mean_ulp_err": 0.0, "thousandth_ratio": 1.0,
              "five_thousandth_ratio": 1.0, "ten_thousandth_ratio": 1.0, "scale": 0.0}
    if a_f.numel() == 0:
        return result
    abs_err = (a_f - r_f).abs()
    rel_err = abs_err / (r_f.abs() + _eps(dtype_name))
    min_eb, mantissa = ULP_PARAMETERS.get(dtype_name, ULP_PARAMETERS["float64"])
    abs_r = r_f.abs()
    eb = torch.where(abs_r == 0, torch.zeros_like(abs_r), torch.floor(torch.log2(abs_r))).clamp(min=min_eb)
    ulp = abs_err * torch.exp2(mantissa - eb)
    count = float(a_f.numel())
    result.update({
        "max_abs_err": abs_err.max().item(), "max_rel_err": rel_err.max().item(),
        "max_ulp_err": ulp.max().item(), "mean_ulp_err": ulp.mean().item(),
        "thousandth_ratio": (rel_err < 0.001).sum().item() / count,
        "five_thousandth_ratio": (rel_err < 0.005).sum().item() / count,
        "ten_thousandth_ratio": (rel_err < 0.0001).sum().item() / count,
        "scale": abs_r.max().item()})
    return result


def _has_nonfinite(tensors):
    torch = _torch
    return any(t.is_floating_point() and not bool(torch.isfinite(t).all()) for t in tensors)


def judge(dumped, reference, rerun, inputs):
    """(verdict, reason, per-output measures) for one op."""
    torch = _torch
    details, wrong, overflow, inherited = [], [], [], []
    for i, d in enumerate(dumped):
        if d is None:
            continue
        if i >= len(reference) or i >= len(rerun):
            return "not replayable", "the replay returned %d output(s), the dump has %d" % (
                len(reference), len(dumped)), details
        r, e = reference[i], rerun[i]
        if tuple(d.shape) != tuple(e.shape):
            return "WRONG", "output %d: shape %s, the re-run gives %s" % (i, list(d.shape), list(e.shape)), details
        if not d.is_floating_point():
            differ = int((d.reshape(-1) != e.to(d.dtype).reshape(-1)).sum().item())
            details.append({"output": i, "dtype": _dtype_name(d), "elements": d.numel(), "differing": differ})
            if differ:
                wrong.append("output %d: %d of %d elements differ from the re-run" % (i, differ, d.numel()))
            continue
        name = _dtype_name(d)
        m_d = measures(d, r, name)
        m_e = measures(e, r, name)
        details.append({"output": i, "dtype": name, "dump": m_d, "rerun": m_e})
        allowance = BENCHMARK_RATIO * m_e["max_abs_err"] + EPS_ALLOWANCE * _eps(name) * max(m_d["scale"], 1e-30)
        d_nonfinite = not bool(torch.isfinite(d).all())
        if m_d["nonfinite_mismatch"] > m_e["nonfinite_mismatch"] and not (d_nonfinite and _same_specials(d, e)):
            wrong.append("output %d: %d NaN/Inf element(s) where the float64 result has none or others" %
                         (i, m_d["nonfinite_mismatch"]))
        elif m_d["max_abs_err"] > allowance:
            wrong.append("output %d: max abs error %.4g against float64 (the %s re-run's is %.4g), max ULP %.4g, "
                         "%.1f%% within a thousandth" % (i, m_d["max_abs_err"], name, m_e["max_abs_err"],
                                                         m_d["max_ulp_err"], 100 * m_d["thousandth_ratio"]))
        elif d_nonfinite:
            if _has_nonfinite(inputs):
                inherited.append("output %d holds NaN/Inf, as its inputs do" % i)
            elif bool(torch.isfinite(r).all()):
                overflow.append("output %d: Inf/NaN in %s while the float64 result is finite (max |x| %.4g)" %
                                (i, name, r.abs().max().item()))
            elif any(t.is_floating_point() for t in inputs):
                inherited.append("output %d: NaN/Inf from finite inputs, as float64 gives it (the op's math or its "
                                 "arguments): no rounding error" % i)
            else:  # scalar_tensor, full: "finite inputs" read as a contradiction
                inherited.append("output %d: NaN/Inf from its arguments, as float64 gives it: no rounding error" % i)
    if wrong:
        return "WRONG", "; ".join(wrong), details
    if overflow:
        return "overflow", "; ".join(overflow), details
    if inherited:
        return "inherits", "; ".join(inherited), details
    worst = max((x["dump"]["max_ulp_err"] for x in details if "dump" in x), default=0.0)
    return "ok", "max ULP error %.3g" % worst if details else "outputs match the re-run", details


def _same_specials(d, e):
    torch = _torch
    d, e = d.to(torch.float64).reshape(-1), e.to(torch.float64).reshape(-1)
    special = ~torch.isfinite(d) | ~torch.isfinite(e)
    return bool(((torch.isnan(d) & torch.isnan(e)) | (d == e))[special].all())


# -----------------------------------------------------------------------------------------


def _not_replayable(reason, unreadable=False):
    """replay_op's answer for an op that cannot be replayed, and why. `unreadable`: because a file of
    the dump could not be read (damaged), not because of what the op is or what was dumped."""
    return {"verdict": "not replayable", "reason": reason, "outputs": [], "unreadable": unreadable}


def replay_op(op):
    """{"verdict", "reason", "outputs"} for one dumped op."""
    torch = _torch
    short = op.type.split("::", 1)[1] if op.type.startswith("aten::") else ""
    if not short:
        return _not_replayable("not an aten op (a module or layer)")
    if short in ALLOCATIONS:
        return _not_replayable("an allocation: its output is uninitialised memory")
    if short in STORAGE_OPS:
        return _not_replayable("a view addressing its input's storage (strides, offset), which the dump does "
                               "not hold: it has a contiguous copy of the values")
    try:
        params = read_op_params(op.directory)
    except NotReplayable as exc:  # its op_param.json could not be read
        return _not_replayable(str(exc), unreadable=True)
    if short in RANDOM_OPS or (short in DROPOUTS and params.get("train", True) and params.get("p", 1) != 0):
        return _not_replayable("random: its result depends on the random generator")
    if not op.outputs:
        return _not_replayable("it has no tensor output to judge")
    if not any(path for _, _, path, _, _ in op.outputs):
        return _not_replayable("no output data dumped (task tensor or all keeps data)")
    tensors = {}
    inputs = []
    for position, arg, path, dtype, shape in sorted(op.inputs, key=lambda x: x[0]):
        name = arg or "arg%d" % position
        if not path:
            return _not_replayable("missing input: %s has no data in the dump" % name)
        try:
            tensors[name] = load_tensor(path)
        except (MissingData, OSError, ValueError) as exc:
            return _not_replayable("missing input: %s" % exc, unreadable=not isinstance(exc, NoDataKept))
        inputs.append(tensors[name])
    if short in OVERWRITING and "self" not in tensors:
        out_path = next((path for _, _, path, _, _ in sorted(op.outputs, key=lambda x: x[0]) if path), None)
        try:
            template = load_tensor(out_path)
        except (MissingData, OSError, ValueError) as exc:
            return _not_replayable("missing input: %s" % exc, unreadable=not isinstance(exc, NoDataKept))
        tensors["self"] = torch.zeros_like(template)
    try:
        overload, args, kwargs = build_call(op, params, tensors)
    except NotReplayable as exc:
        return _not_replayable(str(exc))
    except (TypeError, ValueError, OverflowError) as exc:  # parameters of the wrong types
        return _not_replayable("its parameters do not fit the op: %s" % str(exc).splitlines()[0])
    if any(str(a.type) in ("Generator", "Optional[Generator]") for a in overload._schema.arguments):
        return _not_replayable("random: it takes a generator")
    dumped, unread = [], []
    for position, _, path, _, _ in sorted(op.outputs, key=lambda x: x[0]):
        try:
            dumped.append(load_tensor(path) if path else None)
        except NoDataKept:
            dumped.append(None)
        except (MissingData, OSError, ValueError) as exc:
            dumped.append(None)
            unread.append(str(exc))
    if all(d is None for d in dumped):
        return _not_replayable("the dumped outputs hold no data" + (": " + "; ".join(unread) if unread else ""),
                               unreadable=bool(unread))
    try:
        a, k = _clone_args(args, kwargs, lambda t: t.clone())
        rerun = [t.detach() for t in _outputs(overload(*a, **k))]
    except Exception as exc:
        return _not_replayable("the re-run failed: %s" % str(exc).splitlines()[0])
    note = ""
    try:
        a, k = _clone_args(args, kwargs, _to_float64)
        reference = [t.detach() for t in _outputs(overload(*a, **k))]
    except Exception as exc:
        try:
            a, k = _clone_args(args, kwargs, _to_float32)
            reference = [t.detach() for t in _outputs(overload(*a, **k))]
            note = " (reference in float32: float64 failed: %s)" % str(exc).splitlines()[0]
        except Exception:
            return _not_replayable("the float64 reference failed: %s" % str(exc).splitlines()[0])
    verdict, reason, details = judge(dumped, reference, rerun, inputs)
    if unread:  # judged on the outputs that could be read
        note += "; not judged, as unreadable: " + "; ".join(unread)
    return {"verdict": verdict, "reason": reason + note, "outputs": details, "unreadable": bool(unread)}


def _ranges(numbers):
    """"0..3, 5" of sorted whole numbers."""
    parts, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(start) if start == n else "%d..%d" % (start, n))
            start = None
    return ", ".join(parts)


def _matches(op, wanted):
    w = wanted.lower()
    name = op.name.lower()
    return op.id == wanted or name == w or name.endswith("/" + w) or op.type.lower() in (w, "aten::" + w)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=_tool.command_name(NAME),
        description="Re-run dumped aten ops on the CPU from their dumped inputs, in float64 and in their own "
                    "dtype, and say whether each op is wrong by itself or only inherits bad inputs. Needs an "
                    "op-level dump written with task tensor (or all) and save_child.",
        epilog="--python PATH names the interpreter with torch (default $PROBE_PYTHON, else /usr/bin/python3). "
               "Verdicts: ok, WRONG, inherits, overflow, not replayable (docs/suite.md). Exit code: 0 nothing "
               "wrong, 1 an op is wrong or part of the dump could not be read, 64 usage (an op, round or "
               "process the dump does not have), 66 no op-level dump, or no op with tensor data to replay, "
               "69 no torch.")
    parser.add_argument("dir", help="the dump: probe run's --output directory or its atb_dump_data")
    parser.add_argument("--op", help="an op id (1_0_2), its name path (layers.0/mlp/gelu), the end of it (gelu) "
                        "or its type (aten::gelu); default: every aten op of the round")
    parser.add_argument("--round", type=int, help="the round (default: the first one with tensor data)")
    parser.add_argument("--process", help="the process (the data/<dev_pid> folder); default: every one")
    parser.add_argument("--json", action="store_true", help="print the results as JSON (for the application)")
    parser.add_argument("--quiet", action="store_true", help="print only ops that are not ok")
    try:
        options = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    global _torch
    _torch = _tool.import_torch(NAME)
    if _torch is None:
        return EXIT_NO_TORCH
    root = find_dump_root(options.dir)
    if not root:
        _say("%s holds no op-level dump (an atb_dump_data folder written by probe run); replay needs one written "
             "with task tensor or all and save_child" % options.dir)
        return EXIT_NO_DUMP
    rounds, unread = read_round_ops(root)
    # A round or process the dump does not have is said as such (it was "no aten op matches",
    # exit 0: a script read "nothing wrong").
    processes = sorted({p for p, _ in rounds})
    if options.process and options.process not in processes:
        _say("the dump has no process %s (it has %s)" % (options.process, ", ".join(processes) or "none"))
        return EXIT_USAGE
    known = sorted({r for p, r in rounds if not options.process or p == options.process})
    if options.round is not None and options.round not in known:
        _say("the dump has no round %d (it has %s)" % (options.round, _ranges(known) or "none"))
        return EXIT_USAGE
    results = []
    for process in processes:
        if options.process and process != options.process:
            continue
        candidates = sorted(r for p, r in rounds if p == process)
        if options.round is not None:
            candidates = [r for r in candidates if r == options.round]
        elif not options.op:
            with_data = [r for r in candidates if any(op.type.startswith("aten::") and op.directory
                                                      for op in rounds[(process, r)])]
            candidates = with_data[:1]
        for round_ in candidates:
            for op in rounds[(process, round_)]:
                if not op.type.startswith("aten::"):
                    continue
                if options.op and not _matches(op, options.op):
                    continue
                try:
                    outcome = replay_op(op)
                except Exception as exc:  # one op's failure is said, and the others still replayed
                    outcome = _not_replayable("the replay failed: %s: %s" % (
                        type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""))
                outcome.update({"process": process, "round": round_, "op_id": op.id, "op_name": op.name,
                                "op_type": op.type})
                results.append(outcome)
    if options.json:
        print(json.dumps({"dump": root, "results": results, "unread_statistics": unread}, indent=1))
    else:
        print("replay: %s" % root)
        if results and options.round is None and not options.op and len(known) > 1:
            # Which round, of which (only the first with tensor data is replayed unless asked).
            print("  round %s (the first with tensor data) of rounds %s; --round N replays another" %
                  (_ranges(sorted({r["round"] for r in results})), _ranges(known)))
        if not results:
            print("  no aten op %s" % ("matches --op %s" % options.op if options.op else
                                       "with tensor data (dump with task tensor or all, and save_child)"))
            if unread:
                print("  %d statistic.csv file%s could not be read (said above)" % (unread, "s" * (unread != 1)))
        for r in results:
            if options.quiet and r["verdict"] == "ok":
                continue
            label = r["verdict"] if r["verdict"] != "not replayable" else "not replayable:"
            print("  %s round %d  %s (%s) [%s]  %s %s" % (r["process"], r["round"], r["op_name"], r["op_id"],
                                                         r["op_type"], label, r["reason"]))
        counts = {}
        for r in results:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        if results:
            print("  " + ", ".join("%d %s" % (n, v) for v, n in sorted(counts.items())))
        unreadable = sum(1 for r in results if r.get("unreadable"))
        if unreadable:
            print("  %d op%s could not be judged in full: a file of the dump could not be read (said above)" %
                  (unreadable, "s" * (unreadable != 1)))
        if results and unread:
            print("  %d statistic.csv file%s could not be read (said above): their ops were not replayed" %
                  (unread, "s" * (unread != 1)))
        if results and all(r["verdict"] == "not replayable" and not r.get("unreadable") for r in results):
            print("  no op could be replayed: nothing was judged")
    if not results:  # nothing was replayed: not "nothing wrong"
        if options.op and unread:
            return EXIT_FOUND  # the op asked for may be in a statistic.csv that could not be read
        return EXIT_USAGE if options.op and rounds else EXIT_NO_DUMP
    if any(r["verdict"] == "WRONG" for r in results) or unread or any(r.get("unreadable") for r in results):
        return EXIT_FOUND  # what could not be read may hide a wrong op
    if all(r["verdict"] == "not replayable" for r in results):
        return EXIT_NO_DUMP  # nothing was judged: not "nothing wrong"
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
