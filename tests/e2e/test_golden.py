"""Golden findings: every shared fixture (Kineto, Ascend, the H200 runs) through `analyze`, and the
bundled example and scan inputs through `scan`, compared with tests/golden/<input>.json: per
finding its id, file:line (base name), severity and the fix's first line. A change of wording,
count, place or severity shows here as a diff; when it is meant, regenerate with
NPUD_UPDATE_GOLDEN=1 and review the diff like code.

The wheel is pinned (--torch-npu 2.1.0.post8) so a new op list in ../shared does not move the
findings. Needs the built binary (NPUD_BINARY); the fixtures need ../shared (skipped without it).
"""

import glob
import json
import os
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GOLDEN = os.path.join(ROOT, "tests", "golden")
BINARY = os.environ.get("NPUD_BINARY", "")
from e2e_support import SHARED
FIXTURES = os.path.join(SHARED, "fixtures")
UPDATE = os.environ.get("NPUD_UPDATE_GOLDEN") == "1"
WHEEL = "2.1.0.post8"


def fixture_inputs():
    """(golden name, path) of every analysable shared fixture: one trace per Kineto folder, the
    Ascend kernel tables and trace view, the H200 profiles and captures."""
    out = []
    for folder in sorted(glob.glob(os.path.join(FIXTURES, "kineto", "*", ""))):
        traces = sorted(glob.glob(os.path.join(folder, "*.json.gz")))
        if traces:
            out.append(("kineto-" + os.path.basename(os.path.dirname(folder)), traces[0]))
    for pattern in ("pt-kernel-details-*/*.csv", "pt-trace-view-*/trace_view.json"):
        for path in sorted(glob.glob(os.path.join(FIXTURES, "ascend", pattern))):
            out.append(("ascend-" + os.path.basename(os.path.dirname(path)), path))
    for path in sorted(glob.glob(os.path.join(FIXTURES, "gpu-h200", "*.json.gz"))):
        out.append(("gpu-h200-" + os.path.basename(path).split(".")[0], path))
    return out


def first_line(text):
    return (text or "").split("\n", 1)[0]


def analyze_rows(path):
    r = subprocess.run([BINARY, "analyze", path, "--format", "json", "-q", "--verbose", "--fail-on", "never",
                        "--torch-npu", WHEEL], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = []
    for f in json.loads(r.stdout)["findings"]:
        loc = f["location"]
        where = "%s:%s" % (os.path.basename(loc["file"]), loc["line"]) if loc.get("file") else (loc.get("op") or "")
        rows.append([f["id"], where, f["severity"], first_line(f.get("fix"))])
    return rows


def scan_rows(path):
    r = subprocess.run([BINARY, "scan", path, "--format", "json", "--fail-on", "never", "--torch-npu", WHEEL],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return [[f["id"], "%s:%d" % (os.path.relpath(f["location"]["file"], path), f["location"]["line"]), f["severity"],
             first_line(f.get("fix"))] for f in json.loads(r.stdout)["findings"]]


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class GoldenFindings(unittest.TestCase):
    def check(self, name, rows):
        rows = sorted(rows)
        path = os.path.join(GOLDEN, name + ".json")
        if UPDATE or not os.path.exists(path):
            if not UPDATE:
                self.fail("no golden file %s: run with NPUD_UPDATE_GOLDEN=1 and review it" % path)
            os.makedirs(GOLDEN, exist_ok=True)
            with open(path, "w") as f:
                json.dump(rows, f, indent=0, ensure_ascii=False)
                f.write("\n")
            return
        with open(path) as f:
            want = json.load(f)
        self.assertEqual(rows, want, "findings of %s changed (NPUD_UPDATE_GOLDEN=1 regenerates %s)" % (name, path))

    @unittest.skipUnless(os.path.isdir(FIXTURES), "../shared/fixtures not found beside the checkout: golden fixture "
                                                  "findings skipped")
    def test_fixtures(self):
        inputs = fixture_inputs()
        self.assertGreater(len(inputs), 10)
        for name, path in inputs:
            with self.subTest(fixture=name):
                self.check(name, analyze_rows(path))

    def test_scan_inputs(self):
        for name, path in (("scan-examples", os.path.join(ROOT, "examples")),
                           ("scan-tests-data", os.path.join(ROOT, "tests", "data", "scan"))):
            with self.subTest(input=name):
                self.check(name, scan_rows(path))


if __name__ == "__main__":
    unittest.main()
