"""The built wheel as a user gets it: installed into a fresh venv with pip from the file alone
(no index, no build: a compiler is never asked for), then used from there: the binary on the
venv's PATH, `import npu_doctor`, and `npu-doctor run` on the bundled example finding its
planted problems with the shim installed beside the binary. The venv is made from Debian's
Python with its system packages, so the example runs with Debian's torch 1.13.
The wheel is the x86_64 release wheel (tools/release.sh, #39): manylinux_2_28, its binary needs
only glibc (no simdjson, fmt, tree-sitter, isa-l, zlib or C++ runtime from the machine), and it
reads .gz traces the same whether isa-l is loaded at run time or zlib inflates them.
Needs the wheel tools/test.sh builds (NPUD_WHEEL_DIR); runs in the torch1 pass only.
tests/e2e/test_release.py checks both release wheels' binaries and runs the aarch64 one."""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

WHEELS = sorted(glob.glob(os.path.join(os.environ.get("NPUD_WHEEL_DIR", "/nonexistent"), "npu_doctor-*.whl")))
SOURCE = os.environ.get("NPUD_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEBIAN_PYTHON = "/usr/bin/python3"
from e2e_support import MANYLINUX_LIBRARIES, SHARED, assert_valid_sarif, needed_libraries


@unittest.skipUnless(WHEELS, "no wheel in NPUD_WHEEL_DIR (tools/test.sh builds it into build/dist)")
@unittest.skipUnless(os.path.realpath(sys.executable) == os.path.realpath(DEBIAN_PYTHON),
                     "runs once, in the torch1 pass (Debian's Python makes the venv)")
class FreshVenv(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npud-wheel-")
        cls.venv = os.path.join(cls.dir, "venv")
        subprocess.run([DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", cls.venv], check=True, timeout=300)
        env = dict(os.environ, CC="/bin/false", CXX="/bin/false", PIP_NO_INDEX="1")
        r = subprocess.run([os.path.join(cls.venv, "bin", "python"), "-m", "pip", "install", "-q", "--no-index",
                            "--no-deps", "--only-binary", ":all:", WHEELS[-1]],
                           capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 0, r.stderr
        cls.binary = os.path.join(cls.venv, "bin", "npu-doctor")

    def test_binary_and_package_are_installed(self):
        r = subprocess.run([self.binary, "--version"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("npu-doctor", r.stdout)
        r = subprocess.run([os.path.join(self.venv, "bin", "python"), "-c",
                            "import npu_doctor, sys; npu_doctor.capture, npu_doctor.step, npu_doctor.amp_check; "
                            "print(npu_doctor.__file__)"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.strip().startswith(self.venv), r.stdout)

    def test_the_wheel_is_manylinux_and_its_binary_needs_only_glibc_and_libgcc(self):
        # glibc 2.28 at most: openEuler 20.03, Kylin V10 and Ubuntu 20.04 take it.
        tag = re.search(r"-py3-none-manylinux_2_(\d+)_x86_64\.whl$", os.path.basename(WHEELS[-1]))
        self.assertTrue(tag, WHEELS[-1])
        self.assertLessEqual(int(tag.group(1)), 28, WHEELS[-1])
        needed = needed_libraries(self.binary)
        self.assertTrue(needed, self.binary)
        self.assertLessEqual(needed, MANYLINUX_LIBRARIES, self.binary)
        # ldd resolves the whole tree (a needed library's own needs included), with no library
        # path of the machine's to help it.
        ldd = subprocess.run(["ldd", self.binary], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, LD_LIBRARY_PATH=""))
        names = {os.path.basename(line.split()[0]) for line in ldd.stdout.splitlines() if line.strip()}
        self.assertLessEqual(names - {"linux-vdso.so.1"}, MANYLINUX_LIBRARIES, ldd.stdout)
        self.assertNotIn("not found", ldd.stdout)

    def test_gz_traces_read_the_same_with_isal_loaded_or_zlib(self):
        trace = os.path.join(SHARED, "fixtures", "kineto", "cpu-only", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
        if not os.path.exists(trace):
            self.skipTest(f"../shared is absent (NPUD_SHARED_DIR={SHARED}): no real .gz trace to read")
        reports = {}
        for gzip in ("default", "zlib"):
            env = dict(os.environ, LD_LIBRARY_PATH="")
            if gzip == "zlib":
                env["NPUD_GZIP"] = "zlib"
            r = subprocess.run([self.binary, "analyze", "-q", "--fail-on", "never", "--format", "json", trace],
                               capture_output=True, text=True, timeout=300, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            reports[gzip] = [(f["id"], f["message"]) for f in json.loads(r.stdout)["findings"]]
        self.assertTrue(reports["zlib"])
        self.assertEqual(reports["default"], reports["zlib"])
        # --version says which inflater this machine gave the binary.
        version = subprocess.run([self.binary, "--version"], capture_output=True, text=True, timeout=60).stdout
        isal_here = os.path.exists("/usr/lib/x86_64-linux-gnu/libisal.so.2")
        self.assertIn("gzip: isa-l (libisal.so.2, loaded at run time)" if isal_here else "gzip: zlib", version)
        version = subprocess.run([self.binary, "--version"], capture_output=True, text=True, timeout=60,
                                 env=dict(os.environ, NPUD_GZIP="zlib")).stdout
        self.assertIn("gzip: zlib", version)

    def test_rule_docs_are_installed_and_compiled_into_sarif(self):
        docs = os.path.join(self.venv, "share", "npu-doctor", "rules")
        self.assertTrue(os.path.isfile(os.path.join(docs, "SYNC001.md")))
        src = os.path.join(self.dir, "t.py")
        with open(src, "w") as f:
            f.write("import torch\nx = torch.ones(2).cuda()\n")
        r = subprocess.run([self.binary, "scan", "--format", "sarif", src], capture_output=True, text=True, timeout=60)
        log = json.loads(r.stdout)
        rule = next(x for x in log["runs"][0]["tool"]["driver"]["rules"] if x["id"] == "CUDA002")
        # The doc inline (help), no file:// helpUri into the venv, which GitHub would refuse.
        self.assertTrue(rule["help"]["markdown"].startswith("# CUDA002"))
        self.assertNotIn("helpUri", rule)
        assert_valid_sarif(self, log)

    def test_run_on_the_example_finds_its_planted_problems(self):
        if subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
            self.skipTest("Debian's python3-torch is not installed")
        report = os.path.join(self.dir, "report.json")
        env = {k: v for k, v in os.environ.items() if k not in ("NPUD_PYTHON_DIR", "PYTHONPATH")}
        r = subprocess.run([self.binary, "run", "-q", "--fail-on", "never", "--format", "json", "-o", report,
                            "--capture-dir", os.path.join(self.dir, "capture"), "--",
                            os.path.join(self.venv, "bin", "python"), os.path.join(SOURCE, "examples", "tiny_gpt",
                                                                                   "train.py"), "--steps", "4"],
                           capture_output=True, text=True, timeout=600, env=env, cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(report) as f:
            ids = {f["id"] for f in json.load(f)["findings"]}
        for rule in ("SYNC001", "FUSE001", "FUSE004", "FALLBACK002", "CONTIG002"):
            self.assertIn(rule, ids)


if __name__ == "__main__":
    unittest.main()
