#!/usr/bin/env bash
# Builds HDF5 1.14.x (zlib, shared, with tools; parallel with MPICH, or
# serial) from Debian trixie's own source package and installs it into a
# cache prefix outside the checkout, which later builds reuse.  Debian 12
# ships only HDF5 1.10.8.
#
#   build-hdf5.sh [parallel|serial]     (default: parallel)
#
# /etc/apt is never touched: apt runs with a private sources list and its own
# state and cache directories under the cache prefix.
#
# Prints the install prefix on its last line of stdout.
set -euo pipefail

source "$(dirname "$0")/common.sh"  # CACHE_DIR
PREFERRED_VERSION="1.14.5+repack-3"
JOBS="${JOBS:-$(nproc)}"
FLAVOUR="${1:-parallel}"
# Both compile with cc: HDF5's CMake finds MPI itself (find_package(MPI)),
# and MPICH's mpicc is a script of 17 processes a compile, 2.4 times cc's
# time for a small file on these machines.
case "$FLAVOUR" in
  parallel) PARALLEL=ON ;;
  serial) PARALLEL=OFF ;;
  *) echo "usage: $0 [parallel|serial]" >&2; exit 2 ;;
esac

log() { echo "[build-hdf5] $*" >&2; }

apt_dir="$CACHE_DIR/apt"
mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial"
echo "deb-src http://deb.debian.org/debian trixie main" > "$apt_dir/sources.list"
APT_OPTS=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State=$apt_dir/state"
  -o "Dir::State::status=/var/lib/dpkg/status"
  -o "Dir::Cache=$apt_dir/cache"
  -o "Debug::NoLocking=1"
  -o "APT::Sandbox::User=root"
)

# An already-built prefix for any 1.14.x wins: no network needed.
existing=$(ls -d "$CACHE_DIR"/hdf5-1.14.*-"$FLAVOUR"/install 2>/dev/null | sort -V | tail -1 || true)
if [[ -n "$existing" && -f "$existing/.complete" ]]; then
  log "reusing $existing"
  echo "$existing"
  exit 0
fi

log "fetching the trixie source index"
apt-get "${APT_OPTS[@]}" update >&2
version="$PREFERRED_VERSION"
if ! apt-cache "${APT_OPTS[@]}" showsrc hdf5 2>/dev/null | grep -qx "Version: $version"; then
  # Debian may have moved trixie on: take the 1.14.x on offer instead of failing.
  version=$(apt-cache "${APT_OPTS[@]}" showsrc hdf5 | awk '/^Version: 1\.14\./{print $2}' | sort -V | tail -1)
  [[ -n "$version" ]] || { log "no hdf5 1.14.x source package in trixie"; exit 1; }
  log "preferred $PREFERRED_VERSION is gone; using $version"
fi

upstream="${version%%+*}"
work="$CACHE_DIR/hdf5-$upstream-$FLAVOUR"
prefix="$work/install"
rm -rf "$work/src" "$work/build" "$prefix"
mkdir -p "$work/src"
log "downloading hdf5=$version"
(cd "$work/src" && apt-get "${APT_OPTS[@]}" source --download-only "hdf5=$version" >&2)
dsc=$(ls "$work/src"/hdf5_*.dsc)
(cd "$work/src" && dpkg-source --no-check -x "$dsc" tree >&2)

# Line tables only (common.sh): 183 s of CPU from empty against 247 at -g,
# and HDF5's test programs (hdf5-conformance.sh) build with the same flags.
log "configuring ($FLAVOUR, zlib, shared, tools; no tests, no other languages)"
CC=cc cmake -S "$work/src/tree" -B "$work/build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="$RELEASE_FLAGS" \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF \
  -DBUILD_TESTING=OFF -DHDF5_BUILD_EXAMPLES=OFF \
  -DHDF5_BUILD_TOOLS=ON -DHDF5_BUILD_UTILS=OFF -DHDF5_BUILD_HL_LIB=OFF \
  -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_CPP_LIB=OFF -DHDF5_BUILD_JAVA=OFF \
  -DHDF5_ENABLE_PARALLEL=$PARALLEL -DHDF5_ENABLE_Z_LIB_SUPPORT=ON \
  -DHDF5_ENABLE_SZIP_SUPPORT=OFF -DHDF5_ENABLE_THREADSAFE=OFF \
  -DHDF5_ENABLE_ALL_WARNINGS=OFF >&2
log "building with $JOBS jobs"
cmake --build "$work/build" -j "$JOBS" >&2
cmake --install "$work/build" >&2
echo "$version" > "$prefix/.complete"
log "installed into $prefix"
echo "$prefix"
