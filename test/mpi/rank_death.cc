// One rank stops inside a collective commit; the others must not hang.
//
//   rank_death FILE journal   commit 1, then rank 1 stops (SIGSTOP) at its
//                             first sync of commit 2, inside the driver's
//                             collective step, and writes its pid to
//                             FILE.stopped.  The other ranks' H5Fflush must
//                             fail within mpi_timeout (2 s here) with an
//                             error that says so; they print it and wait
//                             to be ended.
//   rank_death FILE mpio      the state of commit 1, through mpio: the
//                             reference h5recover must bring FILE back to.
//
// A rank that stops is what only the deadline catches.  One that dies
// (SIGKILL) ends the whole job under MPICH's hydra, with or without
// -disable-auto-cleanup: the survivors' first message to it needs the
// process manager, which then fails (measured; docs/design.md §10).
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "driver.h"
#include "fault_file.h"

namespace {

int rank = 0, nranks = 1;
constexpr hsize_t kRows = 8, kCols = 32;

void must(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "rank_death (rank %d): %s failed\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Every rank writes its rows of "rows" with `value`, independently.
void write_rows(hid_t f, int value) {
  hid_t ds = H5Dopen2(f, "rows", H5P_DEFAULT);
  must(ds >= 0, "H5Dopen2");
  hid_t fs = H5Dget_space(ds);
  hsize_t start[2] = {hsize_t(rank) * kRows, 0}, count[2] = {kRows, kCols};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t ms = H5Screate_simple(2, count, nullptr);
  std::vector<int> v(kRows * kCols, value + rank);
  must(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v.data()) >= 0, "H5Dwrite");
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(ds);
}

hid_t create_file(const char* name, hid_t fapl) {
  hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  must(f >= 0, "H5Fcreate");
  hsize_t dims[2] = {hsize_t(nranks) * kRows, kCols};
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t ds = H5Dcreate2(f, "rows", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  must(ds >= 0, "H5Dcreate2");
  H5Dclose(ds);
  H5Sclose(space);
  return f;
}

void write_pid(const std::string& path) {
  FILE* out = std::fopen(path.c_str(), "w");
  must(out != nullptr, "writing the pid file");
  std::fprintf(out, "%d\n", int(getpid()));
  std::fclose(out);
}

// Prints HDF5's error stack, which carries the driver's message.
void print_failure(double seconds) {
  std::fprintf(stderr, "rank %d: H5Fflush failed after %.1f s:\n", rank, seconds);
  H5Eprint2(H5E_DEFAULT, stderr);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  bool journal = argc == 3 && std::strcmp(argv[2], "journal") == 0;
  if (argc != 3 || (!journal && std::strcmp(argv[2], "mpio") != 0)) {
    if (rank == 0) std::fprintf(stderr, "usage: rank_death FILE journal|mpio\n");
    MPI_Finalize();
    return 2;
  }
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (!journal) {
    must(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_fapl_mpio");
    hid_t f = create_file(argv[1], fapl);
    write_rows(f, 100);
    must(H5Fclose(f) >= 0, "H5Fclose");
    H5Pclose(fapl);
    MPI_Finalize();
    return 0;
  }
  // Every rank's files go through a FaultFileSystem; rank 1's plan stops it.
  auto plan = std::make_shared<h5j::test::FaultPlan>();
  plan->raise_signal = SIGSTOP;
  h5j::test::FaultFileSystem fs(plan);
  H5FD_journal_fapl_t config;
  H5Pget_fapl_journal_defaults(&config);
  config.mpi_timeout = 2;
  config.raw = H5FD_JOURNAL_RAW_LOG;  // rank 1's rows go to its data log, synced in the commit
  must(H5Pset_driver(fapl, h5j::register_driver_with(fs), &config) >= 0, "H5Pset_driver");
  must(H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_mpi_params");

  hid_t f = create_file(argv[1], fapl);
  write_rows(f, 100);
  must(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0, "H5Fflush (commit 1)");
  write_rows(f, 200);
  if (rank == 1) write_pid(std::string(argv[1]) + ".stopped");
  if (rank == 1) plan->fail_sync_at = plan->syncs + 1;  // its next sync, in commit 2
  auto start = std::chrono::steady_clock::now();
  herr_t flushed = -1;
  H5E_BEGIN_TRY { flushed = H5Fflush(f, H5F_SCOPE_GLOBAL); }
  H5E_END_TRY
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (flushed >= 0) {
    std::fprintf(stderr, "rank %d: H5Fflush succeeded although rank 1 died\n", rank);
    _exit(1);
  }
  // HDF5's own collectives (H5Fclose) would wait for rank 1 forever, and an
  // exit would make hydra end the ranks still counting down: report, then
  // wait for the harness to end the job.
  print_failure(seconds);
  for (;;) pause();
}
