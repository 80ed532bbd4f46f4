"""End to end: what a program sees under `run` and `amp-check` is what it sees without them
(#31): scalar operands, TorchScript, linear algebra bits, the program's own tensor subclasses,
warnings, unusual gradients, odd names. Each program prints what it computed; the test compares
plain with captured output (both torches). Split from test_capture.py so that each ctest
entry stays short on CI's 2 cores."""

import json
import os
import re
import subprocess
import tempfile
import unittest

import e2e_support
from e2e_support import PYTHON
from test_capture import BINARY, HAVE_TORCH, PROGRAMS, Run, plain_run


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
class ProgramUnchanged(unittest.TestCase):
    def test_scalar_operands_give_what_a_plain_run_gives(self):
        """Every op with a Scalar overload, with int/float/bool scalars on int/float/bool tensors,
        inside a recorded step: composite kernels hand the mode wrapped scalars where the schema
        says Tensor (`bitwise_left_shift(ids, 1)` used to end the recording), and torch 1.x
        reads a bool Scalar as an int (`mask & True` came back int64)."""
        code, plain = plain_run("scalar_operand_sweep.py")
        self.assertEqual(code, 0, plain)
        run = Run("scalar_operand_sweep.py")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.stdout, plain)
        self.assertGreater(plain.count("->"), 500)
        self.assertEqual(run.findings("CAPTURE001"), [], run.stderr)

    def amp_check_stdout(self, program, *program_args):
        """amp-check of a program: (exit code, stdout, stderr)."""
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([BINARY, "amp-check", "-q", "--steps", "1:3", "--capture-dir", os.path.join(d, "out"),
                                "--fail-on", "never", "-o", os.path.join(d, "amp.txt"), "--",
                                PYTHON, os.path.join(PROGRAMS, program), *program_args],
                               capture_output=True, text=True, timeout=300, cwd=PROGRAMS)
        return r.returncode, r.stdout, r.stderr

    def test_scalar_operands_keep_their_non_float_results_under_amp_check(self):
        """amp-check emulates low precision for float ops only: every call whose plain result
        is an integer or bool tensor (or an exception) prints the same line under it."""
        code, plain = plain_run("scalar_operand_sweep.py")
        self.assertEqual(code, 0, plain)
        code, amp, err = self.amp_check_stdout("scalar_operand_sweep.py")
        self.assertEqual(code, 0, err)
        self.assertNotIn("capture stopped", err)
        float_line = re.compile(r"-> (float|bfloat|half|complex)")
        kept = [(a, b) for a, b in zip(plain.splitlines(), amp.splitlines()) if not float_line.search(a)]
        self.assertEqual(len(plain.splitlines()), len(amp.splitlines()))
        self.assertGreater(len(kept), 200)
        self.assertEqual([a for a, b in kept if a != b], [])

    def test_torchscript_made_inside_steps_runs_unchanged(self):
        """#31 F-6: torch.jit.trace inside a step (the traced graph's wrapped-number constants
        reach the capture as numbers), a scripted function calling torch.autograd.grad, and
        functions scripted while the capture wraps torch.zeros/full/tensor/bitwise_and."""
        for what in ("trace", "grad", "factories"):
            code, plain = plain_run("torchscript_in_step.py", what)
            self.assertEqual(code, 0, plain)
            run = Run("torchscript_in_step.py", program_args=(what,))
            self.assertEqual((run.code, run.stdout), (0, plain), what + ": " + run.stderr[-2000:])
            self.assertEqual(run.findings("CAPTURE001"), [], what)
            code, amp, err = self.amp_check_stdout("torchscript_in_step.py", what)
            self.assertEqual(code, 0, err[-2000:])
            self.assertEqual(len(re.findall(r"^step \d", amp, re.M)), 5, what + ": " + err[-2000:])
            self.assertNotIn("capture stopped", err, what)

    def test_linear_algebra_gives_the_plain_bits(self):
        """#31 F-15: svdvals, eigvalsh, cond, matrix norms... compute more under any dispatch
        mode (their kernels ask whether a subclass is involved) and moved the last bits."""
        code, plain = plain_run("mode_sensitive_sweep.py")
        self.assertEqual(code, 0, plain)
        code, sensitive = plain_run("mode_sensitive_sweep.py", "sensitive")
        self.assertEqual(code, 0, sensitive)
        self.assertIn("linalg.svdvals", sensitive)   # the class exists on this torch
        run = Run("mode_sensitive_sweep.py")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.stdout, plain)
        with open(run.capture) as f:   # and their ops are still recorded
            names = {e["name"] for e in json.load(f) if e.get("cat") == "aten"}
        self.assertTrue({"aten::_linalg_svd", "aten::linalg_svd", "aten::svd"} & names, sorted(names))

    def test_program_subclasses_see_only_the_programs_calls(self):
        """#31 F-16/F-17: a __torch_function__ subclass never sees the capture's metadata reads,
        a __torch_dispatch__ wrapper subclass never sees amp-check's metric ops (and amp-check
        does not stop on it). Torch 1.x's AccumulateGrad alone detaches a subclass gradient
        once more under any dispatch mode (isTensorSubclassLike): that count may differ there."""
        for what in ("function", "dispatch"):
            code, plain = plain_run("user_subclasses.py", what)
            self.assertEqual(code, 0, plain)
            run = Run("user_subclasses.py", program_args=(what,))
            self.assertEqual(run.code, 0, run.stderr)
            code, amp, err = self.amp_check_stdout("user_subclasses.py", what)
            self.assertEqual(code, 0, err)
            self.assertNotIn("capture stopped", err)
            for got in (run.stdout, amp):
                if what == "dispatch" and e2e_support.torch_version() < (2, 0):
                    strip = lambda text: re.sub(r"calls \d+|\('aten\.detach\.default', \d+\), ", "", text)
                    self.assertEqual(strip(got), strip(plain), what)
                else:
                    self.assertEqual(got, plain, what)

    def test_warnings_point_at_the_programs_lines(self):
        """#31 F-21: warnings raised inside calls the capture wraps (float(t), t.item(),
        torch.tensor(t, device=...)) keep the program's file and line."""
        code, plain = plain_run("warning_sites.py")
        self.assertEqual(code, 0, plain)
        self.assertIn("warning_sites.py:", plain)
        run = Run("warning_sites.py")
        self.assertEqual((run.code, run.stdout), (0, plain), run.stderr)
        code, amp, err = self.amp_check_stdout("warning_sites.py")
        self.assertEqual((code, amp), (0, plain), err)

    def test_amp_check_copes_with_complex_and_sparse_gradients(self):
        """#31 F-22/F-23: a complex parameter's gradient is measured by magnitude (no "discards
        the imaginary part" warning in the program's stderr), sparse gradients are skipped, and
        the capture records every requested step."""
        code, plain = plain_run("amp_unusual_grads.py")
        self.assertEqual(code, 0, plain)
        with tempfile.TemporaryDirectory() as d:
            report = os.path.join(d, "amp.json")
            r = subprocess.run([BINARY, "amp-check", "-q", "--steps", "1:3", "--capture-dir", os.path.join(d, "out"),
                                "--fail-on", "never", "--format", "json", "-o", report, "--",
                                PYTHON, os.path.join(PROGRAMS, "amp_unusual_grads.py")],
                               capture_output=True, text=True, timeout=300, cwd=PROGRAMS)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(report) as f:
                doc = json.load(f)
        self.assertEqual(r.stdout, plain)
        self.assertNotIn("imaginary", r.stderr)
        self.assertNotIn("capture stopped", r.stderr)
        self.assertNotIn("CAPTURE001", json.dumps(doc.get("findings", [])))

    def test_odd_class_names_keep_the_capture_valid(self):
        """#31 F-8: an optimizer class named with a quote, a backslash, a newline."""
        run = Run("odd_class_names.py")
        self.assertEqual((run.code, run.stdout), (0, "ok\n"), run.stderr)
        with open(run.capture) as f:
            events = json.load(f)
        names = [e["name"] for e in events if e.get("cat") == "optimizer_config"]
        self.assertTrue(names and all(n.endswith('Ad"am\\\n<x>') for n in names), names)
        self.assertNotIn('"trampoline"', json.dumps(events))   # the shim's warning trampolines are no frames



if __name__ == "__main__":
    unittest.main()
