"""One Finding JSON shape in every command (docs/json-schema.md `findings[]`, written by
src/report/finding_json.cpp): analyze, run, amp-check, scan, diff, the cluster report and
`--format summary` give each finding the same keys, and the same `location` keys; the deprecated
aliases (`rule` and flat location keys) only where they were written before (scan, summary,
cluster), until schema_version 2. Real inputs: the shared fixtures (skipped without ../shared),
the bundled example, and the e2e programs under torch (skipped without it)."""

import glob
import json
import os
import subprocess
import tempfile
import unittest

from e2e_support import PYTHON, python_has

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BINARY = os.environ.get("NPUD_BINARY", "")
from e2e_support import SHARED
FIXTURES = os.path.join(SHARED, "fixtures")
WHEEL = "2.1.0.post8"

KEYS = ["id", "name", "severity", "message", "location", "metrics", "cost_ns", "fix", "notes", "fixable", "edits"]
LOCATION_KEYS = ["file", "line", "column", "end_line", "end_column", "op", "module"]
ALIASES = ["rule", "file", "line", "column", "end_line", "end_column", "op"]


def npud(*args, cwd=None):
    r = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=600, cwd=cwd)
    assert r.returncode in (0, 1), "%s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr)
    return r


def fixture(*parts):
    path = os.path.join(FIXTURES, *parts)
    matches = sorted(glob.glob(path))
    if not matches:
        raise unittest.SkipTest("no %s (NPUD_SHARED_DIR=%s)" % (path, SHARED))
    return matches[0]


class ShapeCheck(unittest.TestCase):
    def check(self, findings, aliases):
        self.assertTrue(findings, "no findings to check")
        for f in findings:
            with self.subTest(id=f.get("id"), file=f.get("location", {}).get("file")):
                self.assertEqual(list(f), KEYS + (ALIASES if aliases else []))
                location = [k for k in f["location"] if k != "library"]   # library: only when there is one
                self.assertEqual(location, LOCATION_KEYS)
                self.assertIsInstance(f["metrics"], dict)
                self.assertIsInstance(f["notes"], list)
                self.assertIsInstance(f["edits"], list)
                self.assertEqual(f["fixable"], bool(f["edits"]))
                if aliases:
                    self.assertEqual(f["rule"], f["id"])
                    for k in ALIASES[1:]:
                        self.assertEqual(f[k], f["location"][k])


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class FindingShape(ShapeCheck):

    def test_analyze(self):
        trace = fixture("kineto", "alexnet-sync", "*.json.gz")
        report = json.loads(npud("analyze", trace, "--format", "json", "-q", "--verbose", "--torch-npu", WHEEL).stdout)
        self.check(report["findings"], aliases=False)
        capture = fixture("gpu-h200", "hf-llama-loop-run.npud.json.gz")   # a run's capture: library sites too
        report = json.loads(npud("analyze", capture, "--format", "json", "-q", "--torch-npu", WHEEL).stdout)
        self.check(report["findings"], aliases=False)

    def test_summary(self):
        trace = fixture("kineto", "alexnet-sync", "*.json.gz")
        summary = json.loads(npud("analyze", trace, "--format", "summary", "-q", "--torch-npu", WHEEL).stdout)
        self.check(summary["findings"], aliases=True)
        for f in summary["findings"]:   # a summary is small: one rank's analyze has the rest
            self.assertEqual((f["fix"], f["notes"], f["metrics"]), (None, [], {}))

    def test_cluster(self):
        folder = os.path.dirname(fixture("kineto", "multirank-sampled", "sampled_rank-0.json.gz"))
        report = json.loads(npud("analyze", folder, "--format", "json", "-q", "--torch-npu", WHEEL).stdout)
        partial = report["partial_findings"]
        self.check(report["common_findings"], aliases=True)
        self.assertTrue(partial)
        for f in partial:   # the cluster adds the ranks that have it, after the finding's keys
            self.assertEqual(list(f), KEYS + ALIASES + ["ranks"])

    def test_diff(self):
        before = fixture("kineto", "diff-pair", "control", "*.json.gz")
        after = fixture("kineto", "diff-pair", "test", "*.json.gz")
        report = json.loads(npud("diff", before, after, "--format", "json", "--torch-npu", WHEEL).stdout)
        self.check(report["findings"]["fixed"] + report["findings"]["new"], aliases=False)

    def test_scan(self):
        for inputs in (os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests", "data", "scan")):
            report = json.loads(npud("scan", inputs, "--format", "json", "--fail-on", "never", "--torch-npu", WHEEL,
                                     cwd=ROOT).stdout)
            self.check(report["findings"], aliases=True)
        self.assertTrue(any(f["fixable"] for f in report["findings"]))   # the scan inputs have exact fixes


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(python_has("torch"), "torch is not importable by %s" % PYTHON)
class FindingShapeOfPrograms(ShapeCheck):
    def launch(self, command, programs, program, *args):
        tmp = tempfile.mkdtemp(prefix="npud-shape-")
        out = os.path.join(tmp, "report.json")
        npud(command, "-q", "--steps", "1:2", "--capture-dir", os.path.join(tmp, "out"), "--format", "json", "-o", out,
             "--fail-on", "never", *args, "--", PYTHON, os.path.join(HERE, programs, program), cwd=os.path.join(HERE, programs))
        with open(out) as f:
            return json.load(f)

    def test_run(self):
        self.check(self.launch("run", "programs", "sync_item.py")["findings"], aliases=False)

    def test_amp_check(self):
        self.check(self.launch("amp-check", "amp_programs", "overflow.py")["findings"], aliases=False)


if __name__ == "__main__":
    unittest.main()
