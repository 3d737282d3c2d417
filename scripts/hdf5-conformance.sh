#!/usr/bin/env bash
# HDF5's own test suite through h5journal, beside HDF5's own drivers.
#
# Builds HDF5 1.14's serial and parallel test programs in the build tree
# scripts/build-hdf5.sh left (its library is reused; only the test programs
# compile), from the same Debian source package, patched
# (scripts/hdf5-tests/plugin-driver.patch) so that an HDF5_DRIVER naming a
# plugin is loaded with H5Pset_driver_by_name and HDF5_DRIVER_CONFIG, over
# the MPI communicator in the parallel tests.  Then runs each program with
# sec2 (serial) or mpio (parallel) and with HDF5_DRIVER=journal, prints a
# pass/fail/skip table, and writes it into docs/conformance.md.  Exits 1 if
# any program passes with HDF5's driver and not with the journal.
#
#   scripts/hdf5-conformance.sh                  # serial and parallel
#   scripts/hdf5-conformance.sh --serial         # the serial programs only
#   scripts/hdf5-conformance.sh --parallel       # testphdf5, t_pflush1/2 at 2 and 4 ranks
#   scripts/hdf5-conformance.sh dsets links      # chosen serial programs; docs untouched
#   scripts/hdf5-conformance.sh --no-docs --no-reference   # what CI runs
#   scripts/hdf5-conformance.sh --build-only     # build the test programs, run nothing
#
# --no-docs leaves docs/conformance.md as it is.  --no-reference runs the
# journal alone, two programs at a time, and takes sec2's and mpio's results
# from the tables in docs/conformance.md, which the last full run wrote:
# they pass every program there, so running them again only repeats.
set -euo pipefail
source "$(dirname "$0")/common.sh"

run_serial=1 run_parallel=1 write_tables=1 run_reference=1 build_only=0 chosen=()
for arg in "$@"; do
  case $arg in
    --serial) run_parallel=0 ;;
    --parallel) run_serial=0 ;;
    --no-docs) write_tables=0 ;;
    --no-reference) run_reference=0 write_tables=0 ;;
    --build-only) build_only=1 ;;
    -*) echo "unknown option $arg" >&2; exit 2 ;;
    *) chosen+=("$arg"); run_parallel=0 ;;
  esac
done

: "${HDF5_PREFIX:=$("$(dirname "$0")/build-hdf5.sh" parallel 2> /dev/null | tail -1)}"
work=$(dirname "$HDF5_PREFIX")
src=$work/src/tree
build=$work/build
results=$work/conformance-results
doc=$ROOT_DIR/docs/conformance.md
patch_file=$ROOT_DIR/scripts/hdf5-tests/plugin-driver.patch
# mpi_comm=self: a FAPL without a communicator (H5P_DEFAULT) opens serially,
# as it does under mpio, where it means sec2; testphdf5 has rank 0 create
# files alone that way.
plugin_env=(HDF5_PLUGIN_PATH="$BUILD_DIR/plugin" HDF5_DRIVER=journal HDF5_DRIVER_CONFIG="durable=false;mpi_comm=self")
timeout_s=${CONFORMANCE_TIMEOUT:-900}  # seconds per program run

# The patch touches only test/ and testpar/, so applying it in place leaves
# the library's sources, and its compiled objects, as they are.  The patch
# applied last is kept beside the tree, to be taken back when it changes.
prepare_source() {
  local applied=$src/.h5journal-tests.patch
  [[ -f $applied ]] && cmp -s "$applied" "$patch_file" && return
  [[ -f $applied ]] && { say "taking back the older test patch"; patch -s -R -d "$src" -p1 < "$applied"; rm "$applied"; }
  say "applying $(basename "$patch_file") to HDF5's test programs"
  patch -s -d "$src" -p1 < "$patch_file"
  cp "$patch_file" "$applied"
}

# The parallel programs run_parallel_tests runs; testpar's others are not
# run here, so not built.
parallel_programs=(testphdf5 t_pflush1 t_pflush2)

# Turns testing on in HDF5's own build tree and builds the programs run
# here (serial_list's and the parallel ones above) with what they need: the
# test library and the files they read.  The rest of test/ (the SWMR and
# plugin programs, those serial_list leaves out) is not built: on 2 cores
# all of it took 203 s and 385 s of CPU, this 174 s and 333 s.  CMake's
# Makefiles build the targets named on one command line one at a time, so
# the serial programs, each one source file, are built two makes at a time,
# each make only its program (prog/fast) once the test library is there.
# Of the library only the build-settings string compiles again, to record
# the new options.
build_tests() {
  [[ -f $build/.tests-built ]] && cmp -s "$build/.tests-built" "$patch_file" && return
  say "building HDF5's serial and parallel test programs in HDF5's build tree"
  [[ -f $build/CMakeCache.txt ]] || { echo "no HDF5 build tree at $build: remove $work and set up again" >&2; exit 1; }
  cmake "$build" -DBUILD_TESTING=ON -DHDF5_TEST_SERIAL=ON -DHDF5_TEST_PARALLEL=ON -DHDF5_TEST_TOOLS=OFF \
    -DHDF5_TEST_VFD=OFF -DHDF5_TEST_SWMR=OFF > "$work/tests-configure.log" 2>&1 ||
    { tail -30 "$work/tests-configure.log"; exit 1; }
  { make -C "$build/test" -j "$JOBS" HDF5_TEST_LIB_files hdf5_test-shared &&
    serial_list | xargs -P "$JOBS" -I{} make -C "$build/test" {}/fast &&
    make -C "$build/testpar" -j "$JOBS" "${parallel_programs[@]}"; } > "$work/tests-build.log" 2>&1 ||
    { tail -30 "$work/tests-build.log"; exit 1; }
  cp "$patch_file" "$build/.tests-built"
}

# HDF5's alternative-driver list (test/CMakeVFDTests.cmake): H5_EXPRESS_TESTS
# then H5_TESTS, less H5_VFD_SKIP_TESTS (from which it takes cache and big
# back off Cygwin, and to which HDF5_TEST_FHEAP_VFD, on by default, adds
# fheap back).
serial_list() {
  local skip=" cache_image accum vfd error_test err_compat tcheck_version testmeta links_env external_env vds_env mirror_vfd ros3 hdfs "
  local t
  for list in H5_EXPRESS_TESTS H5_TESTS; do
    sed -n "/^set ($list\$/,/^)/p" "$src/test/CMakeLists.txt" | sed 's/#.*//' |
      grep -v "set ($list\|^)" | tr -s ' \t' '\n' | grep -v '^$' |
      while read -r t; do [[ $skip == *" $t "* ]] || echo "$t"; done
  done
}

# Subtests left out for every driver, each for a reason inherent to any
# driver but HDF5's own (docs/conformance.md):
#   testphdf5 atomicity: H5Fset_mpi_atomicity is mpio's MPI-IO atomic mode;
#     HDF5 refuses it for any other driver ("incorrect VFL driver").
declare -A program_args=([testphdf5]="-x atomicity")

# Runs one program (or a pair such as flush1 then flush2, in one directory)
# with one driver; records pass, pass (N skipped), skipped (not sec2), FAIL or TIMEOUT.
run_case() {
  local dir=$1 driver=$2 launcher=$3
  shift 3
  local -a env_vars
  case $driver in
    journal) env_vars=("${plugin_env[@]}") ;;
    sec2) env_vars=(HDF5_DRIVER=sec2) ;;
    mpio) env_vars=() ;;
  esac
  rm -rf "$dir" && mkdir -p "$dir" && cp -r "$build/test/H5TEST/." "$dir/"
  local status=pass exe rc
  for exe in "$@"; do
    rc=0
    (cd "$dir" && env srcdir="$dir" "${env_vars[@]}" timeout "$timeout_s" $launcher "$build/bin/$exe" ${program_args[$exe]:-} \
      >> out.txt 2>&1) || rc=$?
    # t_pflush1 always exits with failure: it stops without closing, on purpose.
    [[ $exe == t_pflush1 ]] && rc=0
    if ((rc == 124)); then status=TIMEOUT; break; fi
    if ((rc != 0)); then status=FAIL; break; fi
  done
  if [[ $status == FAIL && $driver == journal && -n ${internal_checks[$1]:-} ]] && internal_checks_only "$1" "$dir/out.txt"; then
    echo "pass (internal checks differ: ${internal_reason[$1]})" > "$dir/status"
    return
  fi
  # h5test's SKIPPED() prints -SKIP-; some programs skip themselves whole
  # for any driver but sec2 ("SKIPPED for incompatible VFD").
  local skipped
  skipped=$(grep -c -- "-SKIP-" "$dir/out.txt" || true)
  if [[ $status == pass ]] && grep -q "SKIPPED for incompatible VFD" "$dir/out.txt"; then
    status="skipped (not sec2)"
  elif [[ $status == pass ]] && ((skipped > 0)); then
    status="pass ($skipped skipped)"
  fi
  echo "$status" > "$dir/status"
}

# Programs that assert HDF5 internals which hold only for another kind of
# driver (docs/conformance.md, "Differences").  Such a run counts as a pass
# when every failure it reports is at one of those assertions, read from
# the source line before each TEST_ERROR; any other failure (a data check)
# is still a failure.
#   select_io_dset: which I/O path HDF5 took (scalar I/O, and "no vector or
#     selection callback" among the causes); true only without vector
#     callbacks, and the journal has them.
#   page_buffer: that opening a file puts exactly one page (the superblock,
#     flushed at open) in the page buffer; HDF5 flushes it only for a driver
#     with a lock callback, and the journal locks in open instead.
declare -A internal_reason=([select_io_dset]="vector driver" [page_buffer]="no lock callback")
declare -A internal_checks=(
  [select_io_dset]='check_actual_selection_io_mode(\|no_selection_io_cause_[a-z]* != no_selection_io_cause_[a-z_]*expected'
  [page_buffer]='base_page_cnt != 1\|base_meta_cnt != 1'
)
internal_checks_only() {
  local program=$1 out=$2 source=$src/test/$1.c pattern=${internal_checks[$1]} at line func
  grep -q "FAILED" "$out" || return 1
  while read -r at; do
    line=${at##*"$program".c:}; func=${line#* in }; line=${line%% in *}
    [[ $program == select_io_dset && $func == check_actual_selection_io_mode* ]] && continue
    sed -n "$((line - 3)),$((line - 1))p" "$source" | grep -q "$pattern" || return 1
  done < <(grep -o "at [^ ]*$program.c:[0-9]* in [a-z_]*" "$out")
}

joined() { local out=$1; shift; for p in "$@"; do out="$out then $p"; done; echo "$out"; }

table=()
regressions=()
row() {
  local name=$1 reference=$2 ours=$3
  table+=("| $name | $reference | $ours |")
  echo "| $name | $reference | $ours |"
  [[ $reference == pass* && $ours != pass* && $ours != skipped* ]] && regressions+=("$name")
  return 0
}

# HDF5's driver's result for a row: run now beside the journal's, or with
# --no-reference read from the table the last full run wrote.
reference_status() {  # driver, result directory, row name
  if ((run_reference)); then cat "$results/$1/$2/status"; return; fi
  awk -F' [|] ' -v name="| $3" '$1 == name { print $2; found = 1; exit } END { if (!found) print "not recorded" }' "$doc"
}

run_serial_tests() {
  local -a tests
  if ((${#chosen[@]})); then tests=("${chosen[@]}"); else mapfile -t tests < <(serial_list); fi
  table+=("| program | sec2 | journal |" "|---|---|---|")
  printf "| program | sec2 | journal |\n|---|---|---|\n"
  local t running=0
  # Two runs at a time on two cores: sec2's beside the journal's, or with
  # --no-reference two programs' through the journal.
  for t in "${tests[@]}"; do
    [[ $t == flush2 || ! -x $build/bin/$t ]] && continue  # flush2 runs after flush1, in its directory
    local progs=("$t")
    [[ $t == flush1 ]] && progs=(flush1 flush2)
    if ((run_reference)); then
      run_case "$results/sec2/$t" sec2 "" "${progs[@]}" &
      run_case "$results/journal/$t" journal "" "${progs[@]}" &
      wait
    else
      run_case "$results/journal/$t" journal "" "${progs[@]}" &
      if ((++running == JOBS)); then wait -n; running=$((running - 1)); fi
    fi
  done
  wait
  for t in "${tests[@]}"; do
    [[ $t == flush2 ]] && continue
    [[ -x $build/bin/$t ]] || { row "$t" "not built" "not built"; continue; }
    local name=$t
    [[ $t == flush1 ]] && name=$(joined flush1 flush2)
    row "$name" "$(reference_status sec2 "$t" "$name")" "$(cat "$results/journal/$t/status")"
  done
}

run_parallel_tests() {
  table+=("| program | mpio | journal |" "|---|---|---|")
  printf "| program | mpio | journal |\n|---|---|---|\n"
  local ranks t driver
  for ranks in 2 4; do
    for t in testphdf5 t_pflush1; do
      local progs=("$t")
      [[ $t == t_pflush1 ]] && progs=(t_pflush1 t_pflush2)
      if ((run_reference)); then run_case "$results/mpio/$t-np$ranks" mpio "mpiexec -n $ranks" "${progs[@]}"; fi
      run_case "$results/journal/$t-np$ranks" journal "mpiexec -n $ranks" "${progs[@]}"
      local name
      name="$(joined "${progs[@]}") ($ranks ranks)"
      row "$name" "$(reference_status mpio "$t-np$ranks" "$name")" "$(cat "$results/journal/$t-np$ranks/status")"
    done
  done
}

# Replaces one part's table in docs/conformance.md, between its markers, and
# empties the table for the next part.
write_docs() {
  local part=$1 elapsed=$2 doc=$ROOT_DIR/docs/conformance.md
  local begin="<!-- $part table: generated by scripts/hdf5-conformance.sh -->" end="<!-- end of $part table -->"
  local body
  body=$(printf "%s\n" "$begin" "" "Last run: $(date -u +%Y-%m-%d), HDF5 $(basename "$work"), $(nproc) cores, $elapsed." "" \
    "${table[@]}" "" "$end")
  python3 - "$doc" "$begin" "$end" "$body" <<'EOF'
import sys
path, begin, end, body = sys.argv[1:]
text = open(path).read()
if begin not in text or end not in text:
    sys.exit(f"{path} lacks the markers {begin!r} and {end!r}")
head, rest = text.split(begin, 1)
tail = rest.split(end, 1)[1]
open(path, "w").write(head + body + tail)
EOF
  table=()
}

# Runs one part and, when it ran whole, records its table in the docs.
run_part() {
  local part=$1 started=$SECONDS
  "run_${part}_tests"
  local elapsed="$(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
  echo "$part part: $elapsed"
  ((${#chosen[@]} == 0 && write_tables)) && write_docs "$part" "$elapsed"
  return 0
}

prepare_source
build_tests
((build_only)) && exit 0
[[ -f $BUILD_DIR/plugin/libh5journal.so ]] || { echo "build h5journal first (scripts/setup.sh)" >&2; exit 1; }
mkdir -p "$results"
((run_serial)) && run_part serial
((run_parallel)) && run_part parallel
echo "outputs in $results/<driver>/<program>/out.txt"
if ((${#regressions[@]})); then
  echo "passes with HDF5's driver but not with the journal: ${regressions[*]}" >&2
  exit 1
fi
