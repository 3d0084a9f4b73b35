"""The records of a step: the values of a call turned into dump.json items (each tensor's item
rendered with its statistics by the C++ core, many tensors per call; .pt files when tensors are
saved), the step's entries, construct.json's parents and stack.json's groups (FORMATS.md
section 2).

Nothing here installs hooks or writes the JSON files: the hooks fill a StepRecords, the step
writer writes it."""
# SPDX-License-Identifier: GPL-3.0-or-later
import linecache
import os
import sys
import weakref
from json.encoder import encode_basestring_ascii as _encode_str

import torch

from . import _ops
from ._jsonio import RAW_JSON_MARK
from .._names import file_name as _file_name

try:  # C (module_call.cpp): the stack's identity without a Python loop over its frames
    from .._module_call import stack_key as _stack_key
except ImportError:  # built without the extension: the same key made in Python
    _stack_key = None

_Tensor = torch.Tensor
_execution_engine = torch.autograd.Variable._execution_engine
_MEMORY_FORMATS = {torch.contiguous_format: "contiguous_format", torch.channels_last: "channels_last",
                   torch.channels_last_3d: "channels_last_3d", torch.preserve_format: "preserve_format"}
_MAX_DEPTH = 64

try:
    import numpy as _np
except ImportError:  # numpy is optional for torch
    _np = None

# ------------------------------------------------------------------------------------------
# dtype names

_dtype_names = {}


def _dtype_name(dtype):
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = str(dtype)
    return name


def tensor_version(t):
    """The tensor's version counter (bumped by every in-place change), None when it has none
    (inference-mode tensors: asked first, as torch's error for them costs milliseconds)."""
    try:
        return None if t.is_inference() else t._version
    except RuntimeError:
        return None


def backward_name(forward_name):
    """Module.a.Linear.forward.3 -> Module.a.Linear.backward.3 (None stays None)."""
    if forward_name is None:
        return None
    if forward_name.startswith("Module."):
        head, _, tail = forward_name.rpartition(".forward.")
        return head + ".backward." + tail
    return forward_name[: -len("forward")] + "backward"


# ------------------------------------------------------------------------------------------
# The step's records

class StepRecords:
    """What one step recorded: dump.json's "data" (entry name -> entry, in the order met),
    construct.json (entry -> parent module entry) and stack.json's groups (id of a formatted
    stack -> (the stack, entry names)); the stacks stay alive in StackCapture."""

    __slots__ = ("data", "construct", "stack_groups", "dirty", "unflushed", "queued")

    def __init__(self):
        self.data = {}
        self.construct = {}
        self.stack_groups = {}
        self.dirty = False
        self.unflushed = 0    # entries inserted since the files were last written
        self.queued = False   # a write of them is waiting for the writer thread

    def insert(self, name, entry):
        self.data[name] = entry
        self.dirty = True
        self.unflushed += 1

    def set_value(self, name, key, value):
        """Sets one key of an entry, creating the entry when it is not there yet."""
        entry = self.data.get(name)
        if entry is None:
            entry = self.data[name] = {}
        entry[key] = value
        self.dirty = True

    def add_stack(self, formatted, name):
        """`formatted` from StackCapture: equal stacks are one object, grouped by its id."""
        group = self.stack_groups.get(id(formatted))
        if group is None:
            self.stack_groups[id(formatted)] = (formatted, [name])
        else:
            group[1].append(name)


class StackCapture:
    """The Python stack of a call as stack.json writes it (innermost frame first, our own
    package's frames left out). Per call only each frame's code object (by id: hashing a code
    object hashes its contents) and position are read; the text (file names, line numbers,
    source lines) is made once per call site reached by a distinct path, and equal stacks are
    one object."""

    def __init__(self, package_dir):
        self.package_dir = package_dir
        self._formatted = {}  # (id(code), position, ...) -> (the stack's lines, the code objects)
        self._stacks = {}     # the stack's lines -> the one tuple of them

    def capture(self):
        """The stack of the code that called into our package."""
        if _stack_key is not None:
            key = _stack_key(1)  # from our caller's frame outward, as sys._getframe(1)
        else:
            frame = sys._getframe(1)
            key = []
            append = key.append
            while frame is not None:
                append(id(frame.f_code))
                append(frame.f_lasti)
                frame = frame.f_back
            key = tuple(key)
        known = self._formatted.get(key)
        if known is None:
            # The code objects stay alive with the key, so no other one can take their ids.
            known = self._formatted[key] = self._format(sys._getframe(1))
        return known[0]

    def _format(self, frame):
        lines, codes = [], []
        while frame is not None:
            code = frame.f_code
            codes.append(code)
            if not code.co_filename.startswith(self.package_dir):
                source = linecache.getline(code.co_filename, frame.f_lineno).strip()
                if source:
                    lines.append("File %s, line %d, in %s, \n %s" % (code.co_filename, frame.f_lineno, code.co_name,
                                                                    source))
            frame = frame.f_back
        lines = tuple(lines)
        return self._stacks.setdefault(lines, lines), tuple(codes)


# ------------------------------------------------------------------------------------------
# Values -> items

_SETTLE_COUNT = 1024           # tensors waiting for their statistics ...
_SETTLE_BYTES = 64 * 1024 ** 2  # ... or bytes of them: then they are computed


class TensorItem:
    """A tensor's item of dump.json. Its text up to "requires_grad" (core) is rendered in C++
    with the statistics; data_name and md5 follow in that order, as msprobe writes them. Until
    then `source` is the _Summary holding the tensor (a text rendered meanwhile shows null
    statistics); afterwards nothing of the tensor is kept."""

    __slots__ = ("core", "data_name", "md5", "source")

    def __init__(self, md5, source=None):
        self.core = None        # until the statistics are computed
        self.data_name = None   # the .pt file, when saved
        self.md5 = md5          # False: not asked for; None: not computed; else 8 hex digits
        self.source = source

    def raw_json(self):
        core = self.core
        if core is None:  # not computed yet
            source = self.source
            core = _null_core(source.tensor) if source is not None and source.tensor is not None else _UNKNOWN_CORE
        if self.data_name is not None:
            core += ',"data_name": ' + _encode_str(self.data_name)
        md5 = self.md5
        if md5 is not False:
            core += ',"md5": "%s"' % md5 if md5 is not None else ',"md5": null'
        return core + "}"


def _null_core(t):
    """The core of a tensor item without statistics (they could not be taken)."""
    return ('{"type": "torch.Tensor","dtype": "%s","shape": [%s],"Max": null,"Min": null,"Mean": null,'
            '"Norm": null,"requires_grad": %s' % (_dtype_name(t.dtype), ",".join(map(str, t.shape)),
                                                  "true" if t.requires_grad else "false"))


_UNKNOWN_CORE = '{"type": "torch.Tensor"'


def _item_text(core, md5):
    """A tensor item without data_name as _jsonio writes an object's raw JSON."""
    if md5 is not False:
        core += ',"md5": "%s"' % md5 if md5 is not None else ',"md5": null'
    return RAW_JSON_MARK + core + "}"


class _Summary:
    """One tensor whose statistics are to be computed, and where they are shown: TensorItems,
    and places (container, key) that hold the summary itself until then, where settle() puts
    the item's text (so that a value of a call costs no object of its own, and the records
    keep only strings).

    The places are one flat list, container and key after each other, and `items` is None until
    the first TensorItem: every object the records keep alive through a step is one more for
    Python's garbage collector to promote and, at its full collections, to scan."""

    __slots__ = ("tensor", "version", "items", "places", "md5")

    def __init__(self, tensor, version, md5):
        self.tensor = tensor
        self.version = version
        self.items = None
        self.places = []
        self.md5 = md5

    def add(self):
        item = TensorItem(self.md5, self)
        if self.items is None:
            self.items = [item]
        else:
            self.items.append(item)
        return item

    def raw_json(self):
        """Its place's text before the statistics are taken."""
        t = self.tensor
        return _item_text(_null_core(t) if t is not None else _UNKNOWN_CORE, self.md5)[1:]

    def show(self, core, md5):
        """Puts the item's text with `core` in every place and item; lets the tensor go."""
        places = self.places
        if places:
            text = _item_text(core, md5)
            pairs = iter(places)
            for container in pairs:
                container[next(pairs)] = text
            places.clear()
        if self.items is not None:
            for item in self.items:
                item.core = core
                item.md5 = md5
                item.source = None
            self.items = None
        self.tensor = None


class Recorder:
    """Turns the values of a call into items: what the config asks of every tensor (md5,
    a .pt file for task tensor), and when their statistics are computed.

    Deferred (levels L1 and mix, where the API wrappers see every call that may change a tensor
    in place): a tensor's statistics wait, with the tensor and its version, until settle() —
    before such a call, when a backward pass ends, at stop()/step() and when many wait — and
    all are computed by one call
    to the C++ core; a tensor recorded twice meanwhile is computed once. A tensor changed in
    place all the same (its version moved) keeps null statistics, said in the error log.
    Otherwise (L0, and what must be taken at once) each batch computes its own in finish().

    Per tensor a call reads only its version and id: its dtype, shape and requires_grad are
    read in C++ when the statistics are taken (the wrappers settle before any wrapped call that
    may change a tensor in place)."""

    def __init__(self, config, record_error, deferred):
        self.md5 = config.summary_mode == "md5"
        self.md5_start = None if self.md5 else False  # a new item's md5
        self.deferred = deferred
        self.tensor_dir = None  # the step's dump_tensor_data, when tensors are saved
        # task statistics with a tensor_list: only the entries it names save their tensors
        self.tensor_list = tuple(config.tensor_list) if config.task == "statistics" else None
        self.stat_cache = None  # id(tensor) -> statistics, only during a forward pass of the model
        self.record_error = record_error
        self.pending = []        # _Summary waiting for settle()
        self._settle_generation = 0  # settle() calls so far
        self._queued_for = None      # the generation a settle at a pass's end is queued for
        self.pending_by_id = {}  # id(tensor) -> its _Summary (the tensor is held, so its id is its own)
        self.pending_bytes = 0
        self.unversioned = []    # _Summary of tensors without a version, for finish()
        self.settled = False     # items were given statistics since the records were last written
        self._plain_value = Batch(self, None, False, False).value  # values of nothing saved
        # In a torch.distributed job DDP's reducer scales gradients in place, unseen by the API
        # wrappers: backward entries take their statistics at once (gradient_batch).
        self.eager_gradients = False

    def gradient_batch(self, entry):
        return self.batch(entry, eager=self.eager_gradients)

    def batch(self, entry, eager=False):
        saves = self.tensor_dir is not None and (
            self.tensor_list is None or any(fragment in entry for fragment in self.tensor_list))
        return Batch(self, entry, saves, eager or not self.deferred)

    def items(self, values):
        """The items of a call's values (arguments, outputs), deferred, when nothing is saved:
        the one loop a call runs per value. A tensor's place holds its _Summary until settle().
        defer_tensor() is written out here: this loop runs for every value of every call."""
        out = []
        append = out.append
        pending_by_id = self.pending_by_id
        for v in values:
            if isinstance(v, _Tensor):
                try:  # tensor_version()
                    version = None if v.is_inference() else v._version
                except RuntimeError:
                    version = None
                if self.stat_cache is not None:
                    hit = self.cached(v, version)
                    if hit is not None:
                        append(_item_text(hit[0], hit[1]))
                        continue
                summary = pending_by_id.get(id(v)) if version is not None else None
                if summary is None or summary.version != version:
                    summary = self._new_summary(v, version)
                places = summary.places
                places.append(out)
                places.append(len(out))
                append(summary)
            elif v is None:
                append(None)
            else:
                append(self._plain_value(v, None))
        return out

    def kwargs_items(self, kwargs):
        """items() of keyword arguments (their keys name dtype and device values)."""
        out = {}
        for k, v in kwargs.items():
            key = str(k)
            if isinstance(v, _Tensor):
                p = self.defer_tensor(v)
                if type(p) is _Summary:
                    p.places.append(out)
                    p.places.append(key)
                out[key] = p
            else:
                out[key] = self._plain_value(v, None, k)
        return out

    def cached(self, t, version):
        """(core, md5) of `t` from the forward pass's cache, or None."""
        hit = self.stat_cache.get(id(t))
        if hit is not None and hit[0]() is t and hit[1] == version:
            return hit[2], hit[3] if self.md5 else False
        return None

    def defer_tensor(self, t):
        """The text of `t`'s item when known (the forward pass's cache), else the _Summary whose
        statistics wait for settle(): the caller adds the place it puts it in."""
        version = tensor_version(t)
        if self.stat_cache is not None:
            hit = self.cached(t, version)
            if hit is not None:
                return _item_text(hit[0], hit[1])
        return self._summary(t, version)

    def defer_item(self, t):
        """A TensorItem of `t`, its statistics waiting for settle()."""
        version = tensor_version(t)
        if self.stat_cache is not None:
            hit = self.cached(t, version)
            if hit is not None:
                item = TensorItem(hit[1])
                item.core = hit[0]
                return item
        return self._summary(t, version).add()

    def _summary(self, t, version):
        if version is not None:
            summary = self.pending_by_id.get(id(t))
            if summary is not None and summary.version == version:
                return summary  # the same tensor, unchanged: computed once
        return self._new_summary(t, version)

    def _new_summary(self, t, version):
        """A new _Summary of `t`, waiting: for settle(), or without a version for finish()
        (a change of it could not be seen later)."""
        summary = _Summary(t, version, self.md5_start)
        if version is None:
            self.unversioned.append(summary)
            return summary
        self.pending.append(summary)
        self.pending_by_id[id(t)] = summary
        self.pending_bytes += t.numel() * t.element_size()
        return summary

    def finish(self):
        """After a call's values: computes the statistics of the tensors without a version
        (a change of theirs could not be seen later), and of all waiting when many wait."""
        if self.unversioned:
            summaries, self.unversioned = self.unversioned, []
            self.summarise(summaries)
        if len(self.pending) >= _SETTLE_COUNT or self.pending_bytes >= _SETTLE_BYTES:
            self.settle()

    def settle_when_backward_ends(self):
        """From a backward hook: the statistics still waiting are taken when this backward pass
        ends. What comes next may change their tensors by calls the wrappers never see: an
        optimizer (torch._foreach_add_, writes through .data) updates the parameters in place,
        the next pass of gradient accumulation adds to .grad. Once per pass; nothing outside one."""
        # Queued already for what waits now, unless a settle came since (another thread's pass
        # ended, a call that writes in place): what waited then is done, what waits now is not.
        if self._queued_for == self._settle_generation or not self.pending:
            return
        try:
            _execution_engine.queue_callback(self._settle_after_backward)
            self._queued_for = self._settle_generation
        except RuntimeError:  # not in a backward pass the engine runs
            pass

    def _settle_after_backward(self):
        try:  # an error here would end the model's backward pass
            self.settle()
        except Exception as exc:
            self.record_error("statistics", exc)

    def backward_failed(self):
        """A backward pass raised: its end, and the settle queued for it, never come. What
        waits is taken now, before the program goes on (to an optimizer, another pass)."""
        self._queued_for = None
        self.settle()

    def settle(self):
        """Computes the statistics of every waiting tensor (one call to the C++ core)."""
        pending = self.pending
        self._settle_generation += 1
        if not pending:
            return
        self.pending = []
        self.pending_by_id = {}
        self.pending_bytes = 0
        unchanged = [s for s in pending if tensor_version(s.tensor) == s.version]
        if len(unchanged) != len(pending):
            changed = [s for s in pending if tensor_version(s.tensor) != s.version]
            first = changed[0].tensor
            self.record_error("statistics", RuntimeError(
                "%d tensor(s) (the first %s %s) changed in place before their statistics were taken: they stay null"
                % (len(changed), _dtype_name(first.dtype), list(first.shape))))
            self._fail(changed)
        self.summarise(unchanged)

    def _fail(self, summaries):
        """Null statistics for `summaries`."""
        self.settled = True
        for summary in summaries:
            summary.show(_null_core(summary.tensor), None if self.md5 else False)

    def summarise(self, summaries):
        """Gives the items of `summaries` their statistics, computed and rendered by one C++ call."""
        if not summaries:
            return
        md5 = self.md5
        try:
            cores, md5s = _ops.tensor_items([s.tensor for s in summaries],
                                            [_dtype_name(s.tensor.dtype) for s in summaries], md5)
        except BaseException:
            self._fail(summaries)
            raise
        if len(cores) != len(summaries):  # the C++ side ran out of memory: statistics stay null
            self._fail(summaries)
            return
        self.settled = True
        cache = self.stat_cache
        for index, summary in enumerate(summaries):
            core = cores[index]
            digest = md5s[index] if md5 else False
            if cache is not None and summary.version is not None:
                cache[id(summary.tensor)] = (weakref.ref(summary.tensor), summary.version, core, digest)
            summary.show(core, digest)

    def save_tensor(self, t, file_name):
        """The tensor as torch.save writes it, contiguous and detached."""
        path = os.path.join(self.tensor_dir, file_name)
        try:
            data = t.detach()
            if data.is_meta:
                return False
            if data.device.type != "cpu":
                data = data.cpu()
            if data.is_conj():
                data = data.resolve_conj()
            if data.is_neg():
                data = data.resolve_neg()
            data = data.clone(memory_format=torch.contiguous_format)
            tmp = path + ".tmp"
            # An open file rather than its path: torch would encode the path as strict UTF-8 (and
            # abort the process on a dump_path with undecodable bytes); open() takes any path.
            with open(tmp, "wb") as f:
                torch.save(data, f)
            os.replace(tmp, path)
            return True
        except Exception as exc:
            self.record_error("saving %s" % file_name, exc)
            return False


class Batch:
    """The items of one entry's values. Their statistics wait for the recorder's settle(), or,
    eager, are computed in finish() by one C++ call."""

    __slots__ = ("recorder", "entry", "saves", "eager", "summaries")

    def __init__(self, recorder, entry, saves, eager):
        self.recorder = recorder
        self.entry = entry
        self.saves = saves  # each tensor also goes to a .pt file
        self.eager = eager
        self.summaries = []

    def tensor(self, t, suffix):
        recorder = self.recorder
        if not self.saves and not self.eager:
            return recorder.defer_item(t)
        version = tensor_version(t)
        data_name = None
        if self.saves:
            file_name = _file_name("%s.%s.pt" % (self.entry, suffix))
            if recorder.save_tensor(t, file_name):
                data_name = file_name
        hit = recorder.cached(t, version) if recorder.stat_cache is not None else None
        if hit is not None:
            item = TensorItem(hit[1])
            item.core = hit[0]
        elif self.eager or version is None:  # no version: a change could not be seen
            summary = _Summary(t, version, recorder.md5_start)
            self.summaries.append(summary)
            item = summary.add()
        else:
            item = recorder.defer_item(t)
        item.data_name = data_name
        return item

    def put(self, t, suffix, container, key):
        """container[key] = the item of tensor `t`. Deferred and not saved, the place is held by
        the tensor's _Summary until settle() puts the item's text there (no TensorItem: one
        object fewer kept through the step)."""
        if self.saves or self.eager:
            container[key] = self.tensor(t, suffix)
            return
        p = self.recorder.defer_tensor(t)
        if type(p) is _Summary:
            p.places.append(container)
            p.places.append(key)
        container[key] = p

    def value(self, v, suffix, key=None, depth=0):
        if isinstance(v, _Tensor):
            return self.tensor(v, suffix)
        if v is None:
            return None
        if key is not None:
            if key == "dtype" or key == "output_dtype":
                return {"type": "torch.dtype", "value": str(v)}
            if key == "device":
                if isinstance(v, (int, str)):
                    return {"type": "torch.device", "value": v}
                if isinstance(v, torch.device):
                    return {"type": "torch.device", "value": "%s:%s" % (v.type, v.index)}
                return {"type": "torch.device"}
        t = type(v)
        if t is bool or t is int or t is float or t is str:
            return {"type": t.__name__, "value": v}
        if depth > _MAX_DEPTH:
            return None
        if isinstance(v, torch.Size):
            return {"type": "torch.Size", "value": [int(x) for x in v]}
        if isinstance(v, (list, tuple)):
            fields = getattr(v, "_fields", None)
            if suffix is None:  # no file names to make (nothing is saved)
                if fields is not None and isinstance(v, tuple):
                    return {f: self.value(x, None, f, depth + 1) for f, x in zip(fields, v)}
                return [self.value(x, None, None, depth + 1) for x in v]
            if fields is not None and isinstance(v, tuple):  # a namedtuple: an object of its fields
                return {f: self.value(x, "%s.%s" % (suffix, f), f, depth + 1) for f, x in zip(fields, v)}
            return [self.value(x, "%s.%d" % (suffix, i), None, depth + 1) for i, x in enumerate(v)]
        if isinstance(v, dict):
            return {str(k): self.value(x, None if suffix is None else "%s.%s" % (suffix, k),
                                       k if isinstance(k, str) else None, depth + 1)
                    for k, x in v.items()}
        if isinstance(v, (int, float, str)):  # subclasses (IntEnum, ...)
            return {"type": t.__name__, "value": v}
        if v is Ellipsis:
            return {"type": "ellipsis", "value": "..."}
        if isinstance(v, slice):
            return {"type": "slice", "value": [_slice_part(v.start), _slice_part(v.stop), _slice_part(v.step)]}
        if isinstance(v, torch.memory_format):
            return {"type": "torch.memory_format", "format": _MEMORY_FORMATS.get(v)}
        if isinstance(v, (torch.dtype, torch.device)):
            return {}
        if _np is not None:
            if isinstance(v, _np.ndarray):
                return _ndarray(v)
            if isinstance(v, _np.generic):
                return {"type": type(v).__name__, "value": v.item()}
        return None

    # The suffix of a value (input.0, kwargs.dim, output.1.2) names its .pt file; without files
    # it is not made.

    def args(self, args, category):
        if not self.saves:
            if not self.eager:
                return self.recorder.items(args)
            return [self.value(v, None) for v in args]
        return [self.value(v, "%s.%d" % (category, i)) for i, v in enumerate(args)]

    def kwargs(self, kwargs):
        if not self.saves:
            if not self.eager:
                return self.recorder.kwargs_items(kwargs)
            return {str(k): self.value(v, None, k) for k, v in kwargs.items()}
        return {str(k): self.value(v, "kwargs.%s" % k, k) for k, v in kwargs.items()}

    def output(self, output):
        if not isinstance(output, tuple) or hasattr(output, "_fields"):
            output = (output,)
        return self.args(output, "output")

    def finish(self):
        """Computes the statistics of the batch's eager tensors."""
        if self.summaries:
            self.recorder.summarise(self.summaries)
            self.summaries = []
        self.recorder.finish()


def _slice_part(x):
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    try:
        return int(x)
    except Exception:
        return None


def _ndarray(a):
    info = {"type": "numpy.ndarray", "dtype": str(a.dtype), "shape": list(a.shape),
            "Max": None, "Min": None, "Mean": None, "Norm": None}
    try:
        if a.size and a.dtype.kind in "biuf":
            info["Max"] = a.max().item()
            info["Min"] = a.min().item()
            if a.dtype.kind == "f":
                info["Mean"] = a.mean().item()
                info["Norm"] = float(_np.linalg.norm(a))
    except Exception:
        pass
    return info
