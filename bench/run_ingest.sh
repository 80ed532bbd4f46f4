#!/usr/bin/env bash
# Ingest benchmark: npu-doctor's read_trace vs Python's json.load on the same uncompressed
# files, in one run. Prints wall and CPU seconds, peak RSS and the ratios.
#   bench/run_ingest.sh [BUILD_DIR]   (configured with -DNPUD_BENCH=ON)
# Env: SIZE_MB (synthetic trace size, default 1100), PY_MAX_MB (largest file given to
# json.load, default 1100), WORK (scratch dir, default /tmp/npud_bench).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
bench="$build/bench/npud_bench_ingest"
py=/usr/bin/python3
work="${WORK:-/tmp/npud_bench}"
size_mb="${SIZE_MB:-1100}"
py_max_mb="${PY_MAX_MB:-1100}"
shared="$here/../../shared/fixtures/kineto"
mkdir -p "$work"
[ -x "$bench" ] || { echo "build $bench first (cmake -DNPUD_BENCH=ON)"; exit 2; }

synthetic="$work/synthetic_${size_mb}mb.json"
[ -f "$synthetic" ] || { echo "generating $synthetic ..."; $py "$here/gen_trace.py" "$synthetic" "$size_mb"; }
files=("$synthetic")
if [ -f "$shared/mtia-nongpu-large/mtia_rank_0.json.gz" ]; then
  zcat "$shared/mtia-nongpu-large/mtia_rank_0.json.gz" > "$work/mtia_rank_0.json"
  files+=("$work/mtia_rank_0.json")
fi

# Runs a command under /usr/bin/time -v; prints "wall_s cpu_s peak_rss_mb".
measure() {
  /usr/bin/time -v "$@" 2>"$work/time.txt" >/dev/null
  awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); w=(n==3)?a[1]*3600+a[2]*60+a[3]:a[1]*60+a[2]}
              /User time/ {u=$2} /System time/ {s=$2} /Maximum resident/ {r=$2/1024}
              END {printf "%.2f %.2f %.1f\n", w, u+s, r}' "$work/time.txt"
}

echo "date: $(date -u +%F), machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo), load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-26s %8s | %8s %8s %8s | %8s %8s %8s | %9s %9s %7s\n" file MB "ours s" "ours cpu" "RSS MB" "py s" "py cpu" "py RSS" "x (wall)" "x (cpu)" "RSS/sz"
for f in "${files[@]}"; do
  mb=$(stat -c %s "$f" | awk '{printf "%.1f", $1/1e6}')
  cat "$f" > /dev/null   # both readers start with the file in the page cache
  read -r ow oc orss < <(measure "$bench" "$f")
  if awk "BEGIN{exit !($mb <= $py_max_mb)}"; then
    read -r pw pc prss < <(measure $py -c 'import json, sys; json.load(open(sys.argv[1]))' "$f")
  else
    pw=0; pc=0; prss=0
  fi
  awk -v f="$(basename "$f")" -v mb="$mb" -v ow="$ow" -v oc="$oc" -v orss="$orss" -v pw="$pw" -v pc="$pc" -v prss="$prss" 'BEGIN{
    printf "%-26s %8.1f | %8.2f %8.2f %8.1f | %8s %8s %8s | %9s %9s %7.2f\n", f, mb, ow, oc, orss,
      (pw ? pw : "-"), (pc ? pc : "-"), (prss ? prss : "-"),
      (pw ? sprintf("%.1fx", pw/ow) : "-"), (pc ? sprintf("%.1fx", pc/oc) : "-"), orss/mb }'
done
