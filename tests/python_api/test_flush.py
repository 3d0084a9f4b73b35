"""PrecisionDebugger.flush(): the files stop() and step() handed to the writer thread are whole on
disk when it returns, so the same process can read them; a write that failed is reported (and
tried again by the next flush()); a writer thread that is gone is not waited for."""
# SPDX-License-Identifier: GPL-3.0-or-later
import errno
import json
import math
import os
import unittest

import torch

import support
from support import check_layout, load_dump

FILES = ("dump.json", "stack.json", "construct.json")


class FlushThenRead(support.TempDirTestCase):
    def test_files_read_in_the_same_process_after_flush_are_the_steps_files(self):
        # Six steps at mix, each read back right after flush() (after stop() in odd steps, after
        # step() in even ones): what the process read is, byte for byte, what is on disk after
        # it ended, and the statistics in it are those of the values the script printed.
        self.write_config({"dump_path": "./dump", "level": "mix"})
        proc = self.run_python("""
            import json, os
            import torch
            import torch.nn as nn
            from probe_studio.pytorch import PrecisionDebugger

            torch.manual_seed(5)
            model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
            debugger = PrecisionDebugger(config_path="./config.json", model=model)
            seen = []
            for step in range(6):
                x = torch.randn(4, 6) * (step + 1)
                debugger.start()
                out = model(x)
                out.sum().backward()
                debugger.stop()
                if step % 2:
                    flushed = debugger.flush()
                    debugger.step()
                else:
                    debugger.step()
                    flushed = debugger.flush()
                rank_dir = os.path.join("dump", "step%d" % step, "proc%d" % os.getpid())
                texts = {}
                for name in ("dump.json", "stack.json", "construct.json"):
                    with open(os.path.join(rank_dir, name)) as f:
                        texts[name] = f.read()
                seen.append({"flushed": flushed, "texts": texts, "x": x.tolist(), "out": out.detach().tolist()})
            with open("seen.json", "w") as f:
                json.dump({"pid": os.getpid(), "steps": seen}, f)
            """)
        with open(os.path.join(self.tmp, "seen.json")) as f:
            seen = json.load(f)
        forward = ["Functional.linear.0.forward", "Module.0.Linear.forward.0", "Torch.tanh.0.forward",
                   "Module.1.Tanh.forward.0", "Functional.linear.1.forward", "Module.2.Linear.forward.0",
                   "Tensor.sum.0.forward"]
        for step, got in enumerate(seen["steps"]):
            self.assertIs(got["flushed"], True, step)
            rank_dir = os.path.join(self.tmp, "dump", "step%d" % step, "proc%d" % seen["pid"])
            check_layout(self, rank_dir, level="mix")
            for name in FILES:
                with open(os.path.join(rank_dir, name)) as f:
                    self.assertEqual(got["texts"][name], f.read(), (step, name))
            data = json.loads(got["texts"]["dump.json"])["data"]
            self.assertEqual([n for n in data if ".forward" in n], forward, step)
            for name in ("Module.0.Linear.parameters_grad.0", "Module.2.Linear.parameters_grad.0",
                         "Functional.linear.0.backward", "Functional.linear.1.backward"):
                self.assertIn(name, data, step)
            construct = json.loads(got["texts"]["construct.json"])
            self.assertEqual(construct["Functional.linear.1.forward"], "Module.2.Linear.forward.0", step)
            # Statistics recomputed here from the values the script printed.
            for item, values in ((data["Functional.linear.0.forward"]["input_args"][0], got["x"]),
                                 (data["Functional.linear.1.forward"]["output"][0], got["out"])):
                t = torch.tensor(values, dtype=torch.float32)
                self.assertEqual(item["shape"], list(t.shape), step)
                self.assertEqual((item["Max"], item["Min"]), (t.max().item(), t.min().item()), step)
                flat = t.double().flatten()
                self.assertTrue(math.isclose(item["Mean"], flat.mean().item(), rel_tol=1e-6), step)
                self.assertTrue(math.isclose(item["Norm"], flat.norm().item(), rel_tol=1e-6), step)


class FlushReportsFailures(support.TempDirTestCase):
    def test_a_write_that_fails_is_reported_and_written_by_a_later_flush(self):
        # A full disk, as RLIMIT_FSIZE makes one (write(2) fails with EFBIG past the limit; the
        # signal it also sends is ignored): flush() raises OSError naming dump.json, again at a
        # second call, and the dump.json under its real name stays the whole one of the step's
        # beginning. Once there is room, flush() alone (no stop() or step()) writes the step's
        # files, with the statistics of every call.
        self.write_config({"dump_path": "./dump"})
        proc = self.run_python("""
            import json, os, resource, signal
            import torch
            from probe_studio.pytorch import PrecisionDebugger

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            debugger = PrecisionDebugger(config_path="./config.json")
            debugger.start()
            print("EMPTY", debugger.flush())
            path = os.path.join("dump", "step0", "proc%d" % os.getpid(), "dump.json")
            soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
            resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))
            x = torch.linspace(-2.0, 2.0, 50)
            for k in range(1, 13):
                torch.sin(x * k)
            debugger.stop()
            for attempt in ("FAILED", "AGAIN"):
                try:
                    debugger.flush()
                    print(attempt, "no error")
                except OSError as exc:
                    print(attempt, exc.errno, exc.filename)
            with open(path) as f:
                print("ON_DISK", json.dumps(json.load(f)))
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            print("RETRIED", debugger.flush())
            with open(path) as f:
                print("WRITTEN", f.read().replace("\\n", " "))
            """)
        lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
        self.assertEqual(lines["EMPTY"], "True")
        rank_dir = self.only_dump("dump")
        for attempt in ("FAILED", "AGAIN"):
            error, filename = lines[attempt].split(" ", 1)
            self.assertEqual(int(error), errno.EFBIG, attempt)
            self.assertEqual(os.path.realpath(os.path.join(self.tmp, filename)),
                             os.path.realpath(os.path.join(rank_dir, "dump.json")), attempt)
        self.assertEqual(json.loads(lines["ON_DISK"]), {"task": "statistics", "level": "L1", "framework": "pytorch",
                                                        "dump_data_dir": None, "data": {}})
        self.assertRegex(proc.stderr, r"cannot write the dump files in .*step0/proc\d+: File too large")
        self.assertEqual(lines["RETRIED"], "True")
        written = json.loads(lines["WRITTEN"])
        self.assertEqual(written, load_dump(rank_dir))
        self.assertEqual(sorted(os.listdir(rank_dir)), sorted(FILES))  # no temporary file left
        data = check_layout(self, rank_dir)["data"]
        self.assertEqual([n for n in data if n.startswith("Torch.sin.")],
                         ["Torch.sin.%d.forward" % i for i in range(12)])
        x = torch.linspace(-2.0, 2.0, 50)
        for k in range(1, 13):
            y = torch.sin(x * k)
            out = data["Torch.sin.%d.forward" % (k - 1)]["output"][0]
            self.assertEqual((out["Max"], out["Min"]), (y.max().item(), y.min().item()), k)

    def test_flush_does_not_wait_for_a_writer_thread_that_is_gone(self):
        # step() without stop() queues the step's records to the step writer thread; here that
        # thread has ended (as daemon threads do at interpreter shutdown): flush() renders them
        # itself and returns with the files on disk instead of waiting.
        self.write_config({"dump_path": "./dump"})
        proc = self.run_python("""
            import json, os, threading
            import torch
            from probe_studio.pytorch import PrecisionDebugger

            debugger = PrecisionDebugger(config_path="./config.json")
            gone = threading.Thread(target=lambda: None)
            gone.start()
            gone.join()
            debugger.service.writer._thread = gone
            for step in range(3):
                debugger.start()
                torch.mul(torch.arange(4.0), step + 2)
                debugger.step()
            print("FLUSHED", debugger.flush())
            for step in range(3):
                with open(os.path.join("dump", "step%d" % step, "proc%d" % os.getpid(), "dump.json")) as f:
                    print("STEP", json.dumps(json.load(f)["data"]["Torch.mul.0.forward"]["output"][0]))
            """)
        self.assertIn("FLUSHED True", proc.stdout)
        outputs = [json.loads(line.split(" ", 1)[1]) for line in proc.stdout.splitlines() if line.startswith("STEP")]
        self.assertEqual(len(outputs), 3)
        for step, out in enumerate(outputs):
            y = torch.mul(torch.arange(4.0), step + 2)
            self.assertEqual((out["Max"], out["Min"]), (y.max().item(), y.min().item()), step)
            self.assertEqual(out, load_dump(self.only_dump("dump", step))["data"]["Torch.mul.0.forward"]["output"][0])


if __name__ == "__main__":
    unittest.main()
