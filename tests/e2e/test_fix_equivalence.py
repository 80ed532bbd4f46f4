"""The fused-op fixes npu-doctor prints compute what the matched code computed (issue 41).

`run` on programs/norm_variants.py (RMSNorm written five ways: transformers' Llama, Meta's
llama, Gemma's `(1 + weight)`, a tutorial's divide-by-root, a weightless qk-norm); each FUSE001
fix's code is then executed against a reference torch_npu written from the op's documented
formula, on random inputs and random weights, and compared with the module's own output. A
template that does not fit a variant fails here instead of zeroing a user's model (the Gemma
weight starts at 0: `npu_rms_norm(x, self.weight)` would output zeros).

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
                            "--format", "json", "-o", report, "--fail-on", "never", "--select", "FUSE001", "--",
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
        cls, args, weight_attr, eps_attr = self.modules.NORMS[name]
        module = cls(*args)
        with torch.no_grad():
            for p in module.parameters():
                p.normal_()
        x = torch.randn(4, 8, 16)
        expected = module(x)
        owner = types.SimpleNamespace(weight=getattr(module, weight_attr) if weight_attr else None,
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
            with self.subTest(name):
                advised, expected = self.check(name, fix)
                self.assertEqual(advised.shape, expected.shape)
                self.assertTrue(torch.allclose(advised, expected, rtol=1e-5, atol=1e-6),
                                "%s: max difference %g\n%s" % (name, (advised - expected).abs().max(), fix))

    def test_the_plain_template_would_not_fit_gemma(self):
        # The harness bites: the weighted template, applied to Gemma's (1 + weight) norm, is wrong.
        import torch
        advised, expected = self.check("gemma", self.fixes["llama"])
        self.assertFalse(torch.allclose(advised, expected, rtol=1e-3, atol=1e-3))


if __name__ == "__main__":
    unittest.main()
