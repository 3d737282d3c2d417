#!/usr/bin/env python3
"""The Python recipe of docs/configuration.md ("From Python (h5py)"), taken
from the document and run as it stands: H5Fwait_journal_durable and
H5Fget_journal_stats reached through ctypes from h5py.

Under durable=10s the background's first sync is ten seconds away, so the
commits after a session's first are not durable until the wait: before it
fewer commits count as durable than were made, after it all of them.  With
durable=false the wait makes them durable too.  The process maps one copy
of the plugin and one of HDF5, ctypes's load included.  On a file h5py
opened through sec2 both calls fail, and the recipe raises OSError with
EINVAL.  On a full disk (a 2 MiB tmpfs in a mount namespace of its own:
unshare, as root) the writer fails, and the wait then raises OSError with
ENOSPC.  Each case runs in a process of its own, since HDF5 reads
HDF5_DRIVER_CONFIG when it starts.

usage: h5py_wait_durable_test.py PLUGIN_DIR WORK_DIR
"""
import errno
import os
import re
import subprocess
import sys
import tempfile

CONFIGURATION_MD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "configuration.md")
COMMITS = 20


def recipe():
    """The first python block under the heading "From Python (h5py)", run:
    its functions by name."""
    text = open(CONFIGURATION_MD).read()
    section = text.split("## From Python (h5py)", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    if block is None:
        sys.exit("FAIL: configuration.md has no python block under \"From Python (h5py)\"")
    namespace = {}
    exec(block.group(1), namespace)
    return namespace


def child(config, path):
    namespace = recipe()
    import h5py
    import numpy as np
    with h5py.File(path, "w") as f:
        d = f.create_dataset("steps", shape=(0, 1024), maxshape=(None, 1024), chunks=(1, 1024), dtype="f8")
        for step in range(COMMITS):
            d.resize(step + 1, axis=0)
            d[step] = np.full(1024, step, dtype="f8")
            f.flush()
        before = namespace["journal_stats"](f)
        namespace["wait_durable"](f)
        after = namespace["journal_stats"](f)
        print(f"{config}: {before.commits} commits, {before.durable_commits} durable before the wait, "
              f"{after.durable_commits} after")
        if before.commits < COMMITS:
            sys.exit(f"FAIL: {before.commits} commits counted for {COMMITS} flushes")
        if before.durable_commits >= before.commits:
            sys.exit("FAIL: every commit was durable before the wait, so the wait was not tested")
        if after.durable_commits != after.commits:
            sys.exit(f"FAIL: after the wait {after.durable_commits} of {after.commits} commits are durable")
        loaded = {line.split()[-1] for line in open("/proc/self/maps") if "/" in line}
        for stem in ("libh5journal", "libhdf5"):
            copies = {p for p in loaded if os.path.basename(p).startswith(stem) and "_hl" not in p}
            if len(copies) != 1:
                sys.exit(f"FAIL: {len(copies)} copies of {stem} in the process: {sorted(copies)}")
    with h5py.File(path + ".sec2.h5", "w", driver="sec2") as plain:
        for call in ("wait_durable", "journal_stats"):
            try:
                namespace[call](plain)
            except OSError as e:
                print(f"{call} on a file opened through sec2 raised: {e}")
                if e.errno != errno.EINVAL:
                    sys.exit(f"FAIL: errno {e.errno}, not EINVAL")
            else:
                sys.exit(f"FAIL: {call} succeeded on a file opened through sec2")


def full_disk_child(directory):
    """Inside its own mount namespace: a tmpfs too small for the steps."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", directory], check=True)
    namespace = recipe()
    import h5py
    import numpy as np
    f = h5py.File(os.path.join(directory, "full.h5"), "w")
    d = f.create_dataset("steps", shape=(0, 8192), maxshape=(None, 8192), chunks=(1, 8192), dtype="f8")
    written = 0
    try:
        for step in range(1000):  # 64 KiB a step: 2 MiB holds fewer than 32
            d.resize(step + 1, axis=0)
            d[step] = np.full(8192, step, dtype="f8")
            f.flush()
            written = step + 1
    except Exception as e:
        print(f"the writer failed after {written} steps: {type(e).__name__}")
    else:
        sys.exit("FAIL: 1000 steps of 64 KiB fit in 2 MiB?")
    try:
        namespace["wait_durable"](f)
    except OSError as e:
        print(f"wait_durable on the full disk raised: {e}")
        if e.errno != errno.ENOSPC:
            sys.exit(f"FAIL: errno {e.errno}, not ENOSPC")
    else:
        sys.exit("FAIL: wait_durable succeeded after the writer failed")
    # Out without closing: where the disk filled under a data write (not
    # the journal's), HDF5 cannot write the chunk it holds when the dataset
    # closes, and Debian's HDF5 2.x, its assertions on, then aborts in
    # H5Fclose (H5F__get_objects_cb: Assertion `obj_ptr' failed), under
    # sec2 as under the driver.  The file stays at its last commit.
    sys.stdout.flush()
    os._exit(0)


def main():
    if sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    if sys.argv[1] == "--full-disk-child":
        full_disk_child(sys.argv[2])
        return
    plugin_dir, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)

    def run_child(how, config, args, prefix=()):
        env = dict(os.environ, HDF5_PLUGIN_PATH=plugin_dir, HDF5_DRIVER="journal", HDF5_DRIVER_CONFIG=config)
        r = subprocess.run([*prefix, sys.executable, os.path.abspath(__file__), *args], env=env,
                           capture_output=True, text=True, timeout=120)
        sys.stdout.write(r.stdout)
        if r.returncode != 0:
            sys.exit(f"FAIL ({how}): {(r.stderr.strip().splitlines() or ['exit ' + str(r.returncode)])[-1]}")

    for config in ("durable=10s", "durable=false"):
        path = os.path.join(work, config.replace("=", "_") + ".h5")
        for leftover in (path, path + ".jnl", path + ".sec2.h5"):
            if os.path.exists(leftover):
                os.remove(leftover)
        run_child(config, config, ["--child", config, path])
    with tempfile.TemporaryDirectory(dir=work) as directory:
        run_child("full disk", "durable=10s", ["--full-disk-child", directory],
                  prefix=["unshare", "-m", "--propagation", "private"])
    print("the documented recipe waits for durability, reads the stats, and reports errno from h5py")


if __name__ == "__main__":
    main()
