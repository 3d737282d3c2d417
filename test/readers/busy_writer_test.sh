#!/usr/bin/env bash
# Live readers beside a writer that checkpoints many times a second
# (docs/design.md §11).  The writer (test/readers/busy_writer.cc) commits steps as
# fast as it can: groups in HDF5's old format, datasets deleted and written
# again larger so that HDF5 reuses the space, a chunked series, a flush per
# step.  At checkpoint_bytes of 256K and of 1M it checkpoints every few
# steps.  Beside it run reader loops that open through the driver: two C
# programs that verify the whole file, h5dump -a, and (given a Python with
# h5py) h5py.  No reader whose open-to-close is shorter than reader_wait may
# be cut off; every open must be exactly one commit, never older than the
# last its reader saw.  Prints opens, cut-offs, the journal's largest size,
# and the writer's commit rate alone and with readers.  Last, the writer is
# killed while a reader holds a checkpoint off: later readers must not wait
# for it, and h5recover brings the file back.
#   busy_writer_test.sh PROGRAM PLUGIN_DIR H5DUMP WORK SECONDS [PYTHON]
set -uo pipefail
program=$1 plugin_dir=$2 h5dump=$3 work=$4 seconds=$5 python=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export HDF5_PLUGIN_PATH=$plugin_dir HDF5_DRIVER=journal
reader_wait_ms=5000
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
field() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1"; }
# h5dump through the driver; under the sanitizers (TOOLS_PRELOAD) with their
# runtime preloaded, HDF5's own leaks not counted.
dump() {
  if [[ ${TOOLS_PRELOAD:-} ]]; then
    LD_PRELOAD=$TOOLS_PRELOAD ASAN_OPTIONS=detect_leaks=0 "$h5dump" "$@"
  else
    "$h5dump" "$@"
  fi
}

# h5dump -a /steps in a loop for SECONDS: a JSON tally like the verifiers'.
dump_loop() {
  local file=$1 end=$((SECONDS + $2)) opens=0 cut_off=0 failed=0 out
  while ((SECONDS < end)); do
    opens=$((opens + 1))
    out=$(dump -a /steps "$file" 2>&1)
    if grep -q "is gone" <<<"$out"; then
      cut_off=$((cut_off + 1))
    elif ! grep -Eq '\(0\): [0-9]+$' <<<"$out"; then
      failed=$((failed + 1))
      tail -3 <<<"$out" >&2
    fi
  done
  echo "{\"opens\": $opens, \"verified\": $((opens - cut_off - failed)), \"cut_off\": $cut_off, \"short_cut_off\": $cut_off, \"failed\": $failed, \"mismatched\": 0, \"regressed\": 0}"
}

# The journal's largest size while PID runs.
largest_journal() {
  local largest=0 size
  while kill -0 "$2" 2> /dev/null; do
    size=$(stat -c %s "$1" 2> /dev/null || echo 0)
    ((size > largest)) && largest=$size
    sleep 0.1
  done
  echo "$largest"
}

phase() {  # NAME CHECKPOINT_BYTES
  local name=$1 writer sampler i
  export HDF5_DRIVER_CONFIG="checkpoint_bytes=$2;reader_wait=$reader_wait_ms"
  "$program" write "$name.alone.h5" --seconds 3 > "$name.alone.json" || fail "$name: the writer alone failed"
  "$program" write "$name.h5" --seconds $((seconds + 2)) > "$name.writer.json" 2> "$name.writer.err" &
  writer=$!
  # Readers from the writer's tenth step on.
  for ((i = 0; i < 100; i++)); do
    # Not before the readers file exists: a reader of the file still
    # empty, with no journal, would hold HDF5's lock and refuse the writer.
    [[ -e $name.h5.jnl.readers ]] && dump -a /steps "$name.h5" 2>&1 | grep -Eq '\(0\): [0-9]{2,}$' && break
    sleep 0.05
  done
  largest_journal "$name.h5.jnl" $writer > "$name.journal" &
  sampler=$!
  local readers=()
  for i in 0 1; do
    "$program" verify "$name.h5" --seconds "$seconds" --within $reader_wait_ms > "$name.c$i.json" 2> "$name.c$i.err" &
    readers+=($!)
  done
  dump_loop "$name.h5" "$seconds" > "$name.h5dump.json" 2> "$name.h5dump.err" &
  readers+=($!)
  if [[ $python ]]; then
    "$python" "$here/../h5py/busy_reader.py" "$name.h5" "$seconds" $reader_wait_ms > "$name.h5py.json" 2> "$name.h5py.err" &
    readers+=($!)
  fi
  wait "${readers[@]}"
  wait $writer || fail "$name: the writer failed: $(tail -2 "$name.writer.err")"
  wait $sampler
  echo "$name (checkpoint_bytes=$2, reader_wait=$reader_wait_ms): the writer alone $(field "$name.alone.json" steps_per_second) commits/s," \
    "with readers $(field "$name.writer.json" steps_per_second); the journal reached $(($(cat "$name.journal") / 1024)) KiB"
  for json in "$name".c?.json "$name".h5dump.json ${python:+"$name".h5py.json}; do
    local reader=${json%.json}
    [[ -s $json ]] || { fail "$reader reported nothing: $(tail -2 "$reader.err")"; continue; }
    echo "  $reader: $(cat "$json")"
    (($(field "$json" short_cut_off) == 0)) || fail "$reader was cut off within reader_wait"
    (($(field "$json" failed) == 0)) || fail "$reader failed: $(head -2 "$reader.err")"
    (($(field "$json" mismatched) == 0)) || fail "$reader saw a mixture of commits"
    (($(field "$json" regressed) == 0)) || fail "$reader saw an older commit after a newer one"
    (($(field "$json" verified) >= 2)) || fail "$reader verified fewer than 2 opens"
  done
}

# A writer killed while it holds new readers off (a reader holds its
# snapshot across a due checkpoint): the readers file names it, so a new
# reader sees it is gone and opens at once, rather than wait for it.
killed_holding_off() {
  local writer holder hfd started took state
  export HDF5_DRIVER_CONFIG="checkpoint_bytes=256K;reader_wait=$reader_wait_ms"
  "$program" write killed.h5 --seconds 60 > /dev/null 2> killed.writer.err &
  writer=$!
  for ((i = 0; i < 100; i++)); do
    [[ -e killed.h5.jnl.readers ]] && dump -a /steps killed.h5 2>&1 | grep -Eq '\(0\): [0-9]{2,}$' && break
    sleep 0.05
  done
  mkfifo killed.fifo
  "$program" hold killed.h5 < killed.fifo > killed.holder 2>&1 &
  holder=$!
  exec {hfd}> killed.fifo
  for ((i = 0; i < 100; i++)); do grep -q ready killed.holder && break; sleep 0.05; done
  sleep 0.5  # checkpoints come due and are put off: new readers held off
  state=$(od -An -t u8 -j 16 -N 8 killed.h5.jnl.readers | tr -d ' ')
  kill -9 $writer
  wait $writer 2> /dev/null
  [[ $state == 1 ]] || fail "killed: the writer was not holding readers off when killed (state $state)"
  started=$(date +%s%N)
  dump -a /steps killed.h5 > killed.dump 2>&1 || fail "killed: a reader after the kill failed: $(tail -2 killed.dump)"
  took=$((($(date +%s%N) - started) / 1000000))
  echo "killed while holding readers off: a new reader's h5dump took $took ms"
  # The fault was a wait of 2 s for a writer that would never let it in.
  ((took < 1500)) || fail "killed: a new reader waited $took ms for a writer that had died"
  echo done >&$hfd
  exec {hfd}>&-
  wait $holder || fail "killed: the reader holding its snapshot failed: $(cat killed.holder)"
  rm -f killed.fifo
}

phase ckpt256k 256K
phase ckpt1m 1M
killed_holding_off
((failures == 0)) && echo "busy_writer: passed"
exit $((failures > 0))
