#!/usr/bin/env bash
# Command 2 of the README: set up as command 1 does (without the demo), then
# run the tests.  Three lanes:
#
#   scripts/test.sh           every stage below, the open-ended tests sized
#                             for CI (.ci/run runs this)
#   scripts/test.sh --long    every stage at the full budgets: 3 times the
#                             kills and explorer states, every fault-sweep
#                             position (README's Tests section)
#   scripts/test.sh --quick   the quick lane, for everyday edits: after the
#                             build, the unit tests, a short explorer run with
#                             live readers, a short fault sweep, crash kills
#                             through the plugin and h5recover's test
#
# The stages:
#   0. set-up: packages, HDF5 1.14 parallel (built once, cached), h5journal;
#   1. the test suite (unit, crash kills, crash-state explorer, fault sweep,
#      the benchmark's smoke run, MPI, ...) against HDF5 1.14 parallel;
#   2. the same suite under AddressSanitizer + UBSan (scripts/sanitize.sh;
#      in CI's lane without the tests whose worth is their duration or
#      their count of ranks, test/CMakeLists.txt);
#   3. HDF5's own test programs through the driver
#      (scripts/hdf5-conformance.sh; docs/conformance.md);
#   4-5. the other cells of the HDF5 matrix, a subset of the suite each:
#      Debian's HDF5 2.x serial (with h5py's own suite and netCDF-C's
#      through the driver) and Debian's HDF5 2.x MPICH, whose subset in
#      CI's lane is its MPI tests alone (scripts/matrix.sh);
#   6-8. with --long only: HDF5 1.14 serial, built from source like the
#      parallel one; a plugin built for one HDF5 refusing to load into
#      another (which needs that build); each fuzz target for FUZZ_SECONDS
#      (default 60; scripts/fuzz.sh).  CI's lane leaves out these three,
#      the costliest for what they add to each run: the serial code paths
#      run under 2.x serial, the 1.14 API under 1.14 parallel, the refusal
#      against a fake HDF5 in stage 1 (another_hdf5_copy), and a minute of
#      fuzzing needs a clang tree of its own for a run that adds little to
#      the campaigns of millions of executions (docs/reliability.md).
# Whatever the outcome, the end prints each stage's time and the total.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$ROOT_DIR/scripts/stage_clock.sh"

lane=ci
case "${1:-}" in
  "") ;;
  --quick) lane=quick ;;
  --long) lane=long ;;
  *) echo "usage: $0 [--quick | --long]" >&2; exit 2 ;;
esac
export H5JOURNAL_TEST_BUDGET=ci
[[ $lane == long ]] && H5JOURNAL_TEST_BUDGET=long
[[ $lane == ci ]] || STAGE_BUDGET_SECONDS=0  # 45 minutes is CI's budget, not the other lanes'
trap 'stage_report $?' EXIT  # replaced below, once background jobs start

stage "set-up: packages, HDF5 1.14 parallel, build"
prepare
if [[ $lane == quick ]]; then
  stage "the quick lane"
  (cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS" -L quick)
  exit
fi
# Stages 2 to 6 and 8 each build a tree of their own, and the 2.x cells need the
# Debian testing chroot (made once, then cached).  All of it is made in the
# background from here on, at the lowest CPU and I/O priority, so that it
# takes the cores the suite leaves idle: its kill tests mostly wait on
# fsync.  Each stage waits for its own build, then runs its script, whose
# build is then done (or, if the one in the background failed, fails
# again in view).
PREBUILT=$BUILD_DIR.prebuilt
rm -rf "$PREBUILT" && mkdir -p "$PREBUILT"
prebuild() {  # NAME CMD...: CMD in the background, its log and status under $PREBUILT
  local name=$1 status=0
  shift
  nice -n 19 ionice -c 3 "$@" > "$PREBUILT/$name.log" 2>&1 || status=$?
  echo "$status" > "$PREBUILT/$name.status"
}
until_prebuilt() {  # NAME: returns once NAME's build has ended, however it ended
  while [[ ! -f $PREBUILT/$1.status ]]; do sleep 2; done
}
await_prebuilt() {  # NAME
  local waited=$SECONDS
  until_prebuilt "$1"
  (((SECONDS - waited) < 5)) || echo "   (waited $((SECONDS - waited)) s for the build of $1)"
  [[ $(cat "$PREBUILT/$1.status") == 0 ]] || echo "   the background build of $1 failed ($PREBUILT/$1.log); again here:"
}
kill_tree() {  # PID: it and every process below it
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2> /dev/null || true
}
# The builds run one after another, in the order the stages need them, so
# that a stage waiting for its build does not share the cores with a later
# stage's.  Only the chroot's making, mostly downloads and unpacking, runs
# beside them.
(
  prebuild asan "$ROOT_DIR/scripts/sanitize.sh" --build-only
  prebuild hdf5-tests "$ROOT_DIR/scripts/hdf5-conformance.sh" --build-only
  until_prebuilt clean-system  # the 2.x cells build in the chroot
  prebuild 2.x-serial "$ROOT_DIR/scripts/matrix.sh" --build-only 2.x-serial
  prebuild 2.x-mpich "$ROOT_DIR/scripts/matrix.sh" --build-only 2.x-mpich
  if [[ $lane == long ]]; then
    prebuild 1.14-serial "$ROOT_DIR/scripts/matrix.sh" --build-only 1.14-serial
    prebuild fuzz "$ROOT_DIR/scripts/fuzz.sh" --build-only
  fi
) &
(
  prebuild chroot "$ROOT_DIR/scripts/hdf5-2x-chroot.sh" create
  prebuild clean-system "$ROOT_DIR/scripts/hdf5-2x-chroot.sh" clean-base  # for the package's test (stage 4)
) &
trap 'status=$?; for job in $(jobs -p); do kill_tree "$job"; done; stage_report $status' EXIT

stage "the test suite"
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS" -LE quick_only)
stage "the test suite under ASan + UBSan"
await_prebuilt asan
"$ROOT_DIR/scripts/sanitize.sh"
stage "HDF5's test suite through the driver"
conformance_args=(--no-docs)
[[ $lane == long ]] || conformance_args+=(--no-reference)
await_prebuilt hdf5-tests
"$ROOT_DIR/scripts/hdf5-conformance.sh" "${conformance_args[@]}"
stage "HDF5 2.x serial (Debian's libhdf5-dev), and h5py"
# The MPICH cell builds in the background meanwhile, in the same chroot.
await_prebuilt 2.x-serial
[[ $(cat "$PREBUILT/chroot.status") == 0 ]] || { cat "$PREBUILT/chroot.log"; exit 1; }
tail -1 "$PREBUILT/chroot.log"
"$ROOT_DIR/scripts/matrix.sh" 2.x-serial
stage "HDF5 2.x parallel (Debian's libhdf5-mpich-dev)"
await_prebuilt 2.x-mpich
"$ROOT_DIR/scripts/matrix.sh" 2.x-mpich
if [[ $lane == long ]]; then
  stage "HDF5 1.14 serial"
  await_prebuilt 1.14-serial
  "$ROOT_DIR/scripts/matrix.sh" 1.14-serial
  stage "a plugin refuses an HDF5 it was not built for"
  "$ROOT_DIR/scripts/matrix.sh" plugin-check
  stage "fuzzing"
  await_prebuilt fuzz
  "$ROOT_DIR/scripts/fuzz.sh" "${FUZZ_SECONDS:-60}"
fi
stage_end
say "all stages passed"
