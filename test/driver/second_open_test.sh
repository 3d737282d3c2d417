#!/usr/bin/env bash
# A second read-write open of a file another process is writing through
# the driver is refused at open, with a lock error that names the writer's
# PID and carries errno 11 (EWOULDBLOCK).  So is a second copy of the job,
# H5Fcreate with H5F_ACC_TRUNC, and it must not truncate the file first: the
# writer's committed in-place bytes are in it.  The writer then goes on and
# closes a file h5dump reads and that holds everything it wrote.
# The same opens by another name of the file (a symbolic link), with
# HDF5_USE_FILE_LOCKING=FALSE, are refused too, naming the writer; once it
# is killed, an open by that name is refused until h5recover runs.
# The same H5Fcreate of a file that a program writes without the driver
# (HDF5's file lock, sec2) is refused too, naming the lock's holder, and
# leaves that file whole.
# A program that writes two files at once, with a journal_path naming one
# file in HDF5_DRIVER_CONFIG, finds the first file's journal at the second's
# create: refused, naming the first file, and the first goes on to close a
# whole file.
# The same H5Fcreate through sec2 over a file the driver writes, whatever
# HDF5_USE_FILE_LOCKING says, finds the file without write permission and
# changes nothing; after the writer is killed, h5recover brings the file
# back to its last commit and gives its write permission back.
set -euo pipefail
program=$1 plugin_dir=$2 h5dump=$3 work=$4 h5recover=$5
mkdir -p "$work"
cd "$work"
rm -f ./*.h5 ./*.jnl ./fifo ./fifo2 ./fifo3 ./fifo_alias
export HDF5_PLUGIN_PATH="$plugin_dir" HDF5_DRIVER=journal
# start_writer FILE FIFO [env args]: "$program hold FILE" in the background,
# reading FIFO; returns once it has committed, with its PID in $writer and
# the FIFO's write end, which lets it go on, in $writer_fd.
start_writer() {
  local file=$1 fifo=$2
  shift 2
  mkfifo "$fifo"
  env "$@" "$program" hold "$file" < "$fifo" > "$file.out" &
  writer=$!
  exec {writer_fd}> "$fifo"
  for _ in $(seq 100); do grep -q ready "$file.out" 2> /dev/null && return 0; sleep 0.1; done
  echo "FAIL: the writer of $file did not commit"
  exit 1
}
# refused WHAT FILE PATTERN ERRNO CMD...: CMD, a second open of FILE that
# exits 0 when it is refused, must be refused with HDF5's error naming
# PATTERN and carrying ERRNO, and leave FILE's size as it was.
refused() {
  local what=$1 file=$2 pattern=$3 errno=$4 size after
  shift 4
  size=$(stat -c %s "$file")
  "$@" > refused.txt 2>&1 || { echo "FAIL: $what was not refused"; cat refused.txt; exit 1; }
  grep -q "$pattern" refused.txt || { echo "FAIL: the refusal of $what does not say '$pattern'"; cat refused.txt; exit 1; }
  grep -q "errno = $errno" refused.txt || { echo "FAIL: the refusal of $what carries no errno $errno"; cat refused.txt; exit 1; }
  after=$(stat -c %s "$file")
  [ "$after" = "$size" ] || { echo "FAIL: $what changed $file from $size to $after bytes"; exit 1; }
}
start_writer held.h5 fifo
holder=$writer holder_fd=$writer_fd
for how in open create; do
  refused "the second $how" held.h5 "held.h5 is open for writing through h5journal by process $holder" 11 \
    "$program" $how held.h5
  echo "$how refused, the file left at $(stat -c %s held.h5) bytes: $(grep -o 'held.h5 is open[^,]*' refused.txt | head -1)"
done
echo go >&"$holder_fd"
exec {holder_fd}>&-
wait "$holder" || { echo "FAIL: the writer failed after the refused open"; exit 1; }
env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$h5dump" -H held.h5 | grep -q 'DATASET "second"' ||
  { echo "FAIL: the writer's file lacks its last write"; exit 1; }
env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$program" check held.h5 ||
  { echo "FAIL: the writer's file lost committed data"; exit 1; }
echo "the writer went on and closed a file h5dump reads, with everything it wrote"

# The same file under another name (a symbolic link) has another journal,
# so that journal's lock cannot refuse the second writer, nor HDF5's lock
# where HDF5_USE_FILE_LOCKING=FALSE: the binding, which names the first
# writer's journal, does.  After that writer is killed, an open by the
# other name is refused until the file is recovered.
rm -f target.h5* alias.h5*
ln -s target.h5 alias.h5
start_writer alias.h5 fifo_alias
aliased=$writer aliased_fd=$writer_fd
for how in open create; do
  refused "the second $how by another name" target.h5 \
    "target.h5 is open for writing through h5journal by process $aliased under another name or journal_path" 11 \
    env HDF5_USE_FILE_LOCKING=FALSE "$program" $how target.h5
done
echo "open and create by another name refused: $(grep -o 'target.h5 is open[^,]*' refused.txt | head -1)"
kill -9 "$aliased"
wait "$aliased" 2> /dev/null || true
exec {aliased_fd}>&-
"$program" open target.h5 > refused.txt 2>&1 || { echo "FAIL: an open by another name of the killed writer's file was not refused"; exit 1; }
grep -q "target.h5 was being written through h5journal under another name or journal_path" refused.txt ||
  { echo "FAIL: the open by another name after the kill does not say why"; cat refused.txt; exit 1; }
"$h5recover" target.h5 > /dev/null || { echo "FAIL: h5recover by the other name failed"; exit 1; }
env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$program" committed target.h5 ||
  { echo "FAIL: the file written by another name lost its commit"; exit 1; }
echo "after the kill, refused by the other name until h5recover brought back its last commit"

# A writer without the driver: HDF5's own flock on the file.
start_writer plain.h5 fifo2 -u HDF5_DRIVER
plain=$writer plain_fd=$writer_fd
refused "H5Fcreate over a file HDF5 has locked" plain.h5 \
  "unable to lock the file: $(pwd -P)/plain.h5 is in use: process $plain holds its lock" 11 "$program" create plain.h5
after=$(stat -c %s plain.h5)
[ ! -e plain.h5.jnl ] || { echo "FAIL: the refused create left a journal"; exit 1; }
echo "create over a file sec2 writes refused, file left at $after bytes: $(grep -o 'unable to lock the file[^,]*' refused.txt | head -1)"
echo go >&"$plain_fd"
exec {plain_fd}>&-
wait "$plain" || { echo "FAIL: the writer without the driver failed after the refused create"; exit 1; }
env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$program" check plain.h5 ||
  { echo "FAIL: the sec2 writer's file lost data"; exit 1; }
echo "the writer without the driver went on and closed a whole file"

# A program without the driver over a file the driver writes.  The kernel
# truncates at open(O_TRUNC), before HDF5 asks for its lock, so only the
# file's missing write permission can stop it.  Root ignores permission
# bits: here the writer, the misuser and h5recover run without
# CAP_DAC_OVERRIDE, as every other user does.
as_user=()
[ "$(id -u)" != 0 ] || as_user=(setpriv --bounding-set=-dac_override,-dac_read_search --)
start_writer prot.h5 fifo3 "${as_user[@]}"
prot=$writer prot_fd=$writer_fd  # it never gets its "go": it is killed below
size=$(stat -c %s prot.h5)
mode=$(stat -c %a prot.h5)
[ "$mode" = 444 ] || { echo "FAIL: the file the driver writes has mode $mode, not 444"; exit 1; }
for locking in TRUE FALSE BEST_EFFORT; do
  refused "H5Fcreate through sec2 (HDF5_USE_FILE_LOCKING=$locking)" prot.h5 "error message = 'Permission denied'" 13 \
    env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH HDF5_USE_FILE_LOCKING=$locking "${as_user[@]}" "$program" create prot.h5
done
echo "H5Fcreate through sec2 refused (EACCES) under each HDF5_USE_FILE_LOCKING; the file stays at $size bytes"
kill -9 "$prot"
wait "$prot" 2> /dev/null || true
exec {prot_fd}>&-
"${as_user[@]}" "$h5recover" prot.h5 || { echo "FAIL: h5recover failed on the killed writer's file"; exit 1; }
env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$program" committed prot.h5 ||
  { echo "FAIL: the recovered file lacks the writer's last commit"; exit 1; }
mode=$(stat -c %a prot.h5) created=$(printf '%o' $((0666 & ~$(umask))))
[ "$mode" = "$created" ] || { echo "FAIL: after recovery the file has mode $mode, not $created"; exit 1; }
echo "after the writer was killed, h5recover brought back its last commit and mode $mode"

# A journal_path naming one file serves every file the program opens: the
# second file's create finds the first's journal locked by this process, as
# HDF5's tentative second open of the first would, and must be refused.
rm -f one.h5* shared.jnl*
HDF5_DRIVER_CONFIG="journal_path=$PWD/shared.jnl" "$program" two one.h5 > refused.txt 2>&1 ||
  { echo "FAIL: the second file's create beside a shared journal_path was not refused"; cat refused.txt; exit 1; }
grep -q 'shared.jnl is the journal of "one.h5", which this process has open for writing' refused.txt ||
  { echo "FAIL: the refused create does not name the file the journal is for"; cat refused.txt; exit 1; }
grep -q "errno = 11" refused.txt || { echo "FAIL: the refused create carries no errno 11"; cat refused.txt; exit 1; }
[ ! -e one.h5.second.h5 ] || { echo "FAIL: the refused create left one.h5.second.h5"; exit 1; }
env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$program" check one.h5 ||
  { echo "FAIL: the first file lost data after the second's refused create"; exit 1; }
echo "a second file's create on the first's journal refused:" \
  "$(grep -o 'one.h5.second.h5 not opened[^.]*' refused.txt | head -1)"
