#!/usr/bin/env python3
"""h5py with the HDF5 it bundles, as a pip wheel installs it
(make_wheel.sh; PYTHONPATH names the wheel): through the driver, the
process maps that one copy of HDF5 and no other, array data is written and
read back, and the driver's configuration is read from that copy (a bad
key is refused).

usage: one_hdf5_test.py PLUGIN_DIR WORK_DIR
"""
import os
import subprocess
import sys

WRITE = """
import h5py, numpy as np, os, sys
path = sys.argv[1]
with h5py.File(path, "w") as f:
    f["values"] = np.arange(100000, dtype="f8")
    f.flush()
    if not os.path.exists(path + ".jnl"):
        sys.exit("no journal beside the file: the driver was not used")
    maps = open("/proc/self/maps").read().split()
    print("\\n".join(sorted({w for w in maps if "libhdf5" in os.path.basename(w) and "_hl" not in w})))
with h5py.File(path, "r") as f:
    if not (f["values"][:] == np.arange(100000, dtype="f8")).all():
        sys.exit("the values read back differ")
"""


def main():
    plugin_dir, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, HDF5_DRIVER="journal", HDF5_PLUGIN_PATH=plugin_dir)
    path = os.path.join(work, "wheel.h5")
    for leftover in (path, path + ".jnl"):
        if os.path.exists(leftover):
            os.remove(leftover)
    r = subprocess.run([sys.executable, "-c", WRITE, path], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: h5py through the driver: {r.stderr.strip()[-2000:]}")
    mapped = r.stdout.split()
    bundled = subprocess.run([sys.executable, "-c", "import h5py, os; print(os.path.dirname(h5py.__file__))"],
                             env=env, capture_output=True, text=True).stdout.strip() + ".libs"
    print("libhdf5 mapped:", mapped)
    if len(mapped) != 1 or not mapped[0].startswith(bundled):
        sys.exit(f"FAIL: expected only the wheel's HDF5 (in {bundled}) mapped, got {mapped}")
    if r.stderr.strip():
        sys.exit(f"FAIL: HDF5 printed errors: {r.stderr.strip()[-2000:]}")

    bad = dict(env, HDF5_DRIVER_CONFIG="nosuchkey=1")
    r = subprocess.run([sys.executable, "-c", WRITE, os.path.join(work, "bad_key.h5")], env=bad,
                       capture_output=True, text=True)
    print("with nosuchkey=1:", r.returncode, (r.stderr.strip().splitlines() or [""])[-1])
    if r.returncode == 0 or "nosuchkey" not in r.stderr:
        sys.exit("FAIL: HDF5_DRIVER_CONFIG=nosuchkey=1 was not refused by name")
    print("PASS")


if __name__ == "__main__":
    main()
