#!/usr/bin/env bash
# h5recover: every exit status and every bad input.  Each case asserts the
# exit status, that the one-line message names the problem, and that the
# files are unchanged unless recovery is sound.
set -uo pipefail
recover=$1 sim=$2 tamper=$3 h5bin=$4 work=$5 plugin=$6 second_open=$7 bench=$8 exiting_holder=$9
sparse_writer=${10}
if [[ "${INSIDE_NS:-}" != 1 ]]; then  # private mount namespace for the tmpfs cases
  if [[ $(id -u) == 0 ]]; then exec unshare -m env INSIDE_NS=1 "$0" "$@"; fi
  exec unshare -rm env INSIDE_NS=1 "$0" "$@"
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work"
failures=0 cases=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# The journal's valid records of TYPE, as h5recover --list gives them:
# OFFSET TYPE TXN ADDRESS LENGTH BYTES_AT CRC ... (recovery_tool/journal_listing.h).
records() { "$recover" "$1" --list | awk -v type="$2" '$2 == type && $7 == "ok"'; }
# Where a journal's records end (the writer writes zeros ahead of them).
records_end() { "$recover" "$1" --list | sed -n 's/^summary: .*records end at \([0-9]*\).*/\1/p'; }
# Overwrites 8 bytes of the data of the WRITE record nearest the middle of
# the journal's records (one of at least 8 bytes).
damage_middle_record() {
  local at
  at=$(records "$1" WRITE | awk '$5 >= 8 {a[++n] = $6} END {print a[int((n + 1) / 2)]}')
  printf 'XXXXXXXX' | dd of="$1" bs=1 seek="$at" conv=notrunc 2> /dev/null
}
# The mode a new file gets here, and a file's mode.
created_mode=$(printf '%o' $((0666 & ~$(umask))))
mode() { stat -c %a "$1"; }
fingerprint() { for f in "$@"; do [[ -e $f ]] && sha256sum "$f" | cut -c1-16 || echo "absent"; done; }

# expect STATUS TEXT UNCHANGED(yes|no) -- h5recover args...; files to watch in $WATCH
expect() {
  local want=$1 text=$2 unchanged=$3
  shift 4
  local before after out status
  before=$(fingerprint $WATCH)
  out=$("$recover" "$@" 2>&1)
  status=$?
  after=$(fingerprint $WATCH)
  cases=$((cases + 1))
  local problem=""
  [[ $status == "$want" ]] || problem="exit $status, expected $want"
  grep -qiF -- "$text" <<<"$out" || problem="$problem; message lacks '$text'"
  [[ $unchanged != yes || "$before" == "$after" ]] || problem="$problem; files changed"
  if [[ -n $problem ]]; then
    echo "FAIL h5recover $*: $problem"
    echo "$out" | sed 's/^/    /' | head -5
    failures=$((failures + 1))
  else
    echo "ok   [$status] h5recover $* -> $(head -1 <<<"$out" | cut -c1-110)"
  fi
}

# A file whose writer was killed between commits, after about 12 of them.
crashed() {  # NAME [more writer options]; ACKS: steps acknowledged before the kill (12)
  # The acks go too: the wait below must not read the last writer's, which
  # a loaded machine may show it before this writer's shell truncates them.
  rm -f "$1" "$1.jnl" "$1.jnl.data" "$1.acked"
  "$sim" write "$1" --steps 100000 --elems "${ELEMS:-512}" --delay-us 20000 --report-fd 3 "${@:2}" 3> "$1.acked" &
  local pid=$!
  while [[ $(stat -c %s "$1.acked" 2>/dev/null || echo 0) -lt $((4 * ${ACKS:-12})) ]]; do sleep 0.02; done
  kill -9 $pid
  wait $pid 2> /dev/null
}
last_acked() { od -An -t d4 "$1.acked" | tr -s ' ' '\n' | grep -v '^$' | tail -1; }
# hold MODE NAME: "second_open MODE NAME" through the driver, waiting once
# ready, its PID in $held_pid and its FIFO's write end in $held_fd.
hold() {
  rm -f "$2" "$2.jnl" "$2.out" "$2.fifo"
  mkfifo "$2.fifo"
  HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal "$second_open" "$1" "$2" < "$2.fifo" > "$2.out" &
  held_pid=$!
  exec {held_fd}> "$2.fifo"
  for _ in $(seq 100); do grep -q ready "$2.out" 2> /dev/null && break; sleep 0.1; done
  rm -f "$2.fifo" "$2.out"
}
# unflushed NAME: a writer killed before its first commit (never committed).
unflushed() {
  hold unflushed "$1"
  kill -9 $held_pid
  wait $held_pid 2> /dev/null
  exec {held_fd}>&-
}

# --- usage ------------------------------------------------------------------
WATCH=""
expect 2 "FILE is required" no --
expect 2 "--mode" no -- x.h5 --mode fastest
"$sim" write clean.h5 --steps 3 --elems 64 > /dev/null
WATCH="clean.h5"

# --- files that are not recoverable, or need nothing --------------------------
expect 0 "clean: clean.h5 needs no recovery" yes -- clean.h5
expect 0 "clean" yes -- clean.h5 --check
expect 0 "clean" yes -- clean.h5 --dry-run
expect 3 "no such file" no -- missing.h5
mkdir -p adir
expect 3 "is a directory" no -- adir
echo "not hdf5" > text.h5
WATCH="text.h5"
expect 3 "not an HDF5 file" yes -- text.h5
head -c 3000 clean.h5 > cut.h5
WATCH="cut.h5"
expect 3 "truncated" yes -- cut.h5

# --- journals that are missing, foreign, old, or damaged ----------------------
crashed a.h5
crashed b.h5
WATCH="a.h5 a.h5.jnl"
mv a.h5.jnl a.h5.jnl.away
expect 4 "a.h5.jnl is missing" yes -- a.h5

# materialize=never: closed in log form, which plain HDF5 refuses to read and
# h5recover --materialize turns into a plain file.
log_form() {  # NAME: a file closed in log form
  rm -f "$1" "$1.jnl" "$1.jnl.data"
  HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="materialize=never;raw=log" \
    "$sim" write "$1" --driver default --steps 5 --elems 512 > /dev/null
}
log_form nv.h5
if "$h5bin/h5dump" -H nv.h5 > /dev/null 2>&1; then
  echo "FAIL materialize=never: plain h5dump read a file in log form"; failures=$((failures + 1))
fi
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal "$sim" verify nv.h5 --driver default --elems 512 --min-step 4 > /dev/null ||
  { echo "FAIL materialize=never: the driver cannot read the file in log form"; failures=$((failures + 1)); }
expect 2 "not in log form" yes -- clean.h5 --materialize
expect 0 "materialized nv.h5" no -- nv.h5 --materialize
"$sim" verify nv.h5 --driver sec2 --elems 512 --min-step 4 > /dev/null ||
  { echo "FAIL materialize=never: plain HDF5 cannot read the materialized file"; failures=$((failures + 1)); }
log_form nv2.h5
rm nv2.h5.jnl
WATCH="nv2.h5"
expect 4 "closed in log form" yes -- nv2.h5
WATCH=""

# A file with a user block keeps its superblock past it, at 4096 here, and
# the guard goes there, from the first commit (a durable writer writes the
# journaled superblock back early): under each durability HDF5 without the driver
# refuses the crashed file (with durable=false it would read the last
# checkpoint's metadata over data written in place since), the user block
# is left as it was, and h5recover brings back every acknowledged step.
for durability in "" --no-durable; do
  ACKS=6 crashed ub.h5 --userblock 4096 $durability
  cases=$((cases + 1))
  [[ $(od -An -tx1 -j 4104 -N 1 ub.h5) == " 8"[0-3] ]] ||
    fail "user block ${durability:-durable}: the superblock's version byte is not guarded: $(od -An -tx1 -j 4104 -N 1 ub.h5)"
  [[ -z $(od -An -v -tx1 -N 4096 ub.h5 | tr -d ' 0\n') ]] || fail "user block ${durability:-durable}: the user block changed"
  "$h5bin/h5dump" -H ub.h5 > ub.txt 2>&1 && fail "user block ${durability:-durable}: h5dump without the driver read the crashed file"
  WATCH=""
  expect 0 "recovered ub.h5" no -- ub.h5
  "$sim" verify ub.h5 --driver sec2 --elems 512 --min-step "$(last_acked ub.h5)" > /dev/null ||
    fail "user block ${durability:-durable}: plain HDF5 does not read every acknowledged step after h5recover"
done

# raw=log: recovered with its data log; without it, named and refused.
crashed dl.h5 --raw log
cp dl.h5.jnl.data dl.h5.jnl.data.good
WATCH="dl.h5 dl.h5.jnl"
rm dl.h5.jnl.data
expect 4 "data log" yes -- dl.h5
mv dl.h5.jnl.data.good dl.h5.jnl.data
WATCH=""
expect 0 "recovered dl.h5" no -- dl.h5
[[ ! -e dl.h5.jnl.data ]] || { echo "FAIL raw=log: data log left after recovery"; failures=$((failures + 1)); }
mv a.h5.jnl.away a.h5.jnl
cp b.h5.jnl foreign.jnl
expect 5 "belongs to another file" yes -- a.h5 --journal foreign.jnl
expect 2 "give --output" yes -- a.h5 --mode salvage
# An older generation: a crash after several checkpoints, with the journal's
# header rolled back to generation 1 (sealed again, so it validates).
crashed g.h5 --checkpoint-bytes 65536
"$tamper" set-generation g.h5.jnl 1 > /dev/null
WATCH="g.h5 g.h5.jnl"
expect 5 "is older than" yes -- g.h5
WATCH="a.h5 a.h5.jnl"
mkdir -p jdir
expect 7 "not a regular file" yes -- a.h5 --journal jdir
cp a.h5.jnl a.h5.jnl.good
printf 'garbage!' | dd of=a.h5.jnl bs=1 seek=2048 conv=notrunc 2> /dev/null
printf 'garbage!' | dd of=a.h5.jnl bs=1 seek=0 conv=notrunc 2> /dev/null
expect 6 "journal header" yes -- a.h5
cp a.h5.jnl.good a.h5.jnl

# A record damaged in the middle: --list shows where the stream breaks, and
# the records that follow it.
damage_middle_record a.h5.jnl
listed=$("$recover" a.h5 --list)
cases=$((cases + 1))
grep -q '^[0-9]* DAMAGED - - - - bad record checksum mismatch$' <<<"$listed" &&
  grep -A1 ' DAMAGED ' <<<"$listed" | tail -1 | grep -q '^[0-9]* [A-Z]* [0-9]* .* ok' ||
  { echo "FAIL --list: no DAMAGED line, or no records after it"; failures=$((failures + 1)); }
expect 6 "journal damaged" yes -- a.h5 --mode strict
expect 6 "damaged in the middle" yes -- a.h5 --mode tolerate-tail
expect 0 "recovered salvaged.h5" yes -- a.h5 --mode salvage --output salvaged.h5
# The default mode stops at the damage, and durable commits follow it: a
# recovery in place, which would retire the journal, is refused, and so is
# --check; into a copy, it recovers the file as it was before the damage.
expect 6 "committed transaction(s)" yes -- a.h5
expect 6 "--mode salvage --output COPY" yes -- a.h5 --check
expect 6 "follow it" yes -- a.h5 --dry-run
expect 0 "left out transaction" yes -- a.h5 --output before-damage.h5
"$sim" verify before-damage.h5 --elems 512 --driver sec2 > /dev/null ||
  fail "the copy recovered to the damage does not verify"
[[ $("$recover" a.h5 --output before-damage-2.h5 --json | python3 -c \
  'import json,sys; print(json.load(sys.stdin)["committed_transactions_left_out"] > 1)') == True ]] ||
  fail "--json does not count the committed transactions left out past the damage"
# A killed writer leaves its file write-protected; recovery gives the
# permission back (docs/recovery.md).
[[ $(mode a.h5) == 444 ]] || fail "a killed writer's a.h5 has mode $(mode a.h5), not 444"
[[ $(mode salvaged.h5) == "$created_mode" ]] || fail "the salvaged copy has mode $(mode salvaged.h5)"
cp a.h5.jnl.good a.h5.jnl
expect 1 "recovery needed" yes -- a.h5 --check
WATCH=""
expect 0 "recovered a.h5" no -- a.h5
[[ $(mode a.h5) == "$created_mode" ]] || fail "recovered a.h5 has mode $(mode a.h5), not $created_mode"

# A torn tail: the journal cut inside its last transaction.
crashed t.h5
WATCH="t.h5 t.h5.jnl"
size=$(records_end t.h5.jnl)
truncate -s $((size - 100)) t.h5.jnl
expect 6 "journal damaged" yes -- t.h5 --mode strict
WATCH=""
expect 0 "recovered t.h5" no -- t.h5 --mode tolerate-tail
"$sim" verify t.h5 --elems 512 --driver sec2 --min-step $(( $(last_acked t.h5) - 1 )) > /dev/null ||
  { echo "FAIL torn tail: recovered file lost more than the torn transaction"; failures=$((failures + 1)); }

# A zero-filled tail: the file system extended the journal, but the bytes of
# the next transaction never reached the disk.  (The writer's own zeros ahead
# of its records make one too.)
crashed z.h5
truncate -s +16384 z.h5.jnl
expect 0 "recovered z.h5" no -- z.h5 --mode strict

# An empty journal: created, never written.  The writer kept everything
# in the journal (its base is empty), so nothing committed can be found:
# the file is reported as never committed and left as it is.
crashed e.h5
: > e.h5.jnl
: > e.h5
WATCH="e.h5 e.h5.jnl"
expect 9 "never committed" yes -- e.h5
WATCH=""

# A journal kept elsewhere (journal_path=DIR/): found through the path the
# file records in its binding attribute.
mkdir -p elsewhere
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="journal_path=$work/elsewhere/" \
  crashed x.h5 --driver default
compgen -G "elsewhere/x.h5.*.jnl" > /dev/null && [[ ! -e x.h5.jnl ]] ||
  fail "journal_path: the journal is not where configured: $(ls elsewhere)"
expect 0 "recovered x.h5" no -- x.h5
[[ -z $(ls elsewhere) ]] || fail "journal_path: the journal was not retired: $(ls elsewhere)"

# Copies of a crashed file that kept its extended attributes (cp -a), in
# its directory and in another, carry its binding, which names its journal.
# h5recover of a copy, with or without --discard-journal, and an open of a
# copy through the driver are refused, naming the file the binding was set
# on, and leave that journal alone: the file itself then recovers whole.
mkdir -p copies
crashed orig.h5
cp -a orig.h5 copies/orig.h5
cp -a orig.h5 orig-copy.h5
cp orig.h5 plain-copy.h5
WATCH="orig.h5 orig.h5.jnl"
expect 5 "orig.h5, copied with its extended attributes (cp -a" yes -- copies/orig.h5
expect 5 "orig.h5, copied with its extended attributes (cp -a" yes -- --discard-journal orig-copy.h5
expect 5 "orig.h5, copied with its extended attributes (cp -a" yes -- -r copies
# A copy without them (cp, scp) has no journal, but its guarded superblock
# says where its commits are.
WATCH="plain-copy.h5"
expect 4 "is a copy taken while it was (its superblock is guarded)" yes -- plain-copy.h5
WATCH="orig.h5 orig.h5.jnl"
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal "$sim" verify copies/orig.h5 --driver default --elems 512 \
  > copy-open.out 2>&1 && fail "cp -a: the copy opened through the driver"
grep -q "copied with its extended attributes" copy-open.out ||
  fail "cp -a: the open of the copy does not say why: $(grep -m1 -o 'H5FD_journal_open.*' copy-open.out)"
# A copy taken with its journal (cp -a orig.h5 orig.h5.jnl pair/) is a
# crashed file of its own: read through the driver, and recovered, from the
# journal beside it, leaving the original's alone.
mkdir -p pair
cp -a orig.h5 orig.h5.jnl pair/
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal "$sim" verify pair/orig.h5 --driver default --elems 512 \
  --min-step "$(last_acked orig.h5)" > pair-open.out 2>&1 ||
  fail "cp -a with its journal: the copy did not open through the driver: $(grep -m1 -o 'H5FD_journal_open.*' pair-open.out)"
expect 0 "recovered pair/orig.h5" yes -- pair/orig.h5
"$sim" verify pair/orig.h5 --elems 512 --driver sec2 --min-step "$(last_acked orig.h5)" > /dev/null ||
  fail "cp -a with its journal: the recovered copy lacks acknowledged steps"
WATCH=""
expect 0 "recovered orig.h5" no -- orig.h5
"$sim" verify orig.h5 --elems 512 --driver sec2 --min-step "$(last_acked orig.h5)" > /dev/null ||
  fail "cp -a: orig.h5 lost acknowledged steps to its copies"

# A crashed file moved aside, and the job run again under its name: the
# create is refused, leaves no file, and keeps the journal, through which
# h5recover of the moved file (found by its binding) brings back every
# acknowledged step.  --recursive counts the journal as the moved file's,
# not as a file gone.
mkdir -p moved
crashed moved/mv.h5
mv moved/mv.h5 moved/mv-crashed.h5
"$sim" write moved/mv.h5 --steps 3 --elems 64 > mv-rerun.out 2>&1 && fail "moved: the rerun's create was not refused"
grep -q 'journal .*mv.h5.jnl holds the commits of a crashed session of a file named "mv.h5" that is no longer here' \
  mv-rerun.out || fail "moved: the refused rerun does not say why: $(grep -m1 -o 'not created.*' mv-rerun.out)"
[[ ! -e moved/mv.h5 ]] || fail "moved: the refused rerun left mv.h5 behind"
expect 0 "1 file(s): 1 recovered" no -- -r moved
"$sim" verify moved/mv-crashed.h5 --elems 512 --driver sec2 --min-step "$(last_acked moved/mv.h5)" > /dev/null ||
  fail "moved: mv-crashed.h5 lost acknowledged steps to the rerun"

# An ensemble whose runs each write out.h5 in a directory of their own,
# with one journal directory: each file has a journal of its own.  A run
# writes and closes its file while another's writer is live, and again
# once that writer is killed: the crashed journal is left whole.
mkdir -p ens/run1 ens/run2 ens/journals
rm -f ens/run1/out.h5.acked
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="journal_path=$work/ens/journals/" \
  "$sim" write ens/run1/out.h5 --driver default --steps 100000 --elems 512 --delay-us 20000 --report-fd 3 \
  3> ens/run1/out.h5.acked &
pid=$!
while [[ $(stat -c %s ens/run1/out.h5.acked 2>/dev/null || echo 0) -lt 24 ]]; do sleep 0.02; done
(cd ens/run2 && HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="journal_path=../journals/" \
  "$sim" write out.h5 --driver default --steps 5 --elems 512 > /dev/null 2> ../run2.err) ||
  fail "ensemble: run2's out.h5 was refused beside run1's: $(head -c 300 ens/run2.err)"
kill -9 $pid
wait $pid 2> /dev/null
(cd ens/run2 && HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="journal_path=../journals/" \
  "$sim" write out.h5 --driver default --steps 5 --elems 512 > /dev/null 2> ../run2.err) ||
  fail "ensemble: run2's out.h5 was refused beside run1's crashed journal: $(head -c 300 ens/run2.err)"
# The journal directory inside the tree: its journals are not files whose
# loss --recursive reports.
expect 1 "2 file(s): 1 clean, 1 recovery needed" yes -- -r ens --journal-dir ens/journals --check
expect 0 "recovered ens/run1/out.h5" no -- ens/run1/out.h5
"$sim" verify ens/run1/out.h5 --elems 512 --driver sec2 --min-step "$(last_acked ens/run1/out.h5)" > /dev/null ||
  fail "ensemble: run1's out.h5 lost acknowledged steps to run2's"

# One journal_path naming a single journal, for two files: the second
# file's create is refused, naming the first, whose crashed journal stays
# whole.
rm -f one.jnl one-a.h5 one-b.h5
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="journal_path=$work/one.jnl" \
  crashed one-a.h5 --driver default
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="journal_path=$work/one.jnl" \
  "$sim" write one-b.h5 --driver default --steps 2 --elems 64 > one-b.out 2>&1 &&
  fail "one journal for two files: one-b.h5's create was not refused"
grep -q 'one-b.h5 not created: journal .*one.jnl belongs to another file (written for "one-a.h5")' one-b.out ||
  fail "one journal for two files: the refusal does not name one-a.h5: $(grep -m1 'not created' one-b.out)"
expect 0 "recovered one-a.h5" no -- one-a.h5 --journal one.jnl
"$sim" verify one-a.h5 --elems 512 --driver sec2 --min-step "$(last_acked one-a.h5)" > /dev/null ||
  fail "one journal for two files: one-a.h5 lost acknowledged steps"

# --- a sound recovery: the committed steps, a plain HDF5 file -----------------
crashed r.h5
acked=$(last_acked r.h5)
expect 0 "recovered r.h5" no -- r.h5 --verify --keep-journal
[[ -f r.h5.jnl.replayed && ! -e r.h5.jnl ]] || { echo "FAIL --keep-journal"; failures=$((failures + 1)); }
"$sim" verify r.h5 --elems 512 --driver sec2 --min-step "$acked" --max-step $((acked + 1)) > /dev/null ||
  { echo "FAIL the recovered file lacks committed steps"; failures=$((failures + 1)); }
"$h5bin/h5dump" -H r.h5 > /dev/null || { echo "FAIL h5dump cannot read the recovered file"; failures=$((failures + 1)); }
expect 0 "needs no recovery" no -- r.h5  # idempotent: a second run finds nothing to do

# --list, on a journal an older writer wrote (format version 2): every
# record, where its bytes are, and the summary.
cases=$((cases + 1))
"$recover" "$(dirname "$0")/../data/old_journals/v2/old.h5.jnl" --list > listed.txt
for line in "journal .*/old.h5.jnl: 16552 bytes, format version 2" "slot 1 at 2048: generation 1 in use" \
  "12440 ZERO 2 6000 2292 - ok" "12488 WRITE 2 9000 64 12544 ok" \
  "16424 DATA 3 20000 3000 0:4152 ok end 23000, runs of 3000 x 1 (stride 0) x 1 (stride 0)" \
  "16488 COMMIT 3 - - - ok size 23000, 2 records, BEGIN at 16384, durable through transaction 2" \
  "summary: 3 committed transaction(s) \[1..3\], 0 record(s) after the last commit, records end at 16552"; do
  grep -q "^$line\$" listed.txt || { echo "FAIL --list: no line '$line'"; failures=$((failures + 1)); }
done

# Commits of one flush: steps of 160 KiB go in place, and each commit names
# them in INPLACE records.  One byte of the last transaction's changed in the
# file, as if the power failed before its flush completed: h5recover leaves
# that transaction out, and the one before it comes back.
ELEMS=20000 crashed big.h5
cases=$((cases + 1))
last_txn=$(records big.h5 COMMIT | tail -1 | awk '{print $3}')
in_place=$(records big.h5 INPLACE | awk -v t="$last_txn" '$3 == t' | head -1)
if [[ -z $in_place ]]; then
  fail "no INPLACE record in the last commit ($last_txn) of 160 KiB steps"
else
  grep -q ' ok in the file, masked CRC32C [0-9a-f]\{8\}$' <<<"$in_place" || fail "--list: INPLACE line '$in_place'"
  addr=$(awk '{print $4}' <<<"$in_place")
  printf 'X' | dd of=big.h5 bs=1 seek=$((addr + 100)) conv=notrunc 2> /dev/null
  expect 0 "left out transaction $last_txn: a last commit whose bytes in the file never reached the disk" no -- big.h5
  acked=$(last_acked big.h5)  # the commit left out was this step's, or the next one's (killed unreported)
  "$sim" verify big.h5 --elems 20000 --driver sec2 --min-step $((acked - 1)) --max-step "$acked" > /dev/null ||
    fail "the commit before the one left out does not verify"
fi

# --json is machine-readable.
crashed j.h5
"$recover" j.h5 --check --json > report.json
python3 -c "import json,sys; r=json.load(open('report.json')); sys.exit(0 if r['exit_status']==1 and r['transactions_replayed']>0 and r['outcome']=='recovery needed' else 1)" ||
  { echo "FAIL --json report"; failures=$((failures + 1)); }
cases=$((cases + 1))

# --verify catches a recovery that replays wrong bytes which still validate.
crashed v.h5
records v.h5.jnl WRITE | while read -r _ _ _ _ length at _; do  # scribble over every WRITE's bytes
  head -c "$length" /dev/zero | tr '\0' Z |
    dd of=v.h5.jnl bs=64K iflag=fullblock oflag=seek_bytes seek="$at" conv=notrunc status=none
done
"$tamper" reseal v.h5.jnl > /dev/null
expect 8 "does not read back" no -- v.h5 --verify

# --- files that are not what their journal needs ------------------------------
# A file cut short behind its journal (an interrupted copy looks like this),
# and one replaced by another HDF5 file, in place (cp keeps the binding) and
# by rename: refused, nothing changed; salvage into a copy may still try.
crashed tr.h5 --checkpoint-bytes 65536
truncate -s $(($(stat -c %s tr.h5) / 3)) tr.h5
WATCH="tr.h5 tr.h5.jnl"
expect 10 "tr.h5 is shorter than its journal needs" yes -- tr.h5
expect 10 "is shorter than its journal needs" yes -- tr.h5 --check
before=$(fingerprint $WATCH)
out=$("$sim" verify tr.h5 --elems 512 2>&1)
cases=$((cases + 1))
grep -q "tr.h5 is shorter than its journal needs" <<<"$out" || fail "cut file: an open through the driver says: $(grep -m1 -i 'error\|fail' <<<"$out")"
[[ $(fingerprint $WATCH) == "$before" ]] || fail "cut file: an open through the driver changed it"
expect 0 "recovered tr-salvaged.h5" yes -- tr.h5 --mode salvage --output tr-salvaged.h5
"$sim" write other.h5 --steps 60 --elems 4096 > /dev/null
crashed rp.h5 --checkpoint-bytes 65536
cp other.h5 rp.h5
WATCH="rp.h5 rp.h5.jnl"
expect 10 "rp.h5 is not the file its journal was written against" yes -- rp.h5
crashed rn.h5 --checkpoint-bytes 65536
cp other.h5 rn.h5.new && mv rn.h5.new rn.h5
WATCH="rn.h5 rn.h5.jnl"
expect 10 "rn.h5 is not the file its journal was written against" yes -- rn.h5
# A stale journal: after the crash a program without the driver (h5copy,
# sec2) opened the file, added a dataset and closed it cleanly.  Refused
# as written without the driver; removing the journal keeps the file as
# that program left it.
# At least one commit since the last checkpoint, so that the superblock's
# window is one the journal rewrites: only the applying marker's absence
# lets recovery compare it.
stale_ready=no
for acks in 12 13 14 15 16; do  # a checkpoint comes every few steps: one of these ends after one
  ACKS=$acks crashed st.h5 --checkpoint-bytes 131072
  if [[ -n $(records st.h5.jnl COMMIT) && $("$recover" st.h5.jnl --list | sed -n 's/^header: generation \([0-9]*\).*/\1/p') -gt 1 ]]; then
    stale_ready=yes
    break
  fi
done
[[ $stale_ready == yes ]] || fail "stale journal: no crash in 5 left a commit after a checkpoint"
# HDF5 without the driver refuses the crashed file: its superblock is
# guarded (docs/recovery.md).  Cleared by hand, as a file left by an
# h5journal without the guard would be, h5copy writes into it.
cases=$((cases + 1))
if "$h5bin/h5copy" -i other.h5 -o st.h5 -s /counter -d /copied > plain.txt 2>&1; then
  fail "stale journal: h5copy without the driver wrote into the guarded crashed file"
fi
python3 -c "import sys; f = open(sys.argv[1], 'r+b'); f.seek(8); b = f.read(1)[0]; f.seek(8); f.write(bytes([b & 0x3f]))" st.h5
"$h5bin/h5copy" -i other.h5 -o st.h5 -s /counter -d /copied || fail "stale journal: h5copy into the crashed file failed"
WATCH="st.h5 st.h5.jnl"
expect 10 "written by a program without the driver after the crash" yes -- st.h5
expect 10 "to keep the file as it now is and lose the commits in st.h5.jnl, run h5recover --discard-journal st.h5" \
  yes -- st.h5 --check
cp st.h5 st-kept.h5
expect 0 "discarded st.h5.jnl: st.h5 is kept as it is" no -- st.h5 --discard-journal
cmp -s st.h5 st-kept.h5 || fail "--discard-journal changed the file's bytes"
[[ ! -e st.h5.jnl ]] || fail "--discard-journal left the journal"
[[ $(mode st.h5) == "$created_mode" ]] || fail "--discard-journal left st.h5 with mode $(mode st.h5)"
expect 0 "clean: st.h5 needs no recovery" no -- st.h5
# A crashed file still guarded is whole only with its journal: refused,
# nothing removed (removing the journal would lose its commits and leave a
# file no HDF5 program reads), and it then recovers to its last commit.
crashed gd.h5
WATCH="gd.h5 gd.h5.jnl"
expect 2 "gd.h5 is as h5journal left it (its superblock is guarded)" yes -- gd.h5 --discard-journal
[[ -e gd.h5.jnl ]] || fail "--discard-journal removed the journal of a guarded file"
expect 0 "recovered" no -- gd.h5
"$sim" verify gd.h5 --driver sec2 --elems 512 --min-step "$(last_acked gd.h5)" > /dev/null ||
  fail "--discard-journal refused: the recovered file does not hold its last acknowledged step"
# Never the journal of a live writer.
hold hold live.h5
WATCH="live.h5.jnl"
expect 7 "live.h5 is open for writing; its journal is not discarded" yes -- live.h5 --discard-journal
echo go >&"$held_fd"
exec {held_fd}>&-
wait $held_pid || fail "--discard-journal: the live writer failed"
"$h5bin/h5dump" -H -d /copied st.h5 > /dev/null || fail "stale journal: the file h5copy left does not read"
WATCH=""

# --- a file that never committed ---------------------------------------------
# Its writer was killed before its first H5Fflush, with 1 MiB of raw data
# written in place.
unflushed nc.h5
(($(stat -c %s nc.h5) > 1000000)) || fail "never committed: the writer left no in-place bytes to keep"
WATCH="nc.h5 nc.h5.jnl"
expect 9 "nc.h5 was never committed: the process that created it stopped before its first H5Fflush" yes -- nc.h5
expect 9 "and its readers file $PWD/nc.h5.jnl.readers are left as they are" yes -- nc.h5
expect 9 "nothing to recover" yes -- nc.h5 --check
# Through the driver, the same words, and nothing changed.
before=$(fingerprint $WATCH)
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal "$second_open" open nc.h5 > refused.txt 2>&1
cases=$((cases + 1))
grep -q "nc.h5 was never committed" refused.txt || fail "never committed: H5Fopen through the driver says: $(grep -m1 -i 'error\|fail' refused.txt)"
[[ $(fingerprint $WATCH) == "$before" ]] || fail "never committed: H5Fopen through the driver changed the file"
# A second run of the job (H5Fcreate, H5F_ACC_TRUNC) starts over.
HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal "$sim" write nc.h5 --driver default --steps 2 --elems 64 > /dev/null ||
  fail "never committed: a new run over the file failed"
WATCH=""

# --- live readers: recovery waits for them, and says so ------------------------
# A writer killed after its commit, and a reader through the driver that
# opened the file before h5recover ran and reads after it started.
# live_reader NAME READER_WAIT_MS SECONDS_OPEN: h5recover's output in NAME.recover,
# its status in $recover_status, the reader's output in NAME.reader and status in $reader_status.
live_reader() {
  local reader recovery rfd
  hold hold "$1"
  kill -9 $held_pid
  wait $held_pid 2> /dev/null
  exec {held_fd}>&-
  mkfifo "$1.fifo"
  HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal "$second_open" read "$1" < "$1.fifo" > "$1.reader" 2>&1 &
  reader=$!
  exec {rfd}> "$1.fifo"
  for _ in $(seq 100); do grep -q ready "$1.reader" 2> /dev/null && break; sleep 0.1; done
  "$recover" "$1" --reader-wait "$2" > "$1.recover" 2>&1 &
  recovery=$!
  sleep "$3"
  echo go >&$rfd
  exec {rfd}>&-
  wait $reader
  reader_status=$?
  wait $recovery
  recover_status=$?
  rm -f "$1.fifo"
  cases=$((cases + 1))
}
live_reader lr.h5 5000 1
grep -q "h5recover: live readers have lr.h5 open through h5journal: waiting up to 5.0 s (reader_wait) for them to close" lr.h5.recover ||
  fail "a live reader: h5recover did not say it waits: $(cat lr.h5.recover)"
grep -q "h5recover: the live readers of lr.h5 closed after [0-9.]* s" lr.h5.recover ||
  fail "a live reader: h5recover did not say the wait ended: $(cat lr.h5.recover)"
((recover_status == 0 && reader_status == 0)) || fail "a live reader within reader_wait: h5recover exited $recover_status, the reader $reader_status: $(cat lr.h5.reader)"
[[ ! -e lr.h5.jnl.readers ]] || fail "a live reader: the readers file outlived the recovery"
# A reader open past --reader-wait is cut off, and told how long it held its snapshot.
live_reader lr2.h5 300 2
grep -q "h5recover: live readers still had lr2.h5 open after 0.[3-9] s: their snapshots expire" lr2.h5.recover ||
  fail "a reader past --reader-wait: h5recover did not say so: $(cat lr2.h5.recover)"
((recover_status == 0 && reader_status == 1)) || fail "a reader past --reader-wait: h5recover exited $recover_status, the reader $reader_status"
grep -q "is gone after [0-9.]* s: its writer rewrote the file .* raise the writer's reader_wait" lr2.h5.reader ||
  fail "a reader past --reader-wait was not told why: $(grep -m2 'gone\|#0' lr2.h5.reader)"

# --- many files: FILE..., --recursive, --journal-dir, --json -------------------
# A job's output tree of 50 files: 20 crashed (10 with their journals in
# job/journals), 26 closed cleanly, one with a damaged journal, one cut
# short, one that never committed, and one whose journal outlived it; and a
# log file that is nobody's business.
rm -rf job && mkdir -p job/out/sub job/journals
for i in $(seq 10); do crashed job/out/c$i.h5 & done
for i in $(seq 10); do
  HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="journal_path=$work/job/journals/" \
    crashed job/out/sub/e$i.h5 --driver default &
done
wait
for i in $(seq 27); do "$sim" write job/out/sub/clean$i.h5 --steps 2 --elems 64 > /dev/null; done
crashed job/out/bad.h5
printf 'garbage!' | dd of=job/out/bad.h5.jnl bs=1 seek=0 conv=notrunc 2> /dev/null
printf 'garbage!' | dd of=job/out/bad.h5.jnl bs=1 seek=2048 conv=notrunc 2> /dev/null
mv job/out/sub/clean27.h5 job/out/cut.h5
truncate -s 3000 job/out/cut.h5
unflushed job/out/nc.h5
crashed job/out/gone.h5
rm job/out/gone.h5
echo "step 1 done" > job/out/run.log
tree_fingerprint() { find job -type f | sort | xargs sha256sum | sha256sum; }
refused_fingerprint() { fingerprint job/out/bad.h5 job/out/bad.h5.jnl job/out/cut.h5 job/out/nc.h5 job/out/nc.h5.jnl; }

before=$(tree_fingerprint)
"$recover" -r job/out --journal-dir job/journals --check --json > job.json
status=$?
cases=$((cases + 1))
((status == 6)) || fail "--recursive --check: exit $status, expected 6 (the damaged journal, the worst)"
[[ $(tree_fingerprint) == "$before" ]] || fail "--recursive --check changed files"
python3 - job.json <<'PY' || fail "--recursive --check --json: wrong report"
import json, sys
r = json.load(open(sys.argv[1]))
by_file = {f["file"].split("/")[-1]: f for f in r["files"]}
want = {"recovery needed": 20, "clean": 26, "never committed": 1, "failed": 3}
problems = []
if len(r["files"]) != 50: problems.append(f"{len(r['files'])} files listed, expected 50")
if r["summary"] != want: problems.append(f"summary {r['summary']}, expected {want}")
if r["exit_status"] != 6: problems.append(f"exit_status {r['exit_status']}")
for name, status in (("bad.h5", 6), ("cut.h5", 3), ("nc.h5", 9), ("gone.h5", 3), ("e3.h5", 1), ("clean1.h5", 0)):
    if by_file.get(name, {}).get("exit_status") != status: problems.append(f"{name}: {by_file.get(name)}")
if "run.log" in by_file: problems.append("run.log was listed")
for p in problems: print("   ", p)
sys.exit(bool(problems))
PY

before=$(refused_fingerprint)
"$recover" -r job/out --journal-dir job/journals > job.out 2> job.err
status=$?
cases=$((cases + 1))
((status == 6)) || fail "--recursive: exit $status, expected 6"
[[ $(refused_fingerprint) == "$before" ]] || fail "--recursive changed a file it refused"
(($(grep -c '^h5recover: recovered ' job.out) == 20)) || fail "--recursive: $(grep -c '^h5recover: recovered ' job.out) lines say recovered, expected 20"
(($(grep -c '^h5recover: clean: ' job.out) == 26)) || fail "--recursive: $(grep -c '^h5recover: clean: ' job.out) lines say clean, expected 26"
grep -q "^h5recover: 50 file(s): 20 recovered, 26 clean, 1 never committed, 3 failed (exit status 6)$" job.out ||
  fail "--recursive: summary: $(tail -1 job.out)"
grep -q "job/out/gone.h5" job.err || fail "--recursive: the journal without its file is not reported"
grep -q "journal header" job.err || fail "--recursive: the damaged journal is not reported"
[[ -z $(ls job/journals) ]] || fail "--journal-dir: journals left: $(ls job/journals)"
for f in job/out/c3.h5 job/out/sub/e7.h5; do
  "$sim" verify "$f" --elems 512 --driver sec2 --min-step $(( $(last_acked "$f") )) > /dev/null ||
    fail "--recursive: $f lost committed steps"
done
# Many FILEs, and options that name one file's journal or copy.
expect 0 "2 file(s): 2 clean" no -- job/out/c1.h5 job/out/sub/e1.h5
expect 9 "1 never committed" no -- job/out/c1.h5 job/out/nc.h5
expect 2 "--journal names one file's journal" no -- job/out/c1.h5 job/out/c2.h5 --journal x.jnl
expect 2 "--output names one copy" no -- -r job/out --output x.h5
expect 2 "not a directory" no -- -r job/out/c1.h5

# Many workers on many files: h5recover's workers must not call HDF5 at
# once (it is not thread-safe).  When each one asked the driver for its
# defaults, which clears HDF5's error stack, 10 runs of 10 over 2,000 files
# crashed (a double free, a segmentation fault); over the 50 above, 1 in 40.
mkdir -p many
for first in 1 501 1001 1501; do  # 500 copies a tee: 2,000 cp processes took 15 s here
  tee $(seq -f "many/c%g.h5" "$first" $((first + 499))) < clean.h5 > /dev/null
done
cases=$((cases + 1))
for run in 1 2 3 4 5; do
  "$recover" -r many --check -j 16 > many.out 2>&1
  status=$?
  ((status == 0)) || { fail "-r over 2,000 files with 16 workers: exit $status: $(tail -2 many.out)"; break; }
done
grep -q "^h5recover: 2000 file(s): 2000 clean (exit status 0)$" many.out || fail "-r over 2,000 files: $(tail -1 many.out)"
rm -rf many

# --- a progress bar on a terminal, for a journal of 256 MiB or more -----------
"$bench" make-journal big.h5 --mib 260 > /dev/null
cp big.h5 big2.h5 && cp big.h5.jnl big2.h5.jnl
script -qec "$recover big.h5" /dev/null > bar.txt
cases=$((cases + 1))
grep -q 'h5recover: big.h5 \[[#.]*\] [0-9.]* MiB applied' bar.txt || fail "no progress bar on a terminal: $(tr '\r' '\n' < bar.txt | head -3)"
grep -q "recovered big.h5: replayed" bar.txt || fail "progress bar: no recovery line"
"$recover" big2.h5 > nobar.txt 2>&1
! grep -q 'MiB applied' nobar.txt || fail "a progress bar without a terminal"
rm -f big.h5 big2.h5

# --- a recovery interrupted after it wrote the image --------------------------
# What a replay cut short (a crash, a full disk) leaves: the image written
# into the file, the applying marker set, the journal still there.  The
# marker tells recovery that committed bytes were rewritten; a copy made by
# --output must carry it, or the rewritten superblock fails the fingerprint.
# Checkpoints every 1 MiB leave a dozen commits in the crashed generation,
# which began with a fingerprint.  The writer also writes committed
# metadata back early, every 64 KiB of journal (early_write_back.cc), so a
# crash leaves a superblock to rewrite only 4 times in 10 here: up to 20
# crashes are tried (all 20 without one: 1 in 25,000).
for acks in $(seq 12 31); do  # a crash whose replay rewrites the superblock
  ACKS=$acks crashed ir.h5 --checkpoint-bytes 1048576
  rm -f ir-image.h5
  "$recover" ir.h5 --output ir-image.h5 > /dev/null
  cmp -s -i 9 -n 55 ir.h5 ir-image.h5 || break  # past the guarded version byte
done
cmp -s -i 9 -n 55 ir.h5 ir-image.h5 && fail "interrupted recovery: no crash in 20 left a superblock to rewrite"
chmod u+w ir.h5
cp ir-image.h5 ir.h5  # over the crashed file's bytes, keeping its attributes
python3 -c "import os, sys; os.setxattr(sys.argv[1], 'user.h5journal.applying', b'')" ir.h5
chmod a-w ir.h5
WATCH="ir.h5 ir.h5.jnl"
expect 0 "recovered ir-copy.h5" yes -- ir.h5 --output ir-copy.h5
cmp -s ir-copy.h5 ir-image.h5 || fail "interrupted recovery: the copy's recovery differs from the first one"
WATCH=""
expect 0 "recovered ir.h5" no -- ir.h5
cmp -s ir.h5 ir-image.h5 || fail "interrupted recovery: the file's recovery differs from the first one"

# --- the journal's lock held by a process h5recover cannot see live ---------
# A killed writer lets go of its locks only late in its exit, once its
# memory is unmapped: milliseconds after a shell's `kill -9` returns
# (file_lock.h).  exiting_lock_holder holds the journal's lock and 1 GiB,
# which stretches that to about 50 ms: h5recover, run at once, waits it
# out and recovers.
crashed x.h5
"$exiting_holder" x.h5.jnl 1024 > x.ready &
holder=$!
until grep -q ready x.ready 2> /dev/null || ! kill -0 $holder 2> /dev/null; do sleep 0.01; done
if grep -q ready x.ready; then
  kill -9 $holder
  expect 0 "recovered x.h5" no -- x.h5
else
  fail "exiting_lock_holder did not take x.h5.jnl's lock ($exiting_holder)"
fi
wait $holder 2> /dev/null
# A holder the system does not name (from another PID namespace, as here,
# or by an fcntl lock) is another process's: h5recover refuses the file, and
# never takes the lock for its own and reports a recovery it did not make.
crashed u.h5
flock u.h5.jnl sleep 5 &
holder=$!
until ! flock -n u.h5.jnl true; do sleep 0.01; done
WATCH="u.h5 u.h5.jnl"
real_recover=$recover recover=$(command -v unshare)
expect 7 "u.h5 is open for writing through h5journal by another handle or process" yes -- -pfm --mount-proc \
  "$real_recover" u.h5
recover=$real_recover
kill $holder
wait $holder 2> /dev/null
WATCH=""

# --- a sparse file ----------------------------------------------------------
# A contiguous dataset of 1 GiB, its last MiB committed, its middle MiB
# written and not: the commit's ZERO record spans the whole dataset.
# Recovery writes zeros over the uncommitted MiB only, not into the
# dataset's holes, and --output copies only what the file holds: each takes
# the space of its data, not the file's size.
rm -f sp.h5 sp.h5.jnl sp-copy.h5
(HDF5_PLUGIN_PATH=$plugin HDF5_DRIVER=journal "$sparse_writer" write sp.h5; :) 2> /dev/null  # it kills itself
expect 0 "recovered sp-copy.h5" no -- sp.h5 --output sp-copy.h5
expect 0 "recovered sp.h5" no -- sp.h5
for f in sp-copy.h5 sp.h5; do
  "$sparse_writer" check "$f" || fail "a sparse file's recovery: $f does not hold its last commit"
  kib=$(du -k "$f" | cut -f1)
  cases=$((cases + 1))
  ((kib < 16384)) || fail "a sparse file's recovery: $f takes $kib KiB on disk for 2 MiB of data"
done
rm -f sp.h5 sp-copy.h5

# --- a read-only file, and a full disk ---------------------------------------
mkdir -p ro small
mount -t tmpfs -o size=64m tmpfs ro
crashed ro/w.h5
mount -o remount,ro ro
WATCH="ro/w.h5 ro/w.h5.jnl"
expect 7 "read-only" yes -- ro/w.h5
crashed f.h5
WATCH="f.h5 f.h5.jnl"
mount -t tmpfs -o size=64k tmpfs small
expect 7 "No space left" yes -- f.h5 --output small/out.h5
umount small ro 2> /dev/null
# A replay its disk cannot hold (raw data in the data log, to be copied
# into the file): refused with what it needs, and nothing lost; given the
# room, it finishes.
mkdir -p tight
mount -t tmpfs -o size=16m tmpfs tight
ELEMS=20000 crashed tight/t.h5 --raw log
acked=$(last_acked tight/t.h5)
dd if=/dev/zero of=tight/filler bs=64k 2> /dev/null
truncate -s -128k tight/filler
WATCH="tight/t.h5.jnl.data"  # the journal loses its tail past the last commit, to make room
expect 7 "Nothing committed is lost" yes -- tight/t.h5
rm tight/filler
WATCH=""
expect 0 "recovered tight/t.h5" no -- tight/t.h5
"$sim" verify tight/t.h5 --elems 20000 --driver sec2 --min-step "$acked" > /dev/null ||
  { echo "FAIL a replay refused for a full disk, then run again: steps lost (acked $acked)"; failures=$((failures + 1)); }
umount tight 2> /dev/null

echo "$((cases - failures)) passed, $failures failed"
exit $((failures > 0))
