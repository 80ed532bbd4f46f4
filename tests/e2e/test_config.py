"""End to end: the configuration file (pyproject.toml / npu-doctor.toml), suppression comments
shared by scan, run and analyze, baselines, and `-` for stdin (docs/configuration.md).

`run` tests need torch in the Python that runs the suite (e2e_support.py); they copy a small
program from programs/ into a temporary folder, edit its planted line, and run it there."""

import json
import os
import shutil
import subprocess
import unittest

import e2e_support
from e2e_support import PYTHON, Folder, python_has

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
BINARY = os.environ.get("NPUD_BINARY", "")
HAVE_TORCH = python_has("torch")

# A source the scan finds three things in: CUDA002 (line 3), SYNC101 (line 5), CUDA001 (line 6).
SOURCE = """import torch
import torch_npu
x = torch.zeros(3).cuda()
for i in range(3):
    v = x.sum().item()
y = torch.zeros(2, device="cuda:0")
"""


def npud(args, cwd, stdin=None):
    r = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=600, cwd=cwd, input=stdin)
    return r.returncode, r.stdout, r.stderr


def scan_json(folder, *args, paths=("src",), stdin=None):
    code, out, err = npud(["scan", "--format", "json", *args, *paths], folder.path, stdin)
    report = json.loads(out) if out.strip().startswith("{") else None
    return code, report, err


def ids(report):
    return sorted((f["id"], f["location"]["line"]) for f in report["findings"])


@unittest.skipUnless(BINARY, "NPUD_BINARY not set")
class ScanConfig(unittest.TestCase):
    def setUp(self):
        self.d = Folder()
        self.d.write("src/train.py", SOURCE)

    def tearDown(self):
        self.d.close()

    def test_without_config_everything_is_found(self):
        code, report, _ = scan_json(self.d)
        self.assertEqual([i for i, _ in ids(report)], ["CUDA001", "CUDA002", "SYNC101"])
        self.assertIsNone(report["summary"]["config"])
        self.assertEqual(code, 1)

    def test_pyproject_table_is_used_and_named_in_the_header(self):
        path = self.d.write("pyproject.toml", '[project]\nname = "p"\n\n[tool.npu-doctor]\nignore = ["cuda"]\n'
                                              'fail-on = "never"\n')
        code, report, _ = scan_json(self.d)
        self.assertEqual(ids(report), [("SYNC101", 5)])
        self.assertEqual(report["summary"]["config"], path)
        self.assertEqual(code, 0)   # fail-on = never
        code, out, _ = npud(["scan", "src"], self.d.path)
        self.assertEqual(out.splitlines()[0], "config: " + path)

    def test_nearest_file_wins_and_options_override(self):
        self.d.write("pyproject.toml", '[tool.npu-doctor]\nignore = ["SYNC"]\n')
        near = self.d.write("src/npu-doctor.toml", 'select = ["CUDA002"]\n')
        code, report, _ = scan_json(self.d)
        self.assertEqual(report["summary"]["config"], near)
        self.assertEqual(ids(report), [("CUDA002", 3)])
        code, report, _ = scan_json(self.d, "--select", "SYNC")
        self.assertEqual(ids(report), [("SYNC101", 5)])

    def test_per_file_ignores(self):
        self.d.write("npu-doctor.toml", '[per-file-ignores]\n"src/*.py" = ["CUDA001"]\n"train.py" = ["SYNC101"]\n')
        code, report, _ = scan_json(self.d)
        self.assertEqual(ids(report), [("CUDA002", 3)])
        self.assertEqual(report["summary"]["suppressed"], 2)

    def test_config_errors_name_file_line_column(self):
        self.d.write("npu-doctor.toml", 'select = ["SYNC"]\nfail-on = 3\n')
        code, out, err = npud(["scan", "src"], self.d.path)
        self.assertEqual(code, 2)
        self.assertIn("npu-doctor.toml:2:11:", err)
        self.d.write("npu-doctor.toml", 'selct = ["SYNC"]\n')
        code, out, err = npud(["scan", "src"], self.d.path)
        self.assertEqual(code, 2)
        self.assertIn("npu-doctor.toml:1:1: unknown key 'selct'", err)


@unittest.skipUnless(BINARY, "NPUD_BINARY not set")
class ScanSuppressions(unittest.TestCase):
    def setUp(self):
        self.d = Folder()

    def tearDown(self):
        self.d.close()

    def scan(self, source):
        self.d.write("src/train.py", source)
        return scan_json(self.d)

    def test_noqa_with_an_id_silences_and_is_counted(self):
        code, report, _ = self.scan(SOURCE.replace(".cuda()", ".cuda()  # noqa: CUDA002"))
        self.assertEqual([i for i, _ in ids(report)], ["CUDA001", "SYNC101"])
        self.assertEqual(report["summary"]["suppressed"], 1)
        code, out, _ = npud(["scan", "src"], self.d.path)
        self.assertIn("; 1 suppressed.", out)

    def test_bare_noqa_silences_nothing(self):
        code, report, _ = self.scan(SOURCE.replace(".cuda()", ".cuda()  # noqa"))
        self.assertEqual(len(report["findings"]), 3)
        self.assertEqual(report["summary"]["suppressed"], 0)

    def test_ignore_file(self):
        code, report, _ = self.scan("# npu-doctor: ignore-file[CUDA001, CUDA002]\n" + SOURCE)
        self.assertEqual([i for i, _ in ids(report)], ["SYNC101"])
        self.assertEqual(report["summary"]["suppressed"], 2)


@unittest.skipUnless(BINARY, "NPUD_BINARY not set")
class ScanBaselineAndStdin(unittest.TestCase):
    def setUp(self):
        self.d = Folder()
        self.d.write("src/train.py", SOURCE)

    def tearDown(self):
        self.d.close()

    def test_baseline_survives_lines_added_above_and_reports_new_findings(self):
        code, out, err = npud(["scan", "src", "--write-baseline", "baseline.json"], self.d.path)
        self.assertEqual(code, 0, err)   # findings at --fail-on, but writing a baseline is no failure
        with open(os.path.join(self.d.path, "baseline.json")) as f:
            self.assertEqual(len(json.load(f)["findings"]), 3)
        self.d.write("src/train.py", "# a comment\n\n" + SOURCE)
        code, report, _ = scan_json(self.d, "--baseline", "baseline.json")
        self.assertEqual(report["findings"], [])
        self.assertEqual(report["summary"]["baselined"], 3)
        self.assertEqual(code, 0)
        self.d.write("src/train.py", SOURCE + "z = torch.ones(1).cuda()\n")
        code, report, _ = scan_json(self.d, "--baseline", "baseline.json")
        self.assertEqual(ids(report), [("CUDA002", 7)])
        self.assertEqual(code, 1)

    def test_not_a_baseline(self):
        self.d.write("b.json", '{"findings": []}')
        code, out, err = npud(["scan", "src", "--baseline", "b.json"], self.d.path)
        self.assertEqual(code, 2)
        self.assertIn("not an npu-doctor baseline", err)

    def test_scan_stdin(self):
        code, report, _ = scan_json(self.d, paths=("-",), stdin=SOURCE)
        self.assertEqual(len(report["findings"]), 3)
        self.assertEqual({f["location"]["file"] for f in report["findings"]}, {"-"})


@unittest.skipUnless(BINARY, "NPUD_BINARY not set")
class ConfigChoice(unittest.TestCase):
    """--config FILE and --no-config, on every command that reads the configuration."""

    def setUp(self):
        self.d = Folder()
        self.d.write("src/train.py", SOURCE)
        self.d.write("pyproject.toml", '[tool.npu-doctor]\nignore = ["cuda"]\n')

    def tearDown(self):
        self.d.close()

    def test_every_command_that_reads_the_configuration_has_both(self):
        for cmd in ("scan", "analyze", "run", "amp-check", "diff"):
            with self.subTest(cmd=cmd):
                code, out, _ = npud([cmd, "--help"], self.d.path)
                self.assertIn("--config", out)
                self.assertIn("--no-config", out)

    def test_scan_config_file_and_no_config(self):
        strict = self.d.write("ci/strict.toml", 'select = ["CUDA002"]\n')
        code, report, err = scan_json(self.d, "--config", "ci/strict.toml")
        self.assertEqual(ids(report), [("CUDA002", 3)], err)
        self.assertEqual(os.path.abspath(os.path.join(self.d.path, report["summary"]["config"])), strict)
        code, report, _ = scan_json(self.d, "--no-config")
        self.assertEqual(len(report["findings"]), 3)
        self.assertIsNone(report["summary"]["config"])
        code, report, _ = scan_json(self.d)
        self.assertEqual(ids(report), [("SYNC101", 5)])   # the nearest file, as before

    def test_config_errors(self):
        code, _, err = npud(["scan", "--config", "ci/none.toml", "src"], self.d.path)
        self.assertEqual(code, 2)
        self.assertIn("ci/none.toml", err)
        self.d.write("other/pyproject.toml", '[project]\nname = "x"\n')
        code, _, err = npud(["scan", "--config", "other/pyproject.toml", "src"], self.d.path)
        self.assertEqual(code, 2)
        self.assertIn("other/pyproject.toml: --config: this pyproject.toml has no [tool.npu-doctor] table", err)
        code, _, err = npud(["scan", "--config", "pyproject.toml", "--no-config", "src"], self.d.path)
        self.assertEqual(code, 2)
        self.assertIn("excludes", err)

    def test_analyze_config_file_and_no_config(self):
        trace = os.path.join(HERE, "..", "data", "chrome", "small_object.json")
        shutil.copy(trace, os.path.join(self.d.path, "trace.json"))
        near = self.d.write("npu-doctor.toml", 'fail-on = "never"\n')
        other = self.d.write("ci/analyze.toml", 'fail-on = "info"\n')

        def analyze(*args):
            code, out, err = npud(["analyze", "--format", "json", *args, "trace.json"], self.d.path)
            return json.loads(out)["summary"].get("config"), err

        self.assertEqual(analyze()[0], near)
        self.assertEqual(analyze("--config", other)[0], other)
        self.assertIsNone(analyze("--no-config")[0])


@unittest.skipUnless(BINARY, "NPUD_BINARY not set")
class FixLeavesWhatIsLeftOut(unittest.TestCase):
    """--fix and --diff fix nothing a comment suppresses, per-file-ignores drop or the baseline holds."""

    def setUp(self):
        self.d = Folder()

    def tearDown(self):
        self.d.close()

    def test_suppressed_ignored_and_baselined_findings_are_not_fixed(self):
        head = "import torch\nimport torch_npu\n"
        suppressed = "a = torch.zeros(3).cuda()  # noqa: CUDA002\n"
        baselined = "b = torch.zeros(3).cuda()\n"
        self.d.write("src/train.py", head + suppressed + baselined)
        ignored = self.d.write("src/other.py", head + "d = torch.zeros(3).cuda()\n")
        self.d.write("npu-doctor.toml", '[per-file-ignores]\n"other.py" = ["CUDA002"]\n')
        code, _, err = npud(["scan", "src", "--write-baseline", "baseline.json"], self.d.path)
        self.assertEqual(code, 0, err)
        train = self.d.write("src/train.py", head + suppressed + baselined + "c = torch.zeros(3).cuda()\n")
        code, out, err = npud(["scan", "--diff", "--baseline", "baseline.json", "src"], self.d.path)
        self.assertEqual([l for l in out.splitlines() if l.startswith(("-", "+")) and not l.startswith(("---", "+++"))],
                         ["-c = torch.zeros(3).cuda()", "+c = torch.zeros(3).npu()"], out)
        code, out, err = npud(["scan", "--fix", "--baseline", "baseline.json", "src"], self.d.path)
        with open(train) as f:
            self.assertEqual(f.read(), head + suppressed + baselined + "c = torch.zeros(3).npu()\n")
        with open(ignored) as f:
            self.assertEqual(f.read(), head + "d = torch.zeros(3).cuda()\n")

    def test_sarif_leaves_suppressed_and_baselined_findings_out_and_stays_valid(self):
        self.d.write("src/train.py", SOURCE.replace(".cuda()", ".cuda()  # noqa: CUDA002"))
        npud(["scan", "src", "--write-baseline", "baseline.json", "--select", "SYNC"], self.d.path)
        code, out, err = npud(["scan", "--format", "sarif", "--baseline", "baseline.json", "src"], self.d.path)
        sarif = json.loads(out)
        self.assertEqual([r["ruleId"] for r in sarif["runs"][0]["results"]], ["CUDA001"])
        e2e_support.assert_valid_sarif(self, sarif)   # last: it skips without ../shared or jsonschema


def copy_program(folder, edit=None):
    """sync_item.py (and its common.py) in folder, the planted line edited by edit(line)."""
    shutil.copy(os.path.join(PROGRAMS, "common.py"), folder.path)
    with open(os.path.join(PROGRAMS, "sync_item.py")) as f:
        lines = f.read().split("\n")
    planted = e2e_support.planted_line(PROGRAMS, "sync_item.py")
    if edit:
        lines[planted - 1] = edit(lines[planted - 1])
    return folder.write("sync_item.py", "\n".join(lines)), planted


def run_json(folder, *args):
    report = os.path.join(folder.path, "report.json")
    cmd = ["run", "-q", "--steps", "1:3", "--capture-dir", os.path.join(folder.path, "out"), "--format", "json",
           "-o", report, *args, "--", PYTHON, "sync_item.py"]
    code, out, err = npud(cmd, folder.path)
    with open(report) as f:
        return code, json.load(f), err


def sync_at(report, line):
    return [f for f in report["findings"] if f["id"] == "SYNC001" and f["location"]["line"] == line]


@unittest.skipUnless(BINARY and HAVE_TORCH, "needs NPUD_BINARY and torch")
class RunSuppressionsAndBaseline(unittest.TestCase):
    def setUp(self):
        self.d = Folder()

    def tearDown(self):
        self.d.close()

    def test_scan_comment_silences_run_and_analyze_too(self):
        path, planted = copy_program(self.d, lambda l: l.replace("# PLANTED", "# npu-doctor: ignore[SYNC001]"))
        code, report, err = run_json(self.d)
        self.assertEqual(sync_at(report, planted), [], err)
        self.assertGreaterEqual(report["summary"]["suppressed"], 1)
        # The same capture analysed later, from the program's folder.
        capture = os.path.join(self.d.path, "out", "capture.npud.json")
        code, out, err = npud(["analyze", "--format", "json", capture], self.d.path)
        self.assertEqual(sync_at(json.loads(out), planted), [])
        # and from stdin
        with open(capture) as f:
            code, out, err = npud(["analyze", "--format", "json", "-"], self.d.path, f.read())
        analyzed = json.loads(out)
        self.assertEqual(analyzed["summary"]["source"], "-")
        self.assertEqual(sync_at(analyzed, planted), [])
        self.assertGreaterEqual(analyzed["summary"]["suppressed"], 1)

    def test_noqa_and_per_file_ignores_in_run(self):
        path, planted = copy_program(self.d, lambda l: l.replace("# PLANTED", "# noqa: SYNC001"))
        code, report, err = run_json(self.d)
        self.assertEqual(sync_at(report, planted), [], err)
        path, planted = copy_program(self.d)   # the comment gone: the configuration silences it
        self.d.write("pyproject.toml", '[tool.npu-doctor]\nper-file-ignores = { "sync_item.py" = ["SYNC001"] }\n')
        code, report, err = run_json(self.d)
        self.assertEqual(sync_at(report, planted), [], err)
        self.assertEqual(report["summary"]["config"], os.path.join(self.d.path, "pyproject.toml"))

    def test_run_baseline(self):
        path, planted = copy_program(self.d)
        code, report, err = run_json(self.d, "--fail-on", "warning", "--write-baseline", "baseline.json")
        self.assertEqual(code, 0, err)
        self.assertEqual(len(sync_at(report, planted)), 1)
        # A line added above the planted one: the baseline still holds the finding.
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write("# edited\n" + text)
        code, report, err = run_json(self.d, "--fail-on", "warning", "--baseline", "baseline.json")
        self.assertEqual(sync_at(report, planted + 1), [], err)
        self.assertGreaterEqual(report["summary"]["baselined"], 1)

    def test_a_run_baseline_holds_on_the_unchanged_example(self):
        # Issue 40: HOT001's ranks, counts and times are no part of the key, so an unchanged
        # program run again reports nothing new, whichever ops its timings put on top.
        shutil.copy(os.path.join(e2e_support.SOURCE_DIR, "examples", "tiny_gpt", "train.py"), self.d.path)
        report_path = os.path.join(self.d.path, "report.json")
        def run(*args):
            cmd = ["run", "-q", "--capture-dir", os.path.join(self.d.path, "out"), "--format", "json", "-o", report_path,
                   *args, "--", PYTHON, "train.py"]
            code, out, err = npud(cmd, self.d.path)
            with open(report_path) as f:
                return code, json.load(f), err
        code, report, err = run("--write-baseline", "baseline.json")
        self.assertEqual(code, 0, err)
        recorded = len(report["findings"])
        self.assertTrue(any(f["id"] == "HOT001" for f in report["findings"]))
        for attempt in range(2):   # timings differ run to run: HOT001's top ops with them
            code, report, err = run("--baseline", "baseline.json", "--fail-on", "info")
            new = [(f["id"], f["message"]) for f in report["findings"]]
            self.assertEqual((code, new), (0, []), f"run {attempt + 2}: {err}")
            self.assertEqual(report["summary"]["baselined"], recorded)

    def test_a_format_1_baseline_still_matches(self):
        path, planted = copy_program(self.d)
        code, report, err = run_json(self.d, "--write-baseline", "baseline.json")
        with open(os.path.join(self.d.path, "baseline.json")) as f:
            written = json.load(f)
        self.assertEqual(written["npu_doctor_baseline"], 2)
        # What format 1 wrote for the planted line: its source text, no op.
        entries = [e for e in written["findings"] if e["id"] == "SYNC001" and e["line"] == planted]
        self.assertEqual(len(entries), 1, written["findings"])
        entries[0]["fingerprint"] = entries[0]["fingerprint"].rsplit("|", 1)[0]
        self.d.write("old.json", json.dumps({"npu_doctor_baseline": 1, "command": "run", "findings": entries}))
        code, report, err = run_json(self.d, "--baseline", "old.json")
        self.assertEqual(sync_at(report, planted), [], err)
        self.assertEqual(report["summary"]["baselined"], 1)

    def test_run_at_a_terminal_says_when_recording_is_done(self):
        # Issue 40: `run` was silent while it recorded; at a terminal the shim says when
        # recording starts and when stopping the program loses nothing. Not with -q or a pipe.
        copy_program(self.d)
        def stderr_of(*args, tty):
            master, slave = os.openpty()
            try:
                r = subprocess.run([BINARY, "run", *args, "--steps", "1:2", "--capture-dir",
                                    os.path.join(self.d.path, "out"), "--format", "json", "-o",
                                    os.path.join(self.d.path, "r.json"), "--fail-on", "never", "--", PYTHON,
                                    "sync_item.py"], cwd=self.d.path, stdout=subprocess.DEVNULL,
                                   stderr=slave if tty else subprocess.PIPE, timeout=600)
                os.close(slave)
                slave = None
                if not tty:
                    return r.stderr.decode()
                chunks = []
                while True:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:   # the pty's other end is closed: all read
                        break
                    if not chunk:
                        break
                    chunks.append(chunk)
                return b"".join(chunks).decode(errors="replace")
            finally:
                if slave is not None:
                    os.close(slave)
                os.close(master)
        err = stderr_of(tty=True)
        self.assertIn("npu-doctor: recording steps 1-2", err)
        self.assertIn("npu-doctor: steps 1-2 recorded; the rest of the run is not captured", err)
        self.assertLess(err.index("recording steps"), err.index("recorded;"))
        for args, tty in ((("-q",), True), ((), False)):
            with self.subTest(args=args, tty=tty):
                self.assertNotIn("recording steps", stderr_of(*args, tty=tty))

    def test_a_bad_baseline_is_refused_before_the_program_runs(self):
        copy_program(self.d)
        code, out, err = npud(["run", "-q", "--baseline", "missing.json", "--", PYTHON, "sync_item.py"], self.d.path)
        self.assertEqual(code, 2)
        self.assertIn("missing.json", err)
        self.assertNotIn("step 0", out)   # sync_item.py prints each step: it never started

    def test_amp_check_keeps_its_amp_rules_under_a_config_select(self):
        config = self.d.write("npu-doctor.toml", 'select = ["SYNC"]\n')
        report = os.path.join(self.d.path, "report.json")
        code, out, err = npud(["amp-check", "-q", "--steps", "1:2", "--capture-dir", os.path.join(self.d.path, "out"),
                               "--format", "json", "-o", report, "--fail-on", "never", "--",
                               PYTHON, os.path.join(HERE, "amp_programs", "overflow.py")], self.d.path)
        with open(report) as f:
            report = json.load(f)
        self.assertEqual(report["summary"]["config"], config)
        rules_run = report["summary"].get("rules_run") or report.get("rules_run") or []
        self.assertTrue(any(r.startswith("AMP") for r in rules_run), rules_run)
        self.assertFalse(any(r.startswith("SYNC") for r in rules_run), rules_run)


@unittest.skipUnless(BINARY and HAVE_TORCH, "needs NPUD_BINARY and torch")
class OneAnalysisForEveryView(unittest.TestCase):
    """analyze, the cluster view of the same capture as two ranks, and diff analyse a trace with
    one pipeline (pipeline/pipeline.hpp): a `# noqa` or the configuration leaves a finding out
    of all three alike."""

    def setUp(self):
        self.d = Folder()
        path, self.planted = copy_program(self.d)
        run_json(self.d, "--fail-on", "never")
        self.capture = os.path.join(self.d.path, "out", "capture.npud.json")
        for rank in (0, 1):
            os.makedirs(os.path.join(self.d.path, "ranks"), exist_ok=True)
            shutil.copy(self.capture, os.path.join(self.d.path, "ranks", "rank%d.json" % rank))

    def tearDown(self):
        self.d.close()

    def views(self):
        """SYNC001's lines under analyze, in the cluster view, and its (before, after) count in diff."""
        def json_of(args):
            code, out, err = npud([*args, "--format", "json", "--fail-on", "never"] if args[0] == "analyze"
                                  else [*args, "--format", "json"], self.d.path)
            self.assertIn(code, (0, 1), err)
            return json.loads(out)
        analyzed = json_of(["analyze", self.capture])
        cluster = json_of(["analyze", "ranks"])
        diffed = json_of(["diff", self.capture, self.capture])
        lines = sorted(f["location"]["line"] for f in analyzed["findings"] if f["id"] == "SYNC001")
        cluster_lines = sorted(f["location"]["line"] for f in cluster["common_findings"] + cluster["partial_findings"]
                               if f["id"] == "SYNC001")
        by_rule = diffed["findings"]["by_rule"].get("SYNC001", {"before": 0, "after": 0})
        return lines, cluster_lines, (by_rule["before"], by_rule["after"])

    def test_noqa_and_config_silence_analyze_cluster_and_diff_alike(self):
        lines, cluster_lines, counts = self.views()
        self.assertIn(self.planted, lines)
        self.assertEqual(cluster_lines, lines)
        self.assertEqual(counts, (len(lines), len(lines)))
        # The comment written after the capture: every view reads it from the source.
        copy_program(self.d, lambda l: l.replace("# PLANTED", "# noqa: SYNC001"))
        quiet_lines, cluster_lines, counts = self.views()
        self.assertNotIn(self.planted, quiet_lines)
        self.assertEqual(len(quiet_lines), len(lines) - 1)
        self.assertEqual(cluster_lines, quiet_lines)
        self.assertEqual(counts, (len(quiet_lines), len(quiet_lines)))
        # The configuration's ignore: no view runs the rule.
        self.d.write("npu-doctor.toml", 'ignore = ["SYNC001"]\n')
        self.assertEqual(self.views(), ([], [], (0, 0)))


if __name__ == "__main__":
    unittest.main()
