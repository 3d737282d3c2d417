#!/usr/bin/env bash
# Live readers beside a writer (docs/design.md §11).  A writer makes every
# kind of change (test/readers/verifying_readers.cc), checkpointing every few commits, and
# is SIGKILLed and restarted (which recovers the file) every few seconds;
# readers open, digest the whole file and compare with the digest its commit
# recorded, in a loop, and one more reader is SIGKILLed.  Through h5journal no
# reader may ever see a mixture of commits or an older commit than it saw
# before; and no open may find its snapshot gone, since every open is far
# shorter than reader_wait, and a checkpoint, a recovery or a close waits
# that long after a reader registered.  The same harness
# without the driver (sec2, HDF5_USE_FILE_LOCKING=FALSE so that readers can
# open at all) must catch what goes wrong there, which shows it can fail.
#   live_readers_test.sh PROGRAM PLUGIN_DIR WORK [SECONDS]
set -uo pipefail
program=$1 plugin_dir=$2 work=$3 seconds=${4:-40}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
field() { sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1"; }

# run_phase NAME READERS SECONDS KILLS [DOOMED]: the writer, restarted after
# each of KILLS kills spread over SECONDS, and READERS readers for SECONDS;
# with DOOMED, one more reader, SIGKILLed 3 s in.
run_phase() {
  local name=$1 readers=$2 secs=$3 kills=$4 doomed=${5:-} i
  rm -f "$name".h5* "$name".committed
  "$program" write "$name".h5 --commits 1000000 --seed 1 --report-fd 3 3>> "$name".committed 2> "$name".writer.err &
  local writer=$!
  # Readers from the first commit on: before it, one that opens the file
  # still empty holds HDF5's lock on it, which refuses the writer's create.
  for ((i = 0; i < 600; i++)); do
    grep -q committed "$name".committed 2> /dev/null || ! kill -0 $writer 2> /dev/null && break
    sleep 0.05
  done
  if [[ $doomed ]]; then
    ("$program" read "$name".h5 --seconds "$secs" > /dev/null 2>&1 & pid=$!; sleep 3; kill -9 $pid) &
  fi
  local reader_pids=()
  for ((i = 0; i < readers; i++)); do
    "$program" read "$name".h5 --seconds "$secs" > "$name".reader$i.json 2> "$name".reader$i.err &
    reader_pids+=($!)
  done
  local started=$SECONDS
  for ((i = 1; i <= kills; i++)); do
    sleep $((secs / (kills + 1)))
    kill -9 "$writer" 2> /dev/null
    wait "$writer" 2> /dev/null
    "$program" write "$name".h5 --commits 1000000 --seed $((i + 1)) --report-fd 3 3>> "$name".committed 2>> "$name".writer.err &
    writer=$!
  done
  while ((SECONDS - started < secs)); do sleep 1; done
  wait "${reader_pids[@]}"
  kill -9 "$writer" 2> /dev/null
  wait "$writer" 2> /dev/null
  echo "$name: $(grep -c committed "$name".committed) commits, $kills kills of the writer"
}

export HDF5_PLUGIN_PATH=$plugin_dir HDF5_DRIVER=journal
export HDF5_DRIVER_CONFIG="checkpoint_bytes=512K;reader_wait=2000"
# The doomed reader's lock goes with it: the writer's checkpoints never wait for it.
run_phase journal 3 "$seconds" 4 doomed
for json in journal.reader*.json; do
  [[ -s $json ]] || { fail "$json: the reader reported nothing"; cat "${json%.json}.err"; continue; }
  echo "  ${json%.json}: $(cat "$json")"
  (($(field "$json" mismatched) == 0)) || fail "${json%.json} saw a mixture of commits"
  (($(field "$json" regressed) == 0)) || fail "${json%.json} saw an older commit after a newer one"
  (($(field "$json" verified) >= 20)) || fail "${json%.json} verified fewer than 20 opens"
  gone=$(sed -n 's/.*is gone[^"]*": \([0-9]*\).*/\1/p' "$json")
  ((${gone:-0} == 0)) || fail "${json%.json} had its snapshot cut off at ${gone} opens"
done
grep FAIL journal.writer.err && fail "the writer failed"

unset HDF5_DRIVER HDF5_DRIVER_CONFIG
export HDF5_USE_FILE_LOCKING=FALSE
run_phase sec2 2 10 0
wrong=0
for json in sec2.reader*.json; do
  # HDF5 itself may abort on what such a reader reads (an assertion in a
  # build with them on): that counts as going wrong too.
  [[ -s $json ]] || { echo "  ${json%.json}: died: $(tail -1 "${json%.json}.err")"; wrong=$((wrong + 1)); continue; }
  echo "  ${json%.json}: $(cat "$json")"
  wrong=$((wrong + $(field "$json" mismatched) + $(field "$json" failed)))
done
((wrong > 0)) || fail "without h5journal no reader saw anything wrong: the harness cannot fail"
echo "without h5journal, $wrong reader opens failed or saw a mixture"
((failures == 0)) && echo "live_readers: passed"
exit $((failures > 0))
