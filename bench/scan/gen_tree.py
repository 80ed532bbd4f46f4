#!/usr/bin/python3
"""Generates a Python source tree of at least N lines for the scan benchmark: copies of real
PyTorch code (the .py files of the installed torch package: models, optimizers, training
utilities) plus the scan's own test inputs, repeated under numbered directories until the
line count is reached. Nothing is committed; the tree goes to a temporary directory."""
import argparse
import os
import shutil
import sys


def sources(torch_dir, extra_dir):
    files = []
    for base in (torch_dir, extra_dir):
        if not base or not os.path.isdir(base):
            continue
        for root, dirs, names in os.walk(base):
            dirs.sort()
            for n in sorted(names):
                if n.endswith(".py"):
                    files.append(os.path.join(root, n))
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--torch-dir", default="/usr/lib/python3/dist-packages/torch")
    ap.add_argument("--extra-dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "scan"))
    a = ap.parse_args()
    files = sources(a.torch_dir, a.extra_dir)
    if not files:
        sys.exit("no Python sources found to copy")
    shutil.rmtree(a.out, ignore_errors=True)
    total = 0
    nfiles = 0
    copy = 0
    while total < a.lines:
        for src in files:
            try:
                with open(src, "rb") as f:
                    data = f.read()
                data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            rel = os.path.relpath(src, "/")
            dest = os.path.join(a.out, f"copy{copy}", rel.replace(os.sep, "_"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(data)
            total += data.count(b"\n")
            nfiles += 1
            if total >= a.lines:
                break
        copy += 1
    print(f"{nfiles} files, {total} lines in {a.out}")


if __name__ == "__main__":
    main()
