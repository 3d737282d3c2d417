#!/usr/bin/env bash
# The parallel patterns through mpio and through the journal, at N ranks
# (oversubscribing the cores), give files h5diff finds identical, and the
# journal leaves no journal or data log behind.
set -euo pipefail
program=$1 h5diff=$2 work=$3 ranks=$4 plugin_dir=$5
# Under ASan (scripts/sanitize.sh): MPICH's MPI_Init leaks in hwloc's
# plugins, and only the slow unwinder reaches the libhwloc frame that
# test/support/lsan.supp names.  Without ASan the variable is ignored.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
mkdir -p "$work"
cd "$work"
rm -f ./*.h5 ./*.jnl ./*.jnl.data*
mpiexec -n "$ranks" "$program" mpio.h5 mpio
mpiexec -n "$ranks" "$program" journal.h5 journal
if ls journal.h5.jnl* 2>/dev/null; then echo "FAIL: journal or data log left behind"; exit 1; fi
"$h5diff" -r mpio.h5 journal.h5
echo "identical to mpio at $ranks ranks"
# The driver chosen by name, with no communicator on the FAPL (H5P_DEFAULT)
# and mpi_comm=world: every rank joins through MPI_COMM_WORLD.

HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="mpi_comm=world" \
  mpiexec -n "$ranks" "$program" by-name.h5 by-name
if ls by-name.h5.jnl* 2>/dev/null; then echo "FAIL: journal or data log left behind (by name)"; exit 1; fi
"$h5diff" -r mpio.h5 by-name.h5
echo "identical to mpio at $ranks ranks with HDF5_DRIVER=journal, H5P_DEFAULT and mpi_comm=world"
