#!/usr/bin/python3
"""Scan scaling benchmark (#18.12): time and peak memory of `npu-doctor scan` on one file as
it grows, for a file of realistic code (the scan's test inputs and examples, repeated) and
for one deep `.cuda()` call chain, and for the machine-made shapes of issue 31 F-11 (a chained
assignment `a0 = a1 = ... = 1`, a string concatenation `"cuda" + "cuda" + ...`, an attribute
chain `torch.cuda.cuda...`). Linear means each doubling about doubles the time, and
peak memory stays near the source size plus the findings (the syntax tree is held one
piece of top-level statements at a time). Prints a markdown table.

usage: /usr/bin/python3 bench/scan/scaling.py BUILD/npu-doctor [--mb 5 10 20 40] [--chain 25000 50000 100000]
       [--machine 10000 20000 40000]"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def measure(binary, path):
    """(wall seconds, peak RSS MB) of one scan, from /usr/bin/time -v."""
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", binary, "scan", "--format", "json", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    rss = next(int(l.split(":")[1]) for l in r.stderr.splitlines() if "Maximum resident" in l)
    return wall, rss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--mb", type=int, nargs="+", default=[5, 10, 20, 40])
    ap.add_argument("--chain", type=int, nargs="+", default=[25000, 50000, 100000])
    ap.add_argument("--machine", type=int, nargs="*", default=[10000, 20000, 40000])
    a = ap.parse_args()
    corpus = ""
    for p in sorted(glob.glob(os.path.join(ROOT, "tests/data/scan/**/*.py"), recursive=True) +
                    glob.glob(os.path.join(ROOT, "examples/**/*.py"), recursive=True)):
        with open(p) as f:
            corpus += f.read() + "\n"
    rows, prev = [], None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.py")
        for mb in a.mb:
            with open(path, "w") as f:
                f.write(corpus * (mb * 2**20 // len(corpus) + 1))
            wall, rss = measure(a.binary, path)
            rows.append((f"realistic code, {mb} MB", wall, rss, wall / prev if prev else None, rss / mb))
            prev = wall
        prev = None
        for n in a.chain:
            with open(path, "w") as f:
                f.write("import torch\nx = torch.zeros(1)" + ".cuda()" * n + "\n")
            wall, rss = measure(a.binary, path)
            rows.append((f"`.cuda()` chain x {n}", wall, rss, wall / prev if prev else None, None))
            prev = wall
        shapes = {
            "chained assignment": lambda n: "import torch\n" + " = ".join("a%d" % i for i in range(n)) + " = 1\n",
            "'cuda' concatenation": lambda n: "import torch\ns = " + " + ".join(['"cuda"'] * n) + "\n",
            "attribute chain": lambda n: "import torch\nx = torch" + ".cuda" * n + "\n",
        }
        for name, make in shapes.items():
            prev = None
            for n in a.machine:
                with open(path, "w") as f:
                    f.write(make(n))
                wall, rss = measure(a.binary, path)
                rows.append((f"{name} x {n}", wall, rss, wall / prev if prev else None, None))
                prev = wall
    print("| input | wall s | peak RSS MB | time / previous row | RSS MB per source MB |")
    print("|---|---:|---:|---:|---:|")
    for name, wall, rss, ratio, per in rows:
        print(f"| {name} | {wall:.2f} | {rss:.0f} | {'' if ratio is None else f'{ratio:.2f}x'} | "
              f"{'' if per is None else f'{per:.1f}'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
