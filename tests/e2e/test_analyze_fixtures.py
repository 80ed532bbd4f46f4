"""End to end: `npu-doctor analyze` on every real profile under ../shared/fixtures.

Each Kineto trace must be read and analysed without error; the facts asserted below were
counted in the raw JSON (see ../shared/fixtures/kineto/SOURCE.md and ascend/SOURCE.md).
Skips, with a message, when ../shared is not beside the checkout.
"""

import glob
import json
import os
import subprocess
import tempfile
import unittest

from e2e_support import assert_valid_sarif

BINARY = os.environ.get("NPUD_BINARY", "")
from e2e_support import SHARED
FIXTURES = os.path.join(SHARED, "fixtures")
HAVE_FIXTURES = os.path.isdir(os.path.join(FIXTURES, "kineto"))


def analyze(path, *args):
    """Runs analyze with a JSON report; returns (exit code, report or None, stderr)."""
    r = subprocess.run([BINARY, "analyze", path, "--format", "json", "-q", "--verbose", *args],
                       capture_output=True, text=True, timeout=300)
    report = json.loads(r.stdout) if r.stdout.strip() else None
    return r.returncode, report, r.stderr


def findings(report, rule):
    return [f for f in report["findings"] if f["id"] == rule]


def total(found, prefix):
    """Sum of `count` over findings whose message starts with `prefix`."""
    return sum(f["metrics"]["count"] for f in found if f["message"].startswith(prefix))


def kineto(name):
    paths = sorted(glob.glob(os.path.join(FIXTURES, "kineto", name, "*.json.gz")))
    assert paths, "fixture %s missing" % name
    return paths[0]


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
@unittest.skipUnless(HAVE_FIXTURES, "../shared/fixtures not found beside the checkout: real-trace tests skipped")
class AnalyzeRealTraces(unittest.TestCase):
    def test_every_kineto_fixture_is_analysed(self):
        paths = sorted(glob.glob(os.path.join(FIXTURES, "kineto", "**", "*.json.gz"), recursive=True))
        self.assertEqual(len(paths), 17)
        for path in paths:
            with self.subTest(trace=os.path.relpath(path, FIXTURES)):
                code, report, err = analyze(path, "--fail-on", "never")
                self.assertEqual(code, 0, err)
                self.assertEqual(report["summary"]["format"], "kineto-json")
                self.assertGreater(report["summary"]["ops"] + report["summary"]["kernels"], 0)
                # Every finding is well-formed and names a rule that ran.
                for f in report["findings"]:
                    self.assertIn(f["id"], report["summary"]["rules_run"])
                    self.assertIn(f["severity"], ("info", "warning", "error"))
                    self.assertTrue(f["message"])

    def test_event_sync_syncs(self):
        # aten::item -> _local_scalar_dense -> Memcpy DtoH + cudaStreamSynchronize under an
        # `if tensor:` (aten::is_nonzero), plus one cudaEventSynchronize and one cudaDeviceSynchronize.
        code, report, err = analyze(kineto("event-sync"), "--select", "SYNC001")
        self.assertEqual(code, 1, err)  # the item chain is an error-level sync (every step)
        ops = {f["location"]["op"] for f in findings(report, "SYNC001")}
        self.assertEqual(ops, {"aten::is_nonzero", "cudaEventSynchronize", "cudaDeviceSynchronize"})
        self.assertEqual(report["summary"]["steps"], 1)

    def test_event_sync_multistream_device_sync(self):
        _, report, _ = analyze(kineto("event-sync-multistream"), "--select", "SYNC001")
        self.assertEqual(total(findings(report, "SYNC001"), "cudaDeviceSynchronize"), 1)

    def test_alexnet_stream_and_device_syncs(self):
        # 16 cudaStreamSynchronize (after the HtoD input copies) and 5 cudaDeviceSynchronize.
        _, report, _ = analyze(kineto("alexnet-sync"), "--select", "SYNC001", "--fail-on", "never")
        found = findings(report, "SYNC001")
        self.assertEqual(total(found, "cudaStreamSynchronize"), 16)
        self.assertEqual(total(found, "cudaDeviceSynchronize"), 5)

    def test_large_rank0_item_syncs(self):
        # 945 aten::item calls (each with its _local_scalar_dense), none with a CUDA runtime call
        # inside (the profile records the runtime: 1,250 cudaMemcpyAsync elsewhere): reads of CPU
        # tensors, host work, not syncs. 75 cudaStreamSynchronize, 5 steps.
        _, report, _ = analyze(kineto("large-16rank-rank0"), "--select", "SYNC001", "--fail-on", "never")
        found = findings(report, "SYNC001")
        scalar_reads = sum(f["metrics"]["count"] for f in found
                           if f["location"]["op"] in ("aten::item", "aten::is_nonzero", "aten::_local_scalar_dense"))
        self.assertEqual(scalar_reads, 0)
        self.assertEqual(total(found, "cudaStreamSynchronize"), 75)
        self.assertEqual(report["summary"]["steps"], 5)

    def test_diff_pair_copies(self):
        # The test run makes 2,334 aten::clone against 48 in control: CONTIG001 must see more copies.
        def copies(name):
            path = sorted(glob.glob(os.path.join(FIXTURES, "kineto", "diff-pair", name, "*.json.gz")))[0]
            _, report, _ = analyze(path, "--select", "HOT001", "--top", "50", "--fail-on", "never")
            return {f["location"]["op"]: f["metrics"]["count"] for f in findings(report, "HOT001")
                    if f["message"].startswith("host op")}
        control, test = copies("control"), copies("test")
        self.assertEqual(test.get("aten::clone"), 2334)
        self.assertEqual(test.get("aten::copy_"), 5232)
        self.assertEqual(control.get("aten::copy_"), 444)

    def test_step_breakdown_of_a_nccl_trace(self):
        # 3 ProfilerSteps of a 2-rank NCCL job: all-reduce and broadcast kernels are communication.
        code, report, err = analyze(kineto("nccl-comm"), "--fail-on", "never")
        self.assertEqual(code, 0, err)
        b = report["summary"]["step_breakdown"]
        self.assertGreater(b["computing_ns"], 0)
        self.assertGreater(b["communication_ns"], 0)
        self.assertLessEqual(b["overlapped_ns"], min(b["computing_ns"], b["communication_ns"]))
        busy = b["computing_ns"] + b["communication_ns"] - b["overlapped_ns"]
        self.assertAlmostEqual(busy + b["free_ns"], b["step_ns"], delta=5)  # integer means of 3 steps
        code, report, err = analyze(kineto("cpu-only"), "--fail-on", "never")
        self.assertIsNone(report["summary"]["step_breakdown"])  # no device events

    def test_ascend_trace_view(self):
        # 45 aten::item (host syncs), 2 AI_CPU tasks, 4 aclrtSynchronizeStream, one step.
        path = os.path.join(FIXTURES, "ascend", "pt-trace-view-1step", "trace_view.json")
        code, report, err = analyze(path)
        self.assertEqual(code, 1, err)
        sync = findings(report, "SYNC001")
        self.assertEqual(sum(f["metrics"]["count"] for f in sync if f["location"]["op"] == "aten::item"), 45)
        self.assertEqual(total(sync, "aclrtSynchronizeStream:"), 4)
        ai_cpu = {f["location"]["op"] for f in findings(report, "FALLBACK001")}
        self.assertEqual(ai_cpu, {"aclnnReduceSum_CastAiCpu_Cast", "aclnnCast_CastAiCpu_Cast"})
        self.assertEqual(report["summary"]["steps"], 1)

    def test_sarif_reports_validate(self):
        # A GPU Kineto trace with Python stacks and an NPU profile: the same findings as the
        # JSON report, each a SARIF result that the official schema accepts.
        for path in (kineto("alexnet-sync"),
                     os.path.join(FIXTURES, "ascend", "pt-trace-view-1step", "trace_view.json")):
            with self.subTest(trace=os.path.relpath(path, FIXTURES)):
                _, report, _ = analyze(path, "--fail-on", "never")
                r = subprocess.run([BINARY, "analyze", path, "--format", "sarif", "-q", "--verbose",
                                    "--fail-on", "never"], capture_output=True, text=True, timeout=300)
                self.assertEqual(r.returncode, 0, r.stderr)
                sarif = json.loads(r.stdout)
                results = sarif["runs"][0]["results"]
                self.assertEqual(len(results), len(report["findings"]))
                self.assertEqual(sorted(x["ruleId"] for x in results), sorted(f["id"] for f in report["findings"]))
                assert_valid_sarif(self, sarif)

    def test_ascend_kernel_details_ai_cpu_casts(self):
        path = os.path.join(FIXTURES, "ascend", "pt-kernel-details-fp16-legacy-pmu", "kernel_details.csv")
        _, report, _ = analyze(path, "--fail-on", "never")
        self.assertEqual(report["summary"]["kernels"], 591)
        casts = [f for f in findings(report, "FALLBACK001") if f["location"]["op"] == "trans_Cast"]
        self.assertEqual(len(casts), 1)
        self.assertEqual(casts[0]["metrics"]["count"], 7)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class AnalyzeBadInput(unittest.TestCase):
    """Bad input: exit 2, one clear line naming the file (and byte offset where there is one)."""

    def check(self, content, expect_offset):
        with tempfile.NamedTemporaryFile("wb", suffix=".json", delete=False) as f:
            f.write(content)
        try:
            r = subprocess.run([BINARY, "analyze", f.name], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f.name, r.stderr)
            if expect_offset:
                self.assertRegex(r.stderr, r"byte \d+")
            self.assertNotIn("terminate", r.stderr)
            self.assertEqual(r.stdout, "")
        finally:
            os.unlink(f.name)

    def test_truncated(self):
        self.check(b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}, {"ph": "X", "na', True)

    def test_not_json(self):
        self.check(b"this is not a trace\n", True)

    def test_empty(self):
        self.check(b"", False)

    def test_wrong_schema(self):
        self.check(b'{"traceEvents": 42}', True)

    def test_huge_number(self):
        self.check(b'[{"ph": "X", "name": "a", "ts": 1e400, "dur": 2}]', True)

    def test_missing_file_and_bad_version(self):
        r = subprocess.run([BINARY, "analyze", "/nonexistent/trace.json"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("/nonexistent/trace.json", r.stderr)
        r = subprocess.run([BINARY, "analyze", "x.json", "--torch-npu", "9.9"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown --torch-npu version", r.stderr)


if __name__ == "__main__":
    unittest.main()
