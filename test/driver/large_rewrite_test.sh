#!/usr/bin/env bash
# A dataset of MIB MiB rewritten whole in one H5Dwrite (large_rewrite.c):
# the rewrite is journaled in records of at most 64 MiB, all in one
# transaction (design.md §3).  With MIB past 1024 (the long budget) it is
# larger than the format's largest record (kMaxPayload, 1 GiB), which no
# single record could take.
#  - killed after the rewrite's commit, with no checkpoint to write it into
#    the file: h5recover replays it, and plain HDF5 reads the rewrite;
#  - closed under durable=100ms: the close writes it into the file.
set -uo pipefail
program=$1 plugin_dir=$2 h5recover=$3 work=$4 mib=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL: $*"; exit 1; }
through_driver() { HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="$1" "${@:2}"; }

through_driver "checkpoint_bytes=1T" "$program" write killed.h5 "$mib" kill 2> killed.err
grep -q "rewrite committed" killed.err || { cat killed.err; fail "the rewrite of $mib MiB did not commit"; }
"$h5recover" killed.h5 > recover.out || { cat recover.out; fail "h5recover"; }
grep -q "replayed 2 committed" recover.out || { cat recover.out; fail "h5recover did not replay both commits"; }
"$program" check killed.h5 "$mib" || fail "after recovery the file does not hold the rewrite"
echo "killed after a rewrite of $mib MiB: $(cat recover.out)"
rm -f killed.h5*

through_driver "durable=100ms" "$program" write closed.h5 "$mib" 2> closed.err || { cat closed.err; fail "write and close"; }
[[ ! -e closed.h5.jnl ]] || fail "the close left its journal"
"$program" check closed.h5 "$mib" || fail "the closed file does not hold the rewrite"
echo "closed under durable=100ms after a rewrite of $mib MiB: the file holds it"
rm -f closed.h5*
