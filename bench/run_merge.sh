#!/usr/bin/env bash
# merge benchmark (issue 46): rank summaries from bench/gen_summaries.py (TP groups of 8, DP groups
# across them, every tenth rank a straggler), merged flat (`merge DIR`) and in two levels (parts of
# PART ranks each merged with `--format summary`, as the tasks of a Slurm array would, then the parts
# merged), in the same run. Prints user+sys CPU seconds and peak RSS per level, and whether the two
# levels' report equals the flat one (slow ranks, median step, every rank's row).
#   bench/run_merge.sh [NPU_DOCTOR]
# Env: SIZES (default "1250 2500 5000 16384"), PART (ranks per part, default 1024), WORK (scratch,
# default /tmp/npud_bench_merge), ROUNDS (default 3; medians).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(realpath "${1:-$here/../build/npu-doctor}")"
work="${WORK:-/tmp/npud_bench_merge}"
sizes="${SIZES:-1250 2500 5000 16384}"
part="${PART:-1024}"
rounds="${ROUNDS:-3}"
mkdir -p "$work"

# "cpu_s rss_mb" of one run under /usr/bin/time (stdout to $2).
measure() {
  local out=$1; shift
  /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$@" > "$out" 2> /dev/null || true
  tail -1 "$work/time.txt" | awk '{printf "%.2f %.0f\n", $1 + $2, $3 / 1024}'
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
same() {
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: ([(s["rank"], s["dimension"], s["message"]) for s in r["slow_ranks"]], r["median_step_ns"],
                 [{k: v for k, v in row.items() if k != "source"} for row in r["ranks"]], r["common_findings"], r["partial_findings"])
print("yes" if key(a) == key(b) else "NO")
PY
}

echo "date: $(date -u +%F), machine: $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg), part: $part ranks"
printf "%-8s %9s | %-14s %8s | %-22s %8s %8s | %-12s %8s | %s\n" ranks "input MB" "flat CPU s" "RSS MB" \
  "parts (CPU s each, max)" "RSS MB" "part MB" "top CPU s" "RSS MB" "same report"
for n in $sizes; do
  dir="$work/s$n"
  [ -f "$dir/rank-$((n - 1)).json" ] || python3 "$here/gen_summaries.py" "$dir" "$n"
  mb=$(du -sm "$dir" | cut -f1)
  cat "$dir"/* > /dev/null
  : > "$work/flat.txt"
  for _ in $(seq "$rounds"); do measure "$work/flat.json" "$bin" merge "$dir" --format json >> "$work/flat.txt"; done
  flat_cpu=$(cut -d' ' -f1 "$work/flat.txt" | median); flat_rss=$(cut -d' ' -f2 "$work/flat.txt" | median)
  # level 1: one merge per PART ranks, paths from a list (as a launcher would pass them)
  rm -rf "$work/parts" && mkdir -p "$work/parts"
  : > "$work/level1.txt"
  for ((first = 0; first < n; first += part)); do
    seq "$first" $((first + part - 1 < n - 1 ? first + part - 1 : n - 1)) | sed "s|.*|$dir/rank-&.json|" > "$work/list.txt"
    measure /dev/null "$bin" merge --from "$work/list.txt" --format summary -o "$work/parts/part-$first.json" >> "$work/level1.txt"
  done
  part_cpu=$(cut -d' ' -f1 "$work/level1.txt" | sort -g | tail -1); part_rss=$(cut -d' ' -f2 "$work/level1.txt" | sort -g | tail -1)
  part_mb=$(du -sm "$work/parts" | cut -f1)
  : > "$work/top.txt"
  for _ in $(seq "$rounds"); do measure "$work/top.json" "$bin" merge "$work/parts" --format json >> "$work/top.txt"; done
  top_cpu=$(cut -d' ' -f1 "$work/top.txt" | median); top_rss=$(cut -d' ' -f2 "$work/top.txt" | median)
  printf "%-8s %9s | %-14s %8s | %-22s %8s %8s | %-12s %8s | %s\n" "$n" "$mb" "$flat_cpu" "$flat_rss" \
    "$(wc -l < "$work/level1.txt") x, max $part_cpu" "$part_rss" "$part_mb" "$top_cpu" "$top_rss" "$(same "$work/flat.json" "$work/top.json")"
done
