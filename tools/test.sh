#!/usr/bin/env bash
# The whole test suite; CI runs exactly this (.ci/run). Installs what is missing (Debian 12)
# first. Two builds, one after the other:
#   1. The release, tools/release.sh: the sdist and the manylinux_2_28 wheels for x86_64 and
#      aarch64, cross-compiled with zig's clang and libc++ (cmake/zig-toolchain.cmake) into
#      build/release/dist. The x86_64 wheel's CMake build folder is ./build, with the tests
#      (NPUD_TESTS=ON; RelWithDebInfo's -O2 without -g), so the tests test the binary that ships
#      (the GoogleTest units only with NPUD_CHECK=0: else they build and run once, in step 2);
#      that wheel is installed into the venv build/test-venv (torch 2.13 CPU) like a user installs
#      it (tests/e2e/test_wheel.py installs it into a fresh venv too). ctest then runs
#      (the GoogleTest units with NPUD_CHECK=0) every Python e2e suite twice: torch1.* with Debian's torch 1.13 and
#      this build's binary, torch2.* with torch 2.13 and the npu-doctor the wheel installed;
#      tests/e2e/test_release.py runs the aarch64 binary under qemu (Debian's qemu-user-static)
#      on the shared fixtures and compares its findings with the x86_64 binary's. Extra
#      arguments go to this ctest.
#   2. ./build-check (clang and libstdc++, the system's libraries as a plain `cmake -B build` uses them, -DCMAKE_BUILD_TYPE=Check -DNPUD_FUZZ=ON, not unity: -O1, line tables,
#      ASan+UBSan and libFuzzer coverage): ONE instrumented build whose objects make both
#      npud_tests and the libFuzzer harnesses. npud_tests runs there in two shards, with
#      leak checks and UBSan fatal, so any sanitizer report fails the run; then fuzz/run.sh
#      runs every harness (each fuzz/fuzz_*.cpp) NPUD_FUZZ_SECONDS, two at a time; a crash,
#      leak, timeout or sanitizer report fails the run. The Python e2e suites are not repeated.
# Tests that need ../shared (real fixtures) skip with a message when it is absent.
# Env:  NPUD_CHECK=0            skip step 2 (a quick local run; CI keeps the default, 1)
#       NPUD_FUZZ_SECONDS=N     fuzz smoke length per harness (default 6: CI stays under 30 minutes)
#       NPUD_UNITY=ON|OFF       unity build of the library in ./build; default: ON in a fresh build folder
#                               (CI's clean clone: ~30 % less compile time), else what the
#                               folder was configured with (a developer's incremental builds)
# Each phase prints its wall time ("npu-doctor test: <phase> <s> s").
set -euo pipefail
NPUD_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$NPUD_ROOT/tools/deps.sh"
JOBS=$(nproc)

# ON/OFF for the build folder $1 (see NPUD_UNITY above).
unity_for() {
  if [ -n "${NPUD_UNITY:-}" ]; then echo "$NPUD_UNITY"
  elif [ -f "$1/CMakeCache.txt" ]; then grep -q '^NPUD_UNITY:BOOL=ON' "$1/CMakeCache.txt" && echo ON || echo OFF
  else echo ON; fi
}

# Beside ../shared (as in CI) a test that skips for a missing fixture fails instead
# (tests/unit/require_fixture.hpp, tests/e2e/e2e_support.py): a renamed fixture is no silent skip.
[ -d "$NPUD_ROOT/../shared/fixtures" ] && export NPUD_REQUIRE_SHARED=1

phase_start=$SECONDS
phase_done() { echo "npu-doctor test: $1 $((SECONDS - phase_start)) s" >&2; phase_start=$SECONDS; }

npud_install_deps
npud_install_test_deps
[ "${NPUD_CHECK:-1}" = 0 ] || npud_install_check_deps
phase_done "deps"
VENV=$NPUD_ROOT/build/test-venv
npud_venv "$VENV" "scikit-build-core>=0.10" $NPUD_WHEEL_TOOL_PINS
npud_venv "$VENV" "$NPUD_TORCH_PIN" numpy ||
  echo "npu-doctor test: WARNING: no $NPUD_TORCH_PIN here: the torch2.* e2e suites will skip" >&2
# The SARIF tests validate against the official schema with it (Debian's Python lacks it).
npud_venv "$VENV" "jsonschema>=4" ||
  echo "npu-doctor test: WARNING: no jsonschema: SARIF schema validation will skip" >&2
# The library corpus (tests/corpus/library: transformers, accelerate), pinned; never torch.
npud_venv_requirements "$VENV" "$NPUD_ROOT/tests/corpus/library/requirements.txt" ||
  echo "npu-doctor test: WARNING: the library corpus requirements did not install: its test will skip" >&2
phase_done "venv"
# The GoogleTest units build and run once: in step 2's sanitizer build when it runs, else here.
UNIT_IN_RELEASE=ON
[ "${NPUD_CHECK:-1}" = 0 ] || UNIT_IN_RELEASE=OFF
# The release (tools/release.sh): the sdist and the manylinux_2_28 wheels for x86_64 and aarch64,
# cross-compiled with zig into build/release/dist. The x86_64 wheel is built in ./build with the
# tests (one build: the tests test the binary that ships) and installed into the test venv.
NPUD_RELEASE_DIR="$NPUD_ROOT/build/release" NPUD_DIST="$NPUD_ROOT/build/release/dist" NPUD_RELEASE_VENV="$VENV" \
  NPUD_RELEASE_UNITY="$(unity_for "$NPUD_ROOT/build")" NPUD_RELEASE_X86_64_BUILD="$NPUD_ROOT/build" \
  NPUD_RELEASE_X86_64_ARGS="-C cmake.define.NPUD_TESTS=ON -C cmake.define.NPUD_UNIT_TESTS=$UNIT_IN_RELEASE -C cmake.define.NPUD_TEST_VENV=$VENV" \
  "$NPUD_ROOT/tools/release.sh"
phase_done "build (release: sdist, wheels)"
(cd "$NPUD_ROOT/build" && ctest --output-on-failure -j"$JOBS" "$@")
phase_done "ctest"

if [ "${NPUD_CHECK:-1}" = 0 ]; then
  echo "npu-doctor test: NPUD_CHECK=0: sanitizer tests and fuzz smoke runs skipped" >&2
  exit 0
fi

CHECK=$NPUD_ROOT/build-check
# The grammar archives step 1 fetched from PyPI serve here from the download cache.
# Never a unity build: the README's plain `cmake -B build` is not one (NPUD_UNITY defaults to
# OFF), and only a build of every file on its own catches a missing #include.
CC=clang CXX=clang++ cmake -S "$NPUD_ROOT" -B "$CHECK" -G Ninja -DCMAKE_BUILD_TYPE=Check -DNPUD_FUZZ=ON \
  -DNPUD_UNITY=OFF >/dev/null
cmake --build "$CHECK" -j"$JOBS" --target npud_tests fuzz
phase_done "check build"

# Sanitizer test run: the same GoogleTest binary, split in JOBS shards run side by side.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
logs=$(mktemp -d /tmp/npud-check.XXXXXX)
pids=()
for ((i = 0; i < JOBS; i++)); do
  GTEST_TOTAL_SHARDS=$JOBS GTEST_SHARD_INDEX=$i "$CHECK/tests/npud_tests" --gtest_brief=1 >"$logs/shard$i.log" 2>&1 &
  pids+=($!)
done
fail=0
for ((i = 0; i < JOBS; i++)); do
  if ! wait "${pids[$i]}"; then
    fail=1
    echo "npu-doctor test: sanitizer shard $i FAILED; its log ($logs/shard$i.log) ends:" >&2
    tail -n 60 "$logs/shard$i.log" >&2
  fi
done
grep -h "tests ran\|PASSED\|SKIPPED \[" "$logs"/shard*.log >&2 || true
[ $fail = 0 ] || exit 1
phase_done "sanitizer tests"

NPUD_FUZZ_BUILD="$CHECK" NPUD_FUZZ_JOBS="$JOBS" "$NPUD_ROOT/fuzz/run.sh" "${NPUD_FUZZ_SECONDS:-6}"
phase_done "fuzz smoke"
