"""End to end: the capture never touches what the program owns (issue 42). The program's
descriptors (closed, reused, dup2'd over while the capture writes), its exceptions (raised by
its signal handlers inside the capture's frames), its recursion limit, its compiled code, its
own module named npu_doctor, its sys.excepthook and environment, and how it ended (sys.exit
inside a recorded step). Two programs, one `run` each, several checks per run; their printed
lines are what a plain run prints (the programs say so in their docstrings).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from e2e_support import PYTHON, SOURCE_DIR
from test_capture import BINARY, HAVE_TORCH, PROGRAMS

sys.path.insert(0, os.path.join(SOURCE_DIR, "python"))   # the in-process checks: this checkout's shim
from npu_doctor._writer import EventWriter, FileLost  # noqa: E402


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
class CaptureOwnsNothing(unittest.TestCase):
    def run_program(self, program, *args):
        """`run --format json` of programs/PROGRAM: (completed process, report, capture events)."""
        self.dir = tempfile.mkdtemp(prefix="npud-owns-")
        report = os.path.join(self.dir, "report.json")
        r = subprocess.run([BINARY, "run", "-q", "--steps", "1:3", "--capture-dir", os.path.join(self.dir, "out"),
                            "--format", "json", "-o", report, "--fail-on", "never", "--",
                            PYTHON, os.path.join(PROGRAMS, program), *args],
                           capture_output=True, text=True, timeout=300, cwd=self.dir)
        with open(report) as f:
            data = json.load(f)
        with open(os.path.join(self.dir, "out", "capture.npud.json")) as f:
            events = json.load(f)   # whole: no byte of the program's in it, none of it elsewhere
        return r, data, events

    def test_program_keeps_its_descriptors_its_npu_doctor_and_its_exit(self):
        """F-1: after a daemon's close-all the program's log got the capture's descriptor number
        and the capture wrote into it, then closed it under the program (EBADF); siblings: a
        close of every other descriptor, dup2 over them. F-15: its own npu_doctor.py lost to the
        shim's package. F-18: sys.exit(3) in step 3 read as a normal end. cap14: NPUD_STEPS
        inherited, sys.excepthook replaced."""
        log = os.path.join(tempfile.mkdtemp(prefix="npud-owns-log-"), "train.log")
        r, report, events = self.run_program(os.path.join("own_npu_doctor", "train.py"), log)
        self.assertEqual(r.returncode, 3, r.stderr[-3000:])
        self.assertEqual(r.stdout, "own module: 42 the program's own step()\n"
                                   "excepthook is the interpreter's: True\n"
                                   "npu-doctor variables seen: []\n"
                                   "log: 4 lines, all the program's: True\n"
                                   "own step() calls: 5\n")
        with open(log) as f:
            self.assertEqual([line.split()[:2] for line in f], [["step", str(i)] for i in range(4)])
        # the program's own step() marked nothing: optimizer.step() ended steps 1 and 2
        steps = [e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#")]
        self.assertEqual(steps, ["ProfilerStep#1", "ProfilerStep#2"])
        first = report["findings"][0]
        self.assertEqual(first["id"], "CAPTURE001", json.dumps(report["findings"][:2], indent=1))
        self.assertIn("the program raised SystemExit while steps were being recorded", first["message"])
        self.assertIn("2 of the 3 requested steps", first["message"])

    def test_programs_exceptions_recursion_and_compiled_code_stay_its_own(self):
        """F-2: a signal handler's exception raised inside the capture's frames was taken for an
        internal error and swallowed (siblings: another signal, a bound-method handler raising
        through a helper, a weakref callback of the shim's). F-7: recursion under the program's
        limit overflowed in the capture's frames. F-3: torch.compile'd code ran eager ops while
        recording (with inductor, other last bits)."""
        r, report, events = self.run_program("own_exceptions.py")
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        torch_version = next(e["args"]["torch"] for e in events if e.get("name") == "npu_doctor")
        compiled = "-" if torch_version.startswith("1.") else "True"   # torch.compile: torch >= 2.0
        expected = "".join("step %d: budgets 6/6, preemptions 6/6, recursion ok, compiled code ran %s\n" % (i, compiled)
                           for i in range(5))
        self.assertEqual(r.stdout, expected, r.stderr[-3000:])
        self.assertNotIn("capture stopped", r.stderr)
        self.assertNotIn("Exception ignored", r.stderr)
        self.assertEqual([f for f in report["findings"] if f["id"] == "CAPTURE001"], [])
        self.assertEqual(sum(1 for e in events if e.get("name", "").startswith("ProfilerStep#")), 3)


class CaptureFileByIdentity(unittest.TestCase):
    """The capture's writer on its own (no torch): it writes into its file, and closes its
    descriptor, only while the descriptor still leads to that file (F-1)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="npud-owned-")
        self.path = os.path.join(self.dir, "c.npud.json")
        self.writer = EventWriter(self.path)

    def descriptor(self, path):
        """The open descriptor of this process that leads to `path`."""
        for name in os.listdir("/proc/self/fd"):
            try:
                if os.readlink("/proc/self/fd/" + name) == path:
                    return int(name)
            except OSError:
                continue
        return None

    def programs_file(self, name):
        f = open(os.path.join(self.dir, name), "w")
        self.addCleanup(f.close)
        return f

    def test_a_descriptor_the_program_took_over_is_never_written_or_closed(self):
        self.writer.write_event('{"n":1}')
        self.writer.flush()
        os.close(self.descriptor(self.path))            # a daemon's close-all...
        reused = self.programs_file("reused.log")       # ...and the program's next file gets the number
        self.writer.write_event('{"n":2}')
        self.writer.flush()
        dup2_target = self.programs_file("dup2.log")
        os.dup2(dup2_target.fileno(), self.descriptor(self.path))   # dup2 over the (reopened) capture
        self.writer.write_event('{"n":3}')
        self.writer.close()
        for f in (reused, dup2_target):
            os.fstat(f.fileno())   # still open: never closed by the writer
            self.assertEqual(os.path.getsize(f.name), 0, f.name)
        with open(self.path) as f:
            self.assertEqual(json.load(f), [{"n": 1}, {"n": 2}, {"n": 3}])
        self.assertIsNone(self.descriptor(self.path))

    def test_a_capture_file_gone_with_its_descriptor_stops_the_writer(self):
        self.writer.write_event('{"n":1}')
        self.writer.flush()
        os.close(self.descriptor(self.path))
        os.rename(self.path, self.path + ".moved")   # the path names nothing now: no reopen
        self.writer.write_event('{"n":2}')
        with self.assertRaisesRegex(FileLost, re.escape(self.path)):
            self.writer.flush()
        self.writer.close()   # quietly: nothing is written, nothing closed
        self.assertTrue(self.writer.closed)
        with open(self.path + ".moved") as f:
            self.assertEqual(f.read(), '[\n{"n":1}\n')


if __name__ == "__main__":
    unittest.main()
