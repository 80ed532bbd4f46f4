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


def sync_capture(path, frame_file, frame_line, steps=3):
    """A capture whose Tensor.item calls (SYNC001) sit at frame_file:frame_line."""
    pid = 4242
    lines = [{"ph": "M", "pid": pid, "tid": 0, "name": "npu_doctor",
              "args": {"format": "npu-doctor-capture", "version": 1, "torch": "2.1.0", "python": "3.11.2",
                       "device": "cpu", "torch_npu": "", "argv": ["fit.py"], "steps": "1:%d" % steps}}]
    t = 1000.0
    for step in range(1, steps + 1):
        start = t
        stack = [[frame_file, frame_line, "train_epoch"]]
        lines.append({"ph": "X", "cat": "python_sync", "name": "Tensor.item", "pid": pid, "tid": pid, "ts": t,
                      "dur": 300.0, "args": {"step": step, "module": "", "stack": stack,
                                             "reason": "copies one element to the host"}})
        lines.append({"ph": "X", "cat": "aten", "name": "aten::_local_scalar_dense", "pid": pid, "tid": pid,
                      "ts": t + 20, "dur": 80.0, "args": {"seq": step, "step": step, "module": "", "stack": stack,
                                                          "inputs": [], "outputs": []}})
        t += 400
        lines.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": pid, "tid": pid,
                      "ts": start, "dur": t - start})
        t += 50
    lines.append({"ph": "M", "pid": pid, "tid": 0, "name": "npu_doctor_end",
                  "args": {"steps_completed": steps, "reason": "done"}})
    with open(path, "w") as f:
        f.write("[\n" + "\n,".join(json.dumps(x) for x in lines) + "\n]\n")


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class SnippetSources(unittest.TestCase):
    """Variants of round-3 html_snippet_leak.npud.json / html_snippet_bigfile.sh: the trace names
    the file; the report shows it only when it is Python source under the folder npu-doctor runs in."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="npud-snippets-")
        self.project = os.path.join(self.dir, "project")
        os.makedirs(os.path.join(self.project, "model"))

    def tearDown(self):
        import shutil
        shutil.rmtree(self.dir)

    def report(self, frame_file, frame_line, *cmd):
        cap = os.path.join(self.dir, "c.npud.json")
        sync_capture(cap, frame_file, frame_line)
        out = os.path.join(self.dir, "r.html")
        env = dict(os.environ, NPUD_SNIPPET_CANARY="canary-7f3a9")
        args = list(cmd) if cmd else ["analyze", cap, "--fail-on", "never"]
        args += ["--format", "html", "-o", out, "-q"]
        r = subprocess.run([BINARY] + args, capture_output=True, text=True, timeout=120, cwd=self.project, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            return f.read()

    def test_source_under_the_working_directory_is_shown(self):
        with open(os.path.join(self.project, "model", "loop.py"), "w") as f:
            f.write("for batch in data:\n    total += loss.item()  # the sync\n    step()\n")
        html = self.report(os.path.join(self.project, "model", "loop.py"), 2)
        self.assertIn('class="snippet"', html)
        self.assertIn("total += loss.item()  # the sync", html)

    def test_system_files_secrets_and_other_folders_are_withheld_with_the_reason(self):
        with open(os.path.join(self.project, ".env"), "w") as f:
            f.write("DB_PASSWORD=canary-7f3a9\n")
        os.makedirs(os.path.join(self.dir, "other"))
        with open(os.path.join(self.dir, "other", "keys.py"), "w") as f:
            f.write("TOKEN = 'canary-7f3a9'\n")
        for target, line, why in (("/proc/self/environ", 1, "a system file"),
                                  (os.path.join(self.project, ".env"), 1, "only Python source files"),
                                  (os.path.join(self.dir, "other", "keys.py"), 1, "outside the folders")):
            html = self.report(target, line)
            self.assertNotIn("canary-7f3a9", html, target)
            self.assertNotIn('class="snippet"', html, target)
            self.assertIn("not shown: " + why, html, target)

    def test_diff_withholds_the_same_way(self):
        before = os.path.join(self.dir, "before.npud.json")
        sync_capture(before, os.path.join(self.project, "model", "other.py"), 3)
        cap = os.path.join(self.dir, "c.npud.json")  # AFTER: a new finding at /proc/self/environ
        html = self.report("/proc/self/environ", 1, "diff", before, cap)
        self.assertNotIn("canary-7f3a9", html)
        self.assertIn("not shown: a system file", html)

    def test_a_huge_file_is_not_read_whole(self):
        with open(os.path.join(self.project, "gen.py"), "wb") as f:
            f.truncate(300 << 20)  # sparse, no newline: line 2 never comes within the 1 MiB read
        html = self.report(os.path.join(self.project, "gen.py"), 2)
        self.assertIn("past the first 1 MiB", html)


if __name__ == "__main__":
    unittest.main()
