// An example simulation that writes timesteps to HDF5 and commits each one
// with H5Fflush, and a verifier that checks a file holds exactly the steps
// 0..k for one k, each intact.  The demo and the crash tests use both halves.
//
// Each step k (all contents are a pure function of k, so a checker needs no
// record of what was written):
//   /steps/step_<k>        contiguous dataset of `elems` doubles, k*1e6 + i,
//                          with attributes "step" (int) and "label" (VL string)
//   /series                chunked, extendible, deflated (rows x 16) doubles;
//                          row k = k*100 + j
//   /latest                deleted and recreated every step with a size that
//                          often shrinks, so HDF5 frees and reuses file space
//                          the committed state still references
//   /counter               fixed-size contiguous dataset overwritten in place
//                          with k at the start of every step: overwrites of
//                          committed data
//   / attribute last_step  k
//   /field                 with --field: 256 x 256 doubles in deflated 32 x 32
//                          chunks, rewritten whole every step with values whose
//                          compressibility changes with k, so that HDF5 moves
//                          chunks and reuses their freed space within a step
// Every 4th step's dataset is first written short, deleted and recreated
// within the step.
#include <hdf5.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "h5journal.h"

namespace {

struct Options {
  std::string file;
  std::string driver = "journal";  // journal | default (HDF5_DRIVER) | sec2
  int steps = 100;
  int elems = 4096;
  bool latest_format = false;
  bool paged = false;  // paged file space, free space kept in the file, a page buffer
  bool field = false;  // /field, a deflated dataset rewritten whole every step
  hsize_t userblock = 0;  // bytes before the superblock: 0, or 512 or a power of two above
  int report_fd = -1;
  uint64_t checkpoint_bytes = 0;
  std::string io = "auto";
  std::string raw = "inplace";
  bool durable = true;
  int delay_us = 0;
  // verify
  int min_step = -2, max_step = 1 << 30;  // -2: no lower bound
  bool read_write = false;
};

constexpr int kCols = 16;
// --paged: HDF5's paged aggregation with its free-space managers persisted,
// so that the file's own free-space sections change at each commit, and a
// page buffer, so that HDF5 writes whole pages of metadata.
constexpr hsize_t kFilePageBytes = 4096;
constexpr size_t kPageBufferBytes = size_t(1) << 20;

void check(herr_t rc, const char* what) {
  if (rc < 0) {
    std::fprintf(stderr, "timestep_sim: %s failed\n", what);
    std::exit(2);
  }
}

hid_t make_fapl(const Options& o) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (o.latest_format) H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  if (o.paged) check(H5Pset_page_buffer_size(fapl, kPageBufferBytes, 0, 0), "H5Pset_page_buffer_size");
  if (o.driver == "sec2") {
    H5Pset_fapl_sec2(fapl);
  } else if (o.driver == "journal") {
    H5FD_journal_fapl_t c;
    H5Pget_fapl_journal_defaults(&c);
    if (o.checkpoint_bytes) c.checkpoint_bytes = o.checkpoint_bytes;
    c.io_engine = o.io == "sync" ? H5FD_JOURNAL_IO_SYNC : o.io == "uring" ? H5FD_JOURNAL_IO_URING : H5FD_JOURNAL_IO_AUTO;
    c.raw = o.raw == "log" ? H5FD_JOURNAL_RAW_LOG : o.raw == "auto" ? H5FD_JOURNAL_RAW_AUTO : H5FD_JOURNAL_RAW_INPLACE;
    c.durable = o.durable;
    H5Pset_fapl_journal(fapl, &c);
  }  // "default": whatever HDF5_DRIVER selects
  return fapl;
}

std::string step_name(int k) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "/steps/step_%06d", k);
  return buf;
}

int step_elems(const Options& o, int k) { return o.elems + ((k % 4 == 3) ? o.elems / 2 : 0); }

void write_dataset(hid_t loc, const char* name, const std::vector<double>& v, hid_t dcpl = H5P_DEFAULT) {
  hsize_t dims[1] = {v.size()};
  hid_t space = H5Screate_simple(1, dims, nullptr);
  hid_t ds = H5Dcreate2(loc, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(ds, name);
  check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), name);
  H5Dclose(ds);
  H5Sclose(space);
}

void set_int_attr(hid_t obj, const char* name, int value) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
  check(H5Awrite(a, H5T_NATIVE_INT, &value), name);
  H5Aclose(a);
  H5Sclose(space);
}

void set_label(hid_t obj, int k) {
  std::string label = "step " + std::to_string(k);
  const char* p = label.c_str();
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, "label", type, space, H5P_DEFAULT, H5P_DEFAULT);
  check(H5Awrite(a, type, &p), "label");
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
}

constexpr int kCounterElems = 2048;
std::vector<double> counter_values(int k) { return std::vector<double>(kCounterElems, double(k)); }
size_t latest_elems(int k) { return size_t((k * 3 % 7 + 1) * 500); }

constexpr hsize_t kFieldSide = 256, kFieldChunk = 32;
// Step k's field: k plus a hashed fraction with 16 (k % 7 + 1) values, so
// each chunk's compressed size changes from step to step.
std::vector<double> field_values(int k) {
  std::vector<double> v(kFieldSide * kFieldSide);
  const uint32_t levels = 16 * uint32_t(k % 7 + 1);
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t h = uint32_t(k) * 2654435761u ^ uint32_t(i) * 40503u;
    v[i] = k + double((h >> 3) % levels) / 1024;
  }
  return v;
}

std::vector<double> step_values(int k, int n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = k * 1e6 + i;
  return v;
}

// A 2-D dataset of doubles in deflated chunks: /series and /field.
void create_deflated(hid_t f, const char* name, const hsize_t dims[2], const hsize_t maxdims[2],
                     const hsize_t chunk[2]) {
  hid_t space = H5Screate_simple(2, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 1);
  hid_t ds = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(ds, name);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

hid_t create_file(const Options& o, hid_t fapl) {
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (o.paged) {
    check(H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_PAGE, true, 1), "H5Pset_file_space_strategy");
    check(H5Pset_file_space_page_size(fcpl, kFilePageBytes), "H5Pset_file_space_page_size");
  }
  if (o.userblock) check(H5Pset_userblock(fcpl, o.userblock), "H5Pset_userblock");
  hid_t f = H5Fcreate(o.file.c_str(), H5F_ACC_TRUNC, fcpl, fapl);
  H5Pclose(fcpl);
  check(f, "H5Fcreate");
  hid_t g = H5Gcreate2(f, "/steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(g);
  const hsize_t series[2] = {0, kCols}, unlimited[2] = {H5S_UNLIMITED, kCols}, rows[2] = {8, kCols};
  create_deflated(f, "/series", series, unlimited, rows);
  write_dataset(f, "/counter", counter_values(-1));
  const hsize_t field[2] = {kFieldSide, kFieldSide}, tile[2] = {kFieldChunk, kFieldChunk};
  if (o.field) create_deflated(f, "/field", field, field, tile);
  set_int_attr(f, "last_step", -1);
  return f;
}

void append_series_row(hid_t f, int k) {
  hid_t ds = H5Dopen2(f, "/series", H5P_DEFAULT);
  hsize_t dims[2] = {hsize_t(k + 1), kCols};
  check(H5Dset_extent(ds, dims), "extend /series");
  hid_t fspace = H5Dget_space(ds);
  hsize_t start[2] = {hsize_t(k), 0}, count[2] = {1, kCols};
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t mspace = H5Screate_simple(2, count, nullptr);
  double row[kCols];
  for (int j = 0; j < kCols; ++j) row[j] = k * 100.0 + j;
  check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, row), "write /series");
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Dclose(ds);
}

void write_step(const Options& o, hid_t f, int k) {
  hid_t counter = H5Dopen2(f, "/counter", H5P_DEFAULT);
  check(H5Dwrite(counter, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, counter_values(k).data()), "/counter");
  H5Dclose(counter);
  hid_t steps = H5Gopen2(f, "/steps", H5P_DEFAULT);
  std::string name = step_name(k);
  // Steps 3, 7, 11, ... are first written short and then rewritten: an
  // overwrite of data in the same transaction, after a delete/recreate.
  write_dataset(f, name.c_str(), step_values(k, o.elems));
  if (k % 4 == 3) {
    H5Ldelete(f, name.c_str(), H5P_DEFAULT);
    write_dataset(f, name.c_str(), step_values(k, step_elems(o, k)));
  }
  hid_t ds = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  set_int_attr(ds, "step", k);
  set_label(ds, k);
  H5Dclose(ds);
  H5Gclose(steps);
  append_series_row(f, k);
  if (H5Lexists(f, "/latest", H5P_DEFAULT) > 0) H5Ldelete(f, "/latest", H5P_DEFAULT);
  write_dataset(f, "/latest", std::vector<double>(latest_elems(k), double(k)));
  if (o.field) {
    hid_t field = H5Dopen2(f, "/field", H5P_DEFAULT);
    check(H5Dwrite(field, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, field_values(k).data()), "/field");
    H5Dclose(field);
  }
  set_int_attr(f, "last_step", k);
}

int run_write(const Options& o) {
  hid_t fapl = make_fapl(o);
  hid_t f = create_file(o, fapl);
  check(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
  for (int k = 0; k < o.steps; ++k) {
    write_step(o, f, k);
    check(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
    if (o.report_fd >= 0) {
      // Tell the parent this step is committed (durable).
      if (write(o.report_fd, &k, sizeof k) != sizeof k) return 3;
    }
    if (o.delay_us) usleep(useconds_t(o.delay_us));
  }
  check(H5Fclose(f), "H5Fclose");
  H5Pclose(fapl);
  return 0;
}

// --- verification --------------------------------------------------------------

int fail(const std::string& why) {
  std::printf("INVALID: %s\n", why.c_str());
  return 1;
}

bool read_doubles(hid_t ds, std::vector<double>& out) {
  hid_t space = H5Dget_space(ds);
  hssize_t n = H5Sget_simple_extent_npoints(space);
  H5Sclose(space);
  out.resize(size_t(n));
  return H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0;
}

int check_step(const Options& o, hid_t f, int k) {
  std::string name = step_name(k);
  hid_t ds = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  if (ds < 0) return fail(name + " missing");
  std::vector<double> v;
  if (!read_doubles(ds, v)) return fail(name + " unreadable");
  if (v != step_values(k, step_elems(o, k))) return fail(name + " has wrong data");
  int step = -1;
  hid_t a = H5Aopen(ds, "step", H5P_DEFAULT);
  if (a < 0 || H5Aread(a, H5T_NATIVE_INT, &step) < 0 || step != k) return fail(name + " bad attribute");
  H5Aclose(a);
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  char* label = nullptr;
  a = H5Aopen(ds, "label", H5P_DEFAULT);
  if (a < 0 || H5Aread(a, type, &label) < 0 || label == nullptr || std::string(label) != "step " + std::to_string(k))
    return fail(name + " bad label");
  H5free_memory(label);
  H5Aclose(a);
  H5Tclose(type);
  H5Dclose(ds);
  return 0;
}

int run_verify(const Options& o) {
  hid_t fapl = make_fapl(o);
  H5E_auto2_t func;
  void* data;
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  hid_t f = H5Fopen(o.file.c_str(), o.read_write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
  if (f < 0) return fail("H5Fopen failed");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // missing objects are expected here
  int last = -2;
  hid_t a = H5Aopen(f, "last_step", H5P_DEFAULT);
  if (a < 0 || H5Aread(a, H5T_NATIVE_INT, &last) < 0) return fail("no last_step attribute");
  H5Aclose(a);
  if (o.min_step >= -1 && last < o.min_step) return fail("lost commits: last_step " + std::to_string(last) + " < " + std::to_string(o.min_step));
  if (last > o.max_step) return fail("last_step " + std::to_string(last) + " > " + std::to_string(o.max_step));
  for (int k = 0; k <= last; ++k)
    if (int rc = check_step(o, f, k)) return rc;
  if (H5Lexists(f, step_name(last + 1).c_str(), H5P_DEFAULT) > 0) return fail("partial step " + std::to_string(last + 1));
  hid_t ds = H5Dopen2(f, "/series", H5P_DEFAULT);
  std::vector<double> v;
  if (ds < 0 || !read_doubles(ds, v)) return fail("/series unreadable");
  H5Dclose(ds);
  if (v.size() != size_t(last + 1) * kCols) return fail("/series has " + std::to_string(v.size() / kCols) + " rows");
  for (int k = 0; k <= last; ++k)
    for (int j = 0; j < kCols; ++j)
      if (v[size_t(k * kCols + j)] != k * 100.0 + j) return fail("/series row " + std::to_string(k) + " wrong");
  if (last >= 0) {
    ds = H5Dopen2(f, "/latest", H5P_DEFAULT);
    if (ds < 0 || !read_doubles(ds, v)) return fail("/latest unreadable");
    H5Dclose(ds);
    if (v != std::vector<double>(latest_elems(last), double(last))) return fail("/latest wrong");
  }
  if (o.field && last >= 0) {
    ds = H5Dopen2(f, "/field", H5P_DEFAULT);
    if (ds < 0 || !read_doubles(ds, v)) return fail("/field unreadable");
    H5Dclose(ds);
    if (v != field_values(last)) return fail("/field wrong");
  }
  ds = H5Dopen2(f, "/counter", H5P_DEFAULT);
  if (ds < 0 || !read_doubles(ds, v)) return fail("/counter unreadable");
  H5Dclose(ds);
  if (v != counter_values(last)) return fail("/counter wrong: an overwrite of committed data leaked");
  H5Eset_auto2(H5E_DEFAULT, func, data);
  if (H5Fclose(f) < 0) return fail("H5Fclose failed");
  H5Pclose(fapl);
  std::printf("OK last_step=%d\n", last);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Writes HDF5 timesteps, committing each with H5Fflush; or verifies such a file."};
  app.require_subcommand(1);
  auto common = [&](CLI::App* c) {
    c->add_option("file", o.file, "HDF5 file")->required();
    c->add_option("--driver", o.driver, "journal | default (HDF5_DRIVER) | sec2")
        ->check(CLI::IsMember({"journal", "default", "sec2"}));
    c->add_option("--elems", o.elems, "doubles per step dataset");
    c->add_flag("--latest-format", o.latest_format, "v3 superblock (H5F_LIBVER_LATEST)");
    c->add_flag("--paged", o.paged, "paged file space, persisted free space, a page buffer");
    c->add_flag("--field", o.field, "/field: deflated chunks rewritten whole every step");
    c->add_option("--userblock", o.userblock, "a user block of this many bytes before the superblock");
    c->add_option("--checkpoint-bytes", o.checkpoint_bytes, "journal size that triggers a checkpoint");
    c->add_option("--io", o.io, "auto | uring | sync")->check(CLI::IsMember({"auto", "uring", "sync"}));
    c->add_option("--raw", o.raw, "inplace | log | auto: where raw data goes")
        ->check(CLI::IsMember({"inplace", "log", "auto"}));
    c->add_flag("!--no-durable", o.durable, "durable=false: commits survive a killed process, not a power loss");
  };
  auto* w = app.add_subcommand("write", "write timesteps");
  common(w);
  w->add_option("--steps", o.steps, "number of timesteps");
  w->add_option("--report-fd", o.report_fd, "write each committed step number (int) to this descriptor");
  w->add_option("--delay-us", o.delay_us, "pause after each commit");
  auto* v = app.add_subcommand("verify", "check that the file holds exactly steps 0..k, intact");
  common(v);
  v->add_option("--min-step", o.min_step, "fail if the last step is lower");
  v->add_option("--max-step", o.max_step, "fail if the last step is higher");
  v->add_flag("--read-write", o.read_write, "open read-write (recovers and checkpoints)");
  CLI11_PARSE(app, argc, argv);
  return w->parsed() ? run_write(o) : run_verify(o);
}
