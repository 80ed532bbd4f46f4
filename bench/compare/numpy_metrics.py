"""The metrics of docs/metrics.md in numpy (vectorised, float64), the baseline for
bench/compare/run.sh. Usage: numpy_metrics.py REF_DIR TARGET_DIR -> seconds and bytes."""

import os
import sys
import time

import numpy as np


def metrics(r, t):
    r = np.asarray(r, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    fr, ft = np.isfinite(r), np.isfinite(t)
    both = fr & ft
    out = {
        "nan_ref": int(np.isnan(r).sum()), "nan": int(np.isnan(t).sum()),
        "inf_ref": int(np.isinf(r).sum()), "inf": int(np.isinf(t).sum()),
        "overflow": int((fr & (np.isinf(t) | (np.abs(t) > 65504))).sum()),
        "underflow": int(((r != 0) & (t == 0)).sum()),
    }
    rb, tb = r[both], t[both]
    n = rb.size
    d = tb - rb
    ad = np.abs(d)
    rel = ad / np.maximum(np.abs(rb), 2.0 ** -24)
    nr, nt = np.sqrt(np.dot(rb, rb)), np.sqrt(np.dot(tb, tb))
    out["cos"] = None if n == 0 else (1.0 if nr == 0 and nt == 0 else 0.0 if nr == 0 or nt == 0
                                      else float(np.dot(rb, tb) / (nr * nt)))
    out["max_abs"] = float(ad.max()) if n else 0.0
    out["max_rel"] = float(rel.max()) if n else 0.0
    out["rmse"] = float(np.sqrt(np.dot(d, d) / n)) if n else 0.0
    out["gt_1e3"] = float((rel > 1e-3).sum() / n) if n else 0.0
    out["gt_5e3"] = float((rel > 5e-3).sum() / n) if n else 0.0
    return out


def main(ref_dir, target_dir):
    names = sorted(f for f in os.listdir(ref_dir) if f.endswith(".npy"))
    start = time.perf_counter()
    total = 0
    for name in names:
        a, b = os.path.join(ref_dir, name), os.path.join(target_dir, name)
        metrics(np.load(a, mmap_mode="r"), np.load(b, mmap_mode="r"))
        total += os.path.getsize(a) + os.path.getsize(b)
    print("%.6f %d" % (time.perf_counter() - start, total))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
