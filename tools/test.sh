#!/usr/bin/env bash
# Installs what is missing (Debian 12), builds, and runs the whole test suite with ctest.
# Tests that need ../shared (real profiler fixtures) skip with a message when it is absent.
# Opt-in extra steps (too slow for every CI run on 2 cores; see fuzz/README.md):
#   NPUD_CI_SANITIZE=1  also build ./build-asan (g++, ASan+UBSan) and run npud_tests there
#   NPUD_CI_FUZZ=1      also build ./build-fuzz (clang, libFuzzer) and run each fuzzer 60 s
set -euo pipefail
NPUD_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$NPUD_ROOT/tools/deps.sh"
npud_install_deps
npud_build "$NPUD_ROOT/build"
cd "$NPUD_ROOT/build"
ctest --output-on-failure -j"$(nproc)" "$@"

if [ "${NPUD_CI_SANITIZE:-0}" = 1 ]; then
  # The C++ suite only: the Python e2e suites would run torch under ASan, which is not the point.
  npud_build "$NPUD_ROOT/build-asan" -DNPUD_SANITIZE=ON -DNPUD_SCAN=ON
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$NPUD_ROOT/build-asan/tests/npud_tests"
fi

if [ "${NPUD_CI_FUZZ:-0}" = 1 ]; then
  if ! command -v clang++ >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
  fi
  CC=clang CXX=clang++ cmake -S "$NPUD_ROOT" -B "$NPUD_ROOT/build-fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DNPUD_FUZZ=ON -DNPUD_TESTS=OFF >/dev/null
  cmake --build "$NPUD_ROOT/build-fuzz" -j"$(nproc)" --target fuzz
  NPUD_FUZZ_BUILD="$NPUD_ROOT/build-fuzz" "$NPUD_ROOT/fuzz/run.sh" 60
fi
