#!/usr/bin/env bash
# Times recovery from a cached journal: h5recover, and open-time recovery
# (a read-write open through the driver, which replays and closes).
# Usage: bench/recovery_speed.sh BUILD_DIR [MiB ...]   (default: 64 1024)
set -euo pipefail
build=$1
shift
sizes=("${@:-64 1024}")
[[ $# -eq 0 ]] && sizes=(64 1024)
dir=$(mktemp -d "${TMPDIR:-/tmp}/h5j-recovery-speed.XXXXXX")
trap 'rm -rf "$dir"' EXIT
echo "| journal | h5recover | replay rate | open-time recovery |"
echo "|---:|---:|---:|---:|"
for mib in "${sizes[@]}"; do
  # Two crashed pairs (a copy would lose the journal's binding attribute).
  "$build/bench/make_journal" "$dir/r.h5" --mib "$mib"
  "$build/bench/make_journal" "$dir/o.h5" --mib "$mib"
  jbytes=$(stat -c %s "$dir/r.h5.jnl")
  cat "$dir/r.h5.jnl" "$dir/o.h5.jnl" > /dev/null  # cached
  t0=$(date +%s.%N); "$build/recovery_tool/h5recover" -q "$dir/r.h5"; t1=$(date +%s.%N)
  t2=$(date +%s.%N); "$build/bench/open_recover" "$dir/o.h5"; t3=$(date +%s.%N)
  [[ ! -e "$dir/o.h5.jnl" ]] || { echo "open-time recovery left the journal"; exit 1; }
  python3 -c "import sys; j,a,b,c,d=map(float,sys.argv[1:]); print(f'| {j/2**20:.0f} MiB | {b-a:.3f} s | {j/(b-a)/1e9:.2f} GB/s | {d-c:.3f} s |')" \
    "$jbytes" "$t0" "$t1" "$t2" "$t3"
  rm -f "$dir"/*
done
