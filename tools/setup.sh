#!/usr/bin/env bash
# Installs what is missing (Debian 12), builds npu-doctor, and diagnoses the bundled example:
# a small GPT training script with the classic CUDA→NPU problems planted in it.
set -euo pipefail
NPUD_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$NPUD_ROOT/tools/deps.sh"
npud_install_deps
npud_build "$NPUD_ROOT/build"
cd "$NPUD_ROOT"
echo "== npu-doctor run -- python3 examples/tiny_gpt/train.py" >&2
# Findings make npu-doctor exit 1; that is the point of the demo, not a failure.
./build/npu-doctor run --fail-on never -o build/example-out -- /usr/bin/python3 examples/tiny_gpt/train.py --steps 4
