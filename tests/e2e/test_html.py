"""End to end: every HTML report (analyze on a fixture, run on the example, diff) loads in
headless Chromium without console errors, has its charts, and keeps hostile names as text.
Needs /usr/bin/chromium (Debian `chromium`, listed in tools/deps.sh)."""

import json
import os
import re
import subprocess
import tempfile
import unittest

from e2e_support import PYTHON, python_has

BINARY = os.environ.get("NPUD_BINARY", "")
SHARED = os.environ.get("NPUD_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
SOURCE = os.environ.get("NPUD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CHROMIUM = "/usr/bin/chromium"
FIXTURE = os.path.join(SHARED, "fixtures", "kineto", "diff-pair", "control", "control.json.gz")
FIXTURE_B = os.path.join(SHARED, "fixtures", "kineto", "diff-pair", "test", "test.json.gz")
EXAMPLE = os.path.join(SOURCE, "examples", "tiny_gpt", "train.py")
HOSTILE = "<script>alert(1)</script>"


def hostile_trace(path):
    """A small Kineto trace whose op and kernel names are markup."""
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
        {"ph": "X", "cat": "cpu_op", "name": HOSTILE, "pid": 1, "tid": 1, "ts": 10, "dur": 400,
         "args": {"External id": 1}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::item\"><img src=x onerror=alert(2)>", "pid": 1, "tid": 1,
         "ts": 500, "dur": 300, "args": {"External id": 2}},
        {"ph": "X", "cat": "kernel", "name": HOSTILE + "_kernel", "pid": 0, "tid": 7, "ts": 50, "dur": 200,
         "args": {"External id": 1, "device": 0, "stream": 7, "correlation": 11}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, "ts": 600,
         "dur": 100, "args": {"External id": 2, "device": 0, "stream": 7, "correlation": 12}},
    ]
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(os.path.exists(CHROMIUM), "headless Chromium absent: install Debian's `chromium` (tools/deps.sh)")
class HtmlInChromium(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npud-html-")
        cls.shots = os.path.join(cls.dir, "screenshots")
        os.makedirs(cls.shots)

    def render(self, html, name):
        """Loads html in Chromium: returns (dumped DOM, console errors); writes a screenshot."""
        profile = tempfile.mkdtemp(prefix="chromium-", dir=self.dir)
        base = [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
                "--user-data-dir=" + profile, "--no-first-run", "--window-size=1400,2000"]
        url = "file://" + os.path.abspath(html)
        dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        shot = os.path.join(self.shots, name + ".png")
        s = subprocess.run(base + ["--screenshot=" + shot, url], capture_output=True, text=True, timeout=120)
        self.assertTrue(os.path.exists(shot) and os.path.getsize(shot) > 1000, s.stderr[-2000:])
        errors = [line for line in (dom.stderr + s.stderr).splitlines()
                  if "Uncaught" in line or "CONSOLE" in line and ("error" in line.lower())
                  or "Refused to" in line]
        return dom.stdout, errors

    def check_page(self, html, name, chart_ids):
        self.assertTrue(os.path.exists(html), html)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        self.assertNotRegex(text, r"(?i)<(script|link|iframe)\b", "the report must not load or run anything")
        self.assertNotRegex(text, r"(?i)(src|href)=\"?(https?:)?//", "the report must not reach the network")
        dom, errors = self.render(html, name)
        self.assertEqual(errors, [], "console errors in %s" % name)
        for chart in chart_ids:
            m = re.search(r'<svg[^>]*\bid="%s"' % chart, dom)
            self.assertIsNotNone(m, "chart #%s missing from the DOM of %s" % (chart, name))
        self.assertIn('id="summary-cards"', dom)
        return dom

    def test_analyze_fixture(self):
        if not os.path.exists(FIXTURE):
            self.skipTest("fixture %s is absent" % FIXTURE)
        out = os.path.join(self.dir, "analyze.html")
        r = subprocess.run([BINARY, "analyze", "-q", "--fail-on", "never", "--format", "html", "-o", out, FIXTURE],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        dom = self.check_page(out, "analyze", ["op-chart", "device-chart", "timeline"])
        self.assertIn("SYNC001", dom)
        rects = len(re.findall(r"<rect\b", dom))
        self.assertLess(rects, 5000)

    def test_hostile_names_stay_text(self):
        trace = os.path.join(self.dir, "hostile.json")
        hostile_trace(trace)
        out = os.path.join(self.dir, "hostile.html")
        r = subprocess.run([BINARY, "analyze", "-q", "--fail-on", "never", "--format", "html", "-o", out, trace],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        dom = self.check_page(out, "hostile", ["op-chart", "timeline"])
        self.assertNotIn("<script", dom.lower())
        self.assertNotIn("<img", dom.lower())
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", dom)

    def test_diff(self):
        if not (os.path.exists(FIXTURE) and os.path.exists(FIXTURE_B)):
            self.skipTest("diff-pair fixtures are absent")
        out = os.path.join(self.dir, "diff.html")
        r = subprocess.run([BINARY, "diff", "-q", "--format", "html", "-o", out, FIXTURE, FIXTURE_B],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        dom = self.check_page(out, "diff", ["delta-chart", "timeline"])
        self.assertIn("aten::copy_", dom)

    def test_cluster(self):
        cluster = os.path.join(SHARED, "fixtures", "kineto", "multirank-sampled")
        if not os.path.isdir(cluster):
            self.skipTest("multirank-sampled fixture is absent")
        out = os.path.join(self.dir, "cluster.html")
        r = subprocess.run([BINARY, "analyze", "-q", "--fail-on", "never", "--format", "html", "-o", out, cluster],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        dom = self.check_page(out, "cluster", ["rank-chart"])
        self.assertIn("rank 1 computes", dom)
        self.assertIn('id="rank-table"', dom)

    @unittest.skipUnless(python_has("torch"), "torch is not importable by %s" % PYTHON)
    def test_run_example(self):
        out = os.path.join(self.dir, "run.html")
        r = subprocess.run([BINARY, "run", "-q", "--fail-on", "never", "--capture-dir", os.path.join(self.dir, "cap"),
                            "--format", "html", "-o", out, "--", PYTHON, EXAMPLE, "--steps", "5"],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        dom = self.check_page(out, "run", ["op-chart", "timeline"])
        # Findings with a user file:line show the source line around it.
        self.assertIn('class="snippet"', dom)
        self.assertIn("train.py", dom)


if __name__ == "__main__":
    unittest.main()
