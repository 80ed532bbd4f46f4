#!/usr/bin/env bash
# Device check: what only a real accelerator shows (backward on the autograd engine's device
# thread, device attention kernels, blocking copies), next to torch's own sync detector.
#
#   tools/device-check.sh [OUT_DIR]
#
# On a machine with a CUDA device and a CUDA build of torch in $PYTHON (default python3), for
# each program below it runs: the program plainly; `npu-doctor run --steps all` (the program's
# output must not change); ../shared/tools/sync_truth.py (torch.cuda.set_sync_debug_mode("warn"):
# every synchronizing call's user file:line); `npu-doctor amp-check` in bf16 and fp16 on the
# device (`--emulate off`). It writes OUT_DIR/device-check.md: per program, the syncs torch saw
# and SYNC001 found (matched / missed / extra lines), whether the output stayed the same, and
# whether each amp-check capture completed (no CAPTURE001). Record the table in bench/README.md.
#
# Needs NPUD_BINARY (default build/npu-doctor) and ../shared beside the checkout. Exits 77
# (skipped) without a CUDA device: the CPU tests cover the rest from the shared GPU fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-$ROOT/build/device-check}
PYTHON=${PYTHON:-python3}
BIN=${NPUD_BINARY:-$ROOT/build/npu-doctor}
SHARED=${NPUD_SHARED_DIR:-$ROOT/../shared}
TRUTH=$SHARED/tools/sync_truth.py

if ! "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "device-check: skipped: $PYTHON has no CUDA device (torch.cuda.is_available() is False)" >&2
  exit 77
fi
[ -x "$BIN" ] || { echo "device-check: $BIN is not built" >&2; exit 2; }
[ -f "$TRUTH" ] || { echo "device-check: $TRUTH not found (../shared beside the checkout)" >&2; exit 2; }
mkdir -p "$OUT"

# Programs that move to CUDA when it is there: written like nanoGPT-size and ResNet training,
# transformers models in a hand loop and under the Trainer, the shared fixtures' Llama loop.
PROGRAMS=(
  tests/corpus/resnet_cifar.py
  tests/corpus/library/phi_course_loop.py
  tests/corpus/library/convnext_timm_style.py
  tests/corpus/library/qwen2_trainer_clm.py
  "$SHARED/fixtures/gpu-h200/hf_llama_loop.py"
)

export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
for prog in "${PROGRAMS[@]}"; do
  [ -f "$prog" ] || { echo "device-check: $prog missing, skipped" >&2; continue; }
  name=$(basename "$prog" .py)
  dir="$OUT/$name"
  mkdir -p "$dir"
  echo "device-check: $name" >&2
  (cd "$(dirname "$prog")" && "$PYTHON" "$(basename "$prog")") >"$dir/plain.out" 2>"$dir/plain.err" || true
  (cd "$(dirname "$prog")" && "$BIN" run -q --steps all --capture-dir "$dir/run" --format json -o "$dir/run.json" \
    --fail-on never -- "$PYTHON" "$(basename "$prog")") >"$dir/run.out" 2>"$dir/run.err" || true
  (cd "$(dirname "$prog")" && "$PYTHON" "$TRUTH" "$(basename "$prog")") >/dev/null 2>"$dir/truth.err" || true
  for dtype in bf16 fp16; do
    (cd "$(dirname "$prog")" && "$BIN" amp-check -q --dtype "$dtype" --emulate off --capture-dir "$dir/amp-$dtype" \
      --format json -o "$dir/amp-$dtype.json" --fail-on never -- "$PYTHON" "$(basename "$prog")") \
      >"$dir/amp-$dtype.out" 2>"$dir/amp-$dtype.err" || true
  done
done

"$PYTHON" - "$OUT" <<'EOF'
import json, os, re, sys

out = sys.argv[1]
rows = ["| program | torch syncs (lines) | SYNC001 lines | matched | missed | extra | output same | amp bf16 | amp fp16 |",
        "|---|---:|---:|---:|---:|---:|---|---|---|"]
for name in sorted(os.listdir(out)):
    d = os.path.join(out, name)
    if not os.path.isdir(d):
        continue
    def read(f):
        try:
            with open(os.path.join(d, f), errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""
    truth = {m.group(1) for m in re.finditer(r"^SYNC-TRUTH (\S+:\d+) \d+", read("truth.err"), re.M)}
    found = set()
    try:
        for f in json.loads(read("run.json"))["findings"]:
            loc = f["location"]
            if f["id"] == "SYNC001" and loc.get("file"):
                found.add("%s:%s" % (os.path.basename(loc["file"]), loc["line"]))
    except (ValueError, KeyError):
        found = None
    def amp(dtype):
        try:
            report = json.loads(read("amp-%s.json" % dtype))
        except ValueError:
            return "no report"
        ids = [f["id"] for f in report["findings"]]
        return "CAPTURE001" if "CAPTURE001" in ids else "complete, %d AMP findings" % sum(i.startswith("AMP") for i in ids)
    same = "yes" if read("plain.out") == read("run.out") else "differs"
    if found is None:
        rows.append("| %s | %d | no report | | | | %s | %s | %s |" % (name, len(truth), same, amp("bf16"), amp("fp16")))
        continue
    rows.append("| %s | %d | %d | %d | %d | %d | %s | %s | %s |" % (
        name, len(truth), len(found), len(truth & found), len(truth - found), len(found - truth), same,
        amp("bf16"), amp("fp16")))
    with open(os.path.join(d, "sync-diff.txt"), "w") as fh:
        fh.write("missed (torch saw a sync, SYNC001 none):\n%s\nextra (SYNC001, torch saw none):\n%s\n" % (
            "\n".join(sorted(truth - found)), "\n".join(sorted(found - truth))))
table = "\n".join(rows) + "\n"
with open(os.path.join(out, "device-check.md"), "w") as fh:
    fh.write(table)
print(table)
EOF
