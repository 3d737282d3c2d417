#!/usr/bin/env python3
"""netCDF-4 through the driver: a writer (netCDF-C, through python3-netcdf4)
that writes a record and calls nc_sync per step, read by ncdump while it
runs and after SIGKILLs.

  1. While it runs, `ncdump -h` through the driver opens the file every
     time (before its first checkpoint too), and never sees fewer records
     than it saw before.
  2. After each SIGKILL, before any recovery, `ncdump` through the driver
     reads every acknowledged record (and at most the one being synced),
     each with its own values; plain `ncdump` (no driver) is refused.
  3. After `h5recover`, plain `ncdump` reads the same records.
  4. Closed in log form (materialize=never), the file reads through the
     driver, and plain `ncdump` and `h5dump` refuse it until h5recover.

usage: crash_test.py PLUGIN_DIR H5RECOVER WORK_DIR [--kills N]
"""
import argparse
import os
import random
import re
import signal
import subprocess
import sys
import time

WIDTH = 64  # doubles per record


def write(path, steps):
    import netCDF4
    import numpy as np
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", WIDTH)
        v = ds.createVariable("v", "f8", ("time", "x"))
        for step in range(steps):
            v[step, :] = np.full(WIDTH, float(step))
            ds.setncattr("last_step", step)
            ds.sync()
            print(step + 1, flush=True)


def records(path, env, values=True):
    """The records ncdump reads, as a list of per-record value sets, or an error string."""
    args = ["ncdump", "-v", "v", path] if values else ["ncdump", "-h", path]
    r = subprocess.run(args, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    count = int(re.search(r"time = UNLIMITED ; // \((\d+) currently\)", r.stdout).group(1))
    if not values:
        return [None] * count
    data = r.stdout.split("data:", 1)[1]
    numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", data.split("=", 1)[1])]
    if len(numbers) != count * WIDTH:
        return f"{len(numbers)} values for {count} records"
    return [set(numbers[k * WIDTH:(k + 1) * WIDTH]) for k in range(count)]


def plain_h5dump_reads(path, env):
    """Whether HDF5's h5dump, without the driver, opens the file."""
    return subprocess.run(["h5dump", "-H", path], env=env, capture_output=True).returncode == 0


def check_records(got, acked):
    if isinstance(got, str):
        return got
    if not acked <= len(got) <= acked + 1:
        return f"{len(got)} records, {acked} acknowledged"
    for k, values in enumerate(got):
        if values != {float(k)}:
            return f"record {k} holds {sorted(values)[:3]}"
    return None


def run_writer(path, env):
    return subprocess.Popen([sys.executable, __file__, "-", "-", "-", "--write", path], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plugin_dir")
    ap.add_argument("h5recover")
    ap.add_argument("work")
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--write")
    ap.add_argument("--steps", type=int, default=1_000_000)
    a = ap.parse_args()
    if a.write:
        return write(a.write, a.steps)
    os.makedirs(a.work, exist_ok=True)
    plain = {k: v for k, v in os.environ.items() if not k.startswith("HDF5_")}
    through = dict(plain, HDF5_DRIVER="journal", HDF5_PLUGIN_PATH=a.plugin_dir)
    rng = random.Random(int(os.environ.get("SEED", time.time())))
    failures = []
    path = os.path.join(a.work, "running.nc")

    # 1. ncdump beside the running writer, from its first sync on.
    for leftover in (path, path + ".jnl"):
        if os.path.exists(leftover):
            os.remove(leftover)
    writer = run_writer(path, dict(through, HDF5_DRIVER_CONFIG="checkpoint_bytes=4M"))
    first = writer.stdout.readline()
    opens, seen, deadline = 0, 0, time.time() + 3
    while time.time() < deadline:
        got = records(path, through, values=False)
        opens += 1
        if isinstance(got, str):
            failures.append(f"running writer: ncdump -h through the driver: {got}")
        elif len(got) < seen:
            failures.append(f"running writer: {len(got)} records after {seen}")
        else:
            seen = len(got)
    writer.kill()
    writer.wait()
    print(f"running writer (first sync {first.strip()}): {opens} ncdump -h through the driver, "
          f"{sum('running writer' in f for f in failures)} failed, {seen} records at the last")

    # 2 and 3. Kills at random moments, half of them at 1 MiB checkpoints.
    for kill in range(a.kills):
        path = os.path.join(a.work, f"k{kill}.nc")
        for leftover in (path, path + ".jnl"):
            if os.path.exists(leftover):
                os.remove(leftover)
        config = "checkpoint_bytes=1M" if kill % 2 else "checkpoint_bytes=64M"
        writer = run_writer(path, dict(through, HDF5_DRIVER_CONFIG=config))
        acked, stop = 0, time.time() + rng.uniform(0.2, 1.5)
        while time.time() < stop:
            line = writer.stdout.readline()
            if not line:
                break
            acked = int(line)
        writer.send_signal(signal.SIGKILL)
        for line in writer.stdout:  # steps acknowledged before the kill landed
            acked = int(line)
        writer.wait()
        problem = check_records(records(path, through), acked)
        if problem:
            failures.append(f"kill {kill} ({config}, {acked} acked): through the driver: {problem}")
        if not isinstance(records(path, plain, values=False), str):
            failures.append(f"kill {kill}: plain ncdump read the crashed file")
        if acked and plain_h5dump_reads(path, plain):
            failures.append(f"kill {kill}: plain h5dump read the crashed file")
        r = subprocess.run([a.h5recover, path], env=plain, capture_output=True, text=True)
        problem = check_records(records(path, plain), acked) if r.returncode == 0 else r.stderr.strip()
        if problem:
            failures.append(f"kill {kill} ({acked} acked): after h5recover, plain ncdump: {problem}")
        print(f"kill {kill}: {acked} records acknowledged, {config}: "
              f"{'ok' if not failures or not failures[-1].startswith(f'kill {kill}') else failures[-1]}")
    # 4. Log form.
    path = os.path.join(a.work, "log_form.nc")
    for leftover in (path, path + ".jnl", path + ".jnl.data"):
        if os.path.exists(leftover):
            os.remove(leftover)
    subprocess.run([sys.executable, __file__, "-", "-", "-", "--write", path, "--steps", "20"], check=True,
                   env=dict(through, HDF5_DRIVER_CONFIG="materialize=never"), stdout=subprocess.DEVNULL)
    problem = check_records(records(path, through), 20)
    if problem:
        failures.append(f"log form: through the driver: {problem}")
    if not isinstance(records(path, plain, values=False), str) or plain_h5dump_reads(path, plain):
        failures.append("log form: plain ncdump or h5dump read the file")
    r = subprocess.run([a.h5recover, path], env=plain, capture_output=True, text=True)
    problem = check_records(records(path, plain), 20) if r.returncode == 0 else r.stderr.strip()
    if problem:
        failures.append(f"log form: after h5recover, plain ncdump: {problem}")
    print(f"log form: {'ok' if not failures or not failures[-1].startswith('log form') else failures[-1]}")

    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
