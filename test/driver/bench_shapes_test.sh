#!/usr/bin/env bash
# Every shape the benchmark writes (strided small elements in each layout,
# the time series at several step sizes, a checkpoint written in parts,
# h5bench's particle patterns)
# gives a file h5diff finds identical to sec2's, through the journal in
# each raw mode, and leaves no journal behind.  Small sizes: this checks
# bytes, not speed.
set -euo pipefail
bench=$1 h5diff=$2 work=$3
mkdir -p "$work"
cd "$work"
rm -f ./*.h5 ./*.jnl ./*.data

configs=("io_engine=uring" "io_engine=sync" "raw=log" "raw=auto" "durable=false")
check() {  # check NAME ARGS...: sec2's file against each journal configuration's
  local name=$1
  shift
  "$bench" "$@" "$name.sec2.h5" --driver sec2 > /dev/null
  local i=0
  for config in "${configs[@]}"; do
    "$bench" "$@" "$name.$i.h5" --driver journal --config "$config" > /dev/null
    if ls "$name.$i.h5.jnl" 2>/dev/null; then echo "FAIL: journal left behind ($name, $config)"; exit 1; fi
    if ! "$h5diff" "$name.sec2.h5" "$name.$i.h5"; then echo "FAIL: $name with $config differs from sec2"; exit 1; fi
    i=$((i + 1))
  done
  echo "identical to sec2: $name ($*)"
}

for stride in 2 4 16 64; do
  check "contiguous$stride" strided --elements 65536 --stride "$stride" --layout contiguous
  check "chunked$stride" strided --elements 262144 --stride "$stride" --layout chunked
done
check columns strided --elements 131072 --layout columns
for kib in 8 64 256 1024; do
  check "w4_$kib" w4 --steps 12 --step-kib "$kib"
done
check parts parts --mib 8 --pieces 8
# h5bench's patterns write a file a process (FILE.0, FILE.1): two processes
# through each configuration, each file against sec2's.
for pattern in "CC 1" "CC 2" "CC 3" "CI 1" "IC 1" "II 1" "CS 1"; do
  read -r layout dims <<<"$pattern"
  name="particles_$layout$dims"
  args=(particles --layout "$layout" --dims "$dims" --particles 4096 --timesteps 2)
  "$bench" "${args[@]}" "$name.sec2.h5" --driver sec2 > /dev/null
  i=0
  for config in "${configs[@]}"; do
    "$bench" "${args[@]}" "$name.$i.h5" --driver journal --config "$config" --processes 2 > /dev/null
    for p in 0 1; do
      if ls "$name.$i.h5.$p.jnl" 2>/dev/null; then echo "FAIL: journal left behind ($name, $config)"; exit 1; fi
      if ! "$h5diff" "$name.sec2.h5.0" "$name.$i.h5.$p"; then echo "FAIL: $name with $config differs from sec2"; exit 1; fi
    done
    i=$((i + 1))
  done
  echo "identical to sec2: $name (${args[*]})"
done
