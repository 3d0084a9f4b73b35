"""Level L0/mix and module_dump: what a module call records (``Module.<path>.<Class>.forward.<n>``,
its backward and its parameters' gradients).

The hooks are process-wide module hooks that look the module up in the debugger's own tables:
nothing is stored in the model, so copy.deepcopy(model) and torch.save(model) work as without
the debugger. Backward data comes from hooks on the autograd nodes the forward already created
(post-hooks of grad_fn / AccumulateGrad), never from extra identity nodes, so in-place modules
keep working and results are bit-identical."""
# SPDX-License-Identifier: GPL-3.0-or-later
import functools
import weakref

import torch

from . import _ops
from .._names import safe_text
from ._overflow import held_copy, tensors_of
from ._records import backward_name

_Tensor = torch.Tensor
_execution_engine = torch.autograd.Variable._execution_engine
_tracing = torch._C._get_tracing_state


class _GradPass:
    """A backward pass's parameter gradients, awaiting its end; their entries' numbers."""

    __slots__ = ("summaries", "numbers", "done", "failures")

    def __init__(self, failures):
        self.summaries = []
        self.numbers = {}      # module prefix -> its parameters_grad number in this pass
        self.done = False      # the pass ended (or there is no pass to wait for)
        self.failures = failures  # backward passes that had raised when it began


def _grad_tensors(value):
    """Tensors among `value` (recursively) that take part in autograd."""
    return [t for t in tensors_of(value, []) if t.requires_grad]


def _autograd_place(t):
    """(node, output number) whose post-hook sees the gradient of `t` as it is now, or
    (None, None) for a leaf (hooked on the tensor itself)."""
    fn = t.grad_fn
    if fn is None:
        return None, None
    return fn, t.output_nr


class _ModuleCall:
    __slots__ = ("module", "prefix", "name", "parent", "depth", "serial", "inputs", "expands", "held",
                 "child_born", "kwargs", "first")

    def __init__(self, module, prefix, name, parent, depth, serial, inputs, expands, kwargs):
        self.module = module
        self.first = None         # the autograd sequence number as it began (its nodes' first)
        self.kwargs = kwargs      # the keyword arguments it was called with ({} when none)
        self.prefix = prefix
        self.name = name
        self.parent = parent
        self.depth = depth
        self.serial = serial
        self.inputs = inputs
        self.expands = expands
        self.held = None          # overflow_check: the inputs, when all are finite
        self.child_born = False   # overflow_check: an overflow was born in a call inside it


class _ModuleBackward:
    """One module call's backward entry, filled as autograd reaches the module's outputs
    (its "input": gradients of the outputs) and inputs (its "output")."""

    __slots__ = ("hooks", "name", "parent", "serial", "n_out", "n_in", "entry", "selected")

    def __init__(self, hooks, name, parent, serial, n_out, n_in):
        self.hooks = hooks
        self.name = name
        self.parent = parent
        self.serial = serial
        self.n_out = n_out
        self.n_in = n_in
        self.entry = None
        self.selected = None


class _GradientHook:
    """An autograd hook handing one gradient of a module call to ModuleHooks.backward_grad: of
    output `output_nr` of a node (a post-hook of the node, given (grad_inputs, grad_outputs)),
    or with output_nr None of a leaf tensor (a tensor hook, given the gradient). One object per
    hook, not a partial of a bound method and its arguments' tuple: each object alive through
    the step is one more for Python's garbage collector to promote and scan."""

    __slots__ = ("record", "side", "index", "output_nr")

    def __init__(self, record, side, index, output_nr):
        self.record = record  # the _ModuleBackward
        self.side = side      # "input": a gradient of the module's outputs; "output": of its inputs
        self.index = index
        self.output_nr = output_nr

    def __call__(self, *args):
        output_nr = self.output_nr
        if output_nr is None:
            grad = args[0]
        else:
            grad_outputs = args[1]
            grad = grad_outputs[output_nr] if output_nr < len(grad_outputs) else None
        record = self.record
        record.hooks.backward_grad(record, self.side, self.index, grad)


def _sum_apart(a, b):
    """a + b, part of no graph: a backward pass with create_graph records its ops."""
    with torch.no_grad():
        return a + b


class _InputShareHook:
    """The post-hook of an autograd node a module call made that passes a gradient back to one of
    the call's inputs (along `edges` of the node): the module's share of that input's gradient,
    as torch's full backward hook (msprobe's) gives it, handed to ModuleHooks.backward_grad. The
    whole gradient of an input used elsewhere too (h in h + norm(h)) was taken before. When
    several nodes of the call pass shares (q, k and v of one input), they share a list [sum,
    queued]: the sum is handed on as the backward pass ends, whichever of them ran in it (one for
    an output the loss does not use runs in none)."""

    __slots__ = ("record", "index", "edges", "shared")

    def __init__(self, record, index, edges, shared):
        self.record = record
        self.index = index
        self.edges = edges
        self.shared = shared

    def __call__(self, grad_inputs, grad_outputs):
        share = None
        for edge in self.edges:
            grad = grad_inputs[edge] if edge < len(grad_inputs) else None
            if grad is not None:
                share = grad if share is None else _sum_apart(share, grad)
        shared = self.shared
        if shared is None:
            self.record.hooks.backward_grad(self.record, "output", self.index, share)
            return
        if share is not None:
            shared[0] = share if shared[0] is None else _sum_apart(shared[0], share)
        if not shared[1]:
            shared[1] = True
            try:
                _execution_engine.queue_callback(self._hand_on)
            except RuntimeError:  # not in a pass the engine runs
                self._hand_on()

    def _hand_on(self):
        shared = self.shared
        share, shared[0], shared[1] = shared[0], None, False
        self.record.hooks.backward_grad(self.record, "output", self.index, share)


class ModuleHooks:
    """The models given to the debugger, their submodules' entry prefixes, and the hooks that
    record their calls. Counters restart at every step."""

    def __init__(self, service):
        self.service = service
        self.models = []
        self._roots = {}          # id(model) -> weakref: the models given to the debugger
        self._prefixes = {}       # id(submodule) -> (weakref, "Module.<path>.<Class>.")
        self._global_handles = []
        self._dump_handles = []
        self._call_wrapper = None    # Module.__call__ as wrapped to hand over keyword arguments
        self._param_hooks = {}
        self.root_depth = 0
        self.token_range = None
        self.token_id = 0
        self.reset_step()

    def reset_step(self):
        self.counts = {}
        self.param_grad_index = {}
        self.selected_modules = set()

    def remove(self):
        """Every hook removed (after the last step of the config's list)."""
        self._unwrap_call()
        for handle in self._global_handles + self._dump_handles:
            try:
                handle.remove()
            except Exception:
                pass
        self._global_handles = []
        self._dump_handles = []
        for _, handle in self._param_hooks.values():
            try:
                handle.remove()
            except Exception:
                pass
        self._param_hooks = {}

    # --------------------------------------------------------------------------------------
    # Models

    def add_model(self, model):
        """Registers the model(s) whose submodules are dumped (L0, mix) and whose forward calls
        count tokens (token_range)."""
        models = list(model) if isinstance(model, (list, tuple)) else [model]
        for m in models:
            if not isinstance(m, torch.nn.Module):
                raise TypeError("PrecisionDebugger: model must be a torch.nn.Module or a list of them, not %s"
                                % type(m).__name__)
        is_list = isinstance(model, (list, tuple))
        dumps_modules = self.service.config.dumps_modules
        taken = {prefix: ref for ref, prefix in self._prefixes.values() if ref() is not None}
        for index, m in enumerate(models):
            known = self._roots.get(id(m))
            if known is not None and known() is m:
                continue
            self._roots[id(m)] = weakref.ref(m)
            self.models.append(m)
            if not dumps_modules:
                continue
            clashes = []
            for path, sub in m.named_modules():
                if sub is m:
                    continue  # the model itself is not an entry
                known = self._prefixes.get(id(sub))
                if known is not None and known[0]() is sub:
                    continue  # a module shared with a model registered before keeps its first name
                prefix = safe_text("Module.%s%s.%s." % ("%d." % index if is_list else "", path,
                                                        sub.__class__.__name__))
                if prefix in taken:
                    clashes.append(prefix)
                self._prefixes[id(sub)] = (weakref.ref(sub), prefix)
            if clashes:
                # Another model's modules of those names: their entries would read as further
                # calls of the first's (and compare would pair them). Said once per model.
                self.service._note_once(("same names", id(m)), (
                    "warning: the model given now names %d of its modules as one given before (%s...): their "
                    "entries would read as calls of the same modules; give the models together, start([model_a, "
                    "model_b]), to number them apart (Module.0..., Module.1...)")
                    % (len(clashes), clashes[0].rstrip(".")))
        if dumps_modules:
            self._install_global_hooks()

    def _install_global_hooks(self):
        """The process-wide module hooks: for module entries, and token_range's count of the
        model's calls. Not otherwise: they put every module call on torch's slow path."""
        if not self._global_handles:
            from torch.nn.modules import module as module_module
            self._global_handles = [module_module.register_module_forward_pre_hook(self._global_pre_hook),
                                    module_module.register_module_forward_hook(self._global_post_hook)]
            self._wrap_call()

    def _wrap_call(self):
        """torch 1.x gives module hooks no keyword arguments, yet a tensor passed as bias=... is
        an input like any other: recorded as the entry's input_kwargs and watched for overflows
        (a NaN brought in that way was said to be born in the module, "every input finite").
        Module.__call__ hands a call's keyword arguments to its pre-hook, on this thread; a call
        without any costs one more Python frame."""
        if self._call_wrapper is not None:
            return
        tls = self.service.tls
        previous = torch.nn.Module.__call__

        abandon = self._abandon

        # No named first parameter: a module may take a keyword argument of any name (module=).
        # A call that raises never reaches the post-hook: abandon takes it off the stack.
        def __call__(*args, **kwargs):
            calls = tls.keyword_calls
            # A call without keyword arguments says so only when the same module is the one on
            # top (it calls itself): else its pre-hook would take the outer call's for its own.
            if not kwargs and not (calls and args and calls[-1][0] is args[0]):
                try:
                    return previous(*args)
                except BaseException:
                    abandon(args[0] if args else None)
                    raise
            calls.append((args[0] if args else None, kwargs))
            try:
                return previous(*args, **kwargs)
            except BaseException:
                abandon(args[0] if args else None)
                raise
            finally:
                calls.pop()

        __call__.probe_previous = previous
        self._call_wrapper = __call__
        torch.nn.Module.__call__ = __call__

    def _unwrap_call(self):
        wrapper = self._call_wrapper
        if wrapper is None:
            return
        self._call_wrapper = None
        if torch.nn.Module.__call__ is wrapper:
            torch.nn.Module.__call__ = wrapper.probe_previous
        # Else wrapped again since, by someone else: ours stays under theirs, passing calls on.

    def _abandon(self, module):
        """A call of `module` that raised leaves the module stack as its post-hook would have
        taken it off (it never runs): the calls after it were parented under it in
        construct.json, and a module dumped whole kept everything after it from being dumped."""
        try:
            self._leave_dumped_call(module)
            call = self._take_call(module)
            if call is not None:
                self.service.scope.end(call.name)
        except Exception as exc:
            self.service.record_error("module call that raised", exc)

    def _leave_dumped_call(self, module):
        """module_dump: the end of a call of the module dumped whole (True), which lifts the
        suppression of what it runs."""
        tls = self.service.tls
        if tls.dumped_calls and tls.dumped_calls[-1] is module:
            tls.dumped_calls.pop()
            tls.suppress -= 1
            return True
        return False

    def _take_call(self, module):
        """The innermost running call of `module` on this thread, taken off the module stack with
        the calls begun inside it; None when it has none."""
        tls = self.service.tls
        calls = tls.module_calls
        i = len(calls) - 1
        while i >= 0 and calls[i].module is not module:
            i -= 1
        if i < 0:
            return None
        call = calls[i]
        for later in calls[i:]:
            if later.expands:
                tls.expand -= 1
        del calls[i:]
        del tls.module_stack[call.depth:]
        return call

    def _keyword_arguments(self, module):
        """The keyword arguments `module` is being called with on this thread ({} when none)."""
        calls = self.service.tls.keyword_calls
        return calls[-1][1] if calls and calls[-1][0] is module else {}

    def set_token_range(self, token_range):
        if (not isinstance(token_range, (list, tuple)) or len(token_range) != 2 or
                not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in token_range) or
                token_range[0] > token_range[1]):
            raise ValueError("PrecisionDebugger.start: token_range must be [first, last], two whole numbers with "
                             "0 <= first <= last (forward calls of the model, counted from 0), not %r"
                             % (token_range,))
        if not self.models:
            raise ValueError("PrecisionDebugger.start: token_range counts the model's forward calls, so start() "
                             "must receive model=...")
        self.token_range = (token_range[0], token_range[1])
        self.token_id = 0
        self._install_global_hooks()

    def _global_pre_hook(self, module, args):
        key = id(module)
        root = self._roots.get(key)
        if root is not None and root() is module:
            self._root_pre_hook(module, args)
        if self.service.active:
            info = self._prefixes.get(key)
            if info is not None and info[0]() is module:
                self._module_pre_hook(info[1], module, args)
        return None

    def _global_post_hook(self, module, args, output):
        key = id(module)
        if self.service.tls.module_calls:
            info = self._prefixes.get(key)
            if info is not None and info[0]() is module:
                self._module_post_hook(info[1], module, args, output)
        root = self._roots.get(key)
        if root is not None and root() is module:
            self._root_post_hook(module, args, output)
        return None

    def _root_pre_hook(self, module, args):
        service = self.service
        if self.token_range is not None and service.running:
            # token_range: the model's forward calls are the tokens; both ends inclusive.
            token = self.token_id
            self.token_id = token + 1
            service.set_gate(self.token_range[0] <= token <= self.token_range[1])
        if service.active and service.config.dumps_modules:
            self.root_depth += 1
            if service.recorder.stat_cache is None:
                service.recorder.stat_cache = {}
        return None

    def _root_post_hook(self, module, args, output):
        if self.root_depth > 0:
            self.root_depth -= 1
            if self.root_depth == 0:
                self.service.recorder.stat_cache = None
        return None

    # --------------------------------------------------------------------------------------
    # Forward

    def _module_pre_hook(self, prefix, module, args):
        service = self.service
        if not service.active:
            return None
        tls = service.tls
        if tls.inside or tls.suppress or _tracing():  # a tracer's run (see _api_hooks.call_api)
            return None
        self._begin(prefix, module, args)
        return None

    def _begin(self, prefix, module, args):
        service = self.service
        tls = service.tls
        tls.inside = True
        try:
            count = self.counts.get(prefix, 0)
            self.counts[prefix] = count + 1
            name = prefix + "forward." + str(count)
            stack = tls.module_stack
            parent = stack[-1] if stack else None
            # construct.json stays {} at L1 (module_dump included); overflow_check: births only
            if service.config.dumps_modules and service.overflow is None:
                service.records.construct[name] = parent
            service.scope.begin(name)
            inputs = None
            first = None
            if service.want_backward and torch.is_grad_enabled():
                # Where the inputs' gradients will arrive, taken now: an in-place module changes them.
                inputs = [(t,) + _autograd_place(t) for t in _grad_tensors(args)]
                first = _ops.sequence_number() if inputs else None
            expands = bool(service.mix and service.list and any(s in name for s in service.list))
            if expands:
                tls.expand += 1
            call = _ModuleCall(module, prefix, name, parent, len(stack), service.step_serial, inputs, expands,
                               self._keyword_arguments(module))
            call.first = first
            if service.overflow is not None:
                call.held = self._watch_inputs(module, args, call.kwargs)
            tls.module_calls.append(call)
            stack.append(name)
        except Exception as exc:
            service.record_error("module forward pre-hook", exc)
        finally:
            tls.inside = False

    def _module_post_hook(self, prefix, module, args, output):
        service = self.service
        tls = service.tls
        calls = tls.module_calls
        if not calls or tls.inside:
            return None
        try:
            call = self._take_call(module)
            if call is None:
                return None
            if not service.active or call.serial != service.step_serial:
                return None
            tls.inside = True
            try:
                self._forward(call, module, args, output)
            finally:
                tls.inside = False
        except Exception as exc:
            service.record_error("module forward hook", exc)
        return None

    def _watch_inputs(self, module, args, kwargs):
        """overflow_check: what a module call is given (args, kwargs), when it is finite
        (parameters included) and the module may be where an overflow is born; a copy for a
        module that works in place."""
        overflow = self.service.overflow
        if overflow.ignored(module.__class__.__name__):
            return None
        params = [p for p in module._parameters.values() if p is not None]
        if overflow.overflowed(args, kwargs, params):
            return None
        given = (args, kwargs)
        return held_copy(given) if getattr(module, "inplace", False) is True else given

    def _forward_watch(self, call, module, output):
        """overflow_check: the call is dumped when its finite inputs gave an overflowed output
        and no call inside it was where the overflow was born."""
        service = self.service
        name = call.name
        if call.held is not None and not call.child_born and (service.selected(name) or call.expands):
            reason = service.overflow.overflowed(output)
            if reason:
                args, kwargs = call.held
                batch = service.recorder.batch(name, eager=True)
                entry = {"input_args": batch.args(args if isinstance(args, tuple) else (args,), "input"),
                         "input_kwargs": batch.kwargs(kwargs), "output": batch.output(output)}
                params = {pname: batch.tensor(p, "parameters." + pname)
                          for pname, p in module._parameters.items() if p is not None}
                if params:
                    entry["parameters"] = params
                batch.finish()
                stack = service.stacks.capture() if service.config.extra_info else None
                service.record_birth(name, entry, stack, call.parent, reason)
        service.scope.end(name)

    def _forward(self, call, module, args, output):
        service = self.service
        if service.overflow is not None:
            # Module backward entries and parameter gradients are not watched (docs/formats.md).
            self._forward_watch(call, module, output)
            return
        name = call.name
        selected = service.selected(name) or call.expands
        if selected:
            self.selected_modules.add(call.prefix)
            service.record_stack(name)
            if service.want_forward:
                batch = service.recorder.batch(name)
                entry = {}
                if service.fwd_in:
                    entry["input_args"] = batch.args(args if isinstance(args, tuple) else (args,), "input")
                    entry["input_kwargs"] = batch.kwargs(call.kwargs)
                if service.fwd_out:
                    entry["output"] = batch.output(output)
                params = {}
                for pname, p in module._parameters.items():
                    if p is not None:
                        batch.put(p, "parameters." + pname, params, pname)
                if params:
                    entry["parameters"] = params
                batch.finish()
                service.insert(name, entry)
        service.scope.end(name)
        if service.want_backward and torch.is_grad_enabled():
            self._hook_backward(call, output)
            self._hook_param_grads(module, call.prefix)

    # --------------------------------------------------------------------------------------
    # module_dump(module, name) .. module_dump_end(): the module is one entry
    # (Module.<name>.<Class>.forward.<n>); the APIs and modules it runs are not dumped.

    def module_dump(self, module, dump_name):
        prefix = safe_text("Module.%s.%s." % (dump_name, module.__class__.__name__))
        self._wrap_call()
        self._dump_handles.append(module.register_forward_pre_hook(
            functools.partial(self._dumped_module_pre_hook, prefix)))
        self._dump_handles.append(module.register_forward_hook(
            functools.partial(self._dumped_module_post_hook, prefix)))

    def module_dump_end(self):
        for handle in self._dump_handles:
            handle.remove()
        self._dump_handles = []

    def _dumped_module_pre_hook(self, prefix, module, args):
        service = self.service
        tls = service.tls
        if not service.active or tls.inside or tls.suppress:
            return None
        self._begin(prefix, module, args)
        tls.suppress += 1
        tls.dumped_calls.append(module)
        return None

    def _dumped_module_post_hook(self, prefix, module, args, output):
        if self._leave_dumped_call(module):
            self._module_post_hook(prefix, module, args, output)
        return None

    # --------------------------------------------------------------------------------------
    # Backward

    def _hook_backward(self, call, output):
        outs = _grad_tensors(output)
        if not outs:
            return
        inputs = call.inputs or []
        record = _ModuleBackward(self, backward_name(call.name), backward_name(call.parent), call.serial,
                                 len(outs), len(inputs))
        for index, t in enumerate(outs):
            node, nr = _autograd_place(t)
            (node if node is not None else t).register_hook(_GradientHook(record, "input", index, nr))
        if not inputs:
            return
        # The module's share of each input's gradient: where the call's own nodes pass it back.
        holders, table = _ops.module_input_users(outs, [t for t, _, _ in inputs], call.first)
        place = 0
        for index, (t, node, nr) in enumerate(inputs):
            count = table[place]
            place += 1
            if count == 0:  # none found (an input returned as it is): its whole gradient
                (node if node is not None else t).register_hook(_GradientHook(record, "output", index, nr))
                continue
            shared = [None, False] if count > 1 else None
            for _ in range(count):
                holder, n_edges = table[place], table[place + 1]
                edges = table[place + 2:place + 2 + n_edges]
                place += 2 + n_edges
                holders[holder].grad_fn.register_hook(_InputShareHook(record, index, edges, shared))

    def backward_grad(self, record, side, index, grad):
        service = self.service
        if not service.active or record.serial != service.step_serial:
            return
        tls = service.tls
        inside = tls.inside
        tls.inside = True
        try:
            service.recorder.settle_when_backward_ends()
            name = record.name
            if record.selected is None:
                if service.config.dumps_modules:
                    service.records.construct[name] = record.parent
                record.selected = service.selected(name)
                service.scope.end(name)
                if record.selected:
                    entry = {}
                    if service.bwd_in:
                        entry["input"] = [None] * record.n_out
                    if service.bwd_out:
                        entry["output"] = [None] * record.n_in
                    record.entry = entry
                    service.insert(name, entry)
                    self.selected_modules.add(name.rpartition("backward.")[0])
            if not record.selected:
                return
            values = record.entry.get(side)
            if values is None or index >= len(values):
                return
            if grad is not None:
                batch = service.recorder.gradient_batch(name)
                with service.lock:
                    batch.put(grad, "%s.%d" % (side, index), values, index)
                    service.records.dirty = True
                batch.finish()
        except Exception as exc:
            service.record_error("module backward hook", exc)
        finally:
            tls.inside = inside

    def _hook_param_grads(self, module, prefix):
        for pname, p in module._parameters.items():
            if p is None or not p.requires_grad:
                continue
            key = (prefix, pname)
            if key in self._param_hooks:
                continue
            # The parameter's AccumulateGrad node; holding it keeps autograd from making a new
            # one per graph, so the hook registered here stays in effect.
            with torch.enable_grad():
                node = p.expand_as(p).grad_fn.next_functions[0][0]
            handle = node.register_hook(functools.partial(self._param_grad_hook, prefix, pname, weakref.ref(p)))
            self._param_hooks[key] = (node, handle)

    def backward_failed(self):
        """The backward pass this thread ran raised: the gradients it gave parameters before
        that are summarised now (the engine never ends the pass)."""
        grad_pass = self.service.tls.grad_pass
        if grad_pass is not None and not grad_pass.done:
            self._summarise_param_grads(grad_pass)

    def _summarise_param_grads(self, grad_pass):
        grad_pass.done = True
        try:
            self.service.recorder.summarise(grad_pass.summaries)
        except Exception as exc:
            self.service.record_error("parameter gradients", exc)

    def _param_grad_hook(self, prefix, pname, param_ref, grad_inputs, grad_outputs):
        service = self.service
        if not service.active or prefix not in self.selected_modules:
            return
        tls = service.tls
        inside = tls.inside
        tls.inside = True
        try:
            param = param_ref()
            if param is None:
                return
            # Summarised when this backward pass ends (one C++ call for all): the next pass (gradient
            # accumulation) adds to .grad in place. The pass is this thread's: several threads'
            # passes at once keep their parameters apart. Its end, wherever the engine runs it,
            # closes it; a pass that raised never ends, and the next one starts afresh.
            grad_pass = tls.grad_pass
            failures = service.backward_failures.count
            if grad_pass is None or grad_pass.done or grad_pass.failures != failures:
                grad_pass = tls.grad_pass = _GradPass(failures)
                try:
                    _execution_engine.queue_callback(functools.partial(self._summarise_param_grads, grad_pass))
                except RuntimeError:  # not in a backward pass the engine runs: summarised at once
                    grad_pass.done = True
            # One entry per module and pass, numbered in the order the passes reach the module.
            index = grad_pass.numbers.get(prefix)
            if index is None:
                with service.lock:
                    index = self.param_grad_index.get(prefix, 0)
                    self.param_grad_index[prefix] = index + 1
                grad_pass.numbers[prefix] = index
            name = "%sparameters_grad.%d" % (prefix, index)
            grad = param.grad
            batch = service.recorder.batch(name, eager=True)
            if not grad_pass.done:
                batch.summaries = grad_pass.summaries
            value = [None]
            if grad is not None:
                batch.put(grad, pname, value, 0)
            if grad_pass.done:
                batch.finish()
            service.set_value(name, pname, value)
        except Exception as exc:
            service.record_error("parameter gradient hook", exc)
        finally:
            tls.inside = inside
