#!/usr/bin/env bash
# Stages 4 to 7 of scripts/test.sh: h5journal against each HDF5 its users may have,
# one cell per HDF5, each built in a build directory of its own and running
# a subset of the suite (MATRIX_TESTS below):
#   1.14-parallel  HDF5 1.14.5 parallel (MPICH): stage 1 runs the whole
#                  suite there, so this script does not repeat it;
#   1.14-serial    HDF5 1.14.5 serial, built from the same Debian source;
#   2.x-serial     Debian's libhdf5-dev 2.x, in a Debian testing chroot
#                  (scripts/hdf5-2x-chroot.sh), plus h5py's own test suite
#                  through the driver (Debian's h5py, and the same made into
#                  a pip wheel's layout), the h5py and netCDF crash tests,
#                  a Fortran program's (test/fortran),
#                  netCDF-C's own suite through the driver (test/netcdf),
#                  and the Debian package (cpack), installed into a clean
#                  system where the demo runs against it;
#   2.x-mpich      Debian's libhdf5-mpich-dev 2.x in the same chroot.
# After the cells, a plugin built for one HDF5 must refuse to load into
# another (another major.minor, or serial against parallel).
#
#   matrix.sh                 every cell but 1.14-parallel, then the plugin check
#   matrix.sh CELL...         those cells only
#   matrix.sh --build-only CELL...   build those cells' HDF5 and h5journal, run nothing
set -euo pipefail
source "$(dirname "$0")/common.sh"

# What goes through HDF5: crash, same_dump, h5recover, config_errors; the MPI
# tests where the HDF5 is parallel (at 2 ranks: stage 1 runs them at 4 too);
# the h5py, netCDF and Fortran tests where those are installed for that
# HDF5 (h5py_busy_writer runs the busy writer's readers with an h5py one
# beside them).  Only what they run is built.  The unit tests are not here:
# the engine they test uses no HDF5 (journal/), so every cell would repeat
# stage 1's run of them.
MATRIX_TESTS='^(another_hdf5_copy|crash_default|crash_latest|same_dump_default|same_dump_latest|h5recover|config_errors|no_mpi_in_serial_programs|second_open|live_readers|h5py_.*|netcdf_.*|fortran|mpi_.*np2.*)$'
MATRIX_TARGETS=(h5journal h5recover timestep_sim crash_test features open_by_name second_open verifying_readers
  busy_writer load_as_fake_hdf5)
MATRIX_H5RECOVER_TARGETS=(journal_tamper exiting_lock_holder sparse_writer h5journal_bench)  # h5recover's test alone runs these
MATRIX_MPI_TARGETS=(parallel_patterns rank_death parallel_timesteps file_per_process)
DEBIAN_HDF5=/usr/lib/x86_64-linux-gnu/hdf5

# Builds in $1 with the CMake options that follow, which say where HDF5 is,
# and runs the subset.  Runs on this machine or in the chroot.
build_and_test() {
  local build=$1
  shift
  configure_h5journal "$build" "$@"
  grep -E "^-- (HDF5|h5py)" "$build.configure.log"
  local targets=("${MATRIX_TARGETS[@]}")
  if [[ $MATRIX_TESTS == *"|h5recover|"* ]]; then targets+=("${MATRIX_H5RECOVER_TARGETS[@]}"); fi
  if grep -q "^-- HDF5 .*, parallel" "$build.configure.log"; then targets+=("${MATRIX_MPI_TARGETS[@]}"); fi
  cmake --build "$build" -j "$JOBS" --target "${targets[@]}" > "$build.build.log" 2>&1 ||
    { tail -50 "$build.build.log"; return 1; }
  ((build_only)) || (cd "$build" && ctest --output-on-failure -R "$MATRIX_TESTS")
}

cell_1_14_serial() {
  H5JOURNAL_HDF5_FLAVOUR=serial build_hdf5
  build_and_test "$ROOT_DIR/build-1.14-serial" -DHDF5_ROOT="$HDF5_PREFIX"
}

# In the chroot the checkout is /src.
cell_2x() {  # serial | mpich
  local flags=()
  ((build_only)) && flags=(--build-only)
  "$ROOT_DIR/scripts/hdf5-2x-chroot.sh" run "$ROOT_DIR" bash /src/scripts/matrix.sh "${flags[@]}" --in-chroot "$1"
}

# A plugin built for one HDF5, loaded by another's tools, refuses with a
# message naming both, and nothing crashes.
expect_refusal() {  # what, plugin dir, h5ls, file, text the message must contain
  local out status=0
  out=$(HDF5_PLUGIN_PATH="$2" HDF5_DRIVER=journal "$3" "$4" 2>&1) || status=$?
  if ((status == 0 || status > 128)); then
    echo "FAIL: $1: h5ls exited $status"; echo "$out"; return 1
  fi
  grep -qF -- "$5" <<< "$out" || { echo "FAIL: $1: no message naming both HDF5s"; echo "$out"; return 1; }
  grep -qF -- "(not opening $4)" <<< "$out" || { echo "FAIL: $1: the open was not refused by the plugin"; echo "$out"; return 1; }
  echo "ok: $1 refused: $(grep -F 'refuses to open' <<< "$out" | head -1 | cut -c1-160)..."
}

plugin_check_1_14() {
  H5JOURNAL_HDF5_FLAVOUR=serial build_hdf5
  expect_refusal "the 1.14 parallel plugin in a 1.14 serial h5ls" "$BUILD_DIR/plugin" "$HDF5_PREFIX/bin/h5ls" \
    missing.h5 "built for HDF5 1.14.5 (parallel), but HDF5 1.14.5 (serial)"
}

# In the chroot: the 2.x MPICH plugin in Debian's serial h5ls, and the 2.x
# serial plugin in the 1.14 serial h5ls (copied from this machine's cache
# into the checkout, which the chroot sees; glibc is newer there).
plugin_check_2x() {
  H5JOURNAL_HDF5_FLAVOUR=serial build_hdf5
  rm -rf "$ROOT_DIR/build-hdf5-1.14-serial" && cp -a "$HDF5_PREFIX" "$ROOT_DIR/build-hdf5-1.14-serial"
  "$ROOT_DIR/scripts/hdf5-2x-chroot.sh" run "$ROOT_DIR" bash /src/scripts/matrix.sh --in-chroot plugin-check
}

# The Debian package (cpack), and the demo's program beside it, without the
# RUNPATH that would find the build tree's driver instead of the package's.
make_package() {  # build
  (cd "$1" && cpack -G DEB > cpack.log 2>&1) || { tail -30 "$1/cpack.log"; return 1; }
  rm -rf "$1/package-demo" && mkdir -p "$1/package-demo"
  cp "$1/examples/timestep_sim" "$1/package-demo/" && patchelf --remove-rpath "$1/package-demo/timestep_sim"
  ls "$1"/h5journal_*.deb
}

# The package in a clean system of the same Debian: apt installs it (and
# what it depends on), and the demo runs against it, its plugin found in
# HDF5's default directory; h5recover's man page and the pkg-config and
# CMake files are there.
package_check() {
  local deb
  deb=$(ls "$ROOT_DIR"/build-2.x-serial/h5journal_*.deb)
  "$ROOT_DIR/scripts/hdf5-2x-chroot.sh" clean-run "$ROOT_DIR" "$deb" bash -c '
    set -e
    dpkg -L h5journal | grep -E "man1/h5recover.1|pkgconfig/h5journal.pc|cmake/h5journal/h5journal-config.cmake|hdf5/serial/plugins/libh5journal.so"
    H5JOURNAL_DEMO_SIM=/src/build-2.x-serial/package-demo/timestep_sim H5JOURNAL_DEMO_H5RECOVER=/usr/bin/h5recover \
      H5JOURNAL_DEMO_PLUGIN_PATH= HDF5_PREFIX=/usr BUILD_DIR=/nonexistent bash /src/scripts/demo.sh'
}

in_chroot() {
  case "$1" in
    # Debian's two ways: its flavour directory (HDF5's CMake package), and
    # pkg-config.
    serial)
      # CI's lane leaves the C readers' 20 s to stage 1: h5py's readers
      # (h5py_live_readers, h5py_busy_writer) open through this HDF5 here.
      if [[ $H5JOURNAL_TEST_BUDGET == ci ]]; then MATRIX_TESTS=${MATRIX_TESTS/|live_readers|/|}; fi
      build_and_test /src/build-2.x-serial -DHDF5_ROOT="$DEBIAN_HDF5/serial" -DCMAKE_INSTALL_PREFIX=/usr
      # netCDF-C's own suite, built from Debian's source: its build (2 to 3
      # minutes on 2 cores) goes with the cell's build.
      if ((build_only)); then
        bash /src/test/netcdf/netcdf_suite.sh --build /var/tmp/netcdf-suite
      else
        make_package /src/build-2.x-serial
        bash /src/test/netcdf/netcdf_suite.sh /src/build-2.x-serial/plugin /var/tmp/netcdf-suite
      fi
      ;;
    # Debian's libhdf5_mpich takes 0.4 s of system time to load, in every
    # process, MPI or not: the kill test, a process per kill, runs once
    # here, and h5recover's test (about 200 processes, 105 s here against
    # 37 s in the serial cell) not at all.  That test runs against this 2.x
    # in the serial cell and against a parallel HDF5 in stage 1; its tool
    # and its writers take the same serial paths in every cell.
    # CI's lane runs only what is parallel here: the MPI tests at 2 ranks
    # but the variants stage 1 runs against 1.14 parallel (durable_within,
    # without_recovery), and a serial program's open against this parallel
    # HDF5.  The serial tests' paths are the 2.x serial cell's; --long runs
    # them here too.
    mpich)
      if [[ $H5JOURNAL_TEST_BUDGET == ci ]]; then
        MATRIX_TESTS='^(no_mpi_in_serial_programs|mpi_(same_as_mpio|rank_death|crash|live_reader|file_per_process)_np2)$'
        MATRIX_TARGETS=(h5journal h5recover open_by_name)
      else
        MATRIX_TESTS=${MATRIX_TESTS/|crash_default|/|}
        MATRIX_TESTS=${MATRIX_TESTS/|h5recover|/|}
      fi
      build_and_test /src/build-2.x-mpich -DH5JOURNAL_HDF5_PKG=hdf5-mpich
      ;;
    plugin-check)
      local version
      version=$(dpkg-query -W -f='${Version}' libhdf5-dev | sed 's/+.*//')
      expect_refusal "the $version MPICH plugin in Debian's serial h5ls" /src/build-2.x-mpich/plugin /usr/bin/h5ls \
        missing.h5 "built for HDF5 $version (parallel), but HDF5 $version (serial)"
      expect_refusal "the $version serial plugin in a 1.14 serial h5ls" /src/build-2.x-serial/plugin \
        /src/build-hdf5-1.14-serial/bin/h5ls missing.h5 "built for HDF5 $version (serial), but HDF5 1.14.5 (serial)"
      ;;
  esac
}

build_only=0
if [[ "${1:-}" == --build-only ]]; then build_only=1; shift; fi
if [[ "${1:-}" == --in-chroot ]]; then
  in_chroot "$2"
  exit
fi
cells=("$@")
((${#cells[@]})) || cells=(1.14-serial 2.x-serial 2.x-mpich plugin-check)
for cell in "${cells[@]}"; do
  start=$SECONDS
  say "matrix: $cell"
  case "$cell" in
    1.14-serial) cell_1_14_serial ;;
    2.x-serial)
      cell_2x serial
      ((build_only)) || package_check
      ;;
    2.x-mpich) cell_2x mpich ;;
    plugin-check)
      ((build_only)) && continue  # it builds nothing of its own
      plugin_check_1_14
      plugin_check_2x
      ;;
    *) echo "unknown cell $cell (1.14-serial, 2.x-serial, 2.x-mpich, plugin-check)"; exit 2 ;;
  esac
  say "matrix: $cell passed in $((SECONDS - start)) s"
done
