#!/usr/bin/env bash
# A real full disk: a 4 MiB tmpfs in a private mount namespace.  The writer's
# commit must fail with an error naming the problem (no hang, no crash), and
# every step it acknowledged must be intact afterwards: read on the still-full
# disk, and recovered in place there or, if replay needs room the disk lacks
# (bytes the journal kept for new space), after room is made.  Run once per
# I/O engine.
set -uo pipefail
sim=$1 io=$2
if [[ "${INSIDE_NS:-}" != 1 ]]; then
  if [[ $(id -u) == 0 ]]; then exec unshare -m env INSIDE_NS=1 "$0" "$@"; fi
  exec unshare -rm env INSIDE_NS=1 "$0" "$@"
fi
dir=$(mktemp -d) logs=$(mktemp -d)  # logs outside the full filesystem
trap 'cd /; umount "$dir"; rm -rf "$dir" "$logs"' EXIT
mount -t tmpfs -o size=4m tmpfs "$dir" || { echo "FAIL: cannot mount a tmpfs in a private namespace"; exit 1; }
cd "$dir"
timeout 120 "$sim" write full.h5 --steps 400 --elems 16384 --io "$io" --report-fd 3 3> "$logs/acked.bin" 2> "$logs/err.txt"
rc=$?
if [[ $rc == 124 ]]; then echo "FAIL: the writer hung on a full disk"; exit 1; fi
if [[ $rc == 0 ]]; then echo "FAIL: 400 steps of 128 KiB fit in 4 MiB?"; exit 1; fi
if ! grep -q "No space left on device" "$logs/err.txt"; then echo "FAIL: the error does not name the full disk:"; tail -3 "$logs/err.txt"; exit 1; fi
last=$(od -An -t d4 "$logs/acked.bin" | tr -s ' ' '\n' | grep -v '^$' | tail -1)
echo "writer stopped with: $(grep -o 'H5FD_journal_[a-z_]*(): .*' "$logs/err.txt" | head -1)"
echo "last acknowledged step: $last"
timeout 60 "$sim" verify full.h5 --elems 16384 --io "$io" --min-step "$last" --max-step $((last + 1)) || { echo "FAIL: read-only recovery"; exit 1; }
if ! timeout 60 "$sim" verify full.h5 --elems 16384 --io "$io" --min-step "$last" --max-step $((last + 1)) \
     --read-write 2> "$logs/recover.txt"; then
  grep -q "No space left on device" "$logs/recover.txt" || { echo "FAIL: read-write recovery:"; tail -3 "$logs/recover.txt"; exit 1; }
  echo "read-write recovery on the full disk: refused for want of room, nothing lost"
  timeout 60 "$sim" verify full.h5 --elems 16384 --io "$io" --min-step "$last" --max-step $((last + 1)) ||
    { echo "FAIL: read-only recovery after the refused read-write one"; exit 1; }
  mount -o remount,size=16m "$dir" || { echo "FAIL: cannot make room"; exit 1; }
  timeout 60 "$sim" verify full.h5 --elems 16384 --io "$io" --min-step "$last" --max-step $((last + 1)) --read-write ||
    { echo "FAIL: read-write recovery once there is room"; exit 1; }
fi
[[ ! -e full.h5.jnl ]] || { echo "FAIL: journal left after recovery and close"; exit 1; }
timeout 60 "$sim" verify full.h5 --elems 16384 --driver sec2 --min-step "$last" --max-step $((last + 1)) || { echo "FAIL: plain HDF5 read"; exit 1; }
echo "full disk: error reported, step $last and all before it intact ($io engine)"
