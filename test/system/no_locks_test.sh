#!/usr/bin/env bash
# Locking where HPC users write (docs/design.md §6), with the missing locks
# made so by refuse_syscalls (seccomp, ENOSYS):
#  - flock refused (Lustre without -o flock, some NFS): the driver falls back
#    to fcntl open file description locks, which other processes see: a
#    second writer is still refused, and writes, crash recovery and h5recover
#    work under every HDF5_USE_FILE_LOCKING value;
#  - every lock refused: with BEST_EFFORT (HDF5's default), FALSE, or unset,
#    files open with a lock only this process honours, and everything but
#    the refusal of a second writer elsewhere works; with TRUE the open is
#    refused with a message that says why and what to set;
#  - both, in one process: handles on one file still exclude each other
#    (unit cases under the same seccomp filter);
#  - with a parallel HDF5: the MPI crash test, under each condition.
set -uo pipefail
refuse=$1 sim=$2 second_open=$3 h5recover=$4 unit=$5 plugin=$6 work=$7
mpi_crash=${8:-} mpi_program=${9:-} h5diff=${10:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export HDF5_PLUGIN_PATH=$plugin
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
NO_FLOCK=flock NO_LOCKS=flock,fcntl-locks

# crashed CONDITION NAME: a writer killed after a few commits.
crashed() {
  rm -f "$2" "$2.jnl" "$2.acked"
  "$refuse" "$1" "$sim" write "$2" --steps 100000 --elems 512 --delay-us 20000 --report-fd 3 3> "$2.acked" &
  local pid=$!
  while [[ $(stat -c %s "$2.acked" 2> /dev/null || echo 0) -lt 24 ]] && kill -0 $pid 2> /dev/null; do sleep 0.02; done
  kill -9 $pid
  wait $pid 2> /dev/null
}
last_acked() { od -An -t d4 "$1.acked" | tr -s ' ' '\n' | grep -v '^$' | tail -1; }

# Writes, a crash recovered by reopening through the driver, and one
# recovered by h5recover, under CONDITION and HDF5_USE_FILE_LOCKING=SETTING
# ("" leaves it unset).  Prints what failed.
works_under() (
  local condition=$1 setting=$2 f="w-$1-${2:-unset}.h5"
  if [[ -n $setting ]]; then export HDF5_USE_FILE_LOCKING=$setting; else unset HDF5_USE_FILE_LOCKING; fi
  "$refuse" "$condition" "$sim" write "$f" --steps 5 --elems 512 > /dev/null &&
    "$refuse" "$condition" "$sim" verify "$f" --elems 512 --min-step 4 > /dev/null || { echo "write and verify"; exit 1; }
  crashed "$condition" "c$f"
  local only_here=no
  # grep reads the whole listing: with -q it could stop early, and under
  # pipefail h5recover's SIGPIPE would read as no match.
  "$h5recover" "c$f" --list 2> /dev/null | grep "locked in this process only" > /dev/null && only_here=yes
  [[ $only_here == $([[ $condition == "$NO_LOCKS" ]] && echo yes || echo no) ]] ||
    { echo "the journal's session note says 'locked in this process only': $only_here"; exit 1; }
  "$refuse" "$condition" "$sim" verify "c$f" --elems 512 --read-write --min-step "$(last_acked "c$f")" > /dev/null ||
    { echo "recovery by a read-write open"; exit 1; }
  crashed "$condition" "r$f"
  "$refuse" "$condition" "$h5recover" -q "r$f" &&
    "$sim" verify "r$f" --elems 512 --driver sec2 --min-step "$(last_acked "r$f")" > /dev/null || { echo "h5recover"; exit 1; }
)
for condition in $NO_FLOCK $NO_LOCKS; do
  for setting in "" BEST_EFFORT FALSE TRUE; do
    [[ $condition == "$NO_LOCKS" && $setting == TRUE ]] && continue  # refused: below
    if what=$(works_under "$condition" "$setting"); then
      echo "ok   $condition refused, HDF5_USE_FILE_LOCKING=${setting:-unset}: writes, recovery on open, h5recover"
    else
      fail "$condition refused, HDF5_USE_FILE_LOCKING=${setting:-unset}: $what"
    fi
  done
done

# No lock at all and HDF5_USE_FILE_LOCKING=TRUE: refused, saying why, and
# an existing file is left as it was.
for what in write-new open-existing; do
  f=true-$what.h5
  rm -f "$f" "$f.jnl"
  [[ $what == open-existing ]] && "$sim" write "$f" --steps 2 --elems 64 > /dev/null
  before=$(sha256sum "$f" 2> /dev/null)
  if [[ $what == write-new ]]; then
    out=$(HDF5_USE_FILE_LOCKING=TRUE "$refuse" $NO_LOCKS "$sim" write "$f" --steps 2 --elems 64 2>&1)
  else
    out=$(HDF5_USE_FILE_LOCKING=TRUE "$refuse" $NO_LOCKS "$sim" verify "$f" --elems 64 --read-write 2>&1)
  fi
  status=$?
  ((status != 0)) || fail "no locks, TRUE, $what: the open succeeded"
  grep -q "supports neither flock nor fcntl locks (Function not implemented); HDF5_USE_FILE_LOCKING=TRUE requires" \
    <<<"$out" || fail "no locks, TRUE, $what: the refusal does not say why: $(grep -m1 -i 'lock' <<<"$out")"
  [[ ! -e $f.jnl ]] || fail "no locks, TRUE, $what: a journal was left"
  [[ $what == write-new || $(sha256sum "$f") == "$before" ]] || fail "no locks, TRUE, $what: the file changed"
  echo "ok   no locks, TRUE, $what: refused: $(grep -o 'supports neither[^;]*' <<<"$out" | head -1)"
done
crashed $NO_FLOCK true-recover.h5
out=$(HDF5_USE_FILE_LOCKING=TRUE "$refuse" $NO_LOCKS "$h5recover" true-recover.h5 2>&1)
(($? == 7)) && grep -q "HDF5_USE_FILE_LOCKING=TRUE requires" <<<"$out" && [[ -e true-recover.h5.jnl ]] ||
  fail "no locks, TRUE: h5recover did not refuse, or not clearly: $out"

# flock refused: a second writer is still refused, through the open file
# description lock, and leaves the first writer's file whole.
mkfifo fifo
HDF5_DRIVER=journal "$refuse" $NO_FLOCK "$second_open" hold held.h5 < fifo > held.out &
holder=$!
exec {holder_fd}> fifo
for _ in $(seq 100); do grep -q ready held.out 2> /dev/null && break; sleep 0.1; done
size=$(stat -c %s held.h5)
for how in open create; do
  HDF5_DRIVER=journal "$refuse" $NO_FLOCK "$second_open" $how held.h5 > refused.txt 2>&1 ||
    fail "no flock: the second $how was not refused: $(tail -2 refused.txt)"
  grep -q "held.h5 is open for writing through h5journal" refused.txt ||
    fail "no flock: the second $how's refusal does not say why: $(grep -m1 -i 'lock' refused.txt)"
  [[ $(stat -c %s held.h5) == "$size" ]] || fail "no flock: the refused $how changed the file"
done
echo go >&"$holder_fd"
exec {holder_fd}>&-
wait "$holder" || fail "no flock: the writer failed after the refused opens"
"$second_open" check held.h5 || fail "no flock: the writer's file lost data"
echo "ok   no flock: a second writer's open and create are refused; the first writer's file is whole"

# One process: the unit cases on locks and passive handles, under each condition.
for condition in $NO_FLOCK $NO_LOCKS; do
  "$refuse" $condition "$unit" -tc="*exclude each other*,*passive and refuses*" > unit.out 2>&1 ||
    { fail "$condition: unit cases"; tail -5 unit.out; }
  echo "ok   $condition refused: $(grep -o '[0-9]* passed' unit.out | tail -1) unit assertions on locks in one process"
done

# MPI: the crash test, every rank and h5recover under the same filter.
if [[ -n $mpi_crash ]]; then
  for condition in $NO_FLOCK $NO_LOCKS; do
    "$refuse" $condition "$mpi_crash" "$mpi_program" "$h5recover" "$h5diff" "$work/mpi-$condition" 2 \
      --kills 3 --rank-kills 1 --steps 12 > mpi.out 2>&1 || { fail "$condition: the MPI crash test"; tail -5 mpi.out; }
    echo "ok   $condition refused: MPI, $(tail -1 mpi.out)"
  done
fi

echo "$failures failed"
exit $((failures > 0))
