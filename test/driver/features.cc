// Exercises the HDF5 features a user expects from any driver: groups,
// attributes, contiguous, chunked, compact and compressed datasets,
// variable-length data, extend and shrink, reopen, read-only open,
// H5Fdelete, and raw data in scattered shapes (strided 3-D boxes, points,
// interleaved datasets).  The driver comes from --fapl (journal | sec2 | default, where
// default leaves HDF5_DRIVER in charge).  Run through each driver, the
// resulting files must dump identically.
#include <hdf5.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "h5journal.h"

namespace {

#define CHECK_H5(x)                                                         \
  do {                                                                     \
    if ((x) < 0) {                                                         \
      std::fprintf(stderr, "features: %s failed at line %d\n", #x, __LINE__); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "features: %s\n", what);
  std::exit(1);
}

hid_t fapl_for(const std::string& which, bool latest) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (latest) CHECK_H5(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
  if (which == "sec2") CHECK_H5(H5Pset_fapl_sec2(fapl));
  if (which == "journal") CHECK_H5(H5Pset_fapl_journal(fapl, nullptr));
  return fapl;
}

void write_ints(hid_t loc, const char* name, hid_t dcpl, std::vector<hsize_t> dims, std::vector<hsize_t> maxdims,
                int base) {
  hid_t space = H5Screate_simple(int(dims.size()), dims.data(), maxdims.empty() ? nullptr : maxdims.data());
  hid_t ds = H5Dcreate2(loc, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK_H5(ds);
  hsize_t n = 1;
  for (auto d : dims) n *= d;
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), base);
  CHECK_H5(H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()));
  CHECK_H5(H5Dclose(ds));
  CHECK_H5(H5Sclose(space));
}

void create(const std::string& file, hid_t fapl) {
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK_H5(f);
  hid_t g = H5Gcreate2(f, "group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t sub = H5Gcreate2(g, "nested", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  // Attributes: scalar, array, VL string.
  hid_t scalar = H5Screate(H5S_SCALAR);
  double pi = 3.14159;
  hid_t a = H5Acreate2(g, "pi", H5T_IEEE_F64LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  CHECK_H5(H5Awrite(a, H5T_NATIVE_DOUBLE, &pi));
  H5Aclose(a);
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, H5T_VARIABLE);
  const char* text = "a variable-length string attribute";
  a = H5Acreate2(sub, "note", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
  CHECK_H5(H5Awrite(a, str, &text));
  H5Aclose(a);
  // Contiguous, chunked, compressed, compact.
  write_ints(f, "contiguous", H5P_DEFAULT, {200, 50}, {}, 0);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk[2] = {16, 16};
  H5Pset_chunk(dcpl, 2, chunk);
  write_ints(g, "chunked", dcpl, {100, 40}, {H5S_UNLIMITED, H5S_UNLIMITED}, 1000);
  H5Pset_deflate(dcpl, 6);
  H5Pset_shuffle(dcpl);
  write_ints(g, "compressed", dcpl, {100, 40}, {}, 5000);
  H5Pclose(dcpl);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(dcpl, H5D_COMPACT);
  write_ints(sub, "compact", dcpl, {20}, {}, 7);
  H5Pclose(dcpl);
  // Variable-length sequences.
  hid_t vlt = H5Tvlen_create(H5T_NATIVE_INT);
  hsize_t n = 10;
  hid_t space = H5Screate_simple(1, &n, nullptr);
  std::vector<std::vector<int>> rows(n);
  std::vector<hvl_t> vl(n);
  for (hsize_t i = 0; i < n; ++i) {
    rows[i].resize(i + 1, int(i));
    vl[i] = hvl_t{rows[i].size(), rows[i].data()};
  }
  hid_t ds = H5Dcreate2(f, "vlen", vlt, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK_H5(H5Dwrite(ds, vlt, H5S_ALL, H5S_ALL, H5P_DEFAULT, vl.data()));
  H5Dclose(ds);
  // VL strings dataset.
  const char* words[3] = {"alpha", "beta", "gamma delta"};
  hsize_t three = 3;
  hid_t s3 = H5Screate_simple(1, &three, nullptr);
  ds = H5Dcreate2(f, "strings", str, s3, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK_H5(H5Dwrite(ds, str, H5S_ALL, H5S_ALL, H5P_DEFAULT, words));
  H5Dclose(ds);
  H5Sclose(s3);
  H5Sclose(space);
  H5Tclose(vlt);
  H5Tclose(str);
  H5Sclose(scalar);
  H5Gclose(sub);
  H5Gclose(g);
  CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
  // A group that is created and removed again: freed space.
  hid_t tmp = H5Gcreate2(f, "temporary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  write_ints(tmp, "scratch", H5P_DEFAULT, {1000}, {}, 0);
  H5Gclose(tmp);
  CHECK_H5(H5Ldelete(f, "temporary", H5P_DEFAULT));
  CHECK_H5(H5Fclose(f));
}

// Writes `count` elements selected in `fs` of `ds` from consecutive values.
void write_selected(hid_t ds, hid_t fs, hssize_t count, int base) {
  hsize_t n = hsize_t(count);
  hid_t ms = H5Screate_simple(1, &n, nullptr);
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), base);
  CHECK_H5(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v.data()));
  H5Sclose(ms);
}

// Raw data in scattered shapes, each written in its own transaction:
// strided 3-D boxes (contiguous and chunked, compressed or not), boxes with
// a stride between blocks, point selections, runs gathered from memory runs
// that straddle them, overwrites of committed data,
// and writes interleaved across many datasets.
void raw_patterns(const std::string& file, hid_t fapl) {
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl);
  CHECK_H5(f);
  hsize_t dims[3] = {24, 24, 24}, chunk[3] = {8, 8, 8};
  hid_t space = H5Screate_simple(3, dims, nullptr);
  hid_t chunked = H5Pcreate(H5P_DATASET_CREATE), compressed = H5Pcreate(H5P_DATASET_CREATE);
  CHECK_H5(H5Pset_chunk(chunked, 3, chunk));
  CHECK_H5(H5Pset_chunk(compressed, 3, chunk));
  CHECK_H5(H5Pset_deflate(compressed, 1));
  const char* names[] = {"cube/contiguous", "cube/chunked", "cube/compressed"};
  hid_t dcpls[] = {H5P_DEFAULT, chunked, compressed};
  H5Gclose(H5Gcreate2(f, "cube", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (int d = 0; d < 3; ++d) {
    hid_t ds = H5Dcreate2(f, names[d], H5T_STD_I32LE, space, H5P_DEFAULT, dcpls[d], H5P_DEFAULT);
    CHECK_H5(ds);
    hid_t fs = H5Dget_space(ds);
    // 3^3 boxes of 8^3 elements, then one commit; then overwrites.
    for (hsize_t i = 0; i < 24; i += 8)
      for (hsize_t j = 0; j < 24; j += 8)
        for (hsize_t k = 0; k < 24; k += 8) {
          hsize_t start[3] = {i, j, k}, count[3] = {8, 8, 8};
          CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr));
          write_selected(ds, fs, 512, int(i * 10000 + j * 100 + k));
        }
    CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    // Blocks of 2^3 every 5 elements: strides between blocks.
    hsize_t start[3] = {1, 2, 3}, stride[3] = {5, 5, 5}, count[3] = {4, 4, 4}, block[3] = {2, 2, 2};
    CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, stride, count, block));
    write_selected(ds, fs, 512, -1000000);
    // Points, in no particular order.
    hsize_t points[6][3] = {{23, 0, 5}, {0, 0, 0}, {12, 12, 12}, {5, 23, 1}, {12, 12, 13}, {7, 3, 22}};
    CHECK_H5(H5Sselect_elements(fs, H5S_SELECT_SET, 6, &points[0][0]));
    write_selected(ds, fs, 6, -7);
    // Runs of 6 elements every 8 along the last dimension, from runs of 4
    // every 5 of a buffer: memory runs straddle file runs, so the driver
    // gathers a file run from a memory run's end and the next one's start.
    hsize_t fstart[3] = {9, 9, 0}, fstride[3] = {1, 1, 8}, fcount[3] = {1, 2, 3}, fblock[3] = {1, 1, 6};
    CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, fstart, fstride, fcount, fblock));
    hsize_t wide = 45, mstart = 0, mstride = 5, mcount = 9, mblock = 4;  // 36 elements, as the file's
    hid_t ms = H5Screate_simple(1, &wide, nullptr);
    CHECK_H5(H5Sselect_hyperslab(ms, H5S_SELECT_SET, &mstart, &mstride, &mcount, &mblock));
    std::vector<int> values(wide);
    std::iota(values.begin(), values.end(), -500);
    CHECK_H5(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, values.data()));
    H5Sclose(ms);
    CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    H5Sclose(fs);
    H5Dclose(ds);
  }
  // Interleaved: eight datasets, one row of each in turn.
  hsize_t rows[2] = {16, 64};
  hid_t row_space = H5Screate_simple(2, rows, nullptr);
  std::vector<hid_t> many;
  for (int d = 0; d < 8; ++d) {
    std::string name = "cube/interleaved_" + std::to_string(d);
    many.push_back(H5Dcreate2(f, name.c_str(), H5T_STD_I32LE, row_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_H5(many.back());
  }
  for (hsize_t r = 0; r < 16; ++r)
    for (int d = 0; d < 8; ++d) {
      hid_t fs = H5Dget_space(many[size_t(d)]);
      hsize_t start[2] = {r, 0}, count[2] = {1, 64};
      CHECK_H5(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr));
      write_selected(many[size_t(d)], fs, 64, int(r * 1000 + hsize_t(d)));
      H5Sclose(fs);
    }
  for (hid_t ds : many) H5Dclose(ds);
  H5Sclose(row_space);
  H5Pclose(chunked);
  H5Pclose(compressed);
  H5Sclose(space);
  CHECK_H5(H5Fclose(f));
}

// H5Fget_journal_stats counts this session's commits through the journal,
// and fails, naming the problem, for a file under another driver.
void stats_check(const std::string& file, hid_t fapl, bool journal) {
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl);
  CHECK_H5(f);
  write_ints(f, "stats_probe", H5P_DEFAULT, {10}, {}, 0);
  CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
  H5FD_journal_stats_t st{};
  herr_t got;
  H5E_BEGIN_TRY { got = H5Fget_journal_stats(f, &st); }
  H5E_END_TRY
  if (journal && (got < 0 || st.commits != 1)) fail("H5Fget_journal_stats: expected one commit");
  if (!journal && got >= 0) fail("H5Fget_journal_stats succeeded for a file under another driver");
  CHECK_H5(H5Ldelete(f, "stats_probe", H5P_DEFAULT));
  CHECK_H5(H5Fclose(f));
}

// checkpoint_bytes left at 0 means 16 MiB with durable=true and 1 MiB with
// durable=false: 1.5 MiB of journaled overwrites checkpoint once without
// durability, and not at all with it.
void default_checkpoint_check(const std::string& file) {
  for (bool durable : {false, true}) {
    H5FD_journal_fapl_t c;
    CHECK_H5(H5Pget_fapl_journal_defaults(&c));
    if (c.checkpoint_bytes != 0) fail("the default checkpoint_bytes is not 0 (chosen by durability)");
    c.durable = durable;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK_H5(H5Pset_fapl_journal(fapl, &c));
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl);
    CHECK_H5(f);
    write_ints(f, "checkpoint_probe", H5P_DEFAULT, {32768}, {}, 0);  // 128 KiB
    CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    hid_t ds = H5Dopen2(f, "checkpoint_probe", H5P_DEFAULT);
    std::vector<int> v(32768);
    for (int round = 0; round < 12; ++round) {  // committed bytes overwritten: journaled
      std::iota(v.begin(), v.end(), round);
      CHECK_H5(H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()));
      CHECK_H5(H5Fflush(f, H5F_SCOPE_GLOBAL));
    }
    H5FD_journal_stats_t st{};
    CHECK_H5(H5Fget_journal_stats(f, &st));
    if (durable ? st.checkpoints != 0 : st.checkpoints == 0)
      fail((std::string("default checkpoint_bytes with durable=") + (durable ? "true" : "false") + ": " +
            std::to_string(st.checkpoints) + " checkpoints after 1.5 MiB journaled")
               .c_str());
    CHECK_H5(H5Dclose(ds));
    CHECK_H5(H5Ldelete(f, "checkpoint_probe", H5P_DEFAULT));
    CHECK_H5(H5Fclose(f));
    H5Pclose(fapl);
  }
}

void modify(const std::string& file, hid_t fapl) {
  // Reopen read-write: extend one dataset, shrink another, overwrite part of a third.
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl);
  CHECK_H5(f);
  hid_t ds = H5Dopen2(f, "group/chunked", H5P_DEFAULT);
  hsize_t grown[2] = {150, 48};
  CHECK_H5(H5Dset_extent(ds, grown));
  hid_t fs = H5Dget_space(ds);
  hsize_t start[2] = {100, 0}, count[2] = {50, 48};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(2, count, nullptr);
  std::vector<int> v(50 * 48, 42);
  CHECK_H5(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v.data()));
  H5Sclose(ms);
  H5Sclose(fs);
  hsize_t shrunk[2] = {120, 20};
  CHECK_H5(H5Dset_extent(ds, shrunk));
  H5Dclose(ds);
  ds = H5Dopen2(f, "contiguous", H5P_DEFAULT);
  fs = H5Dget_space(ds);
  hsize_t s2[2] = {10, 10}, c2[2] = {5, 5};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, s2, nullptr, c2, nullptr);
  ms = H5Screate_simple(2, c2, nullptr);
  std::vector<int> w(25, -1);
  CHECK_H5(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, w.data()));
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(ds);
  CHECK_H5(H5Fclose(f));
  // Read-only open reads back what was written.
  f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl);
  CHECK_H5(f);
  ds = H5Dopen2(f, "group/compressed", H5P_DEFAULT);
  std::vector<int> r(100 * 40);
  CHECK_H5(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.data()));
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i] != int(5000 + i)) {
      std::fprintf(stderr, "features: compressed data wrong at %zu\n", i);
      std::exit(1);
    }
  H5Dclose(ds);
  // Opening the same file twice in one process (HDF5's tentative open path).
  hid_t again = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl);
  CHECK_H5(again);
  CHECK_H5(H5Fclose(again));
  CHECK_H5(H5Fclose(f));
}

void delete_check(const std::string& file, hid_t fapl) {
  std::string victim = file + ".delete-me";
  hid_t f = H5Fcreate(victim.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK_H5(f);
  CHECK_H5(H5Fclose(f));
  CHECK_H5(H5Fdelete(victim.c_str(), fapl));
  if (H5Fis_accessible(victim.c_str(), fapl) > 0) {
    std::fprintf(stderr, "features: H5Fdelete left the file\n");
    std::exit(1);
  }
}

// H5Fget_access_plist hands back a FAPL equal to the one the file was opened
// with, whichever way the driver was chosen (HDF5's vol test checks this).
// The close degree and read attempts are set because the returned FAPL
// states the defaults explicitly.
void access_plist_check(const std::string& file, hid_t base_fapl) {
  hid_t fapl = H5Pcopy(base_fapl);
  CHECK_H5(H5Pset_fclose_degree(fapl, H5F_CLOSE_SEMI));
  CHECK_H5(H5Pset_metadata_read_attempts(fapl, 1));
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl);
  CHECK_H5(f);
  hid_t got = H5Fget_access_plist(f);
  CHECK_H5(got);
  if (H5Pequal(fapl, got) <= 0) fail("H5Fget_access_plist differs from the FAPL the file was opened with");
  H5Pclose(got);
  CHECK_H5(H5Fclose(f));
  H5Pclose(fapl);
}

// The driver as the member driver of HDF5's family driver, which opens every
// member after the first with TRUNC but without CREAT and stops at the first
// that is missing: a driver that creates it instead never stops.
void family_check(const std::string& file, hid_t fapl) {
  const hsize_t member_size = 4096;
  std::string pattern = file + ".family-%d";
  hid_t fam = H5Pcreate(H5P_FILE_ACCESS);
  CHECK_H5(H5Pset_fapl_family(fam, member_size, fapl));
  hid_t f = H5Fcreate(pattern.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fam);
  CHECK_H5(f);
  write_ints(f, "spans_members", H5P_DEFAULT, {5000}, {}, 3);  // 20 KB: several members
  hsize_t size = 0;
  CHECK_H5(H5Fget_filesize(f, &size));
  CHECK_H5(H5Fclose(f));
  char first_extra[512];
  std::snprintf(first_extra, sizeof first_extra, pattern.c_str(), int((size + member_size - 1) / member_size));
  if (FILE* extra = std::fopen(first_extra, "r")) {
    std::fclose(extra);
    fail("a family member beyond the end of the file was created");
  }
  // A second create truncates the members (HDF5 keeps the emptied ones).
  f = H5Fcreate(pattern.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fam);  // truncates the members
  CHECK_H5(f);
  write_ints(f, "again", H5P_DEFAULT, {3000}, {}, 9);
  CHECK_H5(H5Fclose(f));
  f = H5Fopen(pattern.c_str(), H5F_ACC_RDONLY, fam);
  CHECK_H5(f);
  hid_t ds = H5Dopen2(f, "again", H5P_DEFAULT);
  CHECK_H5(ds);
  std::vector<int> r(3000);
  CHECK_H5(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.data()));
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i] != int(9 + i)) fail("family member data wrong");
  H5Dclose(ds);
  CHECK_H5(H5Fclose(f));
  H5Pclose(fam);
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, fapl_kind = "default";
  bool latest = false;
  CLI::App app{"Writes a file using many HDF5 features through a chosen driver."};
  app.add_option("file", file)->required();
  app.add_option("--fapl", fapl_kind, "journal | sec2 | default (HDF5_DRIVER)")
      ->check(CLI::IsMember({"journal", "sec2", "default"}));
  app.add_flag("--latest-format", latest, "v3 superblock");
  CLI11_PARSE(app, argc, argv);
  hid_t fapl = fapl_for(fapl_kind, latest);
  create(file, fapl);
  raw_patterns(file, fapl);
  const char* env_driver = std::getenv("HDF5_DRIVER");
  stats_check(file, fapl, fapl_kind == "journal" || (fapl_kind == "default" && env_driver && std::string(env_driver) == "journal"));
  if (fapl_kind == "journal") default_checkpoint_check(file);
  modify(file, fapl);
  access_plist_check(file, fapl);
  family_check(file, fapl);
  H5E_BEGIN_TRY { delete_check(file, fapl); }
  H5E_END_TRY
  H5Pclose(fapl);
  std::printf("features: %s written\n", file.c_str());
  return 0;
}
