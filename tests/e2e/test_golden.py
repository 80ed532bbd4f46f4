"""Golden findings, whole: every input below through `analyze` (or `scan`), compared with
tests/golden/<input>.json finding by finding: id, file:line (base name), severity, message, fix,
notes and metrics (paths of this checkout, of ../shared and of temporary folders written as
<root>, <shared> and <tmp>). A change of wording, count, place, metric or severity shows here as a
diff; when it is meant, regenerate with NPUD_UPDATE_GOLDEN=1 and review the diff like code.

Inputs: the shared fixtures (Kineto, Ascend, the H200 runs; skipped without ../shared), the amp-check
fixtures of tests/data/amp, the small inputs of tests/data/snapshots (GC, launch blocking, device
malloc, SyncBatchNorm, captures of corpus programs: tests/data/snapshots/README.md), the advisor
folders tests/e2e/advisor_fixtures.py writes, the HCCL ranks bench/gen_comm_ranks.py writes (one
rank and the cluster), and the bundled example and scan inputs through `scan`.
`test_every_rule_has_a_golden_finding` holds every rule id `npu-doctor rules` lists to at least
one finding here (issue 43).

The wheel is pinned (--torch-npu 2.1.0.post8) so a new op list in ../shared does not move the
findings. Needs the built binary (NPUD_BINARY).
"""

import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
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


SNAPSHOTS = os.path.join(ROOT, "tests", "data", "snapshots")
AMP = os.path.join(ROOT, "tests", "data", "amp")
TMP = tempfile.gettempdir()


def normalise(text, places):
    """Paths that differ between checkouts and runs, as placeholders."""
    for path, name in places:
        text = text.replace(path, name)
    return text


def places_of(*extra):
    out = list(extra)
    for path, name in ((ROOT, "<root>"), (SHARED, "<shared>")):
        for p in {os.path.realpath(path), os.path.abspath(path)}:
            out.append((p, name))
    return sorted(out, key=lambda pn: -len(pn[0]))   # the longest first: a tmp folder inside the root


def whole(f, where, places):
    metrics = f.get("metrics") or {}
    return {"id": f["id"], "at": where, "severity": f["severity"], "message": normalise(f["message"], places),
            "fix": normalise(f.get("fix") or "", places), "notes": [normalise(n, places) for n in f.get("notes") or []],
            "metrics": {k: (round(v, 9) if isinstance(v, float) else v) for k, v in sorted(metrics.items())}}


def analyze_rows(path, *places):
    r = subprocess.run([BINARY, "analyze", path, "--format", "json", "-q", "--verbose", "--fail-on", "never",
                        "--torch-npu", WHEEL], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    # a folder of ranks gives the cluster view: its findings across ranks and per link
    found = report["findings"] if "findings" in report else \
        report["common_findings"] + report["partial_findings"] + report["link_findings"]
    rows = []
    for f in found:
        loc = f["location"]
        where = "%s:%s" % (os.path.basename(loc["file"]), loc["line"]) if loc.get("file") else (loc.get("op") or "")
        rows.append(whole(f, where, places_of(*places)))
    return rows


def scan_rows(path):
    r = subprocess.run([BINARY, "scan", path, "--format", "json", "--fail-on", "never", "--torch-npu", WHEEL],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    base = path if os.path.isdir(path) else os.path.dirname(path)
    return [whole(f, "%s:%d" % (os.path.relpath(f["location"]["file"], base), f["location"]["line"]), places_of())
            for f in json.loads(r.stdout)["findings"]]


def snapshot_inputs(tmp):
    """(golden name, path) of tests/data/amp and tests/data/snapshots. A capture stored with
    @NPUD_SOURCE_DIR@ in its header (the folder of the program it ran, which PORT001 scans) is
    read from a copy naming this checkout."""
    out = [("amp-" + os.path.basename(p).split(".")[0], p) for p in sorted(glob.glob(os.path.join(AMP, "*.npud.json")))]
    for p in sorted(glob.glob(os.path.join(SNAPSHOTS, "*.json")) + glob.glob(os.path.join(SNAPSHOTS, "*.json.gz"))):
        name = "snap-" + os.path.basename(p).split(".")[0]
        if p.endswith(".npud.json.gz"):
            with gzip.open(p, "rt", encoding="utf-8") as f:
                text = f.read().replace("@NPUD_SOURCE_DIR@", ROOT.replace("\\", "/"))
            p = os.path.join(tmp, os.path.basename(p)[:-3])
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
        out.append((name, p))
    return out


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class GoldenFindings(unittest.TestCase):
    def check(self, name, rows):
        rows = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
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
                           ("scan-tests-data", os.path.join(ROOT, "tests", "data", "scan")),
                           ("scan-parse-error", os.path.join(SNAPSHOTS, "parse_error.py"))):
            with self.subTest(input=name):
                self.check(name, scan_rows(path))

    def test_snapshot_inputs(self):
        tmp = tempfile.mkdtemp(prefix="npud-golden-")
        try:
            for name, path in snapshot_inputs(tmp):
                with self.subTest(input=name):
                    self.check(name, analyze_rows(path, (tmp, "<tmp>")))
        finally:
            shutil.rmtree(tmp)

    def test_generated_inputs(self):
        """The advisor folders and the HCCL ranks, written in code the way mstt's tests make
        theirs (deterministic: the same files every run)."""
        sys.path.insert(0, HERE)
        import advisor_fixtures
        tmp = tempfile.mkdtemp(prefix="npud-golden-")
        try:
            for name, path in sorted(advisor_fixtures.write_all(os.path.join(tmp, "advisor")).items()):
                with self.subTest(input=name):
                    self.check("advisor-" + name, analyze_rows(path, (tmp, "<tmp>")))
            ranks = os.path.join(tmp, "ranks")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_comm_ranks.py"), ranks, "4", "3", "2"],
                           check=True, capture_output=True)
            for name, path in (("comm-rank0", os.path.join(ranks, "rank0_ascend_pt")), ("comm-cluster", ranks)):
                with self.subTest(input=name):
                    self.check(name, analyze_rows(path, (tmp, "<tmp>")))
        finally:
            shutil.rmtree(tmp)

    @unittest.skipUnless(os.path.isdir(FIXTURES), "../shared/fixtures not found beside the checkout: the golden files "
                                                  "of its fixtures hold some rules' only findings")
    def test_every_rule_has_a_golden_finding(self):
        listed = subprocess.run([BINARY, "rules"], capture_output=True, text=True, check=True).stdout
        ids = {line.split()[0] for line in listed.splitlines()
               if line.startswith("  ") and line.split()[0][-3:].isdigit()}
        self.assertGreater(len(ids), 50)
        seen = set()
        for path in glob.glob(os.path.join(GOLDEN, "*.json")):
            with open(path) as f:
                seen |= {row["id"] for row in json.load(f)}
        self.assertEqual(sorted(ids - seen), [], "rules without a golden finding: add an input that has one")


if __name__ == "__main__":
    unittest.main()
