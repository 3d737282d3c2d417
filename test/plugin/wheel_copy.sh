#!/usr/bin/env bash
# Copies of HDF5 made the way a pip wheel bundles it (auditwheel): the
# library under a hashed file name and SONAME, and binaries whose NEEDED
# entries and RPATH name that copy.  Sourced by the tests that load the
# plugin into such a copy.

# hashed_copy LIB DIR STEM: copies LIB into DIR as STEM-5a1f3c9e.so.<its
# SONAME's version>, with that name as its SONAME; prints the name.
hashed_copy() {
  local lib=$1 dir=$2 stem=$3 soname name
  soname=$(patchelf --print-soname "$lib")
  name="$stem-5a1f3c9e.so.${soname##*.so.}"
  mkdir -p "$dir"
  cp "$lib" "$dir/$name"
  patchelf --set-soname "$name" "$dir/$name"
  echo "$name"
}

# point_at BINARY OLD_SONAME NEW_SONAME RPATH: BINARY's NEEDED OLD_SONAME
# becomes NEW_SONAME, found in RPATH.
point_at() {
  patchelf --replace-needed "$2" "$3" --set-rpath "$4" "$1"
}

# wheel_copy DIR PROGRAM...: copies each PROGRAM into DIR, with the HDF5
# the first one links beside them as a hashed copy; prints its path.
wheel_copy() {
  local dir=$1; shift
  local lib soname hashed p
  lib=$(ldd "$1" | awk '$1 ~ /^libhdf5[^ ]*\.so/ && $1 !~ /_hl|_tools/ {print $3; exit}')
  [[ -n "$lib" ]] || { echo "FAIL: $1 links no libhdf5" >&2; return 1; }
  soname=$(patchelf --print-soname "$lib")
  hashed=$(hashed_copy "$lib" "$dir" libhdf5)
  for p in "$@"; do
    cp "$p" "$dir/"
    point_at "$dir/$(basename "$p")" "$soname" "$hashed" '$ORIGIN'
  done
  echo "$dir/$hashed"
}

# The distinct libhdf5 files process PID has mapped, one per line.
hdf5_mapped_by() {
  grep -o '/[^ ]*libhdf5[^/ ]*$' "/proc/$1/maps" | sort -u
}
