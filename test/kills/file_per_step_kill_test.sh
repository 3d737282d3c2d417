#!/usr/bin/env bash
# SIGKILLs of a writer that puts each time step in a file of its own, closed
# with no H5Fflush (file_per_step.c), under each durability setting.  Its
# close is the file's only commit, and writes the file without a journal,
# the signature last (design.md §9).  After each kill, every file whose close
# returned must read whole, without the driver and through it; any other
# must be no HDF5 file, or whole for both.  Only the newest files are
# checked: the others were closed long before the kill.
#
# usage: file_per_step_kill_test.sh PROGRAM PLUGIN_DIR WORK_DIR KILLS
set -euo pipefail
prog=$1 plugin=$2 work=$3 kills=$4
export HDF5_PLUGIN_PATH=$plugin
fail=0 files=0 unacknowledged=0
for config in durable=true durable=false durable=100ms; do
  for ((k = 1; k <= kills; ++k)); do
    dir=$work/steps; rm -rf "$dir"; mkdir -p "$dir"
    HDF5_DRIVER=journal HDF5_DRIVER_CONFIG=$config "$prog" write "$dir" $((k % 2 ? 64 : 1024)) > "$work/acked" &
    writer=$!
    sleep "0.$((RANDOM % 4 + 1))"
    kill -9 $writer; wait $writer 2> /dev/null || true
    acked=$(tail -n 1 "$work/acked"); acked=${acked:--1}
    for f in "$dir"/s*.h5; do
      [[ -e $f ]] || continue
      step=$((10#$(basename "$f" .h5 | tr -d s)))
      ((step >= acked - 3)) || continue
      files=$((files + 1))
      plain=$("$prog" check "$f" $step)
      through=$(HDF5_DRIVER=journal "$prog" check "$f" $step 2> /dev/null)
      if ((step <= acked)); then
        [[ $plain == whole && $through == whole ]] && continue
        echo "FAIL $config, kill $k: step $step's close returned, yet it reads $plain without the driver, $through through it"
      else
        unacknowledged=$((unacknowledged + 1))
        [[ $plain == no-hdf5 || ($plain == whole && $through == whole) ]] && continue
        echo "FAIL $config, kill $k: step $step, killed in its writing, reads $plain without the driver, $through through it"
      fi
      fail=$((fail + 1))
    done
  done
done
echo "$((3 * kills)) kills, $files files checked, $unacknowledged of them killed in their writing, $fail failures"
((fail == 0))
