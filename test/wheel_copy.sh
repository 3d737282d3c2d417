#!/usr/bin/env bash
# Makes a copy of HDF5 the way a pip wheel bundles it (auditwheel): the
# library under a hashed file name and SONAME, and programs whose NEEDED
# entry and RPATH name that copy.  Sourced by the tests that load the
# plugin into such a copy.
#
#   wheel_copy DIR PROGRAM...   copies each PROGRAM into DIR, with HDF5
#                               (the copy the first one links) beside them
#                               as DIR/libhdf5-5a1f3c9e.so.<version>; prints
#                               that copy's path
wheel_copy() {
  local dir=$1; shift
  local lib soname hashed
  lib=$(ldd "$1" | awk '$1 ~ /^libhdf5[^ ]*\.so/ && $1 !~ /_hl|_tools/ {print $3; exit}')
  [[ -n "$lib" ]] || { echo "FAIL: $1 links no libhdf5" >&2; return 1; }
  soname=$(patchelf --print-soname "$lib")
  hashed="libhdf5-5a1f3c9e.so.${soname##*.so.}"
  mkdir -p "$dir"
  cp "$lib" "$dir/$hashed"
  patchelf --set-soname "$hashed" "$dir/$hashed"
  local p
  for p in "$@"; do
    cp "$p" "$dir/"
    patchelf --replace-needed "$soname" "$hashed" --set-rpath '$ORIGIN' "$dir/$(basename "$p")"
  done
  echo "$dir/$hashed"
}

# The distinct libhdf5 files process PID has mapped, one per line.
hdf5_mapped_by() {
  grep -o '/[^ ]*libhdf5[^/ ]*$' "/proc/$1/maps" | sort -u
}
