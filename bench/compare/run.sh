#!/usr/bin/env bash
# Throughput of `npu-doctor compare` against numpy computing the same metrics
# (bench/compare/numpy_metrics.py), on the same npy pairs in the same run; and, when the
# Python has torch, on the same pairs torch.save'd as .pt files (the .pt reader), with the
# peak RSS of each compare.
# Usage: bench/compare/run.sh [BINARY] [GB]   (default build/npu-doctor, 1 GB of tensor data)
# The pairs are written to a temp dir (removed at the end); both sides read them from the
# page cache (one untimed warm-up pass each), so this measures compute, not the disk.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$ROOT/build/npu-doctor}
GB=${2:-1}
PY=/usr/bin/python3
DIR=$(mktemp -d /tmp/npud-bench-compare.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

# fp32 reference, target = reference through fp16 (the usual low-precision drift), plus a
# few NaN/Inf; 8 pairs of equal size.
$PY - "$DIR" "$GB" <<'PY'
import os, sys
import numpy as np
d, gb = sys.argv[1], float(sys.argv[2])
n = int(gb * 1e9 / 8 / 8)                  # 8 pairs, 2 files of 4-byte floats each
rng = np.random.default_rng(0)
os.makedirs(os.path.join(d, "ref")); os.makedirs(os.path.join(d, "tgt"))
for i in range(8):
    r = rng.standard_normal(n, dtype=np.float32)
    t = r.astype(np.float16).astype(np.float32)
    t[::1000003] = np.nan
    np.save(os.path.join(d, "ref", "t%d.npy" % i), r)
    np.save(os.path.join(d, "tgt", "t%d.npy" % i), t)
PY
BYTES=$(du -cb "$DIR"/ref/*.npy "$DIR"/tgt/*.npy | tail -1 | cut -f1)

time_cmd() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); echo "$e - $s" | bc -l; }

"$BIN" compare -q "$DIR/ref" "$DIR/tgt" > /dev/null || true       # warm-up (page cache)
CPP=$(time_cmd "$BIN" compare -q "$DIR/ref" "$DIR/tgt" || true)
CPP1=$(time_cmd "$BIN" compare -q --threads 1 "$DIR/ref" "$DIR/tgt" || true)
$PY "$ROOT/bench/compare/numpy_metrics.py" "$DIR/ref" "$DIR/tgt" > /dev/null   # warm-up
read -r NP _ < <($PY "$ROOT/bench/compare/numpy_metrics.py" "$DIR/ref" "$DIR/tgt")

rss_mb() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", $1/1024}'; }
RSS=$(rss_mb "$BIN" compare -q "$DIR/ref" "$DIR/tgt" || true)
if $PY -c "import torch" 2>/dev/null; then
  $PY - "$DIR" <<'PY'
import os, sys
import numpy as np, torch
d = sys.argv[1]
for side in ("ref", "tgt"):
    os.makedirs(os.path.join(d, side + "_pt"))
    for i in range(8):
        torch.save(torch.from_numpy(np.load(os.path.join(d, side, "t%d.npy" % i))), os.path.join(d, side + "_pt", "t%d.pt" % i))
PY
  "$BIN" compare -q "$DIR/ref_pt" "$DIR/tgt_pt" > /dev/null || true   # warm-up (page cache)
  PT=$(time_cmd "$BIN" compare -q "$DIR/ref_pt" "$DIR/tgt_pt" || true)
  PT1=$(time_cmd "$BIN" compare -q --threads 1 "$DIR/ref_pt" "$DIR/tgt_pt" || true)
  PTRSS=$(rss_mb "$BIN" compare -q "$DIR/ref_pt" "$DIR/tgt_pt" || true)
  awk -v b="$BYTES" -v c="$PT" -v c1="$PT1" -v r="$PTRSS" -v nr="$RSS" 'BEGIN {
    printf "npu-doctor compare .pt (all cores):  %7.3f s  %6.2f GB/s, peak RSS %d MB (.npy: %d MB)\n", c, b/1e9/c, r, nr
    printf "npu-doctor compare .pt (--threads 1): %7.3f s  %6.2f GB/s\n", c1, b/1e9/c1
  }'
fi

awk -v b="$BYTES" -v c="$CPP" -v c1="$CPP1" -v n="$NP" -v cores="$(nproc)" 'BEGIN {
  printf "tensor data: %.2f GB in 8 npy pairs (fp32 vs fp32-through-fp16), %d cores\n", b/1e9, cores
  printf "npu-doctor compare (all cores):  %7.3f s  %6.2f GB/s\n", c, b/1e9/c
  printf "npu-doctor compare (--threads 1): %7.3f s  %6.2f GB/s\n", c1, b/1e9/c1
  printf "numpy (same metrics, float64):    %7.3f s  %6.2f GB/s\n", n, b/1e9/n
  printf "ratio: %.1fx (all cores), %.1fx (one thread)\n", n/c, n/c1
}'
