#!/usr/bin/env bash
# The release in one command, on this Debian machine (x86_64; docs/install.md):
#   dist/npu_doctor-V-py3-none-manylinux_2_28_x86_64.whl   Kunpeng/x86 servers with glibc 2.28+
#   dist/npu_doctor-V-py3-none-manylinux_2_28_aarch64.whl  (openEuler 20.03+, Kylin V10, EulerOS 2.x)
#   dist/npu_doctor-V.tar.gz                               the sdist (`pip install` builds it)
#   dist/SHA256SUMS
#
# Toolchain: zig's clang from the pinned PyPI package `ziglang` (NPUD_ZIG_PIN) cross-compiles
# both wheels (cmake/zig-toolchain.cmake): it brings glibc stubs for exactly the glibc version
# the target names (x86_64-linux-gnu.2.28 cannot link a newer symbol), links its libc++
# statically, needs no root, no sysroot and no apt, and sees no system header or library, so
# these builds also prove that the sources build with nothing but the compiler, CMake and the
# package index (every library from pinned source: cmake/BundledDeps.cmake). Why not Debian's
# cross g++: it links against Debian's glibc 2.36 and libstdc++, so a 2.28 binary would need a
# separate glibc 2.28 sysroot that no registry here ships.
#
# The aarch64 wheel is built from the sdist (proving the sdist complete), the x86_64 one from the
# tree. auditwheel then checks each wheel (no library beyond the manylinux_2_28 policy, no
# symbol newer than it allows) and gives it its tag; npud_check_portable_binary checks the
# binary's glibc symbol versions and ELF machine.
#
# Env:  NPUD_RELEASE_DIR        build folder root (default build-release; kept: later runs reuse
#                               the CMake builds and zig's cache)
#       NPUD_RELEASE_X86_64_BUILD  the x86_64 wheel's CMake build folder (default
#                               $NPUD_RELEASE_DIR/x86_64; tools/test.sh passes ./build and
#                               NPUD_RELEASE_X86_64_ARGS, its test options, to build once)
#       NPUD_RELEASE_VENV       the venv of the build tools (default $NPUD_RELEASE_DIR/venv); the
#                               x86_64 wheel is installed into it
#       NPUD_RELEASE_ARCHES     default "x86_64 aarch64"
#       NPUD_RELEASE_UNITY      ON (default: faster one-off builds) or OFF
#       NPUD_DIST               where the artefacts go (default dist/)
# RelWithDebInfo's -O2 without -g: the binary is stripped when installed (pyproject.toml
# install.strip) and -g never changes the code, so debug info would only cost compile time.
# Exit: 0 done; 1 a stage failed (the message names the stage and what it needs).
set -euo pipefail
NPUD_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$NPUD_ROOT/tools/deps.sh"
REL=${NPUD_RELEASE_DIR:-$NPUD_ROOT/build-release}
DIST=${NPUD_DIST:-$NPUD_ROOT/dist}
ARCHES=${NPUD_RELEASE_ARCHES:-x86_64 aarch64}
VENV=${NPUD_RELEASE_VENV:-$REL/venv}
VERSION=$(sed -n 's/^project(npu_doctor VERSION \([0-9.]*\).*/\1/p' "$NPUD_ROOT/CMakeLists.txt")
started=$SECONDS

stage_no=0
stage() {
  stage_no=$((stage_no + 1))
  echo "== npu-doctor release [$stage_no] $* ($((SECONDS - started)) s)" >&2
}
fail() { echo "npu-doctor release: FAILED at stage $stage_no: $*" >&2; exit 1; }

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) fail "this script runs on x86_64 Linux (here: $(uname -s) $(uname -m)); on another host build from source: pip install ." ;;
esac

stage "toolchain: a venv with $NPUD_ZIG_PIN, scikit-build-core, build and auditwheel ($VENV)"
npud_venv "$VENV" "scikit-build-core>=0.10" $NPUD_WHEEL_TOOL_PINS $NPUD_RELEASE_TOOL_PINS ||
  fail "could not install the build tools from PyPI into $VENV (network? pip's message is above)"
ZIG=$("$VENV/bin/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
"$ZIG" version >/dev/null || fail "the zig of $NPUD_ZIG_PIN does not run here ($ZIG)"
# zig's compiled libc++/glibc stubs per target: kept with the builds, so a rebuild compiles none.
export ZIG_GLOBAL_CACHE_DIR=$REL/zig-cache NPUD_ZIG=$ZIG

rm -rf "$REL/out"
mkdir -p "$REL/out" "$DIST"

stage "sdist npu_doctor-$VERSION.tar.gz"
"$VENV/bin/python" -m build --sdist --no-isolation --outdir "$REL/out" "$NPUD_ROOT" >"$REL/sdist.log" 2>&1 ||
  { tail -n 20 "$REL/sdist.log" >&2; fail "python -m build --sdist (log: $REL/sdist.log)"; }
SDIST=$REL/out/npu_doctor-$VERSION.tar.gz
[ -f "$SDIST" ] || fail "no $SDIST"
# Unpacked at a fixed path, so the aarch64 CMake build folder is reused across runs. The archive
# keeps each file's old mtime: unpacked over the last run's copy, a changed source could look
# older than its object and not be rebuilt. So only files whose bytes changed are replaced (they
# get a new mtime), and files the sdist no longer has are removed.
rm -rf "$REL/sdist-new" && mkdir -p "$REL/sdist-new" "$REL/sdist-src"
tar -xzf "$SDIST" -C "$REL/sdist-new"
"$VENV/bin/python" - "$REL/sdist-new" "$REL/sdist-src" <<'PY'
import filecmp, os, shutil, sys
new, old = sys.argv[1:]
for root, _, files in os.walk(new):
    for name in files:
        src = os.path.join(root, name)
        dst = os.path.join(old, os.path.relpath(src, new))
        if not os.path.isfile(dst) or not filecmp.cmp(src, dst, shallow=False):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            shutil.copymode(src, dst)
for root, _, files in os.walk(old):
    for name in files:
        dst = os.path.join(root, name)
        if not os.path.exists(os.path.join(new, os.path.relpath(dst, old))):
            os.remove(dst)
PY
rm -rf "$REL/sdist-new"

for arch in $ARCHES; do
  source_dir=$NPUD_ROOT
  build=$REL/$arch
  extra=()
  if [ "$arch" = aarch64 ]; then
    source_dir=$REL/sdist-src/npu_doctor-$VERSION
  elif [ -n "${NPUD_RELEASE_X86_64_BUILD:-}" ]; then
    build=$NPUD_RELEASE_X86_64_BUILD
    # shellcheck disable=SC2206  # -C options, split on whitespace on purpose
    extra=(${NPUD_RELEASE_X86_64_ARGS:-})
  fi
  plat=$(npud_manylinux_plat "$arch") target=$arch-linux-gnu.$NPUD_MANYLINUX_GLIBC
  stage "wheel $plat: zig c++ -target $target, from ${source_dir#$NPUD_ROOT/} (build folder $build; a few minutes)"
  NPUD_ZIG_TARGET=$target NPUD_SOURCE=$source_dir \
    npud_build_wheel "$VENV" "$build" "$arch" -C cmake.define.CMAKE_TOOLCHAIN_FILE="$NPUD_ROOT/cmake/zig-toolchain.cmake" \
    -C cmake.define.NPUD_UNITY="${NPUD_RELEASE_UNITY:-ON}" "${extra[@]}" \
    -C "cmake.define.CMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" -C "cmake.define.CMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" ||
    fail "the $arch wheel (the build's log is above; it needs only $NPUD_ZIG_PIN and the pinned sources from PyPI)"
  cp "$build"/dist/npu_doctor-*"$plat".whl "$REL/out/"
done

stage "SHA256SUMS"
rm -f "$DIST"/npu_doctor-* "$DIST/SHA256SUMS"
cp "$REL"/out/npu_doctor-* "$DIST/"
(cd "$DIST" && sha256sum npu_doctor-* >SHA256SUMS && cat SHA256SUMS)
echo "npu-doctor release: done in $((SECONDS - started)) s; artefacts in $DIST" >&2
