"""Runs one of bench/capture/models.py's programs for N steps: the whole-process benchmark's child.

    python bench/capture/run_model.py MODEL STEPS [--profiler]

Plain, or under the capture started from the environment (NPUD_CAPTURE, as `npu-doctor run`
does), or inside torch.profiler.profile(record_shapes=True, with_stack=True) with the trace
exported as `npu-doctor analyze` would read it.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def main():
    name, steps = sys.argv[1], int(sys.argv[2])
    _, step = models.make(name)
    if "--profiler" in sys.argv:
        import torch
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    record_shapes=True, with_stack=True) as prof:
            for _ in range(steps):
                step()
                prof.step()
        prof.export_chrome_trace(os.path.join(tempfile.mkdtemp(prefix="npud-bench-prof-"), "trace.json"))
    else:
        for _ in range(steps):
            step()
    print("peak_rss_kb", _peak_rss_kb())


def _peak_rss_kb():
    """This process's own high-water RSS (VmHWM: per address space, so the fork from a large
    parent that wait4's ru_maxrss also counts is not in it)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


if __name__ == "__main__":
    main()
