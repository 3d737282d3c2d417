#!/usr/bin/env bash
# A bad HDF5_DRIVER_CONFIG makes the open fail with an HDF5 error that names
# the key or value; this also proves HDF5_DRIVER=journal reaches the driver.
set -uo pipefail
features=$1 plugin_dir=$2 work=$3
mkdir -p "$work" && cd "$work" && rm -f cfg.h5*
export HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal
status=0
expect_failure() {  # config, text the error must contain
  local out
  out=$(HDF5_DRIVER_CONFIG="$1" "$features" cfg.h5 --fapl default 2>&1) && { echo "FAIL: '$1' was accepted"; status=1; return; }
  if grep -qF -- "$2" <<<"$out"; then echo "ok: '$1' -> $2"; else echo "FAIL: '$1' error lacks '$2':"; echo "$out" | tail -5; status=1; fi
}
expect_failure "ring_bufers=3" 'unknown key "ring_bufers"'
expect_failure "ring_buffers=1" "ring_buffers must be from 2 to 1024"
expect_failure "io_engine=fast" 'bad value "fast" for io_engine'
expect_failure "raw=both" 'bad value "both" for raw'
expect_failure "materialize=later" 'bad value "later" for materialize'
expect_failure "buffer_size=12Q" 'bad value "12Q" for buffer_size'
expect_failure "durable" '"durable" has no value'
expect_failure "durable=0ms" 'bad value "0ms" for durable (expected true, false, or an interval from 1ms to 1h'
expect_failure "durable=2h" 'bad value "2h" for durable'
expect_failure "durable=100" 'bad value "100" for durable'
expect_failure "journal_path=$work/no-such-dir/" "the journal's directory $work/no-such-dir does not exist (journal_path)"
# A journal_path naming a file of the user's, or the file itself: refused,
# and nothing written to it.
seq 1 1000 > notes.txt
expect_failure "journal_path=$work/notes.txt" "names a file that is not a journal"
seq 1 1000 | cmp -s - notes.txt || { echo "FAIL: a journal_path naming notes.txt changed it"; status=1; }
[[ -e notes.txt.readers ]] && { echo "FAIL: the refused open left notes.txt.readers behind"; status=1; }
expect_failure "journal_path=$work/cfg.h5" "journal_path $work/cfg.h5 names the file itself"
# One that is no regular file: a directory not ended by '/', and a FIFO, as
# /dev/null, given to do without a journal, is a device: a close would have
# unlinked it.
expect_failure "journal_path=$work" \
  "journal_path $work is a directory, where a journal is a regular file; end it with '/'"
rm -f fifo && mkfifo fifo
expect_failure "journal_path=$work/fifo;durable=false" "is a FIFO, where a journal is a regular file"
[[ -p fifo ]] || { echo "FAIL: the refused open removed the FIFO journal_path named"; status=1; }
# As sec2's failed open(O_CREAT), a failed create leaves no file behind.
[[ -e cfg.h5 ]] && { echo "FAIL: the failed create left cfg.h5 behind"; status=1; }
# A durable journal on tmpfs beside a file on a disk is refused; beside a
# file on tmpfs too, which no reboot keeps either, it is not.
if [[ $(stat -f -c %T "$work") != tmpfs ]]; then
  expect_failure "journal_path=/dev/shm/" "would be on tmpfs, which a reboot empties, while $(pwd -P)/cfg.h5 is not"
else
  HDF5_DRIVER_CONFIG="journal_path=/dev/shm/" "$features" cfg.h5 --fapl default > /dev/null ||
    { echo "FAIL: a journal on tmpfs beside a file on tmpfs was refused"; status=1; }
fi
HDF5_DRIVER_CONFIG="journal_path=/dev/shm/;durable=false" "$features" cfg.h5 --fapl default > /dev/null ||
  { echo "FAIL: durable=false with its journal on tmpfs was refused"; status=1; }
# And a good configuration works.
HDF5_DRIVER_CONFIG=" io_engine = sync ;; durable=false; checkpoint_bytes=1M; recovery=refuse;" \
  "$features" cfg.h5 --fapl default > /dev/null || { echo "FAIL: good config rejected"; status=1; }
HDF5_DRIVER_CONFIG="durable=1h" "$features" cfg.h5 --fapl default > /dev/null ||
  { echo "FAIL: durable=1h, the longest interval, rejected"; status=1; }
exit $status
