#!/usr/bin/env bash
# netCDF-C's own test suite (ctest) through the driver, in the HDF5 2.x
# chroot (scripts/matrix.sh, 2.x serial cell): Debian's netCDF source, built
# against Debian's HDF5, run once without the driver (the baseline) and once
# with HDF5_DRIVER=journal.  Every test that passes without the driver must
# pass with it.
#
# The baseline needs no driver, so .ci/run makes it in the background, with
# the cell's build (--baseline); the cell itself then runs only the pass
# through the driver.
#
# netCDF's filter tests set HDF5_PLUGIN_PATH to its own filter directory,
# where HDF5 then looks for the driver too: the plugin is linked there.
#
#   suite.sh --baseline WORK     get and build netCDF-C, run its ctest plainly
#   suite.sh PLUGIN_DIR WORK     the baseline if WORK has none, then the pass
#                                through the driver, and the comparison
# WORK keeps the source, the build and the baseline's log.
set -euo pipefail

passed() {  # ctest's log -> the names of the tests that passed
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) \.*  *Passed.*/\1/p' "$1" | sort
}

get_source() {
  ls -d netcdf-*/ > /dev/null 2>&1 && return 0
  echo "deb-src http://deb.debian.org/debian $(. /etc/os-release; echo "${VERSION_CODENAME:-testing}") main" \
    > /etc/apt/sources.list.d/h5journal-src.list
  apt-get update -q > /dev/null
  apt-get source -q netcdf > source.log 2>&1 || { tail source.log; echo "FAIL: apt-get source netcdf"; return 1; }
}

# Builds netCDF-C in WORK/build (ccache makes a rebuild cheap), runs its
# ctest without the driver and keeps the names of the tests that passed.
baseline() {
  get_source
  local src
  src=$(ls -d "$work"/netcdf-*/ | head -1)
  mkdir -p build && cd build
  rm -f plain.passed
  cmake "$src" -DCMAKE_BUILD_TYPE=Release -DNETCDF_ENABLE_DAP=OFF -DNETCDF_ENABLE_BYTERANGE=OFF \
    -DNETCDF_ENABLE_NCZARR=OFF -DNETCDF_ENABLE_TESTS=ON -DCMAKE_C_COMPILER_LAUNCHER=ccache > configure.log 2>&1 ||
    { tail -20 configure.log; return 1; }
  cmake --build . -j "${JOBS:-2}" > build.log 2>&1 || { tail -20 build.log; return 1; }
  ctest -j "${JOBS:-2}" --timeout 300 > plain.log 2>&1 || true
  passed plain.log > plain.passed
  echo "netCDF-C's ctest: $(wc -l < plain.passed) of $(grep -c ' Test *#' plain.log) pass without the driver"
  cd ..
}

through_driver() {  # plugin dir
  cd build
  mkdir -p plugins && ln -sf "$1/libh5journal.so" plugins/libh5journal.so
  HDF5_DRIVER=journal HDF5_PLUGIN_PATH="$1" ctest -j "${JOBS:-2}" --timeout 300 > journal.log 2>&1 || true
  passed journal.log > journal.passed
  echo "netCDF-C's ctest: $(wc -l < journal.passed) of $(grep -c ' Test *#' journal.log)" \
    "pass with HDF5_DRIVER=journal, $(wc -l < plain.passed) without"
  local lost
  lost=$(comm -23 plain.passed journal.passed)
  if [[ -n "$lost" ]]; then
    echo "FAIL: passing without the driver, failing with it:"
    echo "$lost"
    return 1
  fi
  echo PASS
}

if [[ "$1" == --baseline ]]; then
  work=$2
  mkdir -p "$work" && cd "$work"
  baseline
  exit
fi
plugin_dir=$1 work=$2
mkdir -p "$work" && cd "$work"
[[ -s build/plain.passed ]] || baseline
through_driver "$plugin_dir"
