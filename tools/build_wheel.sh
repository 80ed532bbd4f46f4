#!/usr/bin/env bash
# Builds the portable npu-doctor wheel into dist/ (one command; CI builds the same wheel in
# tools/test.sh and tests it in a fresh venv: tests/e2e/test_wheel.py).
#
# The wheel's binary needs only glibc at run time (NPUD_PORTABLE=ON, cmake/Dependencies.cmake:
# static libstdc++/libgcc, zlib, tree-sitter and simdjson, fmt header-only, isa-l loaded at run
# time where the machine has it), so `pip install dist/npu_doctor-*.whl` works in any Python 3.8+
# environment on x86_64 glibc Linux, with no compiler and no -dev package. auditwheel checks
# that and gives the wheel its manylinux tag.
#
# Build machine: Debian 12 with tools/deps.sh's packages (installed when missing).
# Env: NPUD_WHEEL_BUILD_DIR  CMake build folder (default build-wheel; kept between runs)
#      NPUD_WHEEL_VENV       venv holding scikit-build-core and auditwheel (default build-wheel/venv)
set -euo pipefail
NPUD_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$NPUD_ROOT/tools/deps.sh"
npud_install_deps
BUILD=${NPUD_WHEEL_BUILD_DIR:-$NPUD_ROOT/build-wheel}
VENV=${NPUD_WHEEL_VENV:-$BUILD/venv}
npud_venv "$VENV" "scikit-build-core>=0.10" $NPUD_WHEEL_TOOL_PINS
echo "== building the portable wheel in $BUILD (the C++ core: a few minutes)" >&2
npud_build_wheel "$VENV" "$BUILD" -C cmake.define.NPUD_UNITY=ON
mkdir -p "$NPUD_ROOT/dist"
cp "$BUILD"/dist/npu_doctor-*.whl "$NPUD_ROOT/dist/"
ls "$NPUD_ROOT"/dist/npu_doctor-*.whl
