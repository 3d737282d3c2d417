#include "hdf5_workloads.h"

#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "hdf5_walk.h"
#include "mpi_workload.h"

namespace h5j::explorer {
namespace {

herr_t collect(unsigned, const H5E_error2_t* e, void* out) {
  auto* text = static_cast<std::string*>(out);
  *text += std::string(e->func_name ? e->func_name : "?") + ": " + (e->desc ? e->desc : "") + "\n";
  return 0;
}

void must(bool ok, const char* what) {
  if (ok) return;
  WorkloadError error{what, {}};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &error.stack);
  throw error;
}

// Snapshot, then H5Fflush: a commit the log hears about.
void flush_commit(hid_t f, CommitLog& log) {
  auto snap = describe_file(f);
  must(snap.has_value(), "snapshot");
  log.before_commit(*snap);
  must(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0, "H5Fflush");
  log.after_commit();
  H5FD_journal_stats_t stats;
  must(H5Fget_journal_stats(f, &stats) >= 0, "H5Fget_journal_stats");
  log.durable_so_far(stats.commits, stats.durable_commits);
}

void close_commit(hid_t f, CommitLog& log) {
  auto snap = describe_file(f);
  must(snap.has_value(), "snapshot");
  log.before_commit(*snap);
  must(H5Fclose(f) >= 0, "H5Fclose");
  log.after_commit();
  log.durable_so_far(CommitLog::kAll, CommitLog::kAll);
}

void write_doubles(hid_t loc, const char* name, std::vector<double> v, hid_t dcpl = H5P_DEFAULT) {
  hsize_t n = v.size();
  hid_t space = H5Screate_simple(1, &n, nullptr);
  hid_t ds = H5Dcreate2(loc, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  must(ds >= 0 && H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0, name);
  H5Dclose(ds);
  H5Sclose(space);
}

void overwrite_doubles(hid_t f, const char* name, double value) {
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  must(ds >= 0, name);
  hid_t space = H5Dget_space(ds);
  hssize_t n = H5Sget_simple_extent_npoints(space);
  must(n >= 0, name);
  std::vector<double> v(static_cast<size_t>(n), value);
  must(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0, name);
  H5Sclose(space);
  H5Dclose(ds);
}

void set_int_attr(hid_t obj, const char* name, int value) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
  must(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &value) >= 0, name);
  H5Aclose(a);
  H5Sclose(space);
}

void set_label(hid_t obj, const std::string& text) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  hid_t space = H5Screate(H5S_SCALAR);
  const char* p = text.c_str();
  hid_t a = H5Acreate2(obj, "label", type, space, H5P_DEFAULT, H5P_DEFAULT);
  must(a >= 0 && H5Awrite(a, type, &p) >= 0, "label");
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
}

void append_row(hid_t f, int k) {
  hid_t ds = H5Dopen2(f, "/series", H5P_DEFAULT);
  must(ds >= 0, "open /series");
  hsize_t dims[2] = {hsize_t(k + 1), 16};
  must(H5Dset_extent(ds, dims) >= 0, "extend /series");
  hid_t fs = H5Dget_space(ds);
  hsize_t start[2] = {hsize_t(k), 0}, count[2] = {1, 16};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(2, count, nullptr);
  double row[16];
  for (int j = 0; j < 16; ++j) row[j] = k * 100.0 + j;
  must(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, row) >= 0, "write /series");
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(ds);
}

// A 6^3 box of the 16^3 /cube at a place that moves with the step, so
// boxes overlap earlier ones: a strided vector write (36 runs of 48 bytes),
// one pattern in the data log.
void write_cube_box(hid_t f, int k) {
  hid_t ds = H5Dopen2(f, "/cube", H5P_DEFAULT);
  must(ds >= 0, "open /cube");
  hid_t fs = H5Dget_space(ds);
  hsize_t start[3] = {hsize_t(k * 3 % 10), hsize_t(k * 5 % 10), hsize_t(k * 7 % 10)}, count[3] = {6, 6, 6};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(3, count, nullptr);
  std::vector<double> box(216);
  std::iota(box.begin(), box.end(), k * 1000.0);
  must(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, box.data()) >= 0, "write /cube");
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(ds);
}

// Timesteps: groups, attributes (VL strings too), a chunked compressed
// extendible series, a dataset overwritten in place every step, one
// deleted and recreated every step (space reuse), and a strided box.
void timesteps(hid_t fapl, const std::string& file, CommitLog& log, int steps, int elems) {
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  must(f >= 0, "H5Fcreate");
  H5Gclose(H5Gcreate2(f, "/steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  hsize_t dims[2] = {0, 16}, maxdims[2] = {H5S_UNLIMITED, 16}, chunk[2] = {4, 16};
  hid_t space = H5Screate_simple(2, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 1);
  H5Dclose(H5Dcreate2(f, "/series", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  H5Pclose(dcpl);
  H5Sclose(space);
  write_doubles(f, "/counter", std::vector<double>(size_t(elems), -1.0));
  hsize_t cube[3] = {16, 16, 16};
  space = H5Screate_simple(3, cube, nullptr);
  H5Dclose(H5Dcreate2(f, "/cube", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Sclose(space);
  set_int_attr(f, "last_step", -1);
  flush_commit(f, log);
  for (int k = 0; k < steps; ++k) {
    overwrite_doubles(f, "/counter", k);
    std::string name = "/steps/step_" + std::to_string(k);
    std::vector<double> v(static_cast<size_t>(elems));
    std::iota(v.begin(), v.end(), k * 1e6);
    write_doubles(f, name.c_str(), v);
    if (k % 4 == 3) {
      H5Ldelete(f, name.c_str(), H5P_DEFAULT);
      v.resize(v.size() * 3 / 2, k);
      write_doubles(f, name.c_str(), v);
    }
    hid_t ds = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    must(ds >= 0, name.c_str());
    set_int_attr(ds, "step", k);
    set_label(ds, "step " + std::to_string(k));
    H5Dclose(ds);
    append_row(f, k);
    write_cube_box(f, k);
    if (H5Lexists(f, "/latest", H5P_DEFAULT) > 0) H5Ldelete(f, "/latest", H5P_DEFAULT);
    write_doubles(f, "/latest", std::vector<double>(size_t((k * 3 % 7 + 1) * elems / 4), k));
    set_int_attr(f, "last_step", k);
    flush_commit(f, log);
  }
  H5Ldelete(f, "/steps/step_0", H5P_DEFAULT);
  set_int_attr(f, "last_step", steps);
  close_commit(f, log);
}

void small_steps(hid_t fapl, const std::string& file, CommitLog& log) { timesteps(fapl, file, log, 10, 256); }
// Datasets of 144 KiB and more: above the driver's 128 KiB threshold, so
// new ones go in place (smaller writes above the protected end are journaled).
void checkpointing_steps(hid_t fapl, const std::string& file, CommitLog& log) { timesteps(fapl, file, log, 10, 18432); }

// A checkpoint written in parts: one contiguous dataset, allocated whole at
// its first write, written in 6 pieces of 144 KiB with a commit after each.
// From the second piece on, each lies below the committed end in space HDF5
// allocated and never wrote: it goes in place under a PLACED record, and a
// crash before its commit must bring back zeros there (unwritten_space.h).
void parts(hid_t fapl, const std::string& file, CommitLog& log) {
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  must(f >= 0, "H5Fcreate");
  const hsize_t piece = 18432, pieces = 6, n = piece * pieces;
  hid_t space = H5Screate_simple(1, &n, nullptr);
  hid_t ds = H5Dcreate2(f, "/checkpoint", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  must(ds >= 0, "create /checkpoint");
  std::vector<double> v(piece);
  for (hsize_t k = 0; k < pieces; ++k) {
    std::iota(v.begin(), v.end(), double(k) * 1e6);
    hsize_t start = k * piece, count = piece;
    hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &count, nullptr);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
    must(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v.data()) >= 0, "write a piece");
    H5Sclose(ms);
    H5Sclose(fs);
    set_int_attr(f, "pieces", int(k) + 1);
    flush_commit(f, log);
  }
  H5Dclose(ds);
  H5Sclose(space);
  set_int_attr(f, "closed", 1);  // the close's snapshot differs from the last flush's
  close_commit(f, log);
}

// A file written and closed with no H5Fflush, its only commit the close
// (close_uncommitted.cc): groups, attributes, a chunked compressed dataset,
// and a contiguous one of 144 KiB that goes in place.
void one_close(hid_t fapl, const std::string& file, CommitLog& log) {
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  must(f >= 0, "H5Fcreate");
  hid_t g = H5Gcreate2(f, "/output", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  set_label(g, "a file per time step");
  hsize_t dims[2] = {64, 16}, chunk[2] = {8, 16};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 1);
  std::vector<double> small(64 * 16);
  std::iota(small.begin(), small.end(), 0.5);
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t ds = H5Dcreate2(g, "chunked", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  must(ds >= 0 && H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, small.data()) >= 0, "chunked");
  H5Dclose(ds);
  H5Sclose(space);
  H5Pclose(dcpl);
  std::vector<double> big(18432);
  std::iota(big.begin(), big.end(), 7.0);
  write_doubles(g, "contiguous", big);
  set_int_attr(f, "step", 42);
  H5Gclose(g);
  close_commit(f, log);
}

// A time series of `steps` rows of `width` doubles, one chunk each, a
// commit after each (the benchmark's W4).  Every third step also rewrites
// an older row, below the committed end.
void series_of(hid_t fapl, const std::string& file, CommitLog& log, hsize_t width, hsize_t steps) {
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  must(f >= 0, "H5Fcreate");
  hsize_t dims[2] = {0, width}, maxdims[2] = {H5S_UNLIMITED, width}, chunk[2] = {1, width};
  hid_t space = H5Screate_simple(2, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  hid_t ds = H5Dcreate2(f, "/series", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  must(ds >= 0, "create /series");
  H5Pclose(dcpl);
  H5Sclose(space);
  std::vector<double> row(width);
  auto write_row = [&](hsize_t k, double value) {
    std::fill(row.begin(), row.end(), value);
    hsize_t start[2] = {k, 0}, count[2] = {1, width};
    hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(2, count, nullptr);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
    must(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, row.data()) >= 0, "write a row");
    H5Sclose(ms);
    H5Sclose(fs);
  };
  for (hsize_t k = 0; k < steps; ++k) {
    dims[0] = k + 1;
    must(H5Dset_extent(ds, dims) >= 0, "extend /series");
    write_row(k, double(k));
    if (k % 3 == 2) write_row(k - 2, 100.0 + double(k));
    H5Dflush(ds);  // the chunk reaches the driver before the commit's metadata
    set_int_attr(f, "steps", int(k) + 1);
    flush_commit(f, log);
  }
  H5Dclose(ds);
  set_int_attr(f, "closed", 1);  // the close's snapshot differs from the last flush's
  close_commit(f, log);
}

// Steps of 8 KiB: every step is a write in new space short enough to be
// journaled, and a crash must bring it back from the journal.
void series(hid_t fapl, const std::string& file, CommitLog& log) { series_of(fapl, file, log, 1024, 8); }

// Steps of 1 MiB + 8 bytes, more than File::kEarlyWritebackMin: each goes
// in place in pieces, each piece's writeback started before the next is
// written (WriteAheadFile::write_starting_writeback), the first and last
// pieces cut short by the chunk's unaligned ends.  A crash may keep any of
// the pieces of an uncommitted step, and a commit's one flush must cover
// every piece of its own.
void series_large(hid_t fapl, const std::string& file, CommitLog& log) {
  series_of(fapl, file, log, (hsize_t(1) << 17) + 1, 3);
}

// An existing file reopened: its metadata is journaled from the start.
// Extend and shrink, overwrite, delete a group, VL sequences; v3 superblock.
void reopen(hid_t fapl_in, const std::string& file, CommitLog& log) {
  hid_t fapl = H5Pcopy(fapl_in);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  must(f >= 0, "H5Fcreate");
  hid_t g = H5Gcreate2(f, "/old", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  write_doubles(g, "a", std::vector<double>(2000, 1.0));
  H5Gclose(g);
  hsize_t dims[1] = {500}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {100};
  hid_t space = H5Screate_simple(1, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  hid_t ds = H5Dcreate2(f, "/grow", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  std::vector<double> v(500, 2.0);
  must(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0, "grow");
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
  close_commit(f, log);

  for (int round = 0; round < 3; ++round) {
    f = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl);
    must(f >= 0, "H5Fopen");
    overwrite_doubles(f, round % 2 ? "/grow" : "/old/a", 10.0 + round);
    ds = H5Dopen2(f, "/grow", H5P_DEFAULT);
    must(ds >= 0, "open /grow");
    hsize_t nd[1] = {hsize_t(round % 2 ? 300 : 900)};
    must(H5Dset_extent(ds, nd) >= 0, "set_extent");
    H5Dclose(ds);
    flush_commit(f, log);
    hid_t vlt = H5Tvlen_create(H5T_NATIVE_INT);
    hsize_t n = 8;
    space = H5Screate_simple(1, &n, nullptr);
    std::vector<std::vector<int>> rows(n);
    std::vector<hvl_t> vl(n);
    for (hsize_t i = 0; i < n; ++i) {
      rows[i].assign(i + 1 + round, int(i) * (round + 1));
      vl[i] = hvl_t{rows[i].size(), rows[i].data()};
    }
    std::string vname = "/vl" + std::to_string(round);
    ds = H5Dcreate2(f, vname.c_str(), vlt, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    must(ds >= 0 && H5Dwrite(ds, vlt, H5S_ALL, H5S_ALL, H5P_DEFAULT, vl.data()) >= 0, "vlen");
    H5Dclose(ds);
    H5Sclose(space);
    H5Tclose(vlt);
    if (round == 2) H5Ldelete(f, "/old", H5P_DEFAULT);
    set_int_attr(f, "round", round);
    close_commit(f, log);
  }
  H5Pclose(fapl);
}

void mpi_inplace(const JournalOptions& o, const std::string& file, CommitLog& log) { run_mpi_workload(o, file, log, 1); }
void mpi_auto(const JournalOptions& o, const std::string& file, CommitLog& log) { run_mpi_workload(o, file, log, 2); }
void mpi_log(const JournalOptions& o, const std::string& file, CommitLog& log) { run_mpi_workload(o, file, log, 3); }

}  // namespace

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all = {
      {"timesteps", "10 steps of groups, attributes, chunked+compressed appends, overwrites, delete+recreate",
       uint64_t(64) << 20, small_steps},
      {"checkpoints", "the same with a 16 KiB checkpoint threshold: checkpoints every step or two",
       uint64_t(16) << 10, checkpointing_steps},
      {"reopen", "an existing v3 file reopened three times: extend/shrink, overwrite, delete, VL data",
       uint64_t(24) << 10, reopen},
      {"timesteps-log", "timesteps with raw=log and materialize=never: raw data in the data log, and the "
       "file closed in log form",
       uint64_t(64) << 20, small_steps, H5FD_JOURNAL_RAW_LOG, H5FD_JOURNAL_MATERIALIZE_NEVER},
      {"checkpoints-auto", "checkpoints with raw=auto: new 72 KiB datasets in place, the rest of the raw data "
       "in the data log, materialized at every checkpoint",
       uint64_t(16) << 10, checkpointing_steps, H5FD_JOURNAL_RAW_AUTO},
      {"parts", "one contiguous dataset written in 6 pieces of 144 KiB, a commit after each: the pieces "
       "go in place into space allocated and never written (PLACED records)",
       uint64_t(64) << 20, parts},
      {"parts-checkpoints", "the same with an 8 KiB checkpoint threshold: a checkpoint every commit or two, "
       "which ends the declared unwritten ranges",
       uint64_t(8) << 10, parts},
      {"journal-elsewhere", "timesteps with journal_path=jnl/: the journal in another directory, so the "
       "first commit must make the file's own name durable as well as the journal's",
       uint64_t(64) << 20, small_steps, H5FD_JOURNAL_RAW_INPLACE, H5FD_JOURNAL_MATERIALIZE_CLOSE, nullptr, "jnl/"},
      {"one-close", "a file created, written and closed with no H5Fflush: its close, the only commit, writes "
       "the file with no journal, its signature last",
       uint64_t(64) << 20, one_close},
      {"one-close-log", "the same with raw=log: the close copies the data log into the file",
       uint64_t(64) << 20, one_close, H5FD_JOURNAL_RAW_LOG},
      {"series", "8 steps of one 8 KiB chunk each, a commit after each, every third rewriting an older row",
       uint64_t(64) << 20, series},
      {"series-checkpoints", "the same with a 16 KiB checkpoint threshold",
       uint64_t(16) << 10, series},
      {"series-write-back", "the same with a 128 KiB threshold: no checkpoint until the close, and the steps "
       "written back early at every commit (early_write_back.cc), growing the file unsynced",
       uint64_t(128) << 10, series},
      {"series-large", "3 steps of one chunk of 1 MiB + 8 bytes each, every third rewriting an older row: the "
       "steps go in place in pieces, each piece's writeback started as it is written",
       uint64_t(64) << 20, series_large},
      {"mpi-inplace", "the MPI commit protocol on the engine: rank 0 and 1 follower, raw=inplace, a 4 KiB "
       "checkpoint threshold, create then reopen",
       uint64_t(4) << 10, nullptr, H5FD_JOURNAL_RAW_INPLACE, H5FD_JOURNAL_MATERIALIZE_CLOSE, mpi_inplace},
      {"mpi-auto", "the same with 2 followers and raw=auto",
       uint64_t(4) << 10, nullptr, H5FD_JOURNAL_RAW_AUTO, H5FD_JOURNAL_MATERIALIZE_CLOSE, mpi_auto},
      {"mpi-log", "the same with 3 followers, raw=log, a 16 KiB threshold, and materialize=never",
       uint64_t(16) << 10, nullptr, H5FD_JOURNAL_RAW_LOG, H5FD_JOURNAL_MATERIALIZE_NEVER, mpi_log},
  };
  return all;
}

bool selected(const Workload& w, const std::string& choice) {
  bool mpi = w.run_engine != nullptr;
  return choice == w.name || (choice == "all" && !mpi) || (choice == "mpi" && mpi);
}

std::optional<std::string> describe_contents(const Workload& w, const std::vector<std::byte>& file) {
  if (w.run_engine != nullptr) return describe_mpi_file(file);
  return describe_image(file);
}

}  // namespace h5j::explorer
