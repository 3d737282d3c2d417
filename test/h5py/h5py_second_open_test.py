#!/usr/bin/env python3
"""A second h5py process opening with 'r+', 'a' or 'w' a file that another
h5py process is writing through the driver gets BlockingIOError, as from
HDF5's own file lock with sec2, and changes nothing: 'w' must not empty the
file first.  The writer is then killed: its file reads back at its last
commit through the driver, and, once a read-write open has recovered it,
through plain h5py.  A second writer that is left alone instead goes on
undisturbed and closes its file.

usage: second_open_test.py PLUGIN_DIR WORK_DIR
"""
import os
import signal
import subprocess
import sys

WRITER = """
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "w")
f["first"] = np.arange(1000)
f["large"] = np.arange(1 << 18)  # 2 MiB: written in place
f.flush()
print("ready", flush=True)
sys.stdin.readline()
f["second"] = np.arange(10)
f.close()
"""
# h5py's 'a' retries a failed open as a create with EXCL for any driver it
# does not list (h5py/_hl/files.py), so it ends in FileExistsError, which
# must still name the writer.
SECOND = """
import sys, h5py
try:
    h5py.File(sys.argv[1], sys.argv[2])
except BlockingIOError as e:
    print("BlockingIOError:", e)
    sys.exit(0)
except FileExistsError as e:
    if sys.argv[2] != "a" or "open for writing through h5journal by process" not in str(e):
        raise
    print("FileExistsError (h5py's create after the refused open):", e)
    sys.exit(0)
except Exception as e:
    sys.exit(f"{type(e).__name__}: {e}")
sys.exit(f"the second open with {sys.argv[2]!r} succeeded")
"""
CHECK = """
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], sys.argv[2]) as f:
    ok = (np.array_equal(f["first"][:], np.arange(1000)) and np.array_equal(f["large"][:], np.arange(1 << 18))
          and "second" not in f)
sys.exit(0 if ok else "the file is not its last commit")
"""


def start_writer(path, env):
    writer = subprocess.Popen([sys.executable, "-c", WRITER, path], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    if writer.stdout.readline().strip() != "ready":
        sys.exit("FAIL: the writer did not commit")
    return writer


def refuse_second_writers(path, env):
    size = os.path.getsize(path)
    for mode in ("r+", "a", "w"):
        second = subprocess.run([sys.executable, "-c", SECOND, path, mode], env=env, capture_output=True, text=True)
        if second.returncode != 0:
            sys.exit(f"FAIL: {mode}: {second.stderr.strip().splitlines()[-1]}")
        if os.path.getsize(path) != size:
            sys.exit(f"FAIL: the refused {mode!r} open changed the file from {size} to {os.path.getsize(path)} bytes")
        print(f"{mode!r} refused, file left at {size} bytes: {second.stdout.strip()}")


def check(path, mode, env, how):
    r = subprocess.run([sys.executable, "-c", CHECK, path, mode], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {how}: {r.stderr.strip().splitlines()[-1]}")
    print(f"{how}: the last commit, whole")


def main():
    plugin_dir, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "held.h5")
    for leftover in (path, path + ".jnl"):
        if os.path.exists(leftover):
            os.remove(leftover)
    env = dict(os.environ, HDF5_PLUGIN_PATH=plugin_dir, HDF5_DRIVER="journal")
    plain = {k: v for k, v in env.items() if k not in ("HDF5_DRIVER", "HDF5_PLUGIN_PATH")}

    writer = start_writer(path, env)
    refuse_second_writers(path, env)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    check(path, "r", env, "after the writer was killed, read through the driver")
    check(path, "r+", env, "recovered by a read-write open through the driver")
    check(path, "r", plain, "then read by plain h5py")

    writer = start_writer(path, env)
    refuse_second_writers(path, env)
    writer.communicate("go\n")
    if writer.returncode != 0:
        sys.exit("FAIL: the writer failed after the refused opens")
    print("a writer left alone went on and closed its file")


if __name__ == "__main__":
    main()
