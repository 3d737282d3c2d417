#!/usr/bin/env python3
"""h5py writing through the driver, SIGKILLed: every flushed step survives.

A writer (this script with --write) appends a step at a time to a
resizable dataset, sets attributes, calls flush() and then reports the
step on stdout; a checkpoint every eight steps or so puts committed steps
into the file itself.  It is SIGKILLed at a random moment.  The file must then
hold every reported step, and at most the one being committed beyond it:
  1. read through the driver, read-only (recovery in memory);
  2. after `h5recover FILE`, read by plain h5py with no driver at all.
With --skip-recovery the file is read by plain h5py straight after the
kill, with no recovery: the checks must then find damage (the committed
steps are in the journal), which shows they can fail.

usage: crash_test.py PLUGIN_DIR H5RECOVER WORK_DIR [--kills N] [--skip-recovery]
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import time

STEP = 4096  # float64 values per step: 32 KiB


def write(path):
    import h5py
    import numpy as np
    with h5py.File(path, "w") as f:
        d = f.create_dataset("series", shape=(0, STEP), maxshape=(None, STEP), dtype="f8", chunks=(1, STEP))
        for step in range(1, 1_000_000):
            d.resize(step, axis=0)
            d[step - 1] = np.full(STEP, float(step))
            f.attrs["last_step"] = step
            grp = f.require_group(f"group_{step % 7}")
            grp.attrs[f"step_{step}"] = step
            f.flush()
            print(step, flush=True)


def check(path, acked, env):
    """Runs in a fresh interpreter under `env`; returns its error or None."""
    code = f"""
import h5py, numpy as np, sys
with h5py.File({path!r}, "r") as f:
    last = int(f.attrs["last_step"])
    d = f["series"]
    if not ({acked} <= last <= {acked} + 1) or d.shape[0] != last:
        sys.exit(f"last_step {{last}}, {{d.shape[0]}} rows, {acked} acknowledged")
    for step in range(1, last + 1):
        if not np.all(d[step - 1] == float(step)):
            sys.exit(f"step {{step}}'s row is wrong")
        if f[f"group_{{step % 7}}"].attrs[f"step_{{step}}"] != step:
            sys.exit(f"step {{step}}'s attribute is wrong")
"""
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plugin_dir")
    ap.add_argument("h5recover")
    ap.add_argument("work")
    ap.add_argument("--kills", type=int, default=8)
    ap.add_argument("--skip-recovery", action="store_true")
    ap.add_argument("--write")
    args = ap.parse_args()
    if args.write:
        return write(args.write)
    os.makedirs(args.work, exist_ok=True)
    plain = {k: v for k, v in os.environ.items() if not k.startswith("HDF5_")}
    # Small checkpoints: the file itself holds committed steps, not only the journal.
    through = dict(plain, HDF5_PLUGIN_PATH=args.plugin_dir, HDF5_DRIVER="journal",
                   HDF5_DRIVER_CONFIG="checkpoint_bytes=256K")
    rng = random.Random(int(os.environ.get("SEED", time.time())))
    damaged = 0
    for kill in range(args.kills):
        path = os.path.join(args.work, f"crash{kill}.h5")
        for leftover in (path, path + ".jnl"):
            if os.path.exists(leftover):
                os.remove(leftover)
        writer = subprocess.Popen([sys.executable, __file__, "-", "-", "-", "--write", path], env=through,
                                  stdout=subprocess.PIPE, text=True)
        target = rng.randint(3, 60)
        acked = 0
        for line in writer.stdout:
            acked = int(line)
            if acked >= target:
                break
        time.sleep(rng.random() * 0.02)  # into the next step, perhaps mid-commit
        writer.send_signal(signal.SIGKILL)
        tail = writer.stdout.read()  # steps reported between the break and the kill
        writer.wait()
        acked = max([acked] + [int(x) for x in tail.split()])
        problems = []
        error = check(path, acked, plain if args.skip_recovery else through)
        if error:
            problems.append(f"read {'by plain h5py, not recovered' if args.skip_recovery else 'through the driver'}: {error}")
        if not args.skip_recovery:
            r = subprocess.run([args.h5recover, path], capture_output=True, text=True)
            if r.returncode != 0:
                problems.append(f"h5recover exited {r.returncode}: {r.stderr.strip()}")
            elif os.path.exists(path + ".jnl"):
                problems.append("h5recover left the journal")
            error = check(path, acked, plain)
            if error:
                problems.append(f"read by plain h5py after h5recover: {error}")
        status = "ok" if not problems else "DAMAGED: " + "; ".join(problems)
        print(f"kill {kill}: {acked} steps acknowledged: {status}")
        damaged += bool(problems)
    if args.skip_recovery:
        print(f"{damaged} of {args.kills} kills left a file plain h5py misreads without recovery")
        sys.exit(0 if damaged else 1)  # the checks must be able to fail
    if damaged:
        sys.exit(f"FAIL: {damaged} of {args.kills} kills lost acknowledged steps")
    print(f"every acknowledged step survived {args.kills} SIGKILLs, through the driver and after h5recover")


if __name__ == "__main__":
    sys.exit(main())
