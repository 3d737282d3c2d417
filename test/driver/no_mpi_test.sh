#!/usr/bin/env bash
# A serial program using the driver by name pays for no MPI: against a
# serial HDF5 the plugin links no MPI library at all; against a parallel
# one it never initialises MPI (open_by_name checks MPI_Initialized).
set -euo pipefail
program=$1 plugin_dir=$2 work=$3 parallel=$4
mkdir -p "$work"
cd "$work"
rm -f ./*.h5 ./*.jnl
if [[ "$parallel" != ON ]]; then
  if ldd "$plugin_dir/libh5journal.so" | grep -i "libmpi"; then
    echo "FAIL: the plugin of a serial build links an MPI library"; exit 1
  fi
  echo "no MPI library in ldd of the serial plugin"
fi
HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal "$program" by-name.h5
[[ ! -e by-name.h5.jnl ]] || { echo "FAIL: journal left after close"; exit 1; }
