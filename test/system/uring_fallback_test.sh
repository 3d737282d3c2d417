#!/usr/bin/env bash
# Where io_uring is refused (seccomp EPERM, as in Docker): io_engine=auto falls
# back to pwrite and works; io_engine=uring fails with a message naming io_uring.
set -uo pipefail
refuse=$1 sim=$2 work=$3
no_uring() { "$refuse" io_uring "$@"; }
mkdir -p "$work" && cd "$work" && rm -f fb.h5*
no_uring "$sim" write fb.h5 --steps 30 --io auto || { echo "FAIL: auto did not fall back"; exit 1; }
no_uring "$sim" verify fb.h5 --io auto --min-step 29 || { echo "FAIL: verify after fallback"; exit 1; }
out=$(no_uring "$sim" write fb2.h5 --steps 3 --io uring 2>&1) && { echo "FAIL: io_engine=uring worked without io_uring?"; exit 1; }
grep -q "io_uring setup" <<<"$out" || { echo "FAIL: the error does not name io_uring:"; echo "$out" | tail -3; exit 1; }
echo "fallback ok; forced uring fails with: $(grep -o 'io_uring setup[^;]*' <<<"$out" | head -1)"
