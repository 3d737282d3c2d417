#!/usr/bin/env bash
# Fortran through the driver, with HDF5's own Fortran library and
# HDF5_DRIVER=journal, as a Fortran user runs it: every step whose
# h5fflush_f returned survives SIGKILL, whole and right; and the driver's C
# functions are callable through bind(C).
#   fortran_test.sh H5FC PLUGIN_DIR H5RECOVER WORK KILLS
set -euo pipefail
h5fc=$1 plugin=$2 h5recover=$3 work=$4 kills=$5
src=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$h5fc" -o series "$src/series.f90"
"$h5fc" -o wait_durable "$src/wait_durable.f90" -L"$plugin" -lh5journal -Wl,-rpath,"$plugin"
export HDF5_PLUGIN_PATH=$plugin

HDF5_DRIVER=journal ./series write 20 > out.txt
./series check 20 || fail "a clean run's file"

for ((k = 1; k <= kills; k++)); do
  rm -f series.h5*
  HDF5_DRIVER=journal ./series write 1000000 > out.txt &
  pid=$!
  # Killed a few steps in, a little later each time.
  until (($(grep -c committed out.txt) > k)); do
    kill -0 "$pid" 2> /dev/null || fail "kill $k: the writer stopped by itself: $(tail -3 out.txt)"
    sleep 0.01
  done
  sleep "0.0$((k % 10))"
  kill -9 "$pid"
  wait "$pid" || true
  acked=$(grep -c committed out.txt)
  "$h5recover" -q series.h5 || fail "kill $k: h5recover"
  ./series check "$acked" > check.txt || fail "kill $k: $(cat check.txt), $acked steps acknowledged"
done
echo "$kills kills: every acknowledged step there, every value right"

HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="durable=100ms" ./wait_durable | grep -q "every commit durable" ||
  fail "H5Fwait_journal_durable through bind(C)"
# Without the driver the wait must refuse the file, not pretend.
if ./wait_durable > /dev/null 2>&1; then fail "the wait succeeded on a file not open through the driver"; fi
echo "H5Fwait_journal_durable through bind(C): waits, and refuses a file not open through the driver"
