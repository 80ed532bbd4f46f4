"""Issue 40: what every command writes with `--format sarif` is a file GitHub code scanning takes
(e2e_support.assert_valid_sarif: GitHub's ingestion rules, then the official schema), and
`--format github` writes one workflow command per finding, as ruff does. Paths are relative to
the project root (--project-root, default the git root), a finding without a source line is put
at line 1 of the profile, capture or summary's profile it came from."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
import urllib.parse

from e2e_support import PYTHON, SHARED, assert_valid_sarif, github_annotations, python_has

BINARY = os.environ.get("NPUD_BINARY", "")
SOURCE = os.path.realpath(os.environ.get("NPUD_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SHARED, "fixtures")
HAVE_BINARY = bool(BINARY) and os.path.exists(BINARY)
HAVE_FIXTURES = os.path.isdir(FIXTURES)

# The inputs of the issue: a GPU profile, a torch_npu profile, msprof-analyze's cluster output,
# a directory of Kineto ranks and an npu-doctor capture.
FIXTURE_INPUTS = ("gpu-h200/nanogpt-bf16-profiler.json.gz", "ascend/pt-trace-view-1step/trace_view.json",
                  "ascend/cluster-analysis-output-8rank", "kineto/multirank-sampled", "gpu-h200/nanogpt-run.npud.json.gz")


def npud(*args, cwd=None, env=None):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=600, cwd=cwd, env=env)


def results_of(log):
    return log["runs"][0]["results"]


def artifact(result):
    """A result's file as a path relative to the project root."""
    return urllib.parse.unquote(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])


def root_of(log):
    return log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]


class Reports:
    """The SARIF and github reports of one command, asserted to be taken by GitHub."""

    def __init__(self, test, *args, cwd=None, env=None):
        r = npud(*args, "--format", "sarif", cwd=cwd, env=env)
        test.assertIn(r.returncode, (0, 1), r.stderr)
        self.sarif = json.loads(r.stdout)
        g = npud(*args, "--format", "github", cwd=cwd, env=env)
        test.assertEqual(g.returncode, r.returncode, g.stderr)
        self.github = github_annotations(test, g.stdout)
        # The same findings, the same files and lines, in the same order.
        test.assertEqual([(a[1], a[2], a[3]) for a in self.github],
                         [(artifact(x), x["locations"][0]["physicalLocation"]["region"]["startLine"], x["ruleId"])
                          for x in results_of(self.sarif)])


@unittest.skipUnless(HAVE_BINARY, "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_FIXTURES, "../shared/fixtures not found beside the checkout: real-trace tests skipped")
class FixtureReports(unittest.TestCase):
    def test_every_input_of_the_issue_gives_sarif_github_takes(self):
        for rel in FIXTURE_INPUTS:
            with self.subTest(input=rel):
                path = os.path.join(FIXTURES, rel)
                reports = Reports(self, "analyze", path, "-q", "--fail-on", "never", "--project-root", SOURCE)
                self.assertEqual(root_of(reports.sarif), "file://" + urllib.parse.quote(SOURCE) + "/")
                for res in results_of(reports.sarif):
                    file = os.path.normpath(os.path.join(SOURCE, artifact(res)))
                    # The user's source, or the input itself (a rank's profile in a cluster).
                    self.assertTrue(file.endswith(".py") or file.startswith(os.path.abspath(path)), file)
                    self.assertIn("npuDoctor/v1", res["partialFingerprints"])
                assert_valid_sarif(self, reports.sarif)

    def test_a_profile_finding_without_a_line_names_the_profile_at_line_1(self):
        path = os.path.join(FIXTURES, "ascend", "pt-trace-view-1step", "trace_view.json")
        log = Reports(self, "analyze", path, "-q", "--fail-on", "never", "--project-root", SHARED).sarif
        self.assertEqual({artifact(x) for x in results_of(log)}, {"fixtures/ascend/pt-trace-view-1step/trace_view.json"})
        self.assertEqual({x["locations"][0]["physicalLocation"]["region"]["startLine"] for x in results_of(log)}, {1})
        # The op stays said, as a logical location beside the physical one.
        ops = [x["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for x in results_of(log)
               if "logicalLocations" in x["locations"][0]]
        self.assertIn("aten::item", ops)
        assert_valid_sarif(self, log)

    def test_fingerprints_do_not_depend_on_the_working_directory_or_the_run(self):
        capture = os.path.join(FIXTURES, "gpu-h200", "nanogpt-run.npud.json.gz")
        args = ("analyze", capture, "-q", "--fail-on", "never", "--format", "sarif", "--project-root", SHARED)
        here, there = npud(*args, cwd=SOURCE), npud(*args, cwd=tempfile.gettempdir())
        self.assertEqual(here.returncode, 0, here.stderr)
        self.assertEqual(here.stdout, there.stdout)
        prints = [x["partialFingerprints"]["npuDoctor/v1"] for x in results_of(json.loads(here.stdout))]
        self.assertEqual(len(prints), len(set(prints)))   # alike findings told apart by ":N"

    def test_paths_outside_the_project_root_climb_with_dot_dot(self):
        path = os.path.join(FIXTURES, "kineto", "multirank-sampled")
        log = Reports(self, "analyze", path, "-q", "--fail-on", "never", "--project-root", SOURCE).sarif
        expected = os.path.relpath(os.path.join(path, "sampled_rank-0.json.gz"), SOURCE)
        self.assertIn(expected, {artifact(x) for x in results_of(log)})
        self.assertTrue(expected.startswith("../"), expected)
        assert_valid_sarif(self, log)

    def test_merge_of_summaries_gives_sarif_github_takes(self):
        out = tempfile.mkdtemp(prefix="npud_cs_merge_")
        try:
            ranks = os.path.join(FIXTURES, "kineto", "multirank-sampled")
            for name in sorted(os.listdir(ranks)):
                r = npud("analyze", os.path.join(ranks, name), "-q", "--format", "summary", "-o",
                         os.path.join(out, name + ".summary.json"))
                self.assertEqual(r.returncode, 0, r.stderr)
            merged = Reports(self, "merge", out, "--fail-on", "never", "--project-root", SOURCE).sarif
            direct = Reports(self, "analyze", ranks, "-q", "--fail-on", "never", "--project-root", SOURCE).sarif
            self.assertEqual(merged, direct)   # a rank's finding is put at the profile its summary names
            assert_valid_sarif(self, merged)
        finally:
            shutil.rmtree(out)


@unittest.skipUnless(HAVE_BINARY, "NPUD_BINARY is not set to the built npu-doctor")
class ScanReports(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="npud_cs_scan_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def scan_available(self):
        if "no Python grammar" in npud("scan", os.devnull).stderr:
            self.skipTest("npu-doctor built without the tree-sitter Python grammar")

    def test_scan_of_the_examples(self):
        self.scan_available()
        reports = Reports(self, "scan", os.path.join(SOURCE, "examples"), "--fail-on", "never", "--project-root", SOURCE)
        self.assertTrue(results_of(reports.sarif))
        self.assertTrue(all(artifact(x).startswith("examples/") for x in results_of(reports.sarif)))
        assert_valid_sarif(self, reports.sarif)

    def test_the_default_project_root_is_the_git_root_above_the_working_directory(self):
        self.scan_available()
        os.makedirs(os.path.join(self.tmp, ".git"))
        os.makedirs(os.path.join(self.tmp, "src", "pkg"))
        with open(os.path.join(self.tmp, "src", "pkg", "train.py"), "w") as f:
            f.write("import torch\nx = torch.ones(2).cuda()\n")
        log = Reports(self, "scan", "pkg", "--fail-on", "never", cwd=os.path.join(self.tmp, "src")).sarif
        self.assertEqual(root_of(log), "file://" + urllib.parse.quote(os.path.realpath(self.tmp)) + "/")
        self.assertEqual({artifact(x) for x in results_of(log)}, {"src/pkg/train.py"})
        assert_valid_sarif(self, log)

    def test_github_annotations_are_workflow_commands_with_escaped_values(self):
        self.scan_available()
        name = "a,b%c.py"
        with open(os.path.join(self.tmp, name), "w") as f:
            f.write("import torch\nx = torch.ones(2).cuda()\n")
        r = npud("scan", name, "--format", "github", "--project-root", self.tmp, cwd=self.tmp)
        self.assertEqual(r.returncode, 1, r.stderr)
        line = next(l for l in r.stdout.splitlines() if "title=CUDA002" in l)
        self.assertTrue(line.startswith("::error file=a%2Cb%25c.py,line=2,col="), line)
        self.assertRegex(line, r",title=CUDA002::\S")

    def test_a_project_root_that_is_not_a_folder_is_refused(self):
        r = npud("scan", os.devnull, "--format", "sarif", "--project-root", os.path.join(self.tmp, "missing"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--project-root", r.stderr)


@unittest.skipUnless(HAVE_BINARY, "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(python_has("torch"), "torch is not importable by %s" % PYTHON)
class LaunchReports(unittest.TestCase):
    """run and amp-check: the program's files and the capture, relative to the project root."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="npud_cs_run_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def launch(self, command, program, *args):
        out = os.path.join(self.tmp, command + ".sarif")
        r = npud(command, "-q", "--fail-on", "never", "--format", "sarif", "-o", out, "--project-root", SOURCE,
                 "--capture-dir", os.path.join(self.tmp, command), *args, "--", PYTHON, program, cwd=SOURCE)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return json.load(f)

    def test_run_of_the_example(self):
        log = self.launch("run", os.path.join("examples", "tiny_gpt", "train.py"), "--steps", "1:2")
        files = {artifact(x) for x in results_of(log)}
        capture = os.path.relpath(os.path.join(self.tmp, "run", "capture.npud.json"), SOURCE)
        self.assertIn("examples/tiny_gpt/train.py", files)
        self.assertLessEqual(files, {"examples/tiny_gpt/train.py", capture})
        assert_valid_sarif(self, log)

    def test_amp_check(self):
        log = self.launch("amp-check", os.path.join(SOURCE, "tests", "e2e", "amp_programs", "overflow.py"),
                          "--level", "O2", "--steps", "1:2")
        self.assertIn(("AMP001", "tests/e2e/amp_programs/overflow.py"), {(x["ruleId"], artifact(x)) for x in results_of(log)})
        assert_valid_sarif(self, log)


if __name__ == "__main__":
    unittest.main()
