#!/usr/bin/env python3
"""h5py readers in a loop while an h5py writer runs, both through the driver
(docs/design.md §11).  Each commit of the writer appends rows holding its
number to a chunked dataset, adds a group and deletes the one from three
commits before, and records in the root's attributes its number, the rows'
count and their sum.  Each reader open must see exactly one commit: the rows
agree with the attributes, the groups are those of that commit, and the
commit is never older than one that reader saw before.  Opens that fail (a
snapshot that expired while it was read) are counted, not errors.

usage: live_readers_test.py PLUGIN_DIR WORK_DIR [SECONDS]
"""
import json
import os
import subprocess
import sys
import time

WRITER = """
import random, sys, h5py
f = h5py.File(sys.argv[1], "w")
rows = f.create_dataset("rows", (0,), maxshape=(None,), dtype="i8", chunks=(1024,))
total = 0
for k in range(1, 10**9):
    n = rows.shape[0]
    add = random.randint(1, 300)
    rows.resize((n + add,))
    rows[n:] = k
    total += add * k
    f.create_group("g%d" % k).attrs["k"] = k
    if "g%d" % (k - 3) in f:
        del f["g%d" % (k - 3)]
    f.attrs["commit"], f.attrs["rows"], f.attrs["sum"] = k, n + add, total
    f.flush()
    print(k, flush=True)
"""

READER = """
import json, sys, time, h5py
verified = failed = mismatched = regressed = last = 0
why = {}
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    try:
        with h5py.File(sys.argv[1], "r") as f:
            k = int(f.attrs["commit"])
            rows = f["rows"][...]
            groups = sorted(int(g[1:]) for g in f if g.startswith("g"))
            whole = (len(rows) == f.attrs["rows"] and int(rows.sum()) == f.attrs["sum"] and int(rows.max()) == k
                     and groups == list(range(max(1, k - 2), k + 1)))
    except (OSError, KeyError, ValueError) as e:
        failed += 1
        reason = "%s: %s" % (type(e).__name__, str(e).split(" (")[0][:60])
        why[reason] = why.get(reason, 0) + 1
        continue
    if not whole:
        mismatched += 1
        print("MISMATCH at commit", k, file=sys.stderr)
    elif k < last:
        regressed += 1
    else:
        verified, last = verified + 1, k
print(json.dumps({"verified": verified, "failed": failed, "mismatched": mismatched, "regressed": regressed,
                  "last_commit": last, "why_failed": why}))
"""


def main():
    plugin_dir, work = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 20
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "watched.h5")
    for leftover in (path, path + ".jnl", path + ".jnl.readers"):
        if os.path.exists(leftover):
            os.chmod(leftover, 0o644)
            os.remove(leftover)
    env = dict(os.environ, HDF5_PLUGIN_PATH=plugin_dir, HDF5_DRIVER="journal",
               HDF5_DRIVER_CONFIG="checkpoint_bytes=256K;reader_wait=300")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, path], env=env, stdout=subprocess.PIPE, text=True)
    writer.stdout.readline()  # its first commit
    readers = [subprocess.Popen([sys.executable, "-c", READER, path, str(seconds)], env=env,
                                stdout=subprocess.PIPE, text=True) for _ in range(2)]
    results = [json.loads(r.communicate()[0]) for r in readers]
    writer.kill()
    writer.wait()
    ok = True
    for n, r in enumerate(results):
        print("reader %d: %s" % (n, r))
        if r["mismatched"] or r["regressed"] or r["verified"] < 20:
            print("FAIL: reader %d saw a mixture, went back, or verified fewer than 20 opens" % n)
            ok = False
    print("live_readers (h5py): " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
