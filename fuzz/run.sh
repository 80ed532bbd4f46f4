#!/usr/bin/env bash
# Runs each libFuzzer harness for SECONDS (default 60), two at a time, with seed corpora
# gathered at run time from tests/data, tests/regression and ../shared/fixtures (nothing is
# copied into the repo). The harnesses are every fuzz/fuzz_*.cpp (the fuzz CMake target
# builds each); the files a harness is seeded with are named on its "// fuzz-seeds:" line.
# Exits non-zero when any harness finds a crash, leak, timeout or sanitizer report, or is
# not built; the crashing input's path is printed (libFuzzer writes it to ARTIFACTS).
# Usage: fuzz/run.sh [SECONDS] [harness...]   env: NPUD_FUZZ_BUILD (default build-fuzz),
#        NPUD_FUZZ_OUT (work dir, default a new temp dir), NPUD_FUZZ_JOBS (default 2),
#        NPUD_FUZZ_MAX_LEN (bytes per input and seed, default 1048576)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_EACH=${1:-60}; shift || true
BUILD=${NPUD_FUZZ_BUILD:-$ROOT/build-fuzz}
HARNESSES=("$@")
if [ ${#HARNESSES[@]} -eq 0 ]; then
  for src in "$ROOT"/fuzz/fuzz_*.cpp; do HARNESSES+=("$(basename "$src" .cpp)"); done
fi
SHARED=$(cd "$ROOT/../shared" 2>/dev/null && pwd || true)
OUT=${NPUD_FUZZ_OUT:-$(mktemp -d /tmp/npud-fuzz.XXXXXX)}
JOBS=${NPUD_FUZZ_JOBS:-2}
MAX_LEN=${NPUD_FUZZ_MAX_LEN:-1048576}

for h in "${HARNESSES[@]}"; do
  [ -x "$BUILD/fuzz/$h" ] || { echo "missing $BUILD/fuzz/$h: configure with CC=clang CXX=clang++ -DNPUD_FUZZ=ON and build target fuzz" >&2; exit 2; }
done

# Seeds: files under the roots whose names match the harness's "// fuzz-seeds:" patterns
# (find -name globs); .gz files are gunzipped; each seed is cut at MAX_LEN (libFuzzer's
# -max_len would ignore the rest anyway). Plus hand-made seeds from fuzz/corpus/<harness>/.
roots=("$ROOT/tests/data" "$ROOT/tests/regression" "$ROOT/python" "$ROOT/examples")
[ -n "$SHARED" ] && roots+=("$SHARED/fixtures")
seed() {  # seed <harness>
  local h=$1 dir=$OUT/seeds/$1 pats=() i=0
  mkdir -p "$dir"
  local globs=(); read -ra globs <<< "$(sed -n 's|^// fuzz-seeds:||p' "$ROOT/fuzz/$h.cpp" 2>/dev/null | head -1)"
  for p in "${globs[@]}"; do pats+=(-o -name "$p"); done
  if [ ${#pats[@]} -gt 0 ]; then
    find "${roots[@]}" -type f \( -false "${pats[@]}" \) 2>/dev/null | sort | while read -r f; do
      i=$((i+1))
      case $f in *.gz) gzip -dc "$f" 2>/dev/null | head -c "$MAX_LEN" > "$dir/seed_$i" ;;
                 *) head -c "$MAX_LEN" "$f" > "$dir/seed_$i" ;; esac
    done
  fi
  cp "$ROOT"/fuzz/corpus/"$h"/* "$dir"/ 2>/dev/null || true
}

run_one() {
  local h=$1 corpus=$OUT/corpus/$1 art=$OUT/artifacts/$1/
  mkdir -p "$corpus" "$art"
  seed "$h"
  # timeout: a harness stuck before its fuzzing loop (seed corpus) must not stall CI.
  timeout -k 10 $((SECONDS_EACH + 240)) \
    "$BUILD/fuzz/$h" "$corpus" "$OUT/seeds/$h" -max_total_time="$SECONDS_EACH" -max_len="$MAX_LEN" \
    -timeout=25 -rss_limit_mb=4096 -artifact_prefix="$art" -print_final_stats=1 \
    > "$OUT/$h.log" 2>&1
  local rc=$?
  local execs; execs=$(grep -m1 'stat::number_of_executed_units' "$OUT/$h.log" | awk '{print $2}')
  if [ $rc -eq 0 ]; then
    echo "$h: OK ${SECONDS_EACH}s, ${execs:-?} executions, $(ls "$OUT/seeds/$h" | wc -l) seeds"
  else
    [ $rc -eq 124 ] && echo "$h: FAILED: still running $((SECONDS_EACH + 240)) s after its start (killed)"
    echo "$h: FAILED (rc $rc) log $OUT/$h.log"; ls -1 "$art"* 2>/dev/null | sed 's/^/  crashing input: /'
    grep -m3 -E 'ERROR:|runtime error|terminate called|SUMMARY' "$OUT/$h.log" | sed 's/^/  /'
  fi
  return $rc
}

echo "npu-doctor fuzz: ${SECONDS_EACH}s per harness (${HARNESSES[*]}), $JOBS at a time, work dir $OUT"
fail=0; pids=()
for h in "${HARNESSES[@]}"; do
  run_one "$h" & pids+=($!)
  if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}" || fail=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
exit $fail
