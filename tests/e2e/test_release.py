"""The release tools/release.sh made (tools/test.sh: build/release/dist, NPUD_RELEASE_DIST): the
sdist and the manylinux_2_28 wheels for x86_64 and aarch64, as a user on an Ascend server gets them.

- Each wheel's binary is an ELF of its architecture that needs only glibc's libraries and no
  GLIBC_ symbol version above 2.28 (openEuler 20.03, Kylin V10 and EulerOS 2.x have 2.28), and
  the wheel says manylinux_2_28 in its file name and its WHEEL tags.
- The aarch64 binary runs under qemu user emulation (Debian's qemu-user-static, with the arm64
  glibc of libc6-arm64-cross) on every shared fixture snapshot-reports runs (Kineto traces,
  torch_npu profiler tables, npu-doctor captures, two cluster folders, diffs, and `scan` of the
  corpus, examples and test programs), and its JSON and SARIF reports and exit codes equal the
  x86_64 binary's byte for byte; `env` reads a fake CANN tree the same way on both.
Runs once, in the torch1 pass (no torch is needed)."""

import filecmp
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

from e2e_support import MANYLINUX_LIBRARIES, SHARED, needed_libraries

DIST = os.environ.get("NPUD_RELEASE_DIST", "/nonexistent")
SOURCE = os.environ.get("NPUD_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEBIAN_PYTHON = "/usr/bin/python3"
QEMU = shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")
ARM64_GLIBC = "/usr/aarch64-linux-gnu"
ELF_MACHINES = {62: "x86_64", 183: "aarch64"}
MANYLINUX_GLIBC = (2, 28)


def wheel_for(arch):
    found = glob.glob(os.path.join(DIST, f"npu_doctor-*-py3-none-manylinux_2_28_{arch}.whl"))
    return found[0] if len(found) == 1 else None


def extract_binary(wheel, into):
    """The npu-doctor binary of the wheel, unpacked under `into` as pip lays out a venv (bin/ and
    share/npu-doctor beside it), executable."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            m = re.match(r"[^/]+\.data/(scripts|data)/(.+)$", name)
            if not m or name.endswith("/"):   # folders come as entries of their own
                continue
            target = os.path.join(into, "bin" if m.group(1) == "scripts" else "", m.group(2))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    binary = os.path.join(into, "bin", "npu-doctor")
    os.chmod(binary, 0o755)
    return binary


def elf_machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[:4] == b"\x7fELF", f"{path} is not an ELF file"
    return ELF_MACHINES.get(int.from_bytes(head[18:20], "little"), "unknown")


def glibc_versions(path):
    out = subprocess.run(["readelf", "-V", "-W", path], capture_output=True, text=True, check=True).stdout
    return {tuple(int(x) for x in v.split(".")) for v in re.findall(r"Name: GLIBC_([0-9.]+)", out)}


@unittest.skipUnless(os.path.isdir(DIST), f"no release in {DIST} (tools/test.sh runs tools/release.sh into it)")
@unittest.skipUnless(os.path.realpath(sys.executable) == os.path.realpath(DEBIAN_PYTHON),
                     "runs once, in the torch1 pass")
class ReleaseArtefacts(unittest.TestCase):
    def test_dist_holds_the_sdist_both_wheels_and_their_sums(self):
        names = sorted(os.listdir(DIST))
        self.assertEqual(len([n for n in names if n.endswith(".tar.gz")]), 1, names)
        for arch in ("x86_64", "aarch64"):
            self.assertTrue(wheel_for(arch), f"no manylinux_2_28_{arch} wheel in {names}")
        with open(os.path.join(DIST, "SHA256SUMS")) as f:
            sums = dict(reversed(line.split()) for line in f if line.strip())
        self.assertEqual(sorted(sums), [n for n in names if n != "SHA256SUMS"])
        for name, digest in sums.items():
            with open(os.path.join(DIST, name), "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), digest, name)

    def test_the_sdist_carries_what_a_source_build_needs(self):
        import tarfile
        sdist = glob.glob(os.path.join(DIST, "npu_doctor-*.tar.gz"))[0]
        with tarfile.open(sdist) as t:
            members = {m.split("/", 1)[1] for m in t.getnames() if "/" in m}
        for needed in ("CMakeLists.txt", "pyproject.toml", "cmake/BundledDeps.cmake", "cmake/zig-toolchain.cmake",
                       "src/cli/main.cpp", "python/npu_doctor/__init__.py", "data/knowledge"):
            self.assertTrue(needed in members or any(m.startswith(needed + "/") for m in members), needed)
        self.assertFalse([m for m in members if m.startswith(("build/", "dist/", ".venv/"))])

    def test_each_binary_is_its_architecture_and_needs_glibc_2_28_at_most(self):
        for arch in ("x86_64", "aarch64"):
            with self.subTest(arch=arch), tempfile.TemporaryDirectory() as d:
                wheel = wheel_for(arch)
                with zipfile.ZipFile(wheel) as z:
                    tags = re.findall(r"^Tag: (.+)$", z.read(next(n for n in z.namelist()
                                                                  if n.endswith(".dist-info/WHEEL"))).decode(), re.M)
                self.assertEqual(tags, [f"py3-none-manylinux_2_28_{arch}"])
                binary = extract_binary(wheel, d)
                self.assertEqual(elf_machine(binary), arch)
                versions = glibc_versions(binary)
                self.assertTrue(versions, "no GLIBC_ version needs read: readelf changed?")
                self.assertLessEqual(max(versions), MANYLINUX_GLIBC, sorted(versions))
                self.assertLessEqual(needed_libraries(binary), MANYLINUX_LIBRARIES)


@unittest.skipUnless(os.path.isdir(DIST), f"no release in {DIST} (tools/test.sh runs tools/release.sh into it)")
@unittest.skipUnless(os.path.realpath(sys.executable) == os.path.realpath(DEBIAN_PYTHON),
                     "runs once, in the torch1 pass")
@unittest.skipUnless(QEMU and os.path.isdir(ARM64_GLIBC),
                     "no qemu-aarch64-static or arm64 glibc (Debian: apt install qemu-user-static libc6-arm64-cross)")
class Aarch64UnderQemu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npud-release-")
        # Both binaries laid out the same way below one root each, so reports that name the
        # binary's own files differ only by that root.
        cls.x86_64 = extract_binary(wheel_for("x86_64"), os.path.join(cls.dir, "x86_64"))
        cls.aarch64 = extract_binary(wheel_for("aarch64"), os.path.join(cls.dir, "aarch64"))
        cls.emulated = os.path.join(cls.dir, "npu-doctor-aarch64")
        with open(cls.emulated, "w") as f:
            f.write(f'#!/bin/sh\nexec "{QEMU}" -L "{ARM64_GLIBC}" "{cls.aarch64}" "$@"\n')
        os.chmod(cls.emulated, 0o755)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_aarch64(self, *args):
        return subprocess.run([self.emulated, *args], capture_output=True, text=True, timeout=300)

    def test_it_runs(self):
        r = self.run_aarch64("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("npu-doctor", r.stdout)

    def test_reports_on_every_fixture_equal_the_x86_64_binarys(self):
        if not os.path.isdir(os.path.join(SHARED, "fixtures")):
            self.skipTest(f"../shared is absent (NPUD_SHARED_DIR={SHARED}): no fixtures to compare on")
        outs = {}
        # JSON only: SARIF is a renderer of the same findings (CI time: each report runs under qemu)
        env = dict(os.environ, NPUD_SNAPSHOT_FORMATS="json", NPUD_SHARED_DIR=SHARED)
        for arch, binary in (("x86_64", self.x86_64), ("aarch64", self.emulated)):
            outs[arch] = os.path.join(self.dir, "reports-" + arch)
            r = subprocess.run([os.path.join(SOURCE, "tools", "snapshot-reports.sh"), binary, outs[arch]],
                               capture_output=True, text=True, timeout=1200, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
        names = sorted(os.listdir(outs["x86_64"]))
        self.assertEqual(names, sorted(os.listdir(outs["aarch64"])))
        self.assertGreater(len(names), 30, names)   # one JSON report per fixture
        with_findings = 0   # the reports run with --fail-on never: their findings show the inputs were read
        for name in names:
            if name.endswith(".json"):
                with open(os.path.join(outs["x86_64"], name)) as f:
                    report = json.load(f)
                with_findings += bool(isinstance(report, dict) and report.get("findings"))
        self.assertGreater(with_findings, 20, "few reports with findings: were the inputs read?")
        differ = []
        for name in names:
            a, b = (os.path.join(outs[arch], name) for arch in ("x86_64", "aarch64"))
            if filecmp.cmp(a, b, shallow=False):
                continue
            with open(a) as fa, open(b) as fb:  # paths into each binary's own root may differ
                if fa.read().replace(self.dir + "/x86_64", "ROOT") != fb.read().replace(self.dir + "/aarch64", "ROOT"):
                    differ.append(name)
        self.assertEqual(differ, [], f"reports that differ: diff -r {outs['x86_64']} {outs['aarch64']}")

    def test_env_reads_the_cann_tree_of_its_own_architecture(self):
        data = os.path.join(SOURCE, "tests", "data", "env")
        args = ["env", "--format", "json", "--cann-home", os.path.join(data, "cann-two-arches"),
                "--driver-home", os.path.join(data, "driver-24.1"),
                "--python", os.path.join(data, "fake_python", "torch-2.1.0-npu-2.1.0")]
        x86 = subprocess.run([self.x86_64, *args], capture_output=True, text=True, timeout=120)
        arm = self.run_aarch64(*args)
        self.assertEqual(x86.returncode, arm.returncode, arm.stderr)
        self.assertIn('"8.0.RC3.alpha001"', x86.stdout)
        self.assertIn('"8.0.RC3"', arm.stdout)
        self.assertIn("aarch64-linux/ascend_toolkit_install.info", arm.stdout)
        # Everything else the same: the torch/torch_npu pair, the driver, the checks' verdicts.
        self.assertEqual(x86.stdout.replace("x86_64-linux", "ARCH").replace("8.0.RC3.alpha001", "V"),
                         arm.stdout.replace("aarch64-linux", "ARCH").replace("8.0.RC3", "V"))


if __name__ == "__main__":
    unittest.main()
