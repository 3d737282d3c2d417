#!/usr/bin/env python3
"""An h5py reader beside test/readers/busy_writer.cc's writer (test/readers/busy_writer_test.sh):
opens FILE read-only through the driver in a loop for SECONDS, checks each
open is exactly one commit (the root's "steps" n, /series holding 0..n-1,
and every step's dataset with the size, version and values step n-1 left
it, the last 400 steps only), and prints a JSON tally like busy_writer's verify.  A cut-off is an
open that failed because its snapshot expired; "short_cut_off" counts those
whose open-to-close was under WITHIN_MS.

usage: busy_reader.py FILE SECONDS WITHIN_MS
"""
import json
import sys
import time

import h5py
import numpy as np

REUSE_AGE = 7
KEPT = 400


def whole(f):
    n = int(f.attrs["steps"])
    if not np.array_equal(f["series"][...], np.arange(n)):
        return n, False
    first = max(0, n - KEPT)
    if first > 0 and "step_%06d" % (first - 1) in f:
        return n, False
    for i in range(first, n):
        d = f["step_%06d/data" % i]
        version = 1 if i + REUSE_AGE < n else 0
        want = i * 1e4 + np.arange(512 if version == 0 else 1024) + version * 0.5
        if int(d.attrs["version"]) != version or not np.array_equal(d[...], want):
            return n, False
    return n, True


def main():
    path, seconds, within = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]) / 1000
    t = dict(opens=0, verified=0, cut_off=0, short_cut_off=0, failed=0, mismatched=0, regressed=0, last_steps=0)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t["opens"] += 1
        opened = time.monotonic()
        try:
            with h5py.File(path, "r") as f:
                n, ok = whole(f)
        except (OSError, KeyError, ValueError) as e:
            if "is gone" in str(e):
                t["cut_off"] += 1
                t["short_cut_off"] += time.monotonic() - opened < within
            else:
                t["failed"] += 1
                print("failed:", e, file=sys.stderr)
            continue
        if not ok:
            t["mismatched"] += 1
            print("MISMATCH at steps", n, file=sys.stderr)
        elif n < t["last_steps"]:
            t["regressed"] += 1
        else:
            t["verified"] += 1
            t["last_steps"] = n
    print(json.dumps(t))
    return 0 if t["mismatched"] == 0 and t["regressed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
