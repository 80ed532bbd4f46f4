#!/usr/bin/env bash
# Installs what is missing (Debian 12), builds and installs npu-doctor the way users get it
# (`pip install .` into the venv .venv: the `npu-doctor` command and the `npu_doctor` shim),
# and diagnoses the bundled example: a small GPT training script with the classic CUDA→NPU
# problems planted in it, run with torch 2.13 (CPU) in the same venv.
set -euo pipefail
NPUD_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$NPUD_ROOT/tools/deps.sh"
npud_install_deps
VENV=${NPUD_VENV:-$NPUD_ROOT/.venv}
npud_venv "$VENV"
echo "== pip install $NPUD_ROOT (builds the C++ core: a few minutes)" >&2
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$NPUD_ROOT" 2>&1 | grep -v "^WARNING: Location" >&2 || true
[ -x "$VENV/bin/npu-doctor" ] || { echo "npu-doctor: pip install failed" >&2; exit 1; }
PY="$VENV/bin/python"
if ! npud_venv "$VENV" "$NPUD_TORCH_PIN"; then
  echo "npu-doctor: $NPUD_TORCH_PIN is not installable here; the example runs with Debian's torch" >&2
  PY=/usr/bin/python3
fi
cd "$NPUD_ROOT"
echo "== $VENV/bin/npu-doctor run -- $PY examples/tiny_gpt/train.py --steps 4" >&2
# Findings make npu-doctor exit 1; that is the point of the demo, not a failure.
"$VENV/bin/npu-doctor" run --fail-on never --capture-dir "$VENV/example-capture" -- "$PY" examples/tiny_gpt/train.py --steps 4
