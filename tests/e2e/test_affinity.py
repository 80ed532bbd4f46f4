"""End to end: the FUSE00x rules (graph/patterns) on small torch programs captured with
`npu-doctor run`. Each program in affinity_programs/ writes several independently written
variants of one pattern, each marked `# VARIANT <name> <calls per step>` on the line the
finding must point at, and near-misses marked `# NEARMISS <name>` that must not be reported.
Needs torch in the Python that runs the suite (e2e_support.py) and the built binary (NPUD_BINARY)."""

import json
import os
import re
import subprocess
import tempfile
import unittest

from e2e_support import PYTHON, python_has, torch_version

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "affinity_programs")
DEMO = os.path.join(os.environ.get("NPUD_SOURCE_DIR", os.path.join(HERE, "..", "..")), "examples", "tiny_gpt",
                    "train.py")
BINARY = os.environ.get("NPUD_BINARY", "")

HAVE_TORCH = python_has("torch")


def markers(path, kind):
    """{name: (line, calls per step)} for `# VARIANT name n` / `# NEARMISS name` comments."""
    found = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"# %s (\w+)(?: (\d+))?" % kind, line)
            if m:
                found[m.group(1)] = (number, int(m.group(2) or 1))
    return found


def capture(program, *args):
    """Runs `npu-doctor run` (steps 1:3 = two recorded steps) and returns the JSON findings."""
    out = tempfile.mkdtemp(prefix="npud-affinity-")
    report = os.path.join(out, "report.json")
    path = program if os.path.isabs(program) else os.path.join(PROGRAMS, program)
    cmd = [BINARY, "run", "-q", "--steps", "1:3", "--capture-dir", os.path.join(out, "out"), "--format", "json", "-o",
           report, "--fail-on", "never", "--", PYTHON, path, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=os.path.dirname(path))
    if not os.path.exists(report):
        raise AssertionError("no report: rc=%d\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    with open(report) as f:
        return json.load(f)["findings"]


def metric(finding, key):
    metrics = finding.get("metrics", {})
    if isinstance(metrics, dict):
        return metrics.get(key)
    for m in metrics:
        if m.get("key") == key:
            return m.get("value")
    return None


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
class AffinityEndToEnd(unittest.TestCase):
    def check_program(self, program, rule, min_variants=3):
        path = os.path.join(PROGRAMS, program)
        findings = capture(program)
        mine = [f for f in findings if f["id"] == rule and f["location"].get("file") == path]
        lines = {f["location"].get("line"): f for f in mine}
        variants = markers(path, "VARIANT")
        self.assertGreaterEqual(len(variants), min_variants)
        for name, (line, per_step) in variants.items():
            with self.subTest(variant=name):
                self.assertIn(line, lines, "%s variant %s (line %d) not reported; got %s" %
                              (rule, name, line, sorted(lines)))
                f = lines[line]
                self.assertEqual(metric(f, "per_step"), per_step)
                self.assertGreater(metric(f, "ops_removed_per_step"), 0)
                self.assertGreaterEqual(metric(f, "bytes_saved_per_step"), 0)
                self.assertTrue(f.get("fix"))
        for name, (line, _) in markers(path, "NEARMISS").items():
            with self.subTest(near_miss=name):
                for f in findings:
                    if f["id"].startswith("FUSE00") and f["location"].get("file") == path:
                        self.assertNotEqual(f["location"].get("line"), line,
                                            "near-miss %s reported by %s: %s" % (name, f["id"], f["message"]))
        return mine

    def test_rms_norm(self):
        self.check_program("rms_norm.py", "FUSE001")

    def test_layer_norm(self):
        mine = self.check_program("layer_norm.py", "FUSE002")
        for f in mine:
            self.assertNotIn("NpuLayerNorm", f["message"] + f.get("fix", ""))

    def test_rotary(self):
        self.check_program("rotary.py", "FUSE003")

    def test_attention(self):
        mine = self.check_program("attention.py", "FUSE004")
        for f in mine:
            self.assertIn("npu_fusion_attention", f["fix"])

    def test_swiglu(self):
        self.check_program("swiglu.py", "FUSE005")

    def test_gelu(self):
        self.check_program("gelu.py", "FUSE006")

    def test_optimizer_loops(self):
        path = os.path.join(PROGRAMS, "common_affinity.py")
        with open(path) as f:
            step_line = next(n for n, line in enumerate(f, 1) if "opt.step()" in line)
        for kind in ("adamw", "adam", "sgd_momentum"):
            with self.subTest(optimizer=kind):
                found = [f for f in capture("optimizer_loop.py", kind) if f["id"] == "FUSE007"]
                self.assertEqual(len(found), 1, [f["message"] for f in found])
                self.assertEqual(found[0]["location"].get("file"), path)
                self.assertEqual(found[0]["location"].get("line"), step_line)
                self.assertEqual(metric(found[0], "per_step"), 6)   # one chain per parameter
                self.assertIn("foreach=False", found[0]["fix"])
        self.assertEqual([f for f in capture("optimizer_loop.py", "foreach") if f["id"] == "FUSE007"], [])
        # fused=False with foreach unset: torch picks foreach only when both are unset.
        if torch_version() >= (2, 0):
            fused_off = [f for f in capture("optimizer_loop.py", "fused_off") if f["id"] == "FUSE007"]
            self.assertEqual(len(fused_off), 1, [f["message"] for f in fused_off])
            if torch_version() >= (2, 1):
                self.assertIn("fused=False and foreach left unset", fused_off[0]["fix"])
        # The program's own optimizer class: the advice keeps its maths (no other class named).
        lion = [f for f in capture("optimizer_loop.py", "lion") if f["id"] == "FUSE007"]
        self.assertEqual(len(lion), 1, [f["message"] for f in lion])
        self.assertEqual(metric(lion[0], "per_step"), 6)
        self.assertIn("Lion (not a torch.optim class)", lion[0]["fix"])
        self.assertNotIn("AdamW", lion[0]["fix"])
        # Left at its defaults, AdamW runs foreach on NPU from torch 2.1 (torch lists the
        # privateuse1 backend as a foreach device); on torch 1.x/2.0 it runs the loop there too.
        default = [f for f in capture("optimizer_loop.py", "default") if f["id"] == "FUSE007"]
        if torch_version() >= (2, 1):
            self.assertEqual(default, [], [f["message"] for f in default])
        else:
            self.assertEqual(len(default), 1, [f["message"] for f in default])
            self.assertIn("foreach=True", default[0]["fix"])

    def test_sdpa(self):
        """F.scaled_dot_product_attention in four model styles: the calls that miss NPU flash
        attention (float additive mask, 3-D heads) get FUSE008 at their line; the ones that reach
        it get nothing; the ops SDPA runs on the CPU are neither hand-written attention
        (FUSE004) nor fallbacks (FALLBACK002)."""
        if torch_version() < (2, 0):
            self.skipTest("F.scaled_dot_product_attention exists from torch 2.0; this torch is %s.%s"
                          % torch_version())
        path = os.path.join(PROGRAMS, "sdpa.py")
        findings = capture("sdpa.py")
        mine = [f for f in findings if f["location"].get("file") == path]
        sdpa_lines = {f["location"]["line"]: f for f in mine if f["id"] == "FUSE008"}
        expected = markers(path, "SDPA_FIND")
        self.assertEqual(set(sdpa_lines), {line for line, _ in expected.values()},
                         [f["message"] for f in sdpa_lines.values()])
        bert = sdpa_lines[expected["bert_float_mask"][0]]
        self.assertIn("float (additive) mask", bert["message"])
        self.assertIn("attn_mask=(additive_mask == 0)", bert["fix"])
        self.assertNotIn("not 4-D", bert["message"])
        t5 = sdpa_lines[expected["t5_position_bias"][0]]   # the mask carries T5's position bias
        self.assertIn("position bias", t5["message"])
        self.assertIn("pse=attn_mask / scale", t5["fix"])
        self.assertNotIn("(additive_mask == 0)", t5["fix"])   # a bool mask would drop the bias
        flat = sdpa_lines[expected["flat_heads"][0]]
        self.assertIn("not 4-D", flat["message"])
        self.assertIn("transpose(1, 2)", flat["fix"])
        self.assertEqual(metric(flat, "per_step"), 1)
        for f in findings:
            self.assertNotEqual(f["id"], "FUSE004", f["message"])
            if f["id"] == "FALLBACK002":
                self.assertNotIn("softmax", f["message"])
                self.assertNotIn("flash_attention", f["message"])

    def test_scan_and_run_name_each_others_id_for_rotary(self):
        """#30: scan called written-out rotary FUSE102 and run FUSE003; each text output now
        names the other's id."""
        path = os.path.join(PROGRAMS, "rotary.py")
        with tempfile.TemporaryDirectory(prefix="npud-pair-") as tmp:
            run = subprocess.run([BINARY, "run", "-q", "--steps", "1:3", "--capture-dir", tmp, "--fail-on", "never",
                                  "--select", "FUSE003", "--", PYTHON, path], capture_output=True, text=True,
                                 timeout=300, cwd=PROGRAMS)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("FUSE003 rotary-embedding (scan: FUSE102)", run.stdout)
        scan = subprocess.run([BINARY, "scan", "--fail-on", "never", path], capture_output=True, text=True, timeout=60)
        self.assertEqual(scan.returncode, 0, scan.stderr)
        self.assertRegex(scan.stdout, r"FUSE102 \[info\] .*\(run: FUSE003\)\n")

    def test_demo_reports_its_patterns(self):
        if not os.path.exists(DEMO):
            self.skipTest("demo not found at %s" % DEMO)
        findings = capture(DEMO, "--steps", "4")
        ids = {f["id"] for f in findings}
        # The demo writes out RMSNorm, rotary (rotate_half), attention with a written-out softmax,
        # SwiGLU, tanh-GELU, and uses AdamW(foreach=False).
        for rule in ("FUSE001", "FUSE003", "FUSE004", "FUSE005", "FUSE006", "FUSE007"):
            self.assertIn(rule, ids)
        self.assertNotIn("FUSE002", ids)   # no LayerNorm in the demo
        # Ranked for the NPU (docs/cost-model.md): the first finding is a device-time problem,
        # a sync of the step (the planted per-step loss.item() among the first), not a host-op timing.
        ranked = [f for f in findings if f["id"] != "HOT001"]
        self.assertEqual((ranked[0]["id"], ranked[0]["severity"]), ("SYNC001", "error"), ranked[0]["message"])
        item_line = next(n for n, line in enumerate(open(DEMO), 1) if "{loss.item()" in line)
        self.assertIn(("SYNC001", item_line), [(f["id"], f["location"].get("line")) for f in ranked[:3]])
        for f in findings:
            if f["id"].startswith("FUSE00"):
                text = f["message"] + f.get("fix", "")
                for banned in ("NpuLayerNorm", "npu_confusion_transpose", "npu_silu", "npu_bmmV2"):
                    self.assertNotIn(banned, text)


if __name__ == "__main__":
    unittest.main()
