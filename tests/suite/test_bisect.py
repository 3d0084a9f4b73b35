"""probe bisect on a model with one precision-sensitive op (bisect_model.py: a large offset cancelled
inside a projection): found among the model's ops under bfloat16 autocast, found as a layer when
the program runs in bfloat16 from an environment variable, and a resumed bisection runs nothing
it has already run."""
# SPDX-License-Identifier: GPL-3.0-or-later
import glob
import json
import os
import shutil
import unittest

from suite_util import PYTHON, ProbeTestCase, model, probe

MODEL = model("bisect_model.py")


class Bisect(ProbeTestCase):
    def bisect(self, *args):
        result = probe("bisect", "--json", *args, "--", PYTHON, MODEL, cwd=self.dir)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return json.loads(result.stdout), result.stderr

    def trials(self, log):
        with open(log) as f:
            return [json.loads(line) for line in f if '"type": "trial"' in line]

    def test_the_cancelling_projection_is_found_under_autocast_and_a_resume_reruns_nothing(self):
        log = self.path("bisect.jsonl")
        shutil.copy(MODEL, self.path("model.py"))
        result = probe("bisect", "--json", "--target", "autocast-bf16", "--log", log, "--", PYTHON, "model.py",
                       cwd=self.dir)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        result, progress = json.loads(result.stdout), result.stderr
        self.assertGreater(result["target_error"], 0.5)  # the projection's output is noise in bfloat16
        self.assertEqual([c["unit"] for c in result["culprit_layers"]], ["layers.2"])
        self.assertEqual([c["unit"] for c in result["culprit_ops"]], ["layers.2.proj:linear#0"])
        culprit = result["culprit_ops"][0]
        self.assertEqual((culprit["module"], culprit["function"], culprit["target_dtypes"]),
                         ("layers.2.proj", "linear", ["bfloat16"]))
        self.assertLess(culprit["error_alone"], result["threshold"])
        self.assertGreater(culprit["removed"], 0.9)
        # Every trial is logged with its plan and error; the layer search kept layers.2 alone at some point.
        trials = self.trials(log)
        self.assertEqual(len(trials), result["trials"])
        self.assertTrue(any(t["keep_modules"] == ["layers.2"] and t["passed"] for t in trials))
        self.assertTrue(any(t["keep_ops"] == ["layers.2.proj:linear#0"] and t["passed"] for t in trials))
        self.assertTrue(all(not t["passed"] for t in trials if t["keep_modules"] == [] and t["keep_ops"] == []))
        self.assertIn("trial", progress)
        runs = sorted(glob.glob(log + ".d/*.log"))
        resumed = probe("bisect", "--json", "--target", "autocast-bf16", "--resume", log, "--", PYTHON, "model.py",
                        cwd=self.dir)
        self.assertEqual(resumed.returncode, 0, resumed.stdout + resumed.stderr)
        resumed, progress = json.loads(resumed.stdout), resumed.stderr
        self.assertEqual(sorted(glob.glob(log + ".d/*.log")), runs)  # no program run again
        self.assertEqual(self.trials(log), trials)
        self.assertEqual(resumed["culprit_ops"], result["culprit_ops"])
        self.assertIn("(again)", progress)
        # As docs/suite.md shows it: the log alone, its program and target taken from it.
        alone = probe("bisect", "--json", "--resume", log, cwd=self.dir)
        self.assertEqual(alone.returncode, 0, alone.stdout + alone.stderr)
        self.assertEqual(json.loads(alone.stdout)["culprit_ops"], result["culprit_ops"])
        self.assertEqual(sorted(glob.glob(log + ".d/*.log")), runs)
        # Resumed from elsewhere with trials left to run: the program (named relative to where the
        # bisection started) runs there.
        cut = self.path("cut.jsonl")
        with open(log) as f, open(cut, "w") as out:
            out.writelines(f.readlines()[:-3])
        elsewhere = probe("bisect", "--json", "--resume", cut, cwd="/")
        self.assertEqual(elsewhere.returncode, 0, elsewhere.stdout + elsewhere.stderr)
        self.assertEqual(json.loads(elsewhere.stdout)["culprit_ops"], result["culprit_ops"])
        self.assertIn("runs in %s, where it was started" % self.dir, elsewhere.stderr)
        self.assertEqual(probe("bisect", "--resume", self.path("no-such.jsonl")).returncode, 66)
        os.mkfifo(self.path("fifo.jsonl"))  # refused, not waited on
        self.assertEqual(probe("bisect", "--resume", self.path("fifo.jsonl"), timeout=60).returncode, 66)
        with open(self.path("list.jsonl"), "w") as f:
            f.write("[1, 2]\n")
        self.assertEqual(probe("bisect", "--resume", self.path("list.jsonl")).returncode, 66)
        other = probe("bisect", "--target-env", "BISECT_DTYPE=bfloat16", "--resume", log, "--", PYTHON, "model.py",
                      cwd=self.dir)
        self.assertEqual(other.returncode, 66, other.stderr)  # a log of another bisection

    def test_a_program_taking_its_dtype_from_the_environment_has_the_cancelling_layer_as_culprit(self):
        result, _ = self.bisect("--target-env", "BISECT_DTYPE=bfloat16", "--reference-env", "BISECT_DTYPE=float32",
                                "--log", self.path("env.jsonl"))
        self.assertEqual([c["unit"] for c in result["culprit_layers"]], ["layers.2"])
        # In bfloat16 throughout, the offset is lost already when the add hands it on in bfloat16:
        # no op of the layer kept alone (its output cast back) is enough, the layer as a whole is.
        self.assertEqual([(c["kind"], c["unit"]) for c in result["culprit_ops"]], [("module", "layers.2")])
        self.assertGreater(result["culprit_ops"][0]["removed"], 0.9)

    def test_a_program_that_does_not_compute_the_same_thing_twice_is_said_to(self):
        # Its input is seeded from the clock: trials would be judged by that noise (a culprit
        # "removing 100% of the divergence" was named).
        result = probe("bisect", "--json", "--target", "autocast-bf16", "--log", self.path("unseeded.jsonl"), "--",
                       "env", "BISECT_UNSEEDED=1", PYTHON, MODEL, cwd=self.dir)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("the program does not compute the same thing twice: two reference runs differ by",
                      result.stderr)
        report = json.loads(result.stdout)
        self.assertGreater(report["reference_repeat_error"], 0.01 * report["target_error"])
        self.assertEqual(report["culprit_layers"], [])
        # The seeded program's two reference runs are the same.
        seeded, _ = self.bisect("--target", "autocast-bf16", "--log", self.path("seeded.jsonl"))
        self.assertEqual(seeded["reference_repeat_error"], 0.0)

    def test_culprits_that_remove_little_alone_are_said_to(self):
        # The demo under bf16 autocast (a GUI walk): seven culprits, most "removing 0.0%", one
        # kept alone worse than none; nothing said the divergence was spread over them.
        from probe_studio import bisect
        target, floor = 3.534e-03, 1.663e-03
        errors = {"layers.0": 3.589e-03, "layers.3": 3.411e-03, "lm_head:linear#0": 2.768e-03}
        culprits = [{"unit": unit, "kind": "module" if ":" not in unit else "op", "module": unit.split(":")[0],
                     "function": "linear" if ":" in unit else "DecoderLayer", "target_dtypes": ["bfloat16"],
                     "error_alone": e, "removed": bisect._removed(target, e, floor)} for unit, e in errors.items()]
        self.assertAlmostEqual(culprits[0]["removed"], (target - 3.589e-03) / (target - floor))  # as documented
        layers = [{"unit": "layers.0", "kind": "module", "error_alone": 3.589e-03, "removed": culprits[0]["removed"]}]
        text = bisect.format_result({"target_error": target, "threshold": 1.85e-03, "culprit_layers": layers,
                                     "culprit_ops": culprits, "culprits_kept_error": 1.846e-03, "log": "x.jsonl"})
        self.assertIn("  layer layers.0: kept alone, error 3.589e-03 (makes it 2.9% worse alone)\n", text)
        self.assertIn("layers.0  [module layers.0 (DecoderLayer), bfloat16 in the target run]: error 3.589e-03, "
                      "makes it 2.9% worse alone; the others do not pass without it", text)
        self.assertIn("lm_head:linear#0  [linear in lm_head, bfloat16 in the target run]: error 2.768e-03, "
                      "removes 40.9%", text)
        self.assertIn("no one of them accounts for most of it (at most 41% alone): the divergence is spread over "
                      "them", text)
        # One culprit that removes most of it: nothing of the kind said.
        culprits[2]["removed"] = 0.95
        text = bisect.format_result({"target_error": target, "culprit_ops": culprits, "log": "x.jsonl"})
        self.assertNotIn("spread", text)

    def test_a_culprit_the_others_pass_without_is_left_out(self):
        # The error is not monotone in what is kept: here C passes alone, D kept spoils it, and A
        # kept beside D mends that. By halves, A was chosen while D was kept, then D was cut away:
        # A stayed, listed as a culprit that makes the error worse alone and nothing needs.
        from probe_studio import bisect
        trials = []

        def passes(kept):
            trials.append(sorted(kept))
            return ("C" in kept and "D" not in kept) or {"A", "C", "D"} <= set(kept)
        units = ["A", "B", "C", "D"]
        self.assertEqual(bisect.smallest_by_halves(units, [], passes), ["A", "C"])
        self.assertEqual(bisect.without_unneeded(["A", "C"], [], passes), ["C"])
        # Each left out in turn, the base kept: A is dropped, C is needed.
        trials.clear()
        self.assertEqual(bisect.without_unneeded(["A", "C"], ["X"], passes), ["C"])
        self.assertEqual(trials, [["C", "X"]])
        # Pruned until nothing more goes: with A, B, C passing as {A,B,C}, {A,C} and {C}, one pass
        # left A (B's going made A unneeded), which was then said to be needed by the others.
        def nested(kept):
            return set(kept) in ({"A", "B", "C"}, {"A", "C"}, {"C"})
        self.assertEqual(bisect.without_unneeded(["A", "B", "C"], [], nested), ["C"])
        # Where every unit found is needed, nothing is dropped.
        self.assertEqual(bisect.without_unneeded(["B", "D"], [], lambda kept: {"B", "D"} <= set(kept)), ["B", "D"])

    def test_usage_errors(self):
        self.assertEqual(probe("bisect", "--", PYTHON, MODEL).returncode, 64)  # no target
        self.assertEqual(probe("bisect", "--target", "autocast-bf16").returncode, 64)  # no program


if __name__ == "__main__":
    unittest.main()
