#!/usr/bin/env bash
# Writes every report a binary gives on the shared fixtures and the project's own inputs into
# OUTDIR (one file per command and format, exit codes in OUTDIR/codes), so that two binaries'
# outputs can be compared with `diff -r` before a change lands (issue 32: "findings and reports
# identical before/after on every fixture and example").
#   tools/snapshot-reports.sh BINARY OUTDIR        (../shared beside the checkout, or NPUD_SHARED_DIR)
#   tools/snapshot-reports.sh OLD_BINARY before && tools/snapshot-reports.sh build/npu-doctor after
#   diff -r before after
# NPUD_SNAPSHOT_FORMATS="json sarif" writes only those formats (default: all six).
# SARIF names the project root (the checkout the script runs in) as %SRCROOT%: compare the
# snapshots of two checkouts with `sed -i 's|/old/tree/|/new/tree/|g' before/*` first.
set -uo pipefail
[ $# -eq 2 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
bin="$(realpath "$(command -v "$1" || echo "$1")")"; out="$(realpath -m "$2")"
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="$(realpath -m "${NPUD_SHARED_DIR:-$root/../shared}")/fixtures"
[ -x "$bin" ] || { echo "snapshot-reports: $1 is not an executable" >&2; exit 2; }
[ -d "$shared" ] || { echo "snapshot-reports: no $shared (set NPUD_SHARED_DIR)" >&2; exit 2; }
# A fresh folder: an earlier run's files would show in `diff -r` as reports of this binary.
[ -z "$(ls -A "$out" 2>/dev/null)" ] || { echo "snapshot-reports: $out is not empty" >&2; exit 2; }
mkdir -p "$out" && : > "$out/codes" || exit 2
cd "$root" || exit 2
formats=${NPUD_SNAPSHOT_FORMATS:-text json sarif github summary html}

run() {  # run NAME ARGS...: stdout to OUTDIR/NAME, its exit code to OUTDIR/codes
  local name=$1; shift
  [[ " $formats " == *" ${name##*.} "* ]] || return 0
  "$bin" "$@" > "$out/$name" 2>/dev/null
  echo "$name $?" >> "$out/codes"
}
name_of() { local p=${1#"$shared"/}; echo "${p//\//_}"; }

mapfile -t traces < <(find "$shared/kineto" "$shared/gpu-h200" -name "*.json" -o -name "*.json.gz" | sort)
# torch_npu profiler tables, each file on its own (pt-kernel-details-minimal holds a test.csv)
mapfile -t -O "${#traces[@]}" traces < <(find "$shared/ascend" -path "*/pt-*/*" \( -name "*.csv" -o -name "*.json" \) | sort)
for t in "${traces[@]}"; do
  for format in text json sarif github summary html; do run "$(name_of "$t").$format" analyze "$t" --fail-on never --format "$format"; done
done
for d in "$shared/kineto/multirank-sampled" "$shared/ascend/cluster-analysis-output-8rank"; do
  for format in text json sarif github html; do run "cluster_$(name_of "$d").$format" analyze "$d" -q --fail-on never --format "$format"; done
done
pair=("$shared/kineto/diff-pair/control/control.json.gz" "$shared/kineto/diff-pair/test/test.json.gz")
gpu=("$shared/gpu-h200/nanogpt-run.npud.json.gz" "$shared/gpu-h200/hf-llama-loop-run.npud.json.gz")
for format in text json html; do
  run "diff_pair.$format" diff "${pair[@]}" --format "$format"
  run "diff_gpu_captures.$format" diff "${gpu[@]}" --format "$format"
done
for dir in tests/corpus examples/tiny_gpt tests/e2e/programs; do
  for format in text json sarif github; do run "scan_${dir//\//_}.$format" scan "$dir" --fail-on never --format "$format"; done
done
run rules.text rules
echo "snapshot-reports: $(wc -l < "$out/codes") reports in $out" >&2
