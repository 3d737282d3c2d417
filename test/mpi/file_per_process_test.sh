#!/usr/bin/env bash
# An MPI program opening with H5P_DEFAULT under HDF5_DRIVER=journal
# (file_per_process.cc): by default each rank writes a file of its own;
# with mpi_comm=world the ranks share one; under mpi_comm=world ranks that
# name different files, or ask for different durability, are refused
# with an error that says so.
set -euo pipefail
program=$1 h5dump=$2 work=$3 ranks=$4 plugin_dir=$5
mkdir -p "$work"
cd "$work"
rm -f ./*.h5 ./*.jnl* ./*.txt
export HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal
mpiexec -n "$ranks" "$program" own
for ((r = 0; r < ranks; r++)); do
  [[ ! -e rank_$r.h5.jnl ]] || { echo "FAIL: rank_$r.h5's journal left behind"; exit 1; }
  env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$h5dump" -d rows rank_$r.h5 > rank_$r.txt
  grep -q "(0,0): $((r + 1)), $((r + 1))" rank_$r.txt || { echo "FAIL: rank_$r.h5 lacks its rows"; cat rank_$r.txt; exit 1; }
done
echo "each of $ranks ranks wrote its own file (mpi_comm=self, the default)"
HDF5_DRIVER_CONFIG="mpi_comm=world" mpiexec -n "$ranks" "$program" shared
env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$h5dump" -d rows shared.h5 > shared.txt
for ((r = 0; r < ranks; r++)); do
  grep -q "($r,0): $((r + 1)), $((r + 1))" shared.txt || { echo "FAIL: shared.h5 lacks rank $r's row"; cat shared.txt; exit 1; }
done
echo "$ranks ranks wrote one shared file (mpi_comm=world)"
HDF5_DRIVER_CONFIG="mpi_comm=world" mpiexec -n "$ranks" "$program" names > names.txt 2>&1
grep -q "with mpi_comm=world every rank must open the same file" names.txt ||
  { echo "FAIL: different names under mpi_comm=world were not refused clearly"; cat names.txt; exit 1; }
echo "different names under mpi_comm=world: refused, and the error says why"
config="mpi_comm=world"
mpiexec -n 1 -env HDF5_DRIVER_CONFIG "$config" "$program" refused : \
  -n $((ranks - 1)) -env HDF5_DRIVER_CONFIG "$config;durable=100ms" "$program" refused > durability.txt 2>&1
grep -q "rank 1 opens the file with durable=100ms while rank 0 uses durable=true: every rank of a job must use the same durability" durability.txt ||
  { echo "FAIL: different durability under mpi_comm=world was not refused clearly"; cat durability.txt; exit 1; }
echo "different durability under mpi_comm=world: refused, and the error says why"
