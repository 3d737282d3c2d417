#!/usr/bin/env bash
# Kills an MPI job writing through the journal driver (parallel_timesteps)
# at random moments, recovers each crash with h5recover, serially, and checks
# that the file is exactly the state of the last commit: step a (the last
# "done" in the job's step log) or the step started after it, compared with
# h5diff against a reference written serially with sec2 for that step.
#
#   crash_test.sh PROGRAM H5RECOVER H5DIFF WORKDIR RANKS [options]
#     --kills N        kills of the whole job (every rank stopped, then SIGKILLed)
#     --rank-kills N   kills of a single rank (rank 0, then the others in turn);
#                      mpiexec then ends the rest
#     --steps N        steps per job
#     --seed S         the random moments (default: from the clock); printed
#     --durable-within MS  the job commits under durable=MSms (commits made
#                      durable in the background on every rank), and waits
#                      for durability (H5Fwait_journal_durable) every 5 steps
#     --append-only    every step only appends (parallel_timesteps): with
#                      --durable-within, commits left to every rank's
#                      background sync
#     --skip-recovery  negative check: no h5recover, so the checker must find
#                      damage; succeeds only if some kill is caught.  The job
#                      then never checkpoints before its close: right after a
#                      checkpoint the file alone is whole, and with the
#                      job's usual 256 KiB threshold (every rank's data log
#                      counts) a checkpoint came every few steps, so that a
#                      run of 6 kills could catch none.
# Kills alternate between raw=inplace and raw=log, and by pairs among three
# recoveries: h5recover; the job's own reopen under mpiexec
# (parallel_timesteps reopen: rank 0 replays the journal at open); and the
# job run again with --resume, as a restarted job is, which recovers at its
# open and writes the remaining steps: it must go on from the step
# recovered and end equal to the last step.  Every failure names the
# kill (seed, number, kind, moment, raw mode, steps) and keeps its crash state.
set -uo pipefail
program=$1 h5recover=$2 h5diff=$3 work=$4 ranks=$5
shift 5
kills=20 rank_kills=6 steps=30 seed=$(($(date +%s%N) % 2147483647)) skip_recovery=0 durable_within=0 append_only=0
while (($#)); do
  case $1 in
    --kills) kills=$2; shift 2 ;;
    --rank-kills) rank_kills=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --durable-within) durable_within=$2; shift 2 ;;
    --append-only) append_only=1; shift ;;
    --skip-recovery) skip_recovery=1; shift ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
# Under ASan, as in same_as_mpio.sh: MPICH's hwloc leaks need the slow unwinder.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
job_options=()
((skip_recovery)) && job_options=(--checkpoint-bytes $((1 << 30)))
((durable_within)) && job_options+=(--durable-within "$durable_within" --wait-every 5)
reference_options=()
((append_only)) && job_options+=(--append-only) && reference_options=(--append-only)
RANDOM=$seed
rm -rf "$work/refs"  # references of an older parallel_timesteps would be wrong
mkdir -p "$work/refs"
cd "$work" || exit 2
file=$PWD/crash.h5
echo "mpi crash_test seed=$seed ranks=$ranks kills=$kills rank-kills=$rank_kills steps=$steps durable-within=$durable_within append-only=$append_only"

now_us() { echo $(($(date +%s%N) / 1000)); }
rank_pids() { cat "$file".pid.* 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }

clean() { rm -f "$file" "$file".jnl* "$file".pid.* "$file".steps "$file".log; }

# Starts the job in the background (its pid in $job) and waits until every
# rank has written its pid file, so that kills land in the job's own work.
start_job() {
  clean
  mpiexec -n "$ranks" "$program" write "$file" --steps "$steps" --raw "$1" "${job_options[@]}" >"$file".log 2>&1 &
  job=$!
  local waited=0
  while (($(ls "$file".pid.* 2>/dev/null | wc -l) < ranks)); do
    alive "$job" || return 0
    sleep 0.01
    ((++waited < 6000)) || { echo "FAIL: the ranks did not start in 60 s"; kill -KILL "$job"; exit 1; }
  done
}

# Waits for mpiexec to end (60 s at most: a hang fails instead of blocking);
# returns its exit status.
wait_job() {
  local waited=0
  while alive "$job" && ((++waited < 6000)); do sleep 0.01; done
  if alive "$job"; then
    echo "FAIL: $what: mpiexec still running 60 s after the kill" >&2
    kill -KILL $(rank_pids) "$job"
    exit 1
  fi
  wait "$job"
}

# The whole job at once: every rank stopped first, so none goes on while
# the others die (nor hears of their death), then all SIGKILLed.  mpiexec
# only learns of it when every rank is already stopped.
kill_all() {
  local pids
  pids=$(rank_pids)
  kill -STOP $pids 2>/dev/null
  kill -KILL $pids 2>/dev/null
}

# True while process $1 can still do anything: it exists, and is not a
# zombie whose threads (io_uring's workers among them) have all exited.
# mpiexec can end while a SIGKILLed rank is still tearing itself down, and
# an orphaned zombie waits for whichever process reaps it.
running() {
  local state threads
  state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/"$1"/status 2>/dev/null)
  threads=$(sed -n 's/^Threads:[[:space:]]*//p' /proc/"$1"/status 2>/dev/null)
  [[ -n $state ]] && ! [[ $state == [ZX] && ${threads:-1} -le 1 ]]
}

# Each rank's pid file names a process that is gone: nothing writes to the
# file while it is recovered.  A killed rank gets 10 s to finish dying.
dying=0 dying_ms=0
check_no_survivor() {
  local p waited
  for p in $(rank_pids); do
    waited=0
    while running "$p" && ((++waited < 1000)); do sleep 0.01; done
    ((waited > 0)) && ((++dying, dying_ms = waited * 10 > dying_ms ? waited * 10 : dying_ms))
    if running "$p"; then
      echo "FAIL: $what: rank process $p survived the end of mpiexec by 10 s"
      kill -KILL "$p"
      return 1
    fi
  done
}

# The reference for step k, written once per run.
reference() {
  local ref=refs/np${ranks}_step$1.h5
  [[ -f $ref ]] || "$program" reference "$ref" --ranks "$ranks" --step "$1" "${reference_options[@]}" || return 1
  echo "$ref"
}

# True if the file equals the reference of step $1.
is_step() {
  local ref
  ref=$(reference "$1") && "$h5diff" -q "$file" "$ref" >/dev/null 2>&1
}

# From the step log: $acked (last "done", -1 if none), $started (last
# "start"), $closed.
read_step_log() {
  acked=-1 started=-1 closed=0
  local word k
  while read -r word k; do
    case $word in
      start) started=$k ;;
      done) acked=$k ;;
      closed) closed=1 ;;
    esac
  done <"$file".steps 2>/dev/null
}

keep_crash_state() {
  kept=$work/failed-$seed-$1
  mkdir -p "$kept"
  cp "$file" "$file".jnl* "$file".steps "$file".log "$kept"/ 2>/dev/null
}

# The job run again with --resume after a crash ($lo: its last acknowledged
# step, $hi: the one it was committing).
check_resume() {
  local out rc resumed
  out=$(mpiexec -n "$ranks" "$program" write "$file" --steps "$steps" --raw "$raw" --resume "${job_options[@]}" 2>&1)
  rc=$?
  ((rc == 0)) || { echo "the resumed job exited $rc: $(tail -3 <<<"$out")"; return 1; }
  resumed=$(sed -n 's/^resumed //p' "$file".steps | tail -1)
  if [[ -z $resumed ]] || ((resumed < lo || resumed > hi)); then
    echo "the resumed job went on from step ${resumed:-none}, not $lo$( ((hi > lo)) && echo " or $hi")"
    return 1
  fi
  recovered_step=$resumed
  [[ ! -e $file.jnl ]] || { echo "the resumed job's close left its journal"; return 1; }
  is_step "$steps" || { echo "the resumed job's file is not step $steps"; return 1; }
}

# Recovers and checks one crash; prints why it failed, if it did.
check_crash() {
  read_step_log
  local lo=$acked hi=$acked
  ((started > acked)) && hi=$started
  # Rank 0 takes the file's write permission once every rank has opened it,
  # and only a close, after the last step, gives it back (design.md §6).
  local mode
  mode=$(stat -c %a "$file")
  if ((acked >= 0 && acked < steps && (0$mode & 0222) != 0)); then
    echo "the job's file has mode $mode after step $acked: not write-protected"
    return 1
  fi
  if ((skip_recovery == 0 && acked >= 0)) && [[ $recovery == resume ]]; then
    check_resume
    return
  fi
  if ((skip_recovery == 0)); then
    local out rc
    if [[ $recovery == reopen ]]; then
      out=$(mpiexec -n "$ranks" "$program" reopen "$file" 2>&1)
    else
      out=$("$h5recover" "$file" 2>&1)
    fi
    rc=$?
    if ((rc != 0)); then
      ((acked < 0)) && return 0  # nothing committed, nothing promised (exit 9: never committed)
      echo "$recovery exited $rc: $(tail -3 <<<"$out")"
      return 1
    fi
    if [[ -e $file.jnl ]]; then
      echo "journal left behind"
      return 1
    fi
    mode=$(stat -c %a "$file")
    if ((acked >= 0 && (0$mode & 0200) == 0)); then
      echo "$recovery left the file with mode $mode"
      return 1
    fi
    # Data logs without a journal hold nothing: a kill inside H5Fclose,
    # between the two removals, leaves them (journal-format.md section 7).
    # A recovery that replayed must remove them.
    if { [[ $recovery == reopen ]] || grep -q '^h5recover: recovered' <<<"$out"; } && ls "$file".jnl.data* >/dev/null 2>&1; then
      echo "data log left behind: $(ls "$file".jnl.data*)"
      return 1
    fi
  fi
  ((acked < 0)) && return 0
  local k
  for ((k = hi; k >= lo; --k)); do
    if is_step "$k"; then
      recovered_step=$k
      return 0
    fi
  done
  echo "the file is not step $lo$( ((hi > lo)) && echo " or $hi") (h5diff against step $lo:)"
  "$h5diff" -r "$file" "$(reference "$lo")" 2>&1 | head -12
  return 1
}

# The calibration run: uninterrupted, it must end closed, clean and equal to
# the last step's reference, and unequal to the step before (the checker can
# tell adjacent steps apart).  Its duration to the close, when "closed"
# reached the step log (its mtime; not the end of mpiexec, whose teardown
# took as long as the work), bounds the kill moments.
calibrate() {
  what="calibration"
  start_job inplace  # a first run, cold, takes about twice as long as the rest
  wait_job || { echo "FAIL: warm-up run: mpiexec exited $?"; cat "$file".log; exit 1; }
  start_job inplace
  local t0
  t0=$(now_us)
  wait_job
  local rc=$?
  duration=$(($(date -r "$file".steps +%s%N) / 1000 - t0))
  read_step_log
  if ((rc != 0 || closed != 1)); then
    echo "FAIL: calibration run: mpiexec exited $rc, step log ends at $acked"; cat "$file".log; exit 1
  fi
  "$h5recover" -q "$file"; rc=$?
  ((rc == 0)) || { echo "FAIL: calibration run: h5recover exited $rc on a closed file"; exit 1; }
  is_step "$steps" || { echo "FAIL: calibration run: the closed file differs from its reference"; exit 1; }
  ! is_step $((steps - 1)) || { echo "FAIL: self-check: step $steps equals step $((steps - 1))"; exit 1; }
  echo "calibration: $steps steps in $((duration / 1000)) ms; the checker tells step $steps from $((steps - 1))"
}

calibrate
total=$((kills + rank_kills))
damaged=0 before_commit=0 finished=0 ahead=0
for ((i = 0; i < total; ++i)); do
  raw=inplace recovery=h5recover
  ((i % 2)) && raw=log
  case $(((i / 2) % 3)) in 1) recovery=reopen ;; 2) recovery=resume ;; esac
  moment=$((((RANDOM << 15) | RANDOM) % (duration * 9 / 10)))
  if ((i < kills)); then victim=all; else victim=$(((i - kills) % ranks)); fi
  what="kill $i (seed $seed, ranks $ranks, victim $victim, raw=$raw, at $((moment / 1000)) ms, steps $steps, recovery by $recovery)"
  start_job "$raw"
  sleep "$(printf '%d.%06d' $((moment / 1000000)) $((moment % 1000000)))"
  ended_first=0
  if ! alive "$job"; then
    ended_first=1
  elif [[ $victim == all ]]; then
    kill_all
  else
    kill -KILL "$(cat "$file".pid."$victim")"
  fi
  wait_job
  rc=$?
  if ((ended_first)); then
    # Not killed: it must have finished, not failed on its own.
    ((rc == 0)) || { echo "FAIL: $what: the job ended by itself with status $rc"; cat "$file".log; exit 1; }
    ((++finished))
    # The runs go faster than the calibrated one: later moments come
    # from a shorter span, so that kills land in the work.
    duration=$((moment * 9 / 10))
  fi
  check_no_survivor || exit 1
  keep_crash_state "$i"
  recovered_step=none
  if ! check_crash >"$work/why"; then
    ((++damaged))
    echo "$what: acknowledged step $acked, started $started: $(cat "$work/why")"
    if ((!skip_recovery)); then
      echo "FAIL: crash state kept in $kept; replay with --seed $seed"
      exit 1
    fi
  fi
  echo "$what: acknowledged $acked, started $started, recovered to $recovered_step"
  ((acked < 0)) && ((++before_commit))
  [[ $recovered_step != none ]] && ((recovered_step > acked)) && ((++ahead))
  rm -rf "$kept"
done
echo "$total kills ($kills whole job, $rank_kills single rank), $damaged damaged, $before_commit before the first commit, $ahead recovered to the step being committed, $finished finished first, $dying rank(s) still dying when mpiexec ended (the longest about $dying_ms ms)"
if ((skip_recovery)); then
  ((damaged > 0)) && { echo "negative check passed: without recovery the checker finds damage"; exit 0; }
  echo "FAIL: without recovery no kill was caught: the checker is blind"; exit 1
fi
clean
