"""The ranks of a data-parallel job as torch.distributed.run starts it (two ranks, gloo on CPU,
ddp_torchrun.py: a small MLP, two SGD steps, every rank its own batch), dumped under `probe run`
(op-level layout: data/<rank>_<pid>) and by PrecisionDebugger (msprobe layout: step<S>/rank<R>).
Each layout is dumped twice: as it is, and with rank 1 planting two differences, a weight changed
after DDP's initial broadcast (fc2.weight[1, 3], from step 0 on) and a reduced gradient changed
before the optimizer step (fc1.bias.grad[2], so that fc1.bias differs from step 1 on).
`probe summary` must list both ranks; `probe compare` rank against rank must find both
differences where they are born and, on the unchanged job, report the replicas' weights and
reduced gradients as matching. The files are checked here too, read with torch."""
# SPDX-License-Identifier: GPL-3.0-or-later
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import unittest

import torch

from probe_test_util import PREFIX, PROBE, PYTHON, TEST_DIR, read_bin, read_rows, write_config

JOB = os.path.join(TEST_DIR, "ddp_torchrun.py")
SKEW = ["--skew-weight-rank", "1", "--skew-grad-rank", "1"]
LR = 0.1  # ddp_torchrun.py's SGD


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher(log_dir):
    """python3 -m torch.distributed.run for two ranks on this machine. Debian's torch 1.13 under
    Python 3.11 cannot read the launcher's default --redirects/--tee 0 (its Std flag enum lost the
    member 0), so the workers' stderr is teed (2): their output still reaches ours."""
    return [PYTHON, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr", "127.0.0.1",
            "--master_port", str(free_port()), "--redirects", "2", "--tee", "2", "--log_dir", log_dir]


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)
    if result.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s\n%s" % (" ".join(args), result.returncode, result.stdout,
                                                            result.stderr))
    return result


def probe(*args):
    return subprocess.run([PROBE] + list(args), capture_output=True, text=True, timeout=600)


def compare_json(*args):
    result = probe("compare", *(list(args) + ["--json"]))
    return result.returncode, json.loads(result.stdout) if result.stdout.startswith("{") else result.stdout


def count_tensors(value, which=lambda item: True):
    """The tensor items in a dump.json value (those `which` accepts)."""
    if isinstance(value, dict):
        if value.get("type") == "torch.Tensor":
            return 1 if which(value) else 0
        return sum(count_tensors(v, which) for v in value.values())
    if isinstance(value, list):
        return sum(count_tensors(v, which) for v in value)
    return 0


def born_here(report, name, round_):
    return [op for op in report["ops"] if op["name"] == name and op["round"] == round_ and op["verdict"] == "born here"]


class RankJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="probe-ranks-")

    @classmethod
    def tearDownClass(cls):
        if not os.environ.get("PROBE_KEEP_TEST_DIRS"):
            shutil.rmtree(cls.dir, ignore_errors=True)


class OpLevelRanks(RankJobs):
    """Under `probe run`: the launcher is not probed, each rank dumps into data/<rank>_<pid>."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.roots = {}
        # "statistics": the unchanged job with statistics alone, where a statistic known of some
        # memory may be reused (a reduced gradient was given its bucket's from before gloo's
        # allreduce wrote it).
        for name, extra, task in (("clean", [], "all"), ("skewed", SKEW, "all"), ("statistics", [], "statistics")):
            out = os.path.join(cls.dir, name)
            config = write_config(cls.dir, task=task, save_child=True, filter_level=1)
            run([PROBE, "run", "--quiet", "--output", out, "--config", config, "--"] +
                launcher(os.path.join(cls.dir, name + "-logs")) + [JOB] + extra)
            cls.roots[name] = os.path.join(out, "atb_dump_data")

    def status(self, name):
        with open(os.path.join(self.roots[name], "probe_status.json")) as f:
            return json.load(f)

    def rank_folders(self, name):
        """rank -> its folder name, from the status file's entries (pid and device)."""
        return {p["device"]: "%d_%d" % (p["device"], p["pid"]) for p in self.status(name)["processes"]}

    def test_one_folder_per_rank(self):
        for name in self.roots:
            status = self.status(name)
            self.assertEqual(status["state"], "complete")
            self.assertEqual(sorted(p["device"] for p in status["processes"]), [0, 1], "the launcher is no entry")
            folders = self.rank_folders(name)
            self.assertEqual(sorted(os.listdir(os.path.join(self.roots[name], "data"))), sorted(folders.values()))
            rows = read_rows(self.roots[name])
            self.assertGreater(len(rows), 0)
            for row in rows:
                self.assertEqual(row["Device and PID"], row["_csv"].split(os.sep)[-3])
            for rank, folder in folders.items():
                self.assertEqual(sorted(os.listdir(os.path.join(self.roots[name], "data", folder))), ["0", "1"])
                self.assertTrue(os.path.isdir(os.path.join(self.roots[name], "info", "model", folder)))
            with open(os.path.join(self.roots[name], "probe_injection.jsonl")) as f:
                self.assertEqual([json.loads(line)["status"] for line in f], ["attached", "attached"])

    def test_summary_lists_the_ranks(self):
        folders = self.rank_folders("clean")
        rows = read_rows(self.roots["clean"])
        summary = probe("summary", os.path.join(self.dir, "clean"))
        self.assertEqual(summary.returncode, 0, summary.stderr)
        total = re.search(r"ranks: 2   ops: (\d+) ", summary.stdout)
        self.assertIsNotNone(total, summary.stdout)
        ops = 0
        for rank, folder in folders.items():
            mine = len([r for r in rows if r["Device and PID"] == folder])
            line = re.search(r"\n    rank %d \(%s\): %d rows, (\d+) ops, rounds 0\.\.1 \(2\), complete\n"
                             % (rank, folder, mine), summary.stdout)
            self.assertIsNotNone(line, summary.stdout)
            ops += int(line.group(1))
        self.assertEqual(ops, int(total.group(1)))  # every op is one rank's

    def reduced_gradients(self, name, folder):
        """(round, op id) -> the gradient DDP's reducer copied into .grad, read from the .bin."""
        rows = [r for r in read_rows(self.roots[name]) if r["Device and PID"] == folder]
        # A header-only .bin names the first copy of the same data: "<op id>_<file name>" of its round.
        files = {(r["Execution Count"], r["Op Id"] + "_" + os.path.basename(r["Tensor Path"])): r["Tensor Path"]
                 for r in rows}
        out = {}
        for row in rows:
            if "ddp.reducer::copy_bucket_to_grad/" in row["Op Name"] and row["Input/Output"] == "output":
                header, tensor = read_bin(row["Tensor Path"])
                if tensor is None:
                    _, tensor = read_bin(files[(row["Execution Count"], header["data"])])
                out[(row["Execution Count"], row["Op Id"])] = tensor
        return out

    def test_unchanged_replicas_agree_on_weights_and_reduced_gradients(self):
        folders = self.rank_folders("clean")
        gradients = [self.reduced_gradients("clean", folders[r]) for r in (0, 1)]
        self.assertEqual(len(gradients[0]), 8)  # four parameters, two steps
        self.assertEqual(gradients[0].keys(), gradients[1].keys())
        for key, tensor in gradients[0].items():
            self.assertTrue(torch.equal(tensor, gradients[1][key]), key)
        for args in ((self.roots["clean"], "--rank", "0", "--rank", "1"),
                     (os.path.join(self.roots["clean"], "data", folders[0]),
                      os.path.join(self.roots["clean"], "data", folders[1]))):
            code, report = compare_json(*args)
            self.assertEqual(code, 0, report)
            self.assertTrue(report["replicas"])
            self.assertEqual(report["summary"]["divergingTensors"], 0)
            # fc1 and fc2's weight and bias as inputs of linear and of copy_bucket_to_grad, two steps
            self.assertEqual(report["summary"]["replicaParameters"], {"compared": 16, "diverging": 0})
            # the reduced gradient copied (the copy's source and its output), four parameters, two steps
            self.assertEqual(report["summary"]["reducedGradients"], {"compared": 16, "diverging": 0})
        text = probe("compare", self.roots["clean"], "--rank", "0", "--rank", "1").stdout
        self.assertIn("replicas: all 16 parameter tensors agree, all 16 reduced gradients agree\n", text)
        self.assertIn("no tensor diverges", text)

    def test_two_runs_of_the_same_job_agree(self):
        """After the first step DDP rebuilds its gradient bucket (torch.empty) and views it with
        as_strided before anything is written to it: those views' rows held whatever the memory
        held, and two runs of the same job diverged there (rank 1, min 0 vs -2.3e30). With
        statistics alone, the bucket viewed after gloo's allreduce had been given its statistics
        from before it (kept from allreduce's input; gloo writes from its own thread)."""
        code, report = compare_json(self.roots["clean"], self.roots["statistics"])
        self.assertEqual(code, 0, report.get("firstDivergingTensor") if isinstance(report, dict) else report)
        self.assertGreater(report["summary"]["tensors"], 0)
        self.assertEqual(report["summary"]["divergingTensors"], 0)

    def test_two_runs_of_a_pipeline_receiving_into_empty_buffers_agree(self):
        """A pipeline stage receives into torch.empty (c10d::recv_), and gathers into such
        buffers: recv_'s input row held whatever the buffer held (min 0 vs -6.86e+28)."""
        roots = []
        for name in ("pipeline_a", "pipeline_b"):
            out = os.path.join(self.dir, name)
            config = write_config(self.dir, task="statistics", save_child=True, filter_level=1)
            run([PROBE, "run", "--quiet", "--output", out, "--config", config, "--"] +
                launcher(os.path.join(self.dir, name + "-logs")) + [os.path.join(TEST_DIR, "pipeline_recv.py")])
            roots.append(out)
        code, report = compare_json(*roots)
        self.assertEqual(code, 0, report.get("firstDivergingTensor") if isinstance(report, dict) else report)
        self.assertGreater(report["summary"]["tensors"], 0)

    def test_reduced_gradients_statistics_are_of_the_reduced_data(self):
        """DDP's copy out of its bucket is given the statistics of what it copies, after the
        allreduce: its input's equal its output's, and the replicas' agree."""
        copies = {}
        for row in read_rows(self.roots["statistics"]):
            if row["Op Name"].endswith("ddp.reducer::copy_bucket_to_grad/copy_") and row["Index"] in ("1_src", "0"):
                key = (row["Device and PID"], row["Execution Count"], row["Op Id"])
                copies.setdefault(key, {})[row["Input/Output"]] = [row[s] for s in ("Max", "Min", "Mean", "Norm")]
        self.assertEqual(len(copies), 16)  # four parameters, two steps, two ranks
        for key, sides in copies.items():
            self.assertEqual(sides["input"], sides["output"], key)
        code, report = compare_json(self.roots["statistics"], "--rank", "0", "--rank", "1")
        self.assertEqual(code, 0, report)
        self.assertEqual(report["summary"]["reducedGradients"], {"compared": 16, "diverging": 0})

    def test_planted_differences_are_born_where_they_are_used(self):
        folders = self.rank_folders("skewed")
        code, report = compare_json(self.roots["skewed"], "--rank", "0", "--rank", "1")
        self.assertEqual(code, 1, report)
        first = report["firstBornHere"]
        self.assertEqual((first["name"], first["round"]), ("module/fc2/linear", 0))
        self.assertEqual((first["process"], first["candidateProcess"]), (folders[0], folders[1]))
        self.assertEqual(first["tensor"]["index"], "1_weight")
        self.assertEqual(first["tensor"]["data"]["worstElement"], "[1, 3]")
        self.assertAlmostEqual(first["tensor"]["data"]["maxAbsErr"], 0.25, places=6)
        # The gradient changed after it was reduced: the reduced gradients agree, and fc1's bias
        # differs where the next step uses it.
        self.assertEqual(report["summary"]["reducedGradients"]["diverging"], 0)
        self.assertEqual(born_here(report, "module/fc1/linear", 0), [])
        (bias,) = born_here(report, "module/fc1/linear", 1)
        self.assertIn("2_bias", bias["cause"])
        # What the files hold, read here: the weights of rank 0 and rank 1.
        rows = [r for r in read_rows(self.roots["skewed"]) if r["Op Name"] == "module/fc1/linear"
                and r["Index"] == "2_bias" and r["Execution Count"] == "1"]
        biases = {r["Device and PID"]: read_bin(r["Tensor Path"])[1] for r in rows}
        diff = (biases[folders[1]] - biases[folders[0]]).abs()
        self.assertEqual(int(diff.argmax()), 2)
        self.assertAlmostEqual(diff.max().item(), LR * 0.5, places=6)


class SpawnedRanks(RankJobs):
    """Ranks started by torch.multiprocessing.spawn (ddp_train.py): no RANK in their environment,
    their rank is known once init_process_group returns. Layer-level statistics only."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        config = write_config(cls.dir, task="statistics")
        cls.out = os.path.join(cls.dir, "out")
        run([PROBE, "run", "--quiet", "--output", cls.out, "--config", config, "--", PYTHON,
             os.path.join(TEST_DIR, "ddp_train.py"), os.path.join(cls.dir, "msprobe"), "2", "--task", "statistics"])
        cls.root = os.path.join(cls.out, "atb_dump_data")

    def test_each_rank_its_folder_and_the_parent_none(self):
        with open(os.path.join(self.root, "probe_status.json")) as f:
            processes = json.load(f)["processes"]
        self.assertEqual(sorted(p["device"] for p in processes), [-1, 0, 1])
        folders = {"%d_%d" % (p["device"], p["pid"]) for p in processes if p["device"] >= 0}
        self.assertEqual(set(os.listdir(os.path.join(self.root, "data"))), folders)
        (parent,) = [p["pid"] for p in processes if p["device"] < 0]
        summary = probe("summary", self.out).stdout
        self.assertIn("  processes: 3 ", summary)
        self.assertIn("    process (%d): nothing dumped, complete\n" % parent, summary)
        for folder in folders:
            self.assertRegex(summary, r"\n    rank %s \(%s\): \d+ rows, \d+ ops, rounds 0\.\.0 \(1\), complete\n"
                             % (folder[0], folder))
        # PrecisionDebugger (task statistics) beside it: every tensor of every rank has statistics.
        for rank in (0, 1):
            folder = os.path.join(self.dir, "msprobe", "step0", "rank%d" % rank)
            self.assertFalse(os.path.exists(os.path.join(folder, "dump_error_info.log")), folder)
            with open(os.path.join(folder, "dump.json")) as f:
                data = json.load(f)["data"]
            self.assertGreater(count_tensors(data), 0)
            self.assertEqual(count_tensors(data, lambda t: t["Max"] is None), 0, folder)
        # Layer-level ops only: nothing the replicas must agree on was dumped, and the report says
        # so: no verdict (65), never "no tensor diverges".
        csv_path = os.path.join(self.dir, "replicas.csv")
        result = probe("compare", self.out, "--rank", "0", "--rank", "1", "--csv", csv_path)
        self.assertEqual(result.returncode, 65, result.stdout + result.stderr)
        # The tensors compared are in the file all the same (it was skipped, unsaid).
        with open(csv_path) as f:
            self.assertGreater(len(f.read().splitlines()), 1)
        self.assertIn("replicas: no tensor they must agree on was compared (op-level dumps: dump the layers' "
                      "children, save_child", result.stdout)
        self.assertIn("no verdict: nothing the replicas must agree on was compared", result.stdout)
        self.assertNotIn("no tensor diverges", result.stdout)


class MsprobeRanks(RankJobs):
    """PrecisionDebugger in every rank: step<S>/rank<R>."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        env = dict(os.environ, PYTHONPATH=os.path.join(PREFIX, "lib", "python3", "dist-packages"))
        cls.dumps = {}
        for name, extra in (("clean", []), ("skewed", SKEW)):
            cls.dumps[name] = os.path.join(cls.dir, name)
            run(launcher(os.path.join(cls.dir, name + "-logs")) + [JOB, "--debugger", cls.dumps[name]] + extra,
                env=env)

    def folder(self, name, step, rank):
        return os.path.join(self.dumps[name], "step%d" % step, "rank%d" % rank)

    def parameter(self, name, step, rank, entry, which):
        path = os.path.join(self.folder(name, step, rank), "dump_tensor_data",
                            "%s.parameters.%s.pt" % (entry, which))
        return torch.load(path)

    def test_one_folder_per_rank_and_step(self):
        for name in self.dumps:
            self.assertEqual(sorted(os.listdir(self.dumps[name])), ["step0", "step1"])
            for step in (0, 1):
                self.assertEqual(sorted(os.listdir(os.path.join(self.dumps[name], "step%d" % step))),
                                 ["rank0", "rank1"])
                for rank in (0, 1):
                    self.assertTrue(os.path.isfile(os.path.join(self.folder(name, step, rank), "dump.json")))

    def test_every_tensor_has_its_statistics(self):
        # DDP's reducer scales the gradients in place, out of the API wrappers' sight: statistics
        # taken later than the hook would see other numbers (they were left null).
        for name in self.dumps:
            for step in (0, 1):
                for rank in (0, 1):
                    folder = self.folder(name, step, rank)
                    self.assertFalse(os.path.exists(os.path.join(folder, "dump_error_info.log")), folder)
                    with open(os.path.join(folder, "dump.json")) as f:
                        data = json.load(f)["data"]
                    self.assertGreater(count_tensors(data), 0)
                    self.assertEqual(count_tensors(data, lambda t: t["Max"] is None), 0, folder)
        # The weights' gradients flowing out of linear's backward: the local gradients, before
        # DDP averaged them, as the .pt files saved at the hook hold them.
        for rank in (0, 1):
            folder = self.folder("clean", 0, rank)
            with open(os.path.join(folder, "dump.json")) as f:
                item = json.load(f)["data"]["Functional.linear.1.backward"]["output"][2]
            grad = torch.load(os.path.join(folder, "dump_tensor_data", item["data_name"]))
            self.assertAlmostEqual(item["Max"], grad.max().item(), places=6)
            self.assertAlmostEqual(item["Norm"], grad.norm().item(), places=5)

    def test_summary_lists_the_ranks(self):
        summary = probe("summary", self.dumps["clean"])
        self.assertEqual(summary.returncode, 0, summary.stderr)
        self.assertIn("ranks: 2 ", summary.stdout)
        for rank in (0, 1):
            entries, tensors = set(), 0
            for step in (0, 1):
                with open(os.path.join(self.folder("clean", step, rank), "dump.json")) as f:
                    data = json.load(f)["data"]
                entries.update(data)
                tensors += count_tensors(data)
            line = re.search(r"\n    rank %d: (\d+) rows, (\d+) ops, steps 0\.\.1 \(2\)\n" % rank, summary.stdout)
            self.assertIsNotNone(line, summary.stdout)
            self.assertEqual((int(line.group(1)), int(line.group(2))), (tensors, len(entries)))

    def test_unchanged_replicas_agree_on_weights(self):
        for step in (0, 1):
            for entry in ("Module.fc1.Linear.forward.0", "Module.fc2.Linear.forward.0"):
                for which in ("weight", "bias"):
                    self.assertTrue(torch.equal(self.parameter("clean", step, 0, entry, which),
                                                self.parameter("clean", step, 1, entry, which)))
        for args in ((self.dumps["clean"], "--rank", "0", "--rank", "1"),
                     (self.folder("clean", 1, 0), self.folder("clean", 1, 1))):
            code, report = compare_json(*args)
            self.assertEqual(code, 0, report)
            self.assertEqual(report["summary"]["divergingTensors"], 0)
            self.assertEqual(report["summary"]["replicaParameters"]["diverging"], 0)
            # fc1 and fc2's weight and bias, in each step compared
            self.assertEqual(report["summary"]["replicaParameters"]["compared"], 8 if len(args) == 5 else 4)

    def test_planted_differences_are_born_where_they_are_used(self):
        code, report = compare_json(self.dumps["skewed"], "--rank", "0", "--rank", "1")
        self.assertEqual(code, 1, report)
        first = report["firstBornHere"]
        self.assertEqual((first["name"], first["round"]), ("Module.fc2.Linear.forward.0", 0))
        self.assertEqual((first["process"], first["candidateProcess"]), ("rank0", "rank1"))
        self.assertEqual(first["tensor"]["index"], "parameters.weight")
        self.assertEqual(first["tensor"]["data"]["worstElement"], "[1, 3]")
        self.assertEqual(born_here(report, "Module.fc1.Linear.forward.0", 0), [])
        (bias,) = born_here(report, "Module.fc1.Linear.forward.0", 1)
        self.assertIn("parameters.bias", bias["cause"])
        # Step 1 alone, by its rank folders: fc1 is used first, so its bias is the first divergence.
        code, step1 = compare_json(self.folder("skewed", 1, 0), self.folder("skewed", 1, 1))
        self.assertEqual(code, 1, step1)
        self.assertEqual((step1["firstBornHere"]["name"], step1["firstBornHere"]["tensor"]["index"]),
                         ("Module.fc1.Linear.forward.0", "parameters.bias"))
        self.assertEqual(step1["firstBornHere"]["tensor"]["data"]["worstElement"], "[2]")
        diff = (self.parameter("skewed", 1, 1, "Module.fc1.Linear.forward.0", "bias") -
                self.parameter("skewed", 1, 0, "Module.fc1.Linear.forward.0", "bias")).abs()
        self.assertEqual(int(diff.argmax()), 2)
        self.assertAlmostEqual(diff.max().item(), LR * 0.5, places=6)


if __name__ == "__main__":
    unittest.main()
