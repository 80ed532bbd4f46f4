"""End to end: `npu-doctor diff` on the Kineto diff-pair fixture and on two captures of
examples/tiny_gpt/train.py (as written, and with --fixed) made here with `npu-doctor run`."""

import json
import os
import subprocess
import tempfile
import unittest

from e2e_support import PYTHON, python_has

BINARY = os.environ.get("NPUD_BINARY", "")
from e2e_support import SHARED
SOURCE = os.environ.get("NPUD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
PAIR = os.path.join(SHARED, "fixtures", "kineto", "diff-pair")
EXAMPLE = os.path.join(SOURCE, "examples", "tiny_gpt", "train.py")


def diff_json(before, after):
    r = subprocess.run([BINARY, "diff", "-q", "--format", "json", before, after], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def op(table, name):
    for row in table["ops"]:
        if row["name"] == name:
            return row
    raise AssertionError("no op %s in the diff" % name)


def assert_deltas_add_up(test, d):
    for key in ("host_ops", "device_ops"):
        t = d[key]
        test.assertEqual(sum(r["delta_ns"] for r in t["ops"]), t["after_ns"] - t["before_ns"], key)
        test.assertEqual(sum(r["delta_count"] for r in t["ops"]), t["after_count"] - t["before_count"], key)
        test.assertEqual(t["delta_ns"], t["after_ns"] - t["before_ns"])
        for r in t["ops"]:
            test.assertEqual(r["delta_ns"], r["after_ns"] - r["before_ns"])
            test.assertEqual(r["delta_count"], r["after_count"] - r["before_count"])
    st = d["step_time"]
    test.assertEqual(st["delta_ns"], st["after_ns"] - st["before_ns"])


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class DiffPair(unittest.TestCase):
    def setUp(self):
        if not os.path.isdir(PAIR):
            self.skipTest("fixture directory %s is absent" % PAIR)

    def test_counts_of_copies_and_clones(self):
        d = diff_json(os.path.join(PAIR, "control", "control.json.gz"), os.path.join(PAIR, "test", "test.json.gz"))
        copy = op(d["host_ops"], "aten::copy_")
        clone = op(d["host_ops"], "aten::clone")
        # fixtures/kineto/SOURCE.md: test has 5,232 aten::copy_ and 2,334 aten::clone vs 444 / 48 in control.
        self.assertEqual((copy["before_count"], copy["after_count"], copy["delta_count"]), (444, 5232, 4788))
        self.assertEqual((clone["before_count"], clone["after_count"], clone["delta_count"]), (48, 2334, 2286))
        self.assertEqual(d["step_time"]["basis"], "step")
        assert_deltas_add_up(self, d)
        self.assertEqual((d["schema_version"], d["tool"]["name"], d["command"]), (1, "npu-doctor", "diff"))
        f = d["findings"]
        self.assertEqual(len(f["fixed"]), f["fixed_count"])
        self.assertEqual(len(f["new"]), f["new_count"])
        # HOT001's ranking churn is counted apart, never listed as fixed or new (#30).
        self.assertNotIn("HOT001", {x["id"] for x in f["fixed"] + f["new"]})
        self.assertEqual(f["ranking_changes"]["rule"], "HOT001")
        self.assertGreater(f["ranking_changes"]["left"] + f["ranking_changes"]["entered"], 0)

    def test_swapped_order_negates(self):
        a = os.path.join(PAIR, "control", "control.json.gz")
        b = os.path.join(PAIR, "test", "test.json.gz")
        ab, ba = diff_json(a, b), diff_json(b, a)
        self.assertEqual(op(ab["host_ops"], "aten::copy_")["delta_count"], -op(ba["host_ops"], "aten::copy_")["delta_count"])
        self.assertEqual(ab["findings"]["fixed_count"], ba["findings"]["new_count"])

    def test_text_output(self):
        r = subprocess.run([BINARY, "diff", "-q", os.path.join(PAIR, "control", "control.json.gz"),
                            os.path.join(PAIR, "test", "test.json.gz")], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("aten::copy_", r.stdout)
        self.assertIn("+4788", r.stdout)
        self.assertIn("Findings:", r.stdout)

    def test_fail_on_regression_gates(self):
        # test.json.gz is the slower run with more copies: slower one way, not the other way
        # (which still has findings control alone shows), nothing against itself.
        a = os.path.join(PAIR, "control", "control.json.gz")
        b = os.path.join(PAIR, "test", "test.json.gz")

        def gate(before, after, *extra):
            return subprocess.run([BINARY, "diff", "-q", "--fail-on-regression", *extra, before, after],
                                  capture_output=True, text=True, timeout=300)
        worse = gate(a, b)
        self.assertEqual(worse.returncode, 1, worse.stderr)
        self.assertRegex(worse.stderr, r"regression: \d+ new findings?, step time [0-9.]+% slower \(limit 5%\)")
        self.assertEqual(gate(a, a).returncode, 0)
        better = gate(b, a)
        self.assertNotIn("slower", better.stderr)
        self.assertEqual(gate(a, b, "--max-slowdown", "-1").returncode, 2)

    def test_bad_input_exits_2(self):
        with tempfile.NamedTemporaryFile(suffix=".json") as bad:
            bad.write(b'{"traceEvents": [ {"ph": "X", ')
            bad.flush()
            r = subprocess.run([BINARY, "diff", "-q", bad.name, bad.name], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn(bad.name, r.stderr)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class ReportsAsInputs(unittest.TestCase):
    """#30: `diff before.json after.json` on two `analyze --format json` reports failed with
    "no traceEvents array at byte N"."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="npud-diff-reports-")
        self.trace = os.path.join(SOURCE, "tests", "data", "chrome", "small_object.json")
        self.before = os.path.join(self.tmp.name, "before.json")
        r = subprocess.run([BINARY, "analyze", "-q", "--format", "json", "-o", self.before, self.trace],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 2, r.stderr)

    def tearDown(self):
        self.tmp.cleanup()

    def finding(self, rule, line):
        return {"id": rule, "severity": "error", "message": "%s message" % rule, "metrics": {}, "notes": [],
                "location": {"file": "/w/train.py", "line": line, "op": "aten::item", "module": None}}

    def test_two_reports_diff_their_findings(self):
        with open(self.before) as f:
            report = json.load(f)
        kept = list(report["findings"])
        report["findings"] = kept + [self.finding("SYNC001", 12), self.finding("SYNC001", 30)]
        with open(self.before, "w") as f:
            json.dump(report, f, indent=2)
        report["findings"] = kept + [self.finding("SYNC001", 30), self.finding("CONTIG001", 40)]
        after = os.path.join(self.tmp.name, "after.json")
        with open(after, "w") as f:
            json.dump(report, f, indent=2)
        r = subprocess.run([BINARY, "diff", "-q", self.before, after], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 fixed, 1 new, %d remaining" % (len(kept) + 1), r.stdout)
        self.assertRegex(r.stdout, r"Fixed:\n  SYNC001 +error +/w/train.py:12: SYNC001 message\n")
        self.assertRegex(r.stdout, r"New:\n  CONTIG001 +error +/w/train.py:40: CONTIG001 message\n")
        gate = subprocess.run([BINARY, "diff", "-q", "--fail-on-regression", self.before, after],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(gate.returncode, 1, gate.stderr)
        self.assertIn("regression: 1 new finding", gate.stderr)
        self.assertEqual(subprocess.run([BINARY, "diff", "-q", "--format", "json", self.before, after],
                                        capture_output=True, text=True, timeout=60).returncode, 2)

    def test_a_report_beside_a_trace_is_named_as_such(self):
        for before, after in ((self.before, self.trace), (self.trace, self.before)):
            r = subprocess.run([BINARY, "diff", "-q", before, after], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("%s: this is an npu-doctor report; diff wants two traces or captures" % self.before,
                          r.stderr)
            self.assertNotIn("traceEvents", r.stderr)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(os.path.isdir(PAIR), "../shared/fixtures not found beside the checkout")
class GpuVsNpu(unittest.TestCase):
    """A Kineto GPU trace (ns-resolution: a CNN on CUDA) against the torch_npu trace_view fixture:
    kernel names share nothing, the launching aten ops do."""

    GPU = os.path.join(SHARED, "fixtures", "kineto", "ns-resolution", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
    NPU = os.path.join(SHARED, "fixtures", "ascend", "pt-trace-view-1step")

    def test_ops_align_and_the_npu_side_says_why(self):
        d = diff_json(self.GPU, self.NPU)
        self.assertEqual(d["devices"], {"before": "cuda", "after": "npu"})
        rows = d["device_by_op"]["ops"]
        deltas = [r["delta_ns"] for r in rows]
        self.assertEqual(deltas, sorted(deltas, reverse=True))  # slower on the NPU first
        linear = op(d["device_by_op"], "aten::linear")
        self.assertGreater(linear["before_ns"], 0)  # on both devices
        self.assertGreater(linear["after_ns"], 0)
        self.assertIn("TransData", linear["why"])
        self.assertIn("AI-CPU task (FALLBACK001)", op(d["device_by_op"], "aten::to")["why"])
        self.assertIn("AI-CPU task (FALLBACK001)", op(d["device_by_op"], "aten::sum")["why"])

    def test_text_and_html_reports(self):
        r = subprocess.run([BINARY, "diff", "-q", self.GPU, self.NPU], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("cuda ->            npu", r.stdout)
        first = r.stdout.index("Device time per step by launching op")
        self.assertLess(first, r.stdout.index("Host ops by self time"))  # across devices, the aligned table leads
        self.assertIn("aten::to  <- 1 AI-CPU task (FALLBACK001)", r.stdout)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "d.html")
            r = subprocess.run([BINARY, "diff", "-q", "--format", "html", "-o", out, self.GPU, self.NPU],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, encoding="utf-8") as f:
                page = f.read()
            self.assertIn("Device time by launching op (cuda \u2192 npu)", page)
            self.assertIn("1 AI-CPU task (FALLBACK001)", page)
            self.assertIn("Biggest device time changes per step, by launching op", page)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(python_has("torch"), "torch is not importable by %s" % PYTHON)
class DiffCaptures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npud-diff-")
        cls.captures = {}
        for variant, extra in (("before", []), ("after", ["--fixed"])):
            out = os.path.join(cls.dir, variant)
            r = subprocess.run([BINARY, "run", "-q", "--fail-on", "never", "--capture-dir", out, "--format", "json",
                                "-o", os.path.join(cls.dir, variant + ".json"), "--",
                                PYTHON, EXAMPLE, "--steps", "5", *extra],
                               capture_output=True, text=True, timeout=600)
            assert r.returncode == 0, r.stderr
            cls.captures[variant] = os.path.join(out, "capture.npud.json")

    def test_fixed_run_has_fewer_syncs_and_deltas_add_up(self):
        d = diff_json(self.captures["before"], self.captures["after"])
        sync = d["findings"]["by_rule"].get("SYNC001", {"before": 0, "after": 0})
        self.assertGreater(sync["before"], 0)
        self.assertLess(sync["after"], sync["before"])
        self.assertTrue(any(f["id"] == "SYNC001" for f in d["findings"]["fixed"]))
        assert_deltas_add_up(self, d)


if __name__ == "__main__":
    unittest.main()
