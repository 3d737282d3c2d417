"""What run_bench.py and plots.py both read off the harness's samples: the
drivers compared by durability, and the medians over a sample list."""
import statistics

# durable=100ms's floor: sec2 with the engine's own pacing (h5journal_bench's
# PacedSync): an fdatasync of the file every interval, a commit that waits
# while the disk is an interval behind, and a durable close.  What the disk
# alone costs to keep sec2's commits durable within the bound durable=100ms
# promises; in a run shorter than the interval, the close's fsync alone.  A
# durable=100ms target that this misses too is blocked by the disk, not by
# the journal.
WITHIN_FLOOR = "sec2-interval-durable"
# Durable at each commit: compared with each other and with the disk's floor.
DURABLE_DRIVERS = ["sec2-durable", "journal/uring", "journal/sync"]
# Not durable at each commit: both plain ones, and durable=100ms beside its
# floor.
NOT_DURABLE_DRIVERS = ["sec2", "journal/nosync", "journal/within", WITHIN_FLOOR]


def median(samples, key):
    return statistics.median(s[key] for s in samples)


def throughput(samples):
    """MB/s, the median over `samples`."""
    return statistics.median(s["bytes"] / s["seconds"] / 1e6 for s in samples)
