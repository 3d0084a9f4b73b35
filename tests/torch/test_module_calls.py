"""Module calls under `probe run` as torch_hooks reports them: names with any characters, a
module called twice in one forward, and the "<layer>.backward" ops with the gradients flowing
in (their inputs) and out (their outputs), checked against gradients recomputed here."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import shutil
import textwrap

import torch

from probe_test_util import PYTHON, ProbeTestCase, read_bin, read_rows, run_probe, write_config

# Modules whose inputs reach the rest of a model in more than one way (Attn, Inner, Two, Pass).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support",
                       "shared_input_modules.py")) as _f:
    SHARED_INPUT_MODULES = _f.read()

# The outermost module of a script that defines the module to dump as Inner: Inner's calls are
# then layer-level ops (id 0), and the aten ops they call their children.
MODEL_AROUND_INNER = textwrap.indent(textwrap.dedent("""
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, *args):
            return self.inner(*args)
    """), " " * 12)


class ModuleCalls(ProbeTestCase):
    def run_script(self, source, expect_errors=False, **config):
        script = self.write_script("model.py", textwrap.dedent(source))
        cfg = write_config(self.dir, **config)
        result = run_probe(["--output", self.path("out"), "--config", cfg, "--", PYTHON, script])
        if not expect_errors:
            self.assertNotIn("error", result.stderr)
        return read_rows(self.path("out", "atb_dump_data")), result

    def by_op(self, rows):
        ops = {}
        for row in rows:
            ops.setdefault(row["Op Name"], []).append(row)
        return ops

    def test_layers_named_with_lone_surrogates_stay_apart(self):
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn
            model = nn.Sequential()
            for i in range(13):
                model.add_module("layer\\udc80%d" % i, nn.Linear(4, 4))
            model(torch.randn(2, 4))
            """, task="statistics", exec_range="all")
        ops = self.by_op(rows)
        self.assertEqual(sorted(ops), sorted("layer\\udc80%d" % i for i in range(13)))
        for name, op_rows in ops.items():
            self.assertEqual(op_rows[0]["Op Type"], "Linear", name)
            self.assertEqual(sorted(r["Input/Output"] for r in op_rows), ["input", "output"], name)

    def test_backward_layer_ops_have_the_gradients_flowing_in_and_out(self):
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn
            torch.manual_seed(3)
            model = nn.Sequential()
            model.add_module("fc1", nn.Linear(8, 4))
            model.add_module("act", nn.Tanh())
            model.add_module("fc2", nn.Linear(4, 2))
            x = torch.randn(5, 8)
            model(x).square().sum().backward()
            """, task="all", exec_range="all")
        torch.manual_seed(3)
        fc1, fc2 = torch.nn.Linear(8, 4), torch.nn.Linear(4, 2)
        x = torch.randn(5, 8)
        h1 = fc1(x)
        h2 = torch.tanh(h1)
        out = fc2(h2)
        for t in (h1, h2, out):
            t.retain_grad()
        out.square().sum().backward()
        ops = self.by_op(rows)
        # (op, gradient flowing in: of its forward output, gradient flowing out: of its input)
        expected = {"fc2.backward": (out.grad, h2.grad), "act.backward": (h2.grad, h1.grad),
                    "fc1.backward": (h1.grad, None)}  # x needs no gradient: nothing flows out
        for name, (grad_in, grad_out) in expected.items():
            op_rows = ops[name]
            inputs = [r for r in op_rows if r["Input/Output"] == "input"]
            outputs = [r for r in op_rows if r["Input/Output"] == "output"]
            self.assertEqual(len(inputs), 1, name)
            self.assertTrue(torch.allclose(read_bin(inputs[0]["Tensor Path"])[1], grad_in), name)
            self.assertStatsMatch(inputs[0], grad_in)
            if grad_out is None:
                self.assertEqual(outputs, [], name)
                continue
            self.assertEqual(len(outputs), 1, name)
            self.assertTrue(outputs[0]["Index"].startswith("0"), outputs[0]["Index"])
            self.assertTrue(torch.allclose(read_bin(outputs[0]["Tensor Path"])[1], grad_out), name)
            self.assertStatsMatch(outputs[0], grad_out)

    def test_a_module_called_twice_has_both_gradients(self):
        # A shared embedding for two sequences: two forward calls, and the gradient of each
        # call's output flows into a backward op of the embedding (the two calls' backward nodes
        # run one after the other: they were one op, with one call's gradient).
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Pair(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = nn.Embedding(10, 4)
                    self.head = nn.Linear(4, 2)

                def forward(self, a, b):
                    return self.head(torch.cat([self.embed(a), self.embed(b) * 3.0]))

            torch.manual_seed(5)
            model = Pair()
            model(torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])).sum().backward()
            """, task="all", exec_range="all")
        torch.manual_seed(5)
        embed, head = torch.nn.Embedding(10, 4), torch.nn.Linear(4, 2)
        ea, eb = embed(torch.tensor([1, 2, 3])), embed(torch.tensor([4, 5, 6]))
        for t in (ea, eb):
            t.retain_grad()
        head(torch.cat([ea, eb * 3.0])).sum().backward()
        ops = self.by_op(rows)
        forward = [r for r in ops["embed"] if r["Input/Output"] == "output"]
        self.assertEqual(len(forward), 2)
        backward = [r for name, op_rows in ops.items() if name.startswith("embed.backward") for r in op_rows
                    if r["Input/Output"] == "input"]
        got = sorted((read_bin(r["Tensor Path"])[1] for r in backward), key=lambda t: t.abs().sum().item())
        self.assertEqual(len(got), 2, [r["Op Name"] for r in backward])
        want = sorted((ea.grad, eb.grad), key=lambda t: t.abs().sum().item())
        for g, w in zip(got, want):
            self.assertTrue(torch.allclose(g, w))


    def test_plain_tensors_given_positionally_are_reported_as_any_others(self):
        # module_call.cpp reports plain tensors given positionally itself; keyword arguments, a
        # tensor subclass, tensors in a list go through torch_hooks.py. The same values called
        # all these ways give the same rows: names, statistics, gradients flowing in and out.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Marked(torch.Tensor):
                pass

            class Mix(nn.Module):
                def forward(self, a, b, scale=1.0):
                    if isinstance(a, list):
                        a = a[0]
                    return a * scale + b, None, (b - a).sum(dim=1)

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.mix = Mix()

                def forward(self, x, y):
                    # Each call its own inputs, for the gradients flowing out of each to be its own.
                    xs, ys = [x + 0.0 for _ in range(4)], [y + 0.0 for _ in range(4)]
                    parts = [self.mix(xs[0], ys[0], 2.0), self.mix(xs[1], b=ys[1], scale=2.0),
                             self.mix(xs[2].as_subclass(Marked), ys[2], 2.0), self.mix([xs[3]], ys[3], 2.0)]
                    return sum(p[0].sum() + p[2].sum() for p in parts)

            torch.manual_seed(11)
            x = torch.randn(3, 4, requires_grad=True)
            y = torch.randn(3, 4, requires_grad=True)
            Model()(x, y).backward()
            """, task="statistics", exec_range="all")
        torch.manual_seed(11)
        x, y = torch.randn(3, 4), torch.randn(3, 4)
        calls = [r for r in rows if r["Op Name"] == "mix"]
        self.assertEqual(len(calls), 4 * 4, [r["Index"] for r in calls])  # a, b; two outputs (None is none)
        fields = ("Input/Output", "Index", "Dtype", "Shape", "Max", "Min", "Mean", "Norm")
        shown = [[tuple(r[k] for k in fields) for r in calls[i:i + 4]] for i in range(0, 16, 4)]
        for call in shown[1:]:
            self.assertEqual(call[1:], shown[0][1:])
            self.assertEqual(call[0][2:], shown[0][0][2:])
        self.assertEqual([(r[0], r[1]) for r in shown[0]], [("input", "0_a"), ("input", "1_b"), ("output", "0"),
                                                           ("output", "1")])
        self.assertEqual(shown[3][0][1], "0_a0")  # in a list: named by its position in it
        for row, want in zip(calls[:4], (x, y, x * 2.0 + y, (y - x).sum(dim=1))):
            self.assertStatsMatch(row, want)
        # Backward: a backward op per call, the gradient of its output flowing in (all ones).
        flowing_in = [r for r in rows if r["Op Name"].startswith("mix.backward") and r["Input/Output"] == "input"]
        self.assertEqual(len(flowing_in), 4, [(r["Op Name"], r["Index"]) for r in flowing_in])
        for row in flowing_in:
            self.assertStatsMatch(row, torch.ones((3, 4) if row["Shape"] == "3x4" else (3,)))

    def test_models_called_in_turn_and_backward_passes_are_named_and_marked(self):
        # module_call.cpp names a model once per thread (while it lives) and marks backward
        # passes itself (bracket): two models called in turn, one replaced by a new one (maybe
        # at the same address), autograd.grad and a backward that raises.
        rows, result = self.run_script("""
            import gc
            import torch
            import torch.nn as nn

            def build(first, second):
                m = nn.Sequential()
                m.add_module(first, nn.Linear(3, 3))
                m.add_module(second, nn.Tanh())
                return m

            torch.manual_seed(2)
            x = torch.randn(2, 3, requires_grad=True)
            a, b = build("a_lin", "a_act"), build("b_lin", "b_act")
            for _ in range(2):
                a(x).sum().backward()
                b(x).sum().backward()
            del a
            gc.collect()
            c = build("c_lin", "c_act")
            (g,) = torch.autograd.grad(c(x).sum(), x)
            w, bias = c.c_lin.weight, c.c_lin.bias
            print("GRAD", torch.allclose(g, torch.autograd.grad(torch.tanh(x @ w.t() + bias).sum(), x)[0]))
            loss = b(x).sum()
            loss.backward()
            try:
                loss.backward()  # the graph is freed: torch raises, unchanged
            except RuntimeError as error:
                print("RAISED", "backward through the graph a second time" in str(error))
            b(x).sum().backward()
            print("BRACKETED", torch.autograd.backward.__name__, torch.autograd.grad.__wrapped__.__name__,
                  torch.autograd.backward.__doc__ == torch.autograd.backward.__wrapped__.__doc__)
            """, task="statistics", exec_range="all")
        self.assertIn("RAISED True", result.stdout)
        self.assertIn("GRAD True", result.stdout)
        self.assertIn("BRACKETED backward grad True", result.stdout)
        ops = self.by_op(rows)
        for name, count in (("a_lin", 2), ("a_act", 2), ("b_lin", 4), ("b_act", 4), ("c_lin", 1), ("c_act", 1)):
            self.assertEqual(len([r for r in ops[name] if r["Input/Output"] == "output"]), count, name)
        # Backward ops for every backward pass: 2 of a, 4 of b (the raising one adds none), 1 of c.
        for prefix, count in (("a_lin.backward", 2), ("b_lin.backward", 4), ("c_lin.backward", 1)):
            passes = [r for name, op_rows in ops.items() if name.startswith(prefix) for r in op_rows
                      if r["Input/Output"] == "input"]
            self.assertEqual(len(passes), count, prefix)

    def test_two_live_models_whose_layers_share_names_are_warned_of_once(self):
        # A teacher and a student of one class: their fc1 is one op whose rounds alternate
        # between them (a user's plot zig-zagged). Said once, in the status file too; models
        # named apart, and one model called again, are not.
        rows, result = self.run_script("""
            import torch
            import torch.nn as nn

            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1, self.fc2 = nn.Linear(4, 4), nn.Linear(4, 2)

                def forward(self, x):
                    return self.fc2(torch.relu(self.fc1(x)))

            other = nn.Sequential()
            other.add_module("head", nn.Linear(4, 2))
            teacher, student = M(), M()
            x = torch.randn(3, 4)
            with torch.no_grad():
                for _ in range(2):
                    other(x)
                    teacher(x)
                    student(x)
            """, task="statistics", exec_range="all")
        warning = ("two models of this program, M and M, have layer-level modules of the same names "
                   "(fc1, fc2): each name is one op of the dump, its rounds alternating between the models")
        self.assertEqual(result.stderr.count("[probe] warning: " + warning), 1, result.stderr)
        self.assertNotIn("Sequential", result.stderr)
        with open(self.path("out", "atb_dump_data", "probe_status.json")) as f:
            (process,) = json.load(f)["processes"]
        self.assertEqual([m["text"] for m in process["messages"] if warning in m["text"]],
                         [m["text"] for m in process["messages"] if "two models" in m["text"]])
        self.assertEqual(len([m for m in process["messages"] if warning in m["text"]]), 1)
        # What the warning says: fc1's four rounds are the two models' in turn.
        fc1 = [r for r in rows if r["Op Name"] == "fc1" and r["Input/Output"] == "output"]
        self.assertEqual(sorted(int(r["Execution Count"]) for r in fc1), [0, 1, 2, 3])

    def checkpointed_blocks(self, reentrant, **config):
        # Two blocks of one class, each run under activation checkpointing: their forward is
        # recomputed in the backward pass, with no call of the model open.
        return self.run_script("""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            from torch.utils.checkpoint import checkpoint

            class Blk(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = nn.Linear(8, 8)
                    self.b = nn.Linear(8, 8)

                def forward(self, x):
                    return self.b(torch.relu(self.a(x)))

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blk1 = Blk()
                    self.blk2 = Blk()
                    self.head = nn.Linear(8, 1)

                def forward(self, x):
                    for blk in (self.blk1, self.blk2):
                        x = checkpoint(blk, x, use_reentrant=%r)
                    return self.head(x)

            torch.manual_seed(0)
            model = Net()
            grads = []
            for step in range(2):
                x = torch.randn(4, 8, requires_grad=True)
                model(x).square().sum().backward()
                # The same step without checkpointing, by functions (no module called).
                def block(blk, x):
                    h = torch.relu(F.linear(x, blk.a.weight, blk.a.bias))
                    return F.linear(h, blk.b.weight, blk.b.bias)

                x2 = x.detach().clone().requires_grad_()
                h1 = block(model.blk1, x2)
                h2 = block(model.blk2, h1)
                h1.retain_grad()
                h2.retain_grad()
                F.linear(h2, model.head.weight, model.head.bias).square().sum().backward()
                grads.append({"h1": h1.grad, "h2": h2.grad, "x": x2.grad})
            torch.save(grads, __file__ + ".grads.pt")
            """ % reentrant, task="statistics", exec_range="all", **config)

    def check_checkpointed_blocks_are_the_models(self, reentrant):
        rows, result = self.checkpointed_blocks(reentrant)
        grads = torch.load(self.path("model.py.grads.pt"))
        blocks = ["CheckpointFunction_0", "CheckpointFunction_1"] if reentrant else ["blk1", "blk2"]
        ops = self.by_op(rows)
        # The recomputed blocks are no model of their own: no layers "a", "b", "relu_0" at the
        # top, no second model, no warning of two models.
        self.assertEqual(sorted(ops), sorted(blocks + [b + ".backward" for b in blocks] +
                                             ["head", "head.backward"]))
        self.assertEqual(os.listdir(self.path("out", "atb_dump_data", "info", "model",
                                              os.listdir(self.path("out", "atb_dump_data", "info", "model"))[0])),
                         ["Net.json"])
        self.assertNotIn("two models", result.stderr)
        # Each block's backward op: the gradient flowing into its output and out of its input.
        for step in range(2):
            for block, grad_in, grad_out in ((blocks[1], "h2", "h1"), (blocks[0], "h1", "x")):
                op_rows = [r for r in ops[block + ".backward"] if int(r["Execution Count"]) == step]
                inputs = [r for r in op_rows if r["Input/Output"] == "input"]
                outputs = [r for r in op_rows if r["Input/Output"] == "output"]
                self.assertEqual((len(inputs), len(outputs)), (1, 1), (block, step, op_rows))
                self.assertStatsMatch(inputs[0], grads[step][grad_in])
                self.assertStatsMatch(outputs[0], grads[step][grad_out])

    def test_a_block_recomputed_by_reentrant_checkpointing_is_part_of_its_backward_op(self):
        self.check_checkpointed_blocks_are_the_models(True)

    def test_a_block_recomputed_by_checkpointing_without_reentry_is_part_of_its_backward_op(self):
        self.check_checkpointed_blocks_are_the_models(False)

    def test_the_ops_of_a_recomputed_block_are_children_of_its_backward_op(self):
        # Every op dumped: the block's recomputed aten ops run inside its backward op.
        for reentrant, backward in ((True, "CheckpointFunction_1.backward"), (False, "blk2.backward")):
            with self.subTest(reentrant=reentrant):
                shutil.rmtree(self.path("out"), ignore_errors=True)
                rows, result = self.checkpointed_blocks(reentrant, save_child=True)
                ops = self.by_op(rows)
                self.assertNotIn("two models", result.stderr)
                self.assertFalse([name for name in ops if name.split("/")[0] in ("a", "b", "relu_0")])
                recomputed = [name for name in ops if name.startswith(backward + "/") and
                              ops[name][0]["Op Type"] == "aten::relu"]
                self.assertEqual(len(recomputed), 1, sorted(ops))

    def test_an_input_kept_from_step_to_step_is_hooked_once_per_layer(self):
        # A tensor hook fires at every backward through its tensor: an input that requires its
        # gradient and is used at every step must not pile up hooks (every backward ran them
        # all). The adapter hooks such a leaf on its accumulator node, which lives one step; the
        # Python hooks (a tensor subclass) once per layer for all the steps.
        rows, result = self.run_script("""
            import torch
            import torch.nn as nn
            from probe_studio import torch_hooks

            class Marked(torch.Tensor):  # hooked by torch_hooks.py rather than the adapter
                pass

            class Two(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a, self.b, self.c = nn.Linear(3, 3), nn.Linear(3, 3), nn.Linear(3, 3)

                def forward(self, kept, fresh, marked):
                    return self.a(kept).sum() + self.b(kept).sum() + self.a(fresh).sum() + self.c(marked).sum()

            torch.manual_seed(4)
            model, kept = Two(), torch.randn(2, 3, requires_grad=True)
            marked = torch.randn(2, 3).as_subclass(Marked).requires_grad_()
            for step in range(40):
                model(kept, torch.randn(2, 3, requires_grad=True), marked).backward()
            print("HOOKS", torch_hooks._adapter.probe_torch_gradient_hooks_made())
            print("PYTHON HOOKS", len(marked._backward_hooks))
            """, task="statistics", exec_range="all")
        # Each step: kept, a leaf, on its accumulator node (made anew with each step's graph,
        # hooks and all), one for a's input 0 and one for b's; fresh, one; and one on the
        # autograd node of each aten op the model calls itself (the sums and adds, and the
        # aliases the subclass makes), for all its inputs. Never more a step.
        aten_inputs = [r for r in rows if r["Execution Count"] == "0" and r["Op Type"].startswith("aten::")
                       and ".backward" not in r["Op Name"] and r["Input/Output"] == "input"]
        self.assertEqual(len(aten_inputs), 12)
        aten_ops = {r["Op Name"] for r in aten_inputs}
        self.assertEqual(len(aten_ops), 9, aten_ops)
        self.assertIn("HOOKS %d" % ((3 + len(aten_ops)) * 40), result.stdout)
        self.assertIn("PYTHON HOOKS 1", result.stdout)
        # Every step's backward ops are all there: a's two calls and b's.
        flowing_in = [r["Op Name"].split(".")[0] for r in rows
                      if ".backward" in r["Op Name"] and r["Op Type"] == "LinearBackward"
                      and r["Input/Output"] == "input"]
        self.assertEqual((flowing_in.count("a"), flowing_in.count("b")), (80, 40))

    def test_input_gradients_are_hooked_only_in_grad_mode(self):
        # A layer-level op's inputs get gradient hooks when grad mode is on as it begins (the
        # adapter says so with the awake flag): not under no_grad or inference_mode, even for an
        # input that requires its gradient; again under enable_grad inside no_grad.
        rows, result = self.run_script("""
            import torch
            import torch.nn as nn
            from probe_studio import torch_hooks
            torch.manual_seed(5)
            model = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
            made = torch_hooks._adapter.probe_torch_gradient_hooks_made
            counts = []
            for mode in ("grad", "no_grad", "inference", "enable_grad"):
                before = made()
                x = torch.randn(2, 3, requires_grad=True)  # a new leaf each time: hooked anew
                if mode == "grad":
                    model(x).sum().backward()
                elif mode == "no_grad":
                    with torch.no_grad():
                        model(x)
                elif mode == "inference":
                    with torch.inference_mode():
                        model(x)
                else:
                    with torch.no_grad(), torch.enable_grad():
                        model(x).sum().backward()
                counts.append(made() - before)
            print("HOOKS", counts)
            """, task="statistics", exec_range="all")
        # Both layers' inputs (x, and the Linear's output) when grad mode is on, none otherwise.
        self.assertIn("HOOKS [2, 0, 0, 2]", result.stdout)
        # The gradient flowing out of the Tanh's backward op (into the Linear's output), as
        # recomputed here.
        torch.manual_seed(5)
        model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
        grads = []
        for mode in ("grad", "no_grad", "inference", "enable_grad"):
            x = torch.randn(2, 3, requires_grad=True)
            if mode in ("grad", "enable_grad"):
                hidden = model[0](x)
                hidden.retain_grad()
                model[1](hidden).sum().backward()
                grads.append(hidden.grad)
        outputs = [r for r in self.by_op(rows)["1.backward"] if r["Input/Output"] == "output"]
        self.assertEqual(len(outputs), 2)
        for row, want in zip(outputs, grads):
            self.assertStatsMatch(row, want)

    def test_the_gradient_of_a_leaf_input_flows_out_of_its_layer(self):
        # A layer's input that is a leaf needing its gradient (torch 1.x runs a leaf's tensor
        # hooks inside its accumulator node, after the layer's backward op had let go): its
        # gradient is the backward op's output at every step, once, whether the leaf is kept from
        # step to step or made anew.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            torch.manual_seed(3)
            model = nn.Sequential(nn.Linear(4, 3), nn.Tanh())
            kept = torch.randn(5, 4, requires_grad=True)
            grads = []
            for step in range(4):
                x = kept if step < 2 else torch.randn(5, 4, requires_grad=True)
                x.grad = None
                model(x).sum().backward()
                grads.append(x.grad.clone())
            torch.save(grads, __file__ + ".grads.pt")
            """, task="statistics", exec_range="all")
        grads = torch.load(self.path("model.py.grads.pt"))
        outputs = [r for r in self.by_op(rows)["0.backward"] if r["Input/Output"] == "output"]
        self.assertEqual([int(r["Execution Count"]) for r in outputs], [0, 1, 2, 3])
        for row in outputs:
            self.assertEqual(row["Index"], "0_input")
            self.assertStatsMatch(row, grads[int(row["Execution Count"])])

    def test_autograd_functions_and_layer_level_aten_ops_have_outputs_both_ways(self):
        # RecordFunction gives no outputs of a Python autograd Function, and a layer-level aten
        # op's backward op had no hooks on its inputs: Sq_0 and the backward ops of Sq_0 and
        # relu_0 had inputs only, so a Function that changed its values compared as a match and
        # the op after it was blamed; an Inf born in sqrt's backward went unseen. A subclass
        # inheriting its parent's forward is named by itself; a Function inside a module is its
        # child op with its outputs; forward called directly (not through apply) reports nothing
        # to the op that is open.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Sq(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x, w):
                    ctx.save_for_backward(x, w)
                    return x * w * 1.5

                @staticmethod
                def backward(ctx, g):
                    x, w = ctx.saved_tensors
                    return g * w * 1.5, (g * x).sum(0) * 1.5

            class Cube(Sq):
                pass

            class Ctx:
                def save_for_backward(self, *tensors):
                    pass

            class Inner(nn.Module):
                def forward(self, x):
                    return Sq.apply(x, torch.ones(8)) + Sq.forward(Ctx(), x, x)

            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = nn.Parameter(torch.randn(8))
                    self.inner = Inner()

                def forward(self, x):
                    y = torch.relu(Sq.apply(x, self.w))
                    return self.inner(Cube.apply(y, self.w))

            torch.manual_seed(0)
            model = M()
            x = torch.randn(4, 8, requires_grad=True)
            model(x).sum().backward()
            # The same values without Functions or modules (nothing of it dumped).
            w = model.w.detach().clone().requires_grad_()
            w_cube = model.w.detach().clone().requires_grad_()  # w's use by Cube, apart
            x2 = x.detach().clone().requires_grad_()
            sq = x2 * w * 1.5
            sq.retain_grad()
            relu = torch.relu(sq)
            relu.retain_grad()
            cube = relu * w_cube * 1.5
            inner = cube * 1.5 + cube * cube * 1.5
            inner.sum().backward()
            torch.save({"sq": sq.detach(), "cube": cube.detach(), "inner": inner.detach()},
                       __file__ + ".forward.pt")
            torch.save({"sq": sq.grad, "relu": relu.grad, "x": x2.grad, "w_sq": w.grad, "w_cube": w_cube.grad},
                       __file__ + ".grads.pt")
            """, task="statistics", exec_range="all", save_child=True)
        forward = torch.load(self.path("model.py.forward.pt"))
        grads = torch.load(self.path("model.py.grads.pt"))
        ops = self.by_op(rows)

        def only(op, io, index=None):
            found = [r for r in ops[op] if r["Input/Output"] == io and (index is None or r["Index"] == index)]
            self.assertEqual(len(found), 1, "%s %s %s: %s" % (op, io, index, found))
            return found[0]

        self.assertEqual(only("Sq_0", "output")["Op Type"], "Sq")
        self.assertStatsMatch(only("Sq_0", "output"), forward["sq"])
        self.assertEqual(only("Cube_0", "output")["Op Type"], "Cube")
        self.assertStatsMatch(only("Cube_0", "output"), forward["cube"])
        self.assertStatsMatch(only("inner", "output"), forward["inner"])
        inner_sq = [name for name in ops if name.startswith("inner/") and ops[name][0]["Op Type"] == "Sq"]
        self.assertEqual(len(inner_sq), 1, inner_sq)
        self.assertEqual(len([r for r in ops[inner_sq[0]] if r["Input/Output"] == "output"]), 1)
        self.assertStatsMatch(only("relu_0.backward", "output"), grads["sq"])
        self.assertStatsMatch(only("Cube_0.backward", "output", "0"), grads["relu"])
        self.assertStatsMatch(only("Sq_0.backward", "output", "0"), grads["x"])
        # w's gradient flows out of both Functions' backward ops: each its own share (what its
        # node passes back to w), not the two summed.
        self.assertStatsMatch(only("Sq_0.backward", "output", "1"), grads["w_sq"])
        self.assertStatsMatch(only("Cube_0.backward", "output", "1"), grads["w_cube"])

    def test_a_layer_level_op_has_the_gradients_of_inputs_made_by_different_layers(self):
        # e(t) * p(t): mul_0's backward node passes a gradient to e's output and one to p's. Both
        # were hooked on their tensors, reported as the node of each runs: p.backward had begun
        # when e's came, and mul_0.backward lost it. Also an op changing an input in place
        # (add_), and an op given one tensor twice (h * h: the sum of both, its share of h's
        # gradient; h's node ran after q.backward had begun, and mul_1.backward had no outputs).
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.e = nn.Embedding(10, 4)
                    self.p = nn.Embedding(10, 4)
                    self.q = nn.Linear(4, 4)
                    self.head = nn.Linear(4, 1)

                def forward(self, t):
                    h = self.e(t) * self.p(t)
                    g = self.q(h)
                    g.add_(h * h)
                    return self.head(g)

            torch.manual_seed(2)
            model = M()
            t = torch.tensor([1, 2, 3])
            model(t).sum().backward()
            # Again by functions, each use of a tensor apart.
            e, p = model.e.weight[t].detach(), model.p.weight[t].detach()
            h_q = (e * p).requires_grad_()  # h as q's input
            h_m = (e * p).requires_grad_()  # h as mul_1's, both its inputs
            q = nn.functional.linear(h_q, model.q.weight, model.q.bias)
            sq = h_m * h_m
            q.retain_grad()
            sq.retain_grad()
            nn.functional.linear(q + sq, model.head.weight, model.head.bias).sum().backward()
            h_grad = h_q.grad + h_m.grad
            torch.save({"e": h_grad * p, "p": h_grad * e, "h_in_mul": h_m.grad, "q": q.grad, "sq": sq.grad},
                       __file__ + ".grads.pt")
            """, task="statistics", exec_range="all")
        grads = torch.load(self.path("model.py.grads.pt"))
        ops = self.by_op(rows)

        def output(op, index):
            found = [r for r in ops[op] if r["Input/Output"] == "output" and r["Index"] == index]
            self.assertEqual(len(found), 1, "%s %s: %s" % (op, index, ops[op]))
            return found[0]

        self.assertStatsMatch(output("mul_0.backward", "0_self"), grads["e"])
        self.assertStatsMatch(output("mul_0.backward", "1_other"), grads["p"])
        self.assertStatsMatch(output("add__0.backward", "0_self"), grads["q"])
        self.assertStatsMatch(output("add__0.backward", "1_other"), grads["sq"])
        for index in ("0_self", "1_other"):
            self.assertStatsMatch(output("mul_1.backward", index), grads["h_in_mul"])

    def test_a_module_layers_backward_op_has_its_own_share_of_an_input_used_elsewhere_too(self):
        # h + lin(norm(h)) (a pre-norm residual): norm.backward's output was h's whole gradient,
        # the residual's share summed in (a tensor hook on h runs once every use has passed its
        # share back), where a module's backward hook gives what the module passes back. Also a
        # module whose input feeds several of its nodes (attn: q, k, v), a module given an input
        # and a layer-level op's result of it (inner(h, sigmoid(h)): its backward op had no
        # output for h, the sigmoid's backward ran in between), a module called twice in a step,
        # and a second backward pass through the graph (retain_graph).
        model_source = SHARED_INPUT_MODULES + textwrap.dedent("""
            import torch
            import torch.nn as nn

            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.inp = nn.Linear(4, 4)
                    self.norm = nn.LayerNorm(4)
                    self.lin = nn.Linear(4, 4)
                    self.attn = Attn()
                    self.inner = Inner()
                    self.twice = nn.Linear(4, 4)

                def forward(self, x):
                    h = self.inp(x)
                    h = h + self.lin(self.norm(h))
                    h = h + self.attn(h)
                    h = self.inner(h, torch.sigmoid(h))
                    return self.twice(self.twice(h) * 2 + h)

            torch.manual_seed(4)
            model = M()
            x = torch.randn(3, 4)
            """)
        rows, _ = self.run_script(model_source + textwrap.dedent("""
            loss = model(x).square().sum()
            loss.backward(retain_graph=True)
            loss.backward()
            """), task="statistics", exec_range="all")
        # Each module's share, recomputed here: the module's inputs cut from the rest of the
        # graph, given the gradient its output gets from the whole model.
        built = {}
        exec(model_source, built)
        model, x = built["model"], built["x"]
        h0 = model.inp(x).detach().requires_grad_()
        out = {"norm": model.norm(h0)}
        out["lin"] = model.lin(out["norm"])
        h1 = h0 + out["lin"]
        out["attn"] = model.attn(h1)
        h2 = h1 + out["attn"]
        s = torch.sigmoid(h2)
        out["inner"] = model.inner(h2, s)
        out["twice1"] = model.twice(out["inner"])
        u = out["twice1"] * 2 + out["inner"]
        out["twice2"] = model.twice(u)
        for t in out.values():
            t.retain_grad()
        out["twice2"].square().sum().backward()
        shares = {}
        for name, module, inputs in (("norm", model.norm, [h0]), ("attn", model.attn, [h1]),
                                     ("inner", model.inner, [h2, s]), ("twice1", model.twice, [out["inner"]]),
                                     ("twice2", model.twice, [u])):
            cut = [t.detach().requires_grad_() for t in inputs]
            shares[name] = torch.autograd.grad(module(*cut), cut, out[name].grad)
        ops = self.by_op(rows)

        def outputs(op):
            return [r for r in ops.get(op, []) if r["Input/Output"] == "output"]

        # Both passes: each backward op has its outputs twice, the same values.
        for op, expected in (("norm.backward", shares["norm"]), ("attn.backward", shares["attn"]),
                             ("inner.backward", shares["inner"])):
            found = outputs(op)
            self.assertEqual(len(found), 2 * len(expected), "%s: %s" % (op, found))
            for row in found:
                self.assertStatsMatch(row, expected[int(row["Index"].split("_")[0])])
        # twice, called twice: the backward op of its second call runs first.
        for op, expected in (("twice.backward", shares["twice2"]), ("twice.backward_1", shares["twice1"])):
            found = outputs(op)
            self.assertEqual(len(found), 2, "%s: %s" % (op, found))
            for row in found:
                self.assertStatsMatch(row, expected[0])

    def test_a_layers_input_share_when_some_of_its_nodes_do_not_run_or_run_on_another_thread(self):
        # Found by review of the test above's fix: two's second output unused in the first pass
        # (its q node never runs: the sum of h's shares waited for it, and was never written),
        # a second pass through the retained graph using only that output (it had both passes'
        # shares), a layer returning its input as it is (pas: what reaches that output passes no
        # node of it), and a layer run on another thread than the one that made its input (the
        # autograd numbers of threads overlap: a node of the other thread hid one of attn's).
        # Checked against torch's own full backward hooks on the same model.
        model_source = SHARED_INPUT_MODULES + textwrap.dedent("""
            import threading
            import torch
            import torch.nn as nn

            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.inp, self.two, self.pas, self.head = nn.Linear(4, 4), Two(), Pass(), nn.Linear(4, 4)

                def forward(self, x):
                    a, b = self.two(self.inp(x))
                    same, l = self.pas(a)
                    return self.head(same * l), b

            class OnThread(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.attn = Attn()

                def forward(self, x):
                    return self.attn(x)

            torch.manual_seed(7)
            model, threaded = M(), OnThread()
            x = torch.randn(3, 4)
            t = torch.randn(3, 4, requires_grad=True)

            def on_threads(step):
                made = {}
                maker = threading.Thread(target=lambda: made.update(g=t * 5))
                maker.start()
                maker.join()
                runner = threading.Thread(target=lambda: made.update(out=threaded(made["g"])))
                runner.start()
                runner.join()
                step(made["out"].square().sum() + made["g"].square().sum())
            """)
        rows, _ = self.run_script(model_source + textwrap.dedent("""
            y, b = model(x)
            y.square().sum().backward(retain_graph=True)
            b.square().sum().backward()
            on_threads(lambda loss: loss.backward())
            """), task="statistics", exec_range="all")
        built = {}
        exec(model_source, built)
        shares = {}
        for owner in ("model", "threaded"):
            for name, module in built[owner].named_children():
                module.register_full_backward_hook(
                    lambda module, grad_input, grad_output, name=name: shares.setdefault(name, []).append(grad_input))
        y, b = built["model"](built["x"])
        y.square().sum().backward(retain_graph=True)
        b.square().sum().backward()
        built["on_threads"](lambda loss: loss.backward())
        self.assertEqual([len(shares[name]) for name in ("two", "pas", "attn")], [2, 1, 1])
        outputs = {}
        for r in rows:
            if r["Input/Output"] == "output" and r["Op Name"].endswith(".backward"):
                outputs.setdefault(r["Op Name"], []).append(r)
        for op, expected in (("two.backward", [s[0] for s in shares["two"]]),
                             ("pas.backward", [shares["pas"][0][0]]), ("attn.backward", [shares["attn"][0][0]])):
            self.assertEqual(len(outputs.get(op, [])), len(expected), "%s: %s" % (op, outputs.get(op)))
            for row, share in zip(outputs[op], expected):
                self.assertStatsMatch(row, share)

    def test_a_forward_calling_another_with_its_ctx_has_its_own_output_only(self):
        # Shift.forward calls Sq.forward with its own ctx (as super() does): Sq's result is an
        # intermediate of Shift's op, which had it as a second output 0.
        rows, _ = self.run_script("""
            import torch

            class Sq(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * x

                @staticmethod
                def backward(ctx, g):
                    return g

            class Shift(Sq):
                @staticmethod
                def forward(ctx, x):
                    return Sq.forward(ctx, x) + 100

            class M(torch.nn.Module):
                def forward(self, x):
                    return Shift.apply(x)

            M()(torch.full((3,), 2.0))
            """, task="statistics", exec_range="all")
        outputs = [r for r in rows if r["Op Name"] == "Shift_0" and r["Input/Output"] == "output"]
        self.assertEqual(len(outputs), 1, outputs)
        self.assertStatsMatch(outputs[0], torch.full((3,), 104.0))

    def test_a_tensor_kept_across_steps_is_hooked_once_per_layer_input(self):
        # A tensor computed once and kept (its graph retained), given to a layer at every step:
        # each step hooked it again, and every hook reported again in each backward pass (the
        # layer's backward op had 2,000 output rows in round 1,999, the dump 252 MB). A module
        # layer's input, and a layer-level aten op's: both hooked now on the nodes the step
        # made, where those pass the gradient back, none on the kept tensor.
        rows, result = self.run_script("""
            import torch
            from probe_studio import torch_hooks

            class M(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = torch.nn.Parameter(torch.randn(6, 6))
                    self.cached = self.w * 2  # not leaves; their graph kept from step to step
                    self.kept = self.w * 3
                    self.lin = torch.nn.Linear(6, 6)

                def forward(self, x):
                    return torch.matmul(x, self.cached).sum() + self.lin(self.kept).sum()

            torch.manual_seed(0)
            model = M()
            x = torch.randn(3, 6, requires_grad=True)
            made = []
            for step in range(30):
                model(x).backward(retain_graph=True)
                made.append(torch_hooks._adapter.probe_torch_gradient_hooks_made())
            print("MADE", *made)
            """, task="statistics", exec_range="all")
        made = [int(v) for v in result.stdout.split("MADE")[1].split()]
        # As many hooks at each step as at the first: none piles up.
        per_step = {b - a for a, b in zip(made[1:], made[2:])}
        self.assertEqual(len(per_step), 1, made)
        self.assertLessEqual(per_step.pop(), made[0], made)
        # One row per tensor of each op in each round; the kept tensor's gradient flowing out of
        # matmul's backward op in every round.
        count = {}
        for r in rows:
            key = (r["Execution Count"], r["Op Name"], r["Input/Output"], r["Index"])
            count[key] = count.get(key, 0) + 1
        self.assertEqual(set(count.values()), {1}, [k for k, n in count.items() if n > 1][:3])
        for kept_output in (("matmul_0.backward", "output", "1_other"), ("lin.backward", "output", "0_input")):
            kept = {k[0] for k in count if k[1:] == kept_output}
            self.assertEqual(kept, {str(step) for step in range(30)}, kept_output)

    def test_a_model_checkpointed_whole_from_outside_keeps_its_backward_ops(self):
        # The training loop checkpoints a model of its own (reentrant): it is recomputed in the
        # backward pass, called as a model, and its layers' backward ops come from that call.
        # Taken for a block of the other model's recomputation, they were all lost.
        rows, result = self.run_script("""
            import torch
            import torch.nn as nn
            from collections import OrderedDict
            from torch.utils.checkpoint import checkpoint

            torch.manual_seed(0)
            enc = nn.Sequential(OrderedDict(e0=nn.Linear(8, 8), e1=nn.ReLU(), e2=nn.Linear(8, 8)))
            dec = nn.Sequential(OrderedDict(d0=nn.Linear(8, 8), d1=nn.Tanh(), d2=nn.Linear(8, 1)))
            grads = []
            for step in range(2):
                x = torch.randn(4, 8, requires_grad=True)
                dec(checkpoint(enc, x, use_reentrant=True)).square().sum().backward()
                grads.append(x.grad)
            torch.save(grads, __file__ + ".grads.pt")
            """, task="statistics", exec_range="all")
        grads = torch.load(self.path("model.py.grads.pt"))
        ops = self.by_op(rows)
        for name in ("e0.backward", "e1.backward", "e2.backward", "d0.backward"):
            self.assertIn(name, ops)
        outputs = [r for r in ops["e0.backward"] if r["Input/Output"] == "output"]
        self.assertEqual(len(outputs), 2, outputs)
        for row, grad in zip(outputs, grads):
            self.assertStatsMatch(row, grad)

    def test_a_backward_pass_run_by_the_engine_directly_leaves_the_next_calls_dumped(self):
        # Megatron's custom_backward runs the engine itself (no torch.autograd.backward): the
        # last backward op of its pass stays open, and was taken for a pass still running, so
        # every later call of the model was skipped (rounds 1..4 missing, with exec_range "1,3"
        # nothing dumped at all).
        script = """
            import torch
            import torch.nn as nn
            from torch.autograd import Variable

            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
            for step in range(5):
                out = model(torch.randn(4, 8)).square().sum()
                Variable._execution_engine.run_backward(
                    tensors=(out,), grad_tensors=(torch.ones_like(out),), keep_graph=False,
                    create_graph=False, inputs=tuple(), allow_unreachable=True, accumulate_grad=True)
            """
        for exec_range, rounds in (("all", set(range(5))), ("1,3", {1, 2, 3})):
            with self.subTest(exec_range=exec_range):
                shutil.rmtree(self.path("out"), ignore_errors=True)
                rows, _ = self.run_script(script, task="statistics", exec_range=exec_range)
                forward = {int(r["Execution Count"]) for r in rows if r["Op Name"] == "0"}
                backward = {int(r["Execution Count"]) for r in rows if r["Op Name"] == "0.backward"}
                self.assertEqual((forward, backward), (rounds, rounds))

    def test_a_module_returning_a_dataclass_has_its_fields_as_outputs(self):
        # A dataclass output had no rows: a NaN born in the module was blamed on the next one.
        rows, _ = self.run_script("""
            import dataclasses
            import torch
            import torch.nn as nn

            @dataclasses.dataclass
            class EncOut:
                hidden: torch.Tensor
                steps: int
                extra: tuple

            class Enc(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(4, 4)

                def forward(self, x):
                    h = self.lin(x)
                    return EncOut(hidden=h, steps=3, extra=(h * 2, None))

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.enc = Enc()

                def forward(self, x):
                    return self.enc(x).hidden.sum()

            torch.manual_seed(0)
            model, x = Model(), torch.randn(3, 4)
            model(x)
            out = model.enc.forward(x)
            torch.save([out.hidden, out.extra[0]], __file__ + ".out.pt")
            """, task="statistics", exec_range="all")
        hidden, extra = torch.load(self.path("model.py.out.pt"))
        outputs = [r for r in rows if r["Op Name"] == "enc" and r["Input/Output"] == "output"]
        self.assertEqual([r["Index"] for r in outputs], ["0_hidden", "1_extra0"])
        self.assertStatsMatch(outputs[0], hidden)
        self.assertStatsMatch(outputs[1], extra)

    def test_a_tensor_subclass_kept_across_steps_is_hooked_once_per_layer_input(self):
        # The same for a tensor the adapter cannot hook (a subclass: hooked in Python): its hooks
        # were deduplicated for leaves only, and lin.backward had 20 output rows in round 19.
        rows, _ = self.run_script("""
            import torch

            class Sub(torch.Tensor):
                pass

            class M(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = torch.nn.Parameter(torch.randn(6, 6))
                    self.kept = (self.w * 3).as_subclass(Sub)  # its graph kept from step to step
                    self.lin = torch.nn.Linear(6, 6)

                def forward(self, x):
                    return self.lin(self.kept).sum() + x.sum()

            torch.manual_seed(0)
            model = M()
            x = torch.randn(3, 6, requires_grad=True)
            for step in range(20):
                model(x).backward(retain_graph=True)
            kept = model.kept.as_subclass(torch.Tensor)
            out = torch.nn.functional.linear(kept, model.lin.weight, model.lin.bias)
            torch.save(torch.autograd.grad(out.sum(), kept)[0], __file__ + ".grad.pt")
            """, task="statistics", exec_range="all")
        grad = torch.load(self.path("model.py.grad.pt"))
        outputs = [r for r in rows if r["Op Name"] == "lin.backward" and r["Input/Output"] == "output"]
        self.assertEqual(sorted(int(r["Execution Count"]) for r in outputs), list(range(20)))
        for row in outputs:
            self.assertStatsMatch(row, grad)

    def test_a_model_on_the_meta_device_is_run_without_a_word(self):
        # A meta tensor has a shape and no values: the probe tried to copy them out, and said so
        # on the model's standard error with torch's 200-frame C++ backtrace. Its ops have no
        # statistics; the model on the CPU after it is dumped as usual.
        rows, result = self.run_script("""
            import torch
            meta = torch.nn.Sequential(torch.nn.Linear(8, 16, device="meta"), torch.nn.ReLU())
            print(meta(torch.randn(4, 8, device="meta")).shape)
            cpu = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU())
            torch.manual_seed(0)
            out = cpu(torch.randn(4, 8))
            torch.save(out, __file__ + ".out.pt")
            """, task="statistics", exec_range="all", save_child=True)
        self.assertNotIn("torch adapter", result.stderr)
        self.assertIn("torch.Size([4, 16])", result.stdout)
        self.assertTrue(rows)
        outputs = [r for r in rows if r["Op Name"] == "1" and r["Input/Output"] == "output"]
        self.assertEqual(len(outputs), 1, outputs)
        self.assertStatsMatch(outputs[0], torch.load(self.path("model.py.out.pt")))

    def test_input_gradients_named_past_the_held_names_are_reported_alike(self):
        # The adapter holds the names its input-gradient hooks carry once per process, up to
        # 4096 of them; a hook named past that carries its name itself. 5000 inputs of one call,
        # each named by its key: every gradient flowing out is reported under its own name.
        count = 5000
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Weigh(nn.Module):
                def forward(self, parts):
                    return sum((value * (i + 1)).sum() for i, value in enumerate(parts.values()))

            model = nn.Sequential()
            model.add_module("weigh", Weigh())
            leaf = torch.full((2,), 0.5, requires_grad=True)
            parts = {"k%d" % i: leaf * 1.0 for i in range(COUNT)}  # each made by a node of its own
            model(parts).backward()
            """.replace("COUNT", str(count)), task="statistics", exec_range="all")
        outputs = [r for r in rows if r["Op Name"] == "weigh.backward" and r["Input/Output"] == "output"]
        self.assertEqual(sorted(r["Index"] for r in outputs), sorted("%d_k%d" % (i, i) for i in range(count)))
        for row in outputs:
            i = int(row["Index"].split("_")[0])
            self.assertStatsMatch(row, torch.full((2,), float(i + 1)))

    def test_backward_ops_are_captured_with_their_children_when_first_seen(self):
        # The aten ops inside backward nodes are watched only in backward passes that may need
        # them (the autograd engine gives every node the callbacks of the pass's start): the
        # first one, one that meets a layer's backward op not seen before (a layer first run
        # under no_grad, a layer called more often than before), and every one with a config
        # that selects ops below layers. Each backward op's structure, captured once, holds its
        # nodes' aten ops all the same.
        source = """
            import torch
            import torch.nn as nn
            from probe_studio import torch_hooks

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.first, self.act, self.late = nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4)

                def forward(self, x, late_calls):
                    h = self.act(self.first(x))
                    for _ in range(late_calls):
                        h = self.late(h)
                    return h.sum()

            torch.manual_seed(2)
            model, x = Net(), torch.randn(2, 3)
            with torch.no_grad():
                model(x, 1)  # late's forward is seen here, its backward only at step 3
            watched = []
            for late_calls in (0, 0, 1, 1, 2, 2):
                model(x, late_calls).backward()
                watched.append(torch_hooks._adapter.probe_torch_backward_passes_watched())
            print("WATCHED", watched)
            """
        rows, result = self.run_script(source, task="statistics", exec_range="all")
        # Passes 1 (all new), 3 (late's first backward op) and 5 (late's second call's one).
        self.assertIn("WATCHED [1, 1, 2, 2, 3, 3]", result.stdout)
        layer_dir = self.path("out", "atb_dump_data", "info", "layer")
        structures = {}
        for pid in os.listdir(layer_dir):
            for name in os.listdir(os.path.join(layer_dir, pid)):
                with open(os.path.join(layer_dir, pid, name)) as f:
                    structures[name] = json.load(f)
        backward = {name: s for name, s in structures.items() if ".backward" in name}
        self.assertEqual(sorted(n.split(".")[0] for n in backward), ["act", "first", "late", "late", "sum_0"])
        for name, structure in backward.items():
            # Its autograd nodes, each with the aten ops it ran (the engine's own aten ops, which
            # add up gradients between nodes, sit beside them).
            nodes = [n for n in structure["nodes"] if n["opType"].startswith("autograd::")]
            self.assertTrue(nodes, name)
            for node in nodes:
                aten = [c["opType"] for c in node.get("nodes", [])]
                self.assertTrue(aten and all(t.startswith("aten::") for t in aten), (name, node["opType"], aten))
        # Rows do not depend on what is watched: every pass's backward ops are there.
        flowing_in = [r["Op Name"].split(".")[0] for r in rows
                      if ".backward" in r["Op Name"] and r["Input/Output"] == "input"]
        self.assertEqual((flowing_in.count("first"), flowing_in.count("late")), (6, 6))

        # A config that selects ops below layers has every pass watched, and their rows dumped.
        shutil.rmtree(self.path("out"))
        rows, result = self.run_script(source, task="statistics", exec_range="all", save_child=True)
        self.assertIn("WATCHED [1, 2, 3, 4, 5, 6]", result.stdout)
        inside = [r for r in rows if r["Op Name"].startswith("first.backward") and r["Op Name"].count("/") >= 2]
        self.assertTrue(inside)

    def test_the_wrapped_call_keeps_what_a_module_call_does(self):
        # nn.Module.__call__ as the probe installs it (C, module_call.cpp): called bound,
        # unbound and by keyword it gives the module's own results; the module's exception
        # reaches the caller as the very object raised, KeyboardInterrupt included, and closes
        # its ops (the next call is dumped in full); threads keep their own depth.
        rows, result = self.run_script("""
            import threading
            import torch
            import torch.nn as nn

            class Scaled(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.inner = nn.Linear(3, 3)

                def forward(self, x, scale=1.0, fail=None):
                    if fail is not None:
                        raise fail
                    return self.inner(x) * scale

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.first = Scaled()
                    self.second = nn.Linear(3, 2)

                def forward(self, x, fail=None):
                    return self.second(self.first(x, scale=2.0, fail=fail))

            torch.manual_seed(7)
            model = Model()
            x = torch.randn(4, 3)
            expected = model.second(model.first.inner(x) * 2.0)
            assert getattr(nn.Module.__call__, "_probe_wrapped", False)
            for call in (lambda: model(x), lambda: nn.Module.__call__(model, x), lambda: model.__call__(x)):
                assert torch.equal(call(), expected)
            for error in (ValueError("the model's own"), KeyboardInterrupt()):
                try:
                    model(x, fail=error)
                except BaseException as caught:
                    assert caught is error, repr(caught)
                    assert caught.__traceback__ is not None
                else:
                    raise AssertionError("no exception")
            results = {}

            def run(index):
                results[index] = [torch.equal(model(x), expected) for _ in range(20)]

            threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert all(all(r) and len(r) == 20 for r in results.values()) and len(results) == 3
            assert torch.equal(model(x), expected)
            print("calls ok")
            """, task="statistics", exec_range="all")
        self.assertIn("calls ok", result.stdout)
        ops = self.by_op(rows)
        # 3 calls, 2 raising (their "first" op ends without output, "second" never begins),
        # 60 on threads and one last: "second" ran 64 times, each with its input and output.
        second = ops["second"]
        self.assertEqual(len([r for r in second if r["Input/Output"] == "input"]), 64)
        self.assertEqual(len([r for r in second if r["Input/Output"] == "output"]), 64)
        first_outputs = [r for r in ops["first"] if r["Input/Output"] == "output"]
        self.assertEqual(len(first_outputs), 64)

    def test_threads_watching_every_op_each_get_every_row(self):
        # Every op watched (its RecordFunction context made and given back by its own thread)
        # on three threads at once, forward and backward: each call of each forward op has its
        # rows, the same numbers at every call (one model, one input), and the linear layer's
        # output is what it computes (not its bias, which addmm copies into its result before
        # its gemm writes there without the version counter telling).
        rows, result = self.run_script("""
            import threading
            import torch
            import torch.nn as nn

            torch.manual_seed(11)
            model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
            x = torch.randn(4, 6)
            with torch.no_grad():  # no module call: outside the model, not dumped
                torch.save(x @ model[0].weight.t() + model[0].bias, __file__ + ".linear.pt")
            errors = []

            def run():
                try:
                    for _ in range(10):
                        model(x).sum().backward()
                except BaseException as e:
                    errors.append(e)

            threads = [threading.Thread(target=run) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            run()
            assert not errors, errors
            print("threads ok")
            """, task="statistics", exec_range="all", save_child=True)
        self.assertIn("threads ok", result.stdout)
        calls = {}
        for row in rows:
            key = (row["Op Name"], row["Op Id"], row["Input/Output"], row["Index"])
            calls.setdefault(key, []).append(row)
        linear = [r for (name, _, io, _), rs in calls.items() for r in rs
                  if name == "0/linear" and io == "output"]
        self.assertEqual(len(linear), 40)
        self.assertStatsMatch(linear[0], torch.load(self.path("model.py.linear.pt")))
        forward = {key: rs for key, rs in calls.items() if ".backward" not in key[0]}
        self.assertGreater(len([key for key in forward if "/" in key[0]]), 10)
        self.assertTrue([key for key in calls if "/" in key[0] and ".backward" in key[0]])
        for key, rs in forward.items():
            self.assertEqual(len(rs), 40, key)
            values = {tuple(r[k] for k in ("Shape", "Max", "Min", "Mean", "Norm")) for r in rs}
            self.assertEqual(len(values), 1, key)

    def test_a_failure_of_the_probe_in_a_module_call_is_said_and_the_model_goes_on(self):
        # The probe's own Python fails on an argument it names (a dict key whose str() raises):
        # said once per kind, absorbed, and the module runs as without the probe.
        rows, result = self.run_script("""
            import torch
            import torch.nn as nn

            class Key:
                def __str__(self):
                    raise RuntimeError("a key with no name")

            class Sum(nn.Module):
                def forward(self, parts):
                    return sum(parts.values())

            model = nn.Sequential()
            model.add_module("sum", Sum())
            parts = {Key(): torch.ones(2), "b": torch.full((2,), 2.0)}
            for _ in range(5):
                assert torch.equal(model(parts), torch.full((2,), 3.0))
            print("model ok")
            """, expect_errors=True, task="statistics", exec_range="all")
        self.assertIn("model ok", result.stdout)
        self.assertIn("error in module call", result.stderr)
        self.assertIn("a key with no name", result.stderr)
        # The op still began and ended: its output is there, each time.
        outputs = [r for r in self.by_op(rows)["sum"] if r["Input/Output"] == "output"]
        self.assertEqual(len(outputs), 5)

    def test_statistics_of_a_strided_view_are_those_of_its_contiguous_copy(self):
        # A view that does not cover its memory densely (a slice, a select, an expand) has its
        # statistics computed on its elements in row-major order, as a contiguous copy holds
        # them: each aten::contiguous op's input row (the view) and output row (its copy) say
        # the same numbers, digit for digit. Elements of very different sizes make the sums
        # depend on their order.
        rows, _ = self.run_script("""
            import sys
            import torch
            import torch.nn as nn
            torch.manual_seed(5)
            x = torch.randn(6, 8, 10) * torch.pow(10.0, torch.randint(-4, 8, (6, 8, 10)).float())

            def views(x):
                return [x[:, ::2, 1:7], x.transpose(0, 2)[1:4], x[:, 3], x[0, :, :1].expand(8, 5),
                        x.flatten()[::7], x.double()[1:, 2:5, ::3], x.bfloat16()[::2, ::3],
                        (x > 0)[:, 1::2], torch.arange(480).view(6, 8, 10)[:, :, ::4],
                        x.view(2, 3, 2, 4, 10)[:, 1:, :, ::3, 2:9]]

            class Views(nn.Module):
                def forward(self, x):
                    return [v.contiguous() for v in views(x)]

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.views = Views()

                def forward(self, x):
                    return self.views(x)

            copies = Model()(x)
            assert all(c.is_contiguous() for c in copies)
            torch.save(copies, sys.argv[0] + ".copies.pt")
            """, task="statistics", exec_range="all", save_child=True)
        copies = torch.load(self.path("model.py.copies.pt"))
        ops = {}
        for row in rows:
            if row["Op Type"] == "aten::contiguous":
                ops.setdefault(row["Op Id"], {})[row["Input/Output"]] = row
        self.assertEqual(len(ops), len(copies))
        columns = ("Shape", "Dtype", "Max", "Min", "Mean", "Norm")
        for (op_id, op), copy in zip(sorted(ops.items(), key=lambda item: int(item[0].split("_")[-1])), copies):
            self.assertEqual([op["input"][k] for k in columns], [op["output"][k] for k in columns], op_id)
            self.assertStatsMatch(op["output"], copy.float() if copy.dtype == torch.bfloat16 else copy)

    def test_ops_after_views_inside_an_op_keep_their_ids(self):
        # Views inside an op's kernel (linear's t, addmm's expand, matmul's _reshape_alias) report
        # nothing, and once the layer's structure is captured (at its first call, where every op
        # is begun in full) the probe passes over them; but they are ops, and the ops after them
        # are numbered counting them. The second call's rows must have the ids of the first's.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Inner(nn.Module):
                def forward(self, x, w, bias, a, b):
                    return F.linear(x, w, bias), torch.matmul(a, b), torch.bmm(a, a.transpose(1, 2))
            """ + MODEL_AROUND_INNER + """
            torch.manual_seed(3)
            args = (torch.randn(2, 5), torch.randn(3, 5), torch.randn(3), torch.randn(3, 4, 5),
                    torch.randn(5, 6))
            model = Model()
            model(*args)
            model(*args)
            """, task="statistics", exec_range="all", save_child=True)
        by_round = {}
        for row in rows:
            by_round.setdefault(row["Execution Count"], []).append(
                (row["Op Id"], row["Op Type"], row["Input/Output"], row["Index"], row["Norm"]))
        self.assertEqual(len(by_round), 2)
        first, second = by_round.values()
        self.assertGreater(len([r for r in first if r[0].count("_") >= 2]), 4)
        self.assertEqual(first, second)
        # linear calls t (a view) then addmm; addmm calls expand (a view, which calls
        # as_strided) then copy_; matmul calls reshape (which calls _reshape_alias) then mm.
        ids = {(r[0], r[1]) for r in second}
        self.assertIn(("0_0_1", "aten::addmm"), ids)
        self.assertIn(("0_0_1_1", "aten::copy_"), ids)
        self.assertIn(("0_1_1", "aten::mm"), ids)
    def test_an_out_argument_is_known_whichever_overload_came_first(self):
        # abs and abs.out share the name "aten::abs": the arguments of the overload called
        # first were taken for the other's, so abs.out's "out" buffer (what the op is to
        # overwrite: here 1e30s, often uninitialised memory) was reported as an unnamed input
        # with the statistics of its old content.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Inner(nn.Module):
                def forward(self, x, buffer):
                    y = torch.abs(x)
                    torch.abs(x, out=buffer)
                    return y, buffer
            """ + MODEL_AROUND_INNER + """
            x = torch.tensor([-1.0, 2.0, -3.0])
            model = Model()
            for _ in range(2):
                model(x, torch.full((3,), 1e30))
            """, task="statistics", exec_range="all", save_child=True)
        calls = {}
        for row in rows:
            if row["Op Type"] == "aten::abs":
                calls.setdefault((row["Execution Count"], row["Op Id"]), []).append(
                    (row["Input/Output"], row["Index"], row["Max"]))
        # Each round: abs (which calls abs.out inside: 0_0_1) and abs.out.
        self.assertEqual(sorted(calls), [(r, i) for r in "01" for i in ("0_0", "0_0_1", "0_1")])
        for key, call in calls.items():
            self.assertEqual(call, [("input", "0_self", "2.000000"), ("output", "0", "3.000000")], key)

    def test_out_arguments_of_any_name_are_not_read(self):
        # An op's out= arguments are buffers it overwrites, often uninitialised memory: their
        # content before the op is never a statistic, whatever they are called (max.dim_max's
        # "max" and "max_values", not only "out"). Their content after is the op's output.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Inner(nn.Module):
                def forward(self, x, values, indices):
                    return torch.max(x, 0, out=(values, indices))
            """ + MODEL_AROUND_INNER + """
            x = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
            Model()(x, torch.full((2,), 1e30), torch.full((2,), 7, dtype=torch.int64))
            """, task="statistics", exec_range="all", save_child=True)
        calls = {}
        for row in rows:
            if row["Op Type"] == "aten::max":
                calls.setdefault(row["Op Id"], []).append((row["Input/Output"], row["Index"], row["Max"]))
        self.assertEqual(calls, {"0_0": [("input", "0_self", "4.000000"), ("output", "0_values", "4.000000"),
                                         ("output", "1_indices", "1.000000")]})

    def test_metadata_changes_inside_a_kernel_show_no_memory_not_yet_written(self):
        # min.dim unsqueezes its empty values and indices (unsqueeze_, which calls as_strided_)
        # before it fills them: their rows held whatever the memory held (pointers, -5e21), so
        # two identical runs "diverged" there. A metadata-only in-place op called by the model
        # itself keeps its rows.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Inner(nn.Module):
                def forward(self, x):
                    values, indices = x.min(dim=1)
                    return values.unsqueeze_(0), indices
            """ + MODEL_AROUND_INNER + """
            x = torch.arange(32.0).reshape(2, 16)
            for _ in range(2):
                junk = [torch.full((2,), -5e21) for _ in range(50)]
                del junk
                Model()(x)
            """, task="statistics", exec_range="all", save_child=True)
        self.assertTrue(rows)
        by_type = {}
        for row in rows:
            by_type.setdefault(row["Op Type"], []).append(row)
        # Inside min: no row of a metadata change; min's own rows are the data's.
        inside_min = [r for r in rows if "/min/" in r["Op Name"]]
        self.assertEqual(inside_min, [])
        self.assertEqual({(r["Input/Output"], r["Index"], r["Max"]) for r in by_type["aten::min"]},
                         {("input", "0_self", "31.000000"), ("output", "0_values", "16.000000"),
                          ("output", "1_indices", "0.000000")})
        # The model's own unsqueeze_: its input and output, both rounds.
        own = [(r["Execution Count"], r["Input/Output"], r["Max"]) for r in by_type["aten::unsqueeze_"]]
        self.assertEqual(sorted(own), [(c, io, "16.000000") for c in ("0", "1") for io in ("input", "output")])

    def test_views_of_memory_not_written_yet_show_nothing(self):
        # DDP's gradient bucket is a torch.empty that its reducer views with as_strided before
        # anything is written to it: the views' rows held whatever the memory held, so two
        # identical runs "diverged" there. A view of memory a factory left uninitialised shows no
        # statistics of it until something writes it; views of memory a kernel filled (add's
        # result, made with empty inside add) keep theirs, as do views of memory handed to numpy
        # (detach) and written there.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Inner(nn.Module):
                def forward(self, x):
                    bucket = torch.empty(64)
                    before = bucket.as_strided((8,), (1,))
                    bucket.copy_(x)
                    after = bucket.as_strided((8,), (1,))
                    partial = torch.empty(8)
                    partial.index_copy_(0, torch.tensor([0, 1]), x[:2])
                    summed = x + 1
                    # Written through numpy, behind the version counter: its view has rows.
                    written = torch.empty(8)
                    written.numpy()[:] = 5.0
                    shown = written.view(2, 4)
                    return (before.shape, after * 2, partial[:2], summed.as_strided((4,), (1,)),
                            shown)
            """ + MODEL_AROUND_INNER + """
            x = torch.arange(64.0)
            for round_ in range(2):
                junk = [torch.full((64,), -5e21 * (round_ + 1)) for _ in range(50)]
                del junk
                Model()(x)
            """, task="statistics", exec_range="all", save_child=True)
        self.assertTrue(rows)
        by_op = {}
        for row in rows:
            by_op.setdefault((row["Execution Count"], row["Op Name"]), []).append(
                (row["Input/Output"], row["Index"], row["Max"]))
        for round_ in "01":
            # The bucket's as_strided before copy_: no row. After it: its data. Then the one of
            # add's result.
            self.assertEqual(by_op[(round_, "inner/as_strided")],
                             [("input", "0_self", "63.000000"), ("output", "0", "7.000000"),
                              ("input", "0_self", "64.000000"), ("output", "0", "4.000000")])
            # index_copy_ into uninitialised memory reads what it holds, as the model then does.
            self.assertEqual([(io, index) for io, index, _ in by_op[(round_, "inner/index_copy_")]],
                             [("input", "0_self"), ("input", "1_index"), ("input", "2_source"),
                              ("output", "0")])
            self.assertEqual(by_op[(round_, "inner/view")], [("input", "0_self", "5.000000"),
                                                          ("output", "0", "5.000000")])
            # numpy()'s own detach (and the record inside it), to, resolve_conj and resolve_neg
            # look at the memory before the program writes it: no rows (their garbage made two
            # identical runs differ).
            numpys_own = [name for r, name in by_op if r == round_ and
                          name.split("/")[1:2] in (["detach"], ["to"], ["resolve_conj"], ["resolve_neg"])]
            self.assertEqual(numpys_own, [])

    def test_a_list_zeroed_in_place_has_no_input_rows(self):
        # _foreach_zero_ overwrites its tensors without reading them, as zero_ does: their old
        # content (here torch.empty's) is not an input.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Inner(nn.Module):
                def forward(self, x):
                    buffers = [torch.empty(4) for _ in range(2)]
                    torch._foreach_zero_(buffers)
                    return buffers[0] + x
            """ + MODEL_AROUND_INNER + """
            Model()(torch.ones(4))
            """, task="statistics", exec_range="all", save_child=True)
        self.assertTrue(rows)
        # It returns nothing: no row of its own; the zero_ of each tensor inside it, its output.
        self.assertEqual([r for r in rows if r["Op Type"] == "aten::_foreach_zero_"], [])
        zeroed = [(r["Input/Output"], r["Max"]) for r in rows if r["Op Name"] == "inner/_foreach_zero_/zero_"]
        self.assertEqual(zeroed, [("output", "0.000000")] * 2)

    def test_a_write_through_data_is_seen_by_the_next_reader(self):
        # `.data` has a version counter of its own: after w.data.mul_(0.5), w's next reader was
        # given w's statistics from before, kept under w's unchanged version.
        rows, _ = self.run_script("""
            import torch
            import torch.nn as nn

            class Inner(nn.Module):
                def forward(self, x):
                    w = x + 1
                    w.data.mul_(0.5)
                    return w * 3
            """ + MODEL_AROUND_INNER + """
            Model()(torch.arange(4.0))
            """, task="statistics", exec_range="all", save_child=True)
        mul = [(r["Input/Output"], r["Index"], r["Max"], r["Min"]) for r in rows if r["Op Type"] == "aten::mul"]
        self.assertEqual(mul, [("input", "0_self", "2.000000", "0.500000"), ("input", "1_other", "3.000000", "3.000000"),
                               ("output", "0", "6.000000", "1.500000")])


if __name__ == "__main__":
    import unittest
    unittest.main()
