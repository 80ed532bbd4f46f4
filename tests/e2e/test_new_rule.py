"""tools/new_rule.py (issue 43): a new rule in one command. On a copy of the files it edits it
writes the rule, its test, doc, text row, registry and README entries; the rule and its test
compile against the project's headers; taken ids and names, and bad ids, are refused with nothing
written. (A full build of its output, with the test passing, is in the closing note of issue 43.)"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from e2e_support import SOURCE_DIR

TOOL = os.path.join(SOURCE_DIR, "tools", "new_rule.py")
BUILD = os.path.dirname(os.environ.get("NPUD_WHEEL_DIR", os.path.join(SOURCE_DIR, "build", "dist")))
COPIED = ["src/rules", "data/texts", "docs/rules", "README.md"]


def compiler():
    for name in ("c++", "g++", "clang++"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@unittest.skipUnless(os.path.realpath(sys.executable) == os.path.realpath("/usr/bin/python3"),
                     "runs once, in the torch1 pass")
class NewRule(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="npud-new-rule-")
        for path in COPIED:
            src, dst = os.path.join(SOURCE_DIR, path), os.path.join(self.root, path)
            if os.path.isdir(src):
                shutil.copytree(src, dst)
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(src, dst)

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def new_rule(self, *args):
        return subprocess.run([sys.executable, TOOL, *args, "--root", self.root], capture_output=True, text=True,
                              timeout=60)

    def read(self, path):
        with open(os.path.join(self.root, path)) as f:
            return f.read()

    def test_writes_every_place_a_rule_needs(self):
        r = self.new_rule("MEM002", "pinned-alloc", "host allocations of pinned memory in the steps")
        self.assertEqual(r.returncode, 0, r.stderr)
        rule = self.read("src/rules/mem002_pinned_alloc.cpp")
        self.assertIn('static constexpr RuleInfo kInfo{"MEM002", "pinned-alloc", "host allocations of pinned memory '
                      'in the steps", Severity::Warning};', rule)
        self.assertIn("const Rule& mem002_rule();", self.read("src/rules/builtin_rules.hpp"))
        registry = self.read("src/rules/registry.cpp")
        self.assertLess(registry.index("&mem001_rule()"), registry.index("&mem002_rule()"))
        self.assertLess(registry.index("&mem002_rule()"), registry.index("&port001_rule()"))   # id order
        self.assertIn("MEM002\tfix\t*\t", self.read("data/texts/rules.tsv"))
        self.assertIn("`MEM002`", self.read("README.md"))
        self.assertTrue(self.read("docs/rules/MEM002.md").startswith("# MEM002 pinned-alloc\n"))
        self.assertIn("TEST(MEM002, ReportsTheStepsOpsItNames)", self.read("tests/unit/test_rule_mem002.cpp"))
        self.compiles("src/rules/mem002_pinned_alloc.cpp")   # registry.cpp: its entry is one line, checked above

    def compiles(self, *files):
        cxx = compiler()
        deps = glob.glob(os.path.join(BUILD, "_deps", "*", "include")) + glob.glob(os.path.join(BUILD, "_deps", "simdjson-*"))
        if not cxx or not deps:
            self.skipTest("no C++ compiler or no build/_deps headers here: the syntax check needs both")
        includes = ["-I" + os.path.join(self.root, "src"), "-I" + os.path.join(SOURCE_DIR, "src")]
        includes += ["-I" + d for d in deps]
        for f in files:
            r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-DFMT_HEADER_ONLY", *includes,
                                os.path.join(self.root, f)], capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, "%s does not compile:\n%s" % (f, r.stderr[-3000:]))

    def test_refuses_what_is_taken_or_malformed_and_writes_nothing(self):
        before = {p: self.read(p) for p in ("README.md", "src/rules/registry.cpp", "data/texts/rules.tsv")}
        for args, said in ((["SYNC001", "new-sync", "x"], "SYNC001 is taken"),
                           (["SYNC002", "host-device-sync", "x"], "the name host-device-sync is taken"),
                           (["sync2", "x", "y"], "letters then three digits"),
                           (["SYNC002", "Bad_Name", "y"], "kebab-case")):
            with self.subTest(args=args):
                r = self.new_rule(*args)
                self.assertEqual(r.returncode, 1, r.stdout)
                self.assertIn(said, r.stderr)
        for path, text in before.items():
            self.assertEqual(self.read(path), text, path)


if __name__ == "__main__":
    unittest.main()
