"""The capture shim's amp-check mode (python/npu_doctor/_amp*.py): fp16/bf16 emulation on
CPU with an fp32 shadow of every op, the per-op metrics, the capture file's amp records.

Needs torch in the Python that runs the suite (Debian's 1.13 CPU is enough); not the binary.
In-process tests import npu_doctor from python/ of this checkout; the capture-file tests run
programs in amp_programs/ the way `npu-doctor amp-check` does (bootstrap on PYTHONPATH and
NPUD_* variables).
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("NPUD_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(SOURCE, "python")
BOOTSTRAP = os.path.join(PYDIR, "npu_doctor", "_bootstrap")
PROGRAMS = os.path.join(HERE, "amp_programs")
PYTHON = os.environ.get("NPUD_TEST_PYTHON") or sys.executable

if PYDIR not in sys.path:
    sys.path.insert(0, PYDIR)

try:
    import torch
    import torch.nn.functional as F
    HAVE_TORCH = True
except Exception:   # the suite skips; the module must still import
    HAVE_TORCH = False

if HAVE_TORCH:
    import npu_doctor
    from npu_doctor import _amp_metrics

    # an explicit lists file, as the CLI passes it
    LISTS = os.path.join(tempfile.mkdtemp(prefix="npud-amp-lists-"), "lists.tsv")
    with open(LISTS, "w") as f:
        f.write("aten::mm\tlower\naten::addmm\tlower\naten::bmm\tlower\naten::linear\tlower\n"
                "aten::exp\tfp32\naten::softmax.int\tfp32\naten::sum\tfp32\naten::index_put\tpromote\n")


def marked_line(program, marker="# PLANTED"):
    with open(os.path.join(PROGRAMS, program)) as f:
        for number, line in enumerate(f, 1):
            if marker in line:
                return number
    raise AssertionError("no %s marker in %s" % (marker, program))


def run_amp_program(program, dtype="fp16", level="O1", steps="all", extra_env=None):
    """Runs a program as `npu-doctor amp-check` does; returns (completed process, events)."""
    out_dir = tempfile.mkdtemp(prefix="npud-amp-")
    capture = os.path.join(out_dir, "capture.npud.json")
    env = dict(os.environ)
    env.update({"PYTHONPATH": BOOTSTRAP + os.pathsep + PYDIR, "NPUD_CAPTURE": capture, "NPUD_STEPS": steps,
                "NPUD_AMP": dtype, "NPUD_AMP_LEVEL": level, "NPUD_AMP_EMULATE": "1", "NPUD_AMP_LISTS": LISTS,
                "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra_env or {})
    r = subprocess.run([PYTHON, os.path.join(PROGRAMS, program)], capture_output=True, text=True,
                       timeout=300, env=env, cwd=PROGRAMS)
    events = None
    if os.path.exists(capture):
        with open(capture) as f:
            events = json.load(f)
    return r, events


def numeric_ops(events):
    return [e for e in events if e.get("cat") == "aten" and "numeric" in e.get("args", {})]


@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % sys.executable)
class Metrics(unittest.TestCase):
    """docs/metrics.md against numbers worked out by hand."""

    def m(self, r, t):
        return _amp_metrics.metrics(torch.tensor(r, dtype=torch.float32), torch.tensor(t, dtype=torch.float32))

    def test_errors_on_finite_pairs(self):
        m = self.m([1.0, 2.0, 0.0, -4.0], [1.0, 2.5, 1e-3, -4.0])
        self.assertEqual((m["n"], m["finite"]), (4, 4))
        self.assertAlmostEqual(m["max_abs"], 0.5, places=7)
        # |1e-3 - 0| / 2^-24 = 16777.216 dominates 0.5 / 2
        self.assertAlmostEqual(m["max_rel"], float(torch.tensor(1e-3, dtype=torch.float32)) * 2 ** 24, places=2)
        self.assertAlmostEqual(m["rmse"], math.sqrt((0.25 + float(torch.tensor(1e-3)) ** 2) / 4), places=7)
        dot = 1 + 5 + 0 + 16
        cos = dot / (math.sqrt(1 + 4 + 16) * math.sqrt(1 + 6.25 + float(torch.tensor(1e-3)) ** 2 + 16))
        # float32 sums (docs/metrics.md): cos within a few 1e-9 of the exact value
        self.assertAlmostEqual(m["cos"], cos, places=8)
        self.assertAlmostEqual(m["gt_1e3"], 0.5)    # elements 1 (0.25) and 2 (16777)
        self.assertAlmostEqual(m["gt_5e3"], 0.5)
        self.assertEqual((m["nan_ref"], m["nan"], m["inf_ref"], m["inf"], m["overflow"], m["underflow"]),
                         (0, 0, 0, 0, 0, 0))

    def test_share_thresholds_are_strict(self):
        m = self.m([1.0, 1.0, 1.0, 1.0], [1.0, 1.002, 1.006, 1.0])
        self.assertAlmostEqual(m["gt_1e3"], 0.5)
        self.assertAlmostEqual(m["gt_5e3"], 0.25)

    def test_non_finite_counts_overflow_underflow(self):
        inf, nan = float("inf"), float("nan")
        m = self.m([70000.0, 1.0, nan, 3.0, 1e-8, 5.0], [inf, 1.0, 2.0, nan, 0.0, 70000.0])
        self.assertEqual(m["n"], 6)
        self.assertEqual(m["finite"], 3)      # elements 1, 4, 5
        self.assertEqual((m["nan_ref"], m["nan"], m["inf_ref"], m["inf"]), (1, 1, 0, 1))
        self.assertEqual(m["overflow"], 2)    # inf where ref finite; 70000 > 65504 where ref finite
        # ref != 0 and target == 0: 1e-8 -> 0 (a NaN reference is != 0 but its target 2.0 is not 0)
        self.assertEqual(m["underflow"], 1)
        self.assertAlmostEqual(m["max_abs"], 69995.0, places=3)

    def test_cosine_special_cases_and_empty(self):
        self.assertEqual(self.m([0.0, 0.0], [0.0, 0.0])["cos"], 1.0)
        self.assertEqual(self.m([0.0, 0.0], [1.0, 0.0])["cos"], 0.0)
        self.assertIsNone(self.m([float("nan")], [1.0])["cos"])
        e = self.m([], [])
        self.assertEqual((e["n"], e["cos"], e["max_abs"], e["rmse"]), (0, 1.0, 0.0, 0.0))

    def test_identity_matches_full_metrics(self):
        x = torch.tensor([1.0, -70000.0, float("inf"), float("nan"), 0.0])
        full = _amp_metrics.metrics(x, x)
        ident = _amp_metrics.identity_metrics(x)
        for k in _amp_metrics.KEYS:
            self.assertEqual(full[k], ident[k], k)

    def test_json_is_strict(self):
        text = _amp_metrics.metrics_json(self.m([float("nan")], [1.0]))
        self.assertEqual(json.loads(text)["cos"], None)


@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % sys.executable)
class InProcess(unittest.TestCase):

    def test_safe_model_stays_within_thresholds(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
        with torch.no_grad():   # no cancellation: every sum keeps its relative rounding error
            for p in model.parameters():
                p.abs_()
        x = torch.rand(16, 32)
        for dtype in ("fp16", "bf16"):
            res = npu_doctor.amp_check(model, (x,), dtype=dtype, level="O1", lists=LISTS)
            self.assertGreater(len(res.records), 0)
            self.assertTrue(any(r.lowp for r in res.records))
            for r in res.records:
                d = r.drift
                self.assertGreaterEqual(d["cos"], 0.99, (dtype, r))
                self.assertEqual(d["nan"] + d["inf"], d["nan_ref"] + d["inf_ref"], (dtype, r))
                if dtype == "fp16":   # bf16 keeps 8 bits: its share beyond 5e-3 is larger by design
                    self.assertLessEqual(d["gt_5e3"], 0.01, (dtype, r))
                    self.assertEqual(d["overflow"], 0)
            self.assertTrue(torch.equal(res.shadow_output, model(x)))
            self.assertFalse(torch.equal(res.output, res.shadow_output))   # low precision did run

    def test_view_and_inplace_sequence_shadow_is_exact_and_rng_untouched(self):
        def program(x, w):
            y = x @ w                               # low precision
            z = y.t().contiguous()
            z[0:2].add_(1.0)                        # in-place on a view
            v = z[:, 1:3]
            v.mul_(2.0)
            z.index_put_((torch.tensor([0, 2]),), torch.ones(z.shape[1]) * 3)
            w.mul_(0.5)                             # in-place on a tensor first seen (aliased)
            d = F.dropout(z, p=0.5, training=True)  # random
            s = d.transpose(0, 1)[1:].sum(0)
            u = s.clone()
            u.unsqueeze(0).expand(3, -1)[0].sub_(0.25)
            return u + (w @ torch.ones(w.shape[1])).sum() + torch.rand(1)

        torch.manual_seed(1)
        x0, w0 = torch.randn(6, 5), torch.randn(5, 4)
        torch.manual_seed(7)
        plain = program(x0.clone(), w0.clone())
        after_plain = torch.rand(8)
        torch.manual_seed(7)
        w = w0.clone()
        res = npu_doctor.amp_check(program, (x0.clone(), w), dtype="fp16", level="O1", lists=LISTS)
        after_amp = torch.rand(8)
        self.assertTrue(torch.equal(res.shadow_output, plain), (res.shadow_output, plain))
        self.assertTrue(torch.equal(after_amp, after_plain))
        self.assertFalse(torch.equal(res.output, plain))
        self.assertTrue(torch.equal(w, w0 * 0.5))   # the program's own in-place update happened once
        names = [r.name for r in res.records]
        self.assertTrue("aten::bernoulli_.float" in names or "aten::native_dropout" in names, names)

    def test_backward_shadow_matches_fp32_gradients(self):
        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
        x = torch.randn(4, 8)
        ref = model(x).pow(2).mean()
        res = npu_doctor.amp_check(model, (x,), loss_fn=lambda o: o.pow(2).mean(), lists=LISTS)
        self.assertTrue(torch.equal(res.shadow_loss, ref.detach()))
        backward = [r for r in res.records if r.name == "aten::mm"]
        self.assertGreaterEqual(len(backward), 2)       # the backward's matmuls were mirrored too
        self.assertTrue(all(r.lowp for r in backward))

    def test_o2_overflow_is_first_at_exp_with_local_inf(self):
        def program(x):
            return torch.exp(x + 11.0).sum()
        x = torch.rand(4, 8)
        res = npu_doctor.amp_check(program, (x,), level="O2", lists=LISTS)
        first = res.first_overflow
        self.assertEqual(first.name, "aten::exp")
        self.assertGreater(first.local["overflow"], 0)
        self.assertGreater(first.local["inf"], first.local["inf_ref"])
        self.assertTrue(first.lowp)
        # O1: exp is on the fp32 list, nothing overflows
        res1 = npu_doctor.amp_check(program, (x,), level="O1", lists=LISTS)
        self.assertTrue(all(r.local["inf"] == 0 for r in res1.records))

    def test_shim_fault_never_reaches_the_program(self):
        from npu_doctor import _amp, _frames
        saved = _amp.metrics

        def broken(*a, **k):
            raise RuntimeError("planted shim bug")

        # the planted bug stands for the shim's own code: raised in this file's code, it would be
        # the program's exception, which the shim passes on (issue 42, _errors.py)
        _frames.never_the_users(broken.__code__)
        _amp.metrics = broken
        try:
            torch.manual_seed(0)
            model = torch.nn.Linear(4, 4)
            x = torch.randn(2, 4)
            res = npu_doctor.amp_check(model, (x,), lists=LISTS)
        finally:
            _amp.metrics = saved
        self.assertEqual(tuple(res.output.shape), (2, 4))
        # after the fault the capture stopped and the program went on with torch's own ops
        self.assertTrue(torch.isfinite(model(x)).all())


@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % sys.executable)
class CaptureFile(unittest.TestCase):
    runs = {}

    @classmethod
    def run_once(cls, key, *args, **kwargs):
        if key not in cls.runs:
            cls.runs[key] = run_amp_program(*args, **kwargs)
        return cls.runs[key]

    def test_o2_exp_overflow_named_at_its_line(self):
        r, events = self.run_once("o2", "overflow_o2.py", level="O2", steps="1:2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("done 2", r.stdout)
        header = events[0]["args"]
        self.assertEqual(header["mode"], "amp-check")
        self.assertEqual(header["amp"]["dtype"], "float16")
        self.assertEqual(header["amp"]["level"], "O2")
        self.assertTrue(header["amp"]["emulated"])
        self.assertEqual(header["amp"]["metric_dtype"], "float32")
        self.assertIn("lists", header["amp"])
        ops = numeric_ops(events)
        first = next(e for e in ops if e["args"]["numeric"]["local"]["overflow"] > 0
                     or e["args"]["numeric"]["drift"]["overflow"] > 0)
        self.assertEqual(first["name"], "aten::exp")
        self.assertEqual(first["args"]["step"], 1)
        local = first["args"]["numeric"]["local"]
        self.assertGreater(local["inf"], local["inf_ref"])
        self.assertTrue(first["args"]["numeric"]["lowp"])
        self.assertEqual(first["args"]["numeric"]["dtype"], "float16")
        top = first["args"]["stack"][0]
        self.assertEqual((top[0], top[1]), (os.path.join(PROGRAMS, "overflow_o2.py"), marked_line("overflow_o2.py")))
        grads = [e for e in events if e.get("cat") == "amp_grad"]
        self.assertEqual([g["args"]["step"] for g in grads], [1, 2])
        g = grads[0]["args"]
        self.assertEqual(g["params"], 2)
        self.assertEqual(g["elements"], 8 * 8 + 8)
        self.assertEqual(len(g["log2_hist"]), 57)
        self.assertEqual(sum(g["log2_hist"]) + g["zero"] + g["nonfinite"], g["elements"])
        self.assertEqual(events[-1]["name"], "npu_doctor_end")

    def test_time_step_loop_is_measured_at_sparse_calls(self):
        """40 calls of the Linear at one line per step: calls 1-4, 8, 16 and 32 are recorded;
        `calls` makes their weights add up to the calls up to the last record (32)."""
        r, events = self.run_once("lstm", "lstm_cell_loop.py", steps="1:2")
        self.assertEqual(r.returncode, 0, r.stderr)
        line = marked_line("lstm_cell_loop.py", "# LOOP")
        for step in (1, 2):
            at_line = [e for e in numeric_ops(events) if e["args"]["step"] == step
                       and e["args"]["stack"] and e["args"]["stack"][0][1] == line
                       and e["name"] == "aten::addmm" and not e["args"].get("bwd")]
            weights = [e["args"]["numeric"].get("calls", 1) for e in at_line]
            self.assertEqual(weights, [1, 1, 1, 1, 4, 8, 16], weights)
        # grows with distinct ops: far fewer aten events than calls (about 40 x 2 cells x ops)
        aten = [e for e in events if e.get("cat") == "aten" and e["args"]["step"] == 1]
        self.assertLess(len(aten), 1200)

    def test_calls_are_counted_per_line(self):
        """The same op at two lines of one module's loop, six calls each per step: each line
        is its own site, measured at its calls 1-4."""
        r, events = self.run_once("two_lines", "two_lines_loop.py", steps="1:1")
        self.assertEqual(r.returncode, 0, r.stderr)
        for marker in ("# INPUT", "# HIDDEN"):
            line = marked_line("two_lines_loop.py", marker)
            at_line = [e for e in numeric_ops(events) if e["name"] == "aten::mm" and not e["args"].get("bwd")
                       and e["args"]["stack"] and e["args"]["stack"][0][1] == line]
            self.assertEqual([e["args"]["numeric"].get("calls", 1) for e in at_line], [1, 1, 1, 1], marker)

    def test_o1_matmul_overflow_named_at_its_line(self):
        r, events = self.run_once("o1", "overflow_o1.py", level="O1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("done False", r.stdout)    # the emulated fp16 matmul overflowed in the program
        ops = numeric_ops(events)
        first = next(e for e in ops if e["args"]["numeric"]["local"]["overflow"] > 0)
        self.assertEqual(first["name"], "aten::mm")
        self.assertEqual(first["args"]["stack"][0][1], marked_line("overflow_o1.py"))
        self.assertEqual(first["args"]["numeric"]["drift"]["overflow"], 16)

    def test_every_float_compute_op_carries_numeric(self):
        r, events = self.run_once("api", "train_amp_api.py", level="O1", steps="1:2")
        self.assertEqual(r.returncode, 0, r.stderr)
        for e in events:
            if e.get("cat") != "aten" or e["name"] not in ("aten::addmm", "aten::relu", "aten::mm"):
                continue
            n = e["args"]["numeric"]
            self.assertEqual(set(n["local"]), set(_amp_metrics.KEYS))
            self.assertEqual(set(n["drift"]), set(_amp_metrics.KEYS))
            self.assertIn(n["dtype"], ("float16", "float32"))

    def test_gradscaler_and_autocast_calls_recorded(self):
        r, events = self.run_once("api", "train_amp_api.py", level="O1", steps="1:2")
        self.assertEqual(r.returncode, 0, r.stderr)
        api = [e for e in events if e.get("cat") == "amp_api"]
        names = [e["name"] for e in api]
        self.assertEqual(names.count("GradScaler.scale"), 2, names)
        self.assertEqual(names.count("GradScaler.step"), 2, names)
        self.assertEqual(names.count("GradScaler.update"), 2, names)
        self.assertNotIn("GradScaler.unscale_", names)   # step's own unscale_ is torch's, not the user's
        scale = next(e for e in api if e["name"] == "GradScaler.scale")
        self.assertEqual(scale["args"]["stack"][0][1], marked_line("train_amp_api.py", "# SCALE"))
        self.assertEqual(scale["args"]["step"], 1)
        auto = [e for e in api if e["name"] == "autocast"]
        self.assertEqual(len(auto), 2)
        self.assertEqual(auto[0]["args"]["stack"][0][1], marked_line("train_amp_api.py", "# AUTOCAST"))
        self.assertFalse(auto[0]["args"]["enabled"])

    def test_program_output_unchanged_by_fault_in_amp_mode(self):
        r, events = run_amp_program("train_amp_api.py", steps="1:2", extra_env={"NPUD_TEST_FAULT": "40"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("loss"), 4)
        self.assertIn("capture stopped after an internal error", r.stderr)
        self.assertTrue(any(e.get("name") == "npu_doctor_error" for e in events))


if __name__ == "__main__":
    unittest.main()
