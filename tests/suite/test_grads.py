"""The gradient monitor in a real training loop and probe grads on what it wrote: a blow-up of one
parameter at one step and a NaN are reported with that step and parameter; the training's results
are bit-identical with and without the monitor; arm() counts steps at the optimizer's step."""
# SPDX-License-Identifier: GPL-3.0-or-later
import csv
import glob
import json
import os
import subprocess
import unittest

import torch

from suite_util import PYTHON, ProbeTestCase, model, probe, run_probe, write_config

STEPS = 8
PARAMETERS = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


class GradMonitor(ProbeTestCase):
    def train(self, *args, env=None):
        out = self.path("result_%d.pt" % len(os.listdir(self.dir)))
        full_env = dict(os.environ)
        full_env.update(env or {})
        subprocess.run([PYTHON, model("grad_model.py"), out] + list(args), check=True, env=full_env,
                       capture_output=True, text=True)
        return torch.load(out)

    def rows(self, directory):
        (path,) = glob.glob(os.path.join(directory, "rank0", "grad_reduced_*.csv"))
        self.assertEqual(os.path.basename(path), "grad_reduced_0-999.csv")
        with open(path, newline="") as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "vpp_stage,name,step,norm,max,min,mean,nans")
        return list(csv.DictReader(lines))

    def test_a_blowup_and_a_nan_are_reported_with_their_step_and_parameter(self):
        grads = self.path("grads")
        self.train("--monitor", grads, "--blowup", "5", "--nan", "7")
        rows = self.rows(grads)
        self.assertEqual([(int(r["step"]), r["name"]) for r in rows],
                         [(s, n) for s in range(STEPS) for n in PARAMETERS])
        # The norm as written is the gradient's: at the blow-up step fc2.weight's gradient is
        # 1e4 plus the loss's own, in each of its 64 elements.
        blown = next(r for r in rows if r["step"] == "5" and r["name"] == "fc2.weight")
        self.assertAlmostEqual(float(blown["norm"]) / (1e4 * 8), 1.0, delta=1e-3)
        result = probe("grads", grads, "--json")
        self.assertEqual(result.returncode, 1, result.stderr)
        findings = json.loads(result.stdout)["findings"]
        self.assertEqual([(f["kind"], f["step"], f["parameter"]) for f in findings],
                         [("spike", 5, "fc2.weight"), ("nan", 7, "fc1.bias")])
        self.assertEqual(findings[1]["nans"], 16)
        text = probe("grads", grads)
        self.assertIn("step 5  rank0  fc2.weight: spike, norm 8e+04 is", text.stdout)
        self.assertIn("step 7  rank0  fc1.bias: nan, 16 NaN element(s)", text.stdout)

    def test_a_clean_run_has_no_findings_and_is_bit_identical_with_the_monitor(self):
        plain = self.train()
        grads = self.path("grads")
        watched = self.train("--monitor", grads)
        self.assertEqual(len(plain["losses"]), STEPS)
        self.assertEqual(len(watched["losses"]), STEPS)
        for a, b in zip(plain["losses"], watched["losses"]):
            self.assertTrue(torch.equal(a, b))
        for name in PARAMETERS:
            self.assertTrue(torch.equal(plain["parameters"][name], watched["parameters"][name]), name)
        result = probe("grads", grads)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("4 parameter(s), 32 sample(s)", result.stdout)
        self.assertEqual(probe("grads", self.path("nothing")).returncode, 66)
        # Files that hold no sample: nothing judged is not "no NaN" (an empty file was exit 0).
        for name, text in (("empty", ""), ("header_only", "vpp_stage,name,step,norm,max,min,mean,nans\n")):
            os.makedirs(self.path(name, "rank0"))
            with open(self.path(name, "rank0", "grad_reduced_0-999.csv"), "w") as f:
                f.write(text)
            result = probe("grads", self.path(name))
            self.assertIn("no gradient sample could be read: nothing was judged", result.stdout)
            self.assertNotIn("no NaN", result.stdout)
            if name == "empty":
                self.assertEqual(result.returncode, 1, result.stdout)
                self.assertIn("grad_reduced_0-999.csv: empty: no header line", result.stdout)
            else:
                self.assertEqual(result.returncode, 66, result.stdout)

    def test_arm_monitors_through_the_optimizer_made_before_or_after_it(self):
        for when in ("before", "after"):
            grads = self.path("armed_" + when)
            self.train("--arm", when, env={"PROBE_GRAD_MONITOR": grads})
            rows = self.rows(grads)
            self.assertEqual([(int(r["step"]), r["name"]) for r in rows],
                             [(s, n) for s in range(STEPS) for n in PARAMETERS], when)
        # Without the variable, arm() does nothing.
        self.train("--arm", "before")
        self.assertFalse(glob.glob(self.path("armed_none*")))

    def test_probe_run_monitors_an_unchanged_program_from_the_config_key_or_grads(self):
        """No --monitor, no arm() in the program: probe run's torch hooks arm the monitor on the
        model when it is first called. The blow-up of fc2.weight at step 5 is found; the
        training's results are bit-identical with and without the probe."""
        plain = self.train("--blowup", "5")
        runs = {}
        for how in ("config", "option"):
            out = self.path("run_" + how)
            os.makedirs(out)
            result_file = self.path("result_%s.pt" % how)
            extra = ["--grads", self.path("grads_option")] if how == "option" else []
            config = write_config(out, grad_monitor=(how == "config"))
            result = run_probe(["--output", out, "--config", config, "--quiet"] + extra +
                               ["--", PYTHON, model("grad_model.py"), result_file, "--blowup", "5"])
            self.assertEqual(result.stderr, "", how)  # the program's output is its own
            runs[how] = torch.load(result_file)
            grads = os.path.join(out, "atb_dump_data", "grad_monitor") if how == "config" \
                else self.path("grads_option")
            rows = self.rows(grads)
            self.assertEqual([(int(r["step"]), r["name"]) for r in rows],
                             [(s, n) for s in range(STEPS) for n in PARAMETERS], how)
            result = probe("grads", grads, "--json")
            self.assertEqual(result.returncode, 1, result.stderr)
            findings = json.loads(result.stdout)["findings"]
            self.assertEqual([(f["kind"], f["step"], f["parameter"]) for f in findings],
                             [("spike", 5, "fc2.weight")], how)
            if how == "option":  # the config key is off: nothing in the dump
                self.assertFalse(os.path.exists(os.path.join(out, "atb_dump_data", "grad_monitor")))
        self.assertEqual(len(plain["losses"]), STEPS)
        for how, watched in runs.items():
            self.assertEqual(len(watched["losses"]), STEPS, how)
            for a, b in zip(plain["losses"], watched["losses"]):
                self.assertTrue(torch.equal(a, b), how)
            for name in PARAMETERS:
                self.assertTrue(torch.equal(plain["parameters"][name], watched["parameters"][name]), how)


if __name__ == "__main__":
    unittest.main()
