"""End to end: `npu-doctor amp-check` on small programs with planted precision problems,
real torch on CPU (fp16/bf16 emulated by the shim, docs/amp-check.md).

Needs torch in the Python that runs the suite (e2e_support.py), the built binary (NPUD_BINARY) and the shim's amp mode
(python/npu_doctor/_amp*.py).
"""

import functools
import glob
import json
import os
import subprocess
import tempfile
import unittest

import e2e_support
from e2e_support import PYTHON, python_has

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "amp_programs")
planted_line = functools.partial(e2e_support.planted_line, PROGRAMS)
BINARY = os.environ.get("NPUD_BINARY", "")
SHIM = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python", "npu_doctor")


HAVE_TORCH = python_has("torch")
HAVE_AMP_SHIM = bool(glob.glob(os.path.join(SHIM, "_amp*.py")))


class AmpRun:
    """One `npu-doctor amp-check` of a program (or another `command` that runs one: `run`):
    exit code, outputs, JSON report. `argv`: the program's own arguments."""

    def __init__(self, program, *npud_args, command="amp-check", argv=()):
        self.dir = tempfile.mkdtemp(prefix="npud-amp-")
        self.report_path = os.path.join(self.dir, "report.json")
        steps = [] if "--steps" in npud_args else ["--steps", "1:2"]
        cmd = [BINARY, command, "-q", *steps, "--capture-dir", os.path.join(self.dir, "out"), "--format", "json",
               "-o", self.report_path, "--fail-on", "never", *npud_args, "--",
               PYTHON, os.path.join(PROGRAMS, program), *argv]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=PROGRAMS)
        self.code, self.stdout, self.stderr = r.returncode, r.stdout, r.stderr
        self.report = None
        if os.path.exists(self.report_path):
            with open(self.report_path) as f:
                self.report = json.load(f)

    def findings(self, rule):
        return [f for f in (self.report or {}).get("findings", []) if f["id"] == rule]

    def dump(self, rule=None):
        return json.dumps(self.findings(rule) if rule else self.report, indent=1)[:4000] + "\n" + self.stderr[-2000:]


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
@unittest.skipUnless(HAVE_AMP_SHIM, "the shim has no amp mode yet (python/npu_doctor/_amp*.py)")
class AmpCheckEndToEnd(unittest.TestCase):
    runs = {}

    @classmethod
    def run_once(cls, program, *args):
        key = (program,) + args
        if key not in cls.runs:
            cls.runs[key] = AmpRun(program, *args)
        return cls.runs[key]

    def test_overflowing_exp_is_the_first_bad_op_at_its_line(self):
        # O2: every float op in fp16 (at O1 the NPU autocast list keeps exp in fp32)
        run = self.run_once("overflow.py", "--level", "O2")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.report["command"], "amp-check")
        hits = run.findings("AMP001")
        self.assertEqual(len(hits), 1, run.dump())
        loc = hits[0]["location"]
        self.assertEqual(loc["op"], "aten::exp", run.dump("AMP001"))
        self.assertEqual(loc["file"], os.path.join(PROGRAMS, "overflow.py"))
        self.assertEqual(loc["line"], planted_line("overflow.py"))
        self.assertEqual(hits[0]["severity"], "error")
        self.assertGreater(hits[0]["metrics"]["local_overflow"], 0)
        keep = [f for f in run.findings("AMP002") if f["location"]["op"] == "aten::exp"]
        self.assertEqual(len(keep), 1, run.dump("AMP002"))
        self.assertEqual(keep[0]["metrics"]["npu_autocast_fp32"], 1)   # torch_npu's list: exp in fp32
        self.assertEqual(run.report["amp"]["drift_start"]["op"], "aten::exp")
        self.assertEqual(run.report["amp"]["dtype"], "float16")
        self.assertTrue(run.report["amp"]["emulated"])
        self.assertIn("the program itself ran in fp16", run.report["amp"]["program_numerics"])

    def test_only_amp_rules_run_by_default(self):
        run = self.run_once("overflow.py", "--level", "O2")
        self.assertTrue(run.report["summary"]["rules_run"])
        self.assertTrue(all(r.startswith("AMP") or r == "CAPTURE001" for r in run.report["summary"]["rules_run"]))

    def test_fp16_safe_model_has_no_drift_finding(self):
        run = self.run_once("safe.py")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertGreater(run.report["amp"]["measured_ops"], 0, run.dump())
        self.assertEqual(run.findings("AMP001"), [], run.dump("AMP001"))
        self.assertEqual(run.findings("AMP002"), [], run.dump("AMP002"))

    def test_zero_mean_linear_layers_are_not_drift(self):
        # Outputs near zero have large relative errors from fp16 rounding alone (several % of
        # elements beyond 5e-3); docs/metrics.md judges drift by cos and new NaN/Inf instead.
        run = self.run_once("safe_zero_mean.py")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertGreater(run.report["amp"]["measured_ops"], 0, run.dump())
        self.assertEqual(run.findings("AMP001"), [], run.dump("AMP001"))
        self.assertEqual(run.findings("AMP002"), [], run.dump("AMP002"))

    def test_fp16_training_without_gradscaler_gets_the_advice(self):
        run = self.run_once("no_scaler.py", "--dtype", "fp16")
        self.assertEqual(run.code, 0, run.stderr)
        hits = run.findings("AMP004")
        self.assertEqual(len(hits), 1, run.dump())
        self.assertIn("GradScaler", hits[0]["fix"])
        scale = run.findings("AMP003")
        self.assertEqual(len(scale), 1, run.dump("AMP003"))
        self.assertGreater(scale[0]["metrics"]["underflow_share"], 0.01)
        suggested = scale[0]["metrics"]["suggested_scale"]
        self.assertEqual(suggested, 2 ** round(__import__("math").log2(suggested)))   # a power of two

    @unittest.skipUnless(python_has("transformers") and python_has("accelerate"),
                         "transformers/accelerate are not installed (tests/corpus/library/requirements.txt)")
    def test_trainer_without_fp16_gets_the_trainer_setting(self):
        """A Trainer user has no loss.backward() to wrap in a GradScaler: AMP004 (and AMP003's
        unscaled advice) are anchored at the program's trainer.train() line with accelerate's
        optimizer step as the site, and name TrainingArguments(fp16=True)."""
        run = self.run_once("trainer_fp32.py", "--dtype", "fp16")
        self.assertEqual(run.code, 0, run.stderr)
        for rule in ("AMP004", "AMP003"):
            hits = run.findings(rule)
            self.assertEqual(len(hits), 1, run.dump())
            loc = hits[0]["location"]
            self.assertEqual((os.path.basename(loc["file"]), loc["line"]),
                             ("trainer_fp32.py", planted_line("trainer_fp32.py")), run.dump(rule))
            self.assertEqual(loc["library"]["package"], "accelerate", run.dump(rule))
            self.assertIn("TrainingArguments(fp16=True)", hits[0]["fix"])
            self.assertNotIn("scaler.scale(loss).backward()", hits[0]["fix"])

    def test_documented_gradscaler_loop_is_not_reported(self):
        run = self.run_once("with_scaler.py", "--steps", "1:3")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertGreaterEqual(run.report["amp"]["grad_scaler"]["step"], 2, run.dump())
        self.assertEqual(run.findings("AMP004"), [], run.dump("AMP004"))
        self.assertEqual(run.findings("AMP005"), [], run.dump("AMP005"))

    def test_bf16_needs_no_gradscaler(self):
        run = self.run_once("no_scaler.py", "--dtype", "bf16")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.report["amp"]["dtype"], "bfloat16", run.dump())
        self.assertEqual(run.findings("AMP004"), [], run.dump("AMP004"))
        self.assertEqual(run.findings("AMP003"), [], run.dump("AMP003"))

    # --- #16: realistic programs, none of the false findings -----------------------------------
    def test_gpt_with_gradscaler_gets_no_gradient_advice_and_nothing_at_backward(self):
        """nanoGPT-style fp16 + GradScaler: gradient ops underflowed in the backward pass and
        were reported as "keep bmm / _to_copy in fp32" at the backward() line; the scaler the
        program already uses covers them."""
        run = self.run_once("gpt_scaler.py")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertGreater(run.report["amp"]["measured_ops"], 100, run.dump())
        for rule in ("AMP001", "AMP002", "AMP003", "AMP004", "AMP005", "AMP006"):
            self.assertEqual(run.findings(rule), [], run.dump(rule))
        backward_line = planted_line("gpt_scaler.py", "# BACKWARD")
        for f in (run.report or {}).get("findings", []):
            self.assertNotEqual(f["location"].get("line"), backward_line, run.dump())

    def test_in_place_activations_measure_like_out_of_place_ones(self):
        """DCGAN's LeakyReLU(inplace=True): the local run started from the already-mutated
        shadow, so leaky_relu_ showed cos 0.989 where leaky_relu shows none."""
        run = self.run_once("dcgan_inplace.py")
        self.assertEqual(run.code, 0, run.stderr)
        for rule in ("AMP001", "AMP002", "AMP006"):
            self.assertEqual(run.findings(rule), [], run.dump(rule))
        capture = os.path.join(run.dir, "out", "capture.npud.json")
        cos = []
        with open(capture) as f:
            for line in f:
                if '"cat":"aten"' in line and '"aten::leaky_relu_"' in line and '"bwd"' not in line:
                    ev = json.loads(line.strip().lstrip(","))
                    cos.append(ev["args"]["numeric"]["local"]["cos"])
        self.assertTrue(cos, "no leaky_relu_ recorded")
        self.assertGreater(min(cos), 0.9999, cos)

    def test_dropout_mask_memory_is_never_measured(self):
        """GPT-2 with dropout on: dropout's mask buffer is empty_like's uninitialised memory
        until bernoulli_ fills it; measuring it gave AMP001/AMP002 errors that changed from run to
        run of the same seeded program."""
        run = self.run_once("gpt2_dropout.py")
        self.assertEqual(run.code, 0, run.stderr)
        for rule in ("AMP001", "AMP002"):
            self.assertEqual(run.findings(rule), [], run.dump(rule))
        with open(os.path.join(run.dir, "out", "capture.npud.json")) as f:
            events = [e for e in json.load(f) if e.get("cat") == "aten"]
        undefined = [e["name"] for e in events if e["name"] in ("aten::empty_like", "aten::empty.memory_format")
                     and "numeric" in e["args"]]
        self.assertEqual(undefined, [])
        views = [e["name"] for e in events if e["name"] in ("aten::view", "aten::transpose.int", "aten::detach")
                 and "numeric" in e["args"]]
        self.assertEqual(views, [])

    @unittest.skipUnless(python_has("transformers"), "transformers is not installed (tests/corpus/library/requirements.txt)")
    def test_transformers_bert_dropout_is_not_measured(self):
        """BERT from transformers in train mode: its dropout masks are not numerics either."""
        run = self.run_once("bert_dropout_hf.py", "--dtype", "fp16")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.findings("CAPTURE001"), [], run.dump("CAPTURE001"))
        for rule in ("AMP001", "AMP002"):
            self.assertEqual([f for f in run.findings(rule) if f["severity"] == "error"], [], run.dump(rule))
        with open(os.path.join(run.dir, "out", "capture.npud.json")) as f:
            events = [e for e in json.load(f) if e.get("cat") == "aten"]
        undefined = [e["name"] for e in events if e["name"].startswith(("aten::empty", "aten::new_empty"))
                     and "numeric" in e["args"]]
        self.assertEqual(undefined, [])

    def test_bce_loss_under_autocast_is_an_error(self):
        run = self.run_once("bce_loss.py")
        self.assertEqual(run.code, 0, run.stderr)
        hits = run.findings("AMP006")
        self.assertEqual(len(hits), 1, run.dump())
        self.assertEqual(hits[0]["severity"], "error")
        self.assertEqual(hits[0]["location"]["op"], "aten::binary_cross_entropy")
        self.assertEqual(hits[0]["location"]["line"], planted_line("bce_loss.py"))
        self.assertIn("BCEWithLogitsLoss", hits[0]["fix"])

    def test_bf16_llama_with_gradient_accumulation_is_clean(self):
        """bf16 flagged the fp32 gradient-accumulation add_ into .grad (autocast keeps
        parameters, and so their .grad sums, in fp32)."""
        run = self.run_once("llama_bf16.py", "--dtype", "bf16")
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual(run.report["amp"]["dtype"], "bfloat16")
        self.assertEqual(run.report.get("findings", []), [], run.dump())

    def test_steps_inside_a_closure_run_in_low_precision(self):
        # Issue 41: Lightning and LBFGS run forward and backward inside optimizer.step(closure);
        # the shim turned emulation off there, and the report still said "ran in bf16".
        for style in ("positional", "keyword"):
            with self.subTest(style):
                run = AmpRun("closure_steps.py", "--dtype", "bf16", argv=(style,))
                self.assertEqual(run.code, 0, run.stderr)
                amp = run.report["amp"]
                self.assertGreater(amp["lowp_ops"], 0, run.dump())
                self.assertIn("the program itself ran in bf16", amp["program_numerics"])
                self.assertEqual(run.findings("CAPTURE001"), [], run.dump("CAPTURE001"))
                # the gradients the closure made are read after it ran (before it, zero_grad's None)
                self.assertGreater(amp["grads"]["nonzero"], 0, amp["grads"])

    def test_ops_on_parameter_gradients_run_in_fp32(self):
        # Issue 41 item 5: a parameter's .grad is fp32 under real autocast, so clipping and the
        # norms after backward() run in fp32; the emulation ran them in fp16 (the gradient of an
        # fp16 matmul kept its low-precision mark) and counted underflows at clipping's mul_.
        for style in ("norm", "value", "by_hand"):
            with self.subTest(style):
                run = AmpRun("clipped_grads.py", "--dtype", "fp16", "--steps", "1:3", argv=(style,))
                self.assertEqual(run.code, 0, run.stderr)
                self.assertGreater(run.report["amp"]["lowp_ops"], 0, run.dump())   # the forward still is
                with open(os.path.join(run.dir, "out", "capture.npud.json")) as f:
                    events = [e for e in json.load(f) if e.get("cat") == "aten"]
                # After backward and outside the model: the gradients' ops and the optimizer's.
                outside = [e for e in events if "numeric" in e["args"] and "bwd" not in e["args"]
                           and not e["args"].get("module")]
                self.assertTrue(outside, "no op outside the model was measured")
                lowp = sorted({e["name"] for e in outside if e["args"]["numeric"]["lowp"]})
                self.assertEqual(lowp, [], run.dump())
                for rule in ("AMP001", "AMP002"):
                    self.assertEqual(run.findings(rule), [], run.dump(rule))

    def test_lists_file_comes_from_the_knowledge_base(self):
        run = self.run_once("safe.py")
        lists = os.path.join(run.dir, "out", "amp_lists.tsv")
        with open(lists) as f:
            rows = dict(line.rstrip("\n").split("\t") for line in f)
        self.assertEqual(rows.get("aten::mm"), "lower")
        self.assertEqual(rows.get("aten::exp"), "fp32")


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
@unittest.skipUnless(HAVE_AMP_SHIM, "the shim has no amp mode yet (python/npu_doctor/_amp*.py)")
class AmpCheckSeesWhatRunSees(unittest.TestCase):
    """amp-check and `run` record ops through one dispatch core: a composite op's kernel ops
    (logcumsumexp's aten::_logcumsumexp, which no 2.1.0 torch_npu wheel has) are in both
    captures, and FALLBACK002 says the same thing at the same line, whichever way the program
    spells the call (amp-check's own copy of the mode once recorded logcumsumexp whole)."""

    def fallbacks(self, command, style):
        r = AmpRun("running_logsumexp.py", "--torch-npu", "2.1.0.post8", "--select", "FALLBACK002",
                   command=command, argv=("--style", style))
        self.assertEqual(r.code, 0, r.stderr)
        return [(f["location"].get("op"), f["location"].get("file"), f["location"].get("line"), f["severity"],
                 f["fix"].splitlines()[0]) for f in r.findings("FALLBACK002")]

    def check(self, style):
        line = planted_line("running_logsumexp.py", "# STYLE: " + style)
        under_run = self.fallbacks("run", style)
        self.assertEqual([(op, at) for op, _, at, _, _ in under_run], [("aten::_logcumsumexp", line)], under_run)
        self.assertEqual(under_run[0][1], os.path.join(PROGRAMS, "running_logsumexp.py"))
        self.assertEqual(self.fallbacks("amp-check", style), under_run)

    def test_a_module_calling_the_tensor_method(self):
        self.check("method")

    def test_a_step_calling_the_torch_function(self):
        self.check("function")


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class AmpCheckUsage(unittest.TestCase):
    """No torch needed: bad usage and bad input."""

    def test_bad_dtype_is_a_usage_error(self):
        r = subprocess.run([BINARY, "amp-check", "--dtype", "fp8", "--", PYTHON, "-c", "pass"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 2)

    def test_program_without_torch_leaves_no_capture(self):
        out = tempfile.mkdtemp(prefix="npud-amp-")
        r = subprocess.run([BINARY, "amp-check", "-q", "--capture-dir", out, "--", PYTHON, "-c", "print('hi')"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("no capture", r.stderr)
        self.assertTrue(os.path.exists(os.path.join(out, "amp_lists.tsv")))

    def test_malformed_amp_capture_names_the_offset(self):
        bad = os.path.join(HERE, "..", "data", "amp", "bad", "cos_string.npud.json")
        r = subprocess.run([BINARY, "analyze", bad], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        with open(bad) as f:
            offset = f.read().index('"abc"')
        self.assertIn("byte %d" % offset, r.stderr)


if __name__ == "__main__":
    unittest.main()
