#!/usr/bin/env bash
# The same HDF5 program through sec2, through H5Pset_fapl_journal, and through
# the environment plugin (raw data in place, and in the data log) gives
# identical h5dump output, read with no plugin after close; and no journal or
# data log is left behind.
set -euo pipefail
features=$1 plugin_dir=$2 h5dump=$3 work=$4
shift 4
format_flag=${1:-}
mkdir -p "$work"
cd "$work"
rm -f ./*.h5 ./*.jnl ./*.txt ./*.family-*

"$features" sec2.h5 --fapl sec2 $format_flag
"$features" linked.h5 --fapl journal $format_flag
HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="ring_buffers=3;buffer_size=64K" \
  "$features" env.h5 --fapl default $format_flag
HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="raw=log;buffer_size=64K" \
  "$features" log.h5 --fapl default $format_flag
HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="raw=auto" \
  "$features" auto.h5 --fapl default $format_flag

for f in sec2 linked env log auto; do
  # No plugin in the environment: the closed file is a plain HDF5 file.
  env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$h5dump" "$f.h5" | sed "s/$f\.h5/FILE/" > "$f.txt"
  if ls "$f.h5.jnl" "$f.h5.jnl.data" 2>/dev/null; then echo "FAIL: journal left behind for $f.h5"; exit 1; fi
done
diff -u sec2.txt linked.txt
diff -u sec2.txt env.txt
diff -u sec2.txt log.txt
diff -u sec2.txt auto.txt
lines=$(wc -l < sec2.txt)
echo "identical h5dump output ($lines lines) for sec2, H5Pset_fapl_journal and HDF5_DRIVER=journal (raw=inplace, log, auto)"
