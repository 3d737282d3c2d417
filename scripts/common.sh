# Shared by setup.sh and test.sh: install what is missing, build HDF5 1.14
# (cached outside the checkout), configure and build h5journal.
# Sourced, not run.  Sets HDF5_PREFIX and BUILD_DIR.

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT_DIR/build}
JOBS=${JOBS:-$(nproc)}
# The open-ended tests' budget, ci or long (scripts/test.sh --long).
H5JOURNAL_TEST_BUDGET=${H5JOURNAL_TEST_BUDGET:-ci}
# Where HDF5, the chroot and ccache are kept, outside the checkout.
CACHE_DIR=${H5JOURNAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/h5journal}
# ccache keeps what every build tree compiled, so that a fresh clone (CI's)
# compiles only what changed.  base_dir and nohashdir make the clone's
# path not count.
export CCACHE_DIR=${CCACHE_DIR:-$CACHE_DIR/ccache} CCACHE_BASEDIR=$ROOT_DIR CCACHE_NOHASHDIR=1

PACKAGES=(build-essential cmake pkg-config dpkg-dev util-linux python3
          libmpich-dev mpich liburing-dev libssl-dev libisal-dev
          doctest-dev libcli11-dev nlohmann-json3-dev zlib1g-dev clang-14 libclang-rt-14-dev
          python3-matplotlib ccache patchelf help2man)

say() { echo "==> $*"; }

as_root() { if [[ $(id -u) == 0 ]]; then "$@"; else sudo "$@"; fi; }

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  fi
}

# HDF5: the one HDF5_ROOT names, or 1.14 built once from Debian's source,
# H5JOURNAL_HDF5_FLAVOUR (parallel, the default, or serial).
build_hdf5() {
  if [[ -n "${HDF5_ROOT:-}" ]]; then
    HDF5_PREFIX=$HDF5_ROOT
  else
    local flavour=${H5JOURNAL_HDF5_FLAVOUR:-parallel}
    say "HDF5 1.14, $flavour (built once from Debian's source package, then cached)"
    HDF5_PREFIX=$("$ROOT_DIR/scripts/build-hdf5.sh" "$flavour" | tail -1)
  fi
  if [[ -d "$HDF5_PREFIX/bin" ]]; then export PATH="$HDF5_PREFIX/bin:$PATH"; fi
}

# configure_h5journal BUILD CMAKE-ARGS...: every build tree of h5journal
# (this one, the sanitizers', the fuzzers', the matrix cells') is configured
# here, with the test budget and ccache where it is installed; the log is
# BUILD.configure.log, shown if it fails.  Each target compiles as unity
# files of up to 16 sources: most of a source's compile time is the standard
# library's headers, parsed once per unity file instead of once per source
# (a tree from empty caches on 2 cores: 217 s, against 374 s).  Its debug
# information is line tables only (-g1): enough for backtraces, perf and
# callgrind by line, and it compiles in the time of none, where -g's
# variable tracking takes a third more (the main tree: 326 s of CPU at
# -g0, 445 at -g).
RELEASE_FLAGS="-O2 -g1 -DNDEBUG"
configure_h5journal() {
  local build=$1 launcher=()
  shift
  command -v ccache > /dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$ROOT_DIR" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5JOURNAL_TEST_BUDGET="$H5JOURNAL_TEST_BUDGET" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$RELEASE_FLAGS" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$RELEASE_FLAGS" \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 "${launcher[@]}" "$@" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; return 1; }
}

build_project() {
  say "building h5journal in $BUILD_DIR"
  configure_h5journal "$BUILD_DIR" -DHDF5_ROOT="$HDF5_PREFIX" -DCMAKE_PREFIX_PATH="$HDF5_PREFIX"
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

prepare() {
  install_packages
  build_hdf5
  build_project
}
