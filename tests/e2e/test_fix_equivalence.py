"""The fused-op fixes npu-doctor prints compute what the matched code computed (issue 41).

`run` on programs/norm_variants.py: RMSNorm written five ways (transformers' Llama, Meta's
llama, Gemma's `(1 + weight)`, a tutorial's divide-by-root, a weightless qk-norm) and LayerNorm
five ways (early BERT's, no affine, a zero-centred `(1 + weight)` gamma, weight without bias,
the Annotated Transformer's `(x - mean) / (std + eps)`). Each FUSE001/FUSE002 fix's code is
executed (torch_npu's ops by a reference written from their documented formulas, torch's own
F.layer_norm as it is) on random inputs and random weights, and compared with the module's own
output. A template that does not fit a form fails here instead of zeroing a user's model (the
Gemma weight starts at 0: `npu_rms_norm(x, self.weight)` would output zeros); a form no fused op
computes must get no code.

Needs the built binary (NPUD_BINARY) and torch in the Python that runs the test."""

import json
import os
import re
import subprocess
import sys
import tempfile
import types
import unittest

from e2e_support import PYTHON, python_has

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
BINARY = os.environ.get("NPUD_BINARY", "")
HAVE_TORCH = python_has("torch")


class ReferenceTorchNpu:
    """torch_npu's fused ops as their documentation states them, in plain torch."""

    @staticmethod
    def npu_rms_norm(x, gamma, epsilon=1e-6):
        # rstd = 1 / sqrt(mean(x^2) + eps) over the trailing dims gamma spans; y = x * rstd * gamma
        import torch
        dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
        rstd = torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + epsilon)
        return x * rstd * gamma, rstd


def fix_code(fix):
    """The code of a FUSE00x fix: its lines after the "Use API:" line, comments left out."""
    lines = fix.split("\n")[1:]
    return "\n".join(l for l in lines if l.strip() and not l.lstrip().startswith("#"))


def norm_lines():
    """{line: norm name} of the `# NORM: name` marks in programs/norm_modules.py."""
    marks = {}
    with open(os.path.join(PROGRAMS, "norm_modules.py")) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"# NORM: (\w+)", line)
            if m:
                marks[number] = m.group(1)
    return marks


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "no torch in %s" % PYTHON)
class RmsNormFixes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = tempfile.mkdtemp(prefix="npud-fixeq-")
        report = os.path.join(out, "report.json")
        r = subprocess.run([BINARY, "run", "-q", "--steps", "1:2", "--capture-dir", os.path.join(out, "capture"),
                            "--format", "json", "-o", report, "--fail-on", "never", "--select", "FUSE001,FUSE002", "--",
                            PYTHON, os.path.join(PROGRAMS, "norm_variants.py")],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise AssertionError(r.stderr)
        with open(report) as f:
            findings = json.load(f)["findings"]
        marks = norm_lines()
        cls.fixes = {}   # norm name -> its finding's fix
        for f in findings:
            if f["location"]["file"].endswith("norm_modules.py") and f["location"]["line"] in marks:
                cls.fixes[marks[f["location"]["line"]]] = f["fix"]
        # Imported here, in the test's own Python, to build the same modules with random weights.
        sys.path.insert(0, PROGRAMS)
        import norm_modules
        cls.modules = norm_modules

    def check(self, name, fix):
        """(advised output, module output) for norm `name` with random weights."""
        import torch
        torch.manual_seed(1)
        cls, args, weight_attr, bias_attr, eps_attr = self.modules.NORMS[name]
        module = cls(*args)
        with torch.no_grad():
            for p in module.parameters():
                p.normal_()
        x = torch.randn(4, 8, 16)
        expected = module(x)
        owner = types.SimpleNamespace(weight=getattr(module, weight_attr) if weight_attr else None,
                                      bias=getattr(module, bias_attr) if bias_attr else None,
                                      eps=getattr(module, eps_attr))
        scope = {"torch": torch, "torch_npu": ReferenceTorchNpu, "x": x, "self": owner}
        with torch.no_grad():
            exec(fix_code(fix), scope)
        return scope["y"], expected

    def test_every_style_is_found(self):
        self.assertEqual(sorted(self.fixes), sorted(self.modules.NORMS))

    def test_each_fix_computes_what_its_module_computes(self):
        import torch
        for name, fix in sorted(self.fixes.items()):
            if name in self.modules.NO_CODE:
                continue
            with self.subTest(name):
                advised, expected = self.check(name, fix)
                self.assertEqual(advised.shape, expected.shape)
                self.assertTrue(torch.allclose(advised, expected, rtol=1e-5, atol=1e-6),
                                "%s: max difference %g\n%s" % (name, (advised - expected).abs().max(), fix))

    def test_a_form_no_fused_op_computes_gets_no_code(self):
        # (x - mean) / (std + eps): unbiased std, eps outside the root. F.layer_norm differs.
        import torch
        for name in self.modules.NO_CODE:
            with self.subTest(name):
                fix = self.fixes[name]
                self.assertNotIn("y =", fix)
                self.assertIn("unbiased standard deviation plus eps", fix)
        advised, expected = self.check("std_ln", "Use:\ny = torch.nn.functional.layer_norm(x, x.shape[-1:], "
                                                       "self.weight, self.bias, eps=self.eps)")
        self.assertFalse(torch.allclose(advised, expected, rtol=1e-3, atol=1e-3))   # why no code is given

    def test_the_plain_template_would_not_fit_gemma(self):
        # The harness bites: the weighted template, applied to Gemma's (1 + weight) norm, is wrong.
        import torch
        advised, expected = self.check("gemma", self.fixes["llama"])
        self.assertFalse(torch.allclose(advised, expected, rtol=1e-3, atol=1e-3))


if __name__ == "__main__":
    unittest.main()
