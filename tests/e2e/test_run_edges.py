"""End to end: how `npu-doctor run` / `amp-check` cope with programs that do not end the way a
training script usually does (killed, cut off, several processes) and with report paths that
cannot be written (issue 31). Programs are written into a temporary folder by each test.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import textwrap
import unittest

from e2e_support import PYTHON, python_has

BINARY = os.environ.get("NPUD_BINARY", "")
HAVE_TORCH = python_has("torch")


def write_program(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    return path


def npud(*args, env=None, cwd=None, timeout=300):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout, env=full_env, cwd=cwd)


def capture_events(path):
    """The events of a capture, also one cut off by a kill (no closing bracket, maybe a cut line)."""
    with open(path) as f:
        text = f.read()
    events = []
    for line in text.splitlines():
        line = line.strip().lstrip(",")
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                pass   # the line a kill cut off
    return events


# A training loop of STEPS optimizer steps whose float(loss) after optimizer.step() syncs once per
# iteration; it lands in the next step, and the last one after the last step end.
SYNC_AFTER_STEP = """
    import torch
    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    losses = []
    for it in range(STEPS):
        loss = net(torch.randn(7, 6)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    print(len(losses))
"""


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
class RunEdges(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="npud-edges-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def run_json(self, name, program, *args, steps="1:3", env=None):
        """`run --format json` into DIR/name/; returns (completed process, report or None, capture path)."""
        out = os.path.join(self.dir, name)
        report = os.path.join(self.dir, name + ".json")
        r = npud("run", "-q", "--steps", steps, "--capture-dir", out, "--format", "json", "-o", report, *args,
                 "--", PYTHON, program, env=env)
        data = None
        if os.path.exists(report):
            with open(report) as f:
                data = json.load(f)
        return r, data, os.path.join(out, "capture.npud.json")

    def test_steps_all_counts_only_ended_steps(self):
        # issue 31 F-9: the tail after the last optimizer.step() was a 6th "step"; 5 syncs read
        # 0.833/step, a warning, where --steps 1:3 said 1/step, an error.
        program = write_program(self.dir, "sync_after_step.py", SYNC_AFTER_STEP.replace("STEPS", "6"))
        severities = {}
        for steps in ("all", "2:4"):
            r, report, capture = self.run_json("steps-" + steps.replace(":", "-"), program, "--fail-on", "never",
                                             steps=steps)
            self.assertEqual(r.returncode, 0, r.stderr)
            marked = [e for e in capture_events(capture) if e.get("name", "").startswith("ProfilerStep#")]
            self.assertEqual(report["summary"]["steps"], len(marked), steps)
            syncs = [f for f in report["findings"] if f["id"] == "SYNC001"]
            self.assertEqual(len(syncs), 1, json.dumps(syncs, indent=1))
            self.assertEqual(syncs[0]["metrics"]["per_step"], 1, (steps, syncs[0]["message"]))
            severities[steps] = syncs[0]["severity"]
        self.assertEqual(report["summary"]["steps"], 3)
        self.assertEqual(severities["all"], severities["2:4"], severities)

    def killed_program(self, how):
        # Dies in the middle of step 3 of the 1:7 asked for, the way `how` says.
        return write_program(self.dir, "dies_%s.py" % how, """
            import os, signal, torch
            net = torch.nn.Linear(9, 4)
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            for it in range(20):
                loss = net(torch.randn(5, 9)).sum()
                if it == 3:
                    HOW
                opt.zero_grad(); loss.backward(); opt.step()
            """.replace("HOW", {"sigterm": "os.kill(os.getpid(), signal.SIGTERM)",
                                 "sigkill": "os.kill(os.getpid(), signal.SIGKILL)",
                                 "os_exit": "os._exit(5)"}[how]))

    def test_killed_capture_says_first_it_is_incomplete_with_steps_recorded_of_requested(self):
        # issue 31 F-19: SIGTERM, SIGKILL and os._exit alike; `analyze` of the file later too.
        for how, code in (("sigterm", 128 + 15), ("sigkill", 128 + 9), ("os_exit", 5)):
            r, report, capture = self.run_json(how, self.killed_program(how), "--fail-on", "never", steps="1:7")
            self.assertEqual(r.returncode, code, (how, r.stderr))
            for source, rep in (("run", report), ("analyze", None)):
                if rep is None:
                    a = npud("analyze", capture, "--format", "json", "--fail-on", "never")
                    self.assertEqual(a.returncode, 0, a.stderr)
                    rep = json.loads(a.stdout)
                first = rep["findings"][0]
                self.assertEqual((first["id"], first["severity"]), ("CAPTURE001", "error"), (how, source))
                self.assertIn("no end record", first["message"])
                self.assertIn("2 of the 7 requested steps (--steps 1:7) complete", first["message"], (how, source))
            text = npud("analyze", capture, "--fail-on", "never")
            self.assertEqual(re.search(r"\b([A-Z]+\d{3})\b", text.stdout).group(1), "CAPTURE001", text.stdout[:300])

    def test_amp_check_text_says_first_that_the_capture_stopped_on_an_internal_error(self):
        # issue 31 F-23: the amp section ("no drift ... 1 optimizer steps recorded") came first,
        # with no word that the shim stopped after an internal error.
        program = write_program(self.dir, "amp_small.py", SYNC_AFTER_STEP.replace("STEPS", "5"))
        report = os.path.join(self.dir, "amp.txt")
        r = npud("amp-check", "-q", "--steps", "1:4", "--capture-dir", os.path.join(self.dir, "amp"), "-o", report,
                 "--fail-on", "never", "--", PYTHON, program, env={"NPUD_TEST_FAULT": "60"})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(report) as f:
            text = f.read()
        first = text.lstrip().splitlines()[0]
        self.assertIn("capture incomplete (CAPTURE001)", first, text[:600])
        self.assertIn("internal error", first)
        self.assertRegex(first, r"\d of the 4 requested steps \(--steps 1:4\) complete")
        self.assertLess(text.index("capture incomplete"), text.index("AMP check"))

    @unittest.skipIf(os.geteuid() == 0, "root writes into any directory")
    def test_report_into_an_unwritable_directory_is_refused_before_the_program_runs(self):
        # issue 31 F-26: the program ran to its end, then "cannot create a temporary file in .".
        marker = os.path.join(self.dir, "the_program_ran")
        program = write_program(self.dir, "touches.py", "open(%r, 'w').close()\n" % marker)
        locked = os.path.join(self.dir, "locked")
        os.mkdir(locked, 0o555)
        self.addCleanup(os.chmod, locked, 0o755)
        for command in ("run", "amp-check"):
            r = npud(command, "-q", "--capture-dir", os.path.join(self.dir, "cap-" + command),
                     "-o", os.path.join(locked, "report.txt"), "--", PYTHON, program)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("cannot create a file in %s" % locked, r.stderr)
            self.assertFalse(os.path.exists(marker), command)
        self.assertEqual(os.listdir(locked), [])

    def test_report_to_proc_self_fd_of_a_pipe_is_written(self):
        # /dev/stdout leads to /proc/self/fd/1: a pipe there was refused as "a symbolic link
        # that leads nowhere".
        program = write_program(self.dir, "quiet_steps.py", SYNC_AFTER_STEP.replace("STEPS", "4"))
        r = npud("run", "-q", "--capture-dir", os.path.join(self.dir, "fd1"), "-o", "/proc/self/fd/1",
                 "--format", "json", "--fail-on", "never", "--", PYTHON, program)
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout[r.stdout.index("{"):])   # after the program's own line
        self.assertEqual(report["summary"]["steps"], 3)

    def worker(self):
        # A training worker whose process number decides its step count: whose capture is whose
        # shows in the ProfilerStep events.
        return write_program(self.dir, "worker.py", """
            import sys, torch
            n = int(sys.argv[1])
            net = torch.nn.Linear(3 + n, 2)
            opt = torch.optim.SGD(net.parameters(), lr=0.05)
            for it in range(4 + n):
                loss = net(torch.randn(4, 3 + n)).sum()
                opt.zero_grad(); loss.backward(); opt.step()
            print("worker", n, "done")
            """)

    def assert_one_capture_per_process(self, name, *program):
        out = os.path.join(self.dir, name)
        report = os.path.join(self.dir, name + ".json")
        r = npud("run", "--steps", "all", "--capture-dir", out, "--format", "json", "-o", report,
                 "--fail-on", "never", "--", *program)
        self.assertEqual(r.returncode, 0, r.stderr)
        captures = sorted(f for f in os.listdir(out) if f.endswith(".npud.json"))
        self.assertEqual(len(captures), 2, captures)
        self.assertIn("capture.npud.json", captures)
        other = os.path.join(out, [c for c in captures if c != "capture.npud.json"][0])
        self.assertRegex(os.path.basename(other), r"^capture\.\d+\.npud\.json$")
        steps = set()
        for c in captures:
            with open(os.path.join(out, c)) as f:
                events = json.load(f)   # each one whole, closed JSON
            steps.add(sum(1 for e in events if e.get("name", "").startswith("ProfilerStep#")))
        self.assertEqual(steps, {4, 5})   # worker 0's and worker 1's
        with open(report) as f:
            data = json.load(f)
        notes = [w["message"] for w in data["warnings"] if "other process" in w["message"]]
        self.assertEqual(len(notes), 1, data["warnings"])
        self.assertIn(other, notes[0])
        self.assertIn(other, r.stderr)
        text = npud("analyze", os.path.join(out, "capture.npud.json"), "--fail-on", "never")
        self.assertEqual(text.returncode, 0, text.stderr)

    def test_two_workers_of_a_shell_line_each_keep_their_capture(self):
        # issue 31 F-7: both inherited NPUD_CAPTURE and wrote one file at once: neither survived.
        worker = self.worker()
        self.assert_one_capture_per_process(
            "shell", "sh", "-c", "'%s' '%s' 0 & '%s' '%s' 1; wait" % (PYTHON, worker, PYTHON, worker))

    def test_two_workers_of_a_python_launcher_each_keep_their_capture(self):
        worker = self.worker()
        launcher = write_program(self.dir, "launcher.py", """
            import subprocess, sys
            procs = [subprocess.Popen([sys.executable, %r, str(n)]) for n in (1, 0)]
            sys.exit(max(p.wait() for p in procs))
            """ % worker)
        self.assert_one_capture_per_process("launcher", PYTHON, launcher)

    def test_shim_under_a_path_with_a_colon_still_loads(self):
        # issue 31 F-25: PYTHONPATH split the shim's path at ':'; the shim never loaded and run
        # blamed the program ("finished before the capture began").
        shim_parent = os.path.join(self.dir, "opt:npu doctor", "py")
        # the source tree's shim (the torch2 suites run an installed binary, without NPUD_PYTHON_DIR)
        python_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
        shutil.copytree(os.path.join(python_dir, "npu_doctor"), os.path.join(shim_parent, "npu_doctor"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        program = write_program(self.dir, "colon_steps.py", SYNC_AFTER_STEP.replace("STEPS", "4"))
        r, report, capture = self.run_json("colon", program, "--fail-on", "never", env={"NPUD_PYTHON_DIR": shim_parent})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(report["summary"]["steps"], 3)
        self.assertTrue(os.path.isdir(os.path.join(shim_parent, "npu_doctor")))   # the link's removal left it

    def test_dump_without_numpy_is_said_in_the_report_and_by_compare(self):
        # issue 30: `run --dump` in a Python without numpy was one stderr line, and `compare` on
        # the folder then said "no dump here". The program hides numpy from itself.
        program = write_program(self.dir, "no_numpy.py", "import sys\nsys.modules['numpy'] = None\n" +
                                textwrap.dedent(SYNC_AFTER_STEP.replace("STEPS", "4")))
        r, report, capture = self.run_json("nonumpy", program, "--fail-on", "never", "--dump", "all")
        self.assertEqual(r.returncode, 0, r.stderr)
        notes = [w["message"] for w in report["warnings"] if w["message"].startswith("--dump all:")]
        self.assertEqual(len(notes), 1, report["warnings"])
        self.assertIn("the tensor dump did not start in the program (ModuleNotFoundError", notes[0])
        self.assertIn("install numpy in the Python that runs the program", notes[0])
        text = npud("run", "-q", "--steps", "1:3", "--capture-dir", os.path.join(self.dir, "nonumpy"),
                    "--fail-on", "never", "--dump", "all", "--", PYTHON, program)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("note: --dump all: ", text.stdout)
        self.assertIn("did not start in the program", text.stdout.split("\n\n")[0])   # at the top
        dump_dir = os.path.join(self.dir, "nonumpy")
        compared = npud("compare", "-q", dump_dir, dump_dir)
        self.assertEqual(compared.returncode, 2, compared.stdout)
        self.assertIn("index.jsonl: byte 0: the tensor dump did not start in the program", compared.stderr)
        self.assertIn("install numpy", compared.stderr)
        self.assertNotIn("no dump here", compared.stderr)


if __name__ == "__main__":
    unittest.main()
