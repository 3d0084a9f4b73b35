"""probe run with bad input: each problem gets a clear message and its own exit code; the
program's own exit code and signals pass through."""
# SPDX-License-Identifier: GPL-3.0-or-later
import json
import os
import signal
import stat
import subprocess
import textwrap
import time

from probe_test_util import PROBE, PYTHON, ProbeTestCase, write_config


def read_wait(pid):
    """Where the process's main thread waits in the kernel ("pipe_read", or "anon_pipe_read", in a
    read of a pipe)."""
    try:
        with open("/proc/%d/wchan" % pid) as f:
            return f.read()
    except OSError:
        return ""


class LaunchErrors(ProbeTestCase):
    def probe_run(self, *args):
        return subprocess.run([PROBE, "run"] + list(args), capture_output=True, text=True)

    def script(self, name, text):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def test_missing_command(self):
        result = self.probe_run("--output", self.path("out"))
        self.assertEqual(result.returncode, 64)
        self.assertIn("no command to run", result.stderr)

    def test_command_not_found(self):
        result = self.probe_run("--output", self.path("out"), "--", "no-such-program-here")
        self.assertEqual(result.returncode, 127)
        self.assertIn("command not found", result.stderr)

    def test_unreadable_and_invalid_config(self):
        result = self.probe_run("--config", self.path("absent.json"), "--", PYTHON, "-c", "pass")
        self.assertEqual(result.returncode, 66)
        self.assertIn("cannot read the config", result.stderr)
        with open(self.path("bad.json"), "w") as f:
            f.write('{"task": "everything", "exec_range": "1"}')
        result = self.probe_run("--config", self.path("bad.json"), "--", PYTHON, "-c", "pass")
        self.assertEqual(result.returncode, 65)
        self.assertIn('key "task": "everything" is not a valid value', result.stderr)
        self.assertIn('key "exec_range"', result.stderr)

    def test_output_not_writable(self):
        with open(self.path("a-file"), "w") as f:
            f.write("x")
        result = self.probe_run("--output", self.path("a-file", "out"), "--", PYTHON, "-c", "pass")
        self.assertEqual(result.returncode, 73)
        self.assertIn("cannot create the output directory", result.stderr)

    def test_interpreter_without_torch(self):
        # A python3 that does not see the system's site-packages.
        python = self.script("python3", "#!/bin/sh\nexec %s -S \"$@\"\n" % PYTHON)
        result = self.probe_run("--output", self.path("out"), "--", python, "-c", "pass")
        self.assertEqual(result.returncode, 69)
        self.assertIn("has no torch module", result.stderr)
        self.assertIn("/usr/bin/python3", result.stderr)

    def test_torch_version_mismatch(self):
        fake = self.path("fake", "torch")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("__version__ = '2.9.0'\n")
        with open(os.path.join(fake, "version.py"), "w") as f:
            f.write("__version__ = '2.9.0'\n")
        python = self.script("python3", "#!/bin/sh\nPYTHONPATH=%s exec %s \"$@\"\n" % (self.path("fake"), PYTHON))
        result = self.probe_run("--output", self.path("out"), "--", python, "-c", "pass")
        self.assertEqual(result.returncode, 76)
        self.assertIn("torch 2.9.0", result.stderr)
        self.assertIn("built for torch 1.13", result.stderr)

    def test_mismatch_found_inside_the_process_tree(self):
        # The interpreter is started by a shell script, so only the injected part can tell.
        fake = self.path("fake", "torch")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("__version__ = '2.9.0'\n")
        launcher = self.script("train.sh", "#!/bin/sh\nPYTHONPATH=%s:$PYTHONPATH exec %s -c 'import torch'\n"
                               % (self.path("fake"), PYTHON))
        result = self.probe_run("--output", self.path("out"), "--", launcher)
        self.assertEqual(result.returncode, 76)
        self.assertIn("is not the version the adapter was built for", result.stderr)

    def test_exit_code_and_signal_pass_through(self):
        cfg = write_config(self.dir)
        result = self.probe_run("--output", self.path("out"), "--config", cfg, "--", PYTHON, "-c",
                                "import torch, sys; sys.exit(7)")
        self.assertEqual(result.returncode, 7)
        result = self.probe_run("--output", self.path("out2"), "--config", cfg, "--", PYTHON, "-c",
                                "import os, signal, torch; os.kill(os.getpid(), signal.SIGTERM)")
        self.assertEqual(result.returncode, 128 + 15)
        self.assertIn("complete", result.stderr)  # the dump was drained on the way out
        self.assertIn("stopped by SIGTERM; its probe wrote out all it had seen until then", result.stderr)  # and says where it ends

    def test_missing_script_creates_nothing(self):
        out = self.path("out")
        result = self.probe_run("--output", out, "--", PYTHON, "-u", self.path("no_such_script.py"), "--epochs", "2")
        self.assertEqual(result.returncode, 66)
        self.assertIn("no_such_script.py does not exist", result.stderr)
        self.assertFalse(os.path.exists(out), "the output folder was created for a program that cannot run")

    def test_a_folder_holding_another_runs_dump_is_refused_unless_appended_or_overwritten(self):
        out = self.path("out")
        status = os.path.join(out, "atb_dump_data", "probe_status.json")
        program = [PYTHON, "-c", "import torch; torch.nn.Linear(2, 2)(torch.ones(1, 2))"]
        first = self.probe_run("--output", out, "--", *program)
        self.assertEqual(first.returncode, 0, first.stderr)
        with open(status) as f:
            before = json.load(f)
        self.assertEqual(len(before["processes"]), 1)
        again = self.probe_run("--output", out, "--", *program)
        self.assertEqual(again.returncode, 73)
        self.assertIn("holds the dump of another run: 1 process, complete", again.stderr)
        self.assertIn("--append", again.stderr)
        with open(status) as f:
            self.assertEqual(json.load(f), before, "the refused run changed the dump")
        appended = self.probe_run("--output", out, "--append", "--", *program)
        self.assertEqual(appended.returncode, 0, appended.stderr)
        with open(status) as f:
            self.assertEqual(len(json.load(f)["processes"]), 2)  # each process its own entry
        replaced = self.probe_run("--output", out, "--overwrite", "--", *program)
        self.assertEqual(replaced.returncode, 0, replaced.stderr)
        with open(status) as f:
            after = json.load(f)
        self.assertEqual(len(after["processes"]), 1)
        self.assertNotIn(after["processes"][0]["pid"], [p["pid"] for p in before["processes"]])

    def test_program_that_never_imports_torch(self):
        result = self.probe_run("--output", self.path("out"), "--", PYTHON, "-c", "print('hello')")
        self.assertEqual(result.returncode, 0)
        self.assertIn("hello", result.stdout)
        self.assertIn("never started the probe", result.stderr)

    def test_program_that_fails_before_it_starts_the_probe(self):
        # A syntax error anywhere in the script fails it before its first line runs, its
        # `import torch` too: not asked "did it import torch?" (a GUI walk).
        script = self.write_script("bad.py", "import torch\nprint('never')\ndef broken(:\n")
        result = self.probe_run("--output", self.path("out"), "--", PYTHON, script)
        self.assertEqual(result.returncode, 1)
        self.assertIn("SyntaxError", result.stderr)
        self.assertIn("probe run: the program exited with code 1 before it started the probe (see its error "
                      "above); nothing was dumped", result.stderr)
        self.assertNotIn("did it import torch", result.stderr)

    def test_a_relayed_program_outlives_the_reader_of_its_output(self):
        # The application launches models with --relay-output: killed, it closed the pipes the
        # model wrote into, and the model's next print raised BrokenPipeError (a training run of
        # hours ended with code 1; probe run itself died of SIGPIPE). The program goes on, its
        # results those of a run without the probe, and what it wrote after goes to a log.
        flag = self.path("reader_gone")
        script = self.write_script("steps.py", textwrap.dedent("""
            import os, sys, time, torch
            torch.manual_seed(0)
            model = torch.nn.Linear(4, 4)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(200):
                opt.zero_grad()
                model(torch.randn(2, 4)).sum().backward()
                opt.step()
                print("step", step, flush=True)
                print("warning", step, file=sys.stderr, flush=True)
                if step == 0 and len(sys.argv) > 2:
                    deadline = time.monotonic() + 120  # until the test closed its pipes
                    while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
                        time.sleep(0.01)
            with open(sys.argv[1], "w") as f:
                f.write(repr(model.weight.detach().sum().item()))
            """))
        subprocess.run([PYTHON, script, self.path("plain.txt")], check=True, capture_output=True)
        out = self.path("out")
        run = subprocess.Popen([PROBE, "run", "--relay-output", "--output", out, "--", PYTHON, script,
                                self.path("probed.txt"), flag], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.stdout.readline(), b"step 0\n")
        run.stdout.close()
        run.stderr.close()
        open(flag, "w").close()
        self.assertEqual(run.wait(timeout=300), 0)
        with open(self.path("probed.txt")) as f, open(self.path("plain.txt")) as g:
            self.assertEqual(f.read(), g.read())
        with open(os.path.join(out, "program_output.log")) as f:
            log = f.read()
        self.assertIn("the program's standard output could not be passed on (Broken pipe)", log)
        self.assertIn("the program's standard error could not be passed on (Broken pipe)", log)
        self.assertIn("step 199\n", log)
        self.assertIn("warning 199\n", log)
        with open(os.path.join(out, "atb_dump_data", "probe_status.json")) as f:
            (process,) = json.load(f)["processes"]
        self.assertEqual(process["ended_by"]["how"], "exited")
        self.assertEqual(process["ended_by"]["code"], 0)

    def test_what_a_relayed_program_leaves_running_is_relayed_to_its_end(self):
        # A process the program started that outlives it (`cmd &` in a wrapper script) still
        # held the pipes when probe run ended: its next write killed it (SIGPIPE), what it wrote
        # was lost. It is relayed to its end now, and probe run ends with the program.
        done = self.path("late_done")
        ready = self.path("program_ended")
        script = ("(while [ ! -e %s ]; do sleep 0.01; done; echo late; echo done > %s) & echo early"
                  % (ready, done))
        run = subprocess.Popen([PROBE, "run", "--quiet", "--relay-output", "--output", self.path("out"), "--",
                                "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(run.stdout.readline(), "early\n")
        self.assertEqual(run.wait(timeout=120), 0)  # ended with the program
        open(ready, "w").close()
        self.assertEqual(run.stdout.readline(), "late\n")  # relayed by what outlived probe run
        run.stdout.close()
        run.stderr.close()
        deadline = time.monotonic() + 120
        while not os.path.exists(done) and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(done) as f:
            self.assertEqual(f.read(), "done\n")

    def test_ctrl_c_interrupts_a_blocking_read_as_without_the_probe(self):
        # Python's SIGINT handler has no SA_RESTART: a Ctrl-C during os.read() (input(), a
        # socket's recv) ends the call and raises KeyboardInterrupt. Chained to it by the
        # probe's handler, installed with SA_RESTART, the read was restarted and the program
        # hung.
        script = self.write_script(
            "blocked.py",
            "import os, sys, torch\n"
            "r, w = os.pipe()\n"
            "print('ready', flush=True)\n"
            "try:\n"
            "    os.read(r, 1)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n")
        for command in ([PYTHON, script], [PROBE, "run", "--quiet", "--output", self.path("out"), "--",
                                           PYTHON, script]):
            run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
            try:
                self.assertEqual(run.stdout.readline(), "ready\n")
                pid = run.pid
                if command[0] == PROBE:  # the program, not probe run (which passes SIGINT on)
                    pid = int(subprocess.check_output(["pgrep", "-P", str(run.pid)], text=True).split()[0])
                # Sent while the program waits in the read (sent before it, the signal came
                # at the print and proved nothing).
                deadline = time.monotonic() + 120
                while "pipe_read" not in read_wait(pid) and time.monotonic() < deadline:
                    time.sleep(0.01)
                self.assertIn("pipe_read", read_wait(pid))
                os.kill(pid, signal.SIGINT)
                out, err = run.communicate(timeout=120)
            finally:
                if run.poll() is None:  # hung: the program and probe run go
                    os.killpg(run.pid, signal.SIGKILL)
                    run.wait()
            self.assertEqual(out, "interrupted\n", err)
            self.assertEqual(run.returncode, 0, err)

    def test_program_killed_before_it_starts_the_probe(self):
        # Killed before it imports torch: said, not "did it import torch?".
        result = self.probe_run("--output", self.path("out"), "--", PYTHON, "-c",
                                "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
        self.assertEqual(result.returncode, 128 + 9)
        self.assertIn("probe run: the program was killed by SIGKILL before it started the probe; nothing was "
                      "dumped", result.stderr)
        self.assertNotIn("did it import torch", result.stderr)
