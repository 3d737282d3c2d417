#!/usr/bin/python3
"""The harness's plots, drawn from its samples alone.

  bench/plots.py SAMPLES.json OUTDIR      # e.g. docs/performance/samples.json docs/performance

run_bench.py draws them at the end of a serial run; this redraws them from
any run's samples.json.  Each plot is of medians over the rounds, a line or
bar a driver:

- latency.png: W4's commit p50 against the step size.  Left, the drivers
  durable at each commit, with the disk's floor (the bare fdatasync of a
  step, measured in the same rounds); right, the others.
- sweep.png: W4's throughput against the step size, the sweep and the
  sweep with 4 times the steps.
- workloads.png: throughput of W1, W2, the strided shapes and the
  checkpoint in parts.

A sample names its series (`w4/64KiB`, `w4/64KiB/x2000`, `strided/...`)
and its driver (run_bench.py, Bench.alternate); nothing else is assumed.
"""
import json
import re
import sys
from pathlib import Path

from sample_stats import DURABLE_DRIVERS, NOT_DURABLE_DRIVERS, median, throughput

# One colour a driver in every plot.
COLOURS = dict(zip(DURABLE_DRIVERS + NOT_DURABLE_DRIVERS,
                   ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink"]))
SWEEP = re.compile(r"^w4/(\d+)KiB$")
LONGER_SWEEP = re.compile(r"^w4/(\d+)KiB/x\d+$")
BAR_SERIES = re.compile(r"^(w1|w2)(/\d+)?$|^strided/|^parts/")
FLOOR = "bare fdatasync of the step"


def by_series(samples):
    """{series: {driver: [sample, ...]}}, in the order the run took them."""
    out = {}
    for s in samples:
        if "series" in s:
            out.setdefault(s["series"], {}).setdefault(s["bench_driver"], []).append(s)
    return out


def step_floors(samples):
    """{step KiB: median bare fdatasync of a step, µs} (bench's bare-step)."""
    floors = {}
    for s in samples:
        if re.fullmatch(r"bare-step/\d+", s.get("label", "")):
            floors.setdefault(s["step_kib"], []).append(s)
    return {kib: median(of_step, "sync_p50_us") for kib, of_step in floors.items()}


def swept(series, pattern):
    """{step KiB: {driver: samples}} of the series `pattern` matches, by step."""
    found = {int(m.group(1)): res for name, res in series.items() if (m := pattern.match(name))}
    return dict(sorted(found.items()))


def line(ax, sweep, driver, value, **style):
    """`value(samples)` of `driver` at each step it ran."""
    steps = [kib for kib, res in sweep.items() if driver in res]
    if steps:
        ax.plot(steps, [value(sweep[kib][driver]) for kib in steps], marker="o", label=driver,
                color=COLOURS.get(driver), **style)


def commit_p50(samples):
    return median(samples, "commit_p50_us")


def against_step(ax, steps, title, ylabel):
    ax.set_xscale("log", base=2)
    ax.set_xticks(steps, [str(kib) for kib in steps])
    ax.set_yscale("log")
    ax.set_xlabel("step size, KiB")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)


def draw_latency(plt, sweep, floors, out):
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    steps = [kib for kib in sweep if kib in floors]
    left.plot(steps, [floors[kib] for kib in steps], marker="o", linestyle="--", color="gray", label=FLOOR)
    for d in DURABLE_DRIVERS:
        line(left, sweep, d, commit_p50)
    against_step(left, list(sweep), "durable at each commit", "commit p50, µs")
    for d in NOT_DURABLE_DRIVERS:
        line(right, sweep, d, commit_p50)
    against_step(right, list(sweep), "not durable at each commit", "commit p50, µs")
    fig.suptitle("W4: commit latency against step size")
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=100)


def draw_sweep(plt, sweep, longer, out):
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for d in DURABLE_DRIVERS + NOT_DURABLE_DRIVERS:
        line(left, sweep, d, throughput)
        line(right, longer, d, throughput)
    against_step(left, list(sweep), "the sweep (about 64 MiB a sample)", "MB/s, open to close")
    against_step(right, list(longer), "4 times the steps", "MB/s, open to close")
    fig.suptitle("W4: throughput against step size")
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=100)


def draw_workloads(plt, series, out):
    panels = [(name, res) for name, res in series.items() if BAR_SERIES.search(name)]
    cols = 4
    rows = max(1, -(-len(panels) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, (name, res) in zip(axes.flat, panels):
        ax.bar(list(res), [throughput(res[d]) for d in res], color="tab:blue")
        ax.set_title(f"{name}: MB/s", fontsize=9)
        ax.tick_params(axis="x", rotation=60, labelsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(out / "workloads.png", dpi=100)


def write_plots(samples, out):
    """Draws the three plots into `out`; returns their names, or [] when
    this Python has no matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    series = by_series(samples)
    sweep = swept(series, SWEEP)
    if not sweep:
        raise ValueError("no W4 sweep among the samples (series w4/<KiB>KiB)")
    draw_latency(plt, sweep, step_floors(samples), out)
    draw_sweep(plt, sweep, swept(series, LONGER_SWEEP), out)
    draw_workloads(plt, series, out)
    return ["latency.png", "sweep.png", "workloads.png"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    samples = json.loads(Path(sys.argv[1]).read_text())
    drawn = write_plots(samples, Path(sys.argv[2]))
    if not drawn:
        sys.exit("plots: matplotlib is not installed (apt-get install python3-matplotlib)")
    print("drew " + ", ".join(drawn))


if __name__ == "__main__":
    main()
