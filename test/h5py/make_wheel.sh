#!/usr/bin/env bash
# h5py as its pip wheel installs it, made from the h5py on this system: the
# package copied into OUT/h5py, and its HDF5 (and HDF5's high-level
# library) copied into OUT/h5py.libs under hashed names and SONAMEs, which
# h5py's modules name instead of the system's.  With PYTHONPATH=OUT, Python
# imports this h5py, and only this copy of HDF5 is loaded unless something
# else loads another.
#
#   make_wheel.sh OUT
set -euo pipefail
out=$1
source "$(dirname "$0")/../plugin/wheel_copy.sh"
package=$(python3 -c "import h5py, os; print(os.path.dirname(h5py.__file__))")
rm -rf "$out"
mkdir -p "$out/h5py.libs"
cp -r "$package" "$out/h5py"
libs=$(cd "$out/h5py.libs" && pwd)
declare -A renamed  # system SONAME -> hashed copy's
for module in $(find "$out/h5py" -name '*.so'); do
  for needed in $(patchelf --print-needed "$module" | grep '^libhdf5'); do
    if [[ -z "${renamed[$needed]:-}" ]]; then
      lib=$(ldd "$module" | awk -v n="$needed" '$1 == n {print $3}')
      stem=$([[ "$needed" == *_hl* ]] && echo libhdf5_hl || echo libhdf5)
      renamed[$needed]=$(hashed_copy "$lib" "$libs" "$stem")
    fi
    point_at "$module" "$needed" "${renamed[$needed]}" "$libs"
  done
done
# The high-level library names HDF5 too.
for needed in "${!renamed[@]}"; do
  [[ "$needed" == *_hl* ]] || continue
  for inner in $(patchelf --print-needed "$libs/${renamed[$needed]}" | grep '^libhdf5'); do
    point_at "$libs/${renamed[$needed]}" "$inner" "${renamed[$inner]}" "$libs"
  done
done
echo "h5py as a wheel: $out (HDF5: ${renamed[*]})"
