#!/usr/bin/env bash
# The plugin in a copy of HDF5 it was not linked with: the hashed copy a pip
# wheel bundles (wheel_copy.sh).  It loads into that copy and no other,
# works, and takes its configuration from it; and where a library loading
# it lacks HDF5's functions, it refuses, naming both, and does not crash.
#
#   another_hdf5_copy_test.sh OPEN_BY_NAME BUSY_WRITER LOAD_AS_FAKE_HDF5 PLUGIN_DIR WORK
set -euo pipefail
open_by_name=$1 busy_writer=$2 fake_loader=$3 plugin_dir=$4 work=$5
source "$(dirname "$0")/wheel_copy.sh"
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

copy=$(wheel_copy "$work/wheel" "$open_by_name" "$busy_writer")
echo "HDF5 copied as a wheel would: $copy"
export HDF5_DRIVER=journal HDF5_PLUGIN_PATH=$plugin_dir

"$work/wheel/open_by_name" "$work/a.h5" || fail "a program on the copy cannot write and read through the driver"

# One HDF5 mapped while the driver writes: the copy.
"$work/wheel/busy_writer" write "$work/b.h5" --seconds 60 > "$work/writer.out" 2>&1 &
writer=$!
for _ in $(seq 100); do [[ -s "$work/b.h5.jnl" ]] && break; sleep 0.1; done
sleep 0.5
mapped=$(hdf5_mapped_by $writer)
kill -KILL $writer
wait $writer 2>/dev/null || true
echo "mapped by the writer: $mapped"
[[ "$mapped" == "$copy" ]] || fail "the writer maps $(echo "$mapped" | wc -l) libhdf5, expected the copy alone"

# Killed, the file is read through the driver on the copy: the reader
# finds the journal and sees the last commit, whole.
verdict=$("$work/wheel/busy_writer" verify "$work/b.h5" --seconds 0.5)
echo "after SIGKILL, through the copy: $verdict"
[[ "$verdict" == *'"mismatched": 0'* && "$verdict" != *'"verified": 0,'* ]] || fail "the killed writer's file"

# The configuration is the copy's: a bad key is refused.
if HDF5_DRIVER_CONFIG=nosuchkey=1 "$work/wheel/open_by_name" "$work/c.h5" > "$work/bad_key.out" 2>&1; then
  fail "HDF5_DRIVER_CONFIG=nosuchkey=1 was accepted"
fi
grep -q nosuchkey "$work/bad_key.out" || fail "the refusal does not name the key: $(cat "$work/bad_key.out")"

# A library that loads the plugin as HDF5 would, but has none of HDF5's API.
plugin=$(ls "$plugin_dir"/libh5journal.so)
if "$fake_loader" "$plugin" > "$work/fake.out" 2>&1; then :; else
  fail "the plugin loaded by a library without HDF5's API: $(cat "$work/fake.out")"
fi
grep -q "libfake_hdf5.so) lacks: H5open" "$work/fake.out" || fail "the refusal: $(cat "$work/fake.out")"
grep -q "libh5journal.so" "$work/fake.out" || fail "the refusal does not name the plugin"
echo "refused by a library without HDF5's API: $(head -1 "$work/fake.out")"
echo "PASS"
