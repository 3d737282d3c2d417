// The parallel issue's raw-data patterns, written by every rank of an MPI
// job through mpio or through the journal; test/mpi/same_as_mpio_test.sh runs it
// both ways and compares the files with h5diff.
//   - each rank's rows of a shared contiguous dataset, independent I/O;
//   - the same with collective I/O;
//   - a chunked dataset, collective; a compressed one, collective;
//   - ranks writing different amounts, rank 1 none;
//   - each rank's columns, collective (a strided MPI file type), read back
//     collectively;
// With mode "by-name" the FAPL is HDF5's default, so the driver is the one
// HDF5_DRIVER names, with the communicator it defaults to (MPI_COMM_WORLD).
// then a commit (H5Fflush), and overwrites of committed data by every rank
// (a follower's go to its own data log), which every rank reads back
// before the next commit, and close.
#include <hdf5.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "h5journal.h"

namespace {

int rank = 0, nranks = 1;

void must(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "parallel_patterns (rank %d): %s failed\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

constexpr hsize_t kRows = 16, kCols = 64;

// Writes this rank's rows [rank * kRows, +kRows) of `name` with values from `base`.
void write_rows(hid_t f, const char* name, hid_t dxpl, int base) {
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  must(ds >= 0, name);
  hid_t fs = H5Dget_space(ds);
  hsize_t start[2] = {hsize_t(rank) * kRows, 0}, count[2] = {kRows, kCols};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(2, count, nullptr);
  std::vector<int> v(kRows * kCols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = base + rank * 100000 + int(i);
  must(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, dxpl, v.data()) >= 0, name);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(ds);
}

// Every rank reads all rows of `name` and checks each rank's values from
// `base`: what the others wrote is visible after a barrier, before any
// commit, as MPI-IO makes it (an overwrite of committed data by a follower
// is then only in its own data log).
void check_all_rows(hid_t f, const char* name, int base) {
  MPI_Barrier(MPI_COMM_WORLD);
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  must(ds >= 0, name);
  std::vector<int> v(size_t(nranks) * kRows * kCols, -1);
  must(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0, "H5Dread of all rows");
  for (int r = 0; r < nranks; ++r)
    for (size_t i = 0; i < kRows * kCols; ++i)
      must(v[size_t(r) * kRows * kCols + i] == base + r * 100000 + int(i), "another rank's uncommitted rows");
  H5Dclose(ds);
}

void create_rows(hid_t f, const char* name, hid_t dcpl) {
  hsize_t dims[2] = {hsize_t(nranks) * kRows, kCols};
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t ds = H5Dcreate2(f, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  must(ds >= 0, name);
  H5Dclose(ds);
  H5Sclose(space);
}

// Rank r's columns [r * w, +w) of every row of `name` (w = kCols / ranks):
// collective I/O then hands the driver a strided MPI file type, not bytes.
hid_t select_columns(hid_t ds) {
  hid_t fs = H5Dget_space(ds);
  hsize_t rows = hsize_t(nranks) * kRows, width = kCols / hsize_t(nranks);
  hsize_t start[2] = {0, hsize_t(rank) * width}, count[2] = {rows, width};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  return fs;
}

int column_value(hsize_t row, hsize_t col) { return int(row * 1000 + col); }

void write_columns(hid_t f, const char* name, hid_t dxpl) {
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  must(ds >= 0, name);
  hid_t fs = select_columns(ds);
  hsize_t rows = hsize_t(nranks) * kRows, width = kCols / hsize_t(nranks), count[2] = {rows, width};
  std::vector<int> v(rows * width);
  for (hsize_t r = 0; r < rows; ++r)
    for (hsize_t c = 0; c < width; ++c) v[r * width + c] = column_value(r, hsize_t(rank) * width + c);
  hid_t ms = H5Screate_simple(2, count, nullptr);
  must(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, dxpl, v.data()) >= 0, name);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(ds);
}

// Reads this rank's columns back collectively and checks every value.
void check_columns(hid_t f, const char* name, hid_t dxpl) {
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  must(ds >= 0, name);
  hid_t fs = select_columns(ds);
  hsize_t rows = hsize_t(nranks) * kRows, width = kCols / hsize_t(nranks), count[2] = {rows, width};
  std::vector<int> v(rows * width, -1);
  hid_t ms = H5Screate_simple(2, count, nullptr);
  must(H5Dread(ds, H5T_NATIVE_INT, ms, fs, dxpl, v.data()) >= 0, "collective read of columns");
  for (hsize_t r = 0; r < rows; ++r)
    for (hsize_t c = 0; c < width; ++c)
      must(v[r * width + c] == column_value(r, hsize_t(rank) * width + c), "the columns read back collectively");
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(ds);
}

// Rank r writes (r + 1) * 100 elements, except rank 1, which writes none.
void write_uneven(hid_t f, hid_t dxpl) {
  auto share = [](int r) { return r == 1 ? hsize_t(0) : hsize_t(r + 1) * 100; };
  hsize_t total = 0, offset = 0;
  for (int r = 0; r < nranks; ++r) {
    if (r < rank) offset += share(r);
    total += share(r);
  }
  hid_t space = H5Screate_simple(1, &total, nullptr);
  hid_t ds = H5Dcreate2(f, "uneven", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  must(ds >= 0, "create uneven");
  hsize_t n = share(rank);
  std::vector<int> v(n + 1);
  for (hsize_t i = 0; i < n; ++i) v[i] = rank * 1000 + int(i);
  hid_t ms = H5Screate_simple(1, &n, nullptr);
  if (n == 0) {
    H5Sselect_none(space);
    H5Sselect_none(ms);
  } else {
    H5Sselect_hyperslab(space, H5S_SELECT_SET, &offset, nullptr, &n, nullptr);
  }
  must(H5Dwrite(ds, H5T_NATIVE_INT, ms, space, dxpl, v.data()) >= 0, "write uneven");
  H5Sclose(ms);
  H5Sclose(space);
  H5Dclose(ds);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  std::string mode = argc == 3 ? argv[2] : "";
  if (mode != "mpio" && mode != "journal" && mode != "by-name") {
    if (rank == 0) std::fprintf(stderr, "usage: parallel_patterns FILE mpio|journal|by-name\n");
    MPI_Finalize();
    return 2;
  }
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (mode == "mpio") {
    must(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_fapl_mpio");
  } else if (mode == "journal") {
    must(H5Pset_fapl_journal(fapl, nullptr) >= 0, "H5Pset_fapl_journal");
    must(H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_mpi_params");
  }
  H5AC_cache_config_t before;
  before.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  must(H5Pget_mdc_config(fapl, &before) >= 0, "H5Pget_mdc_config");
  hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, mode == "by-name" ? H5P_DEFAULT : fapl);
  must(f >= 0, "H5Fcreate");
  // Neither the application's FAPL nor HDF5's default one (an H5P_DEFAULT
  // open) comes back from the driver changed.
  H5AC_cache_config_t after;
  after.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  must(H5Pget_mdc_config(fapl, &after) >= 0, "H5Pget_mdc_config");
  must(after.metadata_write_strategy == before.metadata_write_strategy, "the FAPL left as it was");
  if (mode == "by-name") {  // the journal it is, under MPI: the stats exist only for this driver
    H5FD_journal_stats_t stats;
    must(H5Fget_journal_stats(f, &stats) >= 0, "H5Fget_journal_stats under HDF5_DRIVER=journal");
    // The driver wrote metadata from rank 0 only, and left HDF5's default
    // FAPL as it was for every later file.
    H5AC_cache_config_t config;
    config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
    must(H5Fget_mdc_config(f, &config) >= 0, "H5Fget_mdc_config");
    must(config.metadata_write_strategy == H5AC_METADATA_WRITE_STRATEGY__PROCESS_0_ONLY,
         "the file's metadata written from rank 0 only");
    hid_t again = H5Fget_access_plist(f);
    must(again >= 0 && H5Pget_mdc_config(H5P_FILE_ACCESS_DEFAULT, &config) >= 0, "H5Pget_mdc_config of the default FAPL");
    must(config.metadata_write_strategy == H5AC_METADATA_WRITE_STRATEGY__DISTRIBUTED,
         "the default FAPL left as HDF5 made it");
    H5Pclose(again);
  }
  hid_t independent = H5Pcreate(H5P_DATASET_XFER), collective = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(independent, H5FD_MPIO_INDEPENDENT);
  H5Pset_dxpl_mpio(collective, H5FD_MPIO_COLLECTIVE);
  hid_t chunked = H5Pcreate(H5P_DATASET_CREATE), compressed = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk[2] = {kRows / 2, kCols};
  H5Pset_chunk(chunked, 2, chunk);
  H5Pset_chunk(compressed, 2, chunk);
  H5Pset_deflate(compressed, 1);

  create_rows(f, "independent", H5P_DEFAULT);
  create_rows(f, "collective", H5P_DEFAULT);
  create_rows(f, "chunked", chunked);
  create_rows(f, "compressed", compressed);
  create_rows(f, "columns", H5P_DEFAULT);
  create_rows(f, "chunked_columns", chunked);
  write_rows(f, "independent", independent, 1);
  write_rows(f, "collective", collective, 2);
  write_rows(f, "chunked", collective, 3);
  write_rows(f, "compressed", collective, 4);
  write_uneven(f, collective);
  write_columns(f, "columns", collective);
  write_columns(f, "chunked_columns", collective);
  must(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0, "H5Fflush");
  // Overwrites of committed data, and a group made after the commit.
  write_rows(f, "independent", independent, 5);
  write_rows(f, "collective", collective, 6);
  write_rows(f, "chunked", collective, 7);
  check_all_rows(f, "independent", 5);
  check_all_rows(f, "chunked", 7);
  H5Gclose(H5Gcreate2(f, "after_commit", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  must(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0, "H5Fflush");
  write_rows(f, "compressed", collective, 8);

  H5Pclose(chunked);
  H5Pclose(compressed);
  H5Pclose(independent);
  H5Pclose(collective);
  must(H5Fclose(f) >= 0, "H5Fclose");
  // Read-only, collectively: every rank reads what rank 0's rows hold.
  f = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
  must(f >= 0, "H5Fopen read-only");
  hid_t ds = H5Dopen2(f, "independent", H5P_DEFAULT);
  must(ds >= 0, "H5Dopen2 read-only");
  std::vector<int> all(size_t(nranks) * kRows * kCols);
  must(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()) >= 0, "H5Dread");
  must(all[0] == 5 && all[kRows * kCols] == 5 + 100000, "the committed overwrite read back");
  H5Dclose(ds);
  hid_t collective_read = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(collective_read, H5FD_MPIO_COLLECTIVE);
  check_columns(f, "columns", collective_read);
  check_columns(f, "chunked_columns", collective_read);
  H5Pclose(collective_read);
  must(H5Fclose(f) >= 0, "H5Fclose read-only");
  H5Pclose(fapl);
  // Rank 0 alone writes a file of its own: without a communicator on the
  // FAPL the journal stays serial (no collective step waits for the others).
  if (rank == 0 && mode == "journal") {
    hid_t alone = H5Pcreate(H5P_FILE_ACCESS);
    must(H5Pset_fapl_journal(alone, nullptr) >= 0, "H5Pset_fapl_journal (rank 0 alone)");
    std::string name = std::string(argv[1]) + ".rank0.h5";
    hid_t g = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, alone);
    must(g >= 0 && H5Fclose(g) >= 0, "a file written by rank 0 alone");
    H5Pclose(alone);
  }
  MPI_Finalize();
  return 0;
}
