#!/usr/bin/env bash
# A second read-write open of a file another process is writing through
# the driver is refused at open, with a lock error that names the writer's
# PID and carries errno 11 (EWOULDBLOCK), while the file on disk is still 0
# bytes (its content all in the journal).  The writer then goes on and
# closes a file h5dump reads.
set -euo pipefail
program=$1 plugin_dir=$2 h5dump=$3 work=$4
mkdir -p "$work"
cd "$work"
rm -f ./*.h5 ./*.jnl ./fifo
export HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal
mkfifo fifo
"$program" hold held.h5 < fifo > holder.out &
holder=$!
exec 3> fifo
for _ in $(seq 100); do grep -q ready holder.out 2> /dev/null && break; sleep 0.1; done
grep -q ready holder.out || { echo "FAIL: the writer did not commit"; exit 1; }
size=$(stat -c %s held.h5)
"$program" open held.h5 > refused.txt 2>&1 || { echo "FAIL: the second open was not refused"; cat refused.txt; exit 1; }
grep -q "held.h5 is open for writing through h5journal by process $holder" refused.txt ||
  { echo "FAIL: the refusal does not name the writer (pid $holder)"; cat refused.txt; exit 1; }
grep -q "errno = 11" refused.txt || { echo "FAIL: the refusal carries no errno"; cat refused.txt; exit 1; }
echo "refused at open while the file was $size bytes: $(grep -o 'held.h5 is open[^,]*' refused.txt | head -1)"
echo go >&3
exec 3>&-
wait "$holder" || { echo "FAIL: the writer failed after the refused open"; exit 1; }
env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$h5dump" -H held.h5 | grep -q 'DATASET "second"' ||
  { echo "FAIL: the writer's file lacks its last write"; exit 1; }
echo "the writer went on and closed a file h5dump reads"
