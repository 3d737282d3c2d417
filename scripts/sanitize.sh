#!/usr/bin/env bash
# The sanitizer stage: the whole test suite built with AddressSanitizer and
# UndefinedBehaviorSanitizer, assertions on (any report or failed assertion
# fails the test that produced it).
# The crash-state explorer and the fault sweep run smaller there (250
# states under CI's budget, 3,000 under --long, and the timesteps workload;
# 50 and 300 MPI states and the mpi-inplace workload: test/CMakeLists.txt),
# since ASan slows them about 40-fold.  clang builds it: with the
# sanitizers it compiles the tree in under half of GCC's time (14 against
# 30 minutes of CPU from empty caches).
#   sanitize.sh [--build-only | CTEST-ARGS...]
# ThreadSanitizer is not run.  The engine's two threads share only what
# their mutexes guard with the writer: durable_within's sync
# (background_sync.h), and the closing thread (closing_thread.h), which
# owns each file from its hand-off on.  io_uring is asynchronous without
# threads, and the tests' ranks_in_one_process runs one thread at a time,
# handing over under a mutex.
set -euo pipefail
source "$(dirname "$0")/common.sh"
: "${HDF5_PREFIX:=$("$(dirname "$0")/build-hdf5.sh" parallel 2> /dev/null | tail -1)}"
ASAN_DIR=$ROOT_DIR/build-asan
say "building with ASan + UBSan in $ASAN_DIR"
CC=clang-14 CXX=clang++-14 configure_h5journal "$ASAN_DIR" -DHDF5_ROOT="$HDF5_PREFIX" -DCMAKE_PREFIX_PATH="$HDF5_PREFIX" -DH5JOURNAL_SANITIZE=ON
cmake --build "$ASAN_DIR" -j "$JOBS"
[[ ${1:-} == --build-only ]] && exit 0
say "running the test suite under ASan + UBSan"
cd "$ASAN_DIR"
# MPICH's MPI_Init (in the MPI tests) leaks in hwloc's plugins, which it
# then unloads, so no suppression can name them.  Without plugins hwloc
# uses its built-in components, and nothing leaks.
export HWLOC_PLUGINS_PATH=/nonexistent
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
LSAN_OPTIONS=suppressions=$ROOT_DIR/test/support/lsan.supp \
  ctest --output-on-failure -j "$JOBS" -LE quick_only "$@"
