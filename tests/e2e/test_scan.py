"""End-to-end checks of `npu-doctor scan`: fixes round-trip, --diff applies with patch,
bad inputs are skipped while the scan goes on, exit codes, SARIF structure."""
import ast
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from e2e_support import assert_valid_sarif

BINARY = os.environ.get("NPUD_BINARY", "")
SOURCE = os.environ.get("NPUD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(SOURCE, "tests", "data", "scan")


def scan(*args, cwd=None):
    return subprocess.run([BINARY, "scan", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def read(path):
    with open(path) as f:
        return f.read()


def scan_available():
    if not BINARY or not os.path.exists(BINARY):
        return False
    r = scan(os.devnull)
    return "no Python grammar" not in r.stderr


@unittest.skipUnless(scan_available(), "npu-doctor built without the tree-sitter Python grammar")
class ScanEndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="npud_scan_e2e_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def copy_inputs(self, dest):
        os.makedirs(dest, exist_ok=True)
        for name in sorted(os.listdir(DATA)):
            if name.endswith(".py"):
                shutil.copy(os.path.join(DATA, name), os.path.join(dest, name))

    def test_fix_moves_ddp_trainers_whole(self):
        """Three DDP trainers written the nanoGPT, ImageNet-example and LLaMA ways: after
        --fix they still parse and name no CUDA device, backend or API anywhere in their code
        (comments, docstrings and a label marked "left alone" aside); a --select that would apply half of it applies none."""
        import io
        import re
        import tokenize
        src = os.path.join(DATA, "ddp")
        half = os.path.join(self.tmp, "half")
        shutil.copytree(src, half)
        r = scan("--fix", "--select", "CUDA003", half)
        self.assertIn("not fixed: the CUDA-to-NPU fixes go together and CUDA004", r.stderr)
        for name in os.listdir(src):
            self.assertEqual(read(os.path.join(half, name)), read(os.path.join(src, name)), name)

        whole = os.path.join(self.tmp, "whole")
        shutil.copytree(src, whole)
        r = scan("--fix", whole)
        self.assertIn("Fixed", r.stdout)
        cuda_token = re.compile(r"^[rRuUfF]*['\"]*(cuda|nccl)\b|^(is_cuda|allow_tf32)$")
        kinds = {tokenize.NAME, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
        for name in sorted(os.listdir(whole)):
            text = read(os.path.join(whole, name))
            ast.parse(text)
            self.assertIn("import torch_npu\n", text)
            left = [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                    if t.type in kinds and cuda_token.search(t.string) and "left alone" not in t.line]
            self.assertEqual(left, [], name)
        again = scan(whole)
        self.assertNotIn("fixable with --fix", again.stdout.replace("(0 fixable with --fix)", ""))

    def test_a_selection_finds_what_the_full_scan_finds(self):
        """`--select ID` runs only the rule files that report ID and parses no file where none of
        them can fire (issue 44); its findings are the full scan's findings of ID, for every id."""
        def found(*args):
            report = json.loads(scan("--format", "json", "--fail-on", "never", *args, DATA).stdout)
            return sorted((f["rule"], os.path.relpath(f["file"], DATA), f["line"], f["column"], f["message"])
                          for f in report["findings"])
        everything = found()
        listed = subprocess.run([BINARY, "rules"], capture_output=True, text=True, check=True).stdout
        ids = [line.split()[0] for line in listed.split("Source rules (scan):")[1].splitlines()
               if line.startswith("  ")]
        self.assertGreater(len(ids), 15)
        for rule in ids:
            with self.subTest(rule=rule):
                self.assertEqual(found("--select", rule), [f for f in everything if f[0] == rule])

    def test_a_free_transpose_names_the_view_under_it(self):
        """`k.transpose(-2, -1)` into a matmul is free; when `k` is itself a (1, 2) view, the
        finding names `k` and the line that made it, not the free swap (issue 45)."""
        report = json.loads(scan("--format", "json", "--select", "CONTIG101",
                                 os.path.join(DATA, "contig_attention.py")).stdout)
        text = read(os.path.join(DATA, "contig_attention.py")).splitlines()
        at = [f for f in report["findings"] if "q @ k.transpose(-2, -1)) * (1.0" in text[f["line"] - 1]]
        self.assertEqual(len(at), 2, at)
        under = [f for f in at if "under `k.transpose(-2, -1)`" in f["message"]]
        self.assertEqual(len(under), 1, at)
        self.assertRegex(under[0]["message"], r"^`k` \(a transposed/permuted view, line \d+, under `k.transpose\(-2, -1\)`, "
                                              r"whose last-two swap is free\)")

    def test_fix_leaves_tests_that_guard_cuda_only_code(self):
        """A CUDA test in front of a CUDA-only kernel (transformers activations.py, Mamba, RWKV,
        apex, triton) keeps NPU tensors on the fallback: --fix leaves it as it is, while the
        tests in front of portable code are fixed. Where an NPU kernel does what the CUDA branch
        does (an RMSNorm, a LayerNorm), the finding stays and says to add an NPU branch calling
        it; where none does, there is nothing to do and no finding (issue 45). A file whose only
        fixes are withheld gets no `import torch_npu`."""
        for name in ("cuda_gates.py", "activations_cuda_only.py"):
            shutil.copy(os.path.join(DATA, name), os.path.join(self.tmp, name))
        report = json.loads(scan("--format", "json", self.tmp).stdout)
        withheld = [f for f in report["findings"] if "CUDA-only code" in f["message"]]
        marked = [n for n, line in enumerate(read(os.path.join(DATA, "cuda_gates.py")).splitlines(), 1)
                  if "(no fix)" in line]
        self.assertEqual(len(marked), 3)
        self.assertEqual(sorted(f["line"] for f in withheld), marked, [(f["file"], f["line"]) for f in withheld])
        for f in withheld:
            self.assertFalse(f["fixable"], f)
            self.assertNotEqual(f["severity"], "error", f)
            self.assertRegex(f["fix"], r"^add a branch of its own for NPU tensors \(`x.is_npu`\) calling torch")
            self.assertIn("keep this test as it is", f["fix"])
        for name in ("cuda_gates.py", "activations_cuda_only.py"):
            for n, line in enumerate(read(os.path.join(DATA, name)).splitlines(), 1):
                if "no finding: " in line or "no finding (withheld)" in line:
                    rules = {f["rule"] for f in report["findings"]
                             if os.path.basename(f["file"]) == name and f["line"] == n}
                    self.assertFalse(rules & {"CUDA001", "CUDA007"}, (name, n))
        r = scan("--fix", self.tmp)
        self.assertIn("Fixed ", r.stdout)
        self.assertEqual(read(os.path.join(self.tmp, "activations_cuda_only.py")),
                         read(os.path.join(DATA, "activations_cuda_only.py")))
        before = read(os.path.join(DATA, "cuda_gates.py")).splitlines()
        after = read(os.path.join(self.tmp, "cuda_gates.py"))
        ast.parse(after)
        self.assertIn("import torch  # expect: CUDA006\nimport torch_npu\n", after)
        kept = [line for line in before if "(no fix)" in line or "# no finding" in line or "test: no finding" in line]
        fixed = [line for line in before if "(fix)" in line]
        self.assertEqual(len(kept), 10)
        for line in kept:
            self.assertIn(line, after.splitlines())
        for line in fixed:
            self.assertNotIn(line, after.splitlines())
        self.assertIn('if batch.device.type == "npu":', after)
        self.assertIn("if next(model.parameters()).is_npu:", after)

    def test_fix_writes_only_plain_files_of_the_tree(self):
        """#18: --fix used to follow a .py symlink out of the scanned tree and rewrite its
        target, split hard links and rewrite read-only files. Now each is refused with a
        message, the others are fixed, and "Fixed N" counts only what was written."""
        bad = "import torch\nx = y.cuda()\n"
        tree = os.path.join(self.tmp, "tree")
        outside = os.path.join(self.tmp, "outside.py")
        os.makedirs(tree)
        for name in ("ok.py", "ro.py", "hard.py"):
            with open(os.path.join(tree, name), "w") as f:
                f.write(bad)
        with open(outside, "w") as f:
            f.write(bad)
        os.symlink(outside, os.path.join(tree, "link.py"))
        os.link(os.path.join(tree, "hard.py"), os.path.join(self.tmp, "hard_twin.py"))
        os.chmod(os.path.join(tree, "ro.py"), 0o444)
        r = scan("--fix", tree)
        self.assertIn("link.py: not fixed: it is a symbolic link", r.stderr)
        self.assertIn("ro.py: not fixed: it is read-only", r.stderr)
        self.assertIn("hard.py: not fixed: it has 2 hard links", r.stderr)
        self.assertIn("Fixed 2 findings.", r.stdout)   # ok.py's CUDA002 and CUDA006 only
        self.assertIn("x = y.npu()", read(os.path.join(tree, "ok.py")))
        for path in (outside, os.path.join(tree, "ro.py"), os.path.join(self.tmp, "hard_twin.py")):
            self.assertEqual(read(path), bad, path)
        self.assertEqual(os.stat(os.path.join(tree, "hard.py")).st_nlink, 2)

    def test_fix_keeps_coding_cookies_and_line_ends(self):
        """#18: files with a PEP 263 cookie (latin-1, gbk) were skipped as "not UTF-8" and
        CR-only files gave a false PARSE001. Now both are scanned and fixed, written back in
        their own encoding and line ends, and Python still compiles them."""
        cases = {
            "latin.py": ("latin-1", "# -*- coding: latin-1 -*-\nimport torch\n# café\nx = torch.ones(2).cuda()  # « moved »\n"),
            "gbk.py": ("gbk", "#!/usr/bin/env python\n# coding: gbk\nimport torch\nname = '中文'\nx = torch.ones(2).cuda()\n"),
            "mac.py": ("utf-8", "import torch\r# comment\rx = torch.ones(2).cuda()\r"),
        }
        for name, (enc, text) in cases.items():
            with open(os.path.join(self.tmp, name), "wb") as f:
                f.write(text.encode(enc))
        with open(os.path.join(self.tmp, "klingon.py"), "wb") as f:
            f.write(b"# coding: klingon\nx = y.cuda()\n")
        r = scan("--fix", self.tmp)
        self.assertNotIn("PARSE001", r.stdout)
        self.assertIn("Fixed 6 findings.", r.stdout)
        self.assertIn("klingon.py: unknown encoding `klingon`", r.stderr)
        for name, (enc, text) in cases.items():
            with open(os.path.join(self.tmp, name), "rb") as f:
                raw = f.read()
            compile(raw, name, "exec")
            nl = "\r" if name == "mac.py" else "\n"
            want = text.replace(".cuda()", ".npu()").replace("import torch" + nl, "import torch" + nl + "import torch_npu" + nl, 1)
            self.assertEqual(raw, want.encode(enc), name)

    def test_fix_round_trip_and_diff_applies_with_patch(self):
        fixed_dir = os.path.join(self.tmp, "fixed")
        patched_dir = os.path.join(self.tmp, "patched")
        self.copy_inputs(os.path.join(fixed_dir, "proj"))
        self.copy_inputs(os.path.join(patched_dir, "proj"))

        diff = scan("--diff", "proj", cwd=patched_dir)
        self.assertEqual(diff.returncode, 1, diff.stderr)
        self.assertIn("+++ b/proj/cuda002_dot_cuda.py", diff.stdout)
        # --diff writes nothing.
        for name in os.listdir(os.path.join(patched_dir, "proj")):
            self.assertEqual(read(os.path.join(patched_dir, "proj", name)), read(os.path.join(DATA, name)), name)
        if shutil.which("patch"):
            p = subprocess.run(["patch", "-p1", "--no-backup-if-mismatch"], input=diff.stdout, cwd=patched_dir,
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            p0 = subprocess.run(["patch", "-p1", "--dry-run", "-R"], input=diff.stdout, cwd=patched_dir,
                                capture_output=True, text=True)
            self.assertEqual(p0.returncode, 0, p0.stdout + p0.stderr)

        fix = scan("--fix", "proj", cwd=fixed_dir)
        self.assertIn(fix.returncode, (0, 1), fix.stderr)
        self.assertIn("Fixed ", fix.stdout)
        for name in sorted(os.listdir(os.path.join(fixed_dir, "proj"))):
            fixed_path = os.path.join(fixed_dir, "proj", name)
            with open(fixed_path) as f:
                fixed_text = f.read()
            ast.parse(fixed_text, filename=fixed_path)  # the real Python parser accepts the result
            if shutil.which("patch"):
                with open(os.path.join(patched_dir, "proj", name)) as f:
                    self.assertEqual(f.read(), fixed_text, name)
        text = read(os.path.join(fixed_dir, "proj", "cuda002_dot_cuda.py"))
        self.assertIn("import torch  # expect: CUDA006\nimport torch_npu\n", text)
        self.assertIn("x.cuda(non_blocking=True)", text)  # the ignored line is kept
        self.assertIn('init_process_group(backend="hccl")', read(os.path.join(fixed_dir, "proj", "cuda004_nccl.py")))
        # not after the `import torch` under TYPE_CHECKING, which never runs
        self.assertIn("import torch  # expect: CUDA006\nimport torch_npu\n",
                      read(os.path.join(fixed_dir, "proj", "cuda006_import_torch_npu.py")))

        again = scan("--format", "json", "proj", cwd=fixed_dir)
        report = json.loads(again.stdout)
        self.assertEqual([f for f in report["findings"] if f["fixable"]], [])
        self.assertEqual([f for f in report["findings"] if f["rule"] == "PARSE001"], [])

    def test_diff_of_absolute_paths_applies_with_patch(self):
        """An absolute path under the cwd gets cwd-relative headers (`patch -p1` there); one outside
        it gets headers relative to / (`patch -d / -p1`), never `a//abs/...`."""
        work = os.path.join(self.tmp, "work")
        os.makedirs(os.path.join(work, "pkg"))
        src = "import torch\nimport torch_npu\nbatch = torch.ones(2).cuda()\n"
        target = os.path.join(work, "pkg", "train_step.py")
        with open(target, "w") as f:
            f.write(src)
        inside = scan("--diff", target, cwd=work)
        self.assertIn(inside.returncode, (0, 1), inside.stderr)
        self.assertIn("--- a/pkg/train_step.py\n+++ b/pkg/train_step.py\n", inside.stdout)
        outside_cwd = os.path.join(self.tmp, "elsewhere")
        os.makedirs(outside_cwd)
        outside = scan("--diff", target, cwd=outside_cwd)
        self.assertIn("+++ b/" + target.lstrip("/") + "\n", outside.stdout)
        self.assertNotIn("a//", outside.stdout)
        if shutil.which("patch"):
            p = subprocess.run(["patch", "-p1", "--dry-run"], input=inside.stdout, cwd=work,
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            p = subprocess.run(["patch", "-d", "/", "-p1", "--dry-run"], input=outside.stdout, cwd=outside_cwd,
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("patch -d / -p1", subprocess.run([BINARY, "scan", "--help"], capture_output=True,
                                                        text=True).stdout)

    def test_machine_made_deep_and_long_files_scan_promptly(self):
        """Hang guard for shapes that once took quadratic time or crashed: a 40,000-target chained
        assignment (valid Python), a 20,000-term string concatenation, a 40,000-term product. The
        timeout is a guard, not a measurement (bench/README.md has the numbers)."""
        files = {
            "chained.py": "import torch\n" + " = ".join("w%d" % i for i in range(40000)) + " = 0\n",
            "concat.py": "import torch\nd = torch.device(" + " + ".join(["'cuda'"] * 20000) + ")\n",
            "product.py": "import torch\np = " + " * ".join(["x"] * 40000) + "\n",
        }
        for name, text in files.items():
            with open(os.path.join(self.tmp, name), "w") as f:
                f.write(text + "dev = torch.device('cuda')\n")
        r = subprocess.run([BINARY, "scan", "--format", "json", "--threads", "1", *sorted(files)], cwd=self.tmp,
                           capture_output=True, text=True, timeout=60)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        by_file = {}
        for f in json.loads(r.stdout)["findings"]:
            by_file.setdefault(f["location"]["file"], set()).add(f["id"])
        for name in files:
            self.assertIn("PARSE001", by_file.get(name, set()), (name, by_file))
            self.assertIn("CUDA001", by_file.get(name, set()), (name, by_file))

    def test_bad_inputs_are_skipped_and_the_scan_goes_on(self):
        d = os.path.join(self.tmp, "mixed")
        os.makedirs(os.path.join(d, ".venv"))
        with open(os.path.join(d, ".venv", "pyvenv.cfg"), "w") as f:
            f.write("home = /usr\n")
        with open(os.path.join(d, ".venv", "dep.py"), "w") as f:
            f.write("x.cuda()\n")
        with open(os.path.join(d, "binary.py"), "wb") as f:
            f.write(b"import torch\x00\x01\x02")
        with open(os.path.join(d, "latin1.py"), "wb") as f:
            f.write("# caf\u00e9\nx.cuda()\n".encode("latin-1"))
        with open(os.path.join(d, "broken.py"), "w") as f:
            f.write("import torch\ndef f(:\n    return x.cuda()\n")
        with open(os.path.join(d, "good.py"), "w") as f:
            f.write("import torch\nimport torch_npu\nx = y.cuda()\n")
        r = scan("--format", "json", d)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("binary.py: binary", r.stderr)
        self.assertIn("latin1.py: not UTF-8", r.stderr)
        self.assertIn(".venv/ (virtualenv)", r.stderr)
        report = json.loads(r.stdout)
        by_file = {}
        for f in report["findings"]:
            by_file.setdefault(os.path.basename(f["file"]), []).append(f["rule"])
        self.assertEqual(by_file.get("good.py"), ["CUDA002"])
        self.assertIn("PARSE001", by_file.get("broken.py", []))
        self.assertNotIn("dep.py", by_file)
        self.assertEqual(sorted(os.path.basename(s["file"]) for s in report["skipped"]), ["binary.py", "latin1.py"])
        # --fix leaves the file with a syntax error alone.
        before = read(os.path.join(d, "broken.py"))
        scan("--fix", d)
        self.assertEqual(read(os.path.join(d, "broken.py")), before)
        self.assertIn("x = y.npu()", read(os.path.join(d, "good.py")))

    def test_exit_codes(self):
        clean = os.path.join(self.tmp, "clean.py")
        with open(clean, "w") as f:
            f.write("import torch\n\nprint(torch.ones(2))\n")
        self.assertEqual(scan(clean).returncode, 0)
        self.assertEqual(scan(os.path.join(DATA, "cuda001_device_string.py")).returncode, 1)
        self.assertEqual(scan(os.path.join(self.tmp, "missing.py")).returncode, 2)
        self.assertEqual(scan("--select", "NOPE9", clean).returncode, 2)
        self.assertEqual(scan("--torch-npu", "0.0.1", clean).returncode, 2)
        self.assertEqual(scan("--select", "FUSE", os.path.join(DATA, "cuda001_device_string.py")).returncode, 0)
        # --fail-on as in analyze (default error): sync.py has warnings only.
        self.assertEqual(scan(os.path.join(DATA, "sync.py")).returncode, 0)
        self.assertEqual(scan("--fail-on", "warning", os.path.join(DATA, "sync.py")).returncode, 1)
        self.assertEqual(scan("--fail-on", "error", os.path.join(DATA, "sync.py")).returncode, 0)
        self.assertEqual(scan("--fail-on", "never", os.path.join(DATA, "cuda001_device_string.py")).returncode, 0)
        self.assertEqual(scan("--fail-on", "bad", clean).returncode, 2)

    def test_json_opens_like_every_report(self):
        r = scan("--format", "json", os.path.join(DATA, "cuda001_device_string.py"))
        doc = json.loads(r.stdout)
        self.assertEqual(list(doc)[:3], ["schema_version", "tool", "command"])
        self.assertEqual((doc["schema_version"], doc["tool"]["name"], doc["command"]), (1, "npu-doctor", "scan"))
        # a finding has analyze's shape ("id", "location"); the old flat keys stay as aliases
        self.assertTrue(doc["findings"])
        for f in doc["findings"]:
            self.assertEqual(f["id"], f["rule"])
            self.assertEqual((f["location"]["file"], f["location"]["line"], f["location"]["column"]),
                             (f["file"], f["line"], f["column"]))

    def test_diff_reports_what_remains_at_the_lines_of_the_unchanged_file(self):
        # issue 30: --diff writes nothing, yet the findings left after its fixes were reported at
        # the fixed file's lines. Here the fix inserts `import torch_npu` (line 2), so SYNC101 at
        # line 4 would have read line 5.
        path = os.path.join(self.tmp, "shift.py")
        source = "import torch\nx = torch.zeros(3).cuda()\nfor i in range(3):\n    v = x.sum().item()\n"
        with open(path, "w") as f:
            f.write(source)
        plain = json.loads(scan("--format", "json", "shift.py", cwd=self.tmp).stdout)
        sync = [(f["line"], f["column"], f["end_line"], f["end_column"]) for f in plain["findings"] if f["id"] == "SYNC101"]
        self.assertEqual([s[0] for s in sync], [4])
        r = scan("--diff", "--format", "json", "shift.py", cwd=self.tmp)
        self.assertIn("+import torch_npu", r.stdout)
        self.assertEqual(read(path), source)   # nothing written
        left = json.loads(r.stderr[r.stderr.index("{"):])
        self.assertEqual([(f["id"], f["line"], f["column"], f["end_line"], f["end_column"]) for f in left["findings"]],
                         [("SYNC101",) + sync[0]])
        self.assertEqual(left["summary"]["fixed"], 2)
        text = scan("--diff", "shift.py", cwd=self.tmp)
        self.assertIn("shift.py:4:", text.stderr)
        self.assertNotIn("shift.py:5:", text.stderr)

    def test_sarif_output(self):
        out = os.path.join(self.tmp, "scan.sarif")
        r = scan("--format", "sarif", "-o", out, "--project-root", DATA, "cuda001_device_string.py", cwd=DATA)
        self.assertEqual(r.returncode, 1, r.stderr)
        with open(out) as f:
            sarif = json.load(f)
        self.assertEqual(sarif["version"], "2.1.0")
        run = sarif["runs"][0]
        rules = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
        self.assertIn("CUDA001", rules)
        self.assertTrue(run["results"])
        for res in run["results"]:
            self.assertIn(res["ruleId"], rules)
            self.assertIn(res["level"], ("error", "warning", "note"))
            self.assertTrue(res["message"]["text"])
            loc = res["locations"][0]["physicalLocation"]
            self.assertEqual(loc["artifactLocation"]["uri"], "cuda001_device_string.py")
            self.assertGreaterEqual(loc["region"]["startLine"], 1)
            self.assertGreaterEqual(loc["region"]["startColumn"], 1)
        for rule in run["tool"]["driver"]["rules"]:
            # The rule's doc, compiled in (help); no helpUri: a file:// path into this machine's
            # installation means nothing where the log is read, and GitHub wants no file:// there.
            self.assertTrue(rule["help"]["markdown"].startswith("# " + rule["id"]), rule["id"])
            self.assertNotIn("helpUri", rule)
        assert_valid_sarif(self, sarif)   # last: it skips without ../shared or jsonschema


if __name__ == "__main__":
    unittest.main()
