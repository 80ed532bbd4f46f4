"""End to end: an interrupted run never leaves a half-written file in place of a good one.

`npu-doctor analyze BIG -o report.json` over an existing good report, and `npu-doctor scan
--fix` over a tree of fixable files, are SIGKILLed at random moments (from the start to
past the end of an uninterrupted run). Afterwards report.json is always the old report or
a complete new one (it parses, and equals what an uninterrupted run writes), and each
Python file is its original or its fully fixed text. A kill during the final write can leave
a temporary file (`.NAME.npud-XXXXXX`) beside the target (nothing can clean up after SIGKILL;
SIGINT and SIGTERM remove it);
the target itself is never touched before the rename. The unit side (a writer that throws midway) is tests/unit/test_atomic_file.cpp."""

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import unittest

BINARY = os.environ.get("NPUD_BINARY", "")
KILLS = 12


def big_trace(path, ops=150000):
    """A Kineto-style trace of `ops` aten ops with kernels, enough for analyze to take a while."""
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n')
        ts = 1000
        for i in range(ops):
            name = "aten::mm" if i % 3 else "aten::add"
            f.write('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 1, "tid": 1, "ts": %d, "dur": 8, '
                    '"args": {"External id": %d, "Input Dims": [[64, 64], [64, 64]], '
                    '"Input type": ["float", "float"]}},\n' % (name, ts, i))
            f.write('{"ph": "X", "cat": "kernel", "name": "gemm_%d", "pid": 0, "tid": 7, "ts": %d, "dur": 5, '
                    '"args": {"External id": %d, "correlation": %d, "device": 0, "stream": 7}},\n'
                    % (i % 17, ts + 2, i, i))
            if i % 500 == 0:
                f.write('{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, '
                        '"ts": %d, "dur": 1, "args": {"correlation": %d}},\n' % (ts + 9, 10 ** 7 + i))
            ts += 12
        f.write('{"ph": "i", "name": "end", "pid": 1, "tid": 1, "ts": %d, "s": "t"}\n]}\n' % ts)


def kill_at(cmd, delay, cwd=None, sig=signal.SIGKILL):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    time.sleep(delay)
    if p.poll() is None:
        p.send_signal(sig)
    p.wait()
    return p.returncode


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class AtomicOutput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="npud_atomic_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_analyze_report_killed_at_random_moments(self):
        trace = os.path.join(self.tmp, "big.json")
        big_trace(trace)
        report = os.path.join(self.tmp, "report.json")
        cmd = [BINARY, "analyze", "-q", "--format", "json", "--fail-on", "never", "-o", report, trace]
        # The complete new report, and how long a whole run takes.
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        whole = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(report) as f:
            new_text = f.read()
        self.assertGreater(len(json.loads(new_text)["findings"]), 0)
        old_text = json.dumps({"old": "a good report from an earlier run"}) + "\n"
        rng = random.Random(8)
        outcomes = {"old": 0, "new": 0}
        # Delays over the whole run, a few crowded near its end (when the report is written).
        delays = [rng.uniform(0, whole * 1.1) for _ in range(KILLS - 4)] + \
                 [whole * f for f in (0.85, 0.93, 0.97, 1.0)]
        for delay in delays:
            with open(report, "w") as f:
                f.write(old_text)
            kill_at(cmd, delay)
            with open(report) as f:
                text = f.read()
            json.loads(text)  # never half-written
            self.assertIn(text, (old_text, new_text), "delay %.3f s" % delay)
            outcomes["old" if text == old_text else "new"] += 1
            for name in os.listdir(self.tmp):  # a leftover temp is never the target
                if name.startswith(".report.json.npud-"):
                    os.remove(os.path.join(self.tmp, name))
        print("analyze killed %d times over a %.2f s run: %s" % (len(delays), whole, outcomes))
        self.assertGreater(outcomes["old"], 0)

    def test_interrupt_and_terminate_leave_no_temporary_file(self):
        """#18: SIGINT/SIGTERM during the final write left `.NAME.npud-XXXXXX` behind in ~5 %
        of kills. Now the temporary file is removed before the signal's default action."""
        trace = os.path.join(self.tmp, "big_sig.json")
        big_trace(trace, ops=60000)
        report = os.path.join(self.tmp, "sig_report.json")
        cmd = [BINARY, "analyze", "-q", "--format", "json", "--fail-on", "never", "-o", report, trace]
        t0 = time.monotonic()
        subprocess.run(cmd, capture_output=True, timeout=600, check=True)
        whole = time.monotonic() - t0
        rng = random.Random(18)
        for i in range(KILLS):
            sig = (signal.SIGINT, signal.SIGTERM)[i % 2]
            kill_at(cmd, whole * rng.uniform(0.6, 1.05), sig=sig)
            leftovers = [n for n in os.listdir(self.tmp) if n.startswith(".sig_report.json.npud-")]
            self.assertEqual(leftovers, [], "after %s" % sig.name)
            with open(report) as f:
                json.loads(f.read())  # the old or the new report, whole

    def test_scan_fix_killed_at_random_moments(self):
        src = os.path.join(self.tmp, "proj_src")
        os.makedirs(src, exist_ok=True)
        originals = {}
        for i in range(400):
            body = "import torch\n\n" + "".join("x%d = torch.ones(%d).cuda()\n" % (k, k + 1) for k in range(40))
            originals["m%03d.py" % i] = body
            with open(os.path.join(src, "m%03d.py" % i), "w") as f:
                f.write(body)
        # The fixed text of each file, from an uninterrupted run on a copy.
        ref = os.path.join(self.tmp, "proj_ref")
        shutil.copytree(src, ref)
        t0 = time.monotonic()
        r = subprocess.run([BINARY, "scan", "--fix", ref], capture_output=True, text=True, timeout=600)
        whole = time.monotonic() - t0
        self.assertIn(r.returncode, (0, 1), r.stderr)
        fixed = {}
        for name in originals:
            with open(os.path.join(ref, name)) as f:
                fixed[name] = f.read()
            self.assertNotEqual(fixed[name], originals[name], name)
            self.assertIn(".npu()", fixed[name])
        rng = random.Random(9)
        counts = {"original": 0, "fixed": 0}
        for k in range(6):
            work = os.path.join(self.tmp, "proj_%d" % k)
            shutil.copytree(src, work)
            kill_at([BINARY, "scan", "--fix", work], rng.uniform(0, whole * 1.1))
            for name in originals:
                with open(os.path.join(work, name)) as f:
                    text = f.read()
                self.assertIn(text, (originals[name], fixed[name]), "%s after a kill" % name)
                counts["original" if text == originals[name] else "fixed"] += 1
            shutil.rmtree(work)
        print("scan --fix killed 6 times over a %.2f s run: files %s" % (whole, counts))


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class OutputTargets(unittest.TestCase):
    """-o on what is not a plain file: a character device and a FIFO are written in place, a
    symlink is followed and stays a link; launching commands refuse a bad -o, an unknown
    --torch-npu and the retired spellings before the program runs."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="npud_targets_")
        cls.trace = os.path.join(cls.tmp, "t.json")
        big_trace(cls.trace, ops=200)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def analyze_to(self, target, **kwargs):
        return subprocess.run([BINARY, "analyze", "-q", "--format", "json", "--fail-on", "never", "-o", target,
                               self.trace], capture_output=True, text=True, timeout=120, **kwargs)

    def test_dev_null_stays_a_device(self):
        before = os.stat("/dev/null")
        r = self.analyze_to("/dev/null")
        self.assertEqual(r.returncode, 0, r.stderr)
        after = os.stat("/dev/null")
        self.assertTrue(stat.S_ISCHR(after.st_mode))
        self.assertEqual((before.st_ino, before.st_rdev), (after.st_ino, after.st_rdev))

    def test_fifo_is_written_not_replaced(self):
        fifo = os.path.join(self.tmp, "pipe")
        os.mkfifo(fifo)
        p = subprocess.Popen([BINARY, "analyze", "-q", "--format", "json", "--fail-on", "never", "-o", fifo,
                              self.trace], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(fifo) as f:
            text = f.read()
        self.assertEqual(p.wait(timeout=120), 0)
        self.assertIn("findings", json.loads(text))
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_symlink_is_followed_and_kept(self):
        real = os.path.join(self.tmp, "real.json")
        with open(real, "w") as f:
            f.write("old")
        link = os.path.join(self.tmp, "latest.json")
        os.symlink("real.json", link)
        r = self.analyze_to(link)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(link))
        with open(real) as f:
            self.assertIn("findings", json.loads(f.read()))

    def run_refused(self, *args):
        marker = os.path.join(self.tmp, "ran")
        r = subprocess.run([BINARY, "run", "-q", *args, "--", "/bin/sh", "-c", "touch " + marker],
                           capture_output=True, text=True, timeout=120, cwd=self.tmp)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertFalse(os.path.exists(marker), "the program ran before the refusal")
        return r.stderr

    def test_launch_refuses_before_the_program_runs(self):
        os.makedirs(os.path.join(self.tmp, "adir"), exist_ok=True)
        self.assertIn("is a directory", self.run_refused("-o", "adir"))
        self.assertIn("unknown --torch-npu", self.run_refused("--torch-npu", "9.9"))
        self.assertIn("--capture-dir", self.run_refused("--out-dir", "x"))
        self.assertIn("-o/--output", self.run_refused("--report", "r.json"))


if __name__ == "__main__":
    unittest.main()
