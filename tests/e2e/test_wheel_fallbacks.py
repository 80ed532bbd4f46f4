"""End to end: CPU-fallback predictions follow the torch_npu *wheel* (issue 13).

Programs in wheel_programs/ use ops whose NPU kernels come and go between release wheels.
Each program is captured once with `npu-doctor run`; the capture is then analysed against
several wheels. Expected verdicts come from ../shared/data/npu-ops-release (SOURCE.md "Facts
from the data", key-ops-matrix.tsv): isin.Tensor_Tensor_out is absent from every 2.1.0 wheel
up to 2.1.0.post7 and every 2.2.0 wheel, present from 2.1.0.post8; scatter_reduce.two(_out)
is in no release list but in the 2.9.0 development tip; `mode` (default overload) and
`_logcumsumexp` are in no 2.1.0 wheel.
"""

import functools
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import e2e_support
from e2e_support import PYTHON, python_has

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "wheel_programs")
BINARY = os.environ.get("NPUD_BINARY", "")
marker = functools.partial(e2e_support.planted_line, PROGRAMS)


def capture(program, env=None, command="run"):
    """`npu-doctor run` (or amp-check) of a program: (capture path, JSON report)."""
    out = tempfile.mkdtemp(prefix="npud-wheel-")
    report = os.path.join(out, "report.json")
    full_env = dict(os.environ, **(env or {}))
    r = subprocess.run([BINARY, command, "-q", "--capture-dir", os.path.join(out, "cap"), "--format", "json", "-o",
                        report, "--fail-on", "never", "--", PYTHON, os.path.join(PROGRAMS, program)],
                       capture_output=True, text=True, timeout=300, env=full_env, cwd=out)
    assert r.returncode == 0, r.stderr
    with open(report) as f:
        return os.path.join(out, "cap", "capture.npud.json"), json.load(f)


def analyze(capture_path, wheel):
    r = subprocess.run([BINARY, "analyze", capture_path, "--torch-npu", wheel, "--select", "FALLBACK002", "--format",
                        "json", "--fail-on", "never", "-q"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def at_line(report, program, line, kind=None):
    """FALLBACK002 findings at program:line; kind "fallback" = would fall back to the CPU."""
    path = os.path.join(PROGRAMS, program)
    found = [f for f in report["findings"] if f["location"].get("file") == path and f["location"].get("line") == line]
    if kind == "fallback":
        found = [f for f in found if "would fall back to the CPU" in f["message"]]
    return found


@unittest.skipUnless(BINARY and python_has("torch"), "needs NPUD_BINARY and torch")
class WheelFallbacks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.labels, _ = capture("label_filter.py")
        cls.votes, _ = capture("vote_pool.py")
        cls.dtypes, _ = capture("host_dtypes.py")

    def test_isin_follows_the_wheel(self):
        line = marker("label_filter.py", "# WHEEL: isin")
        for wheel in ("2.2.0", "2.2.0.post3", "2.1.0.post7"):
            r = analyze(self.labels, wheel)
            found = at_line(r, "label_filter.py", line, "fallback")
            self.assertEqual(len(found), 1, (wheel, r["findings"]))
            self.assertIn("aten::isin.Tensor_Tensor", found[0]["message"])
            notes = " ".join(found[0]["notes"])
            self.assertIn("The operator 'aten::isin.Tensor_Tensor' is not currently supported on the NPU backend", notes)
            self.assertIn("op list: torch_npu %s (release tag" % wheel, notes)
            self.assertIn("op-plugin ", notes)
        r = analyze(self.labels, "2.1.0.post8")
        self.assertEqual(at_line(r, "label_filter.py", line, "fallback"), [])
        self.assertEqual(r["summary"]["torch_npu"], "2.1.0.post8")
        self.assertIn("release tag v6.0.rc3-pytorch2.1.0, op-plugin 070332e65baf", r["summary"]["knowledge_note"])

    def test_logcumsumexp_calls_a_kernel_the_wheel_lacks(self):
        # logcumsumexp is CompositeExplicitAutograd: the capture records the _logcumsumexp it calls.
        line = marker("label_filter.py", "# WHEEL: logcumsumexp")
        r = analyze(self.labels, "2.1.0.post8")
        found = at_line(r, "label_filter.py", line, "fallback")
        self.assertEqual([f["location"]["op"] for f in found], ["aten::_logcumsumexp"], r["findings"])

    def test_amp_check_records_the_same_fallbacks(self):
        # One dispatch core: amp-check's capture expands composites as run's does (it used to
        # record logcumsumexp whole, and FALLBACK002 said nothing of the _logcumsumexp inside).
        amp, _ = capture("label_filter.py", command="amp-check")

        def fallbacks(path):
            return sorted((f["location"]["op"], f["location"]["line"], f["severity"])
                          for f in analyze(path, "2.1.0.post8")["findings"])
        self.assertEqual(fallbacks(amp), fallbacks(self.labels))
        self.assertIn("aten::_logcumsumexp", [op for op, _, _ in fallbacks(amp)])

    def test_mode_default_overload_falls_back(self):
        line = marker("vote_pool.py", "# WHEEL: mode")
        found = at_line(analyze(self.votes, "2.1.0.post8"), "vote_pool.py", line, "fallback")
        self.assertEqual([f["location"]["op"] for f in found], ["aten::mode"])

    def test_scatter_sum_follows_the_wheel(self):
        line = marker("vote_pool.py", "# WHEEL: scatter_sum")
        self.assertEqual(at_line(analyze(self.votes, "2.9.0-dev"), "vote_pool.py", line), [])  # fp32 sum: AI cores
        found = at_line(analyze(self.votes, "2.9.0.post1"), "vote_pool.py", line, "fallback")
        self.assertEqual(len(found), 1)
        self.assertIn("aten::scatter_reduce.two", found[0]["message"])

    def test_dtype_driven_host_work(self):
        r = analyze(self.dtypes, "2.1.0.post8")
        sort = at_line(r, "host_dtypes.py", marker("host_dtypes.py", "# WHEEL: int_argsort"))
        self.assertEqual(len(sort), 1, r["findings"])
        self.assertIn("x.float()", sort[0]["fix"])
        neginf = at_line(r, "host_dtypes.py", marker("host_dtypes.py", "# WHEEL: isneginf"))
        self.assertEqual(len(neginf), 1, r["findings"])
        self.assertIn('x == float("-inf")', neginf[0]["fix"])
        f64 = [f for f in r["findings"] if f["message"].startswith("float64 tensors reach compute ops")]
        self.assertEqual(len(f64), 1, r["findings"])   # one root cause, one finding
        self.assertEqual(f64[0]["location"]["line"], marker("host_dtypes.py", "# WHEEL: float64_matmul"))
        self.assertIn("aten::mm", f64[0]["message"])

    def test_default_is_the_installed_wheel(self):
        # A CPU machine with the torch_npu wheel installed (not importable without CANN).
        site = tempfile.mkdtemp(prefix="npud-site-")
        self.addCleanup(shutil.rmtree, site, True)
        dist = os.path.join(site, "torch_npu-2.1.0.post7.dist-info")
        os.makedirs(dist)
        with open(os.path.join(dist, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.1.0.post7\n")
        _, report = capture("label_filter.py", env={"PYTHONPATH": site})
        self.assertEqual(report["summary"]["torch_npu"], "2.1.0.post7")
        self.assertIn("installed", report["summary"]["knowledge_note"])
        line = marker("label_filter.py", "# WHEEL: isin")
        self.assertEqual(len(at_line(report, "label_filter.py", line, "fallback")), 1, report["findings"])


@unittest.skipUnless(BINARY, "needs NPUD_BINARY")
class VersionsCommand(unittest.TestCase):
    def test_lists_wheels_with_their_cann(self):
        r = subprocess.run([BINARY, "versions"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0)
        rows = {line.split()[0]: line.split() for line in r.stdout.splitlines() if line[:1].isdigit()}
        self.assertEqual(rows["2.1.0.post8"][1:4], ["release", "8.0.RC3", "v6.0.rc3-pytorch2.1.0"])
        self.assertEqual(rows["2.9.0.post1"][1:3], ["release", "8.5.0"])
        self.assertEqual(rows["2.1.0.post9"][1], "branch-tip")
        self.assertEqual(rows["2.15.0-dev"][1:3], ["dev-tip", "-"])
        self.assertIn("default: 2.12.0", r.stdout)

    def test_unknown_wheel_names_the_known_ones_of_its_line(self):
        r = subprocess.run([BINARY, "analyze", "/dev/null", "--torch-npu", "2.1.0.post99"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown --torch-npu version '2.1.0.post99'", r.stderr)
        self.assertIn("2.1.0.post8", r.stderr)
        self.assertNotIn("2.2.0", r.stderr)


if __name__ == "__main__":
    unittest.main()
