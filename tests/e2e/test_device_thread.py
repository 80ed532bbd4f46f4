"""End to end on a device: `run` and `amp-check` of a program whose tensors live on an
accelerator, where the autograd engine runs the backward pass on its own device thread with
no Python frame of the program's (CUDA and Ascend NPUs do; the CPU runs it on the caller's
thread). The device is device_programs/fake_npu.py: torch's PrivateUse1 backend named "npu",
registered from Python, tensors whose data stays on the CPU. On a real H200 the old shim
stopped at the first backward op ("'NoneType' object has no attribute 'f_code'", the GPU
captures in ../shared/fixtures/gpu-h200/).

Needs torch >= 2.5 (a Python device backend) in the Python that runs the suite; skips
otherwise.
"""

import functools
import json
import os
import subprocess
import tempfile
import unittest

import e2e_support
from e2e_support import PYTHON, python_has, torch_version

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "device_programs")
PROGRAM = os.path.join(PROGRAMS, "fake_npu_gpt.py")
planted_line = functools.partial(e2e_support.planted_line, PROGRAMS)
BINARY = os.environ.get("NPUD_BINARY", "")
VERSION = torch_version() if python_has("torch") else None
HAVE_DEVICE = VERSION is not None and VERSION >= (2, 5)
VIEWS = {"aten::view", "aten::transpose.int", "aten::t", "aten::detach", "aten::expand", "aten::_unsafe_view",
         "aten::split.Tensor", "aten::unsqueeze", "aten::permute", "aten::alias", "aten::slice.Tensor"}


def capture_events(path):
    with open(path) as f:
        return json.load(f)


class Run:
    def __init__(self, command, *args):
        self.dir = tempfile.mkdtemp(prefix="npud-device-")
        report = os.path.join(self.dir, "report.json")
        cmd = [BINARY, command, "-q", "--capture-dir", os.path.join(self.dir, "out"), "--format", "json", "-o", report,
               "--fail-on", "never", *args, "--", PYTHON, PROGRAM]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=PROGRAMS)
        self.code, self.stderr = r.returncode, r.stderr
        with open(report) as f:
            self.report = json.load(f)
        self.events = capture_events(os.path.join(self.dir, "out", "capture.npud.json"))

    def findings(self, rule):
        return [f for f in self.report["findings"] if f["id"] == rule]

    def ops(self):
        return [e for e in self.events if e.get("cat") == "aten"]


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_DEVICE, "needs torch >= 2.5 in %s (a device backend registered from Python); "
                                  "torch %s" % (PYTHON, VERSION))
class DeviceThread(unittest.TestCase):
    runs = {}

    @classmethod
    def run_once(cls, command, *args):
        key = (command,) + args
        if key not in cls.runs:
            cls.runs[key] = Run(command, *args)
        return cls.runs[key]

    def assert_complete(self, run):
        self.assertEqual(run.code, 0, run.stderr)
        self.assertEqual([e for e in run.events if e.get("name") == "npu_doctor_error"], [], run.stderr)
        end = [e for e in run.events if e.get("name") == "npu_doctor_end"]
        self.assertEqual(end[0]["args"]["reason"], "done", run.stderr)
        self.assertEqual(run.findings("CAPTURE001"), [])

    def assert_backward_on_device_thread(self, run):
        ops = run.ops()
        main = {e["tid"] for e in ops if "bwd" not in e["args"]}
        device = [e for e in ops if "bwd" in e["args"] and e["tid"] not in main]
        self.assertGreater(len(device), 50, "no backward op recorded on a thread of its own")
        forward_line = planted_line("fake_npu_gpt.py", "# FORWARD")
        attributed = [e for e in device if e["args"]["stack"] and e["args"]["stack"][-1][1] == forward_line]
        # the ops of the model's backward pass carry the forward call's stack, not nothing
        self.assertGreater(len(attributed), len(device) // 2, json.dumps(device[:3], indent=1))

    def test_run_records_the_device_threads_backward_pass(self):
        run = self.run_once("run")
        self.assert_complete(run)
        self.assert_backward_on_device_thread(run)
        self.assertEqual(run.events[0]["args"]["device"], "npu")
        sync = run.findings("SYNC001")
        self.assertEqual([f["location"]["line"] for f in sync], [planted_line("fake_npu_gpt.py")])

    def test_amp_check_emulated_on_the_device(self):
        run = self.run_once("amp-check", "--emulate", "on")
        self.assert_complete(run)
        self.assert_backward_on_device_thread(run)
        self.assert_no_view_measured(run)

    def test_amp_check_with_the_devices_autocast(self):
        run = self.run_once("amp-check", "--emulate", "off")
        self.assert_complete(run)
        self.assert_backward_on_device_thread(run)
        self.assert_no_view_measured(run)
        lowp = [e for e in run.ops() if e["args"].get("numeric", {}).get("dtype") == "float16"]
        self.assertTrue(any("bwd" in e["args"] for e in lowp), "no fp16 backward op measured")

    def assert_no_view_measured(self, run):
        measured = [e["name"] for e in run.ops() if e["name"] in VIEWS and "numeric" in e["args"]]
        self.assertEqual(measured, [], "views have no numerics of their own")
        for rule in ("AMP001", "AMP002"):
            self.assertEqual([f for f in run.findings(rule) if f["location"].get("op") in VIEWS], [])


if __name__ == "__main__":
    unittest.main()
