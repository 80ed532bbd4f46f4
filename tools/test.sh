#!/usr/bin/env bash
# Installs what is missing (Debian 12), builds, and runs the whole test suite with ctest.
# Tests that need ../shared (real profiler fixtures) skip with a message when it is absent.
set -euo pipefail
NPUD_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$NPUD_ROOT/tools/deps.sh"
npud_install_deps
npud_build "$NPUD_ROOT/build"
cd "$NPUD_ROOT/build"
ctest --output-on-failure -j"$(nproc)" "$@"
