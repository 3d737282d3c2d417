#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default
# 60).  The seed corpus is made of real journals: a timestep writer is killed
# at several moments and its journal kept.  For a long campaign:
#   scripts/fuzz.sh 14400        # four hours per target
#   scripts/fuzz.sh --build-only # build them, run nothing
# Prints each target's executions; exits non-zero on any crash, leak or hang
# (the crashing input is left in build-fuzz/ as crash-* / leak-* / timeout-*).
set -euo pipefail
SECONDS_PER_TARGET=${1:-60}
source "$(dirname "$0")/common.sh"
: "${HDF5_PREFIX:=$("$(dirname "$0")/build-hdf5.sh" parallel 2> /dev/null | tail -1)}"
FUZZ_DIR=$ROOT_DIR/build-fuzz
say "building the fuzz targets with clang in $FUZZ_DIR"
CC=clang-14 CXX=clang++-14 configure_h5journal "$FUZZ_DIR" -DHDF5_ROOT="$HDF5_PREFIX" -DCMAKE_PREFIX_PATH="$HDF5_PREFIX" \
  -DH5JOURNAL_FUZZ=ON
cmake --build "$FUZZ_DIR" -j "$JOBS" --target fuzz_journal_reader fuzz_recovery
[[ $SECONDS_PER_TARGET == --build-only ]] && exit 0

seeds=$FUZZ_DIR/seeds
if [[ ! -d $seeds ]]; then
  say "making the seed corpus from real journals"
  mkdir -p "$seeds"
  sim=$BUILD_DIR/examples/timestep_sim
  [[ -x $sim ]] || sim=$FUZZ_DIR/examples/timestep_sim
  tmp=$(mktemp -d)
  for delay in 0.01 0.02 0.04 0.08 0.15 0.3; do
    (cd "$tmp" && rm -f s.h5 s.h5.jnl
     "$sim" write s.h5 --steps 100000 --elems 64 --checkpoint-bytes 65536 --io sync & pid=$!
     sleep $delay; kill -9 $pid; wait $pid 2>/dev/null
     [[ -f s.h5.jnl ]] && head -c 262144 s.h5.jnl > "$seeds/journal-$delay") || true
  done
  rm -rf "$tmp"
  ls "$seeds" | wc -l | xargs echo "   seed journals:"
fi

# One target's run; prints its one-line result.  Each fuzzer is one
# process on one core, so the two run side by side.
fuzz_one() {
  local target=$1 corpus=$FUZZ_DIR/corpus/$1 runs
  mkdir -p "$corpus"
  if ASAN_OPTIONS=detect_leaks=1 ./test/fuzz/$target -max_total_time="$SECONDS_PER_TARGET" -timeout=10 \
       -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 "$corpus" "$seeds" > "$target.log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$target.log" | grep -o '[0-9]*$')
    echo "   $target: $runs executions, no crash"
  else
    echo "   $target FAILED:"; grep -E "ERROR|SUMMARY|Test unit written|crash-|leak-|timeout-" "$target.log" | head -10
    return 1
  fi
}

status=0
cd "$FUZZ_DIR"
targets=(fuzz_journal_reader fuzz_recovery)
say "${targets[*]} for ${SECONDS_PER_TARGET}s, side by side"
pids=()
for target in "${targets[@]}"; do
  fuzz_one "$target" > "$target.result" &
  pids+=($!)
done
for i in "${!targets[@]}"; do
  wait "${pids[i]}" || status=1
  cat "${targets[i]}.result"
done
exit $status
