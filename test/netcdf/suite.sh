#!/usr/bin/env bash
# netCDF-C's own test suite (ctest) through the driver, in the HDF5 2.x
# chroot (scripts/matrix.sh runs it in the 2.x serial cell under the long
# budget): Debian's netCDF source, built against Debian's HDF5, run once
# without the driver and once with HDF5_DRIVER=journal.  Every test that
# passes without the driver must pass with it.
#
# netCDF's filter tests set HDF5_PLUGIN_PATH to its own filter directory,
# where HDF5 then looks for the driver too: the plugin is linked there.
#
#   suite.sh PLUGIN_DIR WORK     (WORK keeps the source and the build)
set -euo pipefail
plugin_dir=$1 work=$2
mkdir -p "$work"
cd "$work"
if ! ls -d netcdf-*/ > /dev/null 2>&1; then
  echo "deb-src http://deb.debian.org/debian $(. /etc/os-release; echo "${VERSION_CODENAME:-testing}") main" \
    > /etc/apt/sources.list.d/h5journal-src.list
  apt-get update -q > /dev/null
  apt-get source -q netcdf > source.log 2>&1 || { tail source.log; echo "FAIL: apt-get source netcdf"; exit 1; }
fi
src=$(ls -d "$work"/netcdf-*/ | head -1)
command -v m4 > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q m4 > /dev/null
mkdir -p build && cd build
cmake "$src" -DCMAKE_BUILD_TYPE=Release -DNETCDF_ENABLE_DAP=OFF -DNETCDF_ENABLE_BYTERANGE=OFF \
  -DNETCDF_ENABLE_NCZARR=OFF -DNETCDF_ENABLE_TESTS=ON -DCMAKE_C_COMPILER_LAUNCHER=ccache > configure.log 2>&1 ||
  { tail -20 configure.log; exit 1; }
cmake --build . -j "${JOBS:-2}" > build.log 2>&1 || { tail -20 build.log; exit 1; }
mkdir -p plugins && ln -sf "$plugin_dir/libh5journal.so" plugins/libh5journal.so

passed() {  # ctest's log -> the names of the tests that passed
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) \.*  *Passed.*/\1/p' "$1" | sort
}
ctest -j "${JOBS:-2}" --timeout 300 > plain.log 2>&1 || true
HDF5_DRIVER=journal HDF5_PLUGIN_PATH="$plugin_dir" ctest -j "${JOBS:-2}" --timeout 300 > journal.log 2>&1 || true
passed plain.log > plain.passed
passed journal.log > journal.passed
lost=$(comm -23 plain.passed journal.passed)
echo "netCDF-C's ctest: $(wc -l < plain.passed) of $(grep -c ' Test *#' plain.log) pass without the driver," \
  "$(wc -l < journal.passed) with HDF5_DRIVER=journal"
if [[ -n "$lost" ]]; then
  echo "FAIL: passing without the driver, failing with it:"
  echo "$lost"
  exit 1
fi
echo PASS
