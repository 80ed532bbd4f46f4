#!/usr/bin/python3
"""Scan benchmark: lines/s of `npu-doctor scan` (tree-sitter, all rules, N threads) against
CPython's own parser (`ast.parse` + `ast.walk` of every node) on the same generated tree, in
the same run, best of R repetitions. Prints a markdown table.

usage: /usr/bin/python3 bench/scan/run_bench.py BUILD/npu-doctor [--lines 1000000] [--threads 2]
       [--select CUDA007 --select CONTIG101 ...] [--ruff PATH]

--select adds a row per selection (`scan --select ID`: only the rule files of ID run, and files
where none of them can fire are not parsed); --ruff adds `ruff check` (its default rules, its
own thread count, --no-cache) on the same tree."""
import argparse
import ast
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def py_files(root):
    out = []
    for r, dirs, names in os.walk(root):
        dirs.sort()
        out.extend(os.path.join(r, n) for n in sorted(names) if n.endswith(".py"))
    return out


def ast_one(path):
    with open(path, "rb") as f:
        src = f.read()
    nodes = 0
    for _ in ast.walk(ast.parse(src, filename=path)):
        nodes += 1
    return nodes


def ast_all(files, procs):
    if procs == 1:
        return sum(ast_one(p) for p in files)
    with multiprocessing.Pool(procs) as pool:
        return sum(pool.map(ast_one, files, chunksize=64))


def cpu_seconds():
    """CPU time of this process and its finished children (pool workers, the scan)."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def best(fn, reps):
    """(best wall seconds, CPU seconds of that repetition)"""
    runs = []
    for _ in range(reps):
        c = cpu_seconds()
        t = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t, cpu_seconds() - c))
    return min(runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tree", help="reuse an existing tree instead of generating one")
    ap.add_argument("--select", action="append", default=[], help="also time `scan --select ID`")
    ap.add_argument("--ruff", help="also time `ruff check` (the ruff binary)")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="npud_scan_bench_")
    tree = a.tree or os.path.join(tmp, "tree")
    if not a.tree:
        subprocess.run([sys.executable, os.path.join(HERE, "gen_tree.py"), tree, "--lines", str(a.lines)], check=True)
    files = py_files(tree)
    lines = 0
    size = 0
    for p in files:
        with open(p, "rb") as f:
            data = f.read()
        lines += data.count(b"\n")
        size += len(data)

    report = os.path.join(tmp, "report.json")

    def scan(*extra):
        r = subprocess.run([a.binary, "scan", "--threads", str(a.threads), "--format", "json", "-o", report, *extra,
                            tree], capture_output=True, text=True)
        if r.returncode not in (0, 1):
            sys.exit(f"scan failed ({r.returncode}): {r.stderr[-2000:]}")

    def ruff():
        r = subprocess.run([a.ruff, "check", "--no-cache", "--exit-zero", "--quiet", tree], capture_output=True,
                           text=True, env=dict(os.environ, RAYON_NUM_THREADS=str(a.threads)))
        if r.returncode != 0:
            sys.exit(f"ruff failed ({r.returncode}): {r.stderr[-2000:]}")

    load0 = f"{os.getloadavg()[0]:.1f}"
    scan()  # warm the page cache
    t_scan = best(scan, a.reps)
    t_ast1 = best(lambda: ast_all(files, 1), a.reps)
    t_astn = best(lambda: ast_all(files, a.threads), a.reps)
    import json
    with open(report) as f:
        findings = len(json.load(f)["findings"])

    print(f"tree: {len(files)} files, {lines} lines, {size / 1e6:.1f} MB; {os.cpu_count()} CPUs visible; "
          f"load average before {load0}, after {os.getloadavg()[0]:.1f}; best of {a.reps}; {findings} findings")
    print()
    print("| what | wall s | lines/s (wall) | CPU s | lines per CPU-second |")
    print("|---|---:|---:|---:|---:|")
    rows = [(f"npu-doctor scan ({a.threads} threads, all rules)", t_scan)]
    rows += [(f"npu-doctor scan ({a.threads} threads, --select {s})", best(lambda s=s: scan("--select", s), a.reps))
             for s in a.select]
    if a.ruff:
        rows.append((f"ruff check (default rules, {a.threads} threads)", best(ruff, a.reps)))
    rows += [("python3 ast.parse + ast.walk (1 process)", t_ast1),
             (f"python3 ast.parse + ast.walk ({a.threads} processes)", t_astn)]
    for name, (wall, cpu) in rows:
        print(f"| {name} | {wall:.2f} | {lines / wall:,.0f} | {cpu:.2f} | {lines / cpu:,.0f} |")


if __name__ == "__main__":
    main()
