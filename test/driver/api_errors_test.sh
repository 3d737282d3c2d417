#!/usr/bin/env bash
# h5journal.h's functions report errors as HDF5's do (test/driver/api_errors.c):
# printed, naming the problem, unless the program turned printing off.
set -uo pipefail
program=$1 work=$2
mkdir -p "$work" && cd "$work" && rm -f api.h5*
status=0
out=$("$program" print api.h5 2>&1) || { echo "FAIL: $out"; exit 1; }
for text in "H5Pset_fapl_journal(): h5journal configuration: ring_buffers must be from 2 to 1024" \
            "H5Pget_fapl_journal(): the file access property list does not use the journal driver" \
            "H5Fget_journal_stats(): the file is not open through the journal driver" \
            "H5Fwait_journal_durable(): the file is not open through the journal driver"; do
  if grep -qF -- "$text" <<<"$out"; then echo "ok: $text"; else echo "FAIL: not printed: $text"; status=1; fi
done
quiet=$("$program" quiet api.h5 2>&1 > /dev/null) || { echo "FAIL: quiet run"; exit 1; }
[[ -z $quiet ]] || { echo "FAIL: printed with HDF5's handler off:"; echo "$quiet"; status=1; }
exit $status
