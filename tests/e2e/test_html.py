"""End to end: every HTML report (analyze on fixtures and a capture, run on the example, diff, cluster)
loads in headless Chromium at 800 and 1400 px without console errors, has its charts, keeps hostile names
as text, and reads like the text report's first screen (issue 30 section 3): the top problems first, no
horizontal overflow, HOT001 never a top problem nor time lost on a capture, legend colours equal drawn
colours, no "device -1", no fix text twice in a rule. Needs /usr/bin/chromium (Debian `chromium`, listed
in tools/deps.sh). Each page is loaded once per width (about a second per launch)."""

import html as html_lib
import json
import os
import re
import subprocess
import tempfile
import unittest

from e2e_support import PYTHON, python_has

BINARY = os.environ.get("NPUD_BINARY", "")
from e2e_support import SHARED
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


# Runs inside a copy of the page (its CSP let through this one nonce): measures the layout with every
# section folded, then with every section open, and writes what it saw into <pre id="npud-probe">.
PROBE = r"""<script nonce="npudprobe">(function () {
  const de = document.documentElement, out = {inner: innerWidth};
  const first = document.getElementById(FIRST_ID);
  out.first_top = first ? first.getBoundingClientRect().top + scrollY : null;
  out.top_items = [...document.querySelectorAll('#top-problems li')].map(li => li.textContent);
  out.folded_scroll = de.scrollWidth;
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  out.open_scroll = de.scrollWidth;
  out.too_wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)
      .slice(0, 5).map(e => e.tagName + '.' + e.getAttribute('class') + '#' + e.id);
  out.svgs = [...document.querySelectorAll('svg[id]')].map(e => e.id);
  out.legend = {}; out.drawn = {};
  document.querySelectorAll('.legend [data-mark]').forEach(s => {
    out.legend[s.dataset.mark] = getComputedStyle(s.querySelector('i')).backgroundColor; });
  document.querySelectorAll('svg rect[data-mark]').forEach(r => {
    const l = out.drawn[r.dataset.mark] || (out.drawn[r.dataset.mark] = []);
    const c = getComputedStyle(r).fill;
    if (!l.includes(c)) l.push(c); });
  out.fix_repeats = [];
  document.querySelectorAll('details.rule').forEach(d => { const seen = new Set();
    d.querySelectorAll('pre.fix').forEach(p => {
      if (seen.has(p.textContent)) out.fix_repeats.push(d.id + ': ' + p.textContent.slice(0, 80));
      seen.add(p.textContent); }); });
  out.rule_summaries = [...document.querySelectorAll('details.rule > summary')].map(s => s.textContent);
  const pre = document.createElement('pre'); pre.id = 'npud-probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();</script>"""


def cost_seconds(top_item):
    """The "~33.8 ms" estimate of a top-problem item, in seconds (0 when it has none)."""
    m = re.search(r"~([0-9.]+) (ns|us|ms|s)\b", top_item)
    return float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)] if m else 0.0


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(os.path.exists(CHROMIUM), "headless Chromium absent: install Debian's `chromium` (tools/deps.sh)")
class HtmlInChromium(unittest.TestCase):
    WIDTHS = (800, 1400)

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npud-html-")

    def npud(self, *args, timeout=300):
        r = subprocess.run([BINARY] + list(args), capture_output=True, text=True, timeout=timeout)
        self.assertEqual(r.returncode, 0, r.stderr)

    def analyze_fixture(self, name, *parts):
        """`analyze --format html` of the shared fixture at parts (skips when it is absent): the page's path."""
        path = os.path.join(SHARED, "fixtures", *parts)
        if not os.path.exists(path):
            self.skipTest("fixture %s is absent" % path)
        out = os.path.join(self.dir, name + ".html")
        self.npud("analyze", "-q", "--fail-on", "never", "--format", "html", "-o", out, path)
        return out

    def load(self, html, name, width, first_id):
        """Loads a probed copy of html in Chromium `width` px wide: returns (DOM, probe results, console errors)."""
        with open(html, encoding="utf-8") as f:
            text = f.read()
        csp = "default-src 'none';"
        self.assertIn(csp, text)
        text = text.replace(csp, csp + " script-src 'nonce-npudprobe';", 1)
        text = text.replace("</body>", PROBE.replace("FIRST_ID", json.dumps(first_id)) + "</body>", 1)
        page = os.path.join(self.dir, "%s-%d.html" % (name, width))
        with open(page, "w", encoding="utf-8") as f:
            f.write(text)
        profile = tempfile.mkdtemp(prefix="chromium-", dir=self.dir)
        r = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
                            "--user-data-dir=" + profile, "--no-first-run", "--window-size=%d,1000" % width,
                            "--dump-dom", "file://" + page], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        m = re.search(r'<pre id="npud-probe">(.*?)</pre>', r.stdout, re.S)
        self.assertIsNotNone(m, "the probe did not run in %s: %s" % (name, r.stderr[-2000:]))
        errors = [line for line in r.stderr.splitlines()
                  if "Uncaught" in line or "CONSOLE" in line and ("error" in line.lower()) or "Refused to" in line]
        return r.stdout, json.loads(html_lib.unescape(m.group(1))), errors

    def check_page(self, html, name, chart_ids, first_id="top-problems", capture=False):
        """The checks every page passes at both widths; returns the DOM at the last width."""
        self.assertTrue(os.path.exists(html), html)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        self.assertNotRegex(text, r"(?i)<(script|link|iframe)\b", "the report must not load or run anything")
        self.assertNotRegex(text, r"(?i)(src|href)=\"?(https?:)?//", "the report must not reach the network")
        self.assertNotIn("device -1", text)
        for width in self.WIDTHS:
            where = "%s at %d px" % (name, width)
            dom, p, errors = self.load(html, name, width, first_id)
            self.assertEqual(errors, [], "console errors in " + where)
            for chart in chart_ids:
                self.assertIn(chart, p["svgs"], "chart #%s missing from the DOM of %s" % (chart, where))
            self.assertIn('id="summary-cards"', dom)
            # Nothing wider than the window, folded or open (charts scale, tables scroll in their panel).
            self.assertLessEqual(p["folded_scroll"], p["inner"], where)
            self.assertLessEqual(p["open_scroll"], p["inner"], "%s: %s" % (where, p["too_wide"]))
            # The first screen: the top problems (or the cluster's slow ranks) start within 800 px.
            self.assertIsNotNone(p["first_top"], "#%s missing in %s" % (first_id, where))
            self.assertLess(p["first_top"], 800, where)
            self.assertFalse([t for t in p["top_items"] if "HOT001" in t], where)
            for mark, colours in p["drawn"].items():
                self.assertEqual(colours, [p["legend"].get(mark)], "%s: %s bars vs the legend" % (where, mark))
            self.assertEqual(p["fix_repeats"], [], where)
            if capture:
                hot = [s for s in p["rule_summaries"] if "HOT001" in s]
                self.assertFalse([s for s in hot if re.search(r"\blost\b", s)], where)
                for s in hot:
                    self.assertIn("this machine's CPU, not NPU costs", s)
        return dom, p

    def test_analyze_fixture(self):
        out = self.analyze_fixture("analyze", "kineto", "diff-pair", "control", "control.json.gz")
        dom, p = self.check_page(out, "analyze", ["op-chart", "device-chart", "timeline"])
        self.assertTrue("SYNC001" in dom)
        self.assertEqual(len(p["top_items"]), 5)
        # #40: by estimated time lost (the "~cost" after the rule), whatever the severity.
        costs = [cost_seconds(t) for t in p["top_items"]]
        self.assertEqual(costs, sorted(costs, reverse=True), p["top_items"])
        self.assertTrue(any(t.startswith("error SYNC001") for t in p["top_items"]), p["top_items"])
        rects = len(re.findall(r"<rect\b", dom))
        self.assertLess(rects, 5000)

    def test_timeline_gaps_follow_min_gap_us(self):
        """The timeline's idle lane draws the gaps IDLE001 counts: fewer with a larger --min-gap-us."""
        if not os.path.exists(FIXTURE):
            self.skipTest("fixture %s is absent" % FIXTURE)
        counts = []
        for gap in ("50", "1000"):
            out = os.path.join(self.dir, "gap-%s.html" % gap)
            self.npud("analyze", "-q", "--fail-on", "never", "--min-gap-us", gap, "--format", "html", "-o", out, FIXTURE)
            with open(out, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("gaps of at least %s" % ("50.0 us" if gap == "50" else "1.00 ms"), text)
            counts.append(text.count('data-mark="idle"'))
        self.assertGreater(counts[0], counts[1])

    def test_capture_fixture(self):
        """A real `run` capture: HOT001 (this machine's CPU) is shown last, never a top problem or time lost."""
        out = self.analyze_fixture("capture", "gpu-h200", "nanogpt-run.npud.json.gz")
        dom, p = self.check_page(out, "capture", ["op-chart", "timeline"], capture=True)
        self.assertTrue(p["rule_summaries"][-1].startswith("HOT001"), p["rule_summaries"])
        self.assertTrue(p["top_items"])

    def test_amp_capture_fixture(self):
        """An amp-check capture: the precision section is one more folded section with its charts."""
        out = self.analyze_fixture("amp", "gpu-h200", "nanogpt-amp-bf16.npud.json.gz")
        dom, _ = self.check_page(out, "amp", ["amp-drift-chart", "timeline"], capture=True)
        self.assertTrue('id="amp-section"' in dom)

    def test_ascend_ai_cpu_tasks_and_unknown_device(self):
        """torch_npu's trace_view: AI_CPU tasks in the legend's colour; its streams name no device: "device ?"."""
        out = self.analyze_fixture("ascend", "ascend", "pt-trace-view-1step", "trace_view.json")
        dom, p = self.check_page(out, "ascend", ["op-chart", "device-chart", "timeline"])
        self.assertIn("ai-cpu", p["drawn"])
        self.assertTrue("device ? stream" in dom)
        # CONTIG001's 7 findings share one fix: printed once, the findings under it.
        self.assertRegex(dom, r"One fix for the 7 findings below")
        self.assertEqual(dom.count("<pre class=\"fix\">These tasks convert between memory formats"), 1)

    def test_hostile_names_stay_text(self):
        trace = os.path.join(self.dir, "hostile.json")
        hostile_trace(trace)
        out = os.path.join(self.dir, "hostile.html")
        self.npud("analyze", "-q", "--fail-on", "never", "--format", "html", "-o", out, trace, timeout=60)
        dom, _ = self.check_page(out, "hostile", ["op-chart", "timeline"])
        self.assertEqual(dom.lower().count("<script"), 1, "only the test's probe may be a script")
        self.assertNotIn("<img", dom.lower())
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", dom)

    def test_diff(self):
        if not (os.path.exists(FIXTURE) and os.path.exists(FIXTURE_B)):
            self.skipTest("diff-pair fixtures are absent")
        out = os.path.join(self.dir, "diff.html")
        self.npud("diff", "-q", "--format", "html", "-o", out, FIXTURE, FIXTURE_B)
        dom, _ = self.check_page(out, "diff", ["delta-chart", "timeline"])
        self.assertIn("aten::copy_", dom)

    def test_diff_of_captures_leaves_host_ranking_churn_out(self):
        """Two real run captures: HOT001's rank changes are counted in one line, not listed as fixed or new."""
        a = os.path.join(SHARED, "fixtures", "gpu-h200", "nanogpt-run.npud.json.gz")
        b = os.path.join(SHARED, "fixtures", "gpu-h200", "hf-llama-loop-run.npud.json.gz")
        if not (os.path.exists(a) and os.path.exists(b)):
            self.skipTest("gpu-h200 captures are absent")
        out = os.path.join(self.dir, "capture-diff.html")
        self.npud("diff", "-q", "--format", "html", "-o", out, a, b)
        dom, p = self.check_page(out, "capture-diff", ["delta-chart", "timeline"], capture=True)
        self.assertFalse([s for s in p["rule_summaries"] if s.startswith("HOT001")], p["rule_summaries"])
        self.assertRegex(dom, r"\d+ HOT001 ranking changes not listed")

    def test_cluster(self):
        out = self.analyze_fixture("cluster", "kineto", "multirank-sampled")
        dom, p = self.check_page(out, "cluster", ["rank-chart"], first_id="slow-ranks")
        self.assertIn("rank 1 computes", dom)
        self.assertIn('id="rank-table"', dom)
        self.assertEqual(set(p["drawn"]), {"computing", "communication", "free"})

    @unittest.skipUnless(python_has("torch"), "torch is not importable by %s" % PYTHON)
    def test_run_example(self):
        out = os.path.join(self.dir, "run.html")
        self.npud("run", "-q", "--fail-on", "never", "--capture-dir", os.path.join(self.dir, "cap"),
                  "--format", "html", "-o", out, "--", PYTHON, EXAMPLE, "--steps", "5", timeout=600)
        dom, _ = self.check_page(out, "run", ["op-chart", "timeline"], capture=True)
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
