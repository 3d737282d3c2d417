#!/usr/bin/env bash
# A writer that forks (test/driver/forked_child.c).  The child shares the
# parent's descriptors, locks and io_uring ring, but not the driver's
# thread.  Whether the child exits through exit(), whose HDF5 handler closes
# the file, or commits and closes it itself, it must leave the parent's
# journal alone, and it must not hang: the parent then commits 10 more steps
# and is killed, and h5recover brings back all 20.  The child may read the
# file; its commit is refused with an error that says why.  A child that
# outlives the killed parent (a worker) holds none of its locks: h5recover
# runs at once, while the worker lives.  A child that writes a file of its
# own through the driver commits and closes it, and is still refused the
# parent's.
set -euo pipefail
program=$1 plugin_dir=$2 work=$3 h5recover=$4
mkdir -p "$work"
cd "$work"
export HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal
# A worker left by a run that failed early lives out its sleep no longer.
trap 'w=$(sed -n "s/^worker //p" out.txt 2> /dev/null); [ -z "$w" ] || kill "$w" 2> /dev/null || true' EXIT
# Runs the writer (CONFIG HOW); its exit status in $status.  Past 60 s it
# is taken for hung: where each of its processes and threads waits is
# printed (the kernel's wait channel, and with gdb each thread's stack)
# before they are killed, and its status is 124.
run_writer() {
  HDF5_DRIVER_CONFIG=$1 "$program" write "$2" f.h5 > out.txt 2> err.txt &
  local pid=$! tenths=0
  while [ -e /proc/"$pid" ] && [ "$(cut -d' ' -f3 /proc/"$pid"/stat 2> /dev/null)" != Z ] && [ $tenths -lt 600 ]; do
    sleep 0.1
    tenths=$((tenths + 1))
  done
  status=0
  if [ $tenths -ge 600 ]; then
    local procs
    procs="$pid $(pgrep -P "$pid" | tr '\n' ' ' || true)"
    for p in $procs; do
      echo "hung ($1, $2): process $p"
      for t in /proc/"$p"/task/*; do echo "  thread ${t##*/} waits in $(cat "$t/wchan" 2> /dev/null)"; done
      if command -v gdb > /dev/null; then
        gdb -p "$p" -batch -ex "thread apply all bt" 2>&1 | grep -E '^(Thread|#)' | head -80 || true
      fi
    done
    kill -9 $procs 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    status=124
    return
  fi
  wait "$pid" || status=$?
}
for config in durable=true durable=100ms durable=false; do
  for how in exit flush linger own; do
    rm -f f.h5*
    run_writer "$config" "$how"
    [ "$status" = 137 ] || { echo "FAIL ($config, $how): the writer ended with $status, not SIGKILL"; cat out.txt err.txt; exit 1; }
    grep -q "committed 20" out.txt || { echo "FAIL ($config, $how): the writer did not commit 20 steps"; cat err.txt; exit 1; }
    if [ "$how" = flush ] || [ "$how" = own ]; then
      grep -q "child's commit refused" out.txt || { echo "FAIL ($config): the child's commit was not refused"; cat out.txt err.txt; exit 1; }
      grep -q "forked from it, may only read it" err.txt ||
        { echo "FAIL ($config): the refusal does not say why"; cat err.txt; exit 1; }
    fi
    [ -e f.h5.jnl ] || { echo "FAIL ($config, $how): the child removed the parent's journal"; exit 1; }
    worker=$(sed -n 's/^worker //p' out.txt)
    recovered=0
    "$h5recover" f.h5 > recover.txt 2>&1 || recovered=$?
    [ -z "$worker" ] || kill "$worker" 2> /dev/null || { echo "FAIL ($config): the worker did not outlive the writer"; exit 1; }
    [ "$recovered" = 0 ] || { echo "FAIL ($config, $how): h5recover exited $recovered"; cat recover.txt; exit 1; }
    env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$program" check f.h5 ||
      { echo "FAIL ($config, $how): commits the parent made after the fork are lost"; cat recover.txt; exit 1; }
    if [ "$how" = own ]; then
      [ ! -e f.h5.child.jnl ] || { echo "FAIL ($config): the child's own file kept its journal"; exit 1; }
      env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$program" check f.h5.child ||
        { echo "FAIL ($config): the child's own file does not hold its 20 steps"; exit 1; }
    fi
    echo "$config, child $how: 20 steps after recovery ($(cat recover.txt))"
  done
done
