#!/usr/bin/env bash
# A writer that changes its working directory while its file is open
# (test/driver/changed_directory.c), under each durability setting, with
# checkpoints after the change: its close leaves the file whole and plain,
# and nothing of its journal's, beside the file or in the new directory.
set -uo pipefail
program=$1 plugin=$2 h5ls=$3 work=$4
status=0
for durable in true false 100ms; do
  rm -rf "$work" && mkdir -p "$work/start" "$work/elsewhere" && cd "$work/start"
  HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="durable=$durable;checkpoint_bytes=64K" \
    "$program" run.h5 ../elsewhere || { echo "FAIL durable=$durable: the writer failed"; status=1; continue; }
  left=$(ls -A "$work/start" "$work/elsewhere" | grep -v -e '^run.h5$' -e ':$' -e '^$' | tr '\n' ' ')
  if [[ -n $left ]]; then echo "FAIL durable=$durable: left behind: $left"; status=1; fi
  steps=$("$h5ls" run.h5 | grep -c '^step')  # without the driver: the file is plain HDF5
  if ((steps != 301)); then echo "FAIL durable=$durable: $steps steps in the file, expected 301"; status=1; fi
  ((status == 0)) && echo "ok durable=$durable"
done
exit $status
