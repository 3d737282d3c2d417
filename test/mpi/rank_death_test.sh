#!/usr/bin/env bash
# A rank stops inside a collective commit (test/mpi/rank_death.cc): every
# other rank fails within bounded time with an error naming the cause, and
# h5recover, run serially, brings the file back to the last commit, the
# same as mpio's file of that state.
set -euo pipefail
program=$1 h5recover=$2 h5diff=$3 work=$4 ranks=$5
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"  # see same_as_mpio.sh
mkdir -p "$work"
cd "$work"
rm -f ./*.h5 ./*.jnl ./*.jnl.data* ./*.log ./*.stopped
mpiexec -n "$ranks" "$program" reference.h5 mpio
survivors=$((ranks - 1))
# run.log exists before the job starts: the loop below may read it before
# the background shell has opened it, and a count of nothing would end the
# loop at once, leaving the job to run out its timeout.
: > run.log
timeout 120 mpiexec -n "$ranks" "$program" journal.h5 journal > run.log 2>&1 &
job=$!
start=$SECONDS
failures() {  # a count, 0 while run.log is missing or holds none
  local n
  n=$(grep -c "H5Fflush failed after" run.log 2> /dev/null) || true
  echo "${n:-0}"
}
# The survivors report and wait; then the job is ended, stopped rank first.
while (($(failures) < survivors)) && kill -0 $job 2>/dev/null; do sleep 0.2; done
elapsed=$((SECONDS - start))
seen=$(failures)  # before the job is ended: what the ranks reported on their own
[[ -f journal.h5.stopped ]] && kill -KILL "$(cat journal.h5.stopped)" 2>/dev/null || true
wait $job 2>/dev/null || true
cat run.log
failed=$(failures)
named=$(grep -c "waited 2 s for the other ranks" run.log || true)
if ((seen < survivors)); then
  echo "FAIL: the wait ended after ${elapsed} s with $seen of $survivors ranks reporting their failed H5Fflush"
  exit 1
fi
if ((failed != survivors || named < survivors)); then
  echo "FAIL: expected $survivors ranks to fail their H5Fflush naming the deadline; $failed failed, $named named it"
  exit 1
fi
echo "every other rank failed with the deadline's error, ${elapsed} s after the job started"
"$h5recover" journal.h5
"$h5diff" -r reference.h5 journal.h5
echo "h5recover restored the last commit, identical to mpio's file of it"
