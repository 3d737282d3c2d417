#!/usr/bin/env bash
# Debian's own HDF5 2.x (serial and MPICH), h5py and a toolchain, in a chroot
# of Debian testing (or sid, if testing has no HDF5 2.x), cached outside the
# checkout.  Their packages need a newer glibc than Debian 12's, so they run
# in a chroot, made with debootstrap from Debian's registry.
#
#   hdf5-2x-chroot.sh create            make it once (later calls reuse it);
#                                       prints its root on the last line
#   hdf5-2x-chroot.sh run DIR CMD...    run CMD as root inside, with DIR (the
#                                       checkout) bound at /src, and /proc,
#                                       /dev, /sys bound; unbound on exit
#   hdf5-2x-chroot.sh clean-base        make that clean system's tarball once
#   hdf5-2x-chroot.sh clean-run DIR DEB CMD...
#                                       the same in a clean system of the same
#                                       suite (debootstrap --variant=minbase,
#                                       kept as a tarball), thrown away after:
#                                       DEB (a path under DIR) installed with
#                                       apt, with hdf5-tools, before CMD
#
# /etc/apt of the host is never touched.
set -euo pipefail

source "$(dirname "$0")/common.sh"  # CACHE_DIR
SCRIPT=$(realpath "${BASH_SOURCE[0]}")
MIRROR=http://deb.debian.org/debian
PACKAGES=(build-essential cmake pkg-config file ccache
          libhdf5-dev libhdf5-mpich-dev hdf5-tools mpich
          liburing-dev libisal-dev libssl-dev doctest-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
          python3 python3-h5py python3-h5py-serial python3-pytest python3-numpy patchelf
          libnetcdf-dev netcdf-bin python3-netcdf4 m4 gfortran)

log() { echo "[hdf5-2x-chroot] $*" >&2; }

# The first suite among testing and sid whose libhdf5-dev is 2.x, asked of
# Debian's index with a private apt configuration.
choose_suite() {
  local dir="$CACHE_DIR/apt-index" suite version
  for suite in testing sid; do
    mkdir -p "$dir/$suite/state/lists/partial" "$dir/$suite/cache/archives/partial"
    echo "deb $MIRROR $suite main" > "$dir/$suite/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$dir/$suite/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
                -o "Dir::State=$dir/$suite/state" -o "Dir::State::status=/var/lib/dpkg/status"
                -o "Dir::Cache=$dir/$suite/cache" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
                -o "Acquire::Check-Valid-Until=false")
    apt-get "${opts[@]}" update >&2 || continue
    version=$(apt-cache "${opts[@]}" show libhdf5-dev 2>/dev/null | awk '/^Version:/{print $2}' | sort -V | tail -1)
    log "$suite offers libhdf5-dev ${version:-(none)}"
    if [[ "$version" == 2.* ]]; then echo "$suite"; return 0; fi
  done
  log "neither testing nor sid offers HDF5 2.x"
  return 1
}

# CMD run inside ROOT, with the checkout bound at /src and /proc, /sys and
# /dev bound, in a mount namespace of its own: the binds end with CMD,
# however it ends, and runs side by side (one cell's tests beside the next
# cell's build) cannot unbind each other's.
in_root() {  # root checkout cmd...
  unshare --mount --propagation private "$SCRIPT" --bound "$@"
}

bound() {  # root checkout cmd...: in_root's namespace
  local root=$1 src=$2 d
  shift 2
  mount --bind "$root" "$root"  # a mount point, for unshare inside
  for d in proc sys dev dev/pts dev/shm; do
    mkdir -p "$root/$d"
    mount --bind "/$d" "$root/$d"
  done
  mkdir -p "$root/src"
  mount --bind "$src" "$root/src"
  chroot "$root" "$@"
}

# apt installs each PACKAGE (a name, or a .deb's path under /src) into ROOT.
install_into() {  # root checkout package...
  local root=$1 src=$2
  shift 2
  in_root "$root" "$src" sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "$@" && apt-get clean' sh "$@" >&2
}

# Debian's packages into `root`, with no checkout to bind: /var/empty stands in.
install_packages() {  # root package...
  local root=$1
  shift
  mkdir -p /var/empty
  install_into "$root" /var/empty "$@"
}

# A chroot made before PACKAGES last grew gets what it lacks.
install_missing() {  # root
  local root=$1 missing=() p
  for p in "${PACKAGES[@]}"; do
    chroot "$root" dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]} into $root"
  install_packages "$root" "${missing[@]}"
}

create() {
  local existing
  existing=$(ls -d "$CACHE_DIR"/chroot-*/ 2>/dev/null | head -1 || true)
  if [[ -n "$existing" && -f "$existing/.complete" ]]; then
    log "reusing ${existing%/} ($(cat "$existing/.complete"))"
    install_missing "${existing%/}"
    echo "${existing%/}"
    return 0
  fi
  command -v debootstrap > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2
  local suite
  suite=$(choose_suite)
  local root="$CACHE_DIR/chroot-$suite"
  rm -rf --one-file-system "$root"
  log "debootstrap $suite into $root"
  debootstrap --variant=minbase "$suite" "$root" "$MIRROR" >&2
  # A mirror's Release file may be past its Valid-Until; its signature still counts.
  echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99h5journal"
  # The clean system (clean-run) is this one before its packages: kept now,
  # it costs a tar instead of a second debootstrap.
  local tarball="$CACHE_DIR/clean-$suite.tar"
  tar -C "$root" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
  install_packages "$root" "${PACKAGES[@]}"
  local hdf5
  hdf5=$(chroot "$root" dpkg-query -W -f='${Version}' libhdf5-dev)
  echo "$suite libhdf5-dev $hdf5" > "$root/.complete"
  log "ready: $suite, libhdf5-dev $hdf5"
  echo "$root"
}

run() {
  local src=$1
  shift
  local root
  root=$(create | tail -1)
  in_root "$root" "$src" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 CI="${CI:-}" \
    JOBS="${JOBS:-2}" H5JOURNAL_TEST_BUDGET="${H5JOURNAL_TEST_BUDGET:-ci}" "$@"
}

# The clean system's tarball, kept by create (or, for a chroot made before
# it kept one, made here once): prints its path.
clean_base() {
  local suite tarball
  suite=$(create | tail -1 | sed 's|.*/chroot-||')
  tarball="$CACHE_DIR/clean-$suite.tar"
  if [[ ! -f "$tarball" ]]; then
    local made
    made=$(mktemp -d /var/tmp/h5journal-clean.XXXXXX)
    log "debootstrap a clean $suite into $made"
    debootstrap --variant=minbase "$suite" "$made" "$MIRROR" >&2
    echo 'Acquire::Check-Valid-Until "false";' > "$made/etc/apt/apt.conf.d/99h5journal"
    tar -C "$made" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
    rm -rf --one-file-system "$made"
  fi
  echo "$tarball"
}

clean_run() {
  local src=$1 deb=$2
  shift 2
  local tarball
  tarball=$(clean_base | tail -1)
  ROOT=$(mktemp -d /var/tmp/h5journal-clean.XXXXXX)
  trap 'rm -rf --one-file-system "$ROOT"' EXIT
  tar -C "$ROOT" -xf "$tarball"
  install_into "$ROOT" "$src" "/src/${deb#"$src"/}" hdf5-tools
  in_root "$ROOT" "$src" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"
}

case "${1:-}" in
  --bound) shift; bound "$@" ;;
  create) create ;;
  run) shift; run "$@" ;;
  clean-base) clean_base ;;
  clean-run) shift; clean_run "$@" ;;
  *) echo "usage: $0 create | clean-base | run CHECKOUT CMD... | clean-run CHECKOUT DEB CMD..." >&2; exit 2 ;;
esac
