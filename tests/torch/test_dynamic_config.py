"""The config file is replaced while the model runs: dump off -> on -> one layer -> (in the
middle of a forward) another layer. Dumping must follow each change from the next layer-level
op on, without a delay and without losing an op of the round it took effect in."""
# SPDX-License-Identifier: GPL-3.0-or-later
import os
import subprocess
import time

from probe_test_util import DEMO_DIR, PROBE, PYTHON, TEST_DIR, ProbeTestCase, read_rows, run_probe, write_config


class DynamicConfig(ProbeTestCase):
    def wait_for(self, name, process):
        path = self.path("sync", "ready_" + name)
        deadline = time.time() + 120
        while not os.path.exists(path):
            if process.poll() is not None:
                self.fail("the model ended early:\n" + process.stdout.read() + process.stderr.read())
            self.assertLess(time.time(), deadline, "no %s" % name)
            time.sleep(0.005)

    def go(self, name):
        open(self.path("sync", "go_" + name), "w").close()

    def test_changes_apply_from_the_next_op(self):
        os.makedirs(self.path("sync"))
        cfg = write_config(self.dir, dump_enable=False)
        process = subprocess.Popen(
            [PROBE, "run", "--output", self.path("out"), "--config", cfg, "--", PYTHON,
             os.path.join(TEST_DIR, "stepped_llama.py"), DEMO_DIR, self.path("sync"), "5"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for step in ("0", "1"):
                self.wait_for(step, process)
                self.go(step)
            self.wait_for("2", process)
            write_config(self.dir, dump_enable=True)            # on: every layer op
            self.go("2")
            self.wait_for("3", process)
            write_config(self.dir, dump_enable=True, ids="3")   # one layer: layers.2
            self.go("3")
            self.wait_for("4", process)
            self.go("4")
            self.wait_for("mid_4", process)                      # layers.2 has begun
            write_config(self.dir, dump_enable=True, ids="5")   # another layer: norm
            self.go("mid_4")
            self.wait_for("5", process)
            self.go("5")
            out, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        self.assertEqual(process.returncode, 0, err)
        ops = {}
        for row in read_rows(self.path("out", "atb_dump_data")):
            ops.setdefault(int(row["Execution Count"]), set()).add(row["Op Id"])
        self.assertNotIn(0, ops)
        self.assertNotIn(1, ops)
        self.assertEqual(ops[2], {"0", "1", "2", "3", "4", "5", "6"})
        self.assertEqual(ops[3], {"3"})
        self.assertEqual(ops[4], {"3", "5"})  # layers.2 keeps the config it began with; norm follows the new one
        self.assertEqual(ops[5], {"5"})
        self.assertIn("config applied", err)

    def test_ops_of_the_outermost_module_keep_their_ids_and_rounds_when_dumping_starts_late(self):
        # The probe sleeps through steps 0 and 1; the aten ops the outermost module calls
        # itself (mul, add) are layer-level ops: their ids and rounds must be those of a run
        # that dumped from the start, although nothing of them was dumped while sleeping.
        script = os.path.join(TEST_DIR, "root_ops_model.py")
        seen = {}
        for name, enable, wake in (("early", True, -1), ("late", False, 2)):
            os.makedirs(self.path(name))
            cfg = write_config(self.path(name), dump_enable=enable)
            result = run_probe(["--output", self.path(name, "out"), "--config", cfg, "--", PYTHON, script,
                                "--wake-at", str(wake)])
            self.assertIn("done", result.stdout)
            seen[name] = {(int(r["Execution Count"]), r["Op Name"], r["Op Id"], r["Input/Output"], r["Index"],
                           r["Max"], r["Norm"]) for r in read_rows(self.path(name, "out", "atb_dump_data"))}
        early_ops = {(count, op, op_id) for count, op, op_id, *_ in seen["early"]}
        self.assertIn((0, "mul_0", "1"), early_ops)
        self.assertIn((3, "add_0", "3"), early_ops)
        self.assertEqual(seen["late"], {row for row in seen["early"] if row[0] >= 2})

    def test_a_sequential_model_dumps_the_same_ops_when_dumping_starts_late(self):
        # An nn.Sequential's outermost module calls only its modules: once one of its calls was
        # watched whole, a sleeping probe watches no aten op in the next ones at all, and no
        # autograd node (its backward ops are counted from each pass's graph). Woken at step 2,
        # it must dump what a run that dumped from the start dumps of steps 2 and 3, backward
        # ops included in their rounds; also with two forward calls before each backward pass
        # (each layer then has two backward ops a pass). While it sleeps, the layer calls are
        # counted rather than begun (probe_counting_only): the same rounds by another path.
        script = os.path.join(TEST_DIR, "root_ops_model.py")
        for calls in (1, 2):
            seen = {}
            for name, enable, wake in (("early", True, -1), ("late", False, 2)):
                folder = self.path("%s%d" % (name, calls))
                os.makedirs(folder)
                cfg = write_config(folder, dump_enable=enable)
                result = run_probe(["--output", os.path.join(folder, "out"), "--config", cfg, "--", PYTHON, script,
                                    "--sequential", "--calls", str(calls), "--wake-at", str(wake)])
                self.assertIn("done", result.stdout)
                counted = int(result.stdout.split("counted ")[1].split()[0])
                # Whether a sleeping layer call is counted or begun depends on time (counted
                # within 5 ms of a boundary that asked about the config file): on a loaded
                # machine none may be (the C API test of probe_counting_only decides that path
                # with its own clock). The rows must be the same either way.
                if name == "early":
                    self.assertEqual(counted, 0)  # awake from the start: every call begun
                seen[name] = {(int(r["Execution Count"]), r["Op Name"], r["Op Id"], r["Input/Output"], r["Index"],
                               r["Max"], r["Norm"]) for r in read_rows(os.path.join(folder, "out", "atb_dump_data"))}
            early_ops = {(count, op) for count, op, *_ in seen["early"]}
            for step in range(4):
                self.assertIn((step, "1.backward"), early_ops)  # the first Linear's
                if calls == 2:
                    self.assertIn((step, "1.backward_1"), early_ops)
            # From step 2 on: a forward op's round counts its calls, a backward op's the passes.
            self.assertEqual(seen["late"], {row for row in seen["early"]
                                            if row[0] >= (2 if ".backward" in row[1] else 2 * calls)}, calls)

    def test_a_layer_call_that_raises_while_the_probe_sleeps_keeps_its_round(self):
        # At step 1, while the probe sleeps, a call of the model whose first layer (the
        # embedding, "0") raises: that layer's call is counted all the same, and from step 2 on
        # the run dumps what a run dumping from the start dumps (layer "0" one round further on
        # than the others), the ops inside the layers included.
        script = os.path.join(TEST_DIR, "root_ops_model.py")
        seen = {}
        for name, enable, wake in (("early", True, -1), ("late", False, 2)):
            folder = self.path(name)
            os.makedirs(folder)
            cfg = write_config(folder, dump_enable=enable, save_child=True)
            result = run_probe(["--output", os.path.join(folder, "out"), "--config", cfg, "--", PYTHON, script,
                                "--sequential", "--raise-at", "1", "--wake-at", str(wake)])
            self.assertIn("done", result.stdout)
            if name == "late":
                self.assertGreater(int(result.stdout.split("counted ")[1].split()[0]), 0, result.stdout)
            seen[name] = {(int(r["Execution Count"]), r["Op Name"], r["Op Id"], r["Input/Output"], r["Index"],
                           r["Max"]) for r in read_rows(os.path.join(folder, "out", "atb_dump_data"))}
        late_rounds = {}
        for count, op, *_ in seen["late"]:
            late_rounds[op] = min(count, late_rounds.get(op, count))
        self.assertEqual(late_rounds.get("0"), 3, late_rounds)  # two steps and the call that raised
        self.assertEqual(late_rounds.get("1"), 2, late_rounds)
        self.assertIn("1/linear", late_rounds)  # an op inside a layer

        def woken(row):  # dumped by the late run: from step 2 on
            count, op, op_id = row[:3]
            return count >= (3 if op_id.split("_")[0] == "0" and ".backward" not in op else 2)
        self.assertEqual(seen["late"], {row for row in seen["early"] if woken(row)})

    def test_a_config_the_program_writes_itself_applies_from_its_next_step_every_time(self):
        # The probe asks the kernel about the config at a round's start only while the program's
        # own Python code is writing it (seen by an audit hook): each of 60 steps, written a
        # different way microseconds before it runs, must dump exactly the layer chosen for it.
        # Without the hook about one step in six dumped the previous step's choice.
        steps = 60
        cfg = write_config(self.dir, dump_enable=False)
        result = run_probe(["--output", self.path("out"), "--config", cfg, "--", PYTHON,
                            os.path.join(TEST_DIR, "own_config_model.py"), str(steps)])
        self.assertIn("done", result.stdout)
        ops = {}
        for row in read_rows(self.path("out", "atb_dump_data")):
            ops.setdefault(int(row["Execution Count"]), set()).add(row["Op Id"])
        self.assertEqual(sorted(ops), list(range(steps)))
        wrong = {step: ids for step, ids in ops.items() if ids != {str(step % 3)}}
        self.assertEqual(wrong, {})
