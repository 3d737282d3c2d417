#!/usr/bin/env bash
# Command 2 of the README: set up as command 1 does (without the demo), then
# run every test, in eight stages:
#   1. the test suite (unit, crash, crash-state explorer, fault sweep,
#      the benchmark harness's --quick smoke run, ...), against HDF5 1.14
#      parallel: the first cell of the HDF5 matrix;
#   2. the same suite under AddressSanitizer + UBSan (scripts/sanitize.sh);
#   3. each fuzz target for FUZZ_SECONDS (default 60; scripts/fuzz.sh);
#   4. HDF5's own test programs through the driver: serial beside sec2,
#      parallel (testphdf5, t_pflush1/2 at 2 and 4 ranks) beside mpio
#      (scripts/hdf5-conformance.sh; docs/conformance.md);
#   5-7. the other cells of the HDF5 matrix, a subset of the suite each:
#      HDF5 1.14 serial, Debian's HDF5 2.x serial (with h5py's own suite
#      through the driver) and Debian's HDF5 2.x MPICH (scripts/matrix.sh;
#      docs/building.md);
#   8. a plugin built for one HDF5 refuses to load into another.
# .ci/run runs this.
set -euo pipefail
source "$(dirname "$0")/common.sh"
prepare
# The Debian testing chroot of stages 6 and 7 (cached after the first run)
# downloads and unpacks while stages 1 to 5 compute.
"$ROOT_DIR/scripts/hdf5-2x-chroot.sh" create > "$BUILD_DIR.chroot.log" 2>&1 &
chroot_job=$!
say "stage 1: the test suite"
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS")
say "stage 2: the test suite under sanitizers"
"$ROOT_DIR/scripts/sanitize.sh"
say "stage 3: fuzzing"
"$ROOT_DIR/scripts/fuzz.sh" "${FUZZ_SECONDS:-60}"
say "stage 4: HDF5's test suite through the driver"
"$ROOT_DIR/scripts/hdf5-conformance.sh" --no-docs
say "stage 5: HDF5 1.14 serial"
"$ROOT_DIR/scripts/matrix.sh" 1.14-serial
wait "$chroot_job" || { cat "$BUILD_DIR.chroot.log"; exit 1; }
tail -1 "$BUILD_DIR.chroot.log"
say "stage 6: HDF5 2.x serial (Debian's libhdf5-dev), and h5py"
"$ROOT_DIR/scripts/matrix.sh" 2.x-serial
say "stage 7: HDF5 2.x parallel (Debian's libhdf5-mpich-dev)"
"$ROOT_DIR/scripts/matrix.sh" 2.x-mpich
say "stage 8: a plugin refuses an HDF5 it was not built for"
"$ROOT_DIR/scripts/matrix.sh" plugin-check
say "all stages passed"
