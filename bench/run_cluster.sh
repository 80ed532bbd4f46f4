#!/usr/bin/env bash
# Cluster view benchmark: `npu-doctor analyze DIR` on generated rank files (bench/gen_cluster.py,
# one slow rank planted) with one worker (-j 1) and with the default (one per CPU), in the same
# run. Prints wall and CPU seconds, peak RSS, the largest rank file, and whether the planted
# rank was the first slow rank reported.
#   bench/run_cluster.sh [NPU_DOCTOR]
# Env: LAYOUTS ("RANKSxMB ...", default "8x128 64x16": about 1 GB each), WORK (scratch dir,
# default /tmp/npud_bench_cluster), ROUNDS (default 3; medians).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../build/npu-doctor}"
work="${WORK:-/tmp/npud_bench_cluster}"
layouts="${LAYOUTS:-8x128 64x16}"
rounds="${ROUNDS:-3}"
mkdir -p "$work"

# "wall_s cpu_s peak_rss_mb" of one run under /usr/bin/time -v.
measure() {
  /usr/bin/time -v "$@" 2>"$work/time.txt" >"$work/report.json"
  awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); w=(n==3)?a[1]*3600+a[2]*60+a[3]:a[1]*60+a[2]}
              /User time/ {u=$2} /System time/ {s=$2} /Maximum resident/ {r=$2/1024}
              END {printf "%.2f %.2f %.0f\n", w, u+s, r}' "$work/time.txt"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "date: $(date -u +%F), machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo), load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-8s %8s %9s | %-8s %7s %7s %7s %9s | %s\n" ranks "total MB" "largest" jobs "wall s" "cpu s" "cpu/wall" "RSS MB" "slow rank found"
for layout in $layouts; do
  ranks="${layout%x*}" mb="${layout#*x}"
  dir="$work/${ranks}x${mb}"
  slow=$((ranks / 2 + 1))
  [ -f "$dir/rank-$((ranks - 1)).json" ] || python3 "$here/gen_cluster.py" "$dir" "$ranks" "$mb" "$slow" > /dev/null
  total=$(du -sm "$dir" | cut -f1)
  largest=$(ls -S "$dir" | head -1 | xargs -I{} stat -c %s "$dir/{}" | awk '{printf "%.0f MB", $1/1e6}')
  cat "$dir"/* > /dev/null   # page cache warm for every run
  for jobs in 1 default; do
    args=(analyze "$dir" -q --format json)
    [ "$jobs" = default ] || args+=(-j "$jobs")
    : > "$work/rounds.txt"
    for _ in $(seq "$rounds"); do measure "$bin" "${args[@]}" >> "$work/rounds.txt"; done
    w=$(cut -d' ' -f1 "$work/rounds.txt" | median); c=$(cut -d' ' -f2 "$work/rounds.txt" | median)
    r=$(cut -d' ' -f3 "$work/rounds.txt" | median)
    found=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['slow_ranks']; print('yes' if s and s[0]['rank']==int(sys.argv[2]) else 'NO')" "$work/report.json" "$slow")
    printf "%-8s %8s %9s | %-8s %7s %7s %7.2f %9s | rank %s: %s\n" "$ranks" "$total" "$largest" "$jobs" "$w" "$c" "$(awk -v c="$c" -v w="$w" 'BEGIN {print c / w}')" "$r" "$slow" "$found"
  done
done
