#!/usr/bin/env bash
# netCDF-C's own test suite (ctest) through the driver, in the HDF5 2.x
# chroot (scripts/matrix.sh, 2.x serial cell): Debian's netCDF source, built
# against Debian's HDF5, run with HDF5_DRIVER=journal.  Every test that
# passes without the driver must pass with it.  Only where a test fails
# through the driver does the whole suite run again without it, for the
# comparison: some of its tests need files that others make, so a run of
# the failed ones alone could fail for want of them.
#
# Building netCDF needs no driver, so .ci/run builds it in the background,
# with the cell's build (--build); the cell itself then runs the suite.
#
# netCDF's filter tests set HDF5_PLUGIN_PATH to its own filter directory,
# where HDF5 then looks for the driver too: the plugin is linked there.
#
#   suite.sh --build WORK        get and build netCDF-C and its tests
#   suite.sh PLUGIN_DIR WORK     build if WORK has no build, then run the
#                                suite through the driver (and, if any test
#                                fails there, without it)
# WORK keeps the source, the build and the runs' logs.
set -euo pipefail

passed() {  # ctest's log -> the names of the tests that passed
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) \.*  *Passed.*/\1/p' "$1" | sort
}

ran() {  # ctest's log -> the names of the tests that ran
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .*/\1/p' "$1" | sort
}

get_source() {
  ls -d netcdf-*/ > /dev/null 2>&1 && return 0
  echo "deb-src http://deb.debian.org/debian $(. /etc/os-release; echo "${VERSION_CODENAME:-testing}") main" \
    > /etc/apt/sources.list.d/h5journal-src.list
  apt-get update -q > /dev/null
  apt-get source -q netcdf > source.log 2>&1 || { tail source.log; echo "FAIL: apt-get source netcdf"; return 1; }
}

# Builds netCDF-C and its tests in WORK/build (ccache makes a rebuild cheap),
# unoptimised: 70 s of CPU against Release's 172, and its suite runs in the
# same time (94 s against 91 through the driver), since HDF5 does its work.
build() {
  get_source
  local src
  src=$(ls -d "$work"/netcdf-*/ | head -1)
  mkdir -p build && cd build
  rm -f built
  cmake "$src" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS=-O0 -DNETCDF_ENABLE_DAP=OFF -DNETCDF_ENABLE_BYTERANGE=OFF \
    -DNETCDF_ENABLE_NCZARR=OFF -DNETCDF_ENABLE_TESTS=ON -DCMAKE_C_COMPILER_LAUNCHER=ccache > configure.log 2>&1 ||
    { tail -20 configure.log; return 1; }
  cmake --build . -j "${JOBS:-2}" > build.log 2>&1 || { tail -20 build.log; return 1; }
  touch built
  cd ..
}

run_suite() {  # plugin dir
  cd build
  mkdir -p plugins && ln -sf "$1/libh5journal.so" plugins/libh5journal.so
  HDF5_DRIVER=journal HDF5_PLUGIN_PATH="$1" ctest -j "${JOBS:-2}" --timeout 300 > journal.log 2>&1 || true
  passed journal.log > journal.passed
  local failed lost=""
  failed=$(comm -23 <(ran journal.log) journal.passed)
  if [[ -n "$failed" ]]; then
    ctest -j "${JOBS:-2}" --timeout 300 > plain.log 2>&1 || true
    lost=$(comm -12 <(echo "$failed") <(passed plain.log))
  fi
  echo "netCDF-C's ctest: $(wc -l < journal.passed) of $(ran journal.log | wc -l) pass with HDF5_DRIVER=journal;" \
    "of the $(grep -c . <<< "$failed") that fail, $(grep -c . <<< "$lost") pass without it"
  if [[ -n "$lost" ]]; then
    echo "FAIL: passing without the driver, failing with it:"
    echo "$lost"
    return 1
  fi
  echo PASS
}

if [[ "$1" == --build ]]; then
  work=$2
  mkdir -p "$work" && cd "$work"
  build
  exit
fi
plugin_dir=$1 work=$2
mkdir -p "$work" && cd "$work"
[[ -f build/built ]] || build
run_suite "$plugin_dir"
