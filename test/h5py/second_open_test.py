#!/usr/bin/env python3
"""A second h5py process opening with 'r+' a file that another h5py process
is writing through the driver gets BlockingIOError, as from HDF5's own file
lock with sec2; the writer then goes on undisturbed.

usage: second_open_test.py PLUGIN_DIR WORK_DIR
"""
import os
import subprocess
import sys

WRITER = """
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "w")
f["first"] = np.arange(1000)
f.flush()
print("ready", flush=True)
sys.stdin.readline()
f["second"] = np.arange(10)
f.close()
"""
SECOND = """
import sys, h5py
try:
    h5py.File(sys.argv[1], "r+")
except BlockingIOError as e:
    print("BlockingIOError:", e)
    sys.exit(0)
except Exception as e:
    sys.exit(f"{type(e).__name__}: {e}")
sys.exit("the second read-write open succeeded")
"""


def main():
    plugin_dir, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "held.h5")
    for leftover in (path, path + ".jnl"):
        if os.path.exists(leftover):
            os.remove(leftover)
    env = dict(os.environ, HDF5_PLUGIN_PATH=plugin_dir, HDF5_DRIVER="journal")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, path], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    if writer.stdout.readline().strip() != "ready":
        sys.exit("FAIL: the writer did not commit")
    second = subprocess.run([sys.executable, "-c", SECOND, path], env=env, capture_output=True, text=True)
    print(second.stdout.strip())
    writer.communicate("go\n")
    if second.returncode != 0:
        sys.exit(f"FAIL: {second.stderr.strip().splitlines()[-1]}")
    if writer.returncode != 0:
        sys.exit("FAIL: the writer failed after the refused open")
    print("the writer went on and closed its file")


if __name__ == "__main__":
    main()
