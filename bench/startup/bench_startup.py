#!/usr/bin/env python3
"""What every `analyze` pays before it reads: CPU milliseconds (user + sys, median of N
interleaved runs) of `--version`, `analyze` of a 2-event trace and `analyze` of a real
capture, for one binary or a baseline and a candidate measured in the same run.

usage: bench/startup/bench_startup.py [--runs N] BINARY [BASELINE_BINARY]
(the capture is ../shared/fixtures/gpu-h200/nanogpt-run.npud.json.gz when ../shared is there)"""

import argparse
import json
import os
import resource
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAPTURE = os.path.join(ROOT, "..", "shared", "fixtures", "gpu-h200", "nanogpt-run.npud.json.gz")


def cpu_ms(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1000 * ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("binary")
    ap.add_argument("baseline", nargs="?")
    a = ap.parse_args()
    tiny = os.path.join(tempfile.mkdtemp(prefix="npud-startup-"), "two_ops.json")
    with open(tiny, "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": n, "pid": 1, "tid": 1, "ts": ts, "dur": 5}
                                   for n, ts in (("aten::add", 0), ("aten::mul", 10))]}, f)
    cases = [("--version", ["--version"]), ("analyze, 2 events", ["analyze", tiny])]
    if os.path.exists(CAPTURE):
        cases.append(("analyze, nanoGPT capture (101 KB .gz)", ["analyze", CAPTURE]))
    binaries = [b for b in (a.baseline, a.binary) if b]
    times = {(b, c): [] for b in binaries for c, _ in cases}
    for _ in range(a.runs):          # interleaved: a load change hits both binaries alike
        for c, args in cases:
            for b in binaries:
                times[(b, c)].append(cpu_ms([b] + args))
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    head = "| case | " + " | ".join(("baseline" if b == a.baseline else "binary") + " (CPU ms)" for b in binaries)
    print(head + (" | binary / baseline |" if a.baseline else " |"))
    print("|---" * (len(binaries) + 1 + bool(a.baseline)) + "|")
    for c, _ in cases:
        row = "| %s | " % c + " | ".join("%.1f" % med[(b, c)] for b in binaries)
        if a.baseline:
            row += " | %.2f" % (med[(a.binary, c)] / med[(a.baseline, c)])
        print(row + " |")


if __name__ == "__main__":
    main()
