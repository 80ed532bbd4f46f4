# Sourced by tools/setup.sh and tools/test.sh: installs the Debian 12 packages the build
# and the tests need, when any is missing. Nothing comes from anywhere but apt.
NPUD_APT_PACKAGES="g++ cmake ninja-build pkg-config zlib1g-dev libsimdjson-dev libcli11-dev libfmt-dev
  googletest libgtest-dev libbenchmark-dev python3 python3-torch python3-numpy gzip libtree-sitter-dev chromium"

# Installs, with apt, those of the given packages that are not installed.
npud_apt_install_missing() {
  local missing=()
  for p in "$@"; do
    if [ "$p" = npm ]; then
      # npm may come with a non-Debian nodejs (it conflicts with Debian's npm package): only
      # the command matters.
      command -v npm >/dev/null 2>&1 || missing+=(npm)
    else
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    fi
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
  npud_apt_install_missing $NPUD_APT_PACKAGES npm
}

npud_build() {
  local build_dir=$1; shift
  cmake -S "$NPUD_ROOT" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$build_dir" -j"$(nproc)"
}

# The instrumented check build (tools/test.sh step 2, fuzz/README.md) needs clang and its
# sanitizer/libFuzzer runtimes (Debian 12: clang 14).
NPUD_CHECK_APT_PACKAGES="clang libclang-rt-14-dev"

npud_install_check_deps() {
  # shellcheck disable=SC2086
  npud_apt_install_missing $NPUD_CHECK_APT_PACKAGES
}
