"""End to end: `npu-doctor run` on small programs with planted problems, real torch on CPU.

Each program in programs/ marks its planted line with `# PLANTED`; the report must point
at that file:line. Needs torch in the Python that runs the suite (e2e_support.py) and the built binary (NPUD_BINARY).
"""

import functools
import json
import os
import re
import subprocess
import tempfile
import unittest

import e2e_support
from e2e_support import PYTHON, python_has

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
planted_line = functools.partial(e2e_support.planted_line, PROGRAMS)
BINARY = os.environ.get("NPUD_BINARY", "")

HAVE_TORCH = python_has("torch")


class Run:
    """One `npu-doctor run` of a program: exit code, outputs, JSON report."""

    def __init__(self, program, *npud_args, env=None, steps="1:3", program_args=()):
        self.dir = tempfile.mkdtemp(prefix="npud-e2e-")
        self.report_path = os.path.join(self.dir, "report.json")
        cmd = [BINARY, "run", "-q", "--steps", steps, "--capture-dir", os.path.join(self.dir, "out"), "--format", "json",
               "-o", self.report_path, "--fail-on", "never", *npud_args, "--",
               PYTHON, os.path.join(PROGRAMS, program), *program_args]
        full_env = dict(os.environ)
        full_env.update(env or {})
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=full_env, cwd=PROGRAMS)
        self.code, self.stdout, self.stderr = r.returncode, r.stdout, r.stderr
        self.report = None
        if os.path.exists(self.report_path):
            with open(self.report_path) as f:
                self.report = json.load(f)
        self.capture = os.path.join(self.dir, "out", "capture.npud.json")

    def findings(self, rule):
        return [f for f in (self.report or {}).get("findings", []) if f["id"] == rule]

    def at(self, rule, program, line):
        path = os.path.join(PROGRAMS, program)
        return [f for f in self.findings(rule)
                if f["location"].get("file") == path and f["location"].get("line") == line]


def plain_run(program, *args):
    r = subprocess.run([PYTHON, os.path.join(PROGRAMS, program), *args], capture_output=True, text=True,
                       timeout=300, cwd=PROGRAMS)
    return r.returncode, r.stdout


def registered_rules():
    r = subprocess.run([BINARY, "rules"], capture_output=True, text=True, timeout=60)
    return {line.split()[0] for line in r.stdout.splitlines() if line.strip()}


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
class CaptureEndToEnd(unittest.TestCase):
    runs = {}

    @classmethod
    def run_once(cls, key, program, *args, **kwargs):
        if key not in cls.runs:
            cls.runs[key] = Run(program, *args, **kwargs)
        return cls.runs[key]

    def need_rule(self, rule):
        # a rule the tests expect that the build lacks is a failure, not a skip
        self.assertIn(rule, registered_rules(), "%s is not registered in this build (rules/registry.cpp)" % rule)

    def test_sync_item_found_at_its_line(self):
        run = self.run_once("sync", "sync_item.py")
        self.assertEqual(run.code, 0, run.stderr)
        hits = run.at("SYNC001", "sync_item.py", planted_line("sync_item.py"))
        self.assertEqual(len(hits), 1, json.dumps(run.findings("SYNC001"), indent=1))
        self.assertEqual(hits[0]["metrics"]["per_step"], 1)
        self.assertIn("Tensor.item", hits[0]["message"])

    def test_text_report_names_files_relative_to_the_working_directory(self):
        """#30: `run` printed absolute paths where `scan` prints relative ones. The text report
        says them relative to the working directory (JSON keeps what the capture recorded)."""
        with tempfile.TemporaryDirectory(prefix="npud-relative-") as tmp:
            r = subprocess.run([BINARY, "run", "-q", "--capture-dir", tmp, "--fail-on", "never", "--",
                                PYTHON, "sync_item.py"], capture_output=True, text=True, timeout=300, cwd=PROGRAMS)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("at sync_item.py:%d" % planted_line("sync_item.py"), r.stdout)
        self.assertNotIn(PROGRAMS + os.sep, r.stdout)
        run = self.run_once("sync", "sync_item.py")
        self.assertTrue(run.at("SYNC001", "sync_item.py", planted_line("sync_item.py")))   # absolute in JSON

    def test_optimizer_step_counter_is_not_a_sync(self):
        run = self.run_once("adam", "sync_item.py", program_args=("--adam",))
        self.assertEqual(run.code, 0, run.stderr)
        syncs = run.findings("SYNC001")
        self.assertEqual([(os.path.basename(f["location"]["file"]), f["location"]["line"]) for f in syncs],
                         [("sync_item.py", planted_line("sync_item.py"))], json.dumps(syncs, indent=1))

    def test_loss_is_bitwise_identical_with_and_without_capture(self):
        code, plain = plain_run("sync_item.py")
        self.assertEqual(code, 0)
        run = self.run_once("sync", "sync_item.py")
        self.assertIn("loss", plain)
        self.assertEqual(run.stdout, plain)

    def test_noncontiguous_softmax_input_found_with_view_line(self):
        self.need_rule("CONTIG002")
        run = self.run_once("contig", "contig_permute.py")
        self.assertEqual(run.code, 0, run.stderr)
        hits = run.at("CONTIG002", "contig_permute.py", planted_line("contig_permute.py"))
        self.assertEqual(len(hits), 1, json.dumps(run.findings("CONTIG002"), indent=1))
        view_line = planted_line("contig_permute.py", "# VIEW")
        self.assertIn("aten::permute at %s:%d" % (os.path.join(PROGRAMS, "contig_permute.py"), view_line),
                      hits[0]["message"])
        self.assertEqual(hits[0]["metrics"]["bytes"], 8 * 32 * 16 * 4)

    def test_changing_shapes_found_at_their_line(self):
        self.need_rule("DYNSHAPE001")
        run = self.run_once("dynshape", "dynshape.py")
        self.assertEqual(run.code, 0, run.stderr)
        hits = run.at("DYNSHAPE001", "dynshape.py", planted_line("dynshape.py"))
        self.assertEqual(len(hits), 1, json.dumps(run.findings("DYNSHAPE001"), indent=1))
        self.assertEqual(hits[0]["metrics"]["distinct_shapes"], 3)   # steps 1..3: 11, 14, 17 rows

    def test_clean_program_has_no_findings_of_these_rules(self):
        run = self.run_once("clean", "clean.py")
        self.assertEqual(run.code, 0, run.stderr)
        for rule in ("SYNC001", "CONTIG002", "DYNSHAPE001", "FALLBACK002"):
            self.assertEqual(run.findings(rule), [], rule)
        self.assertEqual(run.report["summary"]["steps"], 3)

    def test_isin_prediction_follows_the_op_list(self):
        # torch_npu 2.1.0 (the wheel) lacks isin.Tensor_Tensor(_out); 2.1.0.post8 has both
        # (test_wheel_fallbacks.py checks more wheels on one capture).
        line = planted_line("isin_prog.py")
        old = self.run_once("isin-2.1.0", "isin_prog.py", "--torch-npu", "2.1.0")
        new = self.run_once("isin-2.1.0.post8", "isin_prog.py", "--torch-npu", "2.1.0.post8")
        no_kernel = lambda run: [f for f in run.at("FALLBACK002", "isin_prog.py", line)
                                 if "no NPU kernel" in f["message"]]
        self.assertEqual(len(no_kernel(old)), 1, json.dumps(old.findings("FALLBACK002"), indent=1))
        self.assertEqual(no_kernel(new), [], json.dumps(new.findings("FALLBACK002"), indent=1))

    def test_no_recorded_step_is_an_error_not_an_all_clear(self):
        # An evaluation loop: no optimizer.step(), no backward() ever ends a step (issue 15, item 1).
        run = self.run_once("inference", "inference_only.py")
        self.assertEqual(run.code, 2, run.stderr)
        self.assertIn("no step was recorded (--steps 1:3)", run.stderr)
        self.assertIn("npu_doctor.step()", run.stderr)
        # Ending before step A is the same: one training step, recording asked from step 2.
        early = self.run_once("early-end", "sync_item.py", steps="2:3", program_args=("--steps", "1"))
        self.assertEqual(early.code, 2, early.stderr)
        self.assertIn("ended before step 2", early.stderr)
        # A program that failed before its first step is said to have failed (its status), not
        # to have ended no step: here its own argument parser refuses an argument (status 2).
        failed = self.run_once("failed-early", "sync_item.py", program_args=("--steps", "x"))
        self.assertEqual(failed.code, 2, failed.stderr)
        self.assertIn("the program exited with status 2 before it ended a step", failed.stderr)

    def test_hand_written_sgd_loop_is_an_optimizer_loop(self):
        # Without an optimizer each backward() ends a step; npu_doctor.step() marks them the same.
        self.need_rule("FUSE007")
        for key, extra in (("hand-sgd", ()), ("hand-sgd-marked", ("--mark-steps",))):
            run = self.run_once(key, "hand_sgd.py", program_args=extra)
            self.assertEqual(run.code, 0, run.stderr)
            if not extra:
                self.assertIn("no optimizer in this program: each backward() ends a step", run.stderr)
            hits = run.at("FUSE007", "hand_sgd.py", planted_line("hand_sgd.py"))
            self.assertEqual(len(hits), 1, json.dumps(run.findings("FUSE007"), indent=1))
            self.assertEqual(hits[0]["metrics"]["per_step"], 4)   # one update per parameter
            self.assertIn("_foreach_add_", hits[0]["fix"])
            with open(run.capture) as f:
                steps = [e for e in json.load(f) if e.get("name", "").startswith("ProfilerStep#")]
            self.assertEqual(len(steps), 3, steps)

    def test_cuda_only_device_choice_points_at_scan(self):
        self.need_rule("PORT001")
        run = self.run_once("cuda-choice", "cuda_device_choice.py")
        self.assertEqual(run.code, 0, run.stderr)
        hits = run.at("PORT001", "cuda_device_choice.py", planted_line("cuda_device_choice.py"))
        self.assertEqual(len(hits), 1, json.dumps(run.findings("PORT001"), indent=1))
        self.assertIn("npu-doctor scan", hits[0]["fix"])
        self.assertGreaterEqual(hits[0]["metrics"]["count"], 2)   # the device string and torch.cuda.is_available
        # programs without CUDA-only code get none
        self.assertEqual(self.run_once("sync", "sync_item.py").findings("PORT001"), [])

    def test_killed_program_still_gets_a_report(self):
        run = self.run_once("killed", "killed.py")
        self.assertEqual(run.code, 128 + 9, run.stderr)
        self.assertIsNotNone(run.report, run.stderr)
        self.assertEqual(run.report["summary"]["format"], "npu-doctor-capture")
        self.assertGreater(run.report["summary"]["ops"], 0)
        first = run.report["findings"][0]   # said first: the capture has no end record
        self.assertEqual((first["id"], first["severity"]), ("CAPTURE001", "error"), first)
        self.assertIn("no end record", first["message"])
        with open(run.capture, "rb") as f:
            self.assertFalse(f.read().rstrip().endswith(b"]"))   # never closed

    def test_shim_error_never_reaches_the_program(self):
        code, plain = plain_run("sync_item.py")
        run = self.run_once("fault", "sync_item.py", env={"NPUD_TEST_FAULT": "5"})
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.stdout, plain)
        self.assertIn("capture stopped after an internal error", run.stderr)
        with open(run.capture) as f:
            events = json.load(f)   # closed cleanly after the error
        self.assertTrue(any(e.get("name") == "npu_doctor_error" for e in events))

    def test_a_shim_stop_is_said_first_in_every_format(self):
        run = self.run_once("fault", "sync_item.py", env={"NPUD_TEST_FAULT": "5"})
        first = run.report["findings"][0]
        self.assertEqual((first["id"], first["severity"]), ("CAPTURE001", "error"), first)
        self.assertIn("fault injected by NPUD_TEST_FAULT", first["message"])
        self.assertIn("while recording aten::", first["message"])   # the op being recorded
        for fmt, marker in (("text", "CAPTURE001"), ("sarif", '"ruleId": "CAPTURE001"'), ("html", "CAPTURE001"),
                            ("github", "title=CAPTURE001::")):
            r = subprocess.run([BINARY, "analyze", run.capture, "--format", fmt, "--fail-on", "never"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(marker, r.stdout, fmt)
            if fmt in ("text", "github"):   # the first rule the report names
                first_rule = re.search(r"\b([A-Z]+\d{3})\b", r.stdout).group(1)
                self.assertEqual(first_rule, "CAPTURE001", r.stdout[:400])
            if fmt == "sarif":   # CAPTURE001 has no source line: at the capture itself
                log = json.loads(r.stdout)
                first = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
                self.assertTrue(first["artifactLocation"]["uri"].endswith("out/capture.npud.json"), first)
                sarif = log
        e2e_support.assert_valid_sarif(self, sarif)   # last: it skips without ../shared or jsonschema

    def check_unchanged(self, *program_args):
        code, plain = plain_run("compiled.py", *program_args)
        self.assertEqual(code, 0, plain)
        run = Run("compiled.py", program_args=program_args)
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.stdout, plain)
        with open(run.capture) as f:
            names = {e["name"] for e in json.load(f) if e.get("cat") == "aten"}
        return run, names

    def test_as_subclass_and_named_tensors_never_break_the_program(self):
        """#18: under a dispatch mode torch 1.x raises on as_subclass and on ops over named
        tensors; the capture must skip what it cannot record (one stderr line), never raise."""
        code, plain = plain_run("unusual_tensors.py")
        self.assertEqual(code, 0, plain)
        run = Run("unusual_tensors.py")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.stdout, plain)
        named = hasattr(__import__("torch").Tensor, "refine_names")
        if named:
            self.assertEqual(run.stderr.count("ops on named tensors are not recorded"), 1, run.stderr)
            for way in ("factory", "setter"):
                code, plain_way = plain_run("unusual_tensors.py", way)
                self.assertEqual(code, 0, plain_way)
                run_way = Run("unusual_tensors.py", program_args=(way,))
                self.assertEqual((run_way.code, run_way.stdout), (0, plain_way), run_way.stderr)
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([BINARY, "amp-check", "-q", "--steps", "1:3", "--capture-dir", os.path.join(d, "out"),
                                "--fail-on", "never", "--", PYTHON, os.path.join(PROGRAMS, "unusual_tensors.py")],
                               capture_output=True, text=True, timeout=300, cwd=PROGRAMS)
        self.assertEqual(r.returncode, 0, r.stderr)
        # amp-check runs the program's ops in emulated low precision: the losses differ, the run ends.
        self.assertEqual(len([l for l in r.stdout.splitlines() if l.startswith("step ")]), 4, r.stdout)

    def test_other_threads_are_named_as_not_recorded(self):
        run = Run("side_thread.py")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.stdout, "ok\n")
        self.assertEqual(run.stderr.count("1 other Python thread (prefetch) ran during the recorded steps"), 1,
                         run.stderr)

    def test_compiled_module_runs_unchanged_under_capture(self):
        """torch.compile (dynamo + AOT autograd; the aot_eager backend keeps the C++ compiler out
        of the test): the program's numbers do not change and the model's ops are recorded."""
        if e2e_support.torch_version() < (2, 0):
            self.skipTest("torch.compile exists from torch 2.0")
        run, names = self.check_unchanged("compile", "aot_eager")
        self.assertTrue({"aten::addmm", "aten::mm"} & names, sorted(names))

    def test_graph_breaks_are_found_at_the_programs_lines(self):
        """Issue 41: COMPILE002 at the program's data-dependent branch and `.item()` inside compiled
        code, with dynamo's reason, and COMPILE003 where a changed batch size recompiles; none in
        the capture's own code; the program's stdout and stderr
        (dynamo's own warnings included) as without the capture. With the default backend
        (inductor, C++ kernels): every digit of the losses as in the plain run."""
        if e2e_support.torch_version() < (2, 1):
            self.skipTest("torch.compile's graph-break log and torch.compiler.is_compiling: torch >= 2.1")
        program = "compiled_breaks.py"
        plain = subprocess.run([PYTHON, os.path.join(PROGRAMS, program), "inductor"], capture_output=True, text=True,
                               timeout=300, cwd=PROGRAMS)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        run = Run(program, program_args=("inductor",))
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.stdout, plain.stdout)
        log_head = re.compile(r"^[A-Z]\d{4} [\d:.]+ \d+ ", re.M)   # torch's log lines: time and pid differ
        self.assertEqual(log_head.sub("", run.stderr), log_head.sub("", plain.stderr))
        breaks = run.findings("COMPILE002")
        self.assertEqual(sorted(f["location"]["line"] for f in breaks), [18, 32], breaks)
        self.assertTrue(all(f["location"]["file"] == os.path.join(PROGRAMS, program) for f in breaks), breaks)
        by_line = {f["location"]["line"]: f for f in breaks}
        self.assertIn("Data-dependent branching", by_line[18]["message"])
        self.assertIn("item()", by_line[32]["message"])
        self.assertTrue(any("compiled" in n and "graphs" in n for n in by_line[18]["notes"]), by_line[18]["notes"])
        # The batch size changes at step 1: dynamo recompiles forward (at its def line) for a
        # size guard, and the code after each break; never a function of the capture's own.
        recompiles = run.findings("COMPILE003")
        self.assertTrue(recompiles, run.stderr[-2000:])
        self.assertTrue(all(f["location"]["file"] == os.path.join(PROGRAMS, program) for f in recompiles), recompiles)
        at = {f["location"]["line"]: f for f in recompiles}
        self.assertIn(30, at, recompiles)   # Net.forward
        self.assertIn("size mismatch", at[30]["message"])
        self.assertIn("mark_dynamic", at[30]["fix"])
        self.assertNotIn("Recompiling", run.stderr)   # dynamo's recompile log stays the capture's

    def test_scripted_module_runs_unchanged_under_capture(self):
        run, names = self.check_unchanged("script")
        self.assertTrue({"aten::addmm", "aten::linear", "aten::mm"} & names, sorted(names))

    def test_torch2_amp_spellings_run_unchanged_under_capture(self):
        if e2e_support.torch_version() < (2, 3):
            self.skipTest("torch.amp.GradScaler('cpu') exists from torch 2.3")
        run, names = self.check_unchanged("autocast")
        self.assertIn("aten::gelu", names)

    def test_installed_binary_uses_the_installed_shim(self):
        """A pip-installed npu-doctor injects the npu_doctor package installed beside it, never a
        source tree's (the torch2.* suites run the binary the wheel installed in their venv)."""
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(BINARY)))
        if not os.path.exists(os.path.join(prefix, "pyvenv.cfg")):
            self.skipTest("NPUD_BINARY (%s) is not installed in a venv" % BINARY)
        env = {k: v for k, v in os.environ.items() if k != "NPUD_PYTHON_DIR"}
        r = subprocess.run([BINARY, "run", "-q", "--steps", "0", "--fail-on", "never", "--capture-dir",
                            tempfile.mkdtemp(prefix="npud-shim-"), "--", PYTHON, "-c",
                            "import torch, sys, npu_doctor; sys.stderr.write('SHIM ' + npu_doctor.__file__)"],
                           capture_output=True, text=True, timeout=300, env=env)
        shim = next((line[5:] for line in r.stderr.splitlines() if line.startswith("SHIM ")), None)
        self.assertIsNotNone(shim, r.stderr)
        self.assertTrue(os.path.realpath(shim).startswith(prefix + os.sep), (shim, prefix))
        self.assertIn("site-packages", shim)


@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
class CaptureFile(unittest.TestCase):
    """The shim on its own (no binary): the file format and the in-code API."""

    def run_python(self, code, env=None):
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
        full_env.update(env or {})
        return subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=300, env=full_env,
                              cwd=PROGRAMS)

    def capture_text(self, code):
        """Runs `code` (a %r in it is the capture file's path); returns the file's text."""
        path = os.path.join(tempfile.mkdtemp(prefix="npud-cap-"), "c.npud.json")
        r = self.run_python(code % path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(path) as f:
            return f.read()

    def test_capture_context_manager_writes_the_documented_events(self):
        text = self.capture_text(
            "import torch, npu_doctor\n"
            "x = torch.randn(4, 8)\n"
            "with npu_doctor.capture(%r):\n"
            "    y = (x @ x.t()).permute(1, 0)\n"
            "    z = y.sum().item()\n"
            "    npu_doctor.step()\n")
        lines = text.splitlines()
        self.assertEqual(lines[0], "[")
        self.assertEqual(lines[-1], "]")
        self.assertTrue(all(line.startswith(",") for line in lines[2:-1]))
        events = json.loads(text)
        header = events[0]
        self.assertEqual(header["name"], "npu_doctor")
        self.assertEqual(header["args"]["format"], "npu-doctor-capture")
        names = [e["name"] for e in events]
        self.assertIn("aten::mm", names)
        self.assertIn("aten::permute", names)
        self.assertIn("aten::sum", names)
        self.assertIn("Tensor.item", names)
        self.assertIn("ProfilerStep#0", names)
        mm = next(e for e in events if e["name"] == "aten::mm")
        perm = next(e for e in events if e["name"] == "aten::permute")
        t = next(e for e in events if e["name"] == "aten::t")
        self.assertEqual(mm["args"]["stack"][0][1], 4)
        self.assertEqual(mm["args"]["inputs"][1]["strides"], [1, 8])
        # the permute reads what mm wrote: same tensor id and storage
        self.assertEqual(perm["args"]["inputs"][0]["id"], mm["args"]["outputs"][0]["id"])
        # t() is a view: same storage as its input, new tensor id
        self.assertEqual(t["args"]["outputs"][0]["storage"], t["args"]["inputs"][0]["storage"])
        self.assertNotEqual(t["args"]["outputs"][0]["id"], t["args"]["inputs"][0]["id"])

    def test_stacks_follow_the_caller_of_a_resumed_generator(self):
        """Ops run inside a generator that one module's forward resumes from two lines: each
        op's stack names the line that resumed it (a generator's frame outlives its callers),
        and a loop's repeated op keeps its line."""
        events = json.loads(self.capture_text(
            "import torch, npu_doctor\n"
            "def halves(x):\n"
            "    for _ in range(4):\n"
            "        yield torch.tanh(x)\n"
            "class Net(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        g = halves(x)\n"
            "        a = next(g)\n"
            "        b = next(g)\n"
            "        for _ in range(3):\n"
            "            a = torch.sigmoid(a)\n"
            "        return a + b\n"
            "net = Net()\n"
            "with npu_doctor.capture(%r):\n"
            "    net(torch.randn(4))\n"
            "    npu_doctor.step()\n"))
        tanh = [e["args"]["stack"] for e in events if e["name"] == "aten::tanh"]
        self.assertEqual([s[0][1] for s in tanh], [4, 4])      # inside the generator
        self.assertEqual([s[1][1] for s in tanh], [8, 9])      # resumed from these lines
        sigmoid = [e["args"]["stack"][0][1] for e in events if e["name"] == "aten::sigmoid"]
        self.assertEqual(sigmoid, [11, 11, 11])

    def test_users_sitecustomize_still_runs(self):
        site = tempfile.mkdtemp(prefix="npud-site-")
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write("import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = '1'\n")
        root = os.path.dirname(os.path.dirname(HERE))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(root, "python", "npu_doctor", "_bootstrap"),
                                             os.path.join(root, "python"), site])
        env["NPUD_CAPTURE"] = os.path.join(site, "c.npud.json")
        r = subprocess.run([PYTHON, "-c", "import os; print(os.environ.get('USER_SITECUSTOMIZE_RAN'))"],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(r.stdout.strip(), "1", r.stderr)


if __name__ == "__main__":
    unittest.main()
